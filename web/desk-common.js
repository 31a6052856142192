// desk-common.js: what the operator's desk's modules share (desk.js, its
// charts desk-charts.js and its claims desk-claims.js): the desk's state
// (its operator token kept in this tab's sessionStorage), the elements
// written as text, the numbers, dates and durations in the page's
// language, and the status lines under the header.

import { lang } from './i18n.js';

export const $ = (id) => document.getElementById(id);
export const KEY = { token: 'asc.deskToken', lang: 'asc.lang' };

/** sessionStorage that never throws: the operator token lives as long as the tab. */
export const session = {
  get(key) {
    try { return sessionStorage.getItem(key); } catch { return null; }
  },
  set(key, value) {
    try { if (value == null) sessionStorage.removeItem(key); else sessionStorage.setItem(key, value); } catch { /* storage off: this page only */ }
  },
};

// The desk's state: the operator token, the server's last answers, and
// `loads`: refreshes finished so far (the browser tests wait on it);
// `last`: the previous health, for the actions per second between two;
// `open`: the charts' boxes the operator opened or closed, by emission;
// `risk`: each emission's risk chart, fetched once (it never changes).
export const state = { token: session.get(KEY.token), version: null, health: null, reports: null, last: null, rate: null, loads: 0, timer: null, open: {} };

export const locale = () => (lang() === 'fr' ? 'fr-FR' : 'en-GB');
export const num = (n) => new Intl.NumberFormat(locale()).format(n);
export const dateOf = (ms) => new Intl.DateTimeFormat(locale(), { dateStyle: 'medium', timeStyle: 'short' }).format(new Date(ms));
export const timeOf = (ms) => new Intl.DateTimeFormat(locale(), { timeStyle: 'medium' }).format(new Date(ms));
/** Seconds in words: "2 j 3 h", "3 h 12 min", "12 min 5 s". */
export const duration = (seconds) => {
  const days = Math.floor(seconds / 86400), hours = Math.floor((seconds % 86400) / 3600), minutes = Math.floor((seconds % 3600) / 60);
  const dayUnit = lang() === 'fr' ? 'j' : 'd';
  return days > 0 ? `${days} ${dayUnit} ${hours} h` : hours > 0 ? `${hours} h ${minutes} min` : `${minutes} min ${seconds % 60} s`;
};
export const percent = (decimal) => new Intl.NumberFormat(locale(), { style: 'percent', minimumFractionDigits: 2, maximumFractionDigits: 2 }).format(Number(decimal));

/** Today in Paris, YYYY-MM-DD (the closing notice's date by default). */
export function today() {
  return new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/Paris', year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date());
}

/** A calendar day `YYYY-MM-DD` in words (no time zone: it is a date). */
export function dayOf(text) {
  const [year, month, day] = text.split('-').map(Number);
  return new Intl.DateTimeFormat(locale(), { dateStyle: 'long', timeZone: 'UTC' }).format(new Date(Date.UTC(year, month - 1, day)));
}

/** An element with its text (never HTML: every word is the server's or ours, as text). */
export function el(tag, attrs = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value == null) continue;
    if (name === 'class') element.className = value;
    else element.setAttribute(name, value);
  }
  for (const child of children) element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  return element;
}

/** What an action did, or why not, in the page's status lines. */
export function showOutcome(done, error = null) {
  $('desk-done').textContent = done || '';
  $('desk-done').hidden = !done;
  $('desk-error').textContent = error || '';
  $('desk-error').hidden = !error;
}

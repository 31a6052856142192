// dom.js: the page's small tools: elements (`el`, the card faces), the
// live region and the alert, the animations' pace, times and waits in
// words, an error in words, and a text with the ticket's price.
//
// Shows nothing by itself; needs state.js (the animations setting, the
// price) and i18n.js.

import { ApiError } from './api.js';
import { t, money, lang, rankLabel, cardName } from './i18n.js';
import { S } from './state.js';

export const $ = (id) => document.getElementById(id);
/** One step of the animations (ms); --dur in the CSS. */
export const ANIM_MS = 260;
/** As Capone's card turning over: about 0.6 s, in two halves (the back, then the face). */
export const TURN_MS = 600;

/**
 * `key` with the price of a ticket on sale (`{price}`), as the server said
 * it (purchase.js); its `.noprice` variant while the server has not.
 */
export const withPrice = (key) => (S.price == null ? t(`${key}.noprice`) : t(key, { price: money(S.price) }));

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
export const pause = (k = 1) => (S.anim ? sleep(ANIM_MS * k) : Promise.resolve());

/** An element: `attrs` are attributes (`class`, `text`, `onclick`... as shortcuts), then its children. */
export function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v == null || v === false) continue;
    if (k === 'class') e.className = v;
    else if (k === 'text') e.textContent = v;
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children) if (c != null) e.append(c);
  return e;
}

/** A card face: `suit` is "hearts" (the player) or "spades" (As Capone). */
export function cardFace(rank, suit, extra = '') {
  const sym = suit === 'hearts' ? '♥' : '♠';
  return el('span', { class: `card ${suit === 'hearts' ? 'heart' : 'spade'} ${extra}`, role: 'img', 'aria-label': cardName(rank, suit), 'data-card': rank },
    el('span', { class: 'rank', text: rankLabel(rank) }),
    el('span', { class: 'suit', 'aria-hidden': 'true', text: sym }),
    el('span', { class: 'pip', 'aria-hidden': 'true', text: sym }));
}
export const cardBack = (extra = '') => el('span', { class: `card back ${extra}` });

export function announce(text) {
  const live = $('live');
  live.textContent = '';
  // A new text node each time, so screen readers announce a repeated sentence too.
  requestAnimationFrame(() => { live.textContent = text; });
  live.dataset.last = text;
}

export function showAlert(text, kind = 'error') {
  const a = $('alert');
  a.textContent = text;
  a.dataset.kind = kind;
  a.hidden = !text;
}

/** A wait in seconds, in words: "45 s", "3 min", "1 h 05". */
export function waitText(s) {
  if (s < 60) return t('wait.s', { n: Math.max(1, Math.round(s)) });
  if (s < 3600) return t('wait.min', { n: Math.ceil(s / 60) });
  const m = Math.ceil(s / 60);
  return t('wait.h', { h: Math.floor(m / 60), m: String(m % 60).padStart(2, '0') });
}

/** A time of day (unix ms) in the page's language. */
export const clock = (ms) => new Intl.DateTimeFormat(lang() === 'fr' ? 'fr-FR' : 'en-GB', { hour: '2-digit', minute: '2-digit' }).format(new Date(ms));

/** A day and time (unix ms) in the page's language. */
export const dayTime = (ms) => new Intl.DateTimeFormat(lang() === 'fr' ? 'fr-FR' : 'en-GB', { dateStyle: 'long', timeStyle: 'short' }).format(new Date(ms));
export const day = (ms) => new Intl.DateTimeFormat(lang() === 'fr' ? 'fr-FR' : 'en-GB', { dateStyle: 'long' }).format(new Date(ms));

export function errorText(e) {
  if (e instanceof ApiError) {
    if (e.status === 401) return t('err.auth');
    if (e.status === 404) return t('err.notfound');
    if (e.code === 'insufficient_funds') return withPrice('buy.funds');
    return t('err.generic', { message: e.message });
  }
  return t('err.generic', { message: String(e && e.message ? e.message : e) });
}

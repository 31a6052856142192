// dom.js: the page's small tools: elements (`el`, the card faces), the
// live region and the alert, the animations' pace, times and waits in
// words, an error in words, and a text with the ticket's price.
//
// Shows nothing by itself; needs state.js (the animations setting, the
// price) and i18n.js.

import { ApiError } from './api.js';
import { t, tn, known, money, lang, rankLabel, cardName } from './i18n.js';
import { state } from './state.js';

export const $ = (id) => document.getElementById(id);
/** One step of the animations (ms); --dur in the CSS. */
export const ANIM_MS = 260;
/** As Capone's card turning over: about 0.6 s, in two halves (the back, then the face). */
export const TURN_MS = 600;

/**
 * `key` with the price of a ticket on sale (`{price}`), as the server said
 * it (purchase.js); its `.noprice` variant while the server has not.
 */
export const withPrice = (key) => (state.price == null ? t(`${key}.noprice`) : t(key, { price: money(state.price) }));

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
export const pause = (k = 1) => (state.anim ? sleep(ANIM_MS * k) : Promise.resolve());

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

/**
 * A refusal of the server in the page's language: from its `code` and
 * `params` (`err.CODE.REASON`, else `err.CODE`; every code of the API has
 * one in both languages, a browser test checks it), with dates, amounts
 * and waits in the player's format. The server's English `message` is
 * never shown.
 */
export function errorText(e) {
  if (e instanceof ApiError) {
    if (e.status === 0 || e.code === 'network') return t('err.network');
    if (e.status === 401 && e.code === 'unauthorized') return t('err.auth');
    if (e.code === 'not_found' && !e.params.reason) return t('err.notfound');
    if (e.code === 'insufficient_funds' && e.params.price_cents == null) return withPrice('buy.funds');
    return refusalText(e.code, e.params, e.retryAfter);
  }
  return t('err.unknown');
}

/** `code` and `params` in words (see errorText); `err.other` for a code the page does not know. */
export function refusalText(code, params = {}, retryAfter = null) {
  const p = params || {};
  // A key, or its plural forms (`.one`, `.other`: by the count `used`).
  const has = (k) => known(k) || known(`${k}.other`);
  const keyed = p.reason && has(`err.${code}.${p.reason}`) ? `err.${code}.${p.reason}` : has(`err.${code}`) ? `err.${code}` : null;
  if (!keyed) return t('err.other', { code });
  const wait = p.retry_after_s ?? retryAfter;
  const words = known(keyed) ? (k, params) => t(k, params) : (k, params) => tn(k, Number(p.used ?? 0), params);
  return words(keyed, {
    ...p,
    until: p.until_ms != null ? dayTime(p.until_ms) : '',
    day: p.until_ms != null ? day(p.until_ms) : '',
    max_money: p.max_cents != null ? money(p.max_cents) : '',
    used_money: p.used_cents != null ? money(p.used_cents) : '',
    price: p.price_cents != null ? money(p.price_cents) : '',
    balance: p.balance_cents != null ? money(p.balance_cents) : '',
    ceiling: p.ceiling_cents != null ? money(p.ceiling_cents) : '',
    prize: p.prize_cents != null ? money(p.prize_cents) : '',
    paid: p.paid_ms != null ? dayTime(p.paid_ms) : '—',
    paid_by: p.paid_by || t('shop.payment_centre'),
    wait: wait != null ? waitText(wait) : '—',
  });
}

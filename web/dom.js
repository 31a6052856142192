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
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value == null || value === false) continue;
    if (name === 'class') element.className = value;
    else if (name === 'text') element.textContent = value;
    else if (name.startsWith('on')) element.addEventListener(name.slice(2), value);
    else element.setAttribute(name, value === true ? '' : value);
  }
  for (const child of children) if (child != null) element.append(child);
  return element;
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
  const alert = $('alert');
  alert.textContent = text;
  alert.dataset.kind = kind;
  alert.hidden = !text;
}

/** A wait in seconds, in words: "45 s", "3 min", "1 h 05". */
export function waitText(seconds) {
  if (seconds < 60) return t('wait.s', { n: Math.max(1, Math.round(seconds)) });
  if (seconds < 3600) return t('wait.min', { n: Math.ceil(seconds / 60) });
  const minutes = Math.ceil(seconds / 60);
  return t('wait.h', { h: Math.floor(minutes / 60), m: String(minutes % 60).padStart(2, '0') });
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
export function errorText(error) {
  if (error instanceof ApiError) {
    if (error.status === 0 || error.code === 'network') return t('err.network');
    if (error.status === 401 && error.code === 'unauthorized') return t('err.auth');
    if (error.code === 'not_found' && !error.params.reason) return t('err.notfound');
    if (error.code === 'insufficient_funds' && error.params.price_cents == null) return withPrice('buy.funds');
    return refusalText(error.code, error.params, error.retryAfter);
  }
  return t('err.unknown');
}

/** `code` and `params` in words (see errorText); `err.other` for a code the page does not know. */
export function refusalText(code, params = {}, retryAfter = null) {
  const fields = params || {};
  // A key, or its plural forms (`.one`, `.other`: by the count `used`).
  const has = (k) => known(k) || known(`${k}.other`);
  const keyed = fields.reason && has(`err.${code}.${fields.reason}`) ? `err.${code}.${fields.reason}` : has(`err.${code}`) ? `err.${code}` : null;
  if (!keyed) return t('err.other', { code });
  const wait = fields.retry_after_s ?? retryAfter;
  const words = known(keyed) ? (k, params) => t(k, params) : (k, params) => tn(k, Number(fields.used ?? 0), params);
  return words(keyed, {
    ...fields,
    until: fields.until_ms != null ? dayTime(fields.until_ms) : '',
    day: fields.until_ms != null ? day(fields.until_ms) : '',
    max_money: fields.max_cents != null ? money(fields.max_cents) : '',
    used_money: fields.used_cents != null ? money(fields.used_cents) : '',
    price: fields.price_cents != null ? money(fields.price_cents) : '',
    balance: fields.balance_cents != null ? money(fields.balance_cents) : '',
    ceiling: fields.ceiling_cents != null ? money(fields.ceiling_cents) : '',
    prize: fields.prize_cents != null ? money(fields.prize_cents) : '',
    paid: fields.paid_ms != null ? dayTime(fields.paid_ms) : '—',
    paid_by: fields.paid_by || t('shop.payment_centre'),
    wait: wait != null ? waitText(wait) : '—',
  });
}

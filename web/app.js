// app.js: the As Capone page. It shows only what the server decided and
// recorded: every card of As Capone, every deck draw and every result comes
// from an answer of the API (CONTRACT.md); the page never draws a card (it
// draws only the player's seed, which the server mixes into its draws).
//
// Views (by the URL's hash): home (register, buy, paper ticket, my tickets),
// `#t=ID` one ticket (scratch zone, the player's seed, the duel of art. 3.2,
// the result),
// `#v=ID` the check of a finished ticket (verify.js). `/play?code=...`
// opens a paper ticket (the printed QR code).

import { api, ApiError, net, randomKey, request } from './api.js';
import { t, tn, setLang, setTouch, lang, money, rankLabel, cardName, LANGS } from './i18n.js';
import { replayRecorded, verifyRecord, RANKS } from './verify.js';
import { initAccount, accountPage, askLogout, onHome as accountOnHome } from './account.js';
import { initRules, rulesPage, oddsPage } from './rules.js';
import { initLimits, limitsPage, showPurchaseRefusal } from './limits.js';

/** The pages of hash routes `#/regles`, `#/chances`, `#/limites`, `#/compte`. */
const PAGES = [rulesPage, oddsPage, limitsPage, accountPage];
const pageFor = (hash) => PAGES.find((p) => hash === `#/${p.hash}`);

const $ = (id) => document.getElementById(id);
const PRICE = 300;
const ANIM_MS = 260;
/** As Capone's card turning over: about 0.6 s, in two halves (the back, then the face). */
const TURN_MS = 600;
/** Tickets per page of "Mes tickets". */
const PAGE = 10;

// ------------------------------------------------------------ storage

const KEY = {
  token: 'asc.token', lang: 'asc.lang', anim: 'asc.anim', sound: 'asc.sound', paper: 'asc.paper',
  scratched: 'asc.scratched', pendingBuy: 'asc.pendingBuy', current: 'asc.current',
  // Per ticket, the seed the browser drew (or the player typed) before the first card.
  seeds: 'asc.seeds',
  // The action sent and not answered yet: `{id, body}`.
  pendingAct: 'asc.pendingAct',
};
const local = {
  get(k) {
    try { return localStorage.getItem(k); } catch { return null; }
  },
  set(k, v) {
    try { if (v == null) localStorage.removeItem(k); else localStorage.setItem(k, v); } catch { /* private mode: this tab only */ }
  },
  json(k, dflt) {
    try { return JSON.parse(this.get(k)) ?? dflt; } catch { return dflt; }
  },
};

// ------------------------------------------------------------ state

const S = {
  token: local.get(KEY.token),
  balance: null,
  anim: true,
  sound: false,
  ticket: null, // the server's last word on the open ticket
  view: null, // what the table shows, rebuilt from the record and the answers' events
  busy: false,
  scratched: false,
  sending: false, // an action is on its way (its retries included)
};

// A paper ticket opened on this device keeps its own bearer token (from
// POST /api/tickets/redeem), per serial: a reload resumes it without an
// account, and it opens the ticket even when it is not in the player's list.
const paperTokens = () => local.json(KEY.paper, {});
const tokenFor = (id) => paperTokens()[id] || S.token;
const hasPaperToken = (id) => !!paperTokens()[id];
function keepPaperToken(id, token) {
  const paper = paperTokens();
  if (token == null) delete paper[id];
  else paper[id] = token;
  local.set(KEY.paper, JSON.stringify(paper));
}
/** A ticket sold in a shop: scratched on paper, its prize paid by a retailer. */
const isPaper = (tk) => !!tk && tk.channel === 'paper';

// ------------------------------------------------------------ helpers

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const pause = (k = 1) => (S.anim ? sleep(ANIM_MS * k) : Promise.resolve());

function el(tag, attrs = {}, ...children) {
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
function cardFace(rank, suit, extra = '') {
  const sym = suit === 'hearts' ? '♥' : '♠';
  return el('span', { class: `card ${suit === 'hearts' ? 'heart' : 'spade'} ${extra}`, role: 'img', 'aria-label': cardName(rank, suit), 'data-card': rank },
    el('span', { class: 'rank', text: rankLabel(rank) }),
    el('span', { class: 'suit', 'aria-hidden': 'true', text: sym }),
    el('span', { class: 'pip', 'aria-hidden': 'true', text: sym }));
}
const cardBack = (extra = '') => el('span', { class: `card back ${extra}` });

function setBusy(b) {
  S.busy = b;
  document.body.dataset.state = b ? 'busy' : 'idle';
  renderControls();
}

function announce(text) {
  const live = $('live');
  live.textContent = '';
  // A new text node each time, so screen readers announce a repeated sentence too.
  requestAnimationFrame(() => { live.textContent = text; });
  live.dataset.last = text;
}

function showAlert(text, kind = 'error') {
  const a = $('alert');
  a.textContent = text;
  a.dataset.kind = kind;
  a.hidden = !text;
}

/** A wait in seconds, in words: "45 s", "3 min", "1 h 05". */
function waitText(s) {
  if (s < 60) return t('wait.s', { n: Math.max(1, Math.round(s)) });
  if (s < 3600) return t('wait.min', { n: Math.ceil(s / 60) });
  const m = Math.ceil(s / 60);
  return t('wait.h', { h: Math.floor(m / 60), m: String(m % 60).padStart(2, '0') });
}

/** A time of day (unix ms) in the page's language. */
const clock = (ms) => new Intl.DateTimeFormat(lang() === 'fr' ? 'fr-FR' : 'en-GB', { hour: '2-digit', minute: '2-digit' }).format(new Date(ms));

/** A day and time (unix ms) in the page's language. */
const dayTime = (ms) => new Intl.DateTimeFormat(lang() === 'fr' ? 'fr-FR' : 'en-GB', { dateStyle: 'long', timeStyle: 'short' }).format(new Date(ms));
const day = (ms) => new Intl.DateTimeFormat(lang() === 'fr' ? 'fr-FR' : 'en-GB', { dateStyle: 'long' }).format(new Date(ms));

function errorText(e) {
  if (e instanceof ApiError) {
    if (e.status === 401) return t('err.auth');
    if (e.status === 404) return t('err.notfound');
    if (e.code === 'insufficient_funds') return t('buy.funds', { price: money(PRICE) });
    return t('err.generic', { message: e.message });
  }
  return t('err.generic', { message: String(e && e.message ? e.message : e) });
}

// ------------------------------------------------------------ i18n and settings

function applyStrings() {
  document.documentElement.lang = lang();
  document.title = t('doc.title');
  for (const e of document.querySelectorAll('[data-i18n]')) e.textContent = t(e.dataset.i18n);
  for (const e of document.querySelectorAll('[data-i18n-label]')) e.setAttribute('aria-label', t(e.dataset.i18nLabel));
  const other = LANGS.find((l) => l !== lang());
  $('lang').setAttribute('lang', other);
  $('buy-text').textContent = t('buy.text', { price: money(PRICE) });
  $('buy').textContent = t('buy.button', { price: money(PRICE) });
  $('again').textContent = t('result.again', { price: money(PRICE) });
  renderBalance();
}

function setAnim(on, persist) {
  S.anim = on;
  document.documentElement.dataset.anim = on ? 'on' : 'off';
  document.documentElement.style.setProperty('--dur', on ? `${ANIM_MS}ms` : '0ms');
  $('anim-toggle').checked = on;
  if (persist) local.set(KEY.anim, on ? '1' : '0');
}

function setSound(on, persist) {
  S.sound = on;
  $('sound-toggle').checked = on;
  document.documentElement.dataset.sound = on ? 'on' : 'off';
  if (persist) local.set(KEY.sound, on ? '1' : '0');
}

// ------------------------------------------------------------ sounds
//
// Synthesized with WebAudio (no sound file): a card's flick, a won, lost or
// tied trick, and a short fanfare for a winning ticket. Muted in the
// settings; the context starts on the player's first click (browsers allow
// no sound before).

const audio = { ctx: null };

function tone(c, at, freq, dur, { type = 'triangle', gain = 0.07, to = null } = {}) {
  const o = c.createOscillator();
  const g = c.createGain();
  o.type = type;
  o.frequency.setValueAtTime(freq, at);
  if (to) o.frequency.exponentialRampToValueAtTime(to, at + dur);
  g.gain.setValueAtTime(0.0001, at);
  g.gain.exponentialRampToValueAtTime(gain, at + 0.012);
  g.gain.exponentialRampToValueAtTime(0.0001, at + dur);
  o.connect(g).connect(c.destination);
  o.start(at);
  o.stop(at + dur + 0.02);
}

/** Plays `kind` (card, won, lost, tie, extra, win) when sounds are on. */
function sound(kind) {
  if (!S.sound) return;
  document.body.dataset.sound = kind;
  const AC = window.AudioContext || window.webkitAudioContext;
  if (!AC) return;
  try {
    if (!audio.ctx) audio.ctx = new AC();
    const c = audio.ctx;
    if (c.state === 'suspended') c.resume().catch(() => {});
    const now = c.currentTime + 0.01;
    const notes = {
      card: [[0, 900, 0.07, { type: 'square', gain: 0.025, to: 300 }]],
      won: [[0, 660, 0.12], [0.1, 880, 0.18]],
      lost: [[0, 330, 0.16], [0.12, 247, 0.24]],
      tie: [[0, 523, 0.12], [0.14, 523, 0.12]],
      extra: [[0, 523, 0.1], [0.09, 659, 0.1], [0.18, 784, 0.2]],
      win: [[0, 523, 0.14], [0.12, 659, 0.14], [0.24, 784, 0.14], [0.36, 1047, 0.45, { gain: 0.09 }]],
    }[kind] || [];
    for (const [dt, f, d, opts] of notes) tone(c, now + dt, f, d, opts);
  } catch { /* no sound on this device */ }
}

function initSettings() {
  const q = new URLSearchParams(location.search);
  const qLang = q.get('lang');
  setLang(qLang || local.get(KEY.lang) || 'fr');
  const reduced = window.matchMedia && window.matchMedia('(prefers-reduced-motion: reduce)').matches;
  const saved = local.get(KEY.anim);
  // ?anim=0 (tests, demos) turns animations off for this visit only.
  setAnim(q.get('anim') === '0' ? false : saved != null ? saved === '1' : !reduced, false);
  $('anim-toggle').addEventListener('change', (e) => setAnim(e.target.checked, true));
  // Sounds: on unless the device asks for reduced motion (or the player muted them).
  const savedSound = local.get(KEY.sound);
  setSound(savedSound != null ? savedSound === '1' : !reduced, false);
  $('sound-toggle').addEventListener('change', (e) => {
    setSound(e.target.checked, true);
    if (e.target.checked) sound('card');
  });
  // A touch screen is touched, not clicked: "Touchez le paquet".
  const coarse = window.matchMedia && window.matchMedia('(pointer: coarse)');
  setTouch(!!coarse && coarse.matches);
  coarse?.addEventListener?.('change', (e) => {
    setTouch(e.matches);
    applyStrings();
    rerender();
  });
  $('lang').addEventListener('click', () => {
    local.set(KEY.lang, setLang(LANGS.find((l) => l !== lang())));
    applyStrings();
    rerender();
  });
  // account.js: a warning that fits the account (with or without a login).
  $('logout').addEventListener('click', askLogout);
}

function renderBalance() {
  const box = $('balance-box');
  box.hidden = S.balance == null;
  if (S.balance != null) {
    $('balance').textContent = money(S.balance);
    $('balance').dataset.cents = String(S.balance);
  }
  $('logout').hidden = !S.token;
}

// ------------------------------------------------------------ routing

function show(view) {
  // Another screen starts at its top (not at the last one's scroll, under the sticky header).
  if (document.body.dataset.view && document.body.dataset.view !== view) window.scrollTo(0, 0);
  for (const v of document.querySelectorAll('#main > .view')) v.hidden = v.id !== `view-${view}`;
  document.body.dataset.view = view;
}

async function route() {
  showAlert('');
  const page = pageFor(location.hash);
  if (page) return page.open();
  const h = new URLSearchParams(location.hash.slice(1));
  if (h.get('t')) return openTicket(h.get('t'));
  if (h.get('v')) return openVerify(h.get('v'));
  return openHome();
}

function rerender() {
  const v = document.body.dataset.view;
  if (v === 'game' && S.ticket) renderGame();
  else if (v === 'home') renderHome();
  else if (v === 'verify' && S.verdict) renderVerdict(S.verdict.record, S.verdict.v);
  else PAGES.find((p) => p.view === v)?.render();
}

// ------------------------------------------------------------ home

async function openHome() {
  show('home');
  S.ticket = null;
  renderHome();
  if (S.token) {
    try {
      const [{ balance_cents }] = await Promise.all([api.me(S.token), loadTickets(false)]);
      S.balance = balance_cents;
      renderBalance();
      renderHome();
    } catch (e) {
      if (e.status === 401) forgetToken();
      else showAlert(errorText(e));
    }
  }
  // account.js: who the player is, and a reminder to keep an account without a login.
  await accountOnHome();
  setBusy(false);
}

/**
 * "Mes tickets", a page at a time, newest first. A server that pages
 * (`GET /api/tickets?limit=N&before=ID` answering `next`) sends a page per
 * click; one that does not sends them all, and the page shows them a page
 * at a time.
 */
async function loadTickets(more) {
  const page = (before) => request('GET', `/api/tickets?limit=${PAGE}${before != null ? `&before=${encodeURIComponent(before)}` : ''}`, { token: S.token, retry: true });
  if (!more) {
    const r = await page(null);
    S.tickets = r.tickets;
    S.ticketsPaged = Object.prototype.hasOwnProperty.call(r, 'next');
    S.ticketsNext = r.next ?? null;
    S.ticketsShown = PAGE;
  } else if (S.ticketsPaged) {
    if (S.ticketsNext == null) return;
    const r = await page(S.ticketsNext);
    const seen = new Set(S.tickets.map((tk) => tk.id));
    S.tickets = S.tickets.concat(r.tickets.filter((tk) => !seen.has(tk.id)));
    S.ticketsNext = r.next ?? null;
  } else {
    S.ticketsShown += PAGE;
  }
}

async function moreTickets() {
  if (S.busy || !S.token) return;
  const before = shownTickets().length;
  setBusy(true);
  try {
    await loadTickets(true);
    renderHome();
    // The keyboard goes on with the first ticket of the new page.
    $('tickets').querySelectorAll(':scope > li')[before]?.querySelector('a')?.focus();
  } catch (e) {
    showAlert(errorText(e));
  } finally {
    setBusy(false);
  }
}

const shownTickets = () => {
  const all = S.tickets || [];
  return S.ticketsPaged ? all : all.slice(0, S.ticketsShown || PAGE);
};
const moreToShow = () => (S.ticketsPaged ? S.ticketsNext != null : (S.tickets || []).length > (S.ticketsShown || PAGE));

// ------------------------------------------------------------ the games of a ticket
//
// A ticket may be played over several games: each Extra duel won (four
// tricks, then the deck) deals eight new cards (art. 3.2.5), and only the
// last game decides (art. 3.2.5.5). The server lists them in `games`; a
// server without it still says enough: every game before the current one
// ended with exactly four tricks and a won Extra duel.

/** `[{game, tricks, extra}]`: `extra` "won", "lost" or null. */
function gamesOf(tk) {
  if (Array.isArray(tk.games) && tk.games.length) return tk.games;
  const n = tk.game || 1;
  const out = [];
  for (let g = 1; g < n; g++) out.push({ game: g, tricks: 4, extra: 'won' });
  const done = tk.phase === 'finished' && tk.result;
  const tricks = done ? tk.result.tricks : tk.tricks_won;
  out.push({ game: n, tricks, extra: done && tk.result.tricks === 4 && tk.result.prize_cents === 0 ? 'lost' : null });
  return out;
}

const gameName = (n) => (n === 1 ? t('game.name.1') : t('game.name', { n }));

/** One game in words: "1re partie : 4 plis, duel Extra gagné". */
function gameText(g, last, finished) {
  const parts = [tn('games.tricks', g.tricks)];
  if (g.extra) parts.push(t(`games.extra.${g.extra}`));
  if (last) parts.push(finished ? t('games.decides') : t('games.inplay'));
  return t('games.row', { game: gameName(g.game), what: parts.join(', ') });
}

function forgetToken() {
  S.token = null;
  S.balance = null;
  local.set(KEY.token, null);
  renderBalance();
  renderHome();
  showAlert(t('err.auth'));
}

function renderHome() {
  const logged = !!S.token;
  $('welcome').hidden = logged;
  $('lobby').hidden = false;
  $('buy-panel').hidden = !logged;
  $('lobby').classList.toggle('solo', !logged);
  const list = $('tickets');
  list.replaceChildren();
  const tickets = logged ? shownTickets() : [];
  // Paper tickets opened on this device and not (or not yet) in the list.
  const listed = new Set((logged ? S.tickets || [] : []).map((tk) => tk.id));
  const paper = Object.keys(paperTokens()).filter((id) => !listed.has(id));
  $('tickets-panel').hidden = !logged && paper.length === 0;
  if (tickets.length === 0 && paper.length === 0) list.append(el('li', { class: 'none', text: t('tickets.none') }));
  for (const id of paper) {
    list.append(el('li', { 'data-id': id, 'data-channel': 'paper' }, el('span', { class: 'serial', text: id }), el('span', { class: 'tag', text: t('tickets.paper') }),
      el('a', { class: 'button', href: `#t=${encodeURIComponent(id)}`, text: t('tickets.open') })));
  }
  for (const tk of tickets) {
    const done = tk.phase === 'finished';
    const prize = done ? tk.result.prize_cents : 0;
    const paid = tk.status === 'paid';
    const status = !done ? t('tickets.inplay')
      : paid ? t('tickets.paid', { prize: money(prize) })
        : prize > 0 ? t(isPaper(tk) ? 'tickets.won.paper' : 'tickets.won', { prize: money(prize) }) : t('tickets.lost');
    const games = gamesOf(tk);
    // The date, the games and their tricks, the net result (prize − price).
    const facts = [];
    if (tk.sold_ms != null) facts.push(el('span', { class: 'date', text: t('tickets.date', { date: dayTime(tk.sold_ms) }) }));
    facts.push(el('span', { class: 'count', text: tn('tickets.games', games.length) }));
    if (done) facts.push(el('span', { class: 'tricks', text: tn('games.tricks', tk.result.tricks) }));
    const net = prize - PRICE;
    if (done) {
      const netText = `${net > 0 ? '+' : net < 0 ? '−' : ''}${money(Math.abs(net))}`;
      facts.push(el('span', { class: `net ${net > 0 ? 'up' : 'down'}`, 'data-cents': String(net), 'aria-label': t('tickets.net.label', { net: netText }), text: t('tickets.net', { net: netText }) }));
    }
    const li = el('li', { 'data-id': tk.id, 'data-phase': tk.phase, 'data-channel': tk.channel || 'online', 'data-games': String(games.length) },
      el('span', { class: 'serial', text: tk.serial }),
      el('span', { class: `status ${done ? (prize > 0 ? 'won' : 'lost') : 'inplay'}`, text: isPaper(tk) ? `${status} · ${t('tickets.paper')}` : status }),
      el('span', { class: 'tk-facts' }, ...facts.flatMap((f, i) => (i ? [' · ', f] : [f]))),
      el('a', { class: `button${done ? '' : ' primary'}`, href: `#t=${encodeURIComponent(tk.id)}`, text: done ? t('tickets.open') : t('tickets.resume') }));
    // Several games: each one, and which decided.
    if (games.length > 1) {
      li.append(el('ol', { class: 'games' }, ...games.map((g, i) => el('li', { 'data-game': String(g.game), 'data-tricks': String(g.tricks), class: i === games.length - 1 ? 'last' : null, text: gameText(g, i === games.length - 1, done) }))));
    }
    list.append(li);
  }
  $('tickets-more').hidden = !logged || !moreToShow();
}

async function useToken(ev) {
  ev.preventDefault();
  const token = $('token-input').value.trim();
  if (!token) return;
  setBusy(true);
  try {
    const me = await api.me(token);
    S.token = token;
    S.balance = me.balance_cents;
    local.set(KEY.token, token);
    await openHome();
  } catch (e) {
    showAlert(e.status === 401 ? t('welcome.token.bad') : errorText(e));
  } finally {
    setBusy(false);
  }
}

// ------------------------------------------------------------ buying

/**
 * A purchase: the lobby's button and the result's "Acheter un autre
 * ticket" alike (both say the price). The new ticket opens.
 */
async function buy(ev) {
  ev.preventDefault();
  if (S.busy || !S.token) return;
  // The key is kept until the server answers: a retry, even after a
  // reload, buys at most one ticket for this click. No client seed here:
  // it goes with the ticket's first card (CONTRACT.md Fairness).
  const pending = { key: randomKey() };
  local.set(KEY.pendingBuy, JSON.stringify(pending));
  await completePurchase(pending);
}

async function completePurchase(pending) {
  setBusy(true);
  showAlert('');
  try {
    const r = await api.buy(S.token, pending.key);
    local.set(KEY.pendingBuy, null);
    S.balance = r.balance_cents;
    renderBalance();
    location.hash = `#t=${encodeURIComponent(r.ticket.id)}`;
  } catch (e) {
    local.set(KEY.pendingBuy, null);
    if (e.code === 'insufficient_funds') showAlert(t('buy.funds', { price: money(PRICE) }));
    else if (e.code === 'sold_out') showAlert(t('buy.soldout'));
    else if (showPurchaseRefusal(e)) { /* limits.js: the player's own limit or self-exclusion */ }
    else if (e.status === 409) showAlert(errorText(e));
    else if (e.status === 401) forgetToken();
    else showAlert(errorText(e));
    setBusy(false);
    // From the result the message is at the top of the page: bring it into view.
    if (document.body.dataset.view === 'game' && !$('alert').hidden) $('alert').scrollIntoView({ block: 'nearest' });
  }
}

// ------------------------------------------------------------ paper tickets

/** Crockford base32, 16 characters; O reads 0, I and L read 1 (as the server does). */
export function normalizePlayCode(s) {
  const c = String(s).toUpperCase().replace(/[\s-]/g, '').replace(/O/g, '0').replace(/[IL]/g, '1');
  if (!/^[0-9A-HJKMNP-TV-Z]{16}$/.test(c)) return null;
  return c.match(/.{4}/g).join('-');
}

/** Too many wrong codes: no new try before this time (unix ms). */
let redeemWaitUntil = 0;

/**
 * Opens the paper ticket of a play code (typed, or from the QR code's
 * address). A logged-in player's token goes with it, so the ticket joins
 * their list; the ticket's own token is kept for this device either way.
 */
async function redeem(code) {
  const err = $('paper-error');
  err.hidden = true;
  err.dataset.reason = '';
  const norm = normalizePlayCode(code);
  const fail = (msg, reason) => {
    err.textContent = msg;
    err.dataset.reason = reason;
    err.hidden = false;
    $('play-code').setAttribute('aria-invalid', 'true');
    $('play-code').focus();
    setBusy(false);
  };
  const slow = () => {
    const s = Math.max(1, Math.ceil((redeemWaitUntil - Date.now()) / 1000));
    return fail(t('paper.slow', { wait: waitText(s), time: clock(redeemWaitUntil) }), 'too_many_attempts');
  };
  if (!norm) return fail(t('paper.format'), 'format');
  if (Date.now() < redeemWaitUntil) return slow();
  $('play-code').removeAttribute('aria-invalid');
  setBusy(true);
  let r;
  try {
    try {
      r = await api.redeem(norm, S.token || undefined);
    } catch (e) {
      if (!(e.status === 401 && S.token)) throw e;
      // The account is not known to the server (any more): the ticket opens without it.
      forgetToken();
      r = await api.redeem(norm);
    }
  } catch (e) {
    if (e.status === 400) return fail(t('paper.format'), 'format');
    if (e.status === 404) return fail(t('paper.unknown'), 'unknown');
    if (e.status === 409) {
      return /online/i.test(e.message) ? fail(t('paper.online'), 'online') : fail(t('paper.unsold'), 'unsold');
    }
    if (e.status === 429) {
      redeemWaitUntil = Date.now() + (e.retryAfter ?? 60) * 1000;
      return slow();
    }
    if (e.status === 405 || e.status === 501) return fail(t('paper.unavailable'), 'unavailable');
    if (e.status === 0) return fail(t('err.generic', { message: e.message }), 'network');
    return fail(errorText(e), 'error');
  }
  keepPaperToken(r.ticket.id, r.token);
  $('play-code').value = '';
  $('play-code').removeAttribute('aria-invalid');
  const target = `#t=${encodeURIComponent(r.ticket.id)}`;
  if (location.hash === target) route();
  else location.hash = target;
}

// ------------------------------------------------------------ the player's seed
//
// The server's seed was fixed (and committed in the block's published root)
// before the sale. The player's seed comes after: the browser draws one
// when a ticket opens unplayed, shows it with the ticket's commitment, lets
// the player change it, and sends it with the first card (seq 0). It is
// kept per ticket until the server has recorded it, so a reload shows the
// same seed, and a first card whose answer was lost is sent again with it.

/** Printable ASCII without spaces, 1 to 64 characters: the server's rule. */
export const validSeed = (s) => typeof s === 'string' && s.length >= 1 && s.length <= 64 && /^[\x21-\x7e]+$/.test(s);

/** 16 bytes of crypto.getRandomValues, in hex. */
const newSeed = () => randomKey();

/** Before the first action the player's seed is still open. */
const seedOpen = (tk) => !!tk && tk.seq === 0 && tk.client_seed == null && tk.phase !== 'finished';

function keepDraft(id, seed) {
  const drafts = local.json(KEY.seeds, {});
  if (seed == null && !(id in drafts)) return;
  delete drafts[id];
  if (seed != null) drafts[id] = seed;
  const ids = Object.keys(drafts);
  for (const k of ids.slice(0, Math.max(0, ids.length - 50))) delete drafts[k];
  local.set(KEY.seeds, JSON.stringify(drafts));
}

/** The ticket just opened: its seed in the field (the one kept, or a new one). */
function prepareSeed(tk) {
  setSeedError(false);
  if (!seedOpen(tk)) {
    keepDraft(tk.id, null);
    $('ticket-seed').value = '';
    return;
  }
  let seed = local.json(KEY.seeds, {})[tk.id];
  if (!validSeed(seed)) {
    seed = newSeed();
    keepDraft(tk.id, seed);
  }
  $('ticket-seed').value = seed;
}

function setSeedError(on) {
  $('ticket-seed-error').hidden = !on;
  if (on) $('ticket-seed').setAttribute('aria-invalid', 'true');
  else $('ticket-seed').removeAttribute('aria-invalid');
}

function onSeedInput() {
  const tk = S.ticket;
  if (!seedOpen(tk)) return;
  const seed = $('ticket-seed').value;
  const ok = validSeed(seed);
  if (ok) {
    keepDraft(tk.id, seed);
    setSeedError(false);
  } else if (!$('ticket-seed-error').hidden || seed.length > 0) {
    setSeedError(true);
  }
}

/** A hash in short: its first 12 and last 4 hex digits. */
const shortHash = (h) => (typeof h === 'string' && h.length > 20 ? `${h.slice(0, 12)}…${h.slice(-4)}` : String(h ?? '—'));

function renderFair(tk) {
  const c = $('ticket-commitment');
  c.textContent = shortHash(tk.commitment);
  c.title = tk.commitment || '';
  c.dataset.full = tk.commitment || '';
  const open = seedOpen(tk);
  $('fair').dataset.open = String(open);
  $('seed-form').hidden = !open;
  $('seed-after').hidden = open || tk.client_seed == null;
  $('seed-shown-row').hidden = open;
  $('ticket-seed-shown').textContent = tk.client_seed ?? '—';
}

// ------------------------------------------------------------ one ticket

async function openTicket(id) {
  show('game');
  $('result').hidden = true;
  setBusy(true);
  local.set(KEY.current, id);
  const token = tokenFor(id);
  try {
    await loadTicket(id, token);
  } catch (e) {
    setBusy(false);
    if (e.status === 401 && hasPaperToken(id)) {
      // This device's token for the ticket is refused: its code opens it again.
      keepPaperToken(id, null);
      showAlert(t('paper.token.bad'));
    } else if (e.status === 401) forgetToken();
    else showAlert(errorText(e));
    show('home');
    renderHome();
    return;
  }
  setBusy(false);
  const pending = local.json(KEY.pendingAct, null);
  if (pending && pending.id === id && pending.body && !S.sending) {
    // An action sent before a reload, never answered: the same body again
    // (the same seq, and at seq 0 the same client seed). Applied meanwhile,
    // the server returns its stored answer; refused, the page catches up.
    if (pending.body.seq === S.ticket.seq && S.ticket.phase !== 'finished') return act(pending.body);
    local.set(KEY.pendingAct, null);
  }
}

/**
 * The ticket and its record, as the server has them: the table is rebuilt
 * from the recorded actions and draws (verify.js replays them without the
 * seed), so a reload shows exactly what was played.
 */
async function loadTicket(id, token) {
  for (let tries = 0; ; tries++) {
    const [{ ticket }, record] = await Promise.all([api.ticket(token, id), api.record(token, id)]);
    if (record.actions.length !== ticket.seq && tries < 3) continue; // an action landed between the two reads
    const { steps } = await replayRecorded(record);
    const view = newView();
    for (const s of steps) for (const e of s.events) ingest(view, e);
    S.ticket = ticket;
    S.view = view;
    prepareSeed(ticket);
    // A paper ticket was scratched in the shop, by hand.
    S.scratched = ticket.seq > 0 || ticket.phase === 'finished' || isPaper(ticket) || local.json(KEY.scratched, []).includes(id);
    if (S.token && S.balance == null) {
      api.me(S.token).then((m) => { S.balance = m.balance_cents; renderBalance(); }).catch(() => {});
    }
    renderGame();
    return;
  }
}

function newView() {
  // hist: the tricks of the current game; last: what the trick area shows;
  // mode: 'play' or 'extra' (after four tricks, until the Extra duel is settled).
  return { hist: [], last: null, mode: 'play', extraDraws: [] };
}

/** One server event into the table's model (live play and rebuilds alike). */
function ingest(view, e) {
  switch (e.type) {
    case 'trick': {
      const entry = { player: e.player, capone: e.capone, outcome: e.outcome, final: e.outcome === 'tie' ? null : e.outcome, decks: [] };
      view.hist.push(entry);
      view.last = { kind: 'trick', player: e.player, capone: e.capone, outcome: e.outcome };
      break;
    }
    case 'deck': {
      const d = { player: e.player, capone: e.capone, outcome: e.outcome };
      if (view.mode === 'extra') {
        view.extraDraws.push(d);
        view.last = { kind: 'deck', for: 'extra', ...d };
      } else {
        const tied = view.hist[view.hist.length - 1];
        if (tied) {
          tied.decks.push(d);
          if (e.outcome !== 'tie') tied.final = e.outcome;
        }
        view.last = { kind: 'deck', for: 'tie_break', tied, ...d };
      }
      break;
    }
    case 'game_over':
      view.gameOver = { tricks: e.tricks, next: e.next };
      if (e.next === 'extra_draw') view.mode = 'extra';
      break;
    case 'extra_game':
      view.hist = [];
      view.extraDraws = [];
      view.mode = 'play';
      view.gameOver = null;
      // The Extra duel's two cards stay in view, with the news.
      view.last = view.last && view.last.kind === 'deck' ? { ...view.last, extraGame: e.game } : { kind: 'extra_game', game: e.game };
      break;
    case 'finished':
      view.finished = { tricks: e.tricks, prize_cents: e.prize_cents };
      break;
    default:
      break; // "More event types may be added" (CONTRACT.md)
  }
}

/** The sentence a screen reader hears for an event, or null. */
function say(view, e) {
  switch (e.type) {
    case 'trick':
      return t('say.trick', { k: view.hist.length, p: cardName(e.player, 'hearts'), c: cardName(e.capone, 'spades'), outcome: t(`outcome.${e.outcome}`) });
    case 'deck':
      return t('say.deck', { p: rankName(e.player), c: rankName(e.capone), outcome: t(`outcome.${e.outcome}`) });
    case 'game_over':
      return tn('say.gameover', e.tricks);
    case 'extra_game':
      return t('say.extra.won', { n: e.game - 1 });
    case 'finished':
      return e.prize_cents > 0 ? t(isPaper(S.ticket) ? 'say.finished.paper' : 'say.finished.won', { n: e.tricks, prize: money(e.prize_cents) })
        : tn('say.finished.lost', e.tricks);
    default:
      return null;
  }
}
const rankName = (r) => t(`rankname.${r}`);

function promptFor(tk) {
  if (tk.phase === 'finished') return '';
  if (!S.scratched) return t('prompt.scratch');
  if (tk.phase === 'play') return t('prompt.play');
  if (tk.phase === 'extra_draw') return t('prompt.extra');
  if (tk.phase === 'tie_break') return S.view.mode === 'extra' ? t('prompt.extratie') : t('prompt.tie');
  return '';
}

function renderGame() {
  const tk = S.ticket;
  const game = $('view-game');
  game.dataset.id = tk.id;
  game.dataset.seq = String(tk.seq);
  game.dataset.phase = tk.phase;
  game.dataset.game = String(tk.game);
  $('game-title').textContent = t('ticket.serial', { serial: tk.serial });
  $('game-no').textContent = tk.game === 1 ? t('ticket.game1') : t('ticket.gameN', { n: tk.game - 1 });
  $('game-no').classList.toggle('extra', tk.game > 1);
  const won = tn('table.won', tk.tricks_won);
  const lost = tn('table.lost', tk.tricks_lost);
  $('score').textContent = `${won} · ${lost}`;
  $('score').setAttribute('aria-label', t('table.score.label', { won, lost }));
  renderPaperNote(tk);
  renderPrizes(tk);
  renderScratch();
  renderFair(tk);
  renderHands(tk);
  renderTrick(S.view.last, false);
  renderHistory();
  renderGames(tk);
  setDeckCount(S.view.last && S.view.last.kind === 'deck' ? 14 : 16);
  $('prompt').textContent = promptFor(tk);
  renderResult(tk);
  renderControls();
}

/**
 * In an Extra game: a banner on the table until its first trick (the Extra
 * duel won, eight new cards, which game this is), then a line recalling
 * the earlier games under the tricks.
 */
function renderGames(tk) {
  const games = gamesOf(tk);
  const extra = tk.game > 1 && tk.phase !== 'finished';
  const banner = $('extra-banner');
  banner.hidden = !(extra && S.view.hist.length === 0);
  banner.dataset.game = String(tk.game);
  $('extra-banner-title').textContent = t('extra.banner', { game: gameName(tk.game) });
  const earlier = $('games-earlier');
  earlier.hidden = !extra;
  earlier.textContent = extra ? t('games.earlier', { list: games.slice(0, -1).map((g) => gameText(g, false, false)).join(' · ') }) : '';
}

/** The deck's count: 16, and 14 while its two drawn cards are on the table. */
function setDeckCount(n) {
  const c = $('deck').querySelector('.deck-count');
  // Drawn by CSS (::after): the accessible name "Paquet de 16 cartes" then holds all the button's text (axe: label-content-name-mismatch).
  c.dataset.n = String(n);
  $('deck').dataset.count = String(n);
}

function renderPrizes(tk) {
  const body = $('prizes').tBodies[0];
  body.replaceChildren();
  for (const n of ['8', '7', '6', '5']) {
    const cents = tk.prizes_cents[n];
    body.append(el('tr', { 'data-tricks': n, class: tk.result && String(tk.result.tricks) === n && tk.result.prize_cents > 0 ? 'hit' : null },
      el('th', { scope: 'row', text: t('prize.row', { n }) }),
      el('td', { 'data-cents': cents ?? 0, text: cents ? money(cents) : t('prize.none') })));
  }
}

function renderHands(tk) {
  const ch = $('capone-hand');
  ch.replaceChildren();
  for (let i = 0; i < 8; i++) ch.append(i < tk.capone_cards_left ? cardBack() : el('span', { class: 'card gone' }));
  ch.setAttribute('aria-label', t('table.capone.label', { n: tk.capone_cards_left }));

  const hand = $('player-hand');
  const focusedCard = document.activeElement && document.activeElement.closest && document.activeElement.closest('#player-hand') ? document.activeElement.dataset.card : null;
  hand.replaceChildren();
  for (const r of RANKS) {
    if (tk.hand.includes(r)) {
      const b = el('button', { type: 'button', class: 'card heart', 'data-card': r, 'aria-label': cardName(r, 'hearts') },
        // The rank is drawn by CSS (::after): the button's text is then within its name "Valet de cœur" (axe).
        el('span', { class: 'rank', 'aria-hidden': 'true', 'data-rank': rankLabel(r) }),
        el('span', { class: 'suit', 'aria-hidden': 'true', text: '♥' }),
        el('span', { class: 'pip', 'aria-hidden': 'true', text: '♥' }));
      b.addEventListener('click', () => play(r, b));
      hand.append(b);
    } else {
      hand.append(el('span', { class: 'card gone', 'data-played': r }));
    }
  }
  if (focusedCard) refocus(focusedCard);
}

/** Keeps the keyboard where the player was: the same card, the next one, or the deck. */
function refocus(card) {
  const buttons = [...$('player-hand').querySelectorAll('button')];
  if (S.ticket.phase !== 'play') return $('deck').focus();
  const same = buttons.find((b) => b.dataset.card === card);
  const next = buttons.find((b) => RANKS.indexOf(b.dataset.card) > RANKS.indexOf(card)) || buttons[buttons.length - 1];
  (same || next || $('main')).focus();
}

function renderControls() {
  const tk = S.ticket;
  if (!tk || document.body.dataset.view !== 'game') return;
  const canPlay = !S.busy && S.scratched && tk.phase === 'play';
  const canDraw = !S.busy && S.scratched && (tk.phase === 'tie_break' || tk.phase === 'extra_draw');
  for (const b of $('player-hand').querySelectorAll('button')) b.setAttribute('aria-disabled', String(!canPlay));
  const deck = $('deck');
  const wantsDraw = tk.phase === 'tie_break' || tk.phase === 'extra_draw';
  deck.disabled = !wantsDraw;
  deck.setAttribute('aria-disabled', String(!canDraw));
  deck.classList.toggle('active', wantsDraw && S.scratched);
  deck.setAttribute('aria-label', wantsDraw ? t('table.deck.active') : t('table.deck.label'));
  $('table').classList.toggle('locked', !S.scratched);
  $('ticket-seed').disabled = S.busy;
  $('seed-new').disabled = S.busy;
  $('buy').disabled = S.busy;
  $('again').disabled = S.busy;
}

/**
 * The middle of the table: the last trick, or the deck draw with both
 * cards, each under its owner's name. `stage` (animations on): 'enter' the
 * player's card comes (or both cards leave the deck), As Capone's still
 * face down; 'turn' As Capone's card turns over; otherwise the cards and
 * the outcome as they stand.
 */
function renderTrick(last, stage) {
  const sp = $('slot-player');
  const sc = $('slot-capone');
  const badge = $('trick-badge');
  sp.replaceChildren();
  sc.replaceChildren();
  badge.textContent = '';
  badge.className = 'badge';
  $('trick').className = 'trick';
  $('trick').dataset.empty = String(!last || last.kind === 'extra_game');
  $('trick').dataset.stage = stage || 'done';
  delete $('trick').dataset.outcome;
  if (!last) return;
  const enter = stage === 'enter' && S.anim;
  const turn = stage === 'turn' && S.anim;
  const hidden = enter; // As Capone's card, face down until it turns
  if (last.kind === 'trick') {
    sp.append(cardFace(last.player, 'hearts', enter ? 'enter-up' : ''));
    sc.append(hidden ? cardBack('enter-up') : cardFace(last.capone, 'spades', turn ? 'turn-in' : ''));
  } else if (last.kind === 'deck') {
    $('trick').classList.add('from-deck');
    sp.append(cardFace(last.player, 'hearts', `drawn ${enter ? 'enter-deck' : ''}`));
    sc.append(hidden ? cardBack('drawn enter-deck late') : cardFace(last.capone, 'spades', `drawn ${turn ? 'turn-in' : ''}`));
    if (last.for === 'tie_break' && last.tied) {
      sp.prepend(cardFace(last.tied.player, 'hearts', 'tied'));
      sc.prepend(cardFace(last.tied.capone, 'spades', 'tied'));
    }
  } else if (last.kind === 'extra_game') {
    badge.textContent = t('ticket.gameN', { n: last.game - 1 });
    badge.classList.add('extra');
    return;
  }
  if (enter || turn) return; // the outcome after the cards
  if (last.extraGame) {
    badge.textContent = t('ticket.gameN', { n: last.extraGame - 1 });
    badge.classList.add('extra');
    return;
  }
  badge.textContent = t(`outcome.${last.outcome}`);
  badge.classList.add(last.outcome);
  $('trick').dataset.outcome = last.outcome;
}

function renderHistory() {
  const ol = $('history');
  ol.replaceChildren();
  for (const h of S.view.hist) {
    const final = h.final || 'tie';
    const li = el('li', { class: final, 'aria-label': `${cardName(h.player, 'hearts')} / ${cardName(h.capone, 'spades')} : ${t(`outcome.${final}`)}` },
      el('span', { class: 'h-p', text: rankLabel(h.player) + '♥' }),
      el('span', { class: 'h-c', text: rankLabel(h.capone) + '♠' }));
    if (h.decks.length) li.append(el('span', { class: 'h-d', 'aria-hidden': 'true', text: h.decks.map((d) => `${rankLabel(d.player)}/${rankLabel(d.capone)}`).join(' ') }));
    ol.append(li);
  }
  for (let i = S.view.hist.length; i < 8; i++) ol.append(el('li', { class: 'empty', 'aria-hidden': 'true' }));
}

/** A paper ticket: where it was sold, and paid. */
function renderPaperNote(tk) {
  const note = $('paper-note');
  note.hidden = !isPaper(tk);
  if (note.hidden) return;
  const r = tk.retail || {};
  note.dataset.status = tk.status || '';
  note.textContent = r.paid_ms ? t('ticket.paper.paid', { date: dayTime(r.paid_ms), shop: r.paid_by || '?' })
    : r.sold_by ? t('ticket.paper.sold', { shop: r.sold_by }) : t('ticket.paper');
}

function renderResult(tk) {
  const box = $('result');
  if (tk.phase !== 'finished' || !tk.result) {
    box.hidden = true;
    return;
  }
  const r = tk.result;
  const won = r.prize_cents > 0;
  const paper = isPaper(tk);
  const retail = tk.retail || {};
  const paid = paper && (tk.status === 'paid' || retail.paid_ms != null);
  box.hidden = false;
  box.dataset.won = String(won);
  box.dataset.prize = String(r.prize_cents);
  box.dataset.tricks = String(r.tricks);
  box.dataset.channel = paper ? 'paper' : 'online';
  box.dataset.paid = String(paid);
  const lostExtra = !won && r.tricks === 4;
  const prize = money(r.prize_cents);
  $('result-title').textContent = !won ? t('result.lost.title') : paid ? t('result.paid.title') : t('result.won.title');
  $('result-text').textContent = !won ? (lostExtra ? t('result.lost.extra') : tn('result.lost.text', r.tricks))
    : paid ? t('result.paid.text', { n: r.tricks, prize, date: retail.paid_ms ? dayTime(retail.paid_ms) : '—', shop: retail.paid_by || '?' })
      : paper ? t('result.won.paper', { n: r.tricks, prize })
        : t('result.won.text', { n: r.tricks, prize });
  // A paper winner hands this serial over at the counter.
  const serial = $('result-serial');
  serial.hidden = !(paper && won && !paid);
  serial.replaceChildren(t('result.serial'), ' ', el('strong', { class: 'mono', text: tk.serial }));
  const claim = $('result-claim');
  claim.hidden = !(paper && won && !paid && retail.claim_until_ms != null);
  claim.textContent = claim.hidden ? '' : t('result.claim', { date: day(retail.claim_until_ms) });
  $('again').hidden = !S.token || paper;
  // Every game of the ticket, and the last one, which decided (art. 3.2.5.5).
  const games = gamesOf(tk);
  const recap = $('result-games');
  recap.hidden = games.length < 2;
  $('result-games-list').replaceChildren(...games.map((g, i) => {
    const last = i === games.length - 1;
    return el('li', { 'data-game': String(g.game), 'data-tricks': String(g.tricks), 'data-extra': g.extra || '', class: last ? 'decides' : null, text: gameText(g, last, true) });
  }));
  // A winning ticket just played: a short celebration (the animations allowing).
  box.querySelector('.confetti')?.remove();
  if (won && S.celebrate === tk.id) {
    S.celebrate = null;
    sound('win');
    if (S.anim) {
      const c = el('div', { class: 'confetti', 'aria-hidden': 'true' });
      for (let i = 0; i < 14; i++) {
        c.append(el('span', { style: `--x:${(i * 37) % 100}%;--d:${(i % 5) * 70}ms;--r:${(i * 53) % 360}deg`, text: i % 2 ? '♥' : '♠' }));
      }
      box.append(c);
      setTimeout(() => c.remove(), 1600);
    }
  }
}

async function play(card, button) {
  const tk = S.ticket;
  if (S.busy || !S.scratched || tk.phase !== 'play') return;
  const body = { seq: tk.seq, action: 'play', card };
  if (seedOpen(tk)) {
    // The first card carries the player's seed, as the field shows it.
    const seed = $('ticket-seed').value;
    if (!validSeed(seed)) {
      setSeedError(true); // role=alert: said aloud too
      $('ticket-seed').focus();
      return;
    }
    keepDraft(tk.id, seed);
    body.client_seed = seed;
  }
  button.classList.add('pending');
  await act(body);
}

async function drawDeck() {
  const tk = S.ticket;
  if (S.busy || !S.scratched || !tk || !(tk.phase === 'tie_break' || tk.phase === 'extra_draw')) return;
  await act({ seq: tk.seq, action: 'draw' });
}

/**
 * Sends one action (`body`, with the ticket's `seq`). A lost answer is
 * retried with this very body (api.js), and after a reload too (it is kept
 * until the server answers): the server returns what it stored. A refusal
 * (the ticket moved on elsewhere) reloads the ticket as the server has it.
 */
async function act(body) {
  const tk = S.ticket;
  const token = tokenFor(tk.id);
  setBusy(true);
  $('prompt').textContent = t('prompt.wait');
  local.set(KEY.pendingAct, JSON.stringify({ id: tk.id, body }));
  S.sending = true;
  let answer;
  try {
    answer = await api.act(token, tk.id, body);
    local.set(KEY.pendingAct, null);
  } catch (e) {
    local.set(KEY.pendingAct, null);
    S.sending = false;
    if (e instanceof ApiError && (e.status === 409 || e.status === 422)) {
      try {
        await loadTicket(tk.id, token);
        showAlert(t('net.resynced'), 'info');
      } catch (e2) {
        showAlert(errorText(e2));
      }
    } else {
      showAlert(errorText(e));
      renderGame();
    }
    setBusy(false);
    return;
  }
  S.sending = false;
  if (answer.ticket.id !== tk.id) return setBusy(false);
  S.ticket = answer.ticket;
  if (!seedOpen(S.ticket)) prepareSeed(S.ticket);
  // A paper ticket's prize goes to no wallet: with its own token the answer has no balance.
  if (answer.balance_cents != null) S.balance = answer.balance_cents;
  renderBalance();
  // The hand and score are the server's at once; the middle of the table
  // shows the events in order, each briefly.
  renderHands(S.ticket);
  const sentences = [];
  for (const e of answer.events) {
    ingest(S.view, e);
    const s = say(S.view, e);
    if (s) sentences.push(s);
    if (e.type === 'trick' || e.type === 'deck') {
      await revealDraw(S.view.last);
      renderHistory();
      sound(e.outcome);
      await pause(1.5);
    } else if (e.type === 'extra_game') {
      // The Extra duel won: eight new cards, said on the table too.
      renderTrick(S.view.last);
      renderHistory();
      renderGames(S.ticket);
      sound('extra');
      await pause(3);
    } else if (e.type === 'finished' && e.prize_cents > 0) {
      S.celebrate = S.ticket.id;
    }
  }
  const prompt = promptFor(S.ticket);
  if (prompt) sentences.push(prompt);
  announce(sentences.join(' '));
  renderGame();
  setBusy(false);
  if (S.ticket.phase === 'finished') $('result').focus();
  else if (S.ticket.phase !== 'play') $('deck').focus();
  else if (!document.activeElement || document.activeElement === document.body) $('player-hand').querySelector('button')?.focus();
}

/**
 * A draw with suspense (animations on): the player's card comes (or two
 * cards leave the deck, its count going down), As Capone's card turns over
 * in about 0.6 s, then the outcome. Animations off: at once.
 */
async function revealDraw(last) {
  if (!S.anim || !last || (last.kind !== 'trick' && last.kind !== 'deck')) {
    renderTrick(last);
    return;
  }
  if (last.kind === 'deck') {
    setDeckCount(16);
    renderTrick(last, 'enter');
    sound('card');
    await sleep(ANIM_MS / 2);
    setDeckCount(15);
    await sleep(ANIM_MS / 2);
    setDeckCount(14);
    sound('card');
  } else {
    renderTrick(last, 'enter');
    sound('card');
  }
  await sleep(ANIM_MS + 240);
  const back = $('slot-capone').querySelector('.card.back');
  if (back) back.classList.add('turn-out');
  await sleep(TURN_MS / 2);
  renderTrick(last, 'turn');
  await sleep(TURN_MS / 2);
  renderTrick(last);
}

// ------------------------------------------------------------ the scratch zone

const scratch = { ctx: null, drawing: false, lastPt: null, radius: 18 };

function renderScratch() {
  const canvas = $('scratch-canvas');
  // A paper ticket's prizes were scratched on the paper: shown, not scratched again.
  const paper = isPaper(S.ticket);
  $('scratch-title').textContent = t(paper ? 'scratch.title.paper' : 'scratch.title');
  $('scratch').dataset.channel = paper ? 'paper' : 'online';
  $('scratch').classList.toggle('revealed', S.scratched);
  $('reveal').hidden = S.scratched;
  canvas.hidden = S.scratched;
  if (S.scratched) return;
  requestAnimationFrame(paintScratch);
}

function paintScratch() {
  const canvas = $('scratch-canvas');
  const box = $('scratch').getBoundingClientRect();
  if (box.width === 0) return;
  const dpr = window.devicePixelRatio || 1;
  canvas.width = Math.round(box.width * dpr);
  canvas.height = Math.round(box.height * dpr);
  const ctx = canvas.getContext('2d', { willReadFrequently: true });
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  const g = ctx.createLinearGradient(0, 0, box.width, box.height);
  g.addColorStop(0, '#b8b8b8');
  g.addColorStop(0.45, '#e9e9e9');
  g.addColorStop(0.55, '#cfcfcf');
  g.addColorStop(1, '#9c9c9c');
  ctx.globalCompositeOperation = 'source-over';
  ctx.fillStyle = g;
  ctx.fillRect(0, 0, box.width, box.height);
  ctx.fillStyle = 'rgba(80,80,80,0.7)';
  const size = Math.max(14, Math.min(20, box.width / 20));
  ctx.font = `600 ${size}px system-ui, sans-serif`;
  ctx.textAlign = 'center';
  ctx.textBaseline = 'middle';
  // The hint on as many lines as the zone's width needs.
  const lines = [];
  for (const word of t('scratch.hint').split(' ')) {
    const last = lines[lines.length - 1];
    if (last && ctx.measureText(`${last} ${word}`).width < box.width - 70) lines[lines.length - 1] = `${last} ${word}`;
    else lines.push(word);
  }
  lines.forEach((l, k) => ctx.fillText(l, box.width / 2, box.height / 2 + (k - (lines.length - 1) / 2) * size * 1.25));
  ctx.font = `${Math.max(16, box.height / 5)}px serif`;
  ctx.fillStyle = 'rgba(110,110,110,0.35)';
  for (const [x, y, s] of [[0.1, 0.25, '♠'], [0.9, 0.25, '♥'], [0.1, 0.78, '♥'], [0.9, 0.78, '♠']]) ctx.fillText(s, box.width * x, box.height * y);
  scratch.ctx = ctx;
  scratch.radius = Math.max(14, Math.min(26, box.height / 6));
}

function scratchAt(ev) {
  const ctx = scratch.ctx;
  if (!ctx) return;
  const r = $('scratch-canvas').getBoundingClientRect();
  const pt = { x: ev.clientX - r.left, y: ev.clientY - r.top };
  ctx.globalCompositeOperation = 'destination-out';
  ctx.lineCap = 'round';
  ctx.lineWidth = scratch.radius * 2;
  ctx.beginPath();
  const from = scratch.lastPt || pt;
  ctx.moveTo(from.x, from.y);
  ctx.lineTo(pt.x + 0.01, pt.y);
  ctx.stroke();
  scratch.lastPt = pt;
}

function scratchedFraction() {
  const c = $('scratch-canvas');
  const { data } = scratch.ctx.getImageData(0, 0, c.width, c.height);
  let clear = 0;
  let all = 0;
  const step = 6;
  for (let y = 0; y < c.height; y += step) {
    for (let x = 0; x < c.width; x += step) {
      all++;
      if (data[(y * c.width + x) * 4 + 3] < 128) clear++;
    }
  }
  return all ? clear / all : 1;
}

function initScratch() {
  const c = $('scratch-canvas');
  c.addEventListener('pointerdown', (ev) => {
    if (S.scratched) return;
    ev.preventDefault();
    c.setPointerCapture?.(ev.pointerId);
    scratch.drawing = true;
    scratch.lastPt = null;
    scratchAt(ev);
  });
  c.addEventListener('pointermove', (ev) => {
    if (!scratch.drawing) return;
    for (const e of ev.getCoalescedEvents ? ev.getCoalescedEvents() : [ev]) scratchAt(e);
    if (ev.getCoalescedEvents && ev.getCoalescedEvents().length === 0) scratchAt(ev);
  });
  const end = () => {
    if (!scratch.drawing) return;
    scratch.drawing = false;
    scratch.lastPt = null;
    if (scratchedFraction() > 0.45) reveal(false);
  };
  c.addEventListener('pointerup', end);
  c.addEventListener('pointercancel', end);
  c.addEventListener('pointerleave', end);
  $('reveal').addEventListener('click', () => reveal(true));
  window.addEventListener('resize', () => {
    if (!S.scratched && document.body.dataset.view === 'game') paintScratch();
  });
}

function reveal(byButton) {
  if (S.scratched || !S.ticket) return;
  S.scratched = true;
  const ids = local.json(KEY.scratched, []).filter((x) => x !== S.ticket.id);
  ids.push(S.ticket.id);
  local.set(KEY.scratched, JSON.stringify(ids.slice(-50)));
  renderScratch();
  $('prompt').textContent = promptFor(S.ticket);
  renderControls();
  announce(`${t('scratch.title')} : ${['5', '6', '7', '8'].map((n) => `${t('prize.row', { n })} ${S.ticket.prizes_cents[n] ? money(S.ticket.prizes_cents[n]) : t('prize.none')}`).join(', ')}. ${promptFor(S.ticket)}`);
  if (byButton) $('player-hand').querySelector('button')?.focus();
}

// ------------------------------------------------------------ verification

async function openVerify(id) {
  show('verify');
  setBusy(true);
  S.verdict = null;
  $('verdict').textContent = t('verify.running');
  $('verdict').dataset.valid = '';
  $('verdict-more').textContent = '';
  $('verify-details').open = false;
  $('verify-checks').replaceChildren();
  $('verify-draws').tBodies[0].replaceChildren();
  $('verify-seeds').replaceChildren();
  $('verify-block').replaceChildren();
  $('verify-intro').textContent = t('verify.intro', { serial: id });
  try {
    const record = await api.record(tokenFor(id), id);
    // The published roots are read from this page's server, apart from the record.
    const v = await verifyRecord(record, { emissions: () => api.emissions() });
    S.verdict = { record, v };
    renderVerdict(record, v);
  } catch (e) {
    $('verdict').textContent = errorText(e);
    $('verdict').dataset.valid = 'false';
  }
  setBusy(false);
  $('verdict').focus?.();
}

function drawText(d) {
  if (!d) return '—';
  return d.kind === 'deck' ? `${rankLabel(d.player)}♥ / ${rankLabel(d.capone)}♠` : `${rankLabel(d.capone)}♠`;
}

/** A publication time (unix ms) in the page's language, with its time zone. */
function when(ms) {
  if (!Number.isFinite(ms)) return '—';
  return new Intl.DateTimeFormat(lang() === 'fr' ? 'fr-FR' : 'en-GB', {
    year: 'numeric', month: 'long', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit', timeZoneName: 'short',
  }).format(new Date(ms));
}

const prizesText = (cents) => (Array.isArray(cents)
  ? ['5', '6', '7', '8'].map((n, i) => `${t('prize.row', { n })} ${money(cents[i])}`).join(', ')
  : String(cents));

function problemText(p) {
  const params = { ...p };
  if (p.code === 'leaf_prizes') {
    params.leaf = prizesText(p.leaf_cents);
    params.record = prizesText(p.record_cents);
  }
  if (p.code === 'published') params.date = when(p.published_ms);
  if (p.code === 'leaf_malformed') params.field = p.field;
  if (p.code === 'draw') {
    params.recorded = drawText(p.recorded);
    params.computed = drawText(p.computed);
  }
  if (p.code === 'result') params.computed = p.computed ? `${p.computed.tricks} / ${money(p.computed.prize_cents)}` : '—';
  return t(`verify.bad.${p.code}`, params);
}

function renderVerdict(record, v) {
  $('verify-intro').textContent = t('verify.intro', { serial: record.serial });
  const verdict = $('verdict');
  // The verdict in plain words first; the technical detail folded away
  // (open by itself when something is wrong).
  verdict.textContent = v.valid ? t('verify.valid') : tn('verify.invalid', v.problems.length);
  verdict.dataset.valid = String(v.valid);
  $('verdict-more').textContent = t(v.valid ? 'verify.valid.more' : 'verify.invalid.more');
  $('verify-details').open = !v.valid;
  $('verify-crypto').textContent = t(`verify.crypto.${v.crypto}`);
  const checks = $('verify-checks');
  checks.replaceChildren();
  for (const p of v.passed) {
    const params = { ...p };
    if (p.code === 'result') params.prize = money(p.prize_cents);
    if (p.code === 'published') params.date = when(p.published_ms);
    checks.append(el('li', { class: 'ok', text: t(`verify.ok.${p.code}`, params) }));
  }
  for (const p of v.problems) checks.append(el('li', { class: 'bad', text: problemText(p) }));
  // The block root the record was checked against, and where it was published.
  const block = $('verify-block');
  block.replaceChildren();
  const pub = v.published;
  const rows = [
    ['verify.root', v.root || String(record.root ?? '—'), 'verify-root', true],
    ['verify.where', t('verify.where.text', { code: pub ? pub.code : '—', emission: record.emission ?? '—', block: record.block ?? '—', position: record.position ?? '—' }), 'verify-where', false],
    ['verify.published', pub ? t('verify.published.text', { source: pub.source, date: when(pub.published_ms) }) : t('verify.published.none'), 'verify-published', false],
  ];
  if (pub && pub.root !== v.root) rows.push(['verify.published.root', pub.root, 'verify-published-root', true]);
  for (const [k, val, id, mono] of rows) block.append(el('dt', { text: t(k) }), el('dd', { id, class: mono ? 'mono' : null, text: String(val) }));
  block.dataset.valid = String(!!pub && pub.root === v.root);
  const seeds = $('verify-seeds');
  seeds.replaceChildren();
  for (const [k, val] of [['verify.commitment', record.commitment], ['verify.server_seed', record.server_seed ?? '—'], ['verify.client_seed', record.client_seed]]) {
    seeds.append(el('dt', { text: t(k) }), el('dd', { class: 'mono', text: String(val) }));
  }
  const body = $('verify-draws').tBodies[0];
  body.replaceChildren();
  for (const d of v.draws) {
    body.append(el('tr', { class: d.ok ? 'ok' : 'bad' },
      el('td', { text: String(d.n) }),
      el('td', { text: d.kind ? t(`verify.kind.${d.kind}`) : '—' }),
      el('td', { text: drawText(d.recorded) }),
      el('td', { text: drawText(d.computed) }),
      el('td', { class: 'mark', 'aria-label': d.ok ? 'ok' : 'mismatch', text: d.ok ? '✓' : '✗' })));
  }
  $('verify-raw').textContent = JSON.stringify(record, null, 2);
}

// ------------------------------------------------------------ start

function init() {
  initSettings();
  applyStrings();
  initScratch();
  net.onRetry = () => {
    const b = $('netbanner');
    b.textContent = t('net.retry');
    b.hidden = false;
  };
  net.onRecovered = () => { $('netbanner').hidden = true; };
  // account.js (the welcome's forms, the account page), rules.js, limits.js (and its 18+ question).
  const ctx = { S, local, KEY, show, route, showAlert, setBusy, errorText, renderBalance, openHome, forgetToken, el, waitText, dayTime };
  initAccount(ctx);
  initRules(ctx);
  initLimits(ctx);
  $('token-form').addEventListener('submit', useToken);
  $('buy-form').addEventListener('submit', buy);
  $('tickets-more').addEventListener('click', moreTickets);
  $('paper-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    redeem($('play-code').value);
  });
  $('deck').addEventListener('click', drawDeck);
  $('seed-form').addEventListener('submit', (ev) => ev.preventDefault());
  $('ticket-seed').addEventListener('input', onSeedInput);
  $('seed-new').addEventListener('click', () => {
    if (S.busy || !seedOpen(S.ticket)) return;
    const seed = newSeed();
    $('ticket-seed').value = seed;
    keepDraft(S.ticket.id, seed);
    setSeedError(false);
    announce(t('fair.seed.drawn', { seed }));
  });
  $('verify-btn').addEventListener('click', () => { location.hash = `#v=${encodeURIComponent(S.ticket.id)}`; });
  // "Acheter un autre ticket": the lobby's purchase, from the result.
  $('again').addEventListener('click', buy);
  $('home-btn').addEventListener('click', () => { location.hash = ''; });
  $('verify-back').addEventListener('click', () => {
    const id = S.verdict ? S.verdict.record.serial : local.get(KEY.current);
    location.hash = id ? `#t=${encodeURIComponent(id)}` : '';
  });
  $('brand').addEventListener('click', (ev) => {
    ev.preventDefault();
    if (location.hash && location.hash !== '#') location.hash = '';
    else route();
  });
  window.addEventListener('hashchange', route);

  const q = new URLSearchParams(location.search);
  const code = location.pathname.replace(/\/+$/, '').endsWith('/play') ? q.get('code') : null;
  if (code != null) {
    // The play code is a secret: it leaves the address bar (and the history) at once.
    q.delete('code');
    const rest = q.toString();
    history.replaceState(null, '', `${location.pathname}${rest ? `?${rest}` : ''}${location.hash}`);
    $('play-code').value = code;
    // A logged-in player's account loads as on `/` (balance, tickets), and
    // the ticket joins their list.
    return openHome().then(() => redeem(code));
  }
  const pending = local.json(KEY.pendingBuy, null);
  if (pending && S.token) {
    // A purchase whose answer never came: the same key again (at most one ticket).
    show('home');
    renderHome();
    return completePurchase(pending);
  }
  return route();
}

init();

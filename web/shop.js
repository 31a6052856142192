// shop.js: the retailer's counter at `/shop` (docs/contract.md "Retail
// tickets"). The shop types its retailer token once (kept in this
// browser), then per paper ticket its serial and one of three actions:
// sell (POST /api/retail/sell), check (validate: changes nothing) and pay
// (a won ticket, once). The server's answer is shown large, in its own
// words (`message`), with the status and the amount.

import { api, ApiError } from './api.js';
import { t, setLang, lang, money, LANGS } from './i18n.js';

const $ = (id) => document.getElementById(id);
const KEY = { token: 'asc.shopToken', lang: 'asc.lang' };
const local = {
  get(k) {
    try { return localStorage.getItem(k); } catch { return null; }
  },
  set(k, v) {
    try { if (v == null) localStorage.removeItem(k); else localStorage.setItem(k, v); } catch { /* private mode: this tab only */ }
  },
};

// `shown`: answers shown so far (the browser tests wait on it).
const S = { token: local.get(KEY.token), busy: false, last: null, shown: 0 };

/** The serial as typed, without spaces, in capitals (the server checks the rest). */
export const cleanSerial = (s) => String(s).toUpperCase().replace(/\s+/g, '');

const dayTime = (ms) => new Intl.DateTimeFormat(lang() === 'fr' ? 'fr-FR' : 'en-GB', { dateStyle: 'long', timeStyle: 'short' }).format(new Date(ms));
const day = (ms) => new Intl.DateTimeFormat(lang() === 'fr' ? 'fr-FR' : 'en-GB', { dateStyle: 'long' }).format(new Date(ms));

// ------------------------------------------------------------ strings and settings

function applyStrings() {
  document.documentElement.lang = lang();
  document.title = t('shop.doc.title');
  for (const e of document.querySelectorAll('[data-i18n]')) e.textContent = t(e.dataset.i18n);
  for (const e of document.querySelectorAll('[data-i18n-label]')) e.setAttribute('aria-label', t(e.dataset.i18nLabel));
  $('lang').setAttribute('lang', LANGS.find((l) => l !== lang()));
  if (S.last) renderAnswer(S.last);
}

function setBusy(b) {
  S.busy = b;
  document.body.dataset.state = b ? 'busy' : 'idle';
  for (const id of ['do-sell', 'do-validate', 'do-pay', 'login-go']) $(id).disabled = b;
}

function showScreen() {
  const logged = !!S.token;
  $('shop-login').hidden = logged;
  $('shop-counter').hidden = !logged;
  $('shop-logout').hidden = !logged;
  document.body.dataset.view = logged ? 'counter' : 'login';
}

// ------------------------------------------------------------ the token

function login(ev) {
  ev.preventDefault();
  const token = $('shop-token').value.trim();
  if (!token) return loginError(t('shop.login.empty'));
  S.token = token;
  local.set(KEY.token, token);
  $('shop-token').value = '';
  $('login-error').hidden = true;
  $('shop-token').removeAttribute('aria-invalid');
  showScreen();
  $('serial').focus();
}

function loginError(text) {
  $('login-error').textContent = text;
  $('login-error').hidden = false;
  $('shop-token').setAttribute('aria-invalid', 'true');
  $('shop-token').focus();
}

/** Forgets the token; with `why`, the login form says why. */
function logout(why) {
  S.token = null;
  local.set(KEY.token, null);
  showScreen();
  if (why) loginError(why);
  else $('shop-token').focus();
}

// ------------------------------------------------------------ the counter

/**
 * What the page shows of one answer:
 * `{action, ok, http, title, message, detail, facts}`; `facts` is the
 * server's answer (serial, status, prize_cents, sold_by, paid_ms, paid_by,
 * claim_until_ms), or null.
 */
function renderAnswer(a) {
  const box = $('answer');
  box.hidden = false;
  box.dataset.action = a.action;
  box.dataset.ok = String(a.ok);
  box.dataset.http = String(a.http);
  const f = a.facts;
  box.dataset.status = f ? f.status : '';
  // ok: done; pay: a winner to pay; error: refused; info: nothing to do.
  const expired = !!f && f.claim_until_ms != null && f.claim_until_ms < Date.now();
  box.dataset.kind = !a.ok ? 'error' : a.replayed ? 'info' : a.action !== 'validate' ? 'ok' : f && f.status === 'won' && !expired ? 'pay' : 'info';
  box.dataset.replayed = String(!!a.replayed);
  $('answer-title').textContent = a.ok ? t(`shop.done.${a.action}`) : t(`shop.refused.${a.action}`);
  // An already paid ticket: said with the date in the page's words (the server writes it in ISO 8601).
  const paidAgain = !!f && f.status === 'paid' && f.paid_ms != null && !(a.ok && a.action === 'pay');
  $('answer-message').textContent = paidAgain
    ? t('shop.msg.paid', { prize: money(f.prize_cents ?? 0), date: dayTime(f.paid_ms), shop: f.paid_by || '?' })
    : typeof a.message === 'function' ? a.message() : a.message;
  $('answer-detail').textContent = a.detail || '';
  $('answer-detail').hidden = !a.detail;
  $('answer-serial').textContent = (f && f.serial) || a.serial;
  const row = (id, on) => { $(`answer-${id}-row`).hidden = !on; };
  row('status', !!f);
  row('prize', !!f && ['won', 'lost', 'paid'].includes(f.status));
  row('sold', !!f && !!f.sold_by);
  row('paid', !!f && f.paid_ms != null);
  row('claim', !!f && f.claim_until_ms != null && f.status === 'won');
  if (!f) return;
  $('answer-status').textContent = t(`shop.status.${f.status}`) === `shop.status.${f.status}` ? f.status : t(`shop.status.${f.status}`);
  $('answer-status').dataset.status = f.status;
  $('answer-prize').textContent = f.prize_cents > 0 ? money(f.prize_cents) : t('shop.prize.none');
  $('answer-prize').dataset.cents = String(f.prize_cents ?? 0);
  $('answer-sold').textContent = f.sold_by || '';
  $('answer-paid').textContent = f.paid_ms != null ? t('shop.paid.text', { date: dayTime(f.paid_ms), shop: f.paid_by || '?' }) : '';
  $('answer-claim').textContent = f.claim_until_ms != null ? day(f.claim_until_ms) : '';
}

function show(a) {
  S.last = a;
  renderAnswer(a);
  $('answer').dataset.n = String(++S.shown);
}

/** A refusal in the counter's words (the server's messages for errors are English). */
function refusalText(action, e) {
  const m = e.message || '';
  if (e.status === 0) return t('shop.err.network');
  if (e.status === 400) return /check the serial/i.test(m) ? t('shop.err.serial') : t('shop.err.other', { message: m });
  if (e.status === 404) return t('shop.err.unknown');
  if (e.status === 403) {
    const other = m.match(/sold by (.+?): it is paid there/i) || m.match(/sold by ([^:;,.]+)/i);
    return other ? t('shop.err.other_shop', { shop: other[1] }) : t('shop.err.not_retailer');
  }
  if (e.status === 409) {
    let g;
    if ((g = m.match(/already sold \(by (.+)\)/i))) return t('shop.err.sold', { shop: g[1] });
    if (/online/i.test(m)) return t('shop.err.online');
    if (/claim deadline/i.test(m)) return t('shop.err.deadline');
    if (/sale .*ended/i.test(m)) return t('shop.err.closed');
    // "ticket X is already paid: Déjà payé (...) le ... par ...", "cannot be paid: Perdant : rien à payer.":
    // the part after the first colon is the counter's French sentence.
    if ((g = m.match(/(?:already paid|cannot be paid): (.+)$/i))) return lang() === 'fr' ? g[1] : m;
  }
  return t('shop.err.other', { message: m });
}

async function run(action) {
  if (S.busy || !S.token) return;
  const serial = cleanSerial($('serial').value);
  const err = $('serial-error');
  if (!serial) {
    err.textContent = t('shop.serial.empty');
    err.hidden = false;
    $('serial').setAttribute('aria-invalid', 'true');
    $('serial').focus();
    return;
  }
  err.hidden = true;
  $('serial').removeAttribute('aria-invalid');
  setBusy(true);
  $('answer').dataset.pending = action;
  try {
    const r = await api.retail(S.token, action, serial);
    // This shop's own sale or payment again: said so, never "pay" twice.
    const message = r.replayed ? () => t(action === 'pay' ? 'shop.again.pay' : 'shop.again.sell') : r.message;
    show({ action, ok: true, http: 200, serial, message, facts: r, replayed: !!r.replayed });
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    if (e.status === 401 || (e.status === 403 && !/sold by/i.test(e.message || ''))) {
      // Not (or no longer) a retailer token of this server: typed again.
      S.last = null;
      $('answer').hidden = true;
      logout(e.status === 401 ? t('shop.err.auth') : t('shop.err.not_retailer'));
      return;
    }
    // In the page's language, also after a switch.
    const refused = { action, ok: false, http: e.status, serial, message: () => refusalText(action, e), detail: null, facts: null };
    // A refused sale or payment: what the ticket is now, from validate (which changes nothing).
    if (action !== 'validate' && (e.status === 409 || e.status === 403)) {
      try {
        const v = await api.retail(S.token, 'validate', serial);
        refused.facts = v;
        if (v.message && v.message !== refusalText(action, e) && v.status !== 'paid') refused.detail = v.message;
      } catch { /* the refusal alone */ }
    }
    show(refused);
  } finally {
    delete $('answer').dataset.pending;
    setBusy(false);
  }
}

// ------------------------------------------------------------ start

function init() {
  setLang(new URLSearchParams(location.search).get('lang') || local.get(KEY.lang) || 'fr');
  applyStrings();
  showScreen();
  $('lang').addEventListener('click', () => {
    local.set(KEY.lang, setLang(LANGS.find((l) => l !== lang())));
    applyStrings();
  });
  $('login-form').addEventListener('submit', login);
  $('shop-logout').addEventListener('click', () => {
    if (!confirm(t('shop.logout.confirm'))) return;
    S.last = null;
    $('answer').hidden = true;
    logout();
  });
  // Enter in the serial field checks the ticket (never sells nor pays).
  $('serial-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    run('validate');
  });
  $('do-sell').addEventListener('click', () => run('sell'));
  $('do-pay').addEventListener('click', () => run('pay'));
  setBusy(false);
  if (S.token) $('serial').focus();
}

init();

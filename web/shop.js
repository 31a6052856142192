// shop.js: the retailer's counter at `/shop` (docs/contract.md "Retail
// tickets", docs/shops.md). The shop types its retailer token once
// (checked with GET /api/retail/me, then kept in this browser; the header
// shows the shop's name), then per paper ticket its serial and one of three
// actions: sell (POST /api/retail/sell), check (validate: changes nothing)
// and pay (a won ticket, once, after a question with the amount to hand
// over). The server's answer is shown large, in its own words (`message`),
// with the status and the amount. The day's report (GET
// /api/retail/report) and a printable receipt for each payment are two
// more screens. The serial can be typed, typed by a shop's barcode
// scanner (a keyboard: the serial then Enter, which checks the ticket), or
// read by the phone's camera ("Scanner": the browser's BarcodeDetector
// when it reads Code 128, else web/code128.js), which only fills the field.

import { api, ApiError } from './api.js';
import { t, tn, setLang, lang, money, LANGS } from './i18n.js';
import { cameraScanner } from './camera.js';
import { decodeImage } from './code128.js';
import { parseSerial } from './serial.js';

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

// The counter's state: the retailer token; `shown`: answers shown so far
// (the browser tests wait on it); `shop`: the signed-in shop's name;
// `view`: counter, report or receipt once signed in; `report`: the report
// shown; `receipt`: the payment whose receipt is shown, and the screen it
// was opened from.
const state = { token: local.get(KEY.token), shop: null, busy: false, last: null, shown: 0, view: 'counter', report: null, receipt: null };

/** The shops' day is Paris's (docs/shops.md): dates and times on the report and receipts are Paris time. */
const ZONE = 'Europe/Paris';

/** The serial as typed, without spaces, in capitals (the server checks the rest). */
export const cleanSerial = (s) => String(s).toUpperCase().replace(/\s+/g, '');

const dayTime = (ms) => new Intl.DateTimeFormat(lang() === 'fr' ? 'fr-FR' : 'en-GB', { dateStyle: 'long', timeStyle: 'short' }).format(new Date(ms));
const day = (ms) => new Intl.DateTimeFormat(lang() === 'fr' ? 'fr-FR' : 'en-GB', { dateStyle: 'long' }).format(new Date(ms));
const parisTime = (ms, opts) => new Intl.DateTimeFormat(lang() === 'fr' ? 'fr-FR' : 'en-GB', { ...opts, timeZone: ZONE }).format(new Date(ms));
/** Today in Paris, `YYYY-MM-DD` (en-CA writes dates that way). */
const parisToday = () => new Intl.DateTimeFormat('en-CA', { timeZone: ZONE, year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date());

/**
 * A payment's receipt reference: the serial without dashes and the
 * payment's instant in base 36 (a ticket is paid once, so it names one
 * payment; the same on the receipt after "Payer" and from the report).
 */
export const receiptRef = (serial, paidMs) => `R-${String(serial).replace(/-/g, '')}-${Number(paidMs).toString(36).toUpperCase()}`;

// ------------------------------------------------------------ strings and settings

function applyStrings() {
  document.documentElement.lang = lang();
  document.title = t('shop.doc.title');
  for (const e of document.querySelectorAll('[data-i18n]')) e.textContent = t(e.dataset.i18n);
  for (const e of document.querySelectorAll('[data-i18n-label]')) e.setAttribute('aria-label', t(e.dataset.i18nLabel));
  $('lang').setAttribute('lang', LANGS.find((l) => l !== lang()));
  if (state.last) renderAnswer(state.last);
  if (state.report) renderReport(state.report);
  if (state.receipt) renderReceipt(state.receipt.pay);
  if ($('pay-dialog').open) renderPayQuestion();
  renderScanTexts();
}

function setBusy(b) {
  state.busy = b;
  document.body.dataset.state = b ? 'busy' : 'idle';
  for (const id of ['do-sell', 'do-validate', 'do-pay', 'login-go', 'pay-confirm', 'report-go']) $(id).disabled = b;
}

function showScreen() {
  const logged = !!state.token;
  const view = logged ? state.view : 'login';
  $('shop-login').hidden = logged;
  $('shop-counter').hidden = view !== 'counter';
  $('shop-report').hidden = view !== 'report';
  $('shop-receipt').hidden = view !== 'receipt';
  $('shop-logout').hidden = !logged;
  $('shop-signed').hidden = !logged || !state.shop;
  $('shop-name').textContent = state.shop || '';
  $('shop-signed').title = state.shop || '';
  document.body.dataset.view = view;
}

function go(view) {
  if (view !== 'counter') closeScanner();
  state.view = view;
  showScreen();
}

// ------------------------------------------------------------ the token

/** Why a retailer token was refused, in the counter's words. */
function tokenRefusal(e) {
  if (e.status === 0) return t('shop.err.network');
  if (e.status === 401) return t('shop.err.auth');
  if (e.status === 403) return t('shop.err.not_retailer');
  return t('shop.err.code', { code: e.code });
}

/** A token is kept only once the server names its shop (GET /api/retail/me). */
async function login(ev) {
  ev.preventDefault();
  if (state.busy) return;
  const token = $('shop-token').value.trim();
  if (!token) return loginError(t('shop.login.empty'));
  setBusy(true);
  try {
    const me = await api.retailMe(token);
    state.token = token;
    state.shop = me.shop;
    state.ceiling = me.payout_ceiling_cents;
    local.set(KEY.token, token);
    $('shop-token').value = '';
    $('login-error').hidden = true;
    $('shop-token').removeAttribute('aria-invalid');
    go('counter');
    $('serial').focus();
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    loginError(tokenRefusal(e));
  } finally {
    setBusy(false);
  }
}

/** A token kept from an earlier visit: its shop's name, or refused (then typed again). */
async function checkKeptToken() {
  try {
    const me = await api.retailMe(state.token);
    state.shop = me.shop;
    state.ceiling = me.payout_ceiling_cents;
    showScreen();
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    // Unreachable server: the token stays; the name comes with the next visit.
    if (e.status === 401 || e.status === 403) logout(tokenRefusal(e));
  }
}

function loginError(text) {
  $('login-error').textContent = text;
  $('login-error').hidden = false;
  $('shop-token').setAttribute('aria-invalid', 'true');
  $('shop-token').focus();
}

/** Forgets the token; with `why`, the login form says why. */
function logout(why) {
  closeScanner();
  state.token = null;
  state.shop = null;
  state.report = null;
  state.receipt = null;
  state.view = 'counter';
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
  // Above this shop's payout ceiling: the operator's payment centre pays it, never the counter.
  const operator = !!f && f.status === 'won' && f.pay_at === 'operator';
  box.dataset.kind = !a.ok ? 'error' : a.replayed ? 'info' : a.action !== 'validate' ? 'ok' : f && f.status === 'won' && !expired && !operator ? 'pay' : 'info';
  box.dataset.payAt = (f && f.pay_at) || '';
  box.dataset.replayed = String(!!a.replayed);
  $('answer-title').textContent = a.ok ? t(`shop.done.${a.action}`) : t(`shop.refused.${a.action}`);
  // An already paid ticket: said with the date in the page's words (the server writes it in ISO 8601).
  const paidAgain = !!f && f.status === 'paid' && f.paid_ms != null && !(a.ok && a.action === 'pay');
  $('answer-message').textContent = paidAgain
    ? t('shop.msg.paid', { prize: money(f.prize_cents ?? 0), date: dayTime(f.paid_ms), shop: f.paid_by || t('shop.payment_centre') })
    : operator && !expired && a.ok ? t('shop.msg.operator', { prize: money(f.prize_cents), ceiling: money(state.ceiling ?? 0) })
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
  // A payment of this shop (just made, or its answer again): its receipt.
  $('answer-receipt').hidden = !(a.ok && a.action === 'pay' && f && f.status === 'paid' && f.paid_ms != null);
  if (!f) return;
  $('answer-status').textContent = t(`shop.status.${f.status}`) === `shop.status.${f.status}` ? f.status : t(`shop.status.${f.status}`);
  $('answer-status').dataset.status = f.status;
  $('answer-prize').textContent = f.prize_cents > 0 ? money(f.prize_cents) : t('shop.prize.none');
  $('answer-prize').dataset.cents = String(f.prize_cents ?? 0);
  $('answer-sold').textContent = f.sold_by || '';
  $('answer-paid').textContent = f.paid_ms != null ? t('shop.paid.text', { date: dayTime(f.paid_ms), shop: f.paid_by || t('shop.payment_centre') }) : '';
  $('answer-claim').textContent = f.claim_until_ms != null ? day(f.claim_until_ms) : '';
}

function show(a) {
  state.last = a;
  renderAnswer(a);
  $('answer').dataset.n = String(++state.shown);
}

/**
 * A refusal in the counter's words, from the server's `code` and
 * `params.reason` (never its English `message`): the same wording in
 * French and English (crates/server/src/error.rs REASONS).
 */
function refusalText(action, e) {
  const p = e.params || {};
  if (e.status === 0) return t('shop.err.network');
  if (e.code === 'bad_request') return t('shop.err.serial');
  switch (p.reason) {
    case 'unknown_serial': return t('shop.err.unknown');
    case 'above_ceiling': return t('shop.err.ceiling', { ceiling: money(p.ceiling_cents ?? state.ceiling ?? 0) });
    case 'other_shop': return t('shop.err.other_shop', { shop: p.shop || '?' });
    case 'already_sold': return t('shop.err.sold', { shop: p.shop || '?' });
    case 'sold_online': return t('shop.err.online');
    case 'claim_deadline': return t('shop.err.deadline');
    case 'sale_ended': return t('shop.err.closed');
    case 'already_paid':
      return t('shop.msg.paid', { prize: money(p.prize_cents ?? 0), date: p.paid_ms != null ? dayTime(p.paid_ms) : '—', shop: p.paid_by || t('shop.payment_centre') });
    case 'not_sold_yet': return t('shop.msg.printed');
    case 'not_played': return t('shop.msg.sold');
    case 'in_play': return t('shop.msg.in_play');
    case 'lost': return t('shop.msg.lost');
    default: break;
  }
  if (e.status === 404) return t('shop.err.unknown');
  if (e.status === 403) return t('shop.err.not_retailer');
  return t('shop.err.code', { code: e.code });
}

/**
 * What a ticket's answer means for the counter, in the page's language,
 * from its facts (status, prize, dates): the server's own `message` is the
 * counter's French sentence, kept for programs.
 */
function answerText(action, f) {
  const prize = money(f.prize_cents ?? 0);
  if (action === 'sell' && f.status === 'sold') return t('shop.msg.sold_now');
  if (action === 'pay' && f.status === 'paid') return t('shop.msg.pay', { prize });
  const expired = f.claim_until_ms != null && f.claim_until_ms < Date.now();
  switch (f.status) {
    case 'printed': return t('shop.msg.printed');
    case 'sold': return t('shop.msg.sold');
    case 'in_play': return t('shop.msg.in_play');
    case 'lost': return t('shop.msg.lost');
    case 'paid': return t('shop.msg.paid', { prize, date: f.paid_ms != null ? dayTime(f.paid_ms) : '—', shop: f.paid_by || t('shop.payment_centre') });
    case 'won':
      if (expired) return t('shop.msg.expired', { prize, date: day(f.claim_until_ms) });
      if (f.pay_at === 'operator') return t('shop.msg.operator', { prize, ceiling: money(state.ceiling ?? 0) });
      return t('shop.msg.won', { prize });
    default: return f.status;
  }
}

/** The serial typed, cleaned; empty: said under the field, and null. */
function typedSerial() {
  const serial = cleanSerial($('serial').value);
  const err = $('serial-error');
  if (!serial) {
    err.textContent = t('shop.serial.empty');
    err.hidden = false;
    $('serial').setAttribute('aria-invalid', 'true');
    $('serial').focus();
    return null;
  }
  err.hidden = true;
  $('serial').removeAttribute('aria-invalid');
  return serial;
}

/** A refused token during work: forgotten, and the sign-in says why. */
function tokenLost(e) {
  state.last = null;
  $('answer').hidden = true;
  logout(tokenRefusal(e));
}

async function run(action, given) {
  if (state.busy || !state.token) return;
  const serial = given || typedSerial();
  if (!serial) return;
  setBusy(true);
  $('answer').dataset.pending = action;
  try {
    const r = await api.retail(state.token, action, serial);
    // This shop's own sale or payment again: said so, never "pay" twice.
    const message = r.replayed ? () => t(action === 'pay' ? 'shop.again.pay' : 'shop.again.sell') : () => answerText(action, r);
    show({ action, ok: true, http: 200, serial, message, facts: r, replayed: !!r.replayed });
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    if (e.status === 401 || (e.status === 403 && !(e.params && e.params.reason))) {
      // Not (or no longer) a retailer token of this server: typed again.
      tokenLost(e);
      return;
    }
    // In the page's language, also after a switch.
    const refused = { action, ok: false, http: e.status, serial, message: () => refusalText(action, e), detail: null, facts: null };
    // A refused sale or payment: what the ticket is now, from validate (which changes nothing).
    if (action !== 'validate' && (e.status === 409 || e.status === 403)) {
      try {
        const v = await api.retail(state.token, 'validate', serial);
        refused.facts = v;
        const said = answerText('validate', v);
        if (said !== refusalText(action, e) && v.status !== 'paid') refused.detail = said;
      } catch { /* the refusal alone */ }
    }
    show(refused);
  } finally {
    delete $('answer').dataset.pending;
    setBusy(false);
    // Still in the field (Enter, a shop's scanner): its text selected, so the next serial typed or scanned replaces it.
    if (document.activeElement === $('serial')) $('serial').select();
  }
}

// ------------------------------------------------------------ the camera

// `note` and `state`: the strings shown under the field and under the
// picture, `[key, params, kind]`, kept to be written again in the other
// language.
const scanTexts = { note: null, state: null };

function renderScanTexts() {
  const note = $('scan-note');
  note.textContent = scanTexts.note ? t(scanTexts.note[0], scanTexts.note[1]) : '';
  note.dataset.kind = scanTexts.note ? scanTexts.note[2] : '';
  $('scanner-state').textContent = scanTexts.state ? t(scanTexts.state[0], scanTexts.state[1]) : '';
}

/** The line under the field: `key` (null clears it), `kind` "ok" or "error". */
function scanNote(key, params = {}, kind = 'ok') {
  scanTexts.note = key ? [key, params, kind] : null;
  renderScanTexts();
}

function scanState(key) {
  scanTexts.state = key ? [key, {}, ''] : null;
  renderScanTexts();
}

/** The line under the picture, for each of the camera's moments. */
const SCAN_STATE_KEYS = { starting: 'shop.scan.starting', looking: 'shop.scan.looking', other: 'shop.scan.not_serial' };

// "Scanner": the rear camera (if the phone has one) in the page, read ten
// times a second until a serial is found (camera.js); its state in the
// body's `data-camera`.
const camera = cameraScanner({
  panel: 'scanner',
  video: 'scanner-video',
  openButton: 'scan-open',
  closeButton: 'scan-close',
  stateHolder: () => document.body,
  format: 'code_128',
  readsPerSecond: 10,
  // At most 1280 pixels across: enough for the barcode's modules, quick to read.
  maxWidth: 1280,
  loadReader: async () => decodeImage,
  // A barcode that is not a serial, or one read wrongly (its check digits): not used.
  accept: parseSerial,
  // A serial read: the field shows it; the shopkeeper chooses what to do.
  found(serial) {
    const field = $('serial');
    field.value = serial;
    $('serial-error').hidden = true;
    field.removeAttribute('aria-invalid');
    scanNote('shop.scan.read', { serial });
    field.focus();
    // Selected: a serial typed or scanned next replaces it.
    field.select();
  },
  // Why the camera did not open, under the field in the counter's words.
  refused(kind) {
    scanNote(`shop.scan.${kind}`, {}, 'error');
    $('serial').focus();
  },
  clear: () => scanNote(null),
  show: (what) => scanState(what ? SCAN_STATE_KEYS[what] : null),
});

/** Stops the camera (its light goes off) and hides the picture. */
const closeScanner = () => camera.close(false);

/**
 * A shop's barcode scanner is a keyboard: it types the serial, then Enter.
 * When the focus is elsewhere on the counter (a button after an answer),
 * the first character it types moves the focus to the field, emptied, so
 * the serial lands there and Enter checks it, instead of pressing the
 * button that had the focus.
 */
function keyToField(ev) {
  if (ev.defaultPrevented || ev.ctrlKey || ev.altKey || ev.metaKey || ev.isComposing) return;
  if (!state.token || state.view !== 'counter' || $('pay-dialog').open) return;
  if (ev.key.length !== 1 || !/^[0-9A-Za-z-]$/.test(ev.key)) return;
  const a = document.activeElement;
  if (a && (a.tagName === 'INPUT' || a.tagName === 'TEXTAREA' || a.tagName === 'SELECT' || a.isContentEditable)) return;
  const field = $('serial');
  field.focus();
  field.select();
}

// ------------------------------------------------------------ "Payer" asks first

/**
 * "Payer": the ticket is checked first (validate changes nothing); a winner
 * to pay opens the question with the amount to hand over, and only its
 * confirmation pays. Anything else goes to the server as before, which
 * pays nothing that is not a winner to pay: a ticket this shop already paid
 * gets its first answer again ("do not pay it a second time"), the rest a
 * refusal in words.
 */
async function askPay() {
  if (state.busy || !state.token) return;
  const serial = typedSerial();
  if (!serial) return;
  setBusy(true);
  let v;
  try {
    v = await api.retail(state.token, 'validate', serial);
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    setBusy(false);
    if (e.status === 401 || e.status === 403) return tokenLost(e);
    // No answer: never pay without the question; a refusal: the payment's own refusal.
    if (e.status === 0) return show({ action: 'pay', ok: false, http: 0, serial, message: () => t('shop.err.network'), facts: null });
    return run('pay', serial);
  }
  setBusy(false);
  const expired = v.claim_until_ms != null && v.claim_until_ms < Date.now();
  if (v.status !== 'won' || expired) return run('pay', serial);
  // Above this shop's ceiling: no question, no payment; where the holder is paid.
  if (v.pay_at === 'operator') return show({ action: 'validate', ok: true, http: 200, serial, message: () => answerText('validate', v), facts: v });
  const d = $('pay-dialog');
  d.dataset.serial = v.serial;
  d.dataset.cents = String(v.prize_cents);
  renderPayQuestion();
  d.showModal();
  $('pay-cancel').focus();
}

function renderPayQuestion() {
  const d = $('pay-dialog');
  const prize = money(Number(d.dataset.cents));
  $('pay-title').textContent = t('shop.pay.ask', { prize });
  $('pay-text').textContent = t('shop.pay.text', { prize, serial: d.dataset.serial });
}

/** Closes the question; `pay`: its serial is paid. */
function answerPay(pay) {
  const d = $('pay-dialog');
  if (!d.open) return;
  const serial = d.dataset.serial;
  d.close();
  d.dataset.answered = pay ? 'confirm' : 'cancel';
  if (pay) run('pay', serial);
  else $('do-pay').focus();
}

// ------------------------------------------------------------ the day's report

async function openReport() {
  go('report');
  if (!$('report-day').value) $('report-day').value = parisToday();
  $('shop-report').focus();
  await loadReport();
}

async function loadReport(ev) {
  if (ev) ev.preventDefault();
  if (state.busy || !state.token) return;
  const dayText = $('report-day').value || parisToday();
  const err = $('report-error');
  err.hidden = true;
  setBusy(true);
  try {
    state.report = await api.retailReport(state.token, dayText);
    renderReport(state.report);
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    if (e.status === 401 || e.status === 403) return tokenLost(e);
    state.report = null;
    $('report-body').hidden = true;
    err.textContent = e.status === 0 ? t('shop.err.network') : e.status === 400 ? t('shop.report.bad_day') : t('shop.err.code', { code: e.code });
    err.hidden = false;
  } finally {
    setBusy(false);
    $('shop-report').dataset.n = String(Number($('shop-report').dataset.n || 0) + 1);
  }
}

function renderReport(r) {
  $('report-body').hidden = false;
  $('shop-report').dataset.day = r.day;
  $('report-sold').textContent = tn('shop.report.tickets', r.sold.count, { amount: money(r.sold.amount_cents) });
  $('report-sold').dataset.cents = String(r.sold.amount_cents);
  $('report-paid').textContent = tn('shop.report.prizes', r.paid.count, { amount: money(r.paid.amount_cents) });
  $('report-paid').dataset.cents = String(r.paid.amount_cents);
  const net = $('report-net');
  net.dataset.cents = String(r.net_cents);
  net.textContent = r.net_cents > 0 ? t('shop.report.owes', { amount: money(r.net_cents) })
    : r.net_cents < 0 ? t('shop.report.owed', { amount: money(-r.net_cents) }) : t('shop.report.even');
  $('report-none').hidden = r.payments.length > 0;
  const list = $('report-payments');
  list.replaceChildren(...r.payments.map((p) => {
    const li = document.createElement('li');
    const what = document.createElement('span');
    what.textContent = `${parisTime(p.paid_ms, { timeStyle: 'short' })} · ${p.serial} · ${money(p.prize_cents)}`;
    const b = document.createElement('button');
    b.type = 'button';
    b.className = 'receipt-open';
    b.dataset.serial = p.serial;
    b.textContent = t('shop.receipt.short');
    b.setAttribute('aria-label', t('shop.receipt.for', { serial: p.serial }));
    b.addEventListener('click', () => openReceipt({ shop: r.shop, ...p }, 'report'));
    li.append(what, b);
    return li;
  }));
}

// ------------------------------------------------------------ a payment's receipt

/** `pay`: `{shop, serial, prize_cents, paid_ms}`; `from`: the screen to go back to. */
function openReceipt(pay, from) {
  state.receipt = { pay, from };
  renderReceipt(pay);
  go('receipt');
  $('shop-receipt').focus();
}

function renderReceipt(p) {
  $('receipt-shop').textContent = p.shop;
  $('receipt-serial').textContent = p.serial;
  $('receipt-amount').textContent = money(p.prize_cents);
  $('receipt-amount').dataset.cents = String(p.prize_cents);
  $('receipt-date').textContent = t('shop.receipt.when', { date: parisTime(p.paid_ms, { dateStyle: 'long', timeStyle: 'medium' }) });
  $('receipt-ref').textContent = receiptRef(p.serial, p.paid_ms);
}

function closeReceipt() {
  const from = state.receipt ? state.receipt.from : 'counter';
  state.receipt = null;
  go(from);
  (from === 'report' ? $('shop-report') : $('answer-receipt')).focus();
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
    state.last = null;
    $('answer').hidden = true;
    logout();
  });
  // Enter in the serial field checks the ticket (never sells nor pays).
  $('serial-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    run('validate');
  });
  $('do-sell').addEventListener('click', () => run('sell'));
  $('do-pay').addEventListener('click', askPay);
  $('pay-confirm').addEventListener('click', () => answerPay(true));
  $('pay-cancel').addEventListener('click', () => answerPay(false));
  // Escape is a cancel: nothing paid.
  $('pay-dialog').addEventListener('cancel', (ev) => { ev.preventDefault(); answerPay(false); });
  $('answer-receipt').addEventListener('click', () => {
    const f = state.last && state.last.facts;
    if (f && f.paid_ms != null) openReceipt({ shop: f.paid_by || state.shop, serial: f.serial, prize_cents: f.prize_cents, paid_ms: f.paid_ms }, 'counter');
  });
  $('open-report').addEventListener('click', openReport);
  // camera.js: "Scanner", "Fermer la caméra" (and Escape), the tab hidden.
  camera.wire();
  // Typing in the field again: the camera's line under it goes.
  $('serial').addEventListener('input', () => scanNote(null));
  document.addEventListener('keydown', keyToField);
  $('report-form').addEventListener('submit', loadReport);
  $('report-back').addEventListener('click', () => { state.report = null; go('counter'); $('serial').focus(); });
  $('receipt-print').addEventListener('click', () => window.print());
  $('receipt-back').addEventListener('click', closeReceipt);
  setBusy(false);
  if (state.token) {
    $('serial').focus();
    checkKeptToken();
  }
}

init();

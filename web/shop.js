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
  get(key) {
    try { return localStorage.getItem(key); } catch { return null; }
  },
  set(key, value) {
    try { if (value == null) localStorage.removeItem(key); else localStorage.setItem(key, value); } catch { /* private mode: this tab only */ }
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
  for (const element of document.querySelectorAll('[data-i18n]')) element.textContent = t(element.dataset.i18n);
  for (const element of document.querySelectorAll('[data-i18n-label]')) element.setAttribute('aria-label', t(element.dataset.i18nLabel));
  $('lang').setAttribute('lang', LANGS.find((l) => l !== lang()));
  if (state.last) renderAnswer(state.last);
  if (state.report) renderReport(state.report);
  if (state.receipt) renderReceipt(state.receipt.pay);
  if ($('pay-dialog').open) renderPayQuestion();
  renderScanTexts();
}

function setBusy(busy) {
  state.busy = busy;
  document.body.dataset.state = busy ? 'busy' : 'idle';
  for (const id of ['do-sell', 'do-validate', 'do-pay', 'login-go', 'pay-confirm', 'report-go']) $(id).disabled = busy;
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
function tokenRefusal(error) {
  if (error.status === 0) return t('shop.err.network');
  if (error.status === 401) return t('shop.err.auth');
  if (error.status === 403) return t('shop.err.not_retailer');
  return t('shop.err.code', { code: error.code });
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
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    loginError(tokenRefusal(error));
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
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    // Unreachable server: the token stays; the name comes with the next visit.
    if (error.status === 401 || error.status === 403) logout(tokenRefusal(error));
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
 * claim_until_ms, expired, pay_at), or null.
 */
function renderAnswer(answer) {
  const box = $('answer');
  box.hidden = false;
  box.dataset.action = answer.action;
  box.dataset.ok = String(answer.ok);
  box.dataset.http = String(answer.http);
  const facts = answer.facts;
  box.dataset.status = facts ? facts.status : '';
  // ok: done; pay: a winner to pay; error: refused; info: nothing to do.
  // The claim deadline passed: the server says it (`expired`), never this terminal's clock.
  const expired = !!facts && !!facts.expired;
  // Above this shop's payout ceiling: the operator's payment centre pays it, never the counter.
  const operator = !!facts && facts.status === 'won' && facts.pay_at === 'operator';
  box.dataset.kind = !answer.ok ? 'error' : answer.replayed ? 'info' : answer.action !== 'validate' ? 'ok' : facts && facts.status === 'won' && !expired && !operator ? 'pay' : 'info';
  box.dataset.payAt = (facts && facts.pay_at) || '';
  box.dataset.replayed = String(!!answer.replayed);
  $('answer-title').textContent = answer.ok ? t(`shop.done.${answer.action}`) : t(`shop.refused.${answer.action}`);
  // An already paid ticket: said with the date in the page's words (the server writes it in ISO 8601).
  const paidAgain = !!facts && facts.status === 'paid' && facts.paid_ms != null && !(answer.ok && answer.action === 'pay');
  $('answer-message').textContent = paidAgain
    ? t('shop.msg.paid', { prize: money(facts.prize_cents ?? 0), date: dayTime(facts.paid_ms), shop: facts.paid_by || t('shop.payment_centre') })
    : operator && !expired && answer.ok ? t('shop.msg.operator', { prize: money(facts.prize_cents), ceiling: money(state.ceiling ?? 0) })
      : typeof answer.message === 'function' ? answer.message() : answer.message;
  $('answer-detail').textContent = answer.detail || '';
  $('answer-detail').hidden = !answer.detail;
  $('answer-serial').textContent = (facts && facts.serial) || answer.serial;
  const row = (id, on) => { $(`answer-${id}-row`).hidden = !on; };
  row('status', !!facts);
  row('prize', !!facts && ['won', 'lost', 'paid'].includes(facts.status));
  row('sold', !!facts && !!facts.sold_by);
  row('paid', !!facts && facts.paid_ms != null);
  row('claim', !!facts && facts.claim_until_ms != null && facts.status === 'won');
  // A payment of this shop (just made, or its answer again): its receipt.
  $('answer-receipt').hidden = !(answer.ok && answer.action === 'pay' && facts && facts.status === 'paid' && facts.paid_ms != null);
  if (!facts) return;
  $('answer-status').textContent = t(`shop.status.${facts.status}`) === `shop.status.${facts.status}` ? facts.status : t(`shop.status.${facts.status}`);
  $('answer-status').dataset.status = facts.status;
  $('answer-prize').textContent = facts.prize_cents > 0 ? money(facts.prize_cents) : t('shop.prize.none');
  $('answer-prize').dataset.cents = String(facts.prize_cents ?? 0);
  $('answer-sold').textContent = facts.sold_by || '';
  $('answer-paid').textContent = facts.paid_ms != null ? t('shop.paid.text', { date: dayTime(facts.paid_ms), shop: facts.paid_by || t('shop.payment_centre') }) : '';
  $('answer-claim').textContent = facts.claim_until_ms != null ? day(facts.claim_until_ms) : '';
}

function show(answer) {
  state.last = answer;
  renderAnswer(answer);
  $('answer').dataset.n = String(++state.shown);
}

/**
 * A refusal in the counter's words, from the server's `code` and
 * `params.reason` (never its English `message`): the same wording in
 * French and English (crates/server/src/error.rs REASONS).
 */
function refusalText(action, error) {
  const params = error.params || {};
  if (error.status === 0) return t('shop.err.network');
  if (error.code === 'bad_request') return t('shop.err.serial');
  switch (params.reason) {
    case 'unknown_serial': return t('shop.err.unknown');
    case 'above_ceiling': return t('shop.err.ceiling', { ceiling: money(params.ceiling_cents ?? state.ceiling ?? 0) });
    case 'other_shop': return t('shop.err.other_shop', { shop: params.shop || '?' });
    case 'already_sold': return t('shop.err.sold', { shop: params.shop || '?' });
    case 'sold_online': return t('shop.err.online');
    case 'claim_deadline': return t('shop.err.deadline');
    case 'sale_ended': return t('shop.err.closed');
    case 'already_paid':
      return t('shop.msg.paid', { prize: money(params.prize_cents ?? 0), date: params.paid_ms != null ? dayTime(params.paid_ms) : '—', shop: params.paid_by || t('shop.payment_centre') });
    case 'not_sold_yet': return t('shop.msg.printed');
    case 'not_played': return t('shop.msg.sold');
    case 'in_play': return t('shop.msg.in_play');
    case 'lost': return t('shop.msg.lost');
    default: break;
  }
  if (error.status === 404) return t('shop.err.unknown');
  if (error.status === 403) return t('shop.err.not_retailer');
  return t('shop.err.code', { code: error.code });
}

/**
 * What a ticket's answer means for the counter, in the page's language,
 * from its facts (status, prize, dates): the server's own `message` is the
 * counter's French sentence, kept for programs.
 */
function answerText(action, facts) {
  const prize = money(facts.prize_cents ?? 0);
  if (action === 'sell' && facts.status === 'sold') return t('shop.msg.sold_now');
  if (action === 'pay' && facts.status === 'paid') return t('shop.msg.pay', { prize });
  const expired = !!facts.expired;
  switch (facts.status) {
    case 'printed': return t('shop.msg.printed');
    case 'sold': return t('shop.msg.sold');
    case 'in_play': return t('shop.msg.in_play');
    case 'lost': return t('shop.msg.lost');
    case 'paid': return t('shop.msg.paid', { prize, date: facts.paid_ms != null ? dayTime(facts.paid_ms) : '—', shop: facts.paid_by || t('shop.payment_centre') });
    case 'won':
      if (expired) return t('shop.msg.expired', { prize, date: day(facts.claim_until_ms) });
      if (facts.pay_at === 'operator') return t('shop.msg.operator', { prize, ceiling: money(state.ceiling ?? 0) });
      return t('shop.msg.won', { prize });
    default: return facts.status;
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
function tokenLost(error) {
  state.last = null;
  $('answer').hidden = true;
  logout(tokenRefusal(error));
}

async function run(action, given) {
  if (state.busy || !state.token) return;
  const serial = given || typedSerial();
  if (!serial) return;
  setBusy(true);
  $('answer').dataset.pending = action;
  try {
    const facts = await api.retail(state.token, action, serial);
    // This shop's own sale or payment again: said so, never "pay" twice.
    const message = facts.replayed ? () => t(action === 'pay' ? 'shop.again.pay' : 'shop.again.sell') : () => answerText(action, facts);
    show({ action, ok: true, http: 200, serial, message, facts: facts, replayed: !!facts.replayed });
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    if (error.status === 401 || (error.status === 403 && !(error.params && error.params.reason))) {
      // Not (or no longer) a retailer token of this server: typed again.
      tokenLost(error);
      return;
    }
    // In the page's language, also after a switch.
    const refused = { action, ok: false, http: error.status, serial, message: () => refusalText(action, error), detail: null, facts: null };
    // A refused sale or payment: what the ticket is now, from validate (which changes nothing).
    if (action !== 'validate' && (error.status === 409 || error.status === 403)) {
      try {
        const current = await api.retail(state.token, 'validate', serial);
        refused.facts = current;
        const currentText = answerText('validate', current);
        if (currentText !== refusalText(action, error) && current.status !== 'paid') refused.detail = currentText;
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
  const focused = document.activeElement;
  if (focused && (focused.tagName === 'INPUT' || focused.tagName === 'TEXTAREA' || focused.tagName === 'SELECT' || focused.isContentEditable)) return;
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
  let facts;
  try {
    facts = await api.retail(state.token, 'validate', serial);
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    setBusy(false);
    if (error.status === 401 || error.status === 403) return tokenLost(error);
    // No answer: never pay without the question; a refusal: the payment's own refusal.
    if (error.status === 0) return show({ action: 'pay', ok: false, http: 0, serial, message: () => t('shop.err.network'), facts: null });
    return run('pay', serial);
  }
  setBusy(false);
  if (facts.status !== 'won' || facts.expired) return run('pay', serial);
  // Above this shop's ceiling: no question, no payment; where the holder is paid.
  if (facts.pay_at === 'operator') return show({ action: 'validate', ok: true, http: 200, serial, message: () => answerText('validate', facts), facts: facts });
  const dialog = $('pay-dialog');
  dialog.dataset.serial = facts.serial;
  dialog.dataset.cents = String(facts.prize_cents);
  renderPayQuestion();
  dialog.showModal();
  $('pay-cancel').focus();
}

function renderPayQuestion() {
  const dialog = $('pay-dialog');
  const prize = money(Number(dialog.dataset.cents));
  $('pay-title').textContent = t('shop.pay.ask', { prize });
  $('pay-text').textContent = t('shop.pay.text', { prize, serial: dialog.dataset.serial });
}

/** Closes the question; `pay`: its serial is paid. */
function answerPay(pay) {
  const dialog = $('pay-dialog');
  if (!dialog.open) return;
  const serial = dialog.dataset.serial;
  dialog.close();
  dialog.dataset.answered = pay ? 'confirm' : 'cancel';
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
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    if (error.status === 401 || error.status === 403) return tokenLost(error);
    state.report = null;
    $('report-body').hidden = true;
    err.textContent = error.status === 0 ? t('shop.err.network') : error.status === 400 ? t('shop.report.bad_day') : t('shop.err.code', { code: error.code });
    err.hidden = false;
  } finally {
    setBusy(false);
    $('shop-report').dataset.n = String(Number($('shop-report').dataset.n || 0) + 1);
  }
}

function renderReport(report) {
  $('report-body').hidden = false;
  $('shop-report').dataset.day = report.day;
  $('report-sold').textContent = tn('shop.report.tickets', report.sold.count, { amount: money(report.sold.amount_cents) });
  $('report-sold').dataset.cents = String(report.sold.amount_cents);
  $('report-paid').textContent = tn('shop.report.prizes', report.paid.count, { amount: money(report.paid.amount_cents) });
  $('report-paid').dataset.cents = String(report.paid.amount_cents);
  const net = $('report-net');
  net.dataset.cents = String(report.net_cents);
  net.textContent = report.net_cents > 0 ? t('shop.report.owes', { amount: money(report.net_cents) })
    : report.net_cents < 0 ? t('shop.report.owed', { amount: money(-report.net_cents) }) : t('shop.report.even');
  $('report-none').hidden = report.payments.length > 0;
  const list = $('report-payments');
  list.replaceChildren(...report.payments.map((payment) => {
    const li = document.createElement('li');
    const what = document.createElement('span');
    what.textContent = `${parisTime(payment.paid_ms, { timeStyle: 'short' })} · ${payment.serial} · ${money(payment.prize_cents)}`;
    const button = document.createElement('button');
    button.type = 'button';
    button.className = 'receipt-open';
    button.dataset.serial = payment.serial;
    button.textContent = t('shop.receipt.short');
    button.setAttribute('aria-label', t('shop.receipt.for', { serial: payment.serial }));
    button.addEventListener('click', () => openReceipt({ shop: report.shop, ...payment }, 'report'));
    li.append(what, button);
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

function renderReceipt(payment) {
  $('receipt-shop').textContent = payment.shop;
  $('receipt-serial').textContent = payment.serial;
  $('receipt-amount').textContent = money(payment.prize_cents);
  $('receipt-amount').dataset.cents = String(payment.prize_cents);
  $('receipt-date').textContent = t('shop.receipt.when', { date: parisTime(payment.paid_ms, { dateStyle: 'long', timeStyle: 'medium' }) });
  $('receipt-ref').textContent = receiptRef(payment.serial, payment.paid_ms);
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
    const facts = state.last && state.last.facts;
    if (facts && facts.paid_ms != null) openReceipt({ shop: facts.paid_by || state.shop, serial: facts.serial, prize_cents: facts.prize_cents, paid_ms: facts.paid_ms }, 'counter');
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

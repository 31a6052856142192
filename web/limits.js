// limits.js: responsible play (docs/player-api.md).
//
// - "Interdit aux mineurs": the first visit asks for an 18+ confirmation
//   (a modal dialog over an opaque backdrop: nothing of the page shows or
//   can be used until it is answered), remembered in this browser; "Non"
//   leads away to a page that says the game is forbidden to minors. Not in
//   the operator's mode (operator.js): the operator has verified its
//   player's age.
// - Before it refuses: the lobby shows a self-exclusion and its end, a
//   limit reached, or (décret 2010-518, art. 16) asks a new player for their
//   limit on stakes over seven days before the first purchase; the buy
//   button shows only when a purchase can pass (`lobbyLimits`). The server
//   decides it: the limits' `purchase` is the verdict of the purchase's own
//   check, with the refusal it would get (its code and params); the page
//   words it and decides nothing (no price, no clock).
// - "Mes limites" (#/limites): tickets per day and stakes per week, set by
//   the player and checked by the server in the purchase's transaction
//   (GET/PUT /api/me/limits); lowering applies at once, raising after the
//   cooling-off (the pending change and its date are shown), with what was
//   used in the rolling day and week, and a warning when a new limit is
//   already passed; a self-exclusion from 24 hours to 12 months (POST
//   /api/me/self-exclusion), confirmed first, never shortened; the reminder
//   of time played (off, 30 or 60 minutes, with "continue" and "stop"); the
//   "bilan de jeu" per day, week and month (GET /api/me/statement).
// - A purchase the server refuses (403 `limit_reached`, `limit_required`,
//   `self_excluded`) is worded from its code and params (dom.js
//   errorText), with a link to the limits.
// - A self-exclusion outlives the account on this device: its end, as the
//   server says it (the limits, a refusal), is kept in localStorage
//   (state.js `keepExclusion`), and until then the welcome offers neither a
//   new account nor a demo (home.js), even after a logout or a closure.

import { request, ApiError, net } from './api.js';
import { t, lang, money } from './i18n.js';
import { keepExclusion } from './state.js';

/** `key.one` or `key.other` by the page's language's plural rules, `{n}` filled. */
const tn = (key, count, params = {}) =>
  t(`${key}.${new Intl.PluralRules(lang() === 'fr' ? 'fr-FR' : 'en-GB').select(count) === 'one' ? 'one' : 'other'}`, { n: count, ...params });

const $ = (id) => document.getElementById(id);
/** The page's state and app.js's helpers (show, setBusy, errorText, el...): set by app.js (`initLimits`). */
let app = null;

/** Limits as the server says them: a self-exclusion's end is kept on this device (state.js). */
const noted = (limits) => {
  keepExclusion(limits && limits.excluded_until_ms);
  return limits;
};

export const limitsApi = {
  get: (token) => request('GET', '/api/me/limits', { token, retry: true }).then(noted),
  put: (token, body) => request('PUT', '/api/me/limits', { token, body }).then(noted),
  exclude: (token, days) => request('POST', '/api/me/self-exclusion', { token, body: { days } }).then(noted),
  statement: (token, sinceMs) =>
    request('GET', `/api/me/statement${sinceMs != null ? `?since_ms=${Math.floor(sinceMs)}` : ''}`, { token, retry: true }),
};

/** A self-exclusion lasts from 24 hours to 12 months. */
export const EXCLUSION_DAYS = [1, 7, 30, 90, 180, 365];
/** "24 heures", "7 jours", "12 mois". */
const exclusionLabel = (d) => (d === 1 ? t('limits.exclude.hours') : d === 365 ? t('limits.exclude.months') : t('limits.exclude.days', { n: d }));

// ------------------------------------------------------------ 18+ on entry

const ADULT_KEY = 'asc.adult';

/** The first visit: "Interdit aux mineurs", confirmed once per browser. */
function ageGate() {
  const { el, local } = app;
  if (local.get(ADULT_KEY) === '1' || (app.operatorMode && app.operatorMode())) return;
  const gate = el('dialog', { id: 'age-gate', class: 'dialog age-gate', 'aria-labelledby': 'age-title', 'aria-describedby': 'age-text' },
    el('p', { class: 'age-badge', 'aria-hidden': 'true', text: '18+' }),
    el('h2', { id: 'age-title', text: t('age.title') }),
    el('p', { id: 'age-text', text: t('age.text') }),
    el('p', { id: 'age-refused', class: 'field-error', role: 'alert', hidden: true, text: t('age.refused') }),
    el('div', { class: 'actions' },
      el('button', { type: 'button', class: 'primary', id: 'age-yes', text: t('age.yes') }),
      el('button', { type: 'button', id: 'age-no', text: t('age.no') })),
    el('p', { class: 'hint', text: t('rg.risks') }));
  document.body.append(gate);
  // Escape does not get past the question.
  gate.addEventListener('cancel', (ev) => ev.preventDefault());
  $('age-yes').addEventListener('click', () => {
    local.set(ADULT_KEY, '1');
    gate.close();
    gate.remove();
    $('main').focus();
  });
  // "Non": the page goes away, replaced by a page that says why (nothing of
  // the game stays behind it); the question comes back on the next visit.
  $('age-no').addEventListener('click', () => {
    gate.close();
    gate.remove();
    leaveMinor();
  });
  gate.showModal();
  $('age-yes').focus();
}

/** The page for someone who said they are under 18: the game is gone from it. */
function leaveMinor() {
  const { el } = app;
  document.body.dataset.minor = 'true';
  for (const id of ['main', 'footer']) $(id).hidden = true;
  document.querySelector('header.bar').hidden = true;
  $('minor-page')?.remove();
  const page = el('main', { id: 'minor-page', class: 'minor-page', tabindex: '-1', 'aria-labelledby': 'minor-title' },
    el('p', { class: 'age-badge', 'aria-hidden': 'true', text: '18+' }),
    el('h1', { id: 'minor-title', text: t('age.minor.title') }),
    el('p', { id: 'age-refused', text: t('age.refused') }),
    el('p', { text: t('age.minor.text') }),
    el('p', {}, el('a', { class: 'button primary', id: 'minor-leave', href: 'https://www.joueurs-info-service.fr/', rel: 'noopener noreferrer', text: t('age.minor.leave') })),
    el('p', {}, el('button', { type: 'button', class: 'link', id: 'minor-again', text: t('age.minor.again') })));
  document.body.prepend(page);
  $('minor-again').addEventListener('click', () => {
    page.remove();
    delete document.body.dataset.minor;
    for (const id of ['main', 'footer']) $(id).hidden = false;
    document.querySelector('header.bar').hidden = false;
    ageGate();
  });
  page.focus();
}

// ------------------------------------------------------------ a refused purchase

/**
 * A purchase refused by the player's own limits or self-exclusion: the
 * server's message, plainly, with a link to the limits. True when `error` was
 * one (the caller shows other errors).
 */
export function showPurchaseRefusal(error) {
  if (!(error instanceof ApiError) || error.status !== 403 || !['limit_reached', 'limit_required', 'self_excluded'].includes(error.code)) return false;
  const { el } = app;
  app.showAlert(app.errorText(error));
  const alert = $('alert');
  alert.dataset.reason = error.code;
  alert.append(' ', el('a', { href: '#/limites', text: t('limits.refused.link') }));
  // What the lobby shows now: the limit, the exclusion, or the stake limit to choose.
  lobbyLimits();
  return true;
}

// ------------------------------------------------------------ the lobby, before a refusal

/** Whether the player paused their play in this tab (the reminder's "stop"). */
const PAUSED_KEY = 'asc.paused';
const session = {
  get(key) { try { return sessionStorage.getItem(key); } catch { return null; } },
  set(key, value) { try { if (value == null) sessionStorage.removeItem(key); else sessionStorage.setItem(key, value); } catch { /* private mode */ } },
};

/**
 * The lobby's responsible-play panel (#rg-lobby), from GET /api/me/limits:
 * a self-exclusion and its end, a limit reached, the stake limit a new
 * player chooses before buying, or a pause the player chose; the buy form
 * shows only when none of these holds. Also a line of the limits in force.
 */
export async function lobbyLimits() {
  const { state } = app;
  const box = $('rg-lobby');
  if (!box) return;
  if (!state.token || (app.operatorMode && app.operatorMode())) {
    box.hidden = true;
    $('buy-form').hidden = false;
    return;
  }
  let limits;
  try {
    limits = await limitsApi.get(state.token);
  } catch {
    // The purchase says the refusal if there is one.
    box.hidden = true;
    $('buy-form').hidden = false;
    return;
  }
  renderLobbyLimits(limits);
}

function renderLobbyLimits(limits) {
  const { el } = app;
  const box = $('rg-lobby');
  // The server's verdict on a purchase now, with the refusal it would get (its code and params): shown, never decided here.
  const refusal = limits.purchase && limits.purchase.refusal;
  const params = (refusal && refusal.params) || {};
  box.replaceChildren();
  box.removeAttribute('data-state');
  let block = null;
  if (refusal && refusal.error === 'self_excluded') {
    block = 'excluded';
    box.append(el('p', { id: 'rg-lobby-text', text: t('lobby.rg.excluded', { date: app.dayTime(params.until_ms) }) }));
  } else if (session.get(PAUSED_KEY) === '1') {
    block = 'paused';
    box.append(el('p', { id: 'rg-lobby-text', text: t('lobby.rg.paused') }),
      el('button', { type: 'button', id: 'rg-resume', text: t('lobby.rg.resume'), onclick: () => { session.set(PAUSED_KEY, null); startReminder(true); renderLobbyLimits(limits); $('buy')?.focus(); } }));
  } else if (refusal && refusal.error === 'limit_required') {
    block = 'required';
    const form = el('form', { id: 'rg-required-form', class: 'stack', novalidate: true },
      el('h3', { id: 'rg-required-title', text: t('lobby.rg.required.title') }),
      el('p', { id: 'rg-lobby-text', text: t('lobby.rg.required.text', { hours: limits.cooling_off_hours }) }),
      el('div', { class: 'field' },
        el('label', { for: 'rg-required-week', text: t('limits.week.label') }),
        el('input', { id: 'rg-required-week', inputmode: 'decimal', autocomplete: 'off', required: true, 'aria-describedby': 'rg-required-week-hint rg-required-week-error' }),
        el('p', { class: 'hint', id: 'rg-required-week-hint', text: t('limits.week.hint.required') }),
        el('p', { class: 'field-error', id: 'rg-required-week-error', role: 'alert', hidden: true })),
      el('button', { type: 'submit', class: 'primary', id: 'rg-required-save', text: t('lobby.rg.required.save') }));
    form.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      const week = parseEuros($('rg-required-week').value);
      if (week == null || Number.isNaN(week)) return setError('rg-required-week', t('limits.week.required'));
      setError('rg-required-week', '');
      app.setBusy(true);
      try {
        const after = await limitsApi.put(app.state.token, { tickets_per_day: limits.tickets_per_day, spend_per_week_cents: week });
        renderLobbyLimits(after);
        $('buy')?.focus();
      } catch (error) {
        if (error instanceof ApiError && error.status === 401) app.forgetToken();
        else setError('rg-required-week', app.errorText(error));
      } finally {
        app.setBusy(false);
      }
    });
    box.append(form);
  } else if (refusal && params.reason === 'tickets_per_day') {
    block = 'limit';
    box.append(el('p', { id: 'rg-lobby-text', text: tn('lobby.rg.day', params.used, { max: params.max }) }));
  } else if (refusal && params.reason === 'spend_per_week') {
    block = 'limit';
    box.append(el('p', { id: 'rg-lobby-text', text: t('lobby.rg.week', { n: money(params.used_cents), max: money(params.max_cents), price: money(params.price_cents) }) }));
  }
  const usage = [
    limits.tickets_per_day != null ? tn('lobby.rg.usage.day', limits.used.tickets_today, { max: limits.tickets_per_day }) : null,
    limits.spend_per_week_cents != null ? t('lobby.rg.usage.week', { n: money(limits.used.spent_week_cents), max: money(limits.spend_per_week_cents) }) : null,
  ].filter(Boolean);
  if (!block && usage.length) box.append(el('p', { class: 'hint', id: 'rg-lobby-usage', text: t('lobby.rg.usage', { what: usage.join(' · ') }) }));
  if (block !== 'required') box.append(el('p', {}, el('a', { href: '#/limites', id: 'rg-lobby-link', text: t('lobby.rg.link') })));
  box.dataset.state = block || 'ok';
  box.classList.toggle('blocked', !!block);
  box.hidden = false;
  $('buy-form').hidden = !!block;
}

// ------------------------------------------------------------ the reminder of time played

const REMINDER_KEY = 'asc.reminder';
/** The reminder's choices, in minutes (0: never). */
export const REMINDER_MINUTES = [0, 30, 60];
/** Where this tab's play began and when it last reminded (unix ms, sessionStorage). */
const START_KEY = 'asc.playStart';
const REMINDED_KEY = 'asc.reminded';
let reminderTimer = null;

const reminderMinutes = () => {
  const minutes = Number(app.local.get(REMINDER_KEY) ?? 60);
  return REMINDER_MINUTES.includes(minutes) ? minutes : 60;
};

/** Starts (or starts again, `fresh`) the clock of this tab's play. */
function startReminder(fresh = false) {
  const now = String(Date.now());
  if (fresh || !session.get(START_KEY)) {
    session.set(START_KEY, now);
    session.set(REMINDED_KEY, now);
  }
  if (!reminderTimer) {
    reminderTimer = setInterval(checkReminder, 10_000);
    window.addEventListener('focus', checkReminder);
    document.addEventListener('visibilitychange', checkReminder);
  }
}

/** "1 h 05", "45 min". */
function durationText(ms) {
  const minutes = Math.max(1, Math.floor(ms / 60000));
  return minutes < 60 ? t('duration.min', { n: minutes }) : t('duration.h', { h: Math.floor(minutes / 60), m: String(minutes % 60).padStart(2, '0') });
}

/** The reminder is due: the time played and the net result since, with "continue" and "stop". */
export async function checkReminder() {
  const { state, el } = app;
  const every = reminderMinutes();
  if (!state.token || !every || (app.operatorMode && app.operatorMode()) || $('reminder-dialog') || document.body.dataset.minor) return;
  const start = Number(session.get(START_KEY));
  const last = Number(session.get(REMINDED_KEY) || start);
  if (!start || Date.now() - last < every * 60000) return;
  session.set(REMINDED_KEY, String(Date.now()));
  let since = null;
  try {
    since = (await limitsApi.statement(state.token, Math.max(start, Date.now() - 30 * 86400000))).since;
  } catch { /* the time alone */ }
  if ($('reminder-dialog')) return;
  const dlg = el('dialog', { id: 'reminder-dialog', class: 'dialog', 'aria-labelledby': 'reminder-title', 'aria-describedby': 'reminder-text' },
    el('h2', { id: 'reminder-title', text: t('reminder.title') }),
    el('p', { id: 'reminder-text', text: t('reminder.text', { duration: durationText(Date.now() - start) }) }),
    since ? el('p', { id: 'reminder-result', 'data-net': String(since.net_cents), text: t('reminder.result', { stakes: money(since.stakes_cents), winnings: money(since.winnings_cents), net: money(since.net_cents) }) }) : null,
    el('div', { class: 'actions' },
      el('button', { type: 'button', class: 'primary', id: 'reminder-continue', text: t('reminder.continue') }),
      el('button', { type: 'button', id: 'reminder-stop', text: t('reminder.stop') })));
  document.body.append(dlg);
  const close = () => { dlg.close(); dlg.remove(); };
  dlg.addEventListener('cancel', (ev) => ev.preventDefault());
  $('reminder-continue').addEventListener('click', () => { session.set(REMINDED_KEY, String(Date.now())); close(); });
  $('reminder-stop').addEventListener('click', () => {
    close();
    session.set(PAUSED_KEY, '1');
    if (location.hash && location.hash !== '#') location.hash = '';
    else app.openHome();
  });
  dlg.showModal();
  $('reminder-continue').focus();
}

// ------------------------------------------------------------ the statement ("bilan de jeu")

const parisDay = (ms, opts) => new Intl.DateTimeFormat(lang() === 'fr' ? 'fr-FR' : 'en-GB', { timeZone: 'Europe/Paris', ...opts }).format(new Date(ms));

function statementSection(statement) {
  const { el } = app;
  const table = (kind, rows, label) => el('table', { class: 'statement', id: `statement-${kind}` },
    el('caption', { text: t(`statement.${kind}`) }),
    el('thead', {}, el('tr', {}, ...['period', 'stakes', 'winnings', 'net'].map((c) => el('th', { scope: 'col', text: t(`statement.col.${c}`) })))),
    el('tbody', {}, ...rows.map((period, i) => el('tr', { 'data-label': period.label },
      el('th', { scope: 'row', text: label(period, i) }),
      el('td', { 'data-cents': String(period.stakes_cents), text: money(period.stakes_cents) }),
      el('td', { 'data-cents': String(period.winnings_cents), text: money(period.winnings_cents) }),
      el('td', { class: period.net_cents < 0 ? 'net minus' : 'net', 'data-cents': String(period.net_cents), text: money(period.net_cents) })))));
  return el('section', { id: 'statement', 'aria-labelledby': 'statement-title' },
    el('h2', { id: 'statement-title', text: t('statement.title') }),
    el('p', { class: 'hint', text: t('statement.lead') }),
    table('days', statement.days, (p, i) => (i === 0 ? t('statement.today') : parisDay(p.from_ms, { weekday: 'short', day: 'numeric', month: 'short' }))),
    table('weeks', statement.weeks, (p) => t('statement.week', { date: parisDay(p.from_ms, { day: 'numeric', month: 'long' }) })),
    table('months', statement.months, (p) => parisDay(p.from_ms, { month: 'long', year: 'numeric' })));
}

function reminderForm() {
  const { el, local } = app;
  const now = reminderMinutes();
  const form = el('form', { id: 'reminder-form', class: 'stack', novalidate: true, 'aria-labelledby': 'reminder-form-title' },
    el('h2', { id: 'reminder-form-title', text: t('reminder.title') }),
    el('fieldset', { class: 'choices' },
      el('legend', { text: t('reminder.legend') }),
      ...REMINDER_MINUTES.map((minutes) => el('label', { class: 'choice' },
        el('input', { type: 'radio', name: 'reminder', value: String(minutes), id: `reminder-${minutes}`, checked: minutes === now }),
        ' ', minutes === 0 ? t('reminder.off') : t('reminder.min', { n: minutes })))),
    el('p', { id: 'reminder-done', class: 'done', role: 'status', hidden: true }));
  form.addEventListener('change', () => {
    const minutes = (form.querySelector('input[name="reminder"]:checked') || {}).value;
    local.set(REMINDER_KEY, minutes);
    session.set(REMINDED_KEY, String(Date.now()));
    $('reminder-done').textContent = t('reminder.saved');
    $('reminder-done').hidden = false;
  });
  return form;
}

// ------------------------------------------------------------ Mes limites (#/limites)

// What "Mes limites" shows: the limits and the statement as the server
// said them, the error of their loading, and the lines said after a change.
let limitsScreen = { limits: null, statement: null, error: null, done: null, warn: null };

async function openLimits() {
  const { state } = app;
  app.show('limits');
  app.setBusy(true);
  limitsScreen = { limits: null, statement: null, error: null, done: null, warn: null };
  // Nothing of an earlier visit stays on screen while the limits load.
  $('limits-body').replaceChildren();
  if (state.token) {
    try {
      [limitsScreen.limits, limitsScreen.statement] = await Promise.all([limitsApi.get(state.token), limitsApi.statement(state.token).catch(() => null)]);
    } catch (error) {
      if (error instanceof ApiError && error.status === 401) app.forgetToken();
      else limitsScreen.error = error;
    }
  }
  renderLimits();
  app.setBusy(false);
  $('limits-title').focus();
}

const euros = (cents) => (cents == null ? '' : String(cents / 100).replace('.', ','));

/** "30", "30,5", "30.50" euros into cents; '' is no limit (null); NaN when unreadable. */
export function parseEuros(text) {
  const amount = String(text).trim().replace(/\s|€/g, '').replace(',', '.');
  if (amount === '') return null;
  if (!/^\d{1,7}(\.\d{1,2})?$/.test(amount)) return NaN;
  return Math.round(Number(amount) * 100);
}

function renderLimits() {
  const { state, el } = app;
  const body = $('limits-body');
  body.replaceChildren();
  body.append(el('p', { class: 'lead', text: t('limits.lead') }));
  if (!state.token) {
    body.append(el('p', { text: t('limits.out') }), el('p', {}, el('a', { class: 'button primary', href: '#', text: t('account.out.link') })));
    return;
  }
  if (limitsScreen.error) {
    body.append(el('p', { class: 'field-error', role: 'alert', text: app.errorText(limitsScreen.error) }));
    return;
  }
  const limits = limitsScreen.limits;
  if (!limits) return;
  const now = Date.now();
  const excluded = limits.excluded_until_ms != null && limits.excluded_until_ms > now;

  if (excluded) {
    body.append(el('p', { class: 'excluded', id: 'limits-excluded', role: 'status', text: t('limits.excluded', { date: app.dayTime(limits.excluded_until_ms) }) }));
  }

  // What was used in the rolling windows.
  const perDay = limits.tickets_per_day;
  const perWeek = limits.spend_per_week_cents;
  body.append(el('section', { 'aria-labelledby': 'limits-used-title' },
    el('h2', { id: 'limits-used-title', text: t('limits.used.title') }),
    el('dl', { class: 'facts usage' },
      el('div', {}, el('dt', { text: t('limits.used.day') }),
        el('dd', { id: 'used-day', 'data-used': String(limits.used.tickets_today) }, perDay == null ? tn('limits.used.tickets', limits.used.tickets_today) : tn('limits.used.tickets.of', limits.used.tickets_today, { max: perDay }))),
      el('div', {}, el('dt', { text: t('limits.used.week') }),
        el('dd', { id: 'used-week', 'data-used': String(limits.used.spent_week_cents) }, perWeek == null ? money(limits.used.spent_week_cents) : t('limits.used.spent.of', { n: money(limits.used.spent_week_cents), max: money(perWeek) }))))));

  // The limits, and what is coming.
  const form = el('form', { id: 'limits-form', class: 'stack', novalidate: true, 'aria-labelledby': 'limits-set-title' },
    el('h2', { id: 'limits-set-title', text: t('limits.set.title') }),
    el('p', { class: 'hint', id: 'limits-rule', text: t('limits.set.rule', { hours: limits.cooling_off_hours }) }),
    el('div', { class: 'field' },
      el('label', { for: 'limit-day', text: t('limits.day.label') }),
      el('input', { id: 'limit-day', inputmode: 'numeric', autocomplete: 'off', value: perDay == null ? '' : String(perDay), 'aria-describedby': 'limit-day-hint limit-day-error' }),
      el('p', { class: 'hint', id: 'limit-day-hint', text: t('limits.day.hint') }),
      el('p', { class: 'field-error', id: 'limit-day-error', role: 'alert', hidden: true })),
    el('div', { class: 'field' },
      el('label', { for: 'limit-week', text: t('limits.week.label') }),
      el('input', { id: 'limit-week', inputmode: 'decimal', autocomplete: 'off', value: euros(perWeek), 'aria-describedby': 'limit-week-hint limit-week-error' }),
      el('p', { class: 'hint', id: 'limit-week-hint', text: t(limits.stake_limit_required ? 'limits.week.hint.required' : 'limits.week.hint') }),
      el('p', { class: 'field-error', id: 'limit-week-error', role: 'alert', hidden: true })),
    el('button', { type: 'submit', class: 'primary', id: 'limits-save', text: t('limits.save') }),
    el('p', { id: 'limits-done', class: 'done', role: 'status', hidden: !limitsScreen.done, text: limitsScreen.done || '' }),
    el('p', { id: 'limits-warn', class: 'warn', role: 'alert', hidden: !limitsScreen.warn, text: limitsScreen.warn || '' }));
  form.addEventListener('submit', saveLimits);
  body.append(form);
  if (limits.pending) {
    const pending = limits.pending;
    const what = [
      pending.tickets_per_day !== perDay ? t('limits.pending.day', { v: pending.tickets_per_day == null ? t('limits.none') : tn('limits.n.tickets', pending.tickets_per_day) }) : null,
      pending.spend_per_week_cents !== perWeek ? t('limits.pending.week', { v: pending.spend_per_week_cents == null ? t('limits.none') : money(pending.spend_per_week_cents) }) : null,
    ].filter(Boolean).join(' ; ');
    form.insertBefore(el('p', { class: 'pending', id: 'limits-pending', 'data-from': String(pending.from_ms), text: t('limits.pending', { what: what || t('limits.pending.same'), date: app.dayTime(pending.from_ms) }) }), form.querySelector('#limits-rule').nextSibling);
  }

  // Self-exclusion.
  const exclusionForm = el('form', { id: 'exclusion-form', class: 'stack', novalidate: true, 'aria-labelledby': 'exclusion-title' },
    el('h2', { id: 'exclusion-title', text: t('limits.exclude.title') }),
    el('p', { text: t('limits.exclude.text') }),
    el('fieldset', { class: 'choices' },
      el('legend', { text: t('limits.exclude.legend') }),
      ...EXCLUSION_DAYS.map((days, i) => el('label', { class: 'choice' },
        el('input', { type: 'radio', name: 'exclude-days', value: String(days), id: `exclude-${days}`, checked: i === 0 }),
        ' ', exclusionLabel(days)))),
    el('button', { type: 'submit', class: 'danger', id: 'exclude-go', text: t('limits.exclude.button') }));
  exclusionForm.addEventListener('submit', askExclusion);
  body.append(exclusionForm);
  body.append(reminderForm());
  if (limitsScreen.statement) body.append(statementSection(limitsScreen.statement));
}

function setError(id, text) {
  const box = $(`${id}-error`);
  box.textContent = text || '';
  box.hidden = !text;
  if (text) {
    $(id).setAttribute('aria-invalid', 'true');
    $(id).focus();
  } else {
    $(id).removeAttribute('aria-invalid');
  }
}

async function saveLimits(ev) {
  ev.preventDefault();
  const { state } = app;
  if (state.busy) return;
  setError('limit-day', '');
  setError('limit-week', '');
  const dayText = $('limit-day').value.trim();
  let day = null;
  if (dayText !== '') {
    if (!/^\d{1,6}$/.test(dayText)) return setError('limit-day', t('limits.day.bad'));
    day = Number(dayText);
  }
  const week = parseEuros($('limit-week').value);
  if (Number.isNaN(week)) return setError('limit-week', t('limits.week.bad'));
  if (week == null && limitsScreen.limits.stake_limit_required) return setError('limit-week', t('limits.week.required'));
  app.setBusy(true);
  try {
    const before = limitsScreen.limits;
    limitsScreen.limits = await limitsApi.put(state.token, { tickets_per_day: day, spend_per_week_cents: week });
    const limits = limitsScreen.limits;
    limitsScreen.done = limits.pending && (!before.pending || before.pending.from_ms !== limits.pending.from_ms || JSON.stringify(before.pending) !== JSON.stringify(limits.pending))
      ? t('limits.saved.pending', { date: app.dayTime(limits.pending.from_ms) }) : t('limits.saved');
    // A limit that applies now and is already passed: said at once, before a purchase is refused (the server's verdict).
    const passed = (limits.purchase && limits.purchase.refusal && limits.purchase.refusal.params) || {};
    limitsScreen.warn = passed.reason === 'tickets_per_day'
      ? tn('limits.passed.day', passed.used, { max: passed.max })
      : passed.reason === 'spend_per_week'
        ? t('limits.passed.week', { n: money(passed.used_cents), max: money(passed.max_cents) }) : null;
    renderLimits();
    $('limits-done').focus?.();
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) app.forgetToken();
    else app.showAlert(app.errorText(error));
  } finally {
    app.setBusy(false);
  }
}

function askExclusion(ev) {
  ev.preventDefault();
  const { el, state } = app;
  if (state.busy) return;
  const days = Number((document.querySelector('input[name="exclude-days"]:checked') || {}).value || 7);
  $('exclude-dialog')?.remove();
  const until = Date.now() + days * 86400000;
  const dlg = el('dialog', { id: 'exclude-dialog', class: 'dialog', 'aria-labelledby': 'exclude-dialog-title', 'aria-describedby': 'exclude-dialog-text', 'data-days': String(days) },
    el('h2', { id: 'exclude-dialog-title', text: t('limits.exclude.confirm.title.day', { label: exclusionLabel(days) }) }),
    el('p', { id: 'exclude-dialog-text', text: t('limits.exclude.confirm.text', { n: days, date: app.dayTime(until) }) }),
    el('div', { class: 'actions' },
      el('button', { type: 'button', class: 'danger', id: 'exclude-confirm', text: t('limits.exclude.confirm.yes.day', { label: exclusionLabel(days) }) }),
      el('button', { type: 'button', id: 'exclude-cancel', text: t('logout.cancel') })));
  document.body.append(dlg);
  const close = () => { dlg.close(); dlg.remove(); };
  dlg.addEventListener('cancel', () => setTimeout(close));
  $('exclude-cancel').addEventListener('click', () => { close(); $('exclude-go').focus(); });
  $('exclude-confirm').addEventListener('click', async () => {
    close();
    app.setBusy(true);
    try {
      limitsScreen.limits = await limitsApi.exclude(state.token, days);
      limitsScreen.done = null;
      renderLimits();
      $('limits-excluded')?.focus?.();
    } catch (error) {
      if (error instanceof ApiError && error.status === 401) app.forgetToken();
      else app.showAlert(app.errorText(error));
    } finally {
      app.setBusy(false);
    }
  });
  dlg.showModal();
  $('exclude-cancel').focus();
}

// ------------------------------------------------------------ wiring

export const limitsPage = { hash: 'limites', view: 'limits', open: openLimits, render: renderLimits };

export function initLimits(ctx) {
  app = ctx;
  // A refusal that says a self-exclusion (a purchase's 403, a closure's 409)
  // keeps its end on this device too, whichever screen it came from.
  net.onRefusal = (error) => {
    if (error.code === 'self_excluded') keepExclusion(error.params.until_ms);
  };
  ageGate();
}

/** The lobby's panel and the reminder's clock, when the home screen shows a player's lobby (home.js). */
export async function onLobby() {
  if (app.state.token && !(app.operatorMode && app.operatorMode())) startReminder();
  await lobbyLimits();
}

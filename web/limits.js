// limits.js: responsible play (docs/player-api.md).
//
// - "Interdit aux mineurs": the first visit asks for an 18+ confirmation
//   (a modal dialog: nothing else of the page can be used until it is
//   answered), remembered in this browser. Not in the operator's mode
//   (operator.js): the operator has verified its player's age.
// - "Mes limites" (#/limites): tickets per day and spend per week, set by
//   the player and checked by the server in the purchase's transaction
//   (GET/PUT /api/me/limits); lowering applies at once, raising after the
//   cooling-off (the pending change and its date are shown), with what was
//   used in the rolling day and week; a self-exclusion for 7 to 180 days
//   (POST /api/me/self-exclusion), confirmed first, never shortened.
// - A purchase the server refuses (403 `limit_reached` / `self_excluded`)
//   is shown with the server's own message and a link to the limits.

import { request, ApiError } from './api.js';
import { t, lang, money } from './i18n.js';

/** `key.one` or `key.other` by the page's language's plural rules, `{n}` filled. */
const tn = (key, n, params = {}) =>
  t(`${key}.${new Intl.PluralRules(lang() === 'fr' ? 'fr-FR' : 'en-GB').select(n) === 'one' ? 'one' : 'other'}`, { n, ...params });

const $ = (id) => document.getElementById(id);
let C = null;

export const limitsApi = {
  get: (token) => request('GET', '/api/me/limits', { token, retry: true }),
  put: (token, body) => request('PUT', '/api/me/limits', { token, body }),
  exclude: (token, days) => request('POST', '/api/me/self-exclusion', { token, body: { days } }),
};

export const EXCLUSION_DAYS = [7, 30, 90, 180];

// ------------------------------------------------------------ 18+ on entry

const ADULT_KEY = 'asc.adult';

/** The first visit: "Interdit aux mineurs", confirmed once per browser. */
function ageGate() {
  const { el, local } = C;
  if (local.get(ADULT_KEY) === '1' || (C.operatorMode && C.operatorMode())) return;
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
  $('age-no').addEventListener('click', () => {
    $('age-refused').hidden = false;
    document.body.dataset.minor = 'true';
  });
  gate.showModal();
  $('age-yes').focus();
}

// ------------------------------------------------------------ a refused purchase

/**
 * A purchase refused by the player's own limits or self-exclusion: the
 * server's message, plainly, with a link to the limits. True when `e` was
 * one (the caller shows other errors).
 */
export function showPurchaseRefusal(e) {
  if (!(e instanceof ApiError) || e.status !== 403 || !['limit_reached', 'self_excluded'].includes(e.code)) return false;
  const { el } = C;
  C.showAlert(t(e.code === 'self_excluded' ? 'limits.refused.excluded' : 'limits.refused.limit'));
  const a = $('alert');
  a.dataset.reason = e.code;
  a.append(' ', el('q', { class: 'server-message', id: 'refusal-message', text: e.message }), ' ', t('limits.refused.nothing'), ' ',
    el('a', { href: '#/limites', text: t('limits.refused.link') }));
  return true;
}

// ------------------------------------------------------------ Mes limites (#/limites)

let state = { limits: null, error: null, done: null };

async function openLimits() {
  const { S } = C;
  C.show('limits');
  C.setBusy(true);
  state = { limits: null, error: null, done: null };
  // Nothing of an earlier visit stays on screen while the limits load.
  $('limits-body').replaceChildren();
  if (S.token) {
    try {
      state.limits = await limitsApi.get(S.token);
    } catch (e) {
      if (e instanceof ApiError && e.status === 401) C.forgetToken();
      else state.error = e;
    }
  }
  renderLimits();
  C.setBusy(false);
  $('limits-title').focus();
}

const euros = (cents) => (cents == null ? '' : String(cents / 100).replace('.', ','));

/** "30", "30,5", "30.50" euros into cents; '' is no limit (null); NaN when unreadable. */
export function parseEuros(s) {
  const v = String(s).trim().replace(/\s|€/g, '').replace(',', '.');
  if (v === '') return null;
  if (!/^\d{1,7}(\.\d{1,2})?$/.test(v)) return NaN;
  return Math.round(Number(v) * 100);
}

function renderLimits() {
  const { S, el } = C;
  const body = $('limits-body');
  body.replaceChildren();
  body.append(el('p', { class: 'lead', text: t('limits.lead') }));
  if (!S.token) {
    body.append(el('p', { text: t('limits.out') }), el('p', {}, el('a', { class: 'button primary', href: '#', text: t('account.out.link') })));
    return;
  }
  if (state.error) {
    body.append(el('p', { class: 'field-error', role: 'alert', text: C.errorText(state.error) }));
    return;
  }
  const L = state.limits;
  if (!L) return;
  const now = Date.now();
  const excluded = L.excluded_until_ms != null && L.excluded_until_ms > now;

  if (excluded) {
    body.append(el('p', { class: 'excluded', id: 'limits-excluded', role: 'status', text: t('limits.excluded', { date: C.dayTime(L.excluded_until_ms) }) }));
  }

  // What was used in the rolling windows.
  const perDay = L.tickets_per_day;
  const perWeek = L.spend_per_week_cents;
  body.append(el('section', { 'aria-labelledby': 'limits-used-title' },
    el('h2', { id: 'limits-used-title', text: t('limits.used.title') }),
    el('dl', { class: 'facts usage' },
      el('div', {}, el('dt', { text: t('limits.used.day') }),
        el('dd', { id: 'used-day', 'data-used': String(L.used.tickets_today) }, perDay == null ? tn('limits.used.tickets', L.used.tickets_today) : tn('limits.used.tickets.of', L.used.tickets_today, { max: perDay }))),
      el('div', {}, el('dt', { text: t('limits.used.week') }),
        el('dd', { id: 'used-week', 'data-used': String(L.used.spent_week_cents) }, perWeek == null ? money(L.used.spent_week_cents) : t('limits.used.spent.of', { n: money(L.used.spent_week_cents), max: money(perWeek) }))))));

  // The limits, and what is coming.
  const form = el('form', { id: 'limits-form', class: 'stack', novalidate: true, 'aria-labelledby': 'limits-set-title' },
    el('h2', { id: 'limits-set-title', text: t('limits.set.title') }),
    el('p', { class: 'hint', id: 'limits-rule', text: t('limits.set.rule', { hours: L.cooling_off_hours }) }),
    el('div', { class: 'field' },
      el('label', { for: 'limit-day', text: t('limits.day.label') }),
      el('input', { id: 'limit-day', inputmode: 'numeric', autocomplete: 'off', value: perDay == null ? '' : String(perDay), 'aria-describedby': 'limit-day-hint limit-day-error' }),
      el('p', { class: 'hint', id: 'limit-day-hint', text: t('limits.day.hint') }),
      el('p', { class: 'field-error', id: 'limit-day-error', role: 'alert', hidden: true })),
    el('div', { class: 'field' },
      el('label', { for: 'limit-week', text: t('limits.week.label') }),
      el('input', { id: 'limit-week', inputmode: 'decimal', autocomplete: 'off', value: euros(perWeek), 'aria-describedby': 'limit-week-hint limit-week-error' }),
      el('p', { class: 'hint', id: 'limit-week-hint', text: t('limits.week.hint') }),
      el('p', { class: 'field-error', id: 'limit-week-error', role: 'alert', hidden: true })),
    el('button', { type: 'submit', class: 'primary', id: 'limits-save', text: t('limits.save') }),
    el('p', { id: 'limits-done', class: 'done', role: 'status', hidden: !state.done, text: state.done || '' }));
  form.addEventListener('submit', saveLimits);
  body.append(form);
  if (L.pending) {
    const p = L.pending;
    const what = [
      p.tickets_per_day !== perDay ? t('limits.pending.day', { v: p.tickets_per_day == null ? t('limits.none') : tn('limits.n.tickets', p.tickets_per_day) }) : null,
      p.spend_per_week_cents !== perWeek ? t('limits.pending.week', { v: p.spend_per_week_cents == null ? t('limits.none') : money(p.spend_per_week_cents) }) : null,
    ].filter(Boolean).join(' ; ');
    form.insertBefore(el('p', { class: 'pending', id: 'limits-pending', 'data-from': String(p.from_ms), text: t('limits.pending', { what: what || t('limits.pending.same'), date: C.dayTime(p.from_ms) }) }), form.querySelector('#limits-rule').nextSibling);
  }

  // Self-exclusion.
  const ex = el('form', { id: 'exclusion-form', class: 'stack', novalidate: true, 'aria-labelledby': 'exclusion-title' },
    el('h2', { id: 'exclusion-title', text: t('limits.exclude.title') }),
    el('p', { text: t('limits.exclude.text') }),
    el('fieldset', { class: 'choices' },
      el('legend', { text: t('limits.exclude.legend') }),
      ...EXCLUSION_DAYS.map((d, i) => el('label', { class: 'choice' },
        el('input', { type: 'radio', name: 'exclude-days', value: String(d), id: `exclude-${d}`, checked: i === 0 }),
        ' ', t('limits.exclude.days', { n: d })))),
    el('button', { type: 'submit', class: 'danger', id: 'exclude-go', text: t('limits.exclude.button') }));
  ex.addEventListener('submit', askExclusion);
  body.append(ex);
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
  const { S } = C;
  if (S.busy) return;
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
  C.setBusy(true);
  try {
    const before = state.limits;
    state.limits = await limitsApi.put(S.token, { tickets_per_day: day, spend_per_week_cents: week });
    const L = state.limits;
    state.done = L.pending && (!before.pending || before.pending.from_ms !== L.pending.from_ms || JSON.stringify(before.pending) !== JSON.stringify(L.pending))
      ? t('limits.saved.pending', { date: C.dayTime(L.pending.from_ms) }) : t('limits.saved');
    renderLimits();
    $('limits-done').focus?.();
  } catch (e) {
    if (e instanceof ApiError && e.status === 401) C.forgetToken();
    else C.showAlert(C.errorText(e));
  } finally {
    C.setBusy(false);
  }
}

function askExclusion(ev) {
  ev.preventDefault();
  const { el, S } = C;
  if (S.busy) return;
  const days = Number((document.querySelector('input[name="exclude-days"]:checked') || {}).value || 7);
  $('exclude-dialog')?.remove();
  const until = Date.now() + days * 86400000;
  const dlg = el('dialog', { id: 'exclude-dialog', class: 'dialog', 'aria-labelledby': 'exclude-dialog-title', 'aria-describedby': 'exclude-dialog-text', 'data-days': String(days) },
    el('h2', { id: 'exclude-dialog-title', text: t('limits.exclude.confirm.title', { n: days }) }),
    el('p', { id: 'exclude-dialog-text', text: t('limits.exclude.confirm.text', { n: days, date: C.dayTime(until) }) }),
    el('div', { class: 'actions' },
      el('button', { type: 'button', class: 'danger', id: 'exclude-confirm', text: t('limits.exclude.confirm.yes', { n: days }) }),
      el('button', { type: 'button', id: 'exclude-cancel', text: t('logout.cancel') })));
  document.body.append(dlg);
  const close = () => { dlg.close(); dlg.remove(); };
  dlg.addEventListener('cancel', () => setTimeout(close));
  $('exclude-cancel').addEventListener('click', () => { close(); $('exclude-go').focus(); });
  $('exclude-confirm').addEventListener('click', async () => {
    close();
    C.setBusy(true);
    try {
      state.limits = await limitsApi.exclude(S.token, days);
      state.done = null;
      renderLimits();
      $('limits-excluded')?.focus?.();
    } catch (e) {
      if (e instanceof ApiError && e.status === 401) C.forgetToken();
      else C.showAlert(C.errorText(e));
    } finally {
      C.setBusy(false);
    }
  });
  dlg.showModal();
  $('exclude-cancel').focus();
}

// ------------------------------------------------------------ wiring

export const limitsPage = { hash: 'limites', view: 'limits', open: openLimits, render: renderLimits };

export function initLimits(ctx) {
  C = ctx;
  ageGate();
}

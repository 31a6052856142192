// desk.js: the operator's desk at `/desk` (docs/operating.md "The desk
// page"). The operator signs in with an operator token, checked at once
// (GET /api/admin/version) and kept in this tab's sessionStorage: never in
// the address, gone when the tab closes. The page then shows the system's
// health (GET /api/admin/health) and every emission's figures per block
// (GET /api/admin/emissions: the figures of `as-capone report --json`),
// refreshed every REFRESH_MS and on demand. Every figure is written from
// the server's integers (cents, counts); each cell keeps its raw value in
// `data-value` (the browser tests compare them with the report).
//
// Split by subject: desk-common.js (the state, elements, formats and status
// lines they share), desk-charts.js (the charts), desk-claims.js (the claims
// above a shop's ceiling), desk-files.js (the downloads) and
// desk-strings.js (the words); this module signs in, refreshes and renders
// the health and the emissions, and runs the actions.

import { request, ApiError } from './api.js';
import { t, setLang, lang, money, LANGS } from './i18n.js';
import './desk-strings.js';
import { $, KEY, session, state, el, locale, num, dateOf, timeOf, duration, percent, today, dayOf, showOutcome } from './desk-common.js';
import { drawRisk, drawSales, drawPrizes, drawShops } from './desk-charts.js';
import { renderClaims, onClaimAction } from './desk-claims.js';
import { download, printCell, printPath } from './desk-files.js';

const REFRESH_MS = 10_000;
const local = {
  get(k) {
    try { return localStorage.getItem(k); } catch { return null; }
  },
  set(k, v) {
    try { localStorage.setItem(k, v); } catch { /* private mode */ }
  },
};

// ------------------------------------------------------------ strings and settings

function applyStrings() {
  document.documentElement.lang = lang();
  document.title = t('desk.doc.title');
  for (const e of document.querySelectorAll('[data-i18n]')) e.textContent = t(e.dataset.i18n);
  for (const e of document.querySelectorAll('[data-i18n-label]')) e.setAttribute('aria-label', t(e.dataset.i18nLabel));
  $('lang').setAttribute('lang', LANGS.find((l) => l !== lang()));
  render();
}

function showScreen() {
  const signed = !!state.token;
  $('desk-login').hidden = signed;
  $('desk-main').hidden = !signed;
  $('desk-logout').hidden = !signed;
  $('desk-version').hidden = !signed || !state.version;
  document.body.dataset.view = signed ? 'desk' : 'login';
}

// ------------------------------------------------------------ signing in

async function signIn(ev) {
  ev.preventDefault();
  const token = $('desk-token').value.trim();
  const error = $('desk-login-error');
  error.hidden = true;
  if (!token) {
    error.textContent = t('desk.login.empty');
    error.hidden = false;
    $('desk-token').focus();
    return;
  }
  document.body.dataset.state = 'busy';
  $('desk-login-go').disabled = true;
  try {
    // Checked now, not at the first figure: a wrong token is refused here.
    state.version = await request('GET', '/api/admin/version', { token });
    state.token = token;
    session.set(KEY.token, token);
    $('desk-token').value = '';
    showScreen();
    await refresh();
    $('main').focus();
  } catch (e) {
    const player = e instanceof ApiError && e.status === 403;
    const refused = e instanceof ApiError && (e.status === 401 || e.status === 403);
    error.textContent = player ? t('desk.login.player') : refused ? t('desk.login.bad') : t('desk.error', { message: e.message });
    error.hidden = false;
    $('desk-token').focus();
  } finally {
    $('desk-login-go').disabled = false;
    document.body.dataset.state = 'idle';
  }
}

function signOut() {
  state.token = null;
  state.version = state.health = state.reports = state.last = state.rate = state.check = state.checkedText = state.shown = state.risk = null;
  session.set(KEY.token, null);
  clearTimeout(state.timer);
  showScreen();
  $('desk-token').focus();
}

// ------------------------------------------------------------ the figures

async function refresh() {
  if (!state.token) return;
  clearTimeout(state.timer);
  document.body.dataset.state = 'busy';
  const token = state.token;
  try {
    const [version, health, reports, claims] = await Promise.all([
      state.version ? Promise.resolve(state.version) : request('GET', '/api/admin/version', { token }),
      request('GET', '/api/admin/health', { token }),
      request('GET', '/api/admin/emissions', { token }),
      request('GET', '/api/admin/claims', { token }),
    ]);
    const at = Date.now();
    if (state.last && health.process.uptime_s >= state.last.health.process.uptime_s) {
      const seconds = (at - state.last.at) / 1000;
      state.rate = seconds > 0 ? (health.process.actions - state.last.health.process.actions) / seconds : null;
    }
    state.last = { at, health };
    Object.assign(state, { version, health, reports, claims, updated: at });
    $('desk-error').hidden = true;
  } catch (e) {
    if (e instanceof ApiError && (e.status === 401 || e.status === 403)) {
      // The token was withdrawn from the configuration: sign in again.
      signOut();
      $('desk-login-error').textContent = t('desk.login.bad');
      $('desk-login-error').hidden = false;
      return;
    }
    $('desk-error').textContent = t('desk.error', { message: e.message });
    $('desk-error').hidden = false;
  } finally {
    document.body.dataset.state = 'idle';
  }
  render();
  state.loads += 1;
  document.body.dataset.loads = String(state.loads);
  state.timer = setTimeout(refresh, REFRESH_MS);
}

function render() {
  showScreen();
  if (state.version) $('desk-version').textContent = t('desk.version', { version: state.version.version });
  if (state.updated) $('desk-updated').textContent = t('desk.updated', { time: timeOf(state.updated) });
  if (state.health) renderHealth(state.health);
  // The list is drawn again only when its figures or the language changed:
  // a refresh must not wipe what the operator is typing in it.
  const shown = state.reports && `${lang()}${JSON.stringify(state.reports)}`;
  if (shown && shown !== state.shown) {
    state.shown = shown;
    renderEmissions(state.reports.emissions);
  }
  const claims = state.claims && `${lang()}${JSON.stringify(state.claims)}`;
  if (claims && claims !== state.claimsShown) {
    state.claimsShown = claims;
    renderClaims(state.claims);
  }
  if (state.check) renderPreview(state.check);
}

/**
 * A card of the health screen: its title, its value and, for a figure that
 * is checked (`ok` true or false, not null), good or to watch.
 */
function card(id, title, value, ok = null, note = null) {
  const verdict = ok == null ? [] : [el('p', { class: 'desk-card-state' }, ok ? t('desk.ok') : t('desk.warn'))];
  return el('div', { class: `desk-card ${ok === false ? 'warn' : 'ok'}`, 'data-health': id, 'data-ok': ok == null ? null : String(ok) },
    el('h3', {}, title),
    el('p', { class: 'desk-card-value' }, value),
    ...verdict,
    ...(note ? [el('p', { class: 'hint' }, note)] : []));
}

function renderHealth(h) {
  const schemaOk = h.database.schema === h.database.database_schema;
  const auditOk = h.audit.unsealed === 0 || h.audit.oldest_unsealed_age_s < 60;
  const walletOk = h.wallet.mode === 'internal' || h.wallet.outbox_depth === 0 || h.wallet.outbox_oldest_age_s < 300;
  const wallet = h.wallet.mode === 'internal'
    ? t('desk.health.wallet.internal')
    : h.wallet.outbox_depth > 0
      ? t('desk.health.wallet.operator.age', { depth: num(h.wallet.outbox_depth), age: num(h.wallet.outbox_oldest_age_s) })
      : t('desk.health.wallet.operator', { depth: num(h.wallet.outbox_depth) });
  const cards = [
    card('database', t('desk.health.database'),
      t('desk.health.database.value', { backend: h.database.backend === 'postgres' ? 'PostgreSQL' : 'SQLite', database: h.database.database_schema, schema: h.database.schema }),
      schemaOk, schemaOk ? null : t('desk.health.database.behind', { database: h.database.database_schema, schema: h.database.schema })),
    card('key', t('desk.health.key'), t('desk.health.key.value', { id: h.server_key.key_id, fingerprint: h.server_key.fingerprint.slice(0, 16) }),
      h.server_key.held, h.server_key.held ? null : t('desk.health.key.missing')),
    card('audit', t('desk.health.audit'),
      h.audit.unsealed === 0 ? t('desk.health.audit.sealed') : t('desk.health.audit.unsealed', { count: num(h.audit.unsealed), age: num(h.audit.oldest_unsealed_age_s) }),
      auditOk),
    card('in_play', t('desk.health.inplay'), num(h.tickets_in_play)),
    card('players', t('desk.health.players'), t('desk.health.players.value', {
      registered: num(h.players.registered), limits: num(h.players.with_limits), excluded: num(h.players.self_excluded),
    })),
    card('wallet', t('desk.health.wallet'), wallet, walletOk),
    card('process', t('desk.health.process'), t('desk.health.process.value', {
      uptime: duration(h.process.uptime_s), requests: num(h.process.requests), actions: num(h.process.actions),
    })),
    card('rate', t('desk.health.rate'), state.rate == null ? t('desk.health.rate.wait') : new Intl.NumberFormat(locale(), { maximumFractionDigits: 1 }).format(state.rate)),
    card('p99', t('desk.health.p99'), h.process.action_p99_ms_at_most == null
      ? t('desk.health.p99.none') : t('desk.health.p99.value', { ms: num(h.process.action_p99_ms_at_most) })),
  ];
  $('health-cards').replaceChildren(...cards);
  // Raw figures for scripts and tests.
  const figures = { in_play: h.tickets_in_play, registered: h.players.registered, with_limits: h.players.with_limits,
    self_excluded: h.players.self_excluded, unsealed: h.audit.unsealed, outbox: h.wallet.outbox_depth };
  for (const [k, v] of Object.entries(figures)) $('health-cards').dataset[k.replace(/_(\w)/g, (m, c) => c.toUpperCase())] = String(v);
}

const COLUMNS = [
  ['printed', (v) => num(v)], ['sold', (v) => num(v)], ['in_play', (v) => num(v)], ['won', (v) => num(v)],
  ['lost', (v) => num(v)], ['sales_cents', money, 'sales'], ['prizes_won_cents', money, 'prizes_won'],
  ['prizes_paid_cents', money, 'prizes_paid'], ['prizes_owed_cents', money, 'prizes_owed'],
];

function figureCells(figures) {
  return COLUMNS.map(([field, show]) => el('td', { 'data-field': field, 'data-value': String(figures[field]), class: 'num' }, show(figures[field])));
}

function renderEmission(r) {
  const rtp = r.rtp.so_far_decimal == null
    ? t('desk.emission.rtp.none', { expected: percent(r.rtp.expected_decimal), exact: r.rtp.expected })
    : t('desk.emission.rtp.value', { sofar: percent(r.rtp.so_far_decimal), expected: percent(r.rtp.expected_decimal), exact: r.rtp.expected });
  const fact = (label, value, attrs = {}) => el('div', attrs, el('dt', {}, label), el('dd', {}, value));
  const facts = el('dl', { class: 'desk-facts' },
    fact(t('desk.emission.channel'), t(`desk.emission.channel.${r.channel}`)),
    fact(t('desk.emission.table'), el('span', { class: 'mono', title: r.table_digest }, `${r.table_digest.slice(0, 16)}…`)),
    fact(t('desk.emission.price'), money(r.price_cents)),
    fact(t('desk.emission.blocksize'), num(r.block_size)),
    fact(t('desk.emission.created'), dateOf(r.created_ms)),
    fact(t('desk.emission.status'), r.sale_end_ms == null ? t('desk.emission.onsale') : t('desk.emission.closed', { date: dateOf(r.sale_end_ms) })),
    fact(t('desk.emission.notice'), r.notice_ref ?? t('desk.emission.notice.none'), { 'data-notice': r.notice_ref ?? '' }),
    ...(r.closing_notice_date == null ? [] : [fact(t('desk.emission.closing'),
      r.closing_notice_ref ? t('desk.emission.closing.ref', { date: dayOf(r.closing_notice_date), ref: r.closing_notice_ref }) : dayOf(r.closing_notice_date),
      { 'data-closing-notice': r.closing_notice_date })]),
    ...(r.claim_end_ms == null ? [] : [fact(t('desk.emission.claim'), dateOf(r.claim_end_ms))]),
    fact(t('desk.emission.rtp'), rtp, { 'data-rtp-so-far': r.rtp.so_far ?? '', 'data-rtp-expected': r.rtp.expected }));
  // A paper block's line ends with its print file's downloads (audited).
  const paper = r.channel === 'paper';
  const head = el('tr', {},
    el('th', { scope: 'col' }, t('desk.col.block')), el('th', { scope: 'col' }, t('desk.col.published')),
    el('th', { scope: 'col' }, t('desk.col.root')),
    ...COLUMNS.map(([field, , key]) => el('th', { scope: 'col', class: 'num' }, t(`desk.col.${key || field}`))),
    ...(paper ? [el('th', { scope: 'col' }, t('desk.col.print'))] : []));
  const rows = r.blocks.map((b) => el('tr', { 'data-emission': String(r.emission), 'data-block': String(b.block) },
    el('th', { scope: 'row' }, String(b.block)),
    el('td', {}, b.published_ms == null ? t('desk.unpublished') : dateOf(b.published_ms)),
    el('td', { class: 'mono', title: b.root }, `${b.root.slice(0, 12)}…`),
    ...figureCells(b), ...(paper ? [printCell(b, dateOf)] : [])));
  const total = el('tr', { class: 'desk-total', 'data-emission': String(r.emission), 'data-block': 'total' },
    el('th', { scope: 'row', colspan: '3' }, t('desk.total')), ...figureCells(r.totals), ...(paper ? [el('td')] : []));
  const table = el('table', { class: 'desk-table' },
    el('caption', { class: 'sr-only' }, t('desk.blocks.caption', { n: r.emission })),
    el('thead', {}, head), el('tbody', {}, ...rows), el('tfoot', {}, total));
  const n = r.emission;
  // A closed sale takes no more blocks nor a second closing.
  const onSale = r.sale_end_ms == null ? [
    el('label', { for: `more-${n}` }, t('desk.more.label')),
    el('input', { id: `more-${n}`, type: 'number', min: '1', max: '20', step: '1', value: '1', inputmode: 'numeric' }),
    el('button', { type: 'button', 'data-act': 'more', 'data-emission': String(n) }, t('desk.more.button')),
    el('label', { for: `close-date-${n}` }, t('desk.close.date')),
    el('input', { id: `close-date-${n}`, type: 'date', value: today() }),
    el('label', { for: `close-ref-${n}` }, t('desk.close.ref')),
    el('input', { id: `close-ref-${n}`, type: 'text', maxlength: '200', autocomplete: 'off' }),
    el('button', { type: 'button', 'data-act': 'close', 'data-emission': String(n) }, t('desk.close.button')),
  ] : [];
  const actions = el('div', { class: 'desk-actions' },
    ...onSale,
    ...(r.channel !== 'paper' ? [] : [
      el('label', { for: `print-${n}` }, t('desk.print.label')),
      el('select', { id: `print-${n}` }, ...r.blocks.map((b) => el('option', { value: String(b.block) }, String(b.block)))),
      el('button', { type: 'button', 'data-act': 'print', 'data-emission': String(n), title: t('desk.print.hint') }, t('desk.print.button')),
      el('button', { type: 'button', 'data-act': 'print-nocodes', 'data-emission': String(n) }, t('desk.print.nocodes')),
    ]),
    el('button', { type: 'button', 'data-act': 'certify', 'data-emission': String(n), title: t('desk.certify.hint') },
      t('desk.certify.button')));
  const figure = el('figure', { class: 'desk-risk', id: `risk-${n}`, 'data-emission': String(n) });
  // Sales and prizes over time read the emission's sold tickets and
  // finished games: drawn when their box is open (the newest emission's at
  // first, then those the operator opens), not for all 20 emissions at
  // every refresh (BENCHMARKS.md "The desk with 20 emissions of 20 blocks").
  const charts = el('details', { class: 'desk-charts', id: `charts-${n}`, 'data-emission': String(n), ...(chartsOpen(n) ? { open: '' } : {}) },
    el('summary', {}, t('desk.charts.summary')),
    ...['sales', 'prizes'].map((c) => el('figure', { class: 'desk-chart', id: `${c}-${n}`, 'data-emission': String(n) })));
  charts.addEventListener('toggle', () => {
    state.open[n] = charts.open;
    if (charts.open && !charts.dataset.loaded) {
      charts.dataset.loaded = '1';
      drawSales(r);
      drawPrizes(r);
    }
  });
  return el('article', { class: 'desk-emission', 'data-emission': String(r.emission), 'aria-labelledby': `emission-${r.emission}` },
    el('h3', { id: `emission-${r.emission}` }, t('desk.emission.title', { n: r.emission, code: r.code })),
    facts,
    actions,
    figure,
    charts,
    // The table scrolls inside its box on a narrow screen, not the page.
    el('div', { class: 'desk-table-wrap', tabindex: '0', role: 'region', 'aria-label': t('desk.blocks.caption', { n: r.emission }) }, table));
}

/** Whether emission `n`'s charts box is open: as the operator left it, else only the newest emission's. */
function chartsOpen(n) {
  if (n in state.open) return state.open[n];
  const newest = Math.max(...(state.reports?.emissions ?? []).map((r) => r.emission));
  return n === newest;
}

function renderEmissions(list) {
  $('desk-emissions-empty').hidden = list.length > 0;
  $('emission-list').replaceChildren(...list.map(renderEmission));
  for (const r of list) {
    drawRisk(r);
    const charts = $(`charts-${r.emission}`);
    if (charts.open) {
      charts.dataset.loaded = '1';
      drawSales(r);
      drawPrizes(r);
    }
  }
  drawShops();
}

// ------------------------------------------------------------ actions, each confirmed

/** Asks `text` in the confirmation dialog; true when confirmed (Escape and "Annuler": false). */
function confirmed(text) {
  const d = $('desk-confirm');
  $('confirm-text').textContent = text;
  return new Promise((resolve) => {
    const done = (answer) => {
      $('confirm-yes').onclick = $('confirm-no').onclick = d.oncancel = null;
      d.close();
      document.body.dataset.confirm = '';
      resolve(answer);
    };
    $('confirm-yes').onclick = () => done(true);
    $('confirm-no').onclick = () => done(false);
    d.oncancel = (e) => { e.preventDefault(); done(false); };
    d.showModal();
    document.body.dataset.confirm = 'open';
    $('confirm-no').focus();
  });
}

/** Runs a confirmed action; its answer, or null (not confirmed, or refused: said in the page). */
async function act(question, method, path, body) {
  if (!(await confirmed(question))) return null;
  document.body.dataset.state = 'busy';
  try {
    const out = await request(method, path, { token: state.token, body });
    await refresh();
    return out;
  } catch (e) {
    showOutcome(null, t('desk.refused', { message: e.message }));
    return null;
  } finally {
    document.body.dataset.state = 'idle';
    document.body.dataset.acted = String(Number(document.body.dataset.acted || 0) + 1);
  }
}

const ratio = (fraction) => {
  const [p, q] = String(fraction).split('/');
  return Number(p) / Number(q || 1);
};

async function checkTable(ev) {
  ev.preventDefault();
  const text = $('new-table').value;
  const error = $('new-error');
  error.hidden = true;
  if (!text.trim()) {
    error.textContent = t('desk.new.empty');
    error.hidden = false;
    return;
  }
  document.body.dataset.state = 'busy';
  try {
    state.check = await request('POST', '/api/admin/tables/check', { token: state.token, body: { table: text } });
    state.checkedText = text;
    renderPreview(state.check);
    $('new-preview').hidden = false;
    $('new-preview').focus();
  } catch (e) {
    state.check = null;
    $('new-preview').hidden = true;
    error.textContent = t('desk.new.refused', { message: e.message });
    error.hidden = false;
  } finally {
    document.body.dataset.state = 'idle';
  }
}

function renderPreview(c) {
  const f = c.figures;
  const pct = (fraction) => new Intl.NumberFormat(locale(), { style: 'percent', minimumFractionDigits: 2, maximumFractionDigits: 4 }).format(ratio(fraction));
  const fact = (label, value, key) => el('div', { 'data-fact': key }, el('dt', {}, label), el('dd', {}, value));
  $('preview-title').textContent = t('desk.new.preview', { code: c.code, game: c.game });
  $('preview-facts').replaceChildren(
    fact(t('desk.emission.table'), el('span', { class: 'mono', title: c.digest }, `${c.digest.slice(0, 16)}…`), 'digest'),
    fact(t('desk.emission.price'), money(c.price_cents), 'price'),
    fact(t('desk.emission.blocksize'), num(c.block_size), 'block_size'),
    fact(t('desk.new.rtp'), t('desk.new.exact', { decimal: pct(f.rtp), exact: f.rtp }), 'rtp'),
    fact(t('desk.new.hit'), t('desk.new.exact', { decimal: pct(f.hit_rate), exact: f.hit_rate }), 'hit_rate'),
    fact(t('desk.new.largest'), money(f.largest_prize_cents), 'largest'),
    fact(t('desk.new.risk'), t('desk.new.risk.value', {
      p99: money(f.block_risk.p99_cents), sales: money(c.price_cents * c.block_size),
      exceed: new Intl.NumberFormat(locale(), { maximumSignificantDigits: 3 }).format(f.block_risk.p_prizes_exceed_sales),
    }), 'risk'));
  const rules = [
    ...c.refusals.map((r) => el('li', { class: 'refused' }, t('desk.new.refusal', { why: r }))),
    ...c.deviations.map((d) => el('li', { class: 'deviation' }, d)),
  ];
  if (rules.length === 0) rules.push(el('li', {}, t('desk.new.regulation')));
  $('preview-rules').replaceChildren(...rules);
  $('new-create').hidden = !c.accepted;
  $('new-preview').dataset.accepted = String(c.accepted);
}

async function createEmission() {
  const c = state.check;
  const blocks = Number($('new-blocks').value);
  const channel = $('new-channel').value;
  if (!c || $('new-table').value !== state.checkedText) {
    showOutcome(null, t('desk.new.changed'));
    return;
  }
  if (!Number.isInteger(blocks) || blocks < 1 || blocks > 20) {
    showOutcome(null, t('desk.blocks.bad'));
    return;
  }
  const notice = $('new-notice').value.trim();
  const question = t('desk.confirm.create', { code: c.code, blocks, channel: t(`desk.emission.channel.${channel}`) });
  const body = { table: state.checkedText, blocks, channel, ...(notice ? { notice_ref: notice } : {}) };
  const out = await act(question, 'POST', '/api/admin/emissions', body);
  if (out) {
    showOutcome(t('desk.done.created', { n: out.emission, blocks: out.blocks.length }));
    state.check = state.checkedText = null;
    $('new-table').value = '';
    $('new-file').value = '';
    $('new-notice').value = '';
    $('new-preview').hidden = true;
  }
}

async function onEmissionAction(ev) {
  const button = ev.target.closest('button[data-act]');
  if (!button) return;
  const n = Number(button.dataset.emission);
  if (button.dataset.act === 'more') {
    const blocks = Number($(`more-${n}`).value);
    if (!Number.isInteger(blocks) || blocks < 1 || blocks > 20) {
      showOutcome(null, t('desk.blocks.bad'));
      return;
    }
    const out = await act(t('desk.confirm.more', { n, blocks }), 'POST', `/api/admin/emissions/${n}/blocks`, { blocks });
    if (out) showOutcome(t('desk.done.more', { n, blocks }));
  } else if (button.dataset.act === 'close') {
    const date = $(`close-date-${n}`).value;
    const ref = $(`close-ref-${n}`).value.trim();
    if (!/^\d{4}-\d{2}-\d{2}$/.test(date)) {
      showOutcome(null, t('desk.close.baddate'));
      return;
    }
    const body = { closing_notice_date: date, ...(ref ? { closing_notice_ref: ref } : {}) };
    const out = await act(t('desk.confirm.close', { n, date: dayOf(date) }), 'POST', `/api/admin/emissions/${n}/close`, body);
    if (out !== null) showOutcome(t('desk.done.closed', { n, until: dateOf(out.claim_end_ms) }));
  } else if (button.dataset.act === 'print' || button.dataset.act === 'print-nocodes') {
    await downloadPrint(n, Number($(`print-${n}`).value), button.dataset.act === 'print');
  } else if (button.dataset.act === 'certify') {
    await downloadCertification(n, button);
  }
}

/**
 * A paper block's print file, with its play codes (refused once a ticket
 * of the block is sold) or without; each download is audited, and the
 * block's line shows it after the refresh.
 */
async function downloadPrint(emission, block, codes) {
  document.body.dataset.state = 'busy';
  try {
    await download(printPath(emission, block, codes), `emission-${emission}-block-${block}.csv`, state.token);
    showOutcome(t(codes ? 'desk.done.print' : 'desk.done.print.nocodes', { emission, block }));
    await refresh();
  } catch (e) {
    showOutcome(null, t('desk.refused', { message: e.message }));
  } finally {
    document.body.dataset.state = 'idle';
  }
}

/**
 * The certification report of an emission's table (GET
 * /api/admin/emissions/{n}/certification, 100 000 tickets per stream:
 * seconds of work on the server); the button says it is busy meanwhile.
 */
async function downloadCertification(emission, button) {
  document.body.dataset.state = 'busy';
  button.disabled = true;
  button.setAttribute('aria-busy', 'true');
  button.textContent = t('desk.certify.running');
  showOutcome(t('desk.certify.wait', { emission }));
  try {
    await download(`/api/admin/emissions/${emission}/certification`, `certification-emission-${emission}.html`, state.token);
    showOutcome(t('desk.done.certify', { emission }));
  } catch (e) {
    showOutcome(null, t('desk.refused', { message: e.message }));
  } finally {
    button.disabled = false;
    button.removeAttribute('aria-busy');
    button.textContent = t('desk.certify.button');
    document.body.dataset.state = 'idle';
  }
}

// ------------------------------------------------------------ start

function start() {
  setLang(new URLSearchParams(location.search).get('lang') || local.get(KEY.lang) || 'fr');
  $('lang').addEventListener('click', () => {
    setLang(LANGS.find((l) => l !== lang()));
    local.set(KEY.lang, lang());
    applyStrings();
  });
  $('desk-login-form').addEventListener('submit', signIn);
  $('desk-logout').addEventListener('click', signOut);
  $('desk-refresh').addEventListener('click', () => refresh());
  $('new-form').addEventListener('submit', checkTable);
  $('new-create').addEventListener('click', createEmission);
  $('emission-list').addEventListener('click', onEmissionAction);
  $('claims-body').addEventListener('click', (ev) => onClaimAction(ev, act));
  $('new-file').addEventListener('change', async () => {
    const file = $('new-file').files[0];
    if (file) $('new-table').value = await file.text();
  });
  applyStrings();
  document.body.dataset.state = 'idle';
  if (state.token) {
    refresh();
  } else {
    $('desk-token').focus();
  }
}

start();

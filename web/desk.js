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
  get(key) {
    try { return localStorage.getItem(key); } catch { return null; }
  },
  set(key, value) {
    try { localStorage.setItem(key, value); } catch { /* private mode */ }
  },
};

// ------------------------------------------------------------ strings and settings

function applyStrings() {
  document.documentElement.lang = lang();
  document.title = t('desk.doc.title');
  for (const element of document.querySelectorAll('[data-i18n]')) element.textContent = t(element.dataset.i18n);
  for (const element of document.querySelectorAll('[data-i18n-label]')) element.setAttribute('aria-label', t(element.dataset.i18nLabel));
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
  } catch (failure) {
    const player = failure instanceof ApiError && failure.status === 403;
    const refused = failure instanceof ApiError && (failure.status === 401 || failure.status === 403);
    error.textContent = player ? t('desk.login.player') : refused ? t('desk.login.bad') : t('desk.error', { message: failure.message });
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
  } catch (error) {
    if (error instanceof ApiError && (error.status === 401 || error.status === 403)) {
      // The token was withdrawn from the configuration: sign in again.
      signOut();
      $('desk-login-error').textContent = t('desk.login.bad');
      $('desk-login-error').hidden = false;
      return;
    }
    $('desk-error').textContent = t('desk.error', { message: error.message });
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

function renderHealth(health) {
  const schemaOk = health.database.schema === health.database.database_schema;
  const auditOk = health.audit.unsealed === 0 || health.audit.oldest_unsealed_age_s < 60;
  const walletOk = health.wallet.mode === 'internal' || health.wallet.outbox_depth === 0 || health.wallet.outbox_oldest_age_s < 300;
  const wallet = health.wallet.mode === 'internal'
    ? t('desk.health.wallet.internal')
    : health.wallet.outbox_depth > 0
      ? t('desk.health.wallet.operator.age', { depth: num(health.wallet.outbox_depth), age: num(health.wallet.outbox_oldest_age_s) })
      : t('desk.health.wallet.operator', { depth: num(health.wallet.outbox_depth) });
  const cards = [
    card('database', t('desk.health.database'),
      t('desk.health.database.value', { backend: health.database.backend === 'postgres' ? 'PostgreSQL' : 'SQLite', database: health.database.database_schema, schema: health.database.schema }),
      schemaOk, schemaOk ? null : t('desk.health.database.behind', { database: health.database.database_schema, schema: health.database.schema })),
    card('key', t('desk.health.key'), t('desk.health.key.value', { id: health.server_key.key_id, fingerprint: health.server_key.fingerprint.slice(0, 16) }),
      health.server_key.held, health.server_key.held ? null : t('desk.health.key.missing')),
    card('audit', t('desk.health.audit'),
      health.audit.unsealed === 0 ? t('desk.health.audit.sealed') : t('desk.health.audit.unsealed', { count: num(health.audit.unsealed), age: num(health.audit.oldest_unsealed_age_s) }),
      auditOk),
    card('in_play', t('desk.health.inplay'), num(health.tickets_in_play)),
    card('players', t('desk.health.players'), t('desk.health.players.value', {
      registered: num(health.players.registered), limits: num(health.players.with_limits), excluded: num(health.players.self_excluded),
    })),
    card('wallet', t('desk.health.wallet'), wallet, walletOk),
    card('process', t('desk.health.process'), t('desk.health.process.value', {
      uptime: duration(health.process.uptime_s), requests: num(health.process.requests), actions: num(health.process.actions),
    })),
    card('rate', t('desk.health.rate'), state.rate == null ? t('desk.health.rate.wait') : new Intl.NumberFormat(locale(), { maximumFractionDigits: 1 }).format(state.rate)),
    card('p99', t('desk.health.p99'), health.process.action_p99_ms_at_most == null
      ? t('desk.health.p99.none') : t('desk.health.p99.value', { ms: num(health.process.action_p99_ms_at_most) })),
  ];
  $('health-cards').replaceChildren(...cards);
  // Raw figures for scripts and tests.
  const figures = { in_play: health.tickets_in_play, registered: health.players.registered, with_limits: health.players.with_limits,
    self_excluded: health.players.self_excluded, unsealed: health.audit.unsealed, outbox: health.wallet.outbox_depth };
  for (const [field, value] of Object.entries(figures)) $('health-cards').dataset[field.replace(/_(\w)/g, (m, c) => c.toUpperCase())] = String(value);
}

const COLUMNS = [
  ['printed', (v) => num(v)], ['sold', (v) => num(v)], ['in_play', (v) => num(v)], ['won', (v) => num(v)],
  ['lost', (v) => num(v)], ['sales_cents', money, 'sales'], ['prizes_won_cents', money, 'prizes_won'],
  ['prizes_paid_cents', money, 'prizes_paid'], ['prizes_owed_cents', money, 'prizes_owed'],
];

function figureCells(figures) {
  return COLUMNS.map(([field, show]) => el('td', { 'data-field': field, 'data-value': String(figures[field]), class: 'num' }, show(figures[field])));
}

function renderEmission(report) {
  const rtp = report.rtp.so_far_decimal == null
    ? t('desk.emission.rtp.none', { expected: percent(report.rtp.expected_decimal), exact: report.rtp.expected })
    : t('desk.emission.rtp.value', { sofar: percent(report.rtp.so_far_decimal), expected: percent(report.rtp.expected_decimal), exact: report.rtp.expected });
  const fact = (label, value, attrs = {}) => el('div', attrs, el('dt', {}, label), el('dd', {}, value));
  const facts = el('dl', { class: 'desk-facts' },
    fact(t('desk.emission.channel'), t(`desk.emission.channel.${report.channel}`)),
    fact(t('desk.emission.table'), el('span', { class: 'mono', title: report.table_digest }, `${report.table_digest.slice(0, 16)}…`)),
    fact(t('desk.emission.price'), money(report.price_cents)),
    fact(t('desk.emission.blocksize'), num(report.block_size)),
    fact(t('desk.emission.created'), dateOf(report.created_ms)),
    fact(t('desk.emission.status'), report.sale_end_ms == null ? t('desk.emission.onsale') : t('desk.emission.closed', { date: dateOf(report.sale_end_ms) })),
    fact(t('desk.emission.notice'), report.notice_ref ?? t('desk.emission.notice.none'), { 'data-notice': report.notice_ref ?? '' }),
    ...(report.closing_notice_date == null ? [] : [fact(t('desk.emission.closing'),
      report.closing_notice_ref ? t('desk.emission.closing.ref', { date: dayOf(report.closing_notice_date), ref: report.closing_notice_ref }) : dayOf(report.closing_notice_date),
      { 'data-closing-notice': report.closing_notice_date })]),
    ...(report.claim_end_ms == null ? [] : [fact(t('desk.emission.claim'), dateOf(report.claim_end_ms))]),
    fact(t('desk.emission.rtp'), rtp, { 'data-rtp-so-far': report.rtp.so_far ?? '', 'data-rtp-expected': report.rtp.expected }));
  // A paper block's line ends with its print file's downloads (audited).
  const paper = report.channel === 'paper';
  const head = el('tr', {},
    el('th', { scope: 'col' }, t('desk.col.block')), el('th', { scope: 'col' }, t('desk.col.published')),
    el('th', { scope: 'col' }, t('desk.col.root')),
    ...COLUMNS.map(([field, , key]) => el('th', { scope: 'col', class: 'num' }, t(`desk.col.${key || field}`))),
    ...(paper ? [el('th', { scope: 'col' }, t('desk.col.print'))] : []));
  const rows = report.blocks.map((block) => el('tr', { 'data-emission': String(report.emission), 'data-block': String(block.block) },
    el('th', { scope: 'row' }, String(block.block)),
    el('td', {}, block.published_ms == null ? t('desk.unpublished') : dateOf(block.published_ms)),
    el('td', { class: 'mono', title: block.root }, `${block.root.slice(0, 12)}…`),
    ...figureCells(block), ...(paper ? [printCell(block, dateOf)] : [])));
  const total = el('tr', { class: 'desk-total', 'data-emission': String(report.emission), 'data-block': 'total' },
    el('th', { scope: 'row', colspan: '3' }, t('desk.total')), ...figureCells(report.totals), ...(paper ? [el('td')] : []));
  const table = el('table', { class: 'desk-table' },
    el('caption', { class: 'sr-only' }, t('desk.blocks.caption', { n: report.emission })),
    el('thead', {}, head), el('tbody', {}, ...rows), el('tfoot', {}, total));
  const emission = report.emission;
  // A closed sale takes no more blocks nor a second closing.
  const onSale = report.sale_end_ms == null ? [
    el('label', { for: `more-${emission}` }, t('desk.more.label')),
    el('input', { id: `more-${emission}`, type: 'number', min: '1', max: '20', step: '1', value: '1', inputmode: 'numeric' }),
    el('button', { type: 'button', 'data-act': 'more', 'data-emission': String(emission) }, t('desk.more.button')),
    el('label', { for: `close-date-${emission}` }, t('desk.close.date')),
    el('input', { id: `close-date-${emission}`, type: 'date', value: today() }),
    el('label', { for: `close-ref-${emission}` }, t('desk.close.ref')),
    el('input', { id: `close-ref-${emission}`, type: 'text', maxlength: '200', autocomplete: 'off' }),
    el('button', { type: 'button', 'data-act': 'close', 'data-emission': String(emission) }, t('desk.close.button')),
  ] : [];
  const actions = el('div', { class: 'desk-actions' },
    ...onSale,
    ...(report.channel !== 'paper' ? [] : [
      el('label', { for: `print-${emission}` }, t('desk.print.label')),
      el('select', { id: `print-${emission}` }, ...report.blocks.map((b) => el('option', { value: String(b.block) }, String(b.block)))),
      el('button', { type: 'button', 'data-act': 'print', 'data-emission': String(emission), title: t('desk.print.hint') }, t('desk.print.button')),
      el('button', { type: 'button', 'data-act': 'print-nocodes', 'data-emission': String(emission) }, t('desk.print.nocodes')),
    ]),
    el('button', { type: 'button', 'data-act': 'certify', 'data-emission': String(emission), title: t('desk.certify.hint') },
      t('desk.certify.button')));
  const figure = el('figure', { class: 'desk-risk', id: `risk-${emission}`, 'data-emission': String(emission) });
  // Sales and prizes over time read the emission's sold tickets and
  // finished games: drawn when their box is open (the newest emission's at
  // first, then those the operator opens), not for all 20 emissions at
  // every refresh (BENCHMARKS.md "The desk with 20 emissions of 20 blocks").
  const charts = el('details', { class: 'desk-charts', id: `charts-${emission}`, 'data-emission': String(emission), ...(chartsOpen(emission) ? { open: '' } : {}) },
    el('summary', {}, t('desk.charts.summary')),
    ...['sales', 'prizes'].map((c) => el('figure', { class: 'desk-chart', id: `${c}-${emission}`, 'data-emission': String(emission) })));
  charts.addEventListener('toggle', () => {
    state.open[emission] = charts.open;
    if (charts.open && !charts.dataset.loaded) {
      charts.dataset.loaded = '1';
      drawSales(report);
      drawPrizes(report);
    }
  });
  return el('article', { class: 'desk-emission', 'data-emission': String(report.emission), 'aria-labelledby': `emission-${report.emission}` },
    el('h3', { id: `emission-${report.emission}` }, t('desk.emission.title', { n: report.emission, code: report.code })),
    facts,
    actions,
    figure,
    charts,
    // The table scrolls inside its box on a narrow screen, not the page.
    el('div', { class: 'desk-table-wrap', tabindex: '0', role: 'region', 'aria-label': t('desk.blocks.caption', { n: report.emission }) }, table));
}

/** Whether emission `emission`'s charts box is open: as the operator left it, else only the newest emission's. */
function chartsOpen(emission) {
  if (emission in state.open) return state.open[emission];
  const newest = Math.max(...(state.reports?.emissions ?? []).map((r) => r.emission));
  return emission === newest;
}

function renderEmissions(list) {
  $('desk-emissions-empty').hidden = list.length > 0;
  $('emission-list').replaceChildren(...list.map(renderEmission));
  for (const report of list) {
    drawRisk(report);
    const charts = $(`charts-${report.emission}`);
    if (charts.open) {
      charts.dataset.loaded = '1';
      drawSales(report);
      drawPrizes(report);
    }
  }
  drawShops();
}

// ------------------------------------------------------------ actions, each confirmed

/** Asks `text` in the confirmation dialog; true when confirmed (Escape and "Annuler": false). */
function confirmed(text) {
  const dialog = $('desk-confirm');
  $('confirm-text').textContent = text;
  return new Promise((resolve) => {
    const done = (answer) => {
      $('confirm-yes').onclick = $('confirm-no').onclick = dialog.oncancel = null;
      dialog.close();
      document.body.dataset.confirm = '';
      resolve(answer);
    };
    $('confirm-yes').onclick = () => done(true);
    $('confirm-no').onclick = () => done(false);
    dialog.oncancel = (e) => { e.preventDefault(); done(false); };
    dialog.showModal();
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
  } catch (error) {
    showOutcome(null, t('desk.refused', { message: error.message }));
    return null;
  } finally {
    document.body.dataset.state = 'idle';
    document.body.dataset.acted = String(Number(document.body.dataset.acted || 0) + 1);
  }
}

const ratio = (fraction) => {
  const [numerator, denominator] = String(fraction).split('/');
  return Number(numerator) / Number(denominator || 1);
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
  } catch (failure) {
    state.check = null;
    $('new-preview').hidden = true;
    error.textContent = t('desk.new.refused', { message: failure.message });
    error.hidden = false;
  } finally {
    document.body.dataset.state = 'idle';
  }
}

function renderPreview(check) {
  const figures = check.figures;
  const pct = (fraction) => new Intl.NumberFormat(locale(), { style: 'percent', minimumFractionDigits: 2, maximumFractionDigits: 4 }).format(ratio(fraction));
  const fact = (label, value, key) => el('div', { 'data-fact': key }, el('dt', {}, label), el('dd', {}, value));
  $('preview-title').textContent = t('desk.new.preview', { code: check.code, game: check.game });
  $('preview-facts').replaceChildren(
    fact(t('desk.emission.table'), el('span', { class: 'mono', title: check.digest }, `${check.digest.slice(0, 16)}…`), 'digest'),
    fact(t('desk.emission.price'), money(check.price_cents), 'price'),
    fact(t('desk.emission.blocksize'), num(check.block_size), 'block_size'),
    fact(t('desk.new.rtp'), t('desk.new.exact', { decimal: pct(figures.rtp), exact: figures.rtp }), 'rtp'),
    fact(t('desk.new.hit'), t('desk.new.exact', { decimal: pct(figures.hit_rate), exact: figures.hit_rate }), 'hit_rate'),
    fact(t('desk.new.largest'), money(figures.largest_prize_cents), 'largest'),
    fact(t('desk.new.risk'), t('desk.new.risk.value', {
      p99: money(figures.block_risk.p99_cents), sales: money(check.price_cents * check.block_size),
      exceed: new Intl.NumberFormat(locale(), { maximumSignificantDigits: 3 }).format(figures.block_risk.p_prizes_exceed_sales),
    }), 'risk'));
  const rules = [
    ...check.refusals.map((r) => el('li', { class: 'refused' }, t('desk.new.refusal', { why: r }))),
    ...check.deviations.map((d) => el('li', { class: 'deviation' }, d)),
  ];
  if (rules.length === 0) rules.push(el('li', {}, t('desk.new.regulation')));
  $('preview-rules').replaceChildren(...rules);
  $('new-create').hidden = !check.accepted;
  $('new-preview').dataset.accepted = String(check.accepted);
}

async function createEmission() {
  const check = state.check;
  const blocks = Number($('new-blocks').value);
  const channel = $('new-channel').value;
  if (!check || $('new-table').value !== state.checkedText) {
    showOutcome(null, t('desk.new.changed'));
    return;
  }
  if (!Number.isInteger(blocks) || blocks < 1 || blocks > 20) {
    showOutcome(null, t('desk.blocks.bad'));
    return;
  }
  const notice = $('new-notice').value.trim();
  const question = t('desk.confirm.create', { code: check.code, blocks, channel: t(`desk.emission.channel.${channel}`) });
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
  const emission = Number(button.dataset.emission);
  if (button.dataset.act === 'more') {
    const blocks = Number($(`more-${emission}`).value);
    if (!Number.isInteger(blocks) || blocks < 1 || blocks > 20) {
      showOutcome(null, t('desk.blocks.bad'));
      return;
    }
    const out = await act(t('desk.confirm.more', { n: emission, blocks }), 'POST', `/api/admin/emissions/${emission}/blocks`, { blocks });
    if (out) showOutcome(t('desk.done.more', { n: emission, blocks }));
  } else if (button.dataset.act === 'close') {
    const date = $(`close-date-${emission}`).value;
    const ref = $(`close-ref-${emission}`).value.trim();
    if (!/^\d{4}-\d{2}-\d{2}$/.test(date)) {
      showOutcome(null, t('desk.close.baddate'));
      return;
    }
    const body = { closing_notice_date: date, ...(ref ? { closing_notice_ref: ref } : {}) };
    const out = await act(t('desk.confirm.close', { n: emission, date: dayOf(date) }), 'POST', `/api/admin/emissions/${emission}/close`, body);
    if (out !== null) showOutcome(t('desk.done.closed', { n: emission, until: dateOf(out.claim_end_ms) }));
  } else if (button.dataset.act === 'print' || button.dataset.act === 'print-nocodes') {
    await downloadPrint(emission, Number($(`print-${emission}`).value), button.dataset.act === 'print');
  } else if (button.dataset.act === 'certify') {
    await downloadCertification(emission, button);
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
  } catch (error) {
    showOutcome(null, t('desk.refused', { message: error.message }));
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
  } catch (error) {
    showOutcome(null, t('desk.refused', { message: error.message }));
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

// desk.js: the operator's desk at `/desk` (docs/operating.md "The desk
// page"). The operator signs in with an operator token, checked at once
// (GET /api/admin/version) and kept in this tab's sessionStorage: never in
// the address, gone when the tab closes. The page then shows the system's
// health (GET /api/admin/health) and every emission's figures per block
// (GET /api/admin/emissions: the figures of `as-capone report --json`),
// refreshed every REFRESH_MS and on demand. Every figure is written from
// the server's integers (cents, counts); each cell keeps its raw value in
// `data-value` (the browser tests compare them with the report).

import { request, ApiError } from './api.js';
import { t, setLang, lang, money, LANGS } from './i18n.js';
import './desk-strings.js';
import { download, printCell, printPath } from './desk-files.js';

const $ = (id) => document.getElementById(id);
const KEY = { token: 'asc.deskToken', lang: 'asc.lang' };
const REFRESH_MS = 10_000;
const session = {
  get(k) {
    try { return sessionStorage.getItem(k); } catch { return null; }
  },
  set(k, v) {
    try { if (v == null) sessionStorage.removeItem(k); else sessionStorage.setItem(k, v); } catch { /* storage off: this page only */ }
  },
};
const local = {
  get(k) {
    try { return localStorage.getItem(k); } catch { return null; }
  },
  set(k, v) {
    try { localStorage.setItem(k, v); } catch { /* private mode */ }
  },
};

// The desk's state: the operator token, the server's last answers, and
// `loads`: refreshes finished so far (the browser tests wait on it);
// `last`: the previous health, for the actions per second between two.
const state = { token: session.get(KEY.token), version: null, health: null, reports: null, last: null, rate: null, loads: 0, timer: null, open: {} };

const locale = () => (lang() === 'fr' ? 'fr-FR' : 'en-GB');
const num = (n) => new Intl.NumberFormat(locale()).format(n);
const dateOf = (ms) => new Intl.DateTimeFormat(locale(), { dateStyle: 'medium', timeStyle: 'short' }).format(new Date(ms));
const timeOf = (ms) => new Intl.DateTimeFormat(locale(), { timeStyle: 'medium' }).format(new Date(ms));
const duration = (s) => {
  const d = Math.floor(s / 86400), h = Math.floor((s % 86400) / 3600), m = Math.floor((s % 3600) / 60);
  const days = lang() === 'fr' ? 'j' : 'd';
  return d > 0 ? `${d} ${days} ${h} h` : h > 0 ? `${h} h ${m} min` : `${m} min ${s % 60} s`;
};
const percent = (decimal) => new Intl.NumberFormat(locale(), { style: 'percent', minimumFractionDigits: 2, maximumFractionDigits: 2 }).format(Number(decimal));

/** An element with its text (never HTML: every word is the server's or ours, as text). */
function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v == null) continue;
    if (k === 'class') e.className = v;
    else e.setAttribute(k, v);
  }
  for (const c of children) e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return e;
}

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

// ------------------------------------------------------------ a block's risk, drawn

const SVG = 'http://www.w3.org/2000/svg';
function svg(tag, attrs = {}, text = null) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  if (text != null) e.textContent = text;
  return e;
}

/**
 * The distribution of a whole block's total prizes (exact computation,
 * GET /api/admin/emissions/{id}/risk, fetched once per emission: it never
 * changes), its mean, 99th percentile and the block's sales, and each
 * block's prizes won so far (from the figures already shown) marked on it.
 */
async function drawRisk(r) {
  const figure = $(`risk-${r.emission}`);
  if (!figure) return;
  state.risk = state.risk || {};
  let chart = state.risk[r.emission];
  if (!chart) {
    try {
      chart = await request('GET', `/api/admin/emissions/${r.emission}/risk`, { token: state.token });
      state.risk[r.emission] = chart;
    } catch (e) {
      figure.replaceChildren(el('figcaption', { class: 'hint' }, t('desk.refused', { message: e.message })));
      return;
    }
  }
  const W = 640, H = 180, L = 10, R = 10, T = 12, B = 40;
  const span = chart.bin_cents * chart.bins.length;
  const x = (cents) => L + Math.min(Math.max((cents - chart.first_cents) / span, 0), 1) * (W - L - R);
  const top = Math.max(...chart.bins) || 1;
  const y = (p) => H - B - (p / top) * (H - T - B);
  const base = H - B;
  let d = `M ${x(chart.first_cents).toFixed(1)} ${base}`;
  chart.bins.forEach((p, i) => {
    d += ` L ${x(chart.first_cents + (i + 0.5) * chart.bin_cents).toFixed(1)} ${y(p).toFixed(1)}`;
  });
  d += ` L ${x(chart.first_cents + span).toFixed(1)} ${base} Z`;
  const capId = `risk-cap-${r.emission}`;
  const g = svg('svg', { viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-labelledby': capId, class: 'desk-risk-svg' });
  g.append(svg('path', { d, fill: 'rgba(224, 181, 74, .35)', stroke: '#e0b54a', 'stroke-width': 1.5, 'data-part': 'distribution' }));
  g.append(svg('line', { x1: L, x2: W - R, y1: base, y2: base, stroke: '#b9c7bd', 'stroke-width': 1 }));
  const vline = (cents, color, dash, part) => g.append(svg('line', {
    x1: x(cents), x2: x(cents), y1: T, y2: base, stroke: color, 'stroke-width': 1.5, 'stroke-dasharray': dash, 'data-part': part,
  }));
  vline(chart.mean_cents, '#f3efe4', '4 3', 'mean');
  vline(chart.p99_cents, '#ffd166', '2 3', 'p99');
  if (chart.block_sales_cents >= chart.first_cents && chart.block_sales_cents <= chart.first_cents + span) {
    vline(chart.block_sales_cents, '#ff7a6b', '', 'sales');
  }
  // Each block's running figure, from the figures shown above.
  for (const b of r.blocks) {
    const cx = x(b.prizes_won_cents);
    g.append(svg('circle', { cx, cy: base, r: 5, fill: '#4cc38a', stroke: '#10251b', 'data-part': 'block', 'data-block': b.block }));
    g.append(svg('text', { x: cx, y: base + 16, 'text-anchor': 'middle', fill: '#4cc38a', 'font-size': 11 }, String(b.block)));
  }
  for (const [cents, anchor] of [[chart.first_cents, 'start'], [chart.first_cents + span, 'end']]) {
    g.append(svg('text', { x: x(cents), y: H - 6, 'text-anchor': anchor, fill: '#b9c7bd', 'font-size': 11 }, money(Math.round(cents))));
  }
  // The mean's amount beside its line, at the top (clear of the axis' ends).
  const right = x(chart.mean_cents) < W / 2;
  g.append(svg('text', { x: x(chart.mean_cents) + (right ? 4 : -4), y: T + 10, 'text-anchor': right ? 'start' : 'end', fill: '#f3efe4', 'font-size': 11 },
    money(Math.round(chart.mean_cents))));
  const exceed = new Intl.NumberFormat(locale(), { maximumSignificantDigits: 3 }).format(chart.p_prizes_exceed_sales);
  const running = r.blocks.map((b) => t('desk.risk.block', {
    n: b.block, won: money(b.prizes_won_cents), finished: num(b.finished), printed: num(b.printed),
  })).join(' ; ');
  figure.replaceChildren(g, el('figcaption', { id: capId, class: 'hint' },
    t('desk.risk.caption', { mean: money(Math.round(chart.mean_cents)), p99: money(Math.round(chart.p99_cents)), sales: money(chart.block_sales_cents), exceed }),
    ' ', running));
  figure.dataset.drawn = String(r.blocks.length);
}

// ------------------------------------------------------------ sales, prizes and shops, drawn

// The blocks' colours, light on the dark page; past eight, dashed.
const SERIES = ['#4cc38a', '#e0b54a', '#7cc4ff', '#ff9e8f', '#c9a7ff', '#f3efe4', '#9be36c', '#ffd166'];
const seriesStyle = (i) => ({ stroke: SERIES[i % SERIES.length], 'stroke-dasharray': i < SERIES.length ? '' : '5 3' });

/** A width of time in words: "5 min", "1 h", "2 j" / "2 d". */
function span(ms) {
  const units = [[86_400_000, lang() === 'fr' ? 'j' : 'd'], [3_600_000, 'h'], [60_000, 'min'], [1000, 's']];
  const [size, unit] = units.find(([u]) => ms % u === 0 && ms >= u) || [1, 'ms'];
  return `${num(ms / size)} ${unit}`;
}

/** Fetches a chart's data into `figure`; null (and why, in the figure) when refused. */
async function chartData(figure, path) {
  try {
    return await request('GET', path, { token: state.token });
  } catch (e) {
    figure.replaceChildren(el('figcaption', { class: 'hint' }, t('desk.refused', { message: e.message })));
    return null;
  }
}

/** The frame of a chart: its svg, its axes, their end labels. */
function frame(capId, W, H, box, xLabels, yLabels) {
  const g = svg('svg', { viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-labelledby': capId, class: 'desk-risk-svg' });
  const { L, R, T, B } = box;
  g.append(svg('line', { x1: L, x2: W - R, y1: H - B, y2: H - B, stroke: '#b9c7bd', 'stroke-width': 1 }));
  g.append(svg('line', { x1: L, x2: L, y1: T, y2: H - B, stroke: '#b9c7bd', 'stroke-width': 1 }));
  const [x0, x1] = xLabels, [y0, y1] = yLabels;
  if (x0) g.append(svg('text', { x: L, y: H - 6, 'text-anchor': 'start', fill: '#b9c7bd', 'font-size': 11 }, x0));
  if (x1) g.append(svg('text', { x: W - R, y: H - 6, 'text-anchor': 'end', fill: '#b9c7bd', 'font-size': 11 }, x1));
  g.append(svg('text', { x: L - 4, y: H - B, 'text-anchor': 'end', fill: '#b9c7bd', 'font-size': 11 }, y0));
  g.append(svg('text', { x: L - 4, y: T + 8, 'text-anchor': 'end', fill: '#b9c7bd', 'font-size': 11 }, y1));
  return g;
}

/**
 * Sales over time (GET /api/admin/emissions/{id}/sales): the tickets sold
 * so far, cumulated bucket by bucket, one line per block, numbered at its
 * end; the channel and the buckets' width said in the caption.
 */
async function drawSales(r) {
  const figure = $(`sales-${r.emission}`);
  if (!figure) return;
  const c = await chartData(figure, `/api/admin/emissions/${r.emission}/sales`);
  if (!c) return;
  const capId = `sales-cap-${r.emission}`;
  const channel = t(`desk.emission.channel.${c.channel}`);
  if (c.buckets === 0) {
    figure.replaceChildren(el('figcaption', { id: capId, class: 'hint' }, t('desk.sales.none', { channel })));
    figure.dataset.drawn = '0';
    return;
  }
  const W = 640, H = 200, box = { L: 48, R: 28, T: 12, B: 28 };
  const cumulated = c.blocks.map((b) => b.sold.reduce((acc, n) => [...acc, acc[acc.length - 1] + n], [0]));
  const top = Math.max(1, ...c.blocks.map((b) => b.total));
  const x = (k) => box.L + (k / c.buckets) * (W - box.L - box.R);
  const y = (n) => H - box.B - (n / top) * (H - box.T - box.B);
  const end = c.from_ms + c.buckets * c.bucket_ms;
  const g = frame(capId, W, H, box, [dateOf(c.from_ms), dateOf(end)], ['0', num(top)]);
  c.blocks.forEach((b, i) => {
    const d = cumulated[i].map((n, k) => `${k === 0 ? 'M' : 'L'} ${x(k).toFixed(1)} ${y(n).toFixed(1)}`).join(' ');
    g.append(svg('path', { d, fill: 'none', 'stroke-width': 2, ...seriesStyle(i), 'data-part': 'sales', 'data-block': b.block, 'data-total': b.total, 'data-points': cumulated[i].length }));
    g.append(svg('text', { x: W - box.R + 3, y: y(b.total) + 4, fill: SERIES[i % SERIES.length], 'font-size': 11 }, String(b.block)));
  });
  const blocks = c.blocks.map((b) => t('desk.sales.block', { n: b.block, sold: num(b.total) })).join(' ; ');
  figure.replaceChildren(g, el('figcaption', { id: capId, class: 'hint' },
    t('desk.sales.caption', { channel, bucket: span(c.bucket_ms), from: dateOf(c.from_ms), to: dateOf(end) }), ' ', blocks));
  figure.dataset.drawn = String(c.blocks.length);
}

/**
 * Prizes won against the exact expectation (GET /api/admin/emissions/{id}/prizes):
 * the running sum of the finished games' prizes in order of finishing, the
 * line n × E[prize] and the band n × E[prize] ± z √(n × Var[prize]) from
 * the table's exact mean and variance (the server's fractions, drawn from
 * their floating-point values).
 */
async function drawPrizes(r) {
  const figure = $(`prizes-${r.emission}`);
  if (!figure) return;
  const c = await chartData(figure, `/api/admin/emissions/${r.emission}/prizes`);
  if (!c) return;
  const capId = `prizes-cap-${r.emission}`;
  const exact = { mean: money(Math.round(c.mean_cents_approx)), exact: c.mean_cents, z: num(c.z), sd: money(Math.round(Math.sqrt(c.variance_cents2_approx))) };
  if (c.finished === 0) {
    figure.replaceChildren(el('figcaption', { id: capId, class: 'hint' }, t('desk.prizes.none', exact)));
    figure.dataset.drawn = '0';
    return;
  }
  const W = 640, H = 200, box = { L: 64, R: 12, T: 12, B: 28 };
  const N = c.finished, m = c.mean_cents_approx, v = c.variance_cents2_approx, z = c.z;
  const upper = (n) => n * m + z * Math.sqrt(n * v);
  const lower = (n) => Math.max(0, n * m - z * Math.sqrt(n * v));
  const top = Math.max(upper(N), ...c.points.map((p) => p.prizes_won_cents), 1);
  const x = (n) => box.L + (n / N) * (W - box.L - box.R);
  const y = (cents) => H - box.B - (cents / top) * (H - box.T - box.B);
  const g = frame(capId, W, H, box, ['0', num(N)], [money(0), money(Math.round(top))]);
  const steps = Array.from({ length: 81 }, (_, i) => (i / 80) * N);
  const band = [...steps.map((n) => `${x(n).toFixed(1)},${y(upper(n)).toFixed(1)}`),
    ...steps.reverse().map((n) => `${x(n).toFixed(1)},${y(lower(n)).toFixed(1)}`)].join(' ');
  g.append(svg('polygon', { points: band, fill: 'rgba(124, 196, 255, .18)', stroke: 'none', 'data-part': 'band' }));
  g.append(svg('line', { x1: x(0), y1: y(0), x2: x(N), y2: y(N * m), stroke: '#f3efe4', 'stroke-width': 1.5, 'stroke-dasharray': '4 3', 'data-part': 'expected' }));
  const line = [{ finished: 0, prizes_won_cents: 0 }, ...c.points]
    .map((p, i) => `${i === 0 ? 'M' : 'L'} ${x(p.finished).toFixed(1)} ${y(p.prizes_won_cents).toFixed(1)}`).join(' ');
  g.append(svg('path', { d: line, fill: 'none', stroke: '#4cc38a', 'stroke-width': 2, 'data-part': 'won' }));
  for (const p of c.points) {
    g.append(svg('circle', { cx: x(p.finished), cy: y(p.prizes_won_cents), r: 2.5, fill: '#4cc38a', 'data-part': 'point', 'data-finished': p.finished, 'data-value': p.prizes_won_cents }));
  }
  const inside = c.prizes_won_cents >= lower(N) && c.prizes_won_cents <= upper(N);
  figure.replaceChildren(g, el('figcaption', { id: capId, class: 'hint' },
    t('desk.prizes.caption', { ...exact, won: money(c.prizes_won_cents), finished: num(N), expected: money(Math.round(N * m)), low: money(Math.round(lower(N))), high: money(Math.round(upper(N))) }),
    ' ', t(inside ? 'desk.prizes.inside' : 'desk.prizes.outside')));
  figure.dataset.drawn = String(c.points.length);
  figure.dataset.inside = String(inside);
}

const SHOP_BARS = [['sold', '#7cc4ff'], ['redeemed', '#c9a7ff'], ['paid', '#4cc38a'], ['owed', '#e0b54a']];
const SHOP_COLUMNS = [['sold', num], ['redeemed', num], ['paid', num], ['paid_cents', money], ['owed', num], ['owed_cents', money]];

/**
 * The paper channel per shop (GET /api/admin/shops): tickets sold,
 * redeemed, paid and owed, as grouped bars, and every figure with the
 * prizes paid and owed in a table beside it.
 */
async function drawShops() {
  const figure = $('shops-chart');
  if (!figure) return;
  const c = await chartData(figure, '/api/admin/shops');
  if (!c) return;
  const shops = c.shops;
  const head = el('tr', {}, el('th', { scope: 'col' }, t('desk.shops.col.shop')),
    ...SHOP_COLUMNS.map(([f]) => el('th', { scope: 'col', class: 'num' }, t(`desk.shops.col.${f}`))));
  const rows = shops.map((s) => el('tr', { 'data-shop': s.shop }, el('th', { scope: 'row' }, s.shop),
    ...SHOP_COLUMNS.map(([f, show]) => el('td', { class: 'num', 'data-field': f, 'data-value': String(s[f]) }, show(s[f])))));
  $('shops-table').replaceChildren(el('div', { class: 'desk-table-wrap', tabindex: '0', role: 'region', 'aria-label': t('desk.shops.table') },
    el('table', { class: 'desk-table' }, el('caption', { class: 'sr-only' }, t('desk.shops.table')), el('thead', {}, head), el('tbody', {}, ...rows))));
  if (shops.length === 0) {
    figure.replaceChildren(el('figcaption', { id: 'shops-cap', class: 'hint' }, t('desk.shops.none')));
    figure.dataset.drawn = '0';
    return;
  }
  const W = 640, H = 220, box = { L: 40, R: 12, T: 28, B: 28 };
  const top = Math.max(1, ...shops.flatMap((s) => SHOP_BARS.map(([f]) => s[f])));
  const group = (W - box.L - box.R) / shops.length;
  const bar = Math.min(28, (group * 0.8) / SHOP_BARS.length);
  const y = (n) => H - box.B - (n / top) * (H - box.T - box.B);
  const g = frame('shops-cap', W, H, box, ['', ''], ['0', num(top)]);
  SHOP_BARS.forEach(([f, color], i) => {
    const lx = box.L + 8 + i * 120;
    g.append(svg('rect', { x: lx, y: 6, width: 10, height: 10, fill: color }));
    g.append(svg('text', { x: lx + 14, y: 15, fill: '#f3efe4', 'font-size': 11 }, t(`desk.shops.col.${f}`)));
  });
  shops.forEach((s, k) => {
    const left = box.L + k * group + (group - bar * SHOP_BARS.length) / 2;
    SHOP_BARS.forEach(([f, color], i) => {
      g.append(svg('rect', { x: left + i * bar, y: y(s[f]), width: Math.max(bar - 2, 1), height: H - box.B - y(s[f]), fill: color,
        'data-part': 'bar', 'data-shop': s.shop, 'data-field': f, 'data-value': s[f] }));
    });
    g.append(svg('text', { x: box.L + (k + 0.5) * group, y: H - 8, 'text-anchor': 'middle', fill: '#f3efe4', 'font-size': 11 }, s.shop));
  });
  figure.replaceChildren(g, el('figcaption', { id: 'shops-cap', class: 'hint' }, t('desk.shops.caption', { at: dateOf(c.at_ms) })));
  figure.dataset.drawn = String(shops.length * SHOP_BARS.length);
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

/** What an action did, or why not, in the page's status lines. */
function said(done, error = null) {
  $('desk-done').textContent = done || '';
  $('desk-done').hidden = !done;
  $('desk-error').textContent = error || '';
  $('desk-error').hidden = !error;
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
    said(null, t('desk.refused', { message: e.message }));
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

/** Today in Paris, YYYY-MM-DD (the closing notice's date by default). */
function today() {
  return new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/Paris', year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date());
}

/** A calendar day `YYYY-MM-DD` in words (no time zone: it is a date). */
function dayOf(text) {
  const [y, m, d] = text.split('-').map(Number);
  return new Intl.DateTimeFormat(locale(), { dateStyle: 'long', timeZone: 'UTC' }).format(new Date(Date.UTC(y, m - 1, d)));
}

// ------------------------------------------------------------ claims above a shop's ceiling

function renderClaims(c) {
  $('claims-summary').textContent = c.claims.length === 0
    ? t('desk.claims.none', { ceiling: money(c.default_ceiling_cents) })
    : t('desk.claims.summary', { count: num(c.claims.length), owed: money(c.owed_cents), ceiling: money(c.default_ceiling_cents) });
  $('claims-summary').dataset.owed = String(c.owed_cents);
  $('claims-wrap').hidden = c.claims.length === 0;
  const rows = c.claims.map((k, i) => el('tr', { 'data-serial': k.serial, 'data-status': k.status },
    el('th', { scope: 'row', class: 'mono' }, k.serial),
    el('td', { class: 'num', 'data-value': String(k.prize_cents) }, money(k.prize_cents)),
    el('td', {}, t('desk.claims.shop', { shop: k.sold_by ?? '—', ceiling: money(k.shop_ceiling_cents) })),
    el('td', {}, k.claim_until_ms == null ? t('desk.claims.open') : dateOf(k.claim_until_ms)),
    el('td', {}, t(`desk.claims.status.${k.status}`)),
    el('td', {}, k.status === 'paid'
      ? (k.paid_by == null
        ? t('desk.claims.paid', { date: dateOf(k.paid_ms), ref: k.reference })
        : t('desk.claims.paid.shop', { date: dateOf(k.paid_ms), shop: k.paid_by }))
      : k.status === 'expired' ? '—' : el('span', { class: 'desk-claim-pay' },
        el('label', { for: `claim-ref-${i}`, class: 'sr-only' }, t('desk.claims.ref.label', { serial: k.serial })),
        el('input', { id: `claim-ref-${i}`, type: 'text', maxlength: '200', autocomplete: 'off', placeholder: t('desk.claims.ref') }),
        el('button', { type: 'button', 'data-claim': k.serial, 'data-ref': `claim-ref-${i}`, 'data-prize': String(k.prize_cents) }, t('desk.claims.pay'))))));
  $('claims-body').replaceChildren(...rows);
}

async function onClaimAction(ev) {
  const button = ev.target.closest('button[data-claim]');
  if (!button) return;
  const serial = button.dataset.claim;
  const reference = $(button.dataset.ref).value.trim();
  if (!reference) {
    said(null, t('desk.claims.ref.missing'));
    $(button.dataset.ref).focus();
    return;
  }
  const amount = money(Number(button.dataset.prize));
  const out = await act(t('desk.confirm.claim', { serial, amount, reference }), 'POST', '/api/admin/claims/pay', { serial, reference });
  if (out) said(t('desk.done.claim', { serial, amount, reference }));
}

async function createEmission() {
  const c = state.check;
  const blocks = Number($('new-blocks').value);
  const channel = $('new-channel').value;
  if (!c || $('new-table').value !== state.checkedText) {
    said(null, t('desk.new.changed'));
    return;
  }
  if (!Number.isInteger(blocks) || blocks < 1 || blocks > 20) {
    said(null, t('desk.blocks.bad'));
    return;
  }
  const notice = $('new-notice').value.trim();
  const question = t('desk.confirm.create', { code: c.code, blocks, channel: t(`desk.emission.channel.${channel}`) });
  const body = { table: state.checkedText, blocks, channel, ...(notice ? { notice_ref: notice } : {}) };
  const out = await act(question, 'POST', '/api/admin/emissions', body);
  if (out) {
    said(t('desk.done.created', { n: out.emission, blocks: out.blocks.length }));
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
      said(null, t('desk.blocks.bad'));
      return;
    }
    const out = await act(t('desk.confirm.more', { n, blocks }), 'POST', `/api/admin/emissions/${n}/blocks`, { blocks });
    if (out) said(t('desk.done.more', { n, blocks }));
  } else if (button.dataset.act === 'close') {
    const date = $(`close-date-${n}`).value;
    const ref = $(`close-ref-${n}`).value.trim();
    if (!/^\d{4}-\d{2}-\d{2}$/.test(date)) {
      said(null, t('desk.close.baddate'));
      return;
    }
    const body = { closing_notice_date: date, ...(ref ? { closing_notice_ref: ref } : {}) };
    const out = await act(t('desk.confirm.close', { n, date: dayOf(date) }), 'POST', `/api/admin/emissions/${n}/close`, body);
    if (out !== null) said(t('desk.done.closed', { n, until: dateOf(out.claim_end_ms) }));
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
    said(t(codes ? 'desk.done.print' : 'desk.done.print.nocodes', { emission, block }));
    await refresh();
  } catch (e) {
    said(null, t('desk.refused', { message: e.message }));
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
  said(t('desk.certify.wait', { emission }));
  try {
    await download(`/api/admin/emissions/${emission}/certification`, `certification-emission-${emission}.html`, state.token);
    said(t('desk.done.certify', { emission }));
  } catch (e) {
    said(null, t('desk.refused', { message: e.message }));
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
  $('claims-body').addEventListener('click', onClaimAction);
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

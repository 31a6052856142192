// desk-charts.js: the desk's charts, drawn in SVG from the server's figures
// (docs/operating.md "The desk page"): each emission's block risk (GET
// /api/admin/emissions/{id}/risk), its sales over time (.../sales) and its
// prizes won against the exact expectation (.../prizes), and the paper
// channel per shop (GET /api/admin/shops). Each figure says what it shows
// in its caption (the chart's accessible name) and keeps its raw values in
// data attributes (the browser tests read them).

import { request } from './api.js';
import { t, lang, money } from './i18n.js';
import './desk-strings.js';
import { $, el, state, locale, num, dateOf } from './desk-common.js';

// ------------------------------------------------------------ a block's risk, drawn

const SVG = 'http://www.w3.org/2000/svg';
function svg(tag, attrs = {}, text = null) {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, String(value));
  if (text != null) node.textContent = text;
  return node;
}

/**
 * The distribution of a whole block's total prizes (exact computation,
 * GET /api/admin/emissions/{id}/risk, fetched once per emission: it never
 * changes), its mean, 99th percentile and the block's sales, and each
 * block's prizes won so far (from the figures already shown) marked on it.
 * `report`: the emission's figures (GET /api/admin/emissions).
 */
export async function drawRisk(report) {
  const figure = $(`risk-${report.emission}`);
  if (!figure) return;
  state.risk = state.risk || {};
  let risk = state.risk[report.emission];
  if (!risk) {
    try {
      risk = await request('GET', `/api/admin/emissions/${report.emission}/risk`, { token: state.token });
      state.risk[report.emission] = risk;
    } catch (error) {
      figure.replaceChildren(el('figcaption', { class: 'hint' }, t('desk.refused', { message: error.message })));
      return;
    }
  }
  const width = 640, height = 180, margin = { left: 10, right: 10, top: 12, bottom: 40 };
  const span = risk.bin_cents * risk.bins.length;
  const xOf = (cents) => margin.left + Math.min(Math.max((cents - risk.first_cents) / span, 0), 1) * (width - margin.left - margin.right);
  const peak = Math.max(...risk.bins) || 1;
  const yOf = (probability) => height - margin.bottom - (probability / peak) * (height - margin.top - margin.bottom);
  const base = height - margin.bottom;
  let path = `M ${xOf(risk.first_cents).toFixed(1)} ${base}`;
  risk.bins.forEach((probability, i) => {
    path += ` L ${xOf(risk.first_cents + (i + 0.5) * risk.bin_cents).toFixed(1)} ${yOf(probability).toFixed(1)}`;
  });
  path += ` L ${xOf(risk.first_cents + span).toFixed(1)} ${base} Z`;
  const capId = `risk-cap-${report.emission}`;
  const chart = svg('svg', { viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-labelledby': capId, class: 'desk-risk-svg' });
  chart.append(svg('path', { d: path, fill: 'rgba(224, 181, 74, .35)', stroke: '#e0b54a', 'stroke-width': 1.5, 'data-part': 'distribution' }));
  chart.append(svg('line', { x1: margin.left, x2: width - margin.right, y1: base, y2: base, stroke: '#b9c7bd', 'stroke-width': 1 }));
  const vline = (cents, color, dash, part) => chart.append(svg('line', {
    x1: xOf(cents), x2: xOf(cents), y1: margin.top, y2: base, stroke: color, 'stroke-width': 1.5, 'stroke-dasharray': dash, 'data-part': part,
  }));
  vline(risk.mean_cents, '#f3efe4', '4 3', 'mean');
  vline(risk.p99_cents, '#ffd166', '2 3', 'p99');
  if (risk.block_sales_cents >= risk.first_cents && risk.block_sales_cents <= risk.first_cents + span) {
    vline(risk.block_sales_cents, '#ff7a6b', '', 'sales');
  }
  // Each block's running figure, from the figures shown above.
  for (const block of report.blocks) {
    const cx = xOf(block.prizes_won_cents);
    chart.append(svg('circle', { cx, cy: base, r: 5, fill: '#4cc38a', stroke: '#10251b', 'data-part': 'block', 'data-block': block.block }));
    chart.append(svg('text', { x: cx, y: base + 16, 'text-anchor': 'middle', fill: '#4cc38a', 'font-size': 11 }, String(block.block)));
  }
  for (const [cents, anchor] of [[risk.first_cents, 'start'], [risk.first_cents + span, 'end']]) {
    chart.append(svg('text', { x: xOf(cents), y: height - 6, 'text-anchor': anchor, fill: '#b9c7bd', 'font-size': 11 }, money(Math.round(cents))));
  }
  // The mean's amount beside its line, at the top (clear of the axis' ends).
  const right = xOf(risk.mean_cents) < width / 2;
  chart.append(svg('text', { x: xOf(risk.mean_cents) + (right ? 4 : -4), y: margin.top + 10, 'text-anchor': right ? 'start' : 'end', fill: '#f3efe4', 'font-size': 11 },
    money(Math.round(risk.mean_cents))));
  const exceed = new Intl.NumberFormat(locale(), { maximumSignificantDigits: 3 }).format(risk.p_prizes_exceed_sales);
  const running = report.blocks.map((block) => t('desk.risk.block', {
    n: block.block, won: money(block.prizes_won_cents), finished: num(block.finished), printed: num(block.printed),
  })).join(' ; ');
  figure.replaceChildren(chart, el('figcaption', { id: capId, class: 'hint' },
    t('desk.risk.caption', { mean: money(Math.round(risk.mean_cents)), p99: money(Math.round(risk.p99_cents)), sales: money(risk.block_sales_cents), exceed }),
    ' ', running));
  figure.dataset.drawn = String(report.blocks.length);
}

// ------------------------------------------------------------ sales, prizes and shops, drawn

// The blocks' colours, light on the dark page; past eight, dashed.
const SERIES = ['#4cc38a', '#e0b54a', '#7cc4ff', '#ff9e8f', '#c9a7ff', '#f3efe4', '#9be36c', '#ffd166'];
const seriesStyle = (i) => ({ stroke: SERIES[i % SERIES.length], 'stroke-dasharray': i < SERIES.length ? '' : '5 3' });

/** A width of time in words: "5 min", "1 h", "2 j" / "2 d". */
function timeSpan(ms) {
  const units = [[86_400_000, lang() === 'fr' ? 'j' : 'd'], [3_600_000, 'h'], [60_000, 'min'], [1000, 's']];
  const [size, unit] = units.find(([unitMs]) => ms % unitMs === 0 && ms >= unitMs) || [1, 'ms'];
  return `${num(ms / size)} ${unit}`;
}

/** Fetches a chart's data into `figure`; null (and why, in the figure) when refused. */
async function chartData(figure, path) {
  try {
    return await request('GET', path, { token: state.token });
  } catch (error) {
    figure.replaceChildren(el('figcaption', { class: 'hint' }, t('desk.refused', { message: error.message })));
    return null;
  }
}

/**
 * The frame of a chart `width` by `height` whose plot stands inside
 * `margin` (`{left, right, top, bottom}`): its svg, its axes, their end labels.
 */
function frame(capId, width, height, margin, xLabels, yLabels) {
  const chart = svg('svg', { viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-labelledby': capId, class: 'desk-risk-svg' });
  const { left, right, top, bottom } = margin;
  chart.append(svg('line', { x1: left, x2: width - right, y1: height - bottom, y2: height - bottom, stroke: '#b9c7bd', 'stroke-width': 1 }));
  chart.append(svg('line', { x1: left, x2: left, y1: top, y2: height - bottom, stroke: '#b9c7bd', 'stroke-width': 1 }));
  const [xStart, xEnd] = xLabels, [yStart, yEnd] = yLabels;
  if (xStart) chart.append(svg('text', { x: left, y: height - 6, 'text-anchor': 'start', fill: '#b9c7bd', 'font-size': 11 }, xStart));
  if (xEnd) chart.append(svg('text', { x: width - right, y: height - 6, 'text-anchor': 'end', fill: '#b9c7bd', 'font-size': 11 }, xEnd));
  chart.append(svg('text', { x: left - 4, y: height - bottom, 'text-anchor': 'end', fill: '#b9c7bd', 'font-size': 11 }, yStart));
  chart.append(svg('text', { x: left - 4, y: top + 8, 'text-anchor': 'end', fill: '#b9c7bd', 'font-size': 11 }, yEnd));
  return chart;
}

/**
 * Sales over time (GET /api/admin/emissions/{id}/sales): the tickets sold
 * so far, cumulated bucket by bucket, one line per block, numbered at its
 * end; the channel and the buckets' width said in the caption.
 */
export async function drawSales(report) {
  const figure = $(`sales-${report.emission}`);
  if (!figure) return;
  const sales = await chartData(figure, `/api/admin/emissions/${report.emission}/sales`);
  if (!sales) return;
  const capId = `sales-cap-${report.emission}`;
  const channel = t(`desk.emission.channel.${sales.channel}`);
  if (sales.buckets === 0) {
    figure.replaceChildren(el('figcaption', { id: capId, class: 'hint' }, t('desk.sales.none', { channel })));
    figure.dataset.drawn = '0';
    return;
  }
  const width = 640, height = 200, margin = { left: 48, right: 28, top: 12, bottom: 28 };
  const cumulated = sales.blocks.map((block) => block.sold.reduce((sums, sold) => [...sums, sums[sums.length - 1] + sold], [0]));
  const peak = Math.max(1, ...sales.blocks.map((block) => block.total));
  const xOf = (bucket) => margin.left + (bucket / sales.buckets) * (width - margin.left - margin.right);
  const yOf = (sold) => height - margin.bottom - (sold / peak) * (height - margin.top - margin.bottom);
  const end = sales.from_ms + sales.buckets * sales.bucket_ms;
  const chart = frame(capId, width, height, margin, [dateOf(sales.from_ms), dateOf(end)], ['0', num(peak)]);
  sales.blocks.forEach((block, i) => {
    const path = cumulated[i].map((sold, bucket) => `${bucket === 0 ? 'M' : 'L'} ${xOf(bucket).toFixed(1)} ${yOf(sold).toFixed(1)}`).join(' ');
    chart.append(svg('path', { d: path, fill: 'none', 'stroke-width': 2, ...seriesStyle(i), 'data-part': 'sales', 'data-block': block.block, 'data-total': block.total, 'data-points': cumulated[i].length }));
    chart.append(svg('text', { x: width - margin.right + 3, y: yOf(block.total) + 4, fill: SERIES[i % SERIES.length], 'font-size': 11 }, String(block.block)));
  });
  const blocks = sales.blocks.map((block) => t('desk.sales.block', { n: block.block, sold: num(block.total) })).join(' ; ');
  figure.replaceChildren(chart, el('figcaption', { id: capId, class: 'hint' },
    t('desk.sales.caption', { channel, bucket: timeSpan(sales.bucket_ms), from: dateOf(sales.from_ms), to: dateOf(end) }), ' ', blocks));
  figure.dataset.drawn = String(sales.blocks.length);
}

/**
 * Prizes won against the exact expectation (GET /api/admin/emissions/{id}/prizes):
 * the running sum of the finished games' prizes in order of finishing, the
 * line n × E[prize] and the band n × E[prize] ± z √(n × Var[prize]) from
 * the table's exact mean and variance (the server's fractions, drawn from
 * their floating-point values).
 */
export async function drawPrizes(report) {
  const figure = $(`prizes-${report.emission}`);
  if (!figure) return;
  const prizes = await chartData(figure, `/api/admin/emissions/${report.emission}/prizes`);
  if (!prizes) return;
  const capId = `prizes-cap-${report.emission}`;
  const exact = { mean: money(Math.round(prizes.mean_cents_approx)), exact: prizes.mean_cents, z: num(prizes.z), sd: money(Math.round(Math.sqrt(prizes.variance_cents2_approx))) };
  if (prizes.finished === 0) {
    figure.replaceChildren(el('figcaption', { id: capId, class: 'hint' }, t('desk.prizes.none', exact)));
    figure.dataset.drawn = '0';
    return;
  }
  const width = 640, height = 200, margin = { left: 64, right: 12, top: 12, bottom: 28 };
  const finished = prizes.finished, mean = prizes.mean_cents_approx, variance = prizes.variance_cents2_approx, zScore = prizes.z;
  const upper = (games) => games * mean + zScore * Math.sqrt(games * variance);
  const lower = (games) => Math.max(0, games * mean - zScore * Math.sqrt(games * variance));
  const peak = Math.max(upper(finished), ...prizes.points.map((point) => point.prizes_won_cents), 1);
  const xOf = (games) => margin.left + (games / finished) * (width - margin.left - margin.right);
  const yOf = (cents) => height - margin.bottom - (cents / peak) * (height - margin.top - margin.bottom);
  const chart = frame(capId, width, height, margin, ['0', num(finished)], [money(0), money(Math.round(peak))]);
  const steps = Array.from({ length: 81 }, (_, i) => (i / 80) * finished);
  const band = [...steps.map((games) => `${xOf(games).toFixed(1)},${yOf(upper(games)).toFixed(1)}`),
    ...steps.reverse().map((games) => `${xOf(games).toFixed(1)},${yOf(lower(games)).toFixed(1)}`)].join(' ');
  chart.append(svg('polygon', { points: band, fill: 'rgba(124, 196, 255, .18)', stroke: 'none', 'data-part': 'band' }));
  chart.append(svg('line', { x1: xOf(0), y1: yOf(0), x2: xOf(finished), y2: yOf(finished * mean), stroke: '#f3efe4', 'stroke-width': 1.5, 'stroke-dasharray': '4 3', 'data-part': 'expected' }));
  const line = [{ finished: 0, prizes_won_cents: 0 }, ...prizes.points]
    .map((point, i) => `${i === 0 ? 'M' : 'L'} ${xOf(point.finished).toFixed(1)} ${yOf(point.prizes_won_cents).toFixed(1)}`).join(' ');
  chart.append(svg('path', { d: line, fill: 'none', stroke: '#4cc38a', 'stroke-width': 2, 'data-part': 'won' }));
  for (const point of prizes.points) {
    chart.append(svg('circle', { cx: xOf(point.finished), cy: yOf(point.prizes_won_cents), r: 2.5, fill: '#4cc38a', 'data-part': 'point', 'data-finished': point.finished, 'data-value': point.prizes_won_cents }));
  }
  const inside = prizes.prizes_won_cents >= lower(finished) && prizes.prizes_won_cents <= upper(finished);
  figure.replaceChildren(chart, el('figcaption', { id: capId, class: 'hint' },
    t('desk.prizes.caption', {
      ...exact, won: money(prizes.prizes_won_cents), finished: num(finished), expected: money(Math.round(finished * mean)),
      low: money(Math.round(lower(finished))), high: money(Math.round(upper(finished))),
    }),
    ' ', t(inside ? 'desk.prizes.inside' : 'desk.prizes.outside')));
  figure.dataset.drawn = String(prizes.points.length);
  figure.dataset.inside = String(inside);
}

const SHOP_BARS = [['sold', '#7cc4ff'], ['redeemed', '#c9a7ff'], ['paid', '#4cc38a'], ['owed', '#e0b54a']];
const SHOP_COLUMNS = [['sold', num], ['redeemed', num], ['paid', num], ['paid_cents', money], ['owed', num], ['owed_cents', money]];

/**
 * The paper channel per shop (GET /api/admin/shops): tickets sold,
 * redeemed, paid and owed, as grouped bars, and every figure with the
 * prizes paid and owed in a table beside it.
 */
export async function drawShops() {
  const figure = $('shops-chart');
  if (!figure) return;
  const answer = await chartData(figure, '/api/admin/shops');
  if (!answer) return;
  const shops = answer.shops;
  const head = el('tr', {}, el('th', { scope: 'col' }, t('desk.shops.col.shop')),
    ...SHOP_COLUMNS.map(([field]) => el('th', { scope: 'col', class: 'num' }, t(`desk.shops.col.${field}`))));
  const rows = shops.map((shop) => el('tr', { 'data-shop': shop.shop }, el('th', { scope: 'row' }, shop.shop),
    ...SHOP_COLUMNS.map(([field, show]) => el('td', { class: 'num', 'data-field': field, 'data-value': String(shop[field]) }, show(shop[field])))));
  $('shops-table').replaceChildren(el('div', { class: 'desk-table-wrap', tabindex: '0', role: 'region', 'aria-label': t('desk.shops.table') },
    el('table', { class: 'desk-table' }, el('caption', { class: 'sr-only' }, t('desk.shops.table')), el('thead', {}, head), el('tbody', {}, ...rows))));
  if (shops.length === 0) {
    figure.replaceChildren(el('figcaption', { id: 'shops-cap', class: 'hint' }, t('desk.shops.none')));
    figure.dataset.drawn = '0';
    return;
  }
  const width = 640, height = 220, margin = { left: 40, right: 12, top: 28, bottom: 28 };
  const peak = Math.max(1, ...shops.flatMap((shop) => SHOP_BARS.map(([field]) => shop[field])));
  const group = (width - margin.left - margin.right) / shops.length;
  const barWidth = Math.min(28, (group * 0.8) / SHOP_BARS.length);
  const yOf = (count) => height - margin.bottom - (count / peak) * (height - margin.top - margin.bottom);
  const chart = frame('shops-cap', width, height, margin, ['', ''], ['0', num(peak)]);
  SHOP_BARS.forEach(([field, color], i) => {
    const legendX = margin.left + 8 + i * 120;
    chart.append(svg('rect', { x: legendX, y: 6, width: 10, height: 10, fill: color }));
    chart.append(svg('text', { x: legendX + 14, y: 15, fill: '#f3efe4', 'font-size': 11 }, t(`desk.shops.col.${field}`)));
  });
  shops.forEach((shop, index) => {
    const left = margin.left + index * group + (group - barWidth * SHOP_BARS.length) / 2;
    SHOP_BARS.forEach(([field, color], i) => {
      chart.append(svg('rect', { x: left + i * barWidth, y: yOf(shop[field]), width: Math.max(barWidth - 2, 1), height: height - margin.bottom - yOf(shop[field]), fill: color,
        'data-part': 'bar', 'data-shop': shop.shop, 'data-field': field, 'data-value': shop[field] }));
    });
    chart.append(svg('text', { x: margin.left + (index + 0.5) * group, y: height - 8, 'text-anchor': 'middle', fill: '#f3efe4', 'font-size': 11 }, shop.shop));
  });
  figure.replaceChildren(chart, el('figcaption', { id: 'shops-cap', class: 'hint' }, t('desk.shops.caption', { at: dateOf(answer.at_ms) })));
  figure.dataset.drawn = String(shops.length * SHOP_BARS.length);
}

// verify-view.js: the check of a finished ticket (`#v=ID`): verify.js
// re-plays its public record in this browser against the block roots the
// server published, and this screen says the verdict in plain words, with
// the technical detail (the checks, the root, the seeds, every draw, the
// record itself) folded away.
//
// Needs state.js (`state.verdict`, the tokens), api.js, dom.js, i18n.js,
// verify.js and router.js.

import { api } from './api.js';
import { $, el, errorText } from './dom.js';
import { t, tn, lang, money, rankLabel } from './i18n.js';
import { setBusy, show } from './router.js';
import { state, tokenFor } from './state.js';
import { verifyRecord } from './verify.js';

/** The check of ticket `id` (`#v=ID`): its public record, verified in this browser. */
export async function openVerify(id) {
  show('verify');
  setBusy(true);
  state.verdict = null;
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
    const verdict = await verifyRecord(record, { emissions: () => api.emissions() });
    state.verdict = { record, v: verdict };
    renderVerdict(record, verdict);
  } catch (error) {
    $('verdict').textContent = errorText(error);
    $('verdict').dataset.valid = 'false';
  }
  setBusy(false);
  $('verdict').focus?.();
}

/** A draw in short: "7♥ / D♠" from the deck, "D♠" As Capone's card. */
function drawText(draw) {
  if (!draw) return '—';
  return draw.kind === 'deck' ? `${rankLabel(draw.player)}♥ / ${rankLabel(draw.capone)}♠` : `${rankLabel(draw.capone)}♠`;
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

/** A problem verify.js found, in words. */
function problemText(problem) {
  const params = { ...problem };
  if (problem.code === 'leaf_prizes') {
    params.leaf = prizesText(problem.leaf_cents);
    params.record = prizesText(problem.record_cents);
  }
  if (problem.code === 'published') params.date = when(problem.published_ms);
  if (problem.code === 'leaf_malformed') params.field = problem.field;
  if (problem.code === 'draw') {
    params.recorded = drawText(problem.recorded);
    params.computed = drawText(problem.computed);
  }
  if (problem.code === 'result') params.computed = problem.computed ? `${problem.computed.tricks} / ${money(problem.computed.prize_cents)}` : '—';
  return t(`verify.bad.${problem.code}`, params);
}

/** The verdict, the checks passed and failed, the block root, the seeds and every draw. */
export function renderVerdict(record, result) {
  $('verify-intro').textContent = t('verify.intro', { serial: record.serial });
  const verdict = $('verdict');
  // The verdict in plain words first; the technical detail folded away
  // (open by itself when something is wrong).
  verdict.textContent = result.valid ? t('verify.valid') : tn('verify.invalid', result.problems.length);
  verdict.dataset.valid = String(result.valid);
  $('verdict-more').textContent = t(result.valid ? 'verify.valid.more' : 'verify.invalid.more');
  $('verify-details').open = !result.valid;
  $('verify-crypto').textContent = t(`verify.crypto.${result.crypto}`);
  const checks = $('verify-checks');
  checks.replaceChildren();
  for (const check of result.passed) {
    const params = { ...check };
    if (check.code === 'result') params.prize = money(check.prize_cents);
    if (check.code === 'published') params.date = when(check.published_ms);
    checks.append(el('li', { class: 'ok', text: t(`verify.ok.${check.code}`, params) }));
  }
  for (const problem of result.problems) checks.append(el('li', { class: 'bad', text: problemText(problem) }));
  // The block root the record was checked against, and where it was published.
  const block = $('verify-block');
  block.replaceChildren();
  const pub = result.published;
  const rows = [
    ['verify.root', result.root || String(record.root ?? '—'), 'verify-root', true],
    ['verify.where', t('verify.where.text', { code: pub ? pub.code : '—', emission: record.emission ?? '—', block: record.block ?? '—', position: record.position ?? '—' }), 'verify-where', false],
    ['verify.published', pub ? t('verify.published.text', { source: pub.source, date: when(pub.published_ms) }) : t('verify.published.none'), 'verify-published', false],
  ];
  if (pub && pub.root !== result.root) rows.push(['verify.published.root', pub.root, 'verify-published-root', true]);
  for (const [key, value, id, mono] of rows) block.append(el('dt', { text: t(key) }), el('dd', { id, class: mono ? 'mono' : null, text: String(value) }));
  block.dataset.valid = String(!!pub && pub.root === result.root);
  const seeds = $('verify-seeds');
  seeds.replaceChildren();
  for (const [key, value] of [['verify.commitment', record.commitment], ['verify.server_seed', record.server_seed ?? '—'], ['verify.client_seed', record.client_seed]]) {
    seeds.append(el('dt', { text: t(key) }), el('dd', { class: 'mono', text: String(value) }));
  }
  const body = $('verify-draws').tBodies[0];
  body.replaceChildren();
  for (const draw of result.draws) {
    body.append(el('tr', { class: draw.ok ? 'ok' : 'bad' },
      el('td', { text: String(draw.n) }),
      el('td', { text: draw.kind ? t(`verify.kind.${draw.kind}`) : '—' }),
      el('td', { text: drawText(draw.recorded) }),
      el('td', { text: drawText(draw.computed) }),
      el('td', { class: 'mark', 'aria-label': draw.ok ? 'ok' : 'mismatch', text: draw.ok ? '✓' : '✗' })));
  }
  $('verify-raw').textContent = JSON.stringify(record, null, 2);
}

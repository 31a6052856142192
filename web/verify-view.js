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
    const v = await verifyRecord(record, { emissions: () => api.emissions() });
    state.verdict = { record, v };
    renderVerdict(record, v);
  } catch (e) {
    $('verdict').textContent = errorText(e);
    $('verdict').dataset.valid = 'false';
  }
  setBusy(false);
  $('verdict').focus?.();
}

/** A draw in short: "7♥ / D♠" from the deck, "D♠" As Capone's card. */
function drawText(d) {
  if (!d) return '—';
  return d.kind === 'deck' ? `${rankLabel(d.player)}♥ / ${rankLabel(d.capone)}♠` : `${rankLabel(d.capone)}♠`;
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
function problemText(p) {
  const params = { ...p };
  if (p.code === 'leaf_prizes') {
    params.leaf = prizesText(p.leaf_cents);
    params.record = prizesText(p.record_cents);
  }
  if (p.code === 'published') params.date = when(p.published_ms);
  if (p.code === 'leaf_malformed') params.field = p.field;
  if (p.code === 'draw') {
    params.recorded = drawText(p.recorded);
    params.computed = drawText(p.computed);
  }
  if (p.code === 'result') params.computed = p.computed ? `${p.computed.tricks} / ${money(p.computed.prize_cents)}` : '—';
  return t(`verify.bad.${p.code}`, params);
}

/** The verdict, the checks passed and failed, the block root, the seeds and every draw. */
export function renderVerdict(record, v) {
  $('verify-intro').textContent = t('verify.intro', { serial: record.serial });
  const verdict = $('verdict');
  // The verdict in plain words first; the technical detail folded away
  // (open by itself when something is wrong).
  verdict.textContent = v.valid ? t('verify.valid') : tn('verify.invalid', v.problems.length);
  verdict.dataset.valid = String(v.valid);
  $('verdict-more').textContent = t(v.valid ? 'verify.valid.more' : 'verify.invalid.more');
  $('verify-details').open = !v.valid;
  $('verify-crypto').textContent = t(`verify.crypto.${v.crypto}`);
  const checks = $('verify-checks');
  checks.replaceChildren();
  for (const p of v.passed) {
    const params = { ...p };
    if (p.code === 'result') params.prize = money(p.prize_cents);
    if (p.code === 'published') params.date = when(p.published_ms);
    checks.append(el('li', { class: 'ok', text: t(`verify.ok.${p.code}`, params) }));
  }
  for (const p of v.problems) checks.append(el('li', { class: 'bad', text: problemText(p) }));
  // The block root the record was checked against, and where it was published.
  const block = $('verify-block');
  block.replaceChildren();
  const pub = v.published;
  const rows = [
    ['verify.root', v.root || String(record.root ?? '—'), 'verify-root', true],
    ['verify.where', t('verify.where.text', { code: pub ? pub.code : '—', emission: record.emission ?? '—', block: record.block ?? '—', position: record.position ?? '—' }), 'verify-where', false],
    ['verify.published', pub ? t('verify.published.text', { source: pub.source, date: when(pub.published_ms) }) : t('verify.published.none'), 'verify-published', false],
  ];
  if (pub && pub.root !== v.root) rows.push(['verify.published.root', pub.root, 'verify-published-root', true]);
  for (const [k, val, id, mono] of rows) block.append(el('dt', { text: t(k) }), el('dd', { id, class: mono ? 'mono' : null, text: String(val) }));
  block.dataset.valid = String(!!pub && pub.root === v.root);
  const seeds = $('verify-seeds');
  seeds.replaceChildren();
  for (const [k, val] of [['verify.commitment', record.commitment], ['verify.server_seed', record.server_seed ?? '—'], ['verify.client_seed', record.client_seed]]) {
    seeds.append(el('dt', { text: t(k) }), el('dd', { class: 'mono', text: String(val) }));
  }
  const body = $('verify-draws').tBodies[0];
  body.replaceChildren();
  for (const d of v.draws) {
    body.append(el('tr', { class: d.ok ? 'ok' : 'bad' },
      el('td', { text: String(d.n) }),
      el('td', { text: d.kind ? t(`verify.kind.${d.kind}`) : '—' }),
      el('td', { text: drawText(d.recorded) }),
      el('td', { text: drawText(d.computed) }),
      el('td', { class: 'mark', 'aria-label': d.ok ? 'ok' : 'mismatch', text: d.ok ? '✓' : '✗' })));
  }
  $('verify-raw').textContent = JSON.stringify(record, null, 2);
}

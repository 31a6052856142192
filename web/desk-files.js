// desk-files.js: the desk's downloads (docs/operating.md "The desk page"):
// a file fetched with the operator token (never in an address) and saved,
// and what a paper block's line says of its print file's downloads. The
// print file holds the block's play codes (a code opens its ticket): the
// server gives it with the codes only until a ticket of the block is sold,
// and writes every download to the audit log; the desk shows them, read
// from GET /api/admin/emissions (each block's `print_downloads`).

import { t, tn } from './i18n.js';
import './desk-strings.js';

/**
 * Fetches `path` with `token` and saves the file, named as the server says
 * (`Content-Disposition`) or `fallback`; its size. A refusal throws the
 * server's message.
 */
export async function download(path, fallback, token) {
  const r = await fetch(path, { headers: { Authorization: `Bearer ${token}` }, cache: 'no-store' });
  if (!r.ok) {
    let message = r.statusText;
    try { message = (await r.json()).message || message; } catch { /* not JSON */ }
    throw new Error(message);
  }
  const blob = await r.blob();
  const name = /filename="([^"]+)"/.exec(r.headers.get('Content-Disposition') || '');
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = name ? name[1] : fallback;
  a.hidden = true;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
  document.body.dataset.downloaded = String(blob.size);
  return blob.size;
}

/** The path of a paper block's print file, with or without its play codes. */
export const printPath = (emission, block, codes) =>
  `/api/admin/emissions/${emission}/blocks/${block}/print.csv${codes ? '' : '?codes=false'}`;

/**
 * A paper block's print file downloads, as a cell of its line: how many
 * (with the codes among them), the last one's time, operator token and
 * address; and whether the codes may still be downloaded (not once a
 * ticket of the block is sold). The raw figures in data attributes.
 */
export function printCell(b, dateOf) {
  const d = b.print_downloads;
  const td = document.createElement('td');
  // Not a figure (no data-field, which the tests read as one): its own attributes.
  td.dataset.print = 'downloads';
  td.dataset.count = String(d.count);
  td.dataset.withCodes = String(d.with_codes);
  td.dataset.lastMs = d.last ? String(d.last.at_ms) : '';
  const last = d.last && t(d.last.codes ? 'desk.print.last' : 'desk.print.last.nocodes', {
    date: dateOf(d.last.at_ms), token: d.last.operator_token, address: d.last.address,
  });
  const count = d.count === 0 ? t('desk.print.none') : tn('desk.print.count', d.count, { codes: d.with_codes });
  const codes = b.sold > 0 ? t('desk.print.codes.gone') : t('desk.print.codes.open');
  td.textContent = [count, last, codes].filter(Boolean).join(' ; ');
  return td;
}

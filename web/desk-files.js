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
  const response = await fetch(path, { headers: { Authorization: `Bearer ${token}` }, cache: 'no-store' });
  if (!response.ok) {
    let message = response.statusText;
    try { message = (await response.json()).message || message; } catch { /* not JSON */ }
    throw new Error(message);
  }
  const blob = await response.blob();
  const name = /filename="([^"]+)"/.exec(response.headers.get('Content-Disposition') || '');
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = name ? name[1] : fallback;
  link.hidden = true;
  document.body.append(link);
  link.click();
  link.remove();
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
export function printCell(block, dateOf) {
  const downloads = block.print_downloads;
  const td = document.createElement('td');
  // Not a figure (no data-field, which the tests read as one): its own attributes.
  td.dataset.print = 'downloads';
  td.dataset.count = String(downloads.count);
  td.dataset.withCodes = String(downloads.with_codes);
  td.dataset.lastMs = downloads.last ? String(downloads.last.at_ms) : '';
  const last = downloads.last && t(downloads.last.codes ? 'desk.print.last' : 'desk.print.last.nocodes', {
    date: dateOf(downloads.last.at_ms), token: downloads.last.operator_token, address: downloads.last.address,
  });
  const count = downloads.count === 0 ? t('desk.print.none') : tn('desk.print.count', downloads.count, { codes: downloads.with_codes });
  const codes = block.sold > 0 ? t('desk.print.codes.gone') : t('desk.print.codes.open');
  td.textContent = [count, last, codes].filter(Boolean).join(' ; ');
  return td;
}

// seed.js: the player's seed of one ticket, and the fairness box beside
// the table (the commitment, the seed's field), folded under its summary. The server's seed was fixed (and committed in the block's published root)
// before the sale. The player's seed comes after: the browser draws one
// when a ticket opens unplayed, shows it with the ticket's commitment, lets
// the player change it, and sends it with the first card (seq 0). It is
// kept per ticket until the server has recorded it, so a reload shows the
// same seed, and a first card whose answer was lost is sent again with it
// (docs/contract.md "Fairness").
//
// Needs state.js (the open ticket, the storage), api.js (a random key),
// dom.js and i18n.js.

import { randomKey } from './api.js';
import { $, announce } from './dom.js';
import { t } from './i18n.js';
import { state, local, KEY } from './state.js';

/** Printable ASCII without spaces, 1 to 64 characters: the server's rule. */
export const validSeed = (s) => typeof s === 'string' && s.length >= 1 && s.length <= 64 && /^[\x21-\x7e]+$/.test(s);

/** 16 bytes of crypto.getRandomValues, in hex. */
const newSeed = () => randomKey();

/** Before the first action the player's seed is still open. */
export const seedOpen = (tk) => !!tk && tk.seq === 0 && tk.client_seed == null && tk.phase !== 'finished';

/** Keeps (or with `null` forgets) the seed of ticket `id`, for the last 50 tickets. */
export function keepDraft(id, seed) {
  const drafts = local.json(KEY.seeds, {});
  if (seed == null && !(id in drafts)) return;
  delete drafts[id];
  if (seed != null) drafts[id] = seed;
  const ids = Object.keys(drafts);
  for (const k of ids.slice(0, Math.max(0, ids.length - 50))) delete drafts[k];
  local.set(KEY.seeds, JSON.stringify(drafts));
}

/** The ticket just opened: its seed in the field (the one kept, or a new one). */
export function prepareSeed(tk) {
  setSeedError(false);
  if (!seedOpen(tk)) {
    keepDraft(tk.id, null);
    $('ticket-seed').value = '';
    return;
  }
  let seed = local.json(KEY.seeds, {})[tk.id];
  if (!validSeed(seed)) {
    seed = newSeed();
    keepDraft(tk.id, seed);
  }
  $('ticket-seed').value = seed;
}

/** The seed's field unfolded and focused (a seed the server would refuse: said there). */
export function focusSeed() {
  $('fair').open = true;
  $('ticket-seed').focus();
}

/** The seed's field said wrong (or right again). */
export function setSeedError(on) {
  $('ticket-seed-error').hidden = !on;
  if (on) $('ticket-seed').setAttribute('aria-invalid', 'true');
  else $('ticket-seed').removeAttribute('aria-invalid');
}

function onSeedInput() {
  const tk = state.ticket;
  if (!seedOpen(tk)) return;
  const seed = $('ticket-seed').value;
  const ok = validSeed(seed);
  if (ok) {
    keepDraft(tk.id, seed);
    setSeedError(false);
  } else if (!$('ticket-seed-error').hidden || seed.length > 0) {
    setSeedError(true);
  }
}

/** A hash in short: its first 12 and last 4 hex digits. */
const shortHash = (h) => (typeof h === 'string' && h.length > 20 ? `${h.slice(0, 12)}…${h.slice(-4)}` : String(h ?? '—'));

/**
 * The fairness box, folded under its summary (one tap away: on a phone the
 * duel comes first): the commitment, and the seed's field until the first
 * card. Folded again when another ticket opens.
 */
export function renderFair(tk) {
  const box = $('fair');
  if (box.dataset.ticket !== tk.id) {
    box.open = false;
    box.dataset.ticket = tk.id;
  }
  const commitment = $('ticket-commitment');
  commitment.textContent = shortHash(tk.commitment);
  commitment.title = tk.commitment || '';
  commitment.dataset.full = tk.commitment || '';
  const open = seedOpen(tk);
  box.dataset.open = String(open);
  $('fair-hint').textContent = t(open ? 'fair.summary.open' : 'fair.summary.sent');
  $('seed-form').hidden = !open;
  $('seed-after').hidden = open || tk.client_seed == null;
  $('seed-shown-row').hidden = open;
  $('ticket-seed-shown').textContent = tk.client_seed ?? '—';
}

/** The seed's field and its "new seed" button. */
export function initSeed() {
  $('seed-form').addEventListener('submit', (ev) => ev.preventDefault());
  $('ticket-seed').addEventListener('input', onSeedInput);
  $('seed-new').addEventListener('click', () => {
    if (state.busy || !seedOpen(state.ticket)) return;
    const seed = newSeed();
    $('ticket-seed').value = seed;
    keepDraft(state.ticket.id, seed);
    setSeedError(false);
    announce(t('fair.seed.drawn', { seed }));
  });
}

// demo.js: the free demo game, "Essayer gratuitement" (docs/player-api.md
// "Demo games"). POST /api/demo starts the real duel on a schedule drawn
// from the table on sale, with no money and no account; the game opens on
// the ticket screen (`#t=DEMO-...`) with its own token, kept in this
// browser for the last demo only. It never joins "Mes tickets", and every
// screen of it says DÉMO (ticket.js, duel.js).
//
// Needs state.js, api.js, dom.js, i18n.js and router.js.

import { api } from './api.js';
import { $, errorText, showAlert, waitText } from './dom.js';
import { t } from './i18n.js';
import { route, setBusy } from './router.js';
import { deviceExclusion, isDemo, keepDemo } from './state.js';

/** Starts a demo game and opens it. */
export async function startDemo() {
  if (document.body.dataset.state === 'busy') return;
  setBusy(true);
  showAlert('');
  let answer;
  try {
    answer = await api.demo();
  } catch (error) {
    setBusy(false);
    if (error.status === 429) return showAlert(t('demo.slow', { wait: waitText(error.retryAfter ?? 60) }));
    if (error.status === 404) return showAlert(t('demo.off'));
    return showAlert(errorText(error));
  }
  keepDemo(answer.ticket.id, answer.token);
  setBusy(false);
  const target = `#t=${encodeURIComponent(answer.ticket.id)}`;
  if (location.hash === target) route();
  else location.hash = target;
}

/** The DÉMO marks of the ticket screen: the banner, and the page's state for the header's badge. */
export function renderDemo(tk) {
  const demo = isDemo(tk);
  document.body.dataset.demo = String(demo);
  $('demo-banner').hidden = !demo;
  // No other demo during a self-exclusion kept on this device (state.js), as on the welcome.
  $('demo-again').hidden = !(demo && tk.phase === 'finished') || deviceExclusion() != null;
}

/** The controls: the lobby's button and the result's "Rejouer une démo". */
export function initDemo() {
  $('demo-start').addEventListener('click', startDemo);
  $('demo-again').addEventListener('click', startDemo);
}

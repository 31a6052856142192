// router.js: which screen the address shows. The hash routes: `#t=ID` one
// ticket (ticket.js), `#v=ID` the check of a finished ticket
// (verify-view.js), `#/regles`, `#/chances`, `#/limites`, `#/compte` the
// pages of rules.js, limits.js and account.js; anything else the home
// (home.js). Also the page's busy state (`body[data-state]`).
//
// In the operator's mode (operator.js) `#/compte` and `#/limites` are the
// operator's account area and a pointer to its limits, and the home is the
// page "session ended" once the session is over (or its launch refused).
//
// Needs every screen's module (to open and redraw it) and state.js.

import { accountPage } from './account.js';
import { showAlert } from './dom.js';
import { openHome, renderHome } from './home.js';
import { limitsPage } from './limits.js';
import { endedPage, operatorMode, operatorPages, showEnded } from './operator.js';
import { rulesPage, oddsPage } from './rules.js';
import { state } from './state.js';
import { openTicket, renderGame, renderControls } from './ticket.js';
import { openVerify, renderVerdict } from './verify-view.js';

/** The pages of hash routes `#/regles`, `#/chances`, `#/limites`, `#/compte`. */
const PAGES = [rulesPage, oddsPage, limitsPage, accountPage];
const pageFor = (hash) => {
  const page = PAGES.find((x) => hash === `#/${x.hash}`);
  return page && (state.op || operatorMode()) && operatorPages[page.hash] ? operatorPages[page.hash] : page;
};

/** Shows the screen `view` (`#view-{view}`) and hides the others. */
export function show(view) {
  // Another screen starts at its top (not at the last one's scroll, under the sticky header).
  if (document.body.dataset.view && document.body.dataset.view !== view) window.scrollTo(0, 0);
  for (const screen of document.querySelectorAll('#main > .view')) screen.hidden = screen.id !== `view-${view}`;
  document.body.dataset.view = view;
  // A demo game's marks (demo.js) are the ticket screen's only.
  if (view !== 'game') document.body.dataset.demo = 'false';
}

/** Opens the screen of the address's hash. */
export async function route() {
  showAlert('');
  const page = pageFor(location.hash);
  if (page) return page.open();
  const hash = new URLSearchParams(location.hash.slice(1));
  if (hash.get('t')) return openTicket(hash.get('t'));
  if (hash.get('v')) return openVerify(hash.get('v'));
  // The operator's session is over (or its launch refused): no lobby of ours behind that page.
  if (state.ended && !state.token && operatorMode()) return showEnded(state.ended);
  return openHome();
}

/** Draws the screen on show again (a new language, a new touch setting). */
export function rerender() {
  const view = document.body.dataset.view;
  if (view === 'game' && state.ticket) renderGame();
  else if (view === 'home') renderHome();
  else if (view === 'verify' && state.verdict) renderVerdict(state.verdict.record, state.verdict.v);
  else if (view === 'ended') endedPage.render();
  else pageFor(`#/${PAGES.find((p) => p.view === view)?.hash}`)?.render();
}

/** Busy: the page waits for the server, and the table's controls say so. */
export function setBusy(busy) {
  state.busy = busy;
  document.body.dataset.state = busy ? 'busy' : 'idle';
  renderControls();
}

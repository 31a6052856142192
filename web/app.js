// app.js: the As Capone page's entry point (loaded by index.html). It
// shows only what the server decided and recorded: every card of As
// Capone, every deck draw and every result comes from an answer of the
// API (docs/contract.md "HTTP API"); the page never draws a card (it draws
// only the player's seed, which the server mixes into its draws), and
// every amount (the price, the prizes, the balance) is the server's.
//
// Screens (by the URL's hash, router.js): the home (home.js: the welcome,
// the purchase of purchase.js, a paper ticket's code of paper.js, "Mes
// tickets" of history.js, the free demo game of demo.js); `#t=ID` one ticket (ticket.js: the scratch zone
// of scratch.js, the player's seed of seed.js, the duel of art. 3.2 in
// duel.js, the result); `#v=ID` the check of a finished ticket
// (verify-view.js over verify.js); the pages of rules.js, limits.js and
// account.js. `/play?code=...` opens a paper ticket (the printed QR code);
// `/?launch=CODE` an operator's launch (operator.js; its session's flags
// over time in session.js).
// The state they share is state.js; sounds are sound.js; the header's
// settings settings.js.
//
// This module wires the controls to their modules and opens the first
// screen.

import { initAccount } from './account.js';
import { net } from './api.js';
import { $, dayTime, el, errorText, showAlert, waitText } from './dom.js';
import { initDemo } from './demo.js';
import { drawDeck } from './duel.js';
import { moreTickets } from './history.js';
import { forgetToken, openHome, renderHome, useToken } from './home.js';
import { t } from './i18n.js';
import { initLimits } from './limits.js';
import { initOperator, initOperatorPages, launch, takeLaunchCode } from './operator.js';
import { redeem } from './paper.js';
import { buy, completePurchase, loadPrice } from './purchase.js';
import { initQrScan } from './qrscan.js';
import { rerender, route, setBusy, show } from './router.js';
import { initRules } from './rules.js';
import { initScratch } from './scratch.js';
import { initSeed } from './seed.js';
import { startSession, stopSession } from './session.js';
import { applyStrings, initSettings, renderBalance } from './settings.js';
import { state, local, KEY } from './state.js';

// The page's pure helpers, for whoever imports the entry point.
export { normalizePlayCode } from './paper.js';
export { validSeed } from './seed.js';

/** Settings, texts and every screen's controls, then the screen of the address. */
function init() {
  // An operator's one-time code leaves the address bar before anything else.
  const launchCode = takeLaunchCode();
  initSettings();
  applyStrings();
  // The price the buttons say, from the server (it comes in the background).
  loadPrice();
  initScratch();
  net.onRetry = () => {
    const banner = $('netbanner');
    banner.textContent = t('net.retry');
    banner.hidden = false;
  };
  net.onRecovered = () => { $('netbanner').hidden = true; };
  // account.js (the welcome's forms, the account page), rules.js, limits.js (and its 18+ question).
  const ctx = { state, local, KEY, show, route, showAlert, setBusy, errorText, renderBalance, openHome, forgetToken, el, waitText, dayTime,
    operatorMode: () => launchCode != null || !!state.op };
  initOperator({ openHome, startSession, stopSession, rerender, applyStrings });
  initOperatorPages(ctx);
  initAccount(ctx);
  initRules(ctx);
  initLimits(ctx);
  $('token-form').addEventListener('submit', useToken);
  $('buy-form').addEventListener('submit', buy);
  $('tickets-more').addEventListener('click', moreTickets);
  $('paper-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    redeem($('play-code').value);
  });
  // qrscan.js: "Scanner le QR code", the ticket's QR code read by the phone's camera.
  initQrScan();
  $('deck').addEventListener('click', drawDeck);
  initDemo();
  initSeed();
  $('verify-btn').addEventListener('click', () => { location.hash = `#v=${encodeURIComponent(state.ticket.id)}`; });
  // "Acheter un autre ticket": the lobby's purchase, from the result.
  $('again').addEventListener('click', buy);
  $('home-btn').addEventListener('click', () => { location.hash = ''; });
  $('verify-back').addEventListener('click', () => {
    const id = state.verdict ? state.verdict.record.serial : local.get(KEY.current);
    location.hash = id ? `#t=${encodeURIComponent(id)}` : '';
  });
  $('brand').addEventListener('click', (ev) => {
    ev.preventDefault();
    if (location.hash && location.hash !== '#') location.hash = '';
    else route();
  });
  window.addEventListener('hashchange', route);

  if (launchCode != null) return launch(launchCode);
  // A session of the operator's kept in this browser: its timer and checks go on.
  if (state.op) startSession();

  const query = new URLSearchParams(location.search);
  const code = location.pathname.replace(/\/+$/, '').endsWith('/play') ? query.get('code') : null;
  if (code != null) {
    // The play code is a secret: it leaves the address bar (and the history) at once.
    query.delete('code');
    const rest = query.toString();
    history.replaceState(null, '', `${location.pathname}${rest ? `?${rest}` : ''}${location.hash}`);
    $('play-code').value = code;
    // A logged-in player's account loads as on `/` (balance, tickets), and
    // the ticket joins their list.
    return openHome().then(() => redeem(code));
  }
  const pending = local.json(KEY.pendingBuy, null);
  if (pending && state.token) {
    // A purchase whose answer never came: the same key again (at most one ticket).
    show('home');
    renderHome();
    return completePurchase(pending);
  }
  return route();
}

init();

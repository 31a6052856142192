// home.js: the home screen: the welcome (no account yet) or the lobby
// (the purchase, a paper ticket's code, "Mes tickets"), and a player's
// token typed by hand. While a self-exclusion kept on this device runs
// (state.js), the welcome offers no new account and no demo.
//
// Needs state.js, api.js, dom.js, i18n.js, history.js (the list),
// purchase.js (the price), settings.js (the balance), router.js and
// account.js (who the player is), operator.js (the operator's mode: its
// session, and a refused token ends it).

import { onHome as accountOnHome } from './account.js';
import { api } from './api.js';
import { $, dayTime, errorText, showAlert } from './dom.js';
import { loadPaperTickets, loadTickets, renderTickets } from './history.js';
import { t } from './i18n.js';
import { onLobby } from './limits.js';
import { noteMe, sessionRefused } from './operator.js';
import { loadPrice, notePrice } from './purchase.js';
import { setBusy, show } from './router.js';
import { renderBalance } from './settings.js';
import { state, local, KEY, deviceExclusion, isPaper } from './state.js';

/** The home screen, with the player's balance and tickets when there is a token. */
export async function openHome() {
  show('home');
  state.ticket = null;
  renderHome();
  if (state.token) {
    try {
      const [me] = await Promise.all([api.me(state.token).catch(balanceUnknown), loadTickets(false), loadPrice()]);
      if (me) {
        state.balance = me.balance_cents;
        // operator.js: the operator's mode, its flags and its lobby (nothing in the internal mode).
        await noteMe(me);
      }
      // No table on sale to read the price from: the newest ticket's.
      notePrice(state.tickets.find((tk) => !isPaper(tk))?.price_cents);
      renderBalance();
      renderHome();
      if (!me) showAlert(t('op.balance.unavailable'));
      // limits.js: what responsible play says before a purchase (an exclusion, a limit), and the reminder's clock.
      await onLobby();
    } catch (error) {
      if (error.status === 401) forgetToken();
      else showAlert(errorText(error));
    }
  } else {
    // No account: the paper tickets opened on this device, with their results.
    await loadPaperTickets();
    renderHome();
  }
  // account.js: who the player is, and a reminder to keep an account without a login.
  await accountOnHome();
  setBusy(false);
}

/**
 * The operator's wallet did not give the balance (503 `wallet_unavailable`,
 * operator mode): the lobby and the tickets still show, the balance unknown.
 */
function balanceUnknown(error) {
  if (error && error.code === 'wallet_unavailable') return null;
  throw error;
}

/** The token is refused: the page forgets it (and says so). */
export function forgetToken() {
  // The operator's session is over: no welcome of ours, the page says so.
  if (state.op) return sessionRefused();
  state.token = null;
  state.balance = null;
  local.set(KEY.token, null);
  renderBalance();
  renderHome();
  showAlert(t('err.auth'));
}

/** The welcome or the lobby, and the list of tickets. */
export function renderHome() {
  const logged = !!state.token;
  $('welcome').hidden = logged;
  $('lobby').hidden = false;
  $('buy-panel').hidden = !logged;
  if (!logged) $('rg-lobby').hidden = true;
  $('lobby').classList.toggle('solo', !logged);
  renderExclusion();
  renderTickets(logged);
}

/**
 * A self-exclusion kept on this device (state.js, the second outside audit): until its end
 * the welcome offers neither "Créer mon compte" nor the demo, and says why;
 * "Se connecter" stays (the server refuses an excluded account's purchases).
 */
function renderExclusion() {
  const until = deviceExclusion();
  $('welcome-excluded').hidden = until == null;
  $('register-form').hidden = until != null;
  $('demo-panel').hidden = until != null;
  if (until == null) return;
  $('welcome-excluded-title').textContent = t('welcome.excluded.title', { date: dayTime(until) });
  $('welcome-excluded-text').textContent = t('welcome.excluded.text');
}

/** "Utiliser ce jeton": a player's token typed by hand (programs, tests). */
export async function useToken(ev) {
  ev.preventDefault();
  const token = $('token-input').value.trim();
  if (!token) return;
  setBusy(true);
  try {
    const me = await api.me(token);
    state.token = token;
    state.balance = me.balance_cents;
    local.set(KEY.token, token);
    await openHome();
  } catch (error) {
    showAlert(error.status === 401 ? t('welcome.token.bad') : errorText(error));
  } finally {
    setBusy(false);
  }
}

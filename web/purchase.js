// purchase.js: buying a ticket online (the lobby's button and the
// result's "Acheter un autre ticket"), exactly once per click, and the
// price those buttons say: the server's, never the page's.
//
// Needs state.js, api.js, dom.js, i18n.js, rules.js (GET /api/odds),
// limits.js (a refusal by the player's own limits), operator.js (a refusal
// by the operator's wallet), home.js (a refused token), router.js and
// settings.js.

import { api, randomKey } from './api.js';
import { $, el, errorText, showAlert, withPrice } from './dom.js';
import { forgetToken } from './home.js';
import { t, money } from './i18n.js';
import { showPurchaseRefusal } from './limits.js';
import { showWalletRefusal } from './operator.js';
import { setBusy } from './router.js';
import { loadOdds } from './rules.js';
import { renderBalance, renderPrice, setConfirmBuy } from './settings.js';
import { state, local, KEY } from './state.js';

/**
 * The price of a ticket on sale, from the server: the prize table on sale
 * online (`table.price_cents` of GET /api/odds). Never throws: with no
 * table on sale (503 `sold_out`) a ticket's own `price_cents` stands in
 * (`notePrice`), and until then the buttons say no price.
 */
export async function loadPrice() {
  if (state.price != null && state.topPrize != null) return;
  try {
    const odds = await loadOdds();
    notePrice(odds?.table?.price_cents);
    // The lobby's "jusqu'à 15 000 €": the table's largest prize, as the server says it.
    const top = odds?.table?.top_prize_cents;
    if (Number.isSafeInteger(top) && top > 0) {
      state.topPrize = top;
      renderPrice();
    }
  } catch {
    /* no table on sale online: a ticket's price, when one comes */
  }
}

/** A price in cents from the server, kept when the page has none yet; the buttons say it. */
export function notePrice(cents) {
  if (state.price != null || !Number.isSafeInteger(cents)) return;
  state.price = cents;
  renderPrice();
}

/**
 * A purchase: the lobby's button and the result's "Acheter un autre
 * ticket" alike (both say the price). The new ticket opens.
 */
export async function buy(ev) {
  ev.preventDefault();
  if (state.busy || !state.token || $('buy-confirm')) return;
  // "Acheter un ticket à 3,00 € ?" first, unless the player turned it off.
  if (state.confirmBuy && !(await confirmPurchase(document.activeElement))) return;
  if (state.busy || !state.token) return;
  // The key is kept until the server answers: a retry, even after a
  // reload, buys at most one ticket for this click. No client seed here:
  // it goes with the ticket's first card (docs/contract.md "Fairness").
  const pending = { key: randomKey() };
  local.set(KEY.pendingBuy, JSON.stringify(pending));
  await completePurchase(pending);
}

/** Sends the purchase of `pending.key` (again after a reload: at most one ticket). */
export async function completePurchase(pending) {
  setBusy(true);
  showAlert('');
  try {
    const ticket = await api.buy(state.token, pending.key);
    local.set(KEY.pendingBuy, null);
    state.balance = ticket.balance_cents;
    notePrice(ticket.ticket.price_cents);
    renderBalance();
    location.hash = `#t=${encodeURIComponent(ticket.ticket.id)}`;
  } catch (error) {
    local.set(KEY.pendingBuy, null);
    if (showWalletRefusal(error)) { /* operator.js: the operator's wallet said no, or could not say */ }
    else if (error.code === 'insufficient_funds') showAlert(withPrice('buy.funds'));
    else if (error.code === 'sold_out') showAlert(t('buy.soldout'));
    else if (showPurchaseRefusal(error)) { /* limits.js: the player's own limit or self-exclusion */ }
    else if (error.status === 409) showAlert(errorText(error));
    else if (error.status === 401) forgetToken();
    else showAlert(errorText(error));
    setBusy(false);
    // From the result the message is at the top of the page: bring it into view.
    if (document.body.dataset.view === 'game' && !$('alert').hidden) $('alert').scrollIntoView({ block: 'nearest' });
  }
}

// ------------------------------------------------------------ the confirmation

/**
 * Asks "Acheter un ticket à 3,00 € ?" in a modal dialog (the focus stays
 * in it; Escape and "Annuler" cancel): true to buy. "Ne plus demander",
 * ticked and confirmed, turns the question off (⚙ turns it back on).
 */
function confirmPurchase(opener) {
  return new Promise((resolve) => {
    const text = state.price == null ? t('confirm.buy.noprice') : t('confirm.buy', { price: money(state.price) });
    const dialog = el('dialog', { id: 'buy-confirm', class: 'dialog', 'aria-labelledby': 'buy-confirm-title', 'aria-describedby': 'buy-confirm-text' },
      el('h2', { id: 'buy-confirm-title', text: t('confirm.buy.title') }),
      el('p', { id: 'buy-confirm-text', text }),
      el('label', { class: 'switch' }, el('input', { type: 'checkbox', id: 'buy-confirm-never' }), ' ', el('span', { text: t('confirm.buy.never') })),
      el('div', { class: 'actions' },
        el('button', { type: 'button', class: 'primary', id: 'buy-confirm-yes', text: t('confirm.buy.yes') }),
        el('button', { type: 'button', id: 'buy-confirm-no', text: t('confirm.buy.no') })));
    document.body.append(dialog);
    let answered = false;
    const answer = (yes) => {
      if (answered) return;
      answered = true;
      if (yes && $('buy-confirm-never').checked) setConfirmBuy(false, true);
      if (dialog.open) dialog.close();
      dialog.remove();
      if (opener && opener.isConnected && !yes) opener.focus();
      resolve(yes);
    };
    // Escape: no ticket.
    dialog.addEventListener('cancel', (e) => { e.preventDefault(); answer(false); });
    dialog.addEventListener('close', () => answer(false));
    $('buy-confirm-yes').addEventListener('click', () => answer(true));
    $('buy-confirm-no').addEventListener('click', () => answer(false));
    // The focus stays in the dialog: its checkbox and its two buttons.
    dialog.addEventListener('keydown', (ev) => {
      if (ev.key !== 'Tab') return;
      const stops = [$('buy-confirm-never'), $('buy-confirm-yes'), $('buy-confirm-no')];
      const index = stops.indexOf(document.activeElement);
      const next = index < 0 ? 0 : (index + (ev.shiftKey ? stops.length - 1 : 1)) % stops.length;
      ev.preventDefault();
      stops[next].focus();
    });
    dialog.showModal();
    $('buy-confirm-yes').focus();
  });
}

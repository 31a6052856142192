// settings.js: the header's settings (language, animations, sounds), the
// texts of the page in its language, and the header's balance.
//
// Needs state.js (`state.anim`, `state.sound`, `state.balance`, the storage), dom.js,
// i18n.js, sound.js, router.js (a change of language redraws the screen)
// and account.js (the logout button).

import { askLogout } from './account.js';
import { $, ANIM_MS, withPrice } from './dom.js';
import { t, setLang, setTouch, lang, money, LANGS } from './i18n.js';
import { rerender } from './router.js';
import { sound } from './sound.js';
import { state, local, KEY } from './state.js';

/** Every text of the page in its language (again after a change of language or price). */
export function applyStrings() {
  document.documentElement.lang = lang();
  document.title = t('doc.title');
  for (const element of document.querySelectorAll('[data-i18n]')) element.textContent = t(element.dataset.i18n);
  for (const element of document.querySelectorAll('[data-i18n-label]')) element.setAttribute('aria-label', t(element.dataset.i18nLabel));
  const other = LANGS.find((l) => l !== lang());
  $('lang').setAttribute('lang', other);
  renderPrice();
  renderBalance();
}

/** The texts that say a ticket's price: the server's (purchase.js), or none while it has not said it. */
export function renderPrice() {
  $('buy-text').textContent = withPrice('buy.text');
  $('buy').textContent = withPrice('buy.button');
  $('again').textContent = withPrice('result.again');
  // The lobby's top prize (purchase.js, from GET /api/odds): whole euros, "15 000 €".
  const top = $('buy-top');
  top.hidden = state.topPrize == null;
  if (state.topPrize != null) {
    const euros = new Intl.NumberFormat(lang() === 'fr' ? 'fr-FR' : 'en-GB', {
      style: 'currency', currency: 'EUR', maximumFractionDigits: state.topPrize % 100 === 0 ? 0 : 2,
    }).format(state.topPrize / 100);
    top.textContent = t('buy.top', { prize: euros });
    top.dataset.cents = String(state.topPrize);
  }
}

function setAnim(on, persist) {
  state.anim = on;
  document.documentElement.dataset.anim = on ? 'on' : 'off';
  document.documentElement.style.setProperty('--dur', on ? `${ANIM_MS}ms` : '0ms');
  $('anim-toggle').checked = on;
  if (persist) local.set(KEY.anim, on ? '1' : '0');
}

function setSound(on, persist) {
  state.sound = on;
  $('sound-toggle').checked = on;
  document.documentElement.dataset.sound = on ? 'on' : 'off';
  if (persist) local.set(KEY.sound, on ? '1' : '0');
}

/** Whether the page asks "Acheter un ticket à 3,00 € ?" before a purchase (purchase.js); on unless turned off. */
export function setConfirmBuy(on, persist) {
  state.confirmBuy = on;
  $('confirm-toggle').checked = on;
  if (persist) local.set(KEY.confirmBuy, on ? '1' : '0');
}

/** The language, animations, sounds and touch settings: from the address, the storage or the device. */
export function initSettings() {
  const query = new URLSearchParams(location.search);
  const qLang = query.get('lang');
  setLang(qLang || local.get(KEY.lang) || 'fr');
  const reduced = window.matchMedia && window.matchMedia('(prefers-reduced-motion: reduce)').matches;
  const saved = local.get(KEY.anim);
  // ?anim=0 (tests, demos) turns animations off for this visit only.
  setAnim(query.get('anim') === '0' ? false : saved != null ? saved === '1' : !reduced, false);
  $('anim-toggle').addEventListener('change', (e) => setAnim(e.target.checked, true));
  // Sounds: off until the player turns them on (and then kept).
  setSound(local.get(KEY.sound) === '1', false);
  $('sound-toggle').addEventListener('change', (ev) => {
    setSound(ev.target.checked, true);
    if (ev.target.checked) sound('card');
  });
  // The purchase's confirmation: on unless the player said "Ne plus demander".
  setConfirmBuy(local.get(KEY.confirmBuy) !== '0', false);
  $('confirm-toggle').addEventListener('change', (e) => setConfirmBuy(e.target.checked, true));
  // A touch screen is touched, not clicked: "Touchez le paquet".
  const coarse = window.matchMedia && window.matchMedia('(pointer: coarse)');
  setTouch(!!coarse && coarse.matches);
  coarse?.addEventListener?.('change', (change) => {
    setTouch(change.matches);
    applyStrings();
    rerender();
  });
  $('lang').addEventListener('click', () => {
    local.set(KEY.lang, setLang(LANGS.find((l) => l !== lang())));
    applyStrings();
    rerender();
  });
  // account.js: a warning that fits the account (with or without a login).
  $('logout').addEventListener('click', askLogout);
}

/** The header's balance (and the logout button while there is a token). */
export function renderBalance() {
  const box = $('balance-box');
  box.hidden = state.balance == null;
  if (state.balance != null) {
    $('balance').textContent = money(state.balance);
    $('balance').dataset.cents = String(state.balance);
  }
  $('logout').hidden = !state.token;
}

// paper.js: a paper ticket's play code (typed in the lobby, or from the
// printed QR code's address `/play?code=...`) opens its ticket on this
// device, with the ticket's own bearer token.
//
// Needs state.js (the paper tokens), api.js, dom.js, i18n.js, home.js (a
// refused account), and router.js.

import { api } from './api.js';
import { $, clock, errorText, waitText } from './dom.js';
import { forgetToken } from './home.js';
import { t } from './i18n.js';
import { route, setBusy } from './router.js';
import { state, keepPaperToken } from './state.js';

/** Crockford base32, 16 characters; O reads 0, I and L read 1 (as the server does). */
export function normalizePlayCode(text) {
  const code = String(text).toUpperCase().replace(/[\s-]/g, '').replace(/O/g, '0').replace(/[IL]/g, '1');
  if (!/^[0-9A-HJKMNP-TV-Z]{16}$/.test(code)) return null;
  return code.match(/.{4}/g).join('-');
}

/** Too many wrong codes: no new try before this time (unix ms). */
let redeemWaitUntil = 0;

/**
 * Opens the paper ticket of a play code (typed, or from the QR code's
 * address). A logged-in player's token goes with it, so the ticket joins
 * their list; the ticket's own token is kept for this device either way.
 */
export async function redeem(code) {
  const err = $('paper-error');
  err.hidden = true;
  err.dataset.reason = '';
  const norm = normalizePlayCode(code);
  const fail = (msg, reason) => {
    err.textContent = msg;
    err.dataset.reason = reason;
    err.hidden = false;
    $('play-code').setAttribute('aria-invalid', 'true');
    $('play-code').focus();
    setBusy(false);
  };
  const slow = () => {
    const seconds = Math.max(1, Math.ceil((redeemWaitUntil - Date.now()) / 1000));
    return fail(t('paper.slow', { wait: waitText(seconds), time: clock(redeemWaitUntil) }), 'too_many_attempts');
  };
  if (!norm) return fail(t('paper.format'), 'format');
  if (Date.now() < redeemWaitUntil) return slow();
  $('play-code').removeAttribute('aria-invalid');
  setBusy(true);
  let answer;
  try {
    try {
      answer = await api.redeem(norm, state.token || undefined);
    } catch (error) {
      if (!(error.status === 401 && state.token)) throw error;
      // The account is not known to the server (any more): the ticket opens without it.
      forgetToken();
      answer = await api.redeem(norm);
    }
  } catch (error) {
    if (error.status === 400) return fail(t('paper.format'), 'format');
    if (error.status === 404) return fail(t('paper.unknown'), 'unknown');
    if (error.status === 409) {
      return /online/i.test(error.message) ? fail(t('paper.online'), 'online') : fail(t('paper.unsold'), 'unsold');
    }
    if (error.status === 429) {
      redeemWaitUntil = Date.now() + (error.retryAfter ?? 60) * 1000;
      return slow();
    }
    if (error.status === 405 || error.status === 501) return fail(t('paper.unavailable'), 'unavailable');
    if (error.status === 0) return fail(t('err.generic', { message: error.message }), 'network');
    return fail(errorText(error), 'error');
  }
  keepPaperToken(answer.ticket.id, answer.token);
  $('play-code').value = '';
  $('play-code').removeAttribute('aria-invalid');
  const target = `#t=${encodeURIComponent(answer.ticket.id)}`;
  if (location.hash === target) route();
  else location.hash = target;
}

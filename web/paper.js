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
export function normalizePlayCode(s) {
  const c = String(s).toUpperCase().replace(/[\s-]/g, '').replace(/O/g, '0').replace(/[IL]/g, '1');
  if (!/^[0-9A-HJKMNP-TV-Z]{16}$/.test(c)) return null;
  return c.match(/.{4}/g).join('-');
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
    const s = Math.max(1, Math.ceil((redeemWaitUntil - Date.now()) / 1000));
    return fail(t('paper.slow', { wait: waitText(s), time: clock(redeemWaitUntil) }), 'too_many_attempts');
  };
  if (!norm) return fail(t('paper.format'), 'format');
  if (Date.now() < redeemWaitUntil) return slow();
  $('play-code').removeAttribute('aria-invalid');
  setBusy(true);
  let r;
  try {
    try {
      r = await api.redeem(norm, state.token || undefined);
    } catch (e) {
      if (!(e.status === 401 && state.token)) throw e;
      // The account is not known to the server (any more): the ticket opens without it.
      forgetToken();
      r = await api.redeem(norm);
    }
  } catch (e) {
    if (e.status === 400) return fail(t('paper.format'), 'format');
    if (e.status === 404) return fail(t('paper.unknown'), 'unknown');
    if (e.status === 409) {
      return /online/i.test(e.message) ? fail(t('paper.online'), 'online') : fail(t('paper.unsold'), 'unsold');
    }
    if (e.status === 429) {
      redeemWaitUntil = Date.now() + (e.retryAfter ?? 60) * 1000;
      return slow();
    }
    if (e.status === 405 || e.status === 501) return fail(t('paper.unavailable'), 'unavailable');
    if (e.status === 0) return fail(t('err.generic', { message: e.message }), 'network');
    return fail(errorText(e), 'error');
  }
  keepPaperToken(r.ticket.id, r.token);
  $('play-code').value = '';
  $('play-code').removeAttribute('aria-invalid');
  const target = `#t=${encodeURIComponent(r.ticket.id)}`;
  if (location.hash === target) route();
  else location.hash = target;
}

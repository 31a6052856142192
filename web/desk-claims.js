// desk-claims.js: the desk's prizes claimed above a shop's payout ceiling
// (GET /api/admin/claims, docs/shops.md): the list with what is owed, and
// "Payer" with the payment's reference (POST /api/admin/claims/pay), asked
// first like every action of the desk.

import { t, money } from './i18n.js';
import './desk-strings.js';
import { $, el, num, dateOf, showOutcome } from './desk-common.js';

/** The claims (`claims`: GET /api/admin/claims's answer): the summary, and a line per claim. */
export function renderClaims(claims) {
  $('claims-summary').textContent = claims.claims.length === 0
    ? t('desk.claims.none', { ceiling: money(claims.default_ceiling_cents) })
    : t('desk.claims.summary', { count: num(claims.claims.length), owed: money(claims.owed_cents), ceiling: money(claims.default_ceiling_cents) });
  $('claims-summary').dataset.owed = String(claims.owed_cents);
  $('claims-wrap').hidden = claims.claims.length === 0;
  const rows = claims.claims.map((claim, i) => el('tr', { 'data-serial': claim.serial, 'data-status': claim.status },
    el('th', { scope: 'row', class: 'mono' }, claim.serial),
    el('td', { class: 'num', 'data-value': String(claim.prize_cents) }, money(claim.prize_cents)),
    el('td', {}, t('desk.claims.shop', { shop: claim.sold_by ?? '—', ceiling: money(claim.shop_ceiling_cents) })),
    el('td', {}, claim.claim_until_ms == null ? t('desk.claims.open') : dateOf(claim.claim_until_ms)),
    el('td', {}, t(`desk.claims.status.${claim.status}`)),
    el('td', {}, claim.status === 'paid'
      ? (claim.paid_by == null
        ? t('desk.claims.paid', { date: dateOf(claim.paid_ms), ref: claim.reference })
        : t('desk.claims.paid.shop', { date: dateOf(claim.paid_ms), shop: claim.paid_by }))
      : claim.status === 'expired' ? '—' : el('span', { class: 'desk-claim-pay' },
        el('label', { for: `claim-ref-${i}`, class: 'sr-only' }, t('desk.claims.ref.label', { serial: claim.serial })),
        el('input', { id: `claim-ref-${i}`, type: 'text', maxlength: '200', autocomplete: 'off', placeholder: t('desk.claims.ref') }),
        el('button', { type: 'button', 'data-claim': claim.serial, 'data-ref': `claim-ref-${i}`, 'data-prize': String(claim.prize_cents) }, t('desk.claims.pay'))))));
  $('claims-body').replaceChildren(...rows);
}

/**
 * A click in the claims' list: "Payer" pays its claim with the reference
 * typed beside it, through `act` (desk.js: asked first, then the figures
 * refreshed).
 */
export async function onClaimAction(ev, act) {
  const button = ev.target.closest('button[data-claim]');
  if (!button) return;
  const serial = button.dataset.claim;
  const reference = $(button.dataset.ref).value.trim();
  if (!reference) {
    showOutcome(null, t('desk.claims.ref.missing'));
    $(button.dataset.ref).focus();
    return;
  }
  const amount = money(Number(button.dataset.prize));
  const out = await act(t('desk.confirm.claim', { serial, amount, reference }), 'POST', '/api/admin/claims/pay', { serial, reference });
  if (out) showOutcome(t('desk.done.claim', { serial, amount, reference }));
}

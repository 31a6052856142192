// history.js: "Mes tickets", the player's tickets on the home screen: a
// page at a time, each with its status, date, games and tricks, and its
// net result (the prize less the ticket's price, both from the server's
// ticket view); the paper tickets opened on this device with them.
//
// Needs state.js (`state.tickets...`, the paper tokens), api.js, dom.js,
// i18n.js, games.js and router.js (busy while a page loads).

import { request } from './api.js';
import { $, el, day, dayTime, errorText, showAlert } from './dom.js';
import { gamesOf, gameText } from './games.js';
import { t, tn, money } from './i18n.js';
import { renderHome } from './home.js';
import { setBusy } from './router.js';
import { state, paperTokens, isPaper } from './state.js';

/** Tickets per page of "Mes tickets". */
const PAGE = 10;

/**
 * "Mes tickets", a page at a time, newest first. A server that pages
 * (`GET /api/tickets?limit=N&before=ID` answering `next`) sends a page per
 * click; one that does not sends them all, and the page shows them a page
 * at a time.
 */
export async function loadTickets(more) {
  if (!more) await loadPaperTickets();
  const page = (before) => request('GET', `/api/tickets?limit=${PAGE}${before != null ? `&before=${encodeURIComponent(before)}` : ''}`, { token: state.token, retry: true });
  if (!more) {
    const answer = await page(null);
    state.tickets = answer.tickets;
    state.ticketsPaged = Object.prototype.hasOwnProperty.call(answer, 'next');
    state.ticketsNext = answer.next ?? null;
    state.ticketsShown = PAGE;
  } else if (state.ticketsPaged) {
    if (state.ticketsNext == null) return;
    const answer = await page(state.ticketsNext);
    const seen = new Set(state.tickets.map((tk) => tk.id));
    state.tickets = state.tickets.concat(answer.tickets.filter((tk) => !seen.has(tk.id)));
    state.ticketsNext = answer.next ?? null;
  } else {
    state.ticketsShown += PAGE;
  }
}

/**
 * The paper tickets opened on this device, each read with its own token
 * (`state.paperViews`): "Mes tickets" shows their result and whether they
 * were paid, with or without an account. A ticket that cannot be read
 * keeps its line with its serial.
 */
export async function loadPaperTickets() {
  const tokens = paperTokens();
  const views = {};
  await Promise.all(Object.entries(tokens).slice(0, 50).map(async ([id, token]) => {
    try {
      views[id] = (await request('GET', `/api/tickets/${encodeURIComponent(id)}`, { token, retry: false })).ticket;
    } catch { /* its serial alone */ }
  }));
  state.paperViews = views;
}

/** "Plus de tickets": the next page. */
export async function moreTickets() {
  if (state.busy || !state.token) return;
  const before = shownTickets().length;
  setBusy(true);
  try {
    await loadTickets(true);
    renderHome();
    // The keyboard goes on with the first ticket of the new page.
    $('tickets').querySelectorAll(':scope > li')[before]?.querySelector('a')?.focus();
  } catch (error) {
    showAlert(errorText(error));
  } finally {
    setBusy(false);
  }
}

const shownTickets = () => {
  const all = state.tickets || [];
  return state.ticketsPaged ? all : all.slice(0, state.ticketsShown || PAGE);
};
const moreToShow = () => (state.ticketsPaged ? state.ticketsNext != null : (state.tickets || []).length > (state.ticketsShown || PAGE));

/**
 * The list of "Mes tickets": the paper tickets opened on this device, then
 * the player's tickets (when `logged`), a page at a time.
 */
export function renderTickets(logged) {
  const list = $('tickets');
  list.replaceChildren();
  const tickets = logged ? shownTickets() : [];
  // Paper tickets opened on this device and not (or not yet) in the list.
  const listed = new Set((logged ? state.tickets || [] : []).map((tk) => tk.id));
  const paper = Object.keys(paperTokens()).filter((id) => !listed.has(id));
  $('tickets-panel').hidden = !logged && paper.length === 0;
  if (tickets.length === 0 && paper.length === 0) list.append(el('li', { class: 'none', text: t('tickets.none') }));
  for (const id of paper) {
    const view = (state.paperViews || {})[id];
    if (view) {
      list.append(ticketItem(view));
      continue;
    }
    list.append(el('li', { 'data-id': id, 'data-channel': 'paper' }, el('span', { class: 'serial', text: id }), el('span', { class: 'tag', text: t('tickets.paper') }),
      el('a', { class: 'button', href: `#t=${encodeURIComponent(id)}`, text: t('tickets.open') })));
  }
  for (const tk of tickets) list.append(ticketItem(tk));
  $('tickets-more').hidden = !logged || !moreToShow();
}

/** One ticket of the list: its serial, status, date, games, tricks and net result. */
function ticketItem(tk) {
  const done = tk.phase === 'finished';
  const prize = done ? tk.result.prize_cents : 0;
  const paid = tk.status === 'paid';
  const paidAt = tk.retail && tk.retail.paid_ms != null ? tk.retail : null;
  const status = !done ? t('tickets.inplay')
    : paid && paidAt ? t('tickets.paid.at', { prize: money(prize), date: day(paidAt.paid_ms), shop: paidAt.paid_by || t('shop.payment_centre') })
    : paid ? t('tickets.paid', { prize: money(prize) })
      : prize > 0 ? t(isPaper(tk) ? 'tickets.won.paper' : 'tickets.won', { prize: money(prize) }) : t('tickets.lost');
  const games = gamesOf(tk);
  // The date, the games and their tricks, the net result (prize − the
  // ticket's price, both as the server's ticket view says them).
  const facts = [];
  if (tk.sold_ms != null) facts.push(el('span', { class: 'date', text: t('tickets.date', { date: dayTime(tk.sold_ms) }) }));
  facts.push(el('span', { class: 'count', text: tn('tickets.games', games.length) }));
  if (done) facts.push(el('span', { class: 'tricks', text: tn('games.tricks', tk.result.tricks) }));
  if (done && tk.price_cents != null) {
    const net = prize - tk.price_cents;
    const netText = `${net > 0 ? '+' : net < 0 ? '−' : ''}${money(Math.abs(net))}`;
    facts.push(el('span', { class: `net ${net > 0 ? 'up' : 'down'}`, 'data-cents': String(net), 'aria-label': t('tickets.net.label', { net: netText }), text: t('tickets.net', { net: netText }) }));
  }
  const li = el('li', { 'data-id': tk.id, 'data-phase': tk.phase, 'data-status': tk.status || '', 'data-channel': tk.channel || 'online', 'data-games': String(games.length) },
    el('span', { class: 'serial', text: tk.serial }),
    el('span', { class: `status ${done ? (prize > 0 ? 'won' : 'lost') : 'inplay'}`, text: isPaper(tk) ? `${status} · ${t('tickets.paper')}` : status }),
    el('span', { class: 'tk-facts' }, ...facts.flatMap((f, i) => (i ? [' · ', f] : [f]))),
    el('a', { class: `button${done ? '' : ' primary'}`, href: `#t=${encodeURIComponent(tk.id)}`, text: done ? t('tickets.open') : t('tickets.resume') }));
  // Several games: each one, and which decided.
  if (games.length > 1) {
    li.append(el('ol', { class: 'games' }, ...games.map((g, i) => el('li', { 'data-game': String(g.game), 'data-tricks': String(g.tricks), class: i === games.length - 1 ? 'last' : null, text: gameText(g, i === games.length - 1, done) }))));
  }
  return li;
}

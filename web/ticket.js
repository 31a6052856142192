// ticket.js: the screen of one ticket (`#t=ID`): its serial and game, the
// prize table under the scratch zone, the fairness box, the table (the
// hands, the trick, the strip of tricks: duel.js), the prompt, and the
// result. The ticket and its table are rebuilt from the server's answers:
// the ticket view and its public record, replayed by verify.js.
//
// Needs state.js, api.js, dom.js, i18n.js, verify.js (the replay),
// games.js, duel.js, scratch.js, seed.js, sound.js, home.js and
// router.js.

import { api } from './api.js';
import { $, day, dayTime, el, errorText, showAlert } from './dom.js';
import { act, ingest, newView, renderHands, renderHistory, renderTrick } from './duel.js';
import { gameName, gamesOf, gameText } from './games.js';
import { forgetToken, renderHome } from './home.js';
import { t, tn, money } from './i18n.js';
import { setBusy, show } from './router.js';
import { renderScratch } from './scratch.js';
import { notePrice } from './purchase.js';
import { prepareSeed, renderFair } from './seed.js';
import { renderBalance } from './settings.js';
import { sound } from './sound.js';
import { state, local, KEY, tokenFor, hasPaperToken, keepPaperToken, isPaper, isDemo, isDemoId, keepDemo } from './state.js';
import { renderDemo } from './demo.js';
import { replayRecorded } from './verify.js';

/** The screen of ticket `id` (`#t=ID`), and an action a reload left unanswered sent again. */
export async function openTicket(id) {
  show('game');
  $('result').hidden = true;
  setBusy(true);
  local.set(KEY.current, id);
  const token = tokenFor(id);
  try {
    await loadTicket(id, token);
  } catch (error) {
    setBusy(false);
    if (isDemoId(id) && (error.status === 401 || error.status === 404)) {
      // A demo game is kept for a day, and only the last one's token here:
      // forgotten when it is this game's (a newer demo's stays).
      if (tokenFor(id)) keepDemo(null);
      showAlert(t('demo.gone'));
    } else if (error.status === 401 && hasPaperToken(id)) {
      // This device's token for the ticket is refused: its code opens it again.
      keepPaperToken(id, null);
      showAlert(t('paper.token.bad'));
    } else if (error.status === 401) forgetToken();
    else showAlert(errorText(error));
    show('home');
    renderHome();
    return;
  }
  setBusy(false);
  const pending = local.json(KEY.pendingAct, null);
  if (pending && pending.id === id && pending.body && !state.sending) {
    // An action sent before a reload, never answered: the same body again
    // (the same seq, and at seq 0 the same client seed). Applied meanwhile,
    // the server returns its stored answer; refused, the page catches up.
    if (pending.body.seq === state.ticket.seq && state.ticket.phase !== 'finished') return act(pending.body);
    local.set(KEY.pendingAct, null);
  }
}

/**
 * The ticket and its record, as the server has them: the table is rebuilt
 * from the recorded actions and draws (verify.js replays them without the
 * seed), so a reload shows exactly what was played.
 */
export async function loadTicket(id, token) {
  for (let tries = 0; ; tries++) {
    const [{ ticket }, record] = await Promise.all([api.ticket(token, id), api.record(token, id)]);
    if (record.actions.length !== ticket.seq && tries < 3) continue; // an action landed between the two reads
    const { steps } = await replayRecorded(record);
    const view = newView();
    for (const s of steps) for (const e of s.events) ingest(view, e);
    state.ticket = ticket;
    state.view = view;
    // An online ticket's price is the price on sale when the page has none yet.
    if (!isPaper(ticket) && !isDemo(ticket)) notePrice(ticket.price_cents);
    prepareSeed(ticket);
    // A paper ticket was scratched in the shop, by hand.
    state.scratched = ticket.seq > 0 || ticket.phase === 'finished' || isPaper(ticket) || local.json(KEY.scratched, []).includes(id);
    if (state.token && state.balance == null) {
      api.me(state.token).then((m) => { state.balance = m.balance_cents; renderBalance(); }).catch(() => {});
    }
    renderGame();
    return;
  }
}

/** What the player does next, in words (empty once finished). */
export function promptFor(tk) {
  if (tk.phase === 'finished') return '';
  if (!state.scratched) return t('prompt.scratch');
  if (tk.phase === 'play') return t('prompt.play');
  if (tk.phase === 'extra_draw') return t('prompt.extra');
  if (tk.phase === 'tie_break') return state.view.mode === 'extra' ? t('prompt.extratie') : t('prompt.tie');
  return '';
}

/** The whole ticket screen, from the server's last word (`state.ticket`) and the table's model (`state.view`). */
export function renderGame() {
  const tk = state.ticket;
  const game = $('view-game');
  game.dataset.id = tk.id;
  game.dataset.seq = String(tk.seq);
  game.dataset.phase = tk.phase;
  game.dataset.game = String(tk.game);
  $('game-title').textContent = isDemo(tk) ? t('demo.title') : t('ticket.serial', { serial: tk.serial });
  renderDemo(tk);
  $('game-no').textContent = gameName(tk.game);
  $('game-no').classList.toggle('extra', tk.game > 1);
  const won = tn('table.won', tk.tricks_won);
  const lost = tn('table.lost', tk.tricks_lost);
  $('score').textContent = `${won} · ${lost}`;
  $('score').setAttribute('aria-label', t('table.score.label', { won, lost }));
  renderPaperNote(tk);
  renderPrizes(tk);
  renderScratch();
  renderFair(tk);
  renderHands(tk);
  renderTrick(state.view.last, false);
  renderHistory();
  renderGames(tk);
  setDeckCount(state.view.last && state.view.last.kind === 'deck' ? 14 : 16);
  $('prompt').textContent = promptFor(tk);
  renderResult(tk);
  renderControls();
}

/**
 * In an Extra game: a banner on the table until its first trick (the Extra
 * duel won, eight new cards, which game this is), then a line recalling
 * the earlier games under the tricks.
 */
export function renderGames(tk) {
  const games = gamesOf(tk);
  const extra = tk.game > 1 && tk.phase !== 'finished';
  const banner = $('extra-banner');
  banner.hidden = !(extra && state.view.hist.length === 0);
  banner.dataset.game = String(tk.game);
  $('extra-banner-title').textContent = t('extra.banner', { game: gameName(tk.game) });
  const earlier = $('games-earlier');
  earlier.hidden = !extra;
  earlier.textContent = extra ? t('games.earlier', { list: games.slice(0, -1).map((g) => gameText(g, false, false)).join(' · ') }) : '';
}

/** The deck's count: 16, and 14 while its two drawn cards are on the table. */
export function setDeckCount(count) {
  const counter = $('deck').querySelector('.deck-count');
  // Drawn by CSS (::after): the accessible name "Paquet de 16 cartes" then holds all the button's text (axe: label-content-name-mismatch).
  counter.dataset.n = String(count);
  $('deck').dataset.count = String(count);
}

/** The prize table of the ticket (the scratch zone's content), the prize won marked. */
function renderPrizes(tk) {
  const body = $('prizes').tBodies[0];
  body.replaceChildren();
  for (const tricks of ['8', '7', '6', '5']) {
    const cents = tk.prizes_cents[tricks];
    body.append(el('tr', { 'data-tricks': tricks, class: tk.result && String(tk.result.tricks) === tricks && tk.result.prize_cents > 0 ? 'hit' : null },
      el('th', { scope: 'row', text: t('prize.row', { n: tricks }) }),
      el('td', { 'data-cents': cents ?? 0, text: cents ? money(cents) : t('prize.none') })));
  }
}

/** Which controls answer: the cards in play, the deck for a draw, none while busy. */
export function renderControls() {
  const tk = state.ticket;
  if (!tk || document.body.dataset.view !== 'game') return;
  const canPlay = !state.busy && state.scratched && tk.phase === 'play';
  const canDraw = !state.busy && state.scratched && (tk.phase === 'tie_break' || tk.phase === 'extra_draw');
  for (const b of $('player-hand').querySelectorAll('button')) b.setAttribute('aria-disabled', String(!canPlay));
  const deck = $('deck');
  const wantsDraw = tk.phase === 'tie_break' || tk.phase === 'extra_draw';
  deck.disabled = !wantsDraw;
  deck.setAttribute('aria-disabled', String(!canDraw));
  deck.classList.toggle('active', wantsDraw && state.scratched);
  deck.setAttribute('aria-label', wantsDraw ? t('table.deck.active') : t('table.deck.label'));
  $('table').classList.toggle('locked', !state.scratched);
  $('ticket-seed').disabled = state.busy;
  $('seed-new').disabled = state.busy;
  $('buy').disabled = state.busy;
  $('again').disabled = state.busy;
}

/** A paper ticket: where it was sold, and paid. */
function renderPaperNote(tk) {
  const note = $('paper-note');
  note.hidden = !isPaper(tk);
  if (note.hidden) return;
  const retail = tk.retail || {};
  note.dataset.status = tk.status || '';
  note.textContent = retail.paid_ms ? t('ticket.paper.paid', { date: dayTime(retail.paid_ms), shop: retail.paid_by || t('shop.payment_centre') })
    : retail.sold_by ? t('ticket.paper.sold', { shop: retail.sold_by }) : t('ticket.paper');
}

/** Where and until when a paper winner is paid, in words. */
export function claimText(claim) {
  const prize = money(claim.prize_cents);
  if (claim.expired) return t('claim.expired', { date: day(claim.claim_until_ms) });
  const where = claim.pay_at === 'payment_centre' ? t('claim.where.centre', { prize })
    : claim.pay_at === 'any_shop' ? t('claim.where.any', { shop: claim.shop || '' })
      : t('claim.where.seller', { shop: claim.shop || '?' });
  const when = claim.claim_until_ms != null ? t('claim.until', { date: day(claim.claim_until_ms) }) : t('claim.days', { n: claim.claim_days });
  return `${where} ${when}`;
}

async function showClaim(tk) {
  const box = $('result-claim');
  try {
    const claim = await api.claim(tokenFor(tk.id), tk.id);
    if (!state.ticket || state.ticket.id !== tk.id || !claim.pay_at && !claim.expired) return;
    box.dataset.payAt = claim.pay_at || '';
    box.textContent = claimText(claim);
    box.hidden = false;
  } catch {
    // The serial and the prize are shown; the place is the shop's to say.
  }
}

/** The result: won or lost, paid or where to claim it, the games, a celebration for a win just played. */
function renderResult(tk) {
  const box = $('result');
  if (tk.phase !== 'finished' || !tk.result) {
    box.hidden = true;
    return;
  }
  const result = tk.result;
  const won = result.prize_cents > 0;
  const paper = isPaper(tk);
  const demo = isDemo(tk);
  const retail = tk.retail || {};
  const paid = paper && (tk.status === 'paid' || retail.paid_ms != null);
  box.hidden = false;
  box.dataset.won = String(won);
  box.dataset.prize = String(result.prize_cents);
  box.dataset.tricks = String(result.tricks);
  box.dataset.channel = tk.channel || 'online';
  box.dataset.paid = String(paid);
  const lostExtra = !won && result.tricks === 4;
  const prize = money(result.prize_cents);
  $('result-title').textContent = !won ? t('result.lost.title') : paid ? t('result.paid.title') : t('result.won.title');
  $('result-text').textContent = !won ? (lostExtra ? t('result.lost.extra') : tn('result.lost.text', result.tricks))
    : paid ? t('result.paid.text', { n: result.tricks, prize, date: retail.paid_ms ? dayTime(retail.paid_ms) : '—', shop: retail.paid_by || t('shop.payment_centre') })
      : paper ? t('result.won.paper', { n: result.tricks, prize })
        : demo ? t('result.demo.won', { n: result.tricks, prize })
        : t('result.won.text', { n: result.tricks, prize });
  // A paper winner hands this serial over at the counter.
  const serial = $('result-serial');
  serial.hidden = !(paper && won && !paid);
  serial.replaceChildren(t('result.serial'), ' ', el('strong', { class: 'mono', text: tk.serial }));
  // A paper winner: where to be paid (the shop that sold it, any shop, or
  // the operator's payment centre) and until when (GET .../claim).
  const claim = $('result-claim');
  claim.hidden = true;
  claim.textContent = '';
  if (paper && won && !paid) showClaim(tk);
  $('again').hidden = !state.token || paper || demo;
  // A demo belongs to no published block: there is nothing to check it against.
  $('verify-btn').hidden = demo;
  // Every game of the ticket, and the last one, which decided (art. 3.2.5.5).
  const games = gamesOf(tk);
  const recap = $('result-games');
  recap.hidden = games.length < 2;
  $('result-games-list').replaceChildren(...games.map((game, i) => {
    const last = i === games.length - 1;
    return el('li', { 'data-game': String(game.game), 'data-tricks': String(game.tricks), 'data-extra': game.extra || '', class: last ? 'decides' : null, text: gameText(game, last, true) });
  }));
  // A winning ticket just played: a short celebration (the animations allowing).
  box.querySelector('.confetti')?.remove();
  if (won && state.celebrate === tk.id) {
    state.celebrate = null;
    sound('win');
    if (state.anim) {
      const confetti = el('div', { class: 'confetti', 'aria-hidden': 'true' });
      for (let i = 0; i < 14; i++) {
        // Placed through the CSSOM: a style="" attribute is refused by the page's Content-Security-Policy.
        const bit = el('span', { text: i % 2 ? '♥' : '♠' });
        bit.style.setProperty('--x', `${(i * 37) % 100}%`);
        bit.style.setProperty('--d', `${(i % 5) * 70}ms`);
        bit.style.setProperty('--r', `${(i * 53) % 360}deg`);
        confetti.append(bit);
      }
      box.append(confetti);
      setTimeout(() => confetti.remove(), 1600);
    }
  }
}

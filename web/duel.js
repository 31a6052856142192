// duel.js: the duel of art. 3.2 on the table of one ticket: the player's
// hand and As Capone's, the trick (or deck draw) in the middle with its
// suspense, the strip of tricks, and the player's actions (a card, a
// draw), each sent once and retried as is. The page never draws a card:
// every card and outcome comes from the server's events, which `ingest`
// turns into the table's model (`state.view`); a screen reader hears each one.
//
// Needs state.js, api.js, dom.js, i18n.js, verify.js (the ranks),
// seed.js (the seed goes with the first card), sound.js, ticket.js (the
// rest of the screen), settings.js and router.js.

import { api, ApiError } from './api.js';
import { $, ANIM_MS, TURN_MS, announce, cardBack, cardFace, el, errorText, pause, showAlert, sleep } from './dom.js';
import { t, tn, money, rankLabel, cardName } from './i18n.js';
import { setBusy } from './router.js';
import { focusSeed, keepDraft, prepareSeed, seedOpen, setSeedError, validSeed } from './seed.js';
import { renderBalance } from './settings.js';
import { sound } from './sound.js';
import { gameName } from './games.js';
import { state, local, KEY, tokenFor, isPaper, isDemo } from './state.js';
import { loadTicket, promptFor, renderGame, renderGames, setDeckCount } from './ticket.js';
import { RANKS } from './verify.js';

/** An empty table model: no trick yet, the first game's play. */
export function newView() {
  // hist: the tricks of the current game; last: what the trick area shows;
  // mode: 'play' or 'extra' (after four tricks, until the Extra duel is settled).
  return { hist: [], last: null, mode: 'play', extraDraws: [] };
}

/** One server event into the table's model (live play and rebuilds alike). */
export function ingest(view, event) {
  switch (event.type) {
    case 'trick': {
      const entry = { player: event.player, capone: event.capone, outcome: event.outcome, final: event.outcome === 'tie' ? null : event.outcome, decks: [] };
      view.hist.push(entry);
      view.last = { kind: 'trick', player: event.player, capone: event.capone, outcome: event.outcome };
      break;
    }
    case 'deck': {
      const draw = { player: event.player, capone: event.capone, outcome: event.outcome };
      if (view.mode === 'extra') {
        view.extraDraws.push(draw);
        view.last = { kind: 'deck', for: 'extra', ...draw };
      } else {
        const tied = view.hist[view.hist.length - 1];
        if (tied) {
          tied.decks.push(draw);
          if (event.outcome !== 'tie') tied.final = event.outcome;
        }
        view.last = { kind: 'deck', for: 'tie_break', tied, ...draw };
      }
      break;
    }
    case 'game_over':
      view.gameOver = { tricks: event.tricks, next: event.next };
      if (event.next === 'extra_draw') view.mode = 'extra';
      break;
    case 'extra_game':
      view.hist = [];
      view.extraDraws = [];
      view.mode = 'play';
      view.gameOver = null;
      // The Extra duel's two cards stay in view, with the news.
      view.last = view.last && view.last.kind === 'deck' ? { ...view.last, extraGame: event.game } : { kind: 'extra_game', game: event.game };
      break;
    case 'finished':
      view.finished = { tricks: event.tricks, prize_cents: event.prize_cents };
      break;
    default:
      break; // "More event types may be added" (docs/contract.md "HTTP API")
  }
}

/** The sentence a screen reader hears for an event, or null. */
function say(view, event) {
  switch (event.type) {
    case 'trick':
      return t('say.trick', { k: view.hist.length, p: cardName(event.player, 'hearts'), c: cardName(event.capone, 'spades'), outcome: t(`outcome.${event.outcome}`) });
    case 'deck':
      return t('say.deck', { p: rankName(event.player), c: rankName(event.capone), outcome: t(`outcome.${event.outcome}`) });
    case 'game_over':
      return tn('say.gameover', event.tricks);
    case 'extra_game':
      return t('say.extra.won', { n: event.game - 1 });
    case 'finished':
      return event.prize_cents > 0 ? t(isPaper(state.ticket) ? 'say.finished.paper' : isDemo(state.ticket) ? 'say.finished.demo' : 'say.finished.won', { n: event.tricks, prize: money(event.prize_cents) })
        : tn('say.finished.lost', event.tricks);
    default:
      return null;
  }
}
const rankName = (r) => t(`rankname.${r}`);

/** The hands: As Capone's cards face down (the ones left), the player's cards as buttons. */
export function renderHands(tk) {
  const caponeHand = $('capone-hand');
  caponeHand.replaceChildren();
  for (let i = 0; i < 8; i++) caponeHand.append(i < tk.capone_cards_left ? cardBack() : el('span', { class: 'card gone' }));
  caponeHand.setAttribute('aria-label', t('table.capone.label', { n: tk.capone_cards_left }));

  const hand = $('player-hand');
  const focusedCard = document.activeElement && document.activeElement.closest && document.activeElement.closest('#player-hand') ? document.activeElement.dataset.card : null;
  hand.replaceChildren();
  for (const rank of RANKS) {
    if (tk.hand.includes(rank)) {
      const button = el('button', { type: 'button', class: 'card heart', 'data-card': rank, 'aria-label': cardName(rank, 'hearts') },
        // The rank is drawn by CSS (::after): the button's text is then within its name "Valet de cœur" (axe).
        el('span', { class: 'rank', 'aria-hidden': 'true', 'data-rank': rankLabel(rank) }),
        el('span', { class: 'suit', 'aria-hidden': 'true', text: '♥' }),
        el('span', { class: 'pip', 'aria-hidden': 'true', text: '♥' }));
      button.addEventListener('click', () => play(rank, button));
      hand.append(button);
    } else {
      hand.append(el('span', { class: 'card gone', 'data-played': rank }));
    }
  }
  rove(hand, focusedCard);
  if (focusedCard) refocus(focusedCard);
}

/**
 * The hand is one stop of the Tab key (roving focus): the card that had
 * the focus, or the first one, takes it; the arrow keys (Left/Up, Right/Down,
 * Home, End) move between the cards.
 */
function rove(hand, card) {
  const buttons = [...hand.querySelectorAll('button')];
  const current = buttons.find((b) => b.dataset.card === card) || buttons[0];
  for (const b of buttons) b.tabIndex = b === current ? 0 : -1;
  if (hand.dataset.roving) return;
  hand.dataset.roving = 'on';
  hand.addEventListener('focusin', (ev) => {
    const clicked = ev.target.closest('button');
    if (!clicked) return;
    for (const o of hand.querySelectorAll('button')) o.tabIndex = o === clicked ? 0 : -1;
  });
  hand.addEventListener('keydown', (ev) => {
    const all = [...hand.querySelectorAll('button')];
    const index = all.indexOf(document.activeElement);
    if (index < 0 || ev.altKey || ev.ctrlKey || ev.metaKey) return;
    const to = { ArrowRight: index + 1, ArrowDown: index + 1, ArrowLeft: index - 1, ArrowUp: index - 1, Home: 0, End: all.length - 1 }[ev.key];
    if (to == null) return;
    ev.preventDefault();
    all[(to + all.length) % all.length].focus();
  });
}

/** The first card of the hand, focused (a new game's eight cards). */
function focusHand() {
  const first = $('player-hand').querySelector('button');
  if (first) first.focus();
}

/** Keeps the keyboard where the player was: the same card, the next one, or the deck. */
function refocus(card) {
  const buttons = [...$('player-hand').querySelectorAll('button')];
  if (state.ticket.phase !== 'play') return $('deck').focus();
  const same = buttons.find((b) => b.dataset.card === card);
  const next = buttons.find((b) => RANKS.indexOf(b.dataset.card) > RANKS.indexOf(card)) || buttons[buttons.length - 1];
  (same || next || $('main')).focus();
}

/**
 * The middle of the table: the last trick, or the deck draw with both
 * cards, each under its owner's name. `stage` (animations on): 'enter' the
 * player's card comes (or both cards leave the deck), As Capone's still
 * face down; 'turn' As Capone's card turns over; otherwise the cards and
 * the outcome as they stand.
 */
export function renderTrick(last, stage) {
  const playerSlot = $('slot-player');
  const caponeSlot = $('slot-capone');
  const badge = $('trick-badge');
  playerSlot.replaceChildren();
  caponeSlot.replaceChildren();
  badge.textContent = '';
  badge.className = 'badge';
  $('trick').className = 'trick';
  $('trick').dataset.empty = String(!last || last.kind === 'extra_game');
  $('trick').dataset.stage = stage || 'done';
  delete $('trick').dataset.outcome;
  if (!last) return;
  const enter = stage === 'enter' && state.anim;
  const turn = stage === 'turn' && state.anim;
  const hidden = enter; // As Capone's card, face down until it turns
  if (last.kind === 'trick') {
    playerSlot.append(cardFace(last.player, 'hearts', enter ? 'enter-up' : ''));
    caponeSlot.append(hidden ? cardBack('enter-up') : cardFace(last.capone, 'spades', turn ? 'turn-in' : ''));
  } else if (last.kind === 'deck') {
    $('trick').classList.add('from-deck');
    playerSlot.append(cardFace(last.player, 'hearts', `drawn ${enter ? 'enter-deck' : ''}`));
    caponeSlot.append(hidden ? cardBack('drawn enter-deck late') : cardFace(last.capone, 'spades', `drawn ${turn ? 'turn-in' : ''}`));
    if (last.for === 'tie_break' && last.tied) {
      playerSlot.prepend(cardFace(last.tied.player, 'hearts', 'tied'));
      caponeSlot.prepend(cardFace(last.tied.capone, 'spades', 'tied'));
    }
  } else if (last.kind === 'extra_game') {
    badge.textContent = gameName(last.game);
    badge.classList.add('extra');
    return;
  }
  if (enter || turn) return; // the outcome after the cards
  if (last.extraGame) {
    badge.textContent = gameName(last.extraGame);
    badge.classList.add('extra');
    return;
  }
  badge.textContent = t(`outcome.${last.outcome}`);
  badge.classList.add(last.outcome);
  $('trick').dataset.outcome = last.outcome;
}

/** The strip of the current game's tricks (with their deck draws), eight places. */
export function renderHistory() {
  const ol = $('history');
  ol.replaceChildren();
  for (const trick of state.view.hist) {
    const final = trick.final || 'tie';
    const li = el('li', { class: final, 'aria-label': `${cardName(trick.player, 'hearts')} / ${cardName(trick.capone, 'spades')} : ${t(`outcome.${final}`)}` },
      el('span', { class: 'h-p', text: rankLabel(trick.player) + '♥' }),
      el('span', { class: 'h-c', text: rankLabel(trick.capone) + '♠' }));
    if (trick.decks.length) li.append(el('span', { class: 'h-d', 'aria-hidden': 'true', text: trick.decks.map((d) => `${rankLabel(d.player)}/${rankLabel(d.capone)}`).join(' ') }));
    ol.append(li);
  }
  for (let i = state.view.hist.length; i < 8; i++) ol.append(el('li', { class: 'empty', 'aria-hidden': 'true' }));
}


/** The player plays `card` (its `button` marked while the answer comes); the first card carries the seed. */
async function play(card, button) {
  const tk = state.ticket;
  if (state.busy || !state.scratched || tk.phase !== 'play') return;
  const body = { seq: tk.seq, action: 'play', card };
  if (seedOpen(tk)) {
    // The first card carries the player's seed, as the field shows it.
    const seed = $('ticket-seed').value;
    if (!validSeed(seed)) {
      setSeedError(true); // role=alert: said aloud too
      focusSeed();
      return;
    }
    keepDraft(tk.id, seed);
    body.client_seed = seed;
  }
  button.classList.add('pending');
  await act(body);
}

/** The player draws from the deck (a tie break or the Extra duel). */
export async function drawDeck() {
  const tk = state.ticket;
  if (state.busy || !state.scratched || !tk || !(tk.phase === 'tie_break' || tk.phase === 'extra_draw')) return;
  await act({ seq: tk.seq, action: 'draw' });
}

/**
 * Sends one action (`body`, with the ticket's `seq`). A lost answer is
 * retried with this very body (api.js), and after a reload too (it is kept
 * until the server answers): the server returns what it stored. A refusal
 * (the ticket moved on elsewhere) reloads the ticket as the server has it.
 */
export async function act(body) {
  const tk = state.ticket;
  const token = tokenFor(tk.id);
  setBusy(true);
  $('prompt').textContent = t('prompt.wait');
  local.set(KEY.pendingAct, JSON.stringify({ id: tk.id, body }));
  state.sending = true;
  let answer;
  try {
    answer = await api.act(token, tk.id, body);
    local.set(KEY.pendingAct, null);
  } catch (error) {
    local.set(KEY.pendingAct, null);
    state.sending = false;
    if (error instanceof ApiError && (error.status === 409 || error.status === 422)) {
      try {
        await loadTicket(tk.id, token);
        showAlert(t('net.resynced'), 'info');
      } catch (resyncError) {
        showAlert(errorText(resyncError));
      }
    } else {
      showAlert(errorText(error));
      renderGame();
    }
    setBusy(false);
    return;
  }
  state.sending = false;
  if (answer.ticket.id !== tk.id) return setBusy(false);
  state.ticket = answer.ticket;
  if (!seedOpen(state.ticket)) prepareSeed(state.ticket);
  // A paper ticket's prize goes to no wallet: with its own token the answer has no balance.
  if (answer.balance_cents != null) state.balance = answer.balance_cents;
  renderBalance();
  // The hand and score are the server's at once; the middle of the table
  // shows the events in order, each briefly.
  renderHands(state.ticket);
  const sentences = [];
  const newGame = answer.events.some((e) => e.type === 'extra_game');
  for (const event of answer.events) {
    ingest(state.view, event);
    const sentence = say(state.view, event);
    if (sentence) sentences.push(sentence);
    if (event.type === 'trick' || event.type === 'deck') {
      await revealDraw(state.view.last);
      renderHistory();
      sound(event.outcome);
      await pause(1.5);
    } else if (event.type === 'extra_game') {
      // The Extra duel won: eight new cards, said on the table too.
      renderTrick(state.view.last);
      renderHistory();
      renderGames(state.ticket);
      sound('extra');
      await pause(3);
    } else if (event.type === 'finished' && event.prize_cents > 0) {
      state.celebrate = state.ticket.id;
    }
  }
  const prompt = promptFor(state.ticket);
  if (prompt) sentences.push(prompt);
  announce(sentences.join(' '));
  renderGame();
  setBusy(false);
  if (state.ticket.phase === 'finished') $('result').focus();
  else if (state.ticket.phase !== 'play') $('deck').focus();
  // An Extra game: eight new cards, the keyboard on the first one; back
  // from the deck (disabled now: the browser would drop its focus), the hand.
  else if (newGame || [null, document.body, $('main'), $('deck')].includes(document.activeElement)) focusHand();
}

/**
 * A draw with suspense (animations on): the player's card comes (or two
 * cards leave the deck, its count going down), As Capone's card turns over
 * in about 0.6 s, then the outcome. Animations off: at once.
 */
async function revealDraw(last) {
  if (!state.anim || !last || (last.kind !== 'trick' && last.kind !== 'deck')) {
    renderTrick(last);
    return;
  }
  if (last.kind === 'deck') {
    setDeckCount(16);
    renderTrick(last, 'enter');
    sound('card');
    await sleep(ANIM_MS / 2);
    setDeckCount(15);
    await sleep(ANIM_MS / 2);
    setDeckCount(14);
    sound('card');
  } else {
    renderTrick(last, 'enter');
    sound('card');
  }
  await sleep(ANIM_MS + 240);
  const back = $('slot-capone').querySelector('.card.back');
  if (back) back.classList.add('turn-out');
  await sleep(TURN_MS / 2);
  renderTrick(last, 'turn');
  await sleep(TURN_MS / 2);
  renderTrick(last);
}

// session.js: the operator's launch flags over time (docs/operator-integration.md):
//
// - `session_timer`: the time since the session began, in the header;
// - `reality_check_minutes` N: every N minutes of the session a modal
//   dialog says the time played and the net result (GET /api/session:
//   staked, won, net) and asks "Continuer" or "Arrêter". Escape does not
//   close it: it says that an answer is needed. The checks answered are
//   kept per session, so a reload neither skips a check due nor repeats one;
//   "Arrêter" ends the session (operator.js: DELETE /api/sessions/current,
//   then the operator's lobby or the page "session ended");
// - `session_limit_minutes`: the session ends the same way at that time.
//
// One ticker, once a second, drives all three from `sessionClock.now()`
// against the session's start (`state.op.started_ms`, the server's, moved onto
// this browser's clock by the difference seen at the launch, `skew_ms`).

import { $, el } from './dom.js';
import { t, money } from './i18n.js';
import { endSession, operatorApi } from './operator.js';
import { state, local, KEY } from './state.js';

/** The page's clock for the session (the browser tests move it forward to reach a check without waiting). */
export const sessionClock = { now: () => Date.now() };

let ticker = null;
let dialog = null;
let ending = false;

/** Starts the ticker of the operator's session (again: one ticker). */
export function startSession() {
  stopSession();
  ending = false;
  if (!state.op) return;
  ticker = setInterval(tick, 1000);
  tick();
}

/** Stops the ticker, hides the timer and closes a reality check left open. */
export function stopSession() {
  if (ticker != null) clearInterval(ticker);
  ticker = null;
  closeDialog();
  const box = $('session-timer');
  if (box) box.hidden = true;
}

const MIN = 60000;

/** Minutes and seconds since the start: "7:05", "1:02:09". */
export function elapsedClock(ms) {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  const hours = Math.floor(seconds / 3600);
  const minutes = Math.floor((seconds % 3600) / 60);
  const sec = String(seconds % 60).padStart(2, '0');
  return hours > 0 ? `${hours}:${String(minutes).padStart(2, '0')}:${sec}` : `${minutes}:${sec}`;
}

/** A time played in words: "12 min", "1 h 05". */
export function playedText(ms) {
  const minutes = Math.max(0, Math.floor(ms / MIN));
  return minutes < 60 ? t('session.min', { n: minutes }) : t('session.h', { h: Math.floor(minutes / 60), m: String(minutes % 60).padStart(2, '0') });
}

function tick() {
  const op = state.op;
  if (!op || !state.token || !Number.isFinite(op.started_ms)) return;
  const flags = op.flags || {};
  // The server's start, on this browser's clock (a clock set wrong neither hurries nor delays a check).
  const elapsed = Math.max(0, sessionClock.now() - (op.skew_ms || 0) - op.started_ms);
  renderTimer(flags.session_timer ? elapsed : null);
  if (ending) return;
  if (flags.session_limit_minutes > 0 && elapsed >= flags.session_limit_minutes * MIN) {
    ending = true;
    endSession('limit');
    return;
  }
  const every = flags.reality_check_minutes;
  if (every > 0 && !dialog) {
    const due = Math.floor(elapsed / (every * MIN));
    if (due > answered(op.started_ms)) realityCheck(due, elapsed);
  }
}

function renderTimer(elapsed) {
  const box = $('session-timer');
  if (!box) return;
  box.hidden = elapsed == null;
  if (elapsed == null) return;
  const time = $('session-time');
  time.textContent = elapsedClock(elapsed);
  time.setAttribute('datetime', `PT${Math.floor(elapsed / 1000)}S`);
  box.dataset.ms = String(elapsed);
}

/** The last check answered in the session that began at `started` (0: none). */
function answered(started) {
  const record = local.json(KEY.reality, null);
  return record && record.started_ms === started ? record.k : 0;
}

// ------------------------------------------------------------ the reality check

const signed = (cents) => (cents > 0 ? `+${money(cents)}` : money(cents));

async function realityCheck(check, elapsed) {
  const started = state.op.started_ms;
  dialog = el('dialog', { id: 'reality', class: 'dialog reality', role: 'dialog', 'aria-modal': 'true', 'aria-labelledby': 'reality-title', 'aria-describedby': 'reality-text', 'data-k': String(check) },
    el('h2', { id: 'reality-title', text: t('reality.title') }),
    el('p', { id: 'reality-text', text: t('reality.text', { time: playedText(elapsed) }) }),
    el('dl', { class: 'facts reality-facts', id: 'reality-facts', 'aria-busy': 'true' },
      el('div', {}, el('dt', { text: t('reality.staked') }), el('dd', { id: 'reality-staked', text: '…' })),
      el('div', {}, el('dt', { text: t('reality.won') }), el('dd', { id: 'reality-won', text: '…' })),
      el('div', {}, el('dt', { text: t('reality.net') }), el('dd', { id: 'reality-net', text: '…' }))),
    el('p', { id: 'reality-note', class: 'hint', role: 'status' }),
    el('div', { class: 'actions' },
      el('button', { type: 'button', class: 'primary', id: 'reality-continue', text: t('reality.continue') }),
      el('button', { type: 'button', id: 'reality-stop', text: t('reality.stop') })));
  const shown = dialog;
  document.body.append(shown);
  // Escape is not an answer: the dialog stays and says what is needed.
  shown.addEventListener('cancel', (ev) => {
    ev.preventDefault();
    $('reality-note').textContent = t('reality.answer');
  });
  // Chromium closes a modal dialog on a second Escape whatever its `cancel`
  // handler says: unanswered, it opens again at once.
  shown.addEventListener('close', () => {
    if (dialog !== shown) return;
    shown.showModal();
    $('reality-note').textContent = t('reality.answer');
    $('reality-continue').focus();
  });
  // The focus stays on the dialog's two buttons.
  shown.addEventListener('keydown', (ev) => {
    if (ev.key !== 'Tab') return;
    const keepPlaying = $('reality-continue');
    const stopPlaying = $('reality-stop');
    if (ev.shiftKey && document.activeElement === keepPlaying) { ev.preventDefault(); stopPlaying.focus(); }
    else if (!ev.shiftKey && document.activeElement === stopPlaying) { ev.preventDefault(); keepPlaying.focus(); }
    else if (document.activeElement !== keepPlaying && document.activeElement !== stopPlaying) { ev.preventDefault(); keepPlaying.focus(); }
  });
  $('reality-continue').addEventListener('click', () => {
    local.set(KEY.reality, JSON.stringify({ started_ms: started, k: check }));
    closeDialog();
  });
  $('reality-stop').addEventListener('click', () => {
    local.set(KEY.reality, JSON.stringify({ started_ms: started, k: check }));
    closeDialog();
    ending = true;
    endSession('stop');
  });
  shown.showModal();
  $('reality-continue').focus();
  try {
    const session = await operatorApi.session(state.token);
    if (dialog !== shown) return;
    $('reality-staked').textContent = money(session.staked_cents);
    $('reality-won').textContent = money(session.won_cents);
    $('reality-net').textContent = signed(session.net_cents);
    $('reality-net').dataset.cents = String(session.net_cents);
    $('reality-staked').dataset.cents = String(session.staked_cents);
    $('reality-won').dataset.cents = String(session.won_cents);
  } catch {
    if (dialog !== shown) return;
    for (const id of ['reality-staked', 'reality-won', 'reality-net']) $(id).textContent = t('reality.unknown');
  }
  $('reality-facts').removeAttribute('aria-busy');
}

function closeDialog() {
  if (!dialog) return;
  const shown = dialog;
  dialog = null;
  if (shown.open) shown.close();
  shown.remove();
  $('main')?.focus();
}

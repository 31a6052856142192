// scratch.js: the scratch zone of an online ticket: a silver coat on a
// canvas over the ticket's prize table, scratched with a finger or the
// mouse (or uncovered by a button); about half scratched, the prizes show
// and the table opens. A paper ticket's zone was scratched on the paper.
//
// Needs state.js (`state.scratched`, the storage), dom.js, i18n.js and
// ticket.js (the prompt and the controls).

import { $, announce } from './dom.js';
import { t, money } from './i18n.js';
import { state, local, KEY, isPaper } from './state.js';
import { promptFor, renderControls } from './ticket.js';

const scratch = { ctx: null, drawing: false, lastPt: null, radius: 18 };

/** The scratch zone: covered (online, not scratched yet) or showing the prizes. */
export function renderScratch() {
  const canvas = $('scratch-canvas');
  // A paper ticket's prizes were scratched on the paper: shown, not scratched again.
  const paper = isPaper(state.ticket);
  $('scratch-title').textContent = t(paper ? 'scratch.title.paper' : 'scratch.title');
  $('scratch').dataset.channel = paper ? 'paper' : 'online';
  $('scratch').classList.toggle('revealed', state.scratched);
  $('reveal').hidden = state.scratched;
  canvas.hidden = state.scratched;
  if (state.scratched) return;
  requestAnimationFrame(paintScratch);
}

/** The zone's silver coat, drawn on the canvas at the zone's size. */
function paintScratch() {
  const canvas = $('scratch-canvas');
  const box = $('scratch').getBoundingClientRect();
  if (box.width === 0) return;
  const dpr = window.devicePixelRatio || 1;
  canvas.width = Math.round(box.width * dpr);
  canvas.height = Math.round(box.height * dpr);
  const ctx = canvas.getContext('2d', { willReadFrequently: true });
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  const gradient = ctx.createLinearGradient(0, 0, box.width, box.height);
  gradient.addColorStop(0, '#b8b8b8');
  gradient.addColorStop(0.45, '#e9e9e9');
  gradient.addColorStop(0.55, '#cfcfcf');
  gradient.addColorStop(1, '#9c9c9c');
  ctx.globalCompositeOperation = 'source-over';
  ctx.fillStyle = gradient;
  ctx.fillRect(0, 0, box.width, box.height);
  ctx.fillStyle = 'rgba(80,80,80,0.7)';
  const size = Math.max(14, Math.min(20, box.width / 20));
  ctx.font = `600 ${size}px system-ui, sans-serif`;
  ctx.textAlign = 'center';
  ctx.textBaseline = 'middle';
  // The hint on as many lines as the zone's width needs.
  const lines = [];
  for (const word of t('scratch.hint').split(' ')) {
    const last = lines[lines.length - 1];
    if (last && ctx.measureText(`${last} ${word}`).width < box.width - 70) lines[lines.length - 1] = `${last} ${word}`;
    else lines.push(word);
  }
  lines.forEach((l, k) => ctx.fillText(l, box.width / 2, box.height / 2 + (k - (lines.length - 1) / 2) * size * 1.25));
  ctx.font = `${Math.max(16, box.height / 5)}px serif`;
  ctx.fillStyle = 'rgba(110,110,110,0.35)';
  for (const [x, y, s] of [[0.1, 0.25, '♠'], [0.9, 0.25, '♥'], [0.1, 0.78, '♥'], [0.9, 0.78, '♠']]) ctx.fillText(s, box.width * x, box.height * y);
  scratch.ctx = ctx;
  scratch.radius = Math.max(14, Math.min(26, box.height / 6));
}

function scratchAt(ev) {
  const ctx = scratch.ctx;
  if (!ctx) return;
  const rect = $('scratch-canvas').getBoundingClientRect();
  const point = { x: ev.clientX - rect.left, y: ev.clientY - rect.top };
  ctx.globalCompositeOperation = 'destination-out';
  ctx.lineCap = 'round';
  ctx.lineWidth = scratch.radius * 2;
  ctx.beginPath();
  const from = scratch.lastPt || point;
  ctx.moveTo(from.x, from.y);
  ctx.lineTo(point.x + 0.01, point.y);
  ctx.stroke();
  scratch.lastPt = point;
}

/** How much of the coat is scratched away (0 to 1), on a grid of samples. */
function scratchedFraction() {
  const canvas = $('scratch-canvas');
  const { data } = scratch.ctx.getImageData(0, 0, canvas.width, canvas.height);
  let clear = 0;
  let all = 0;
  const step = 6;
  for (let y = 0; y < canvas.height; y += step) {
    for (let x = 0; x < canvas.width; x += step) {
      all++;
      if (data[(y * canvas.width + x) * 4 + 3] < 128) clear++;
    }
  }
  return all ? clear / all : 1;
}

/** Scratching with a pointer (or the "reveal" button); a resize paints the coat again. */
export function initScratch() {
  const canvas = $('scratch-canvas');
  canvas.addEventListener('pointerdown', (ev) => {
    if (state.scratched) return;
    ev.preventDefault();
    canvas.setPointerCapture?.(ev.pointerId);
    scratch.drawing = true;
    scratch.lastPt = null;
    scratchAt(ev);
  });
  canvas.addEventListener('pointermove', (ev) => {
    if (!scratch.drawing) return;
    for (const e of ev.getCoalescedEvents ? ev.getCoalescedEvents() : [ev]) scratchAt(e);
    if (ev.getCoalescedEvents && ev.getCoalescedEvents().length === 0) scratchAt(ev);
  });
  const end = () => {
    if (!scratch.drawing) return;
    scratch.drawing = false;
    scratch.lastPt = null;
    if (scratchedFraction() > 0.45) reveal(false);
  };
  canvas.addEventListener('pointerup', end);
  canvas.addEventListener('pointercancel', end);
  canvas.addEventListener('pointerleave', end);
  $('reveal').addEventListener('click', () => reveal(true));
  window.addEventListener('resize', () => {
    if (!state.scratched && document.body.dataset.view === 'game') paintScratch();
  });
}

/** Scratched: the prizes shown (and said), the table unlocked. */
function reveal(byButton) {
  if (state.scratched || !state.ticket) return;
  state.scratched = true;
  const ids = local.json(KEY.scratched, []).filter((x) => x !== state.ticket.id);
  ids.push(state.ticket.id);
  local.set(KEY.scratched, JSON.stringify(ids.slice(-50)));
  renderScratch();
  $('prompt').textContent = promptFor(state.ticket);
  renderControls();
  announce(`${t('scratch.title')} : ${['5', '6', '7', '8'].map((n) => `${t('prize.row', { n })} ${state.ticket.prizes_cents[n] ? money(state.ticket.prizes_cents[n]) : t('prize.none')}`).join(', ')}. ${promptFor(state.ticket)}`);
  if (byButton) $('player-hand').querySelector('button')?.focus();
}

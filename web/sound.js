// sound.js: the page's sounds, synthesized with WebAudio (no sound file):
// a card's flick, a won, lost or tied trick, and a short fanfare for a
// winning ticket. Off until the player turns them on in the settings
// (a fresh profile plays none); the context starts on the
// player's first click (browsers allow no sound before).
//
// Needs state.js (the sounds setting, `state.sound`).

import { state } from './state.js';

const audio = { ctx: null };

function tone(audioContext, at, freq, dur, { type = 'triangle', gain = 0.07, to = null } = {}) {
  const oscillator = audioContext.createOscillator();
  const volume = audioContext.createGain();
  oscillator.type = type;
  oscillator.frequency.setValueAtTime(freq, at);
  if (to) oscillator.frequency.exponentialRampToValueAtTime(to, at + dur);
  volume.gain.setValueAtTime(0.0001, at);
  volume.gain.exponentialRampToValueAtTime(gain, at + 0.012);
  volume.gain.exponentialRampToValueAtTime(0.0001, at + dur);
  oscillator.connect(volume).connect(audioContext.destination);
  oscillator.start(at);
  oscillator.stop(at + dur + 0.02);
}

/** Plays `kind` (card, won, lost, tie, extra, win) when sounds are on. */
export function sound(kind) {
  if (!state.sound) return;
  document.body.dataset.sound = kind;
  const AudioContextClass = window.AudioContext || window.webkitAudioContext;
  if (!AudioContextClass) return;
  try {
    if (!audio.ctx) audio.ctx = new AudioContextClass();
    const audioContext = audio.ctx;
    if (audioContext.state === 'suspended') audioContext.resume().catch(() => {});
    const now = audioContext.currentTime + 0.01;
    const notes = {
      card: [[0, 900, 0.07, { type: 'square', gain: 0.025, to: 300 }]],
      won: [[0, 660, 0.12], [0.1, 880, 0.18]],
      lost: [[0, 330, 0.16], [0.12, 247, 0.24]],
      tie: [[0, 523, 0.12], [0.14, 523, 0.12]],
      extra: [[0, 523, 0.1], [0.09, 659, 0.1], [0.18, 784, 0.2]],
      win: [[0, 523, 0.14], [0.12, 659, 0.14], [0.24, 784, 0.14], [0.36, 1047, 0.45, { gain: 0.09 }]],
    }[kind] || [];
    for (const [dt, frequency, duration, opts] of notes) tone(audioContext, now + dt, frequency, duration, opts);
  } catch { /* no sound on this device */ }
}

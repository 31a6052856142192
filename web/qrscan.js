// qrscan.js: "Scanner le QR code" beside the lobby's play-code field. The
// phone's camera (the rear one, preferred) plays in a panel under the form
// while the page looks for a QR code a few times a second: with the
// browser's BarcodeDetector when it reads QR codes (Chrome on Android,
// Safari...), else with jsQR (web/vendor/jsQR.js, loaded only then: see
// web/vendor/README.md). A QR code read is used when it is a printed
// ticket's (an address of any origin whose `code` is a play code,
// `BASE_URL/play?code=...` as crates/emission/src/print.rs writes it) or a
// bare play code: the camera stops and paper.js's `redeem` opens the ticket
// (with all its refusals). Any other QR code is said and the camera goes
// on. A camera refused, absent or busy, or a page not on a secure origin,
// is said under the form in the page's words.
//
// The camera stops on "Annuler", when the home screen goes (a ticket, a
// page of the menu) and when the tab is hidden.
//
// Needs camera.js, dom.js, i18n.js and paper.js.

import { nativeDetector, openRearCamera, playIn, refusalKind, stopStream } from './camera.js';
import { $ } from './dom.js';
import { t } from './i18n.js';
import { normalizePlayCode, redeem } from './paper.js';

/** The frames read per second (each read takes a picture of the video). */
const READS_PER_SECOND = 4;
/** A picture read by jsQR is at most this wide: enough for a ticket's QR code, quick to read. */
const MAX_WIDTH = 800;

// `stream`: the camera while it is open; `opening`: asked, not answered yet;
// `detector`: the browser's BarcodeDetector for QR codes, or null (then
// `jsqr`, the vendored reader, reads the frames); `timer`: the next read.
const scan = { stream: null, opening: false, detector: null, jsqr: null, timer: 0, canvas: null };

/**
 * The play code of a QR code's text, written XXXX-XXXX-XXXX-XXXX, or null:
 * an http(s) address (of any origin) whose `code` parameter is a play code,
 * or a bare play code (as the form takes it).
 */
export function playCodeOf(text) {
  const s = String(text ?? '').trim();
  const bare = normalizePlayCode(s);
  if (bare) return bare;
  let url;
  try {
    url = new URL(s);
  } catch {
    return null;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return null;
  const code = url.searchParams.get('code');
  return code == null ? null : normalizePlayCode(code);
}

/**
 * A text of the page in `node` (`key` null empties it): kept as its
 * `data-i18n`, so that a change of language writes it again (settings.js).
 */
function say(node, key) {
  if (key) {
    node.dataset.i18n = key;
    node.textContent = t(key);
  } else {
    delete node.dataset.i18n;
    node.textContent = '';
  }
}

/**
 * jsQR (a UMD bundle: as a module it sets `self.jsQR`), loaded the first
 * time it is needed; the page's CSP allows it (`script-src 'self'`).
 */
async function loadJsQR() {
  if (!self.jsQR) await import('./vendor/jsQR.js');
  if (typeof self.jsQR !== 'function') throw new Error('jsQR did not load');
  return self.jsQR;
}

/** The state of the panel, for the page's tests: opening, on, refused, read or off. */
function setState(state) {
  $('qr-scanner').dataset.camera = state;
}

/** "Scanner le QR code": the camera in the panel, read until a ticket's QR code is found. */
async function openScanner() {
  if (scan.stream || scan.opening) return closeScanner(true);
  say($('qr-note'), null);
  const media = navigator.mediaDevices;
  if (!window.isSecureContext || !media || typeof media.getUserMedia !== 'function') {
    // Browsers give cameras to https pages (and localhost) only.
    return refused(window.isSecureContext ? 'qr.none' : 'qr.insecure');
  }
  scan.opening = true;
  const panel = $('qr-scanner');
  panel.hidden = false;
  delete panel.dataset.misread;
  $('qr-open').setAttribute('aria-expanded', 'true');
  setState('opening');
  say($('qr-state'), 'qr.starting');
  panel.focus();
  let stream;
  try {
    stream = await openRearCamera(media);
  } catch (e) {
    if (scan.opening) {
      closeScanner(false);
      // Why the camera did not open, in the player's words.
      refused(`qr.${refusalKind(e)}`);
    }
    return;
  }
  if (!scan.opening) {
    // Closed while the browser was asking: the camera goes at once.
    stopStream(stream);
    return;
  }
  scan.opening = false;
  scan.stream = stream;
  await playIn($('qr-video'), stream);
  scan.detector = await nativeDetector('qr_code');
  if (!scan.detector) {
    try {
      scan.jsqr = await loadJsQR();
    } catch {
      if (!scan.stream) return;
      closeScanner(false);
      return refused('qr.failed');
    }
  }
  if (!scan.stream) return;
  panel.dataset.decoder = scan.detector ? 'native' : 'js';
  setState('on');
  say($('qr-state'), 'qr.looking');
  nextRead();
}

/** The camera did not open: said under the form, the focus back on the button. */
function refused(key) {
  say($('qr-note'), key);
  setState('refused');
  $('qr-open').focus();
}

function nextRead() {
  clearTimeout(scan.timer);
  scan.timer = setTimeout(readFrame, 1000 / READS_PER_SECOND);
}

/** The QR codes' texts in the camera's current picture. */
async function frameTexts(video) {
  if (scan.detector) {
    try {
      const found = await scan.detector.detect(video);
      return found.filter((b) => b.format === 'qr_code').map((b) => b.rawValue);
    } catch {
      // The browser's reader failed on this device: jsQR from now on.
      scan.detector = null;
      scan.jsqr = await loadJsQR();
      $('qr-scanner').dataset.decoder = 'js';
    }
  }
  const k = Math.min(1, MAX_WIDTH / video.videoWidth);
  const w = Math.round(video.videoWidth * k);
  const h = Math.round(video.videoHeight * k);
  if (!scan.canvas) scan.canvas = document.createElement('canvas');
  const c = scan.canvas;
  if (c.width !== w || c.height !== h) Object.assign(c, { width: w, height: h });
  const ctx = c.getContext('2d', { willReadFrequently: true });
  ctx.drawImage(video, 0, 0, w, h);
  const found = scan.jsqr(ctx.getImageData(0, 0, w, h).data, w, h, { inversionAttempts: 'dontInvert' });
  return found ? [found.data] : [];
}

async function readFrame() {
  const video = $('qr-video');
  if (!scan.stream) return;
  if (video.readyState < 2 || !video.videoWidth) return nextRead();
  let texts = [];
  try {
    texts = await frameTexts(video);
  } catch { /* this frame is lost; the next one is read */ }
  if (!scan.stream) return;
  const panel = $('qr-scanner');
  panel.dataset.frames = String(Number(panel.dataset.frames || 0) + 1);
  for (const text of texts) {
    const code = playCodeOf(text);
    if (code) return scanned(code);
    // Another QR code (a web site's, a shop's...): said, and the camera goes on.
    panel.dataset.misread = text;
    say($('qr-state'), 'qr.not_ticket');
  }
  nextRead();
}

/** A ticket's play code read: the camera stops and paper.js opens the ticket (or says why not). */
function scanned(code) {
  closeScanner(false);
  setState('read');
  $('play-code').value = code;
  redeem(code);
}

/**
 * Stops the camera (its light goes off) and hides the panel; with
 * `refocus`, the focus goes back to the button when it was in the panel.
 */
function closeScanner(refocus) {
  scan.opening = false;
  clearTimeout(scan.timer);
  if (scan.stream) stopStream(scan.stream);
  scan.stream = null;
  const panel = $('qr-scanner');
  const video = $('qr-video');
  video.pause();
  video.srcObject = null;
  const focusInside = panel.contains(document.activeElement);
  panel.hidden = true;
  delete panel.dataset.frames;
  $('qr-open').setAttribute('aria-expanded', 'false');
  say($('qr-state'), null);
  if (panel.dataset.camera === 'on' || panel.dataset.camera === 'opening') setState('off');
  if (refocus && focusInside && !$('view-home').hidden) $('qr-open').focus();
}

/** Wires the button, the panel's "Annuler", and the stops (the home screen gone, the tab hidden). */
export function initQrScan() {
  $('qr-open').addEventListener('click', openScanner);
  $('qr-close').addEventListener('click', () => closeScanner(true));
  // Escape in the panel closes it, as "Annuler".
  $('qr-scanner').addEventListener('keydown', (ev) => {
    if (ev.key === 'Escape') {
      ev.preventDefault();
      closeScanner(true);
    }
  });
  // Typing a code by hand: the camera's message under the form goes.
  $('play-code').addEventListener('input', () => say($('qr-note'), null));
  // The camera is never left on behind another screen, another tab or a locked phone.
  new MutationObserver(() => { if ($('view-home').hidden) closeScanner(false); })
    .observe($('view-home'), { attributes: true, attributeFilter: ['hidden'] });
  document.addEventListener('visibilitychange', () => { if (document.hidden) closeScanner(true); });
}

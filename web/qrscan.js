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
// The camera's state machine is camera.js's (the shop's counter has the
// same); this module gives it the QR code's reader and the player's words.
//
// Needs camera.js, dom.js, i18n.js and paper.js.

import { cameraScanner } from './camera.js';
import { $ } from './dom.js';
import { t } from './i18n.js';
import { normalizePlayCode, redeem } from './paper.js';

/**
 * The play code of a QR code's text, written XXXX-XXXX-XXXX-XXXX, or null:
 * an http(s) address (of any origin) whose `code` parameter is a play code,
 * or a bare play code (as the form takes it).
 */
export function playCodeOf(text) {
  const trimmed = String(text ?? '').trim();
  const bare = normalizePlayCode(trimmed);
  if (bare) return bare;
  let url;
  try {
    url = new URL(trimmed);
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

/** The line under the picture, for each of the camera's moments. */
const STATE_KEYS = { starting: 'qr.starting', looking: 'qr.looking', other: 'qr.not_ticket' };

// The camera's panel under the play code's form; its state in the panel's
// `data-camera`, read four times a second.
const camera = cameraScanner({
  panel: 'qr-scanner',
  video: 'qr-video',
  openButton: 'qr-open',
  closeButton: 'qr-close',
  focusPanel: true,
  format: 'qr_code',
  readsPerSecond: 4,
  // A picture read by jsQR is at most this wide: enough for a ticket's QR code, quick to read.
  maxWidth: 800,
  async loadReader() {
    const jsQR = await loadJsQR();
    return (image) => {
      const code = jsQR(image.data, image.width, image.height, { inversionAttempts: 'dontInvert' });
      return code ? code.data : null;
    };
  },
  accept: playCodeOf,
  // A ticket's play code read: it goes in the field and paper.js opens the ticket (or says why not).
  found(code) {
    $('play-code').value = code;
    redeem(code);
  },
  // Why the camera did not open, under the form in the player's words; the focus back on the button.
  refused(kind) {
    say($('qr-note'), `qr.${kind}`);
    $('qr-open').focus();
  },
  clear: () => say($('qr-note'), null),
  show: (what) => say($('qr-state'), what ? STATE_KEYS[what] : null),
});

/** Wires the button, the panel's "Annuler" (and Escape), and the stops (the home screen gone, the tab hidden). */
export function initQrScan() {
  camera.wire();
  // Typing a code by hand: the camera's message under the form goes.
  $('play-code').addEventListener('input', () => say($('qr-note'), null));
  // The camera is never left on behind another screen.
  new MutationObserver(() => { if ($('view-home').hidden) camera.close(false); })
    .observe($('view-home'), { attributes: true, attributeFilter: ['hidden'] });
}

// camera.js: the phone's camera for a page that reads a code in its
// picture, written once for the shop's counter (shop.js: a ticket's Code
// 128 serial) and the player's home (qrscan.js: a ticket's QR code). One
// state machine, `cameraScanner`: a button opens the rear camera (at
// 1280x720 if it can) in a panel, which plays it in a `<video>` while the
// page reads its picture a few times a second, with the browser's own
// barcode reader when it has one, else with the page's; a code the page
// accepts stops the camera, any other is said and the camera goes on; a
// camera that does not open is said, with why. Each page gives its
// elements, its reader and its words.
//
// The camera's states, in `data-camera` (the browser tests wait on them):
// `opening` (asked of the browser), `on` (read), `read` (a code found, the
// camera stopped), `refused` (it did not open) and `off` (closed by hand, or
// because the page or the tab went). The panel also carries `data-decoder`
// (`native` or `js`), `data-frames` (the pictures read) and
// `data-misread` (the last code read that the page did not accept).
//
// Needs nothing.

/** The browser's own reader of `format` (`code_128`, `qr_code`), when it has one (Chrome on Android, Safari...). */
async function nativeDetector(format) {
  if (!('BarcodeDetector' in window)) return null;
  try {
    const formats = await window.BarcodeDetector.getSupportedFormats();
    return formats.includes(format) ? new window.BarcodeDetector({ formats: [format] }) : null;
  } catch {
    return null;
  }
}

/**
 * Why the camera did not open: `refused` (the player or the browser said
 * no), `none` (no camera), `busy` (another application holds it) or
 * `failed`; each page words it with its own keys.
 */
function refusalKind(error) {
  const name = error && error.name;
  if (name === 'NotAllowedError' || name === 'SecurityError') return 'refused';
  if (name === 'NotFoundError' || name === 'OverconstrainedError') return 'none';
  if (name === 'NotReadableError' || name === 'AbortError') return 'busy';
  return 'failed';
}

/** The rear camera (if the phone has one), asked of the browser: a stream, or the browser's refusal thrown. */
function openRearCamera(media) {
  return media.getUserMedia({
    audio: false,
    video: { facingMode: { ideal: 'environment' }, width: { ideal: 1280 }, height: { ideal: 720 } },
  });
}

/** Stops every track of `stream` (the camera's light goes off). */
function stopStream(stream) {
  for (const track of stream.getTracks()) track.stop();
}

/** `stream` in `video`, playing (a muted inline video plays; the frames are read anyway if it does not). */
async function playIn(video, stream) {
  video.srcObject = stream;
  try {
    await video.play();
  } catch { /* read anyway */ }
}

/**
 * The camera of one page. `page` gives:
 * - `panel`, `video`, `openButton`, `closeButton`: the elements' ids (the
 *   panel holds the picture and the close button);
 * - `stateHolder`: the element whose `data-camera` says the state (the
 *   panel when not given);
 * - `focusPanel`: the panel takes the focus when it opens;
 * - `format`: the browser's name of the code (`qr_code`, `code_128`);
 *   `readsPerSecond`; `maxWidth`: the widest picture the page's reader reads;
 * - `loadReader()`: the page's own reader, when the browser has none (may be
 *   loaded then; a reader that fails to load is a camera that failed): an
 *   `ImageData` to the code's text, or null;
 * - `accept(text)`: what a code read is for the page (null: not its code);
 * - `found(value)`: a code accepted, the camera stopped;
 * - `refused(kind)`: the camera did not open (`refused`, `none`, `busy`,
 *   `failed`, or `insecure`: a page not on a secure origin), to be said;
 * - `clear()`: an earlier refusal or reading said, to be forgotten (at each opening);
 * - `show(what)`: the line under the picture: `starting`, `looking`,
 *   `other` (a code read that is not the page's) or null (none).
 *
 * Returns `{ wire, close }`: `wire()` hooks the buttons, Escape in the panel
 * and the tab hidden; `close(refocus)` stops the camera (with `refocus`, the
 * focus goes back to the open button when it was in the panel).
 */
export function cameraScanner(page) {
  const $ = (id) => document.getElementById(id);
  const holder = () => (page.stateHolder ? page.stateHolder() : $(page.panel));
  // `stream`: the camera while it is open; `opening`: asked, not answered
  // yet; `detector`: the browser's reader, or null (then `reader`, the
  // page's); `timer`: the next read; `canvas`: the picture read by `reader`.
  const camera = { stream: null, opening: false, detector: null, reader: null, timer: 0, canvas: null };

  const setState = (state) => { holder().dataset.camera = state; };

  /** The camera did not open: said by the page (which places the focus). */
  function refuse(kind) {
    setState('refused');
    page.refused(kind);
  }

  /** The open button: the camera in the panel, read until the page's code is found (again: closed). */
  async function open() {
    if (camera.stream || camera.opening) return close(true);
    page.clear();
    const media = navigator.mediaDevices;
    if (!window.isSecureContext || !media || typeof media.getUserMedia !== 'function') {
      // Browsers give cameras to https pages (and localhost) only.
      return refuse(window.isSecureContext ? 'none' : 'insecure');
    }
    camera.opening = true;
    const panel = $(page.panel);
    panel.hidden = false;
    delete panel.dataset.misread;
    $(page.openButton).setAttribute('aria-expanded', 'true');
    setState('opening');
    page.show('starting');
    if (page.focusPanel) panel.focus();
    let stream;
    try {
      stream = await openRearCamera(media);
    } catch (error) {
      if (camera.opening) {
        close(false);
        refuse(refusalKind(error));
      }
      return;
    }
    if (!camera.opening) {
      // Closed while the browser was asking: the camera goes at once.
      stopStream(stream);
      return;
    }
    camera.opening = false;
    camera.stream = stream;
    await playIn($(page.video), stream);
    camera.detector = await nativeDetector(page.format);
    if (!camera.detector && !camera.reader) {
      try {
        camera.reader = await page.loadReader();
      } catch {
        if (!camera.stream) return;
        close(false);
        return refuse('failed');
      }
    }
    if (!camera.stream) return;
    panel.dataset.decoder = camera.detector ? 'native' : 'js';
    setState('on');
    page.show('looking');
    nextRead();
  }

  function nextRead() {
    clearTimeout(camera.timer);
    camera.timer = setTimeout(readFrame, 1000 / page.readsPerSecond);
  }

  /** The codes' texts in the camera's current picture. */
  async function frameTexts(video) {
    if (camera.detector) {
      try {
        const codes = await camera.detector.detect(video);
        return codes.filter((code) => code.format === page.format).map((code) => code.rawValue);
      } catch {
        // The browser's reader failed on this device: the page's from now on.
        camera.detector = null;
        camera.reader = camera.reader || await page.loadReader();
        $(page.panel).dataset.decoder = 'js';
      }
    }
    const scale = Math.min(1, page.maxWidth / video.videoWidth);
    const width = Math.round(video.videoWidth * scale);
    const height = Math.round(video.videoHeight * scale);
    if (!camera.canvas) camera.canvas = document.createElement('canvas');
    const canvas = camera.canvas;
    if (canvas.width !== width || canvas.height !== height) Object.assign(canvas, { width, height });
    const context = canvas.getContext('2d', { willReadFrequently: true });
    context.drawImage(video, 0, 0, width, height);
    const text = camera.reader(context.getImageData(0, 0, width, height));
    return text == null ? [] : [text];
  }

  async function readFrame() {
    const video = $(page.video);
    if (!camera.stream) return;
    if (video.readyState < 2 || !video.videoWidth) return nextRead();
    let texts = [];
    try {
      texts = await frameTexts(video);
    } catch { /* this frame is lost; the next one is read */ }
    if (!camera.stream) return;
    const panel = $(page.panel);
    panel.dataset.frames = String(Number(panel.dataset.frames || 0) + 1);
    for (const text of texts) {
      const value = page.accept(text);
      if (value) {
        close(false);
        setState('read');
        return page.found(value);
      }
      // Another code (a web site's, a wrong one...): said, and the camera goes on.
      panel.dataset.misread = text;
      page.show('other');
    }
    nextRead();
  }

  /**
   * Stops the camera (its light goes off) and hides the panel; with
   * `refocus`, the focus goes back to the open button when it was in the
   * panel (a button no longer shown takes none).
   */
  function close(refocus) {
    camera.opening = false;
    clearTimeout(camera.timer);
    if (camera.stream) stopStream(camera.stream);
    camera.stream = null;
    const panel = $(page.panel);
    const video = $(page.video);
    video.pause();
    video.srcObject = null;
    const focusInside = panel.contains(document.activeElement);
    panel.hidden = true;
    delete panel.dataset.frames;
    $(page.openButton).setAttribute('aria-expanded', 'false');
    page.show(null);
    const state = holder().dataset.camera;
    if (state === 'on' || state === 'opening') setState('off');
    if (refocus && focusInside) $(page.openButton).focus();
  }

  /** The open and close buttons, Escape in the panel (as the close button), and the tab hidden. */
  function wire() {
    $(page.openButton).addEventListener('click', open);
    $(page.closeButton).addEventListener('click', () => close(true));
    $(page.panel).addEventListener('keydown', (ev) => {
      if (ev.key === 'Escape') {
        ev.preventDefault();
        close(true);
      }
    });
    // The camera is never left on behind another tab or a locked phone.
    document.addEventListener('visibilitychange', () => { if (document.hidden) close(true); });
  }

  return { wire, close };
}

// camera.js: the phone's camera for a page that reads a code in its
// picture, written once for the shop's counter (shop.js: a ticket's Code
// 128 serial) and the player's home (qrscan.js: a ticket's QR code): the
// browser's own barcode reader when it has one, the rear camera opened at
// 1280x720 if it can, played in a `<video>`, and why it did not open.
//
// Needs nothing.

/** The browser's own reader of `format` (`code_128`, `qr_code`), when it has one (Chrome on Android, Safari...). */
export async function nativeDetector(format) {
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
export function refusalKind(e) {
  const name = e && e.name;
  if (name === 'NotAllowedError' || name === 'SecurityError') return 'refused';
  if (name === 'NotFoundError' || name === 'OverconstrainedError') return 'none';
  if (name === 'NotReadableError' || name === 'AbortError') return 'busy';
  return 'failed';
}

/** The rear camera (if the phone has one), asked of the browser: a stream, or the browser's refusal thrown. */
export function openRearCamera(media) {
  return media.getUserMedia({
    audio: false,
    video: { facingMode: { ideal: 'environment' }, width: { ideal: 1280 }, height: { ideal: 720 } },
  });
}

/** Stops every track of `stream` (the camera's light goes off). */
export function stopStream(stream) {
  for (const track of stream.getTracks()) track.stop();
}

/** `stream` in `video`, playing (a muted inline video plays; the frames are read anyway if it does not). */
export async function playIn(video, stream) {
  video.srcObject = stream;
  try {
    await video.play();
  } catch { /* read anyway */ }
}

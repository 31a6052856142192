// code128.js: reads the Code 128 barcode of a ticket's serial from a camera
// frame, for the shop's counter (shop.js) when the browser has no
// BarcodeDetector for Code 128 (Chromium on Linux has none).
//
// The reference is the encoder that draws the barcode on the print file,
// crates/emission/src/code128.rs: code set B only (start B, one symbol per
// character, the modulo-103 check symbol, stop), so this decoder reads
// code set B and refuses anything else (start A or C, shifts, function
// codes).
//
// How: several horizontal lines across the frame (canvas getImageData),
// each the mean of three pixel rows; the luminance binarised against a
// local threshold (the middle of the darkest and lightest pixel within a
// window, where the window shows contrast); the bar and space widths
// measured between the threshold's crossings (to a fraction of a pixel);
// the start B found after a light quiet zone; each symbol's six widths
// normalised to its 11 modules and matched against the 107 patterns; then
// the stop pattern and the check symbol. A line may also be read right to
// left (a ticket upside down). A frame's reading is accepted only when at
// least two lines give the same text.

/**
 * The element widths of symbols 0 to 106 (bar, space, bar, space, bar,
 * space), in modules: crates/emission/src/code128.rs's PATTERNS. The stop
 * (106) is "2331112": its first six here, its final 2-module bar checked
 * apart.
 */
export const PATTERNS = [
  '212222', '222122', '222221', '121223', '121322', '131222', '122213', '122312', '132212', '221213', // 0-9
  '221312', '231212', '112232', '122132', '122231', '113222', '123122', '123221', '223211', '221132', // 10-19
  '221231', '213212', '223112', '312131', '311222', '321122', '321221', '312212', '322112', '322211', // 20-29
  '212123', '212321', '232121', '111323', '131123', '131321', '112313', '132113', '132311', '211313', // 30-39
  '231113', '231311', '112133', '112331', '132131', '113123', '113321', '133121', '313121', '211331', // 40-49
  '231131', '213113', '213311', '213131', '311123', '311321', '331121', '312113', '312311', '332111', // 50-59
  '314111', '221411', '431111', '111224', '111422', '121124', '121421', '141122', '141221', '112214', // 60-69
  '112412', '122114', '122411', '142112', '142211', '241211', '221114', '413111', '241112', '134111', // 70-79
  '111242', '121142', '121241', '114212', '124112', '124211', '411212', '421112', '421211', '212141', // 80-89
  '214121', '412121', '111143', '111341', '131141', '114113', '114311', '411113', '411311', '113141', // 90-99
  '114131', '311141', '411131', '211412', '211214', '211232', '233111', // 100-106 (106: the stop's first six)
].map((p) => [...p].map(Number));

const START_B = 104;
const STOP = 106;

/**
 * A symbol's edge-to-edge distances (bar + space, space + bar: 4 of them,
 * which identify each of the 107 patterns) must each be within this many
 * modules of its pattern's; a blur or a spread of the ink, which moves
 * both edges of a bar the same way, leaves them unchanged.
 */
const MAX_EDGE_ERROR = 0.62;
/** And each single width within this many modules of its pattern's. */
const MAX_WIDTH_ERROR = 1.0;
/** Next to the barcode, a light quiet zone at least this many modules wide (the print has 10). */
const QUIET = 4;

/**
 * The pattern of six widths (bar first), normalised to the symbol's 11
 * modules: its value, or null when no pattern is close enough.
 */
function matchSymbol(widths) {
  const sum = widths[0] + widths[1] + widths[2] + widths[3] + widths[4] + widths[5];
  if (!(sum > 0)) return null;
  const normalised = widths.map((x) => (x * 11) / sum);
  let best = -1;
  let bestCost = Infinity;
  for (let value = 0; value < PATTERNS.length; value++) {
    const pattern = PATTERNS[value];
    let cost = 0;
    let worst = 0;
    for (let i = 0; i < 4; i++) {
      const edgeError = Math.abs(normalised[i] + normalised[i + 1] - pattern[i] - pattern[i + 1]);
      cost += edgeError;
      if (edgeError > worst) worst = edgeError;
    }
    if (worst > MAX_EDGE_ERROR) continue;
    for (let i = 0; i < 6; i++) if (Math.abs(normalised[i] - pattern[i]) > MAX_WIDTH_ERROR) worst = Infinity;
    if (worst === Infinity) continue;
    if (cost < bestCost) {
      bestCost = cost;
      best = value;
    }
  }
  return best < 0 ? null : { value: best, cost: bestCost };
}

/**
 * The text of a Code 128 (code set B) symbol in `runs`, alternate widths
 * of one line where `runs[k]` is a bar when `k % 2 === darkParity`; null
 * when no start B is followed by valid symbols, the stop and a right check
 * symbol.
 */
export function decodeRuns(runs, darkParity) {
  for (let k = 0; k + 6 * 3 + 7 <= runs.length; k++) {
    if (k % 2 !== darkParity || k === 0) continue;
    const first = runs.slice(k, k + 6);
    const module = first.reduce((a, b) => a + b, 0) / 11;
    if (runs[k - 1] < QUIET * module) continue;
    const start = matchSymbol(first);
    if (!start || start.value !== START_B) continue;
    const text = readFrom(runs, k, module);
    if (text != null) return text;
  }
  return null;
}

/** Reads symbols from the start B at `runs[startAt]` to the stop; the text, or null. */
function readFrom(runs, startAt, startModule) {
  const values = [START_B];
  let module = startModule;
  for (let at = startAt + 6; at + 6 <= runs.length; at += 6) {
    const widths = runs.slice(at, at + 6);
    const width = widths.reduce((a, b) => a + b, 0);
    // Each symbol is 11 modules: a width far from the last one's is not the next symbol.
    if (Math.abs(width / 11 - module) > 0.25 * module) return null;
    const symbol = matchSymbol(widths);
    if (!symbol) return null;
    if (symbol.value === STOP) {
      // The stop's final bar (2 modules), then the quiet zone (or the line's end).
      const bar = runs[at + 6];
      const after = runs[at + 7];
      const unit = width / 11;
      if (bar == null || Math.abs(bar / unit - 2) > 0.8) return null;
      if (after != null && at + 8 < runs.length && after < QUIET * unit) return null;
      return finish(values);
    }
    values.push(symbol.value);
    module = (module + width / 11) / 2;
  }
  return null;
}

/** Start B, data, check symbol: the text when the check symbol is right, else null. */
function finish(values) {
  if (values.length < 3) return null;
  const check = values[values.length - 1];
  let sum = values[0];
  for (let i = 1; i < values.length - 1; i++) sum += values[i] * i;
  if (sum % 103 !== check) return null;
  let text = '';
  for (let i = 1; i < values.length - 1; i++) {
    const value = values[i];
    // 95 to 103 are code set B's function and switch codes: not in a serial's barcode.
    if (value >= 95) return null;
    text += String.fromCharCode(value + 32);
  }
  return text;
}

/**
 * The luminance (0 to 255) along row `row` of `img` (`{data, width, height}`,
 * RGBA), each pixel the mean of rows row - 1, row and row + 1.
 */
function rowLuma(img, row, out) {
  const { data, width, height } = img;
  const rows = [Math.max(0, row - 1), row, Math.min(height - 1, row + 1)];
  for (let x = 0; x < width; x++) {
    let sum = 0;
    for (const sampleRow of rows) {
      const offset = (sampleRow * width + x) * 4;
      sum += 0.299 * data[offset] + 0.587 * data[offset + 1] + 0.114 * data[offset + 2];
    }
    out[x] = sum / 3;
  }
}

/** Sliding minimum (`less`) or maximum over windows of radius `radius`, in O(length). */
function sliding(values, radius, less) {
  const length = values.length;
  const out = new Float32Array(length);
  const window = new Int32Array(length);
  let head = 0;
  let tail = 0;
  let next = 0;
  for (let x = 0; x < length; x++) {
    const hi = Math.min(length - 1, x + radius);
    for (; next <= hi; next++) {
      while (tail > head && (less ? values[window[tail - 1]] >= values[next] : values[window[tail - 1]] <= values[next])) tail--;
      window[tail++] = next;
    }
    while (window[head] < x - radius) head++;
    out[x] = values[window[head]];
  }
  return out;
}

/**
 * The bar and space widths of one line of luminance `luma`: `{runs,
 * darkParity}` (`runs[k]` is dark when `k % 2 === darkParity`); the first
 * and last runs reach the line's ends.
 */
export function lineRuns(luma, radius) {
  const length = luma.length;
  let lo = Infinity;
  let hi = -Infinity;
  for (let x = 0; x < length; x++) {
    if (luma[x] < lo) lo = luma[x];
    if (luma[x] > hi) hi = luma[x];
  }
  if (!(hi - lo >= 24)) return { runs: [], darkParity: 0 };
  const wmin = sliding(luma, radius, true);
  const wmax = sliding(luma, radius, false);
  const mid = (lo + hi) / 2;
  const minContrast = Math.max(24, 0.25 * (hi - lo));
  // Signed distance to the threshold: negative is dark.
  const distance = new Float32Array(length);
  for (let x = 0; x < length; x++) {
    const threshold = wmax[x] - wmin[x] >= minContrast ? (wmin[x] + wmax[x]) / 2 : mid;
    distance[x] = luma[x] - threshold;
  }
  const dark = (x) => distance[x] < 0;
  const edges = [0];
  for (let x = 0; x + 1 < length; x++) {
    if (dark(x) !== dark(x + 1)) {
      // Where the threshold is crossed, between the two pixels' centres.
      const fraction = distance[x] / (distance[x] - distance[x + 1]);
      edges.push(x + 0.5 + fraction);
    }
  }
  edges.push(length);
  const runs = [];
  for (let i = 0; i + 1 < edges.length; i++) runs.push(edges[i + 1] - edges[i]);
  return { runs, darkParity: dark(0) ? 0 : 1 };
}

/**
 * The text read on one line of luminance, left to right or right to left,
 * or null. The threshold's window, first wider than the widest element (4
 * modules) of a barcode that fills the line and narrower than its quiet
 * zone; then 3 pixels, which finds the narrow spaces of a small, blurred
 * barcode (inside a wider element the window sees no contrast, and the
 * line's middle grey decides).
 */
export function decodeLine(luma) {
  for (const radius of [Math.max(6, Math.round(luma.length / 40)), 3]) {
    const { runs, darkParity } = lineRuns(luma, radius);
    if (runs.length < 6 * 3 + 7) continue;
    const forward = decodeRuns(runs, darkParity);
    if (forward != null) return forward;
    const back = runs.slice().reverse();
    // Reversed, run k was run (len - 1 - k).
    const backward = decodeRuns(back, (runs.length - 1 - darkParity) % 2);
    if (backward != null) return backward;
  }
  return null;
}

/**
 * What each of `lines` horizontal lines across `img` (an ImageData, or
 * `{data, width, height}`) reads: an array of texts, one per line that read one.
 */
export function readLines(img, lines = 48) {
  const out = [];
  const luma = new Float32Array(img.width);
  const count = Math.min(lines, img.height);
  for (let i = 0; i < count; i++) {
    const y = Math.floor(((i + 0.5) * img.height) / count);
    rowLuma(img, y, luma);
    const text = decodeLine(luma);
    if (text != null) out.push(text);
  }
  return out;
}

/**
 * The text of the Code 128 barcode in `img`, or null: read on several
 * lines, and accepted only when at least `agree` lines give the same
 * text (the most frequent, if lines disagree).
 */
export function decodeImage(img, { lines = 48, agree = 2 } = {}) {
  const counts = new Map();
  for (const text of readLines(img, lines)) counts.set(text, (counts.get(text) || 0) + 1);
  let best = null;
  let most = 0;
  for (const [text, votes] of counts) {
    if (votes > most) {
      best = text;
      most = votes;
    }
  }
  return most >= agree ? best : null;
}

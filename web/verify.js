// verify.js: the check anyone can run on a finished ticket, in the browser.
//
// It re-does, independently of the server, what docs/contract.md "Fairness"
// promises:
//   1. the record's Merkle leaf holds the ticket: its serial (whose digits
//      name the record's emission, block and position), position, prizes
//      and commitment are the record's;
//   2. the leaf's hash, SHA-256(0x00 || ticket bytes v2), climbs the
//      inclusion proof (nodes SHA-256(0x01 || left || right)) to the
//      record's root;
//   3. that root is the one published for the ticket's emission and block
//      (GET /api/emissions, on the page's own origin): so the prizes and the
//      server seed's commitment were fixed before the sale;
//   4. commitment == hex(SHA-256(server_seed));
//   5. replaying the recorded actions through the rules of art. 3.2 (the
//      small state machine `Duel` below, a port of crates/engine) with the
//      HMAC-SHA256 draw stream gives exactly the recorded draws;
//   6. the replay ends with exactly the recorded result.
//
// The hashes come from WebCrypto (crypto.subtle). A page served over plain
// HTTP from another machine has no crypto.subtle (not a secure context):
// then a small SHA-256 written out below from FIPS 180-4 is used, and the
// verdict says which one ran. The browser tests check both against the Rust
// implementation.
//
// The same `Duel` replays a record *without* the seed (`replayRecorded`):
// the page uses it to show the tricks already played when a game resumes.

/** Card values, weakest first (art. 3.2.1.3). Index = value. */
export const RANKS = ['7', '8', '9', '10', 'J', 'Q', 'K', 'A'];
/** The 16-card deck (art. 3.2.1.4): index i is value i >> 1. */
export const DECK_SIZE = 16;

const rankOf = (v) => RANKS[v];
const valueOf = (r) => RANKS.indexOf(r);

// ---------------------------------------------------------------- SHA-256

/** FIPS 180-4 §4.2.2: SHA-256's 64 round constants K. */
const SHA256_K = new Uint32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);

/** SHA-256 of bytes (FIPS 180-4), for pages without crypto.subtle. */
export function sha256Js(bytes) {
  const len = bytes.length;
  const total = Math.ceil((len + 9) / 64) * 64;
  const padded = new Uint8Array(total);
  padded.set(bytes);
  padded[len] = 0x80;
  const dv = new DataView(padded.buffer);
  dv.setUint32(total - 8, Math.floor(len / 0x20000000));
  dv.setUint32(total - 4, (len * 8) >>> 0);
  const hashWords = new Uint32Array([
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
  ]);
  const schedule = new Uint32Array(64);
  const rotr = (x, n) => (x >>> n) | (x << (32 - n));
  for (let off = 0; off < total; off += 64) {
    for (let i = 0; i < 16; i++) schedule[i] = dv.getUint32(off + 4 * i);
    for (let i = 16; i < 64; i++) {
      const s0 = rotr(schedule[i - 15], 7) ^ rotr(schedule[i - 15], 18) ^ (schedule[i - 15] >>> 3);
      const s1 = rotr(schedule[i - 2], 17) ^ rotr(schedule[i - 2], 19) ^ (schedule[i - 2] >>> 10);
      schedule[i] = (schedule[i - 16] + s0 + schedule[i - 7] + s1) >>> 0;
    }
    // The eight working variables, named a to h as in FIPS 180-4 §6.2.2 (the
    // round's t1 and t2 and the schedule's s0 and s1 too): the standard's
    // own names, so that the rounds read as it writes them.
    let [a, b, c, d, e, f, g, h] = hashWords;
    for (let i = 0; i < 64; i++) {
      const t1 = (h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + SHA256_K[i] + schedule[i]) >>> 0;
      const t2 = ((rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c))) >>> 0;
      h = g; g = f; f = e; e = (d + t1) >>> 0; d = c; c = b; b = a; a = (t1 + t2) >>> 0;
    }
    hashWords[0] += a; hashWords[1] += b; hashWords[2] += c; hashWords[3] += d; hashWords[4] += e; hashWords[5] += f; hashWords[6] += g; hashWords[7] += h;
  }
  const out = new Uint8Array(32);
  const odv = new DataView(out.buffer);
  for (let i = 0; i < 8; i++) odv.setUint32(4 * i, hashWords[i]);
  return out;
}

/** HMAC-SHA256 (RFC 2104) over sha256Js. */
export function hmacSha256Js(key, msg) {
  let keyBlock = key.length > 64 ? sha256Js(key) : key;
  const ipad = new Uint8Array(64 + msg.length);
  const opad = new Uint8Array(64 + 32);
  for (let i = 0; i < 64; i++) {
    const keyByte = i < keyBlock.length ? keyBlock[i] : 0;
    ipad[i] = keyByte ^ 0x36;
    opad[i] = keyByte ^ 0x5c;
  }
  ipad.set(msg, 64);
  opad.set(sha256Js(ipad), 64);
  return sha256Js(opad);
}

/**
 * The hash functions: WebCrypto when the page has it (or `prefer: 'webcrypto'`,
 * which fails without it), else the code above (`prefer: 'js'` forces it).
 */
export function cryptoProvider(prefer = 'auto') {
  const subtle = globalThis.crypto && globalThis.crypto.subtle;
  if (prefer === 'webcrypto' && !subtle) throw new Error('WebCrypto (crypto.subtle) is not available on this page');
  if (subtle && prefer !== 'js') {
    return {
      name: 'webcrypto',
      sha256: async (bytes) => new Uint8Array(await subtle.digest('SHA-256', bytes)),
      hmac: async (key) => {
        const hmacKey = await subtle.importKey('raw', key, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
        return async (msg) => new Uint8Array(await subtle.sign('HMAC', hmacKey, msg));
      },
    };
  }
  return {
    name: 'js',
    sha256: async (bytes) => sha256Js(bytes),
    hmac: async (key) => async (msg) => hmacSha256Js(key, msg),
  };
}

export const toHex = (bytes) => Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');

/** 64 hex digits -> 32 bytes, or null. */
export function parseSeed(hex) {
  if (typeof hex !== 'string') return null;
  const digits = hex.trim();
  if (!/^[0-9a-fA-F]{64}$/.test(digits)) return null;
  const out = new Uint8Array(32);
  for (let i = 0; i < 32; i++) out[i] = parseInt(digits.slice(2 * i, 2 * i + 2), 16);
  return out;
}

// ------------------------------------------------ serials and the Merkle leaf

/** Parses 64 hex digits (either case) into 32 bytes, or null. */
export function parseHash(hex) {
  return typeof hex === 'string' && /^[0-9a-fA-F]{64}$/.test(hex.trim()) ? parseSeed(hex) : null;
}

const pad = (n, w) => String(n).padStart(w, '0');

/** ISO 7064 MOD 97-10 check digits of a serial (crates/emission/src/serial.rs). */
export function serialCheck(code, emission, block, position) {
  let remainder = 0;
  for (const character of code) {
    const value = character >= '0' && character <= '9' ? character.charCodeAt(0) - 48 : character.charCodeAt(0) - 55;
    remainder = (remainder * 100 + value) % 97;
  }
  for (const digit of `${pad(emission, 3)}${pad(block, 5)}${pad(position, 6)}`) remainder = (remainder * 10 + Number(digit)) % 97;
  return 98 - ((remainder * 100) % 97);
}

/**
 * A serial like "ASC-001-00001-000042-81" (either case, dashes optional):
 * `{code, emission, block, position, text}` with `text` its canonical form
 * (upper case, dashes), or `{error}`: `shape` or `check` (wrong check digits).
 */
export function parseSerial(text) {
  if (typeof text !== 'string') return { error: 'shape' };
  const upper = text.trim().toUpperCase();
  let code;
  let digits;
  if (upper.includes('-')) {
    const parts = upper.split('-');
    const widths = [3, 5, 6, 2];
    if (parts.length !== 5 || parts.slice(1).some((p, i) => p.length !== widths[i])) return { error: 'shape' };
    code = parts[0];
    digits = parts.slice(1).join('');
  } else {
    if (upper.length < 18) return { error: 'shape' };
    code = upper.slice(0, -16);
    digits = upper.slice(-16);
  }
  if (!/^[0-9]{16}$/.test(digits) || !/^[A-Z][A-Z0-9]{1,5}$/.test(code)) return { error: 'shape' };
  const emission = Number(digits.slice(0, 3));
  const block = Number(digits.slice(3, 8));
  const position = Number(digits.slice(8, 14));
  const check = Number(digits.slice(14, 16));
  if (emission < 1 || block < 1 || position < 1) return { error: 'shape' };
  if (serialCheck(code, emission, block, position) !== check) return { error: 'check' };
  return { code, emission, block, position, text: `${code}-${pad(emission, 3)}-${pad(block, 5)}-${pad(position, 6)}-${pad(check, 2)}` };
}

/** Prizes `{"5", "6", "7", "8"}` as four numbers (a missing count pays 0), or null when malformed. */
export function prizesOf(prizes) {
  if (!prizes || typeof prizes !== 'object' || Array.isArray(prizes)) return null;
  const out = [0, 0, 0, 0];
  for (const [tricks, cents] of Object.entries(prizes)) {
    if (!['5', '6', '7', '8'].includes(tricks) || !Number.isSafeInteger(cents) || cents < 0) return null;
    out[Number(tricks) - 5] = cents;
  }
  return out;
}

const isU32 = (n) => Number.isInteger(n) && n >= 0 && n <= 0xffffffff;

/**
 * The leaf of a record, checked for shape: `{serial, position, row, prizes,
 * playCode, commitment}` (bytes for the hashes), or `{error}` naming the
 * malformed field.
 */
export function parseLeaf(leaf) {
  if (!leaf || typeof leaf !== 'object') return { error: 'leaf' };
  const serial = parseSerial(leaf.serial);
  if (serial.error) return { error: 'serial' };
  if (!isU32(leaf.position)) return { error: 'position' };
  if (!isU32(leaf.row)) return { error: 'row' };
  const prizes = prizesOf(leaf.prizes_cents);
  if (!prizes) return { error: 'prizes_cents' };
  const playCode = parseHash(leaf.play_code_sha256);
  if (!playCode) return { error: 'play_code_sha256' };
  const commitment = parseHash(leaf.commitment);
  if (!commitment) return { error: 'commitment' };
  return { serial, position: leaf.position, row: leaf.row, prizes, playCode, commitment };
}

/**
 * Ticket bytes v2 (docs/contract.md "Fairness"): the serial's length (1 byte)
 * and ASCII text with dashes; the position and the schedule row, u32
 * big-endian; the prizes for 5, 6, 7, 8 tricks, four u64 big-endian; the
 * SHA-256 of the play code; the commitment.
 */
export function leafBytes(leaf) {
  const text = utf8.encode(leaf.serial.text);
  const out = new Uint8Array(1 + text.length + 4 + 4 + 32 + 32 + 32);
  const dv = new DataView(out.buffer);
  out[0] = text.length;
  out.set(text, 1);
  let at = 1 + text.length;
  dv.setUint32(at, leaf.position);
  dv.setUint32(at + 4, leaf.row);
  at += 8;
  for (const cents of leaf.prizes) {
    dv.setBigUint64(at, BigInt(cents));
    at += 8;
  }
  out.set(leaf.playCode, at);
  out.set(leaf.commitment, at + 32);
  return out;
}

/** `SHA-256(0x00 || bytes)`. */
export async function leafHash(provider, bytes) {
  const prefixed = new Uint8Array(1 + bytes.length);
  prefixed.set(bytes, 1);
  return provider.sha256(prefixed);
}

/** `SHA-256(0x01 || left || right)`. */
export async function nodeHash(provider, left, right) {
  const joined = new Uint8Array(65);
  joined[0] = 1;
  joined.set(left, 1);
  joined.set(right, 33);
  return provider.sha256(joined);
}

/**
 * An inclusion proof `["L<64 hex>" | "R<64 hex>", ...]` (from the leaf up;
 * "L": the sibling is on the left): `[{left, hash}]`, or `{error: step}`
 * (the first malformed step, from 1).
 */
export function parseProof(proof) {
  if (!Array.isArray(proof)) return { error: 0 };
  const steps = [];
  for (let i = 0; i < proof.length; i++) {
    const step = proof[i];
    const hash = typeof step === 'string' && /^[LR][0-9a-fA-F]{64}$/.test(step) ? parseSeed(step.slice(1)) : null;
    if (!hash) return { error: i + 1 };
    steps.push({ left: step[0] === 'L', hash });
  }
  return { steps };
}

/** The root the proof leads to from `leaf` (32 bytes). */
export async function climb(provider, leaf, steps) {
  let node = leaf;
  for (const step of steps) node = step.left ? await nodeHash(provider, step.hash, node) : await nodeHash(provider, node, step.hash);
  return node;
}

// ------------------------------------------------------ the fair stream

const utf8 = new TextEncoder();
const TWO_32 = 2 ** 32;

/**
 * docs/contract.md "Fairness": draw n reads the blocks
 * HMAC-SHA256(server_seed, "{client_seed}:{serial}:{n}:{c}") for c = 0, 1, ...,
 * eight big-endian u32 each, used in order; every draw starts at c = 0.
 */
export class FairStream {
  constructor(hmac, clientSeed, serial) {
    this.hmac = hmac;
    this.prefix = `${clientSeed}:${serial}:`;
    this.start(0);
  }
  start(draw) {
    this.n = draw;
    this.c = 0;
    this.words = null;
    this.used = 8;
  }
  async nextU32() {
    if (this.used === 8) {
      const block = await this.hmac(utf8.encode(`${this.prefix}${this.n}:${this.c}`));
      this.c += 1;
      const dv = new DataView(block.buffer, block.byteOffset, block.byteLength);
      this.words = [0, 1, 2, 3, 4, 5, 6, 7].map((i) => dv.getUint32(4 * i, false));
      this.used = 0;
    }
    return this.words[this.used++];
  }
  /** Uniform below m by rejection: reject x >= 2^32 - (2^32 mod m), return x mod m. */
  async below(bound) {
    const limit = TWO_32 - (TWO_32 % bound);
    for (;;) {
      const word = await this.nextU32();
      if (word < limit) return word % bound;
    }
  }
}

/** Draws from the seeds: what the server must have drawn. */
export class FairDealer {
  constructor(stream) {
    this.stream = stream;
  }
  /** art. 3.2.2: As Capone's card indexes his remaining cards sorted 7..A. */
  async capone(draw, caponeHand) {
    this.stream.start(draw);
    const index = await this.stream.below(caponeHand.length);
    return caponeHand[index];
  }
  /** art. 3.2.4.2: two different cards of the 16; a < 16, b < 15 shifted past a. */
  async deck(draw) {
    this.stream.start(draw);
    const first = await this.stream.below(DECK_SIZE);
    let second = await this.stream.below(DECK_SIZE - 1);
    if (second >= first) second += 1;
    return [first >> 1, second >> 1];
  }
}

/** Draws read from a record (no seed needed): to rebuild what was shown. */
export class RecordedDealer {
  constructor(draws) {
    this.draws = Array.isArray(draws) ? draws : [];
  }
  async capone(draw, caponeHand) {
    const recorded = this.draws[draw];
    const value = recorded ? valueOf(recorded.capone) : -1;
    if (!recorded || recorded.kind !== 'capone' || !caponeHand.includes(value)) throw new ReplayError(`draw ${draw} is missing or not one of As Capone's cards`);
    return value;
  }
  async deck(draw) {
    const recorded = this.draws[draw];
    const player = recorded ? valueOf(recorded.player) : -1;
    const capone = recorded ? valueOf(recorded.capone) : -1;
    if (!recorded || recorded.kind !== 'deck' || player < 0 || capone < 0) throw new ReplayError(`draw ${draw} is missing or not a deck draw`);
    return [player, capone];
  }
}

export class ReplayError extends Error {}

// ---------------------------------------------------- the rules (art. 3.2)

const outcomeOf = (p, c) => (p > c ? 'won' : p < c ? 'lost' : 'tie');

/**
 * One ticket's interactive game: a port of crates/engine's `Game`, phases
 * play, tie_break, extra_tie_break, extra_draw, finished. Events are
 * exactly the server's (docs/contract.md "HTTP API", its events).
 */
export class Duel {
  constructor(prizes) {
    this.prizes = prizes || {};
    this.phase = 'play';
    this.game = 1;
    this.hand = [0, 1, 2, 3, 4, 5, 6, 7];
    this.capone = [0, 1, 2, 3, 4, 5, 6, 7];
    this.won = 0;
    this.lost = 0;
    this.draws = 0;
    this.seq = 0;
    this.result = null;
  }

  prizeFor(tricks) {
    if (tricks < 5) return 0;
    const prize = this.prizes[String(tricks)];
    return Number.isSafeInteger(prize) && prize >= 0 ? prize : 0;
  }

  /** Applies `{action: "play", card} | {action: "draw"}`; throws ReplayError when the rules refuse it. */
  async apply(action, dealer) {
    const events = [];
    const kind = action && action.action;
    if (this.phase === 'finished') throw new ReplayError('the game is finished');
    if (this.phase === 'play') {
      if (kind !== 'play') throw new ReplayError('a card is expected, not a deck draw');
      const card = valueOf(action.card);
      if (!this.hand.includes(card)) throw new ReplayError(`the card ${action.card} is not in the hand`);
      this.hand = this.hand.filter((x) => x !== card);
      const caponeCard = await dealer.capone(this.draws++, this.capone);
      this.capone = this.capone.filter((x) => x !== caponeCard);
      const outcome = outcomeOf(card, caponeCard);
      events.push({ type: 'trick', player: rankOf(card), capone: rankOf(caponeCard), outcome });
      if (outcome === 'tie') this.phase = 'tie_break'; // art. 3.2.4.1
      else {
        if (outcome === 'won') this.won++;
        else this.lost++;
        this.afterTrick(events);
      }
    } else {
      if (kind !== 'draw') throw new ReplayError('a deck draw is expected, not a card');
      const forWhat = this.phase === 'extra_draw' ? 'extra' : 'tie_break';
      const [playerCard, caponeCard] = await dealer.deck(this.draws++);
      const outcome = outcomeOf(playerCard, caponeCard);
      events.push({ type: 'deck', player: rankOf(playerCard), capone: rankOf(caponeCard), outcome, for: forWhat });
      if (this.phase === 'tie_break') {
        // art. 3.2.4.3, 3.2.4.4
        if (outcome !== 'tie') {
          if (outcome === 'won') this.won++;
          else this.lost++;
          this.afterTrick(events);
        }
      } else if (outcome === 'won') this.startExtraGame(events); // art. 3.2.5.3
      else if (outcome === 'lost') this.finish(4, events);
      else this.phase = 'extra_tie_break';
    }
    this.seq++;
    return events;
  }

  afterTrick(events) {
    if (this.hand.length > 0) {
      this.phase = 'play';
      return;
    }
    const tricks = this.won;
    if (tricks === 4) {
      events.push({ type: 'game_over', tricks, next: 'extra_draw' }); // art. 3.2.3.4
      this.phase = 'extra_draw';
    } else {
      events.push({ type: 'game_over', tricks, next: 'finished' });
      this.finish(tricks, events);
    }
  }

  startExtraGame(events) {
    // art. 3.2.5.4: eight new cards; art. 3.2.5.5: earlier tricks count for nothing.
    this.game += 1;
    this.hand = [0, 1, 2, 3, 4, 5, 6, 7];
    this.capone = [0, 1, 2, 3, 4, 5, 6, 7];
    this.won = 0;
    this.lost = 0;
    this.phase = 'play';
    events.push({ type: 'extra_game', game: this.game });
  }

  finish(tricks, events) {
    const prize_cents = this.prizeFor(tricks);
    this.result = { tricks, prize_cents };
    this.phase = 'finished';
    events.push({ type: 'finished', tricks, prize_cents });
  }
}

/** The draws an action's events took (each trick one, each deck event one). */
export function drawsOf(events, firstN) {
  const out = [];
  let draw = firstN;
  for (const event of events) {
    if (event.type === 'trick') out.push({ n: draw++, kind: 'capone', capone: event.capone });
    else if (event.type === 'deck') out.push({ n: draw++, kind: 'deck', player: event.player, capone: event.capone });
  }
  return out;
}

/**
 * Rebuilds a ticket from its record without the seed, reading the recorded
 * draws: `{duel, steps: [{action, events}], error}`. For display only;
 * `verifyRecord` is the check.
 */
export async function replayRecorded(record) {
  const duel = new Duel(record && record.prizes_cents);
  const dealer = new RecordedDealer(record && record.draws);
  const steps = [];
  for (const action of (record && record.actions) || []) {
    try {
      steps.push({ action: action, events: await duel.apply(action, dealer) });
    } catch (error) {
      return { duel, steps, error: String(error.message || error) };
    }
  }
  return { duel, steps, error: null };
}

const sameDraw = (want, got) =>
  !!want && !!got && want.n === got.n && want.kind === got.kind && want.capone === got.capone && (want.player ?? null) === (got.player ?? null);

/** Checks 1 and 2 of the module's doc: the leaf is the record's, and its proof leads to the root. */
async function checkInclusion(record, provider, verdict) {
  const leaf = parseLeaf(record.leaf);
  if (leaf.error) {
    verdict.problems.push({ code: 'leaf_malformed', field: leaf.error });
  } else {
    let agree = true;
    const differ = (code, leafValue, recordValue, more = {}) => {
      if (leafValue !== recordValue) {
        agree = false;
        verdict.problems.push({ code, leaf: leafValue, record: recordValue, ...more });
      }
    };
    const recordPrizes = prizesOf(record.prizes_cents);
    differ('leaf_serial', leaf.serial.text, record.serial.trim());
    differ('leaf_position', String(leaf.position), String(record.position));
    differ('leaf_prizes', leaf.prizes.join(' / '), recordPrizes ? recordPrizes.join(' / ') : JSON.stringify(record.prizes_cents ?? null),
      { leaf_cents: leaf.prizes, record_cents: recordPrizes || JSON.stringify(record.prizes_cents ?? null) });
    differ('leaf_commitment', toHex(leaf.commitment), record.commitment.trim().toLowerCase());
    const serial = leaf.serial;
    if (serial.emission !== record.emission || serial.block !== record.block || serial.position !== record.position) {
      agree = false;
      verdict.problems.push({
        code: 'serial_digits', serial: serial.text, emission: serial.emission, block: serial.block, position: serial.position,
        record_emission: record.emission, record_block: record.block, record_position: record.position,
      });
    }
    if (agree) verdict.passed.push({ code: 'leaf', serial: serial.text, emission: serial.emission, block: serial.block, position: serial.position });
  }
  const root = parseHash(record.root);
  if (!root) {
    verdict.problems.push({ code: 'bad_root' });
    return;
  }
  verdict.root = toHex(root);
  const proof = parseProof(record.proof);
  if (proof.error !== undefined) {
    verdict.problems.push({ code: 'bad_proof', step: proof.error });
    return;
  }
  if (leaf.error) return;
  const top = await climb(provider, await leafHash(provider, leafBytes(leaf)), proof.steps);
  if (toHex(top) === verdict.root) verdict.passed.push({ code: 'proof', steps: proof.steps.length, root: verdict.root });
  else verdict.problems.push({ code: 'proof', root: verdict.root });
}

/** Check 3: the record's root is the one published for its block. */
async function checkPublished(record, verdict, emissions, origin) {
  const url = new URL('/api/emissions', origin || (globalThis.location && globalThis.location.origin) || 'http://localhost').href;
  let list;
  try {
    let answer = typeof emissions === 'function' ? await emissions() : emissions;
    if (answer === undefined) {
      const response = await fetch(url, { headers: { Accept: 'application/json' }, cache: 'no-store' });
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      answer = await response.json();
    }
    list = answer && answer.emissions;
    if (!Array.isArray(list)) throw new Error('the answer has no list of emissions');
  } catch (error) {
    verdict.problems.push({ code: 'published_unavailable', reason: String(error && error.message ? error.message : error) });
    return;
  }
  const serial = parseSerial(record.serial);
  const emission = list.find((x) => x && x.emission === record.emission && (serial.error || x.code === serial.code));
  const block = emission && Array.isArray(emission.blocks) ? emission.blocks.find((x) => x && x.block === record.block) : null;
  if (!block) {
    verdict.problems.push({ code: 'not_published', emission: record.emission, block: record.block });
    return;
  }
  const published = parseHash(block.root);
  verdict.published = {
    emission: emission.emission, code: emission.code, channel: emission.channel, block: block.block, root: published ? toHex(published) : String(block.root),
    published_ms: block.published_ms, source: 'GET /api/emissions', url,
  };
  if (!verdict.root) return; // bad_root said it
  if (published && toHex(published) === verdict.root) {
    verdict.passed.push({ code: 'published', root: verdict.root, emission: emission.emission, block: block.block, published_ms: block.published_ms });
  } else {
    verdict.problems.push({ code: 'published', root: verdict.root, published: verdict.published.root, emission: emission.emission, block: block.block, published_ms: block.published_ms });
  }
}

/**
 * Checks a public record. Never throws on bad input. Returns
 * `{valid, serial, crypto, passed: [{code, ...}], problems: [{code, ...}],
 * draws: [...], root, published}` where each entry of `draws` is
 * `{n, kind, recorded, computed, ok}` and `published` is the block as
 * GET /api/emissions lists it (`{emission, code, block, root, published_ms,
 * source, url}`), when found.
 * Codes (the page words them): passed `leaf`, `proof`, `published`,
 * `commitment`, `replayed`, `draws`, `result`; problems `leaf_malformed`,
 * `leaf_serial`, `leaf_position`, `leaf_prizes`, `leaf_commitment`,
 * `serial_digits`, `bad_root`, `bad_proof`, `proof`, `published_unavailable`,
 * `not_published`, `published`, `no_seed`, `bad_seed`, `commitment`, `seq`,
 * `refused`, `draw_count`, `draw`, `not_finished`, `result`, `malformed`.
 *
 * `emissions`: the answer of GET /api/emissions, or a function that
 * returns it (a promise); by default it is fetched from `origin` (the
 * page's own).
 */
export async function verifyRecord(record, { prefer = 'auto', emissions, origin } = {}) {
  const provider = cryptoProvider(prefer);
  const verdict = { valid: false, serial: record && record.serial, crypto: provider.name, passed: [], problems: [], draws: [], root: null, published: null };
  const done = () => {
    verdict.valid = verdict.problems.length === 0;
    return verdict;
  };
  if (!record || typeof record !== 'object' || typeof record.serial !== 'string' || typeof record.client_seed !== 'string'
      || typeof record.commitment !== 'string' || !Array.isArray(record.actions) || !Array.isArray(record.draws)) {
    verdict.problems.push({ code: 'malformed' });
    return done();
  }
  await checkInclusion(record, provider, verdict);
  await checkPublished(record, verdict, emissions, origin);
  if (record.server_seed == null) {
    verdict.problems.push({ code: 'no_seed' });
    return done();
  }
  const seed = parseSeed(record.server_seed);
  if (!seed) {
    verdict.problems.push({ code: 'bad_seed' });
    return done();
  }
  const computed = toHex(await provider.sha256(seed));
  if (computed === record.commitment.trim().toLowerCase()) verdict.passed.push({ code: 'commitment', commitment: computed });
  else verdict.problems.push({ code: 'commitment', commitment: record.commitment, computed });

  record.actions.forEach((action, i) => {
    if (!action || action.seq !== i) verdict.problems.push({ code: 'seq', index: i, seq: action && action.seq });
  });

  const stream = new FairStream(await provider.hmac(seed), record.client_seed, record.serial);
  const dealer = new FairDealer(stream);
  const duel = new Duel(record.prizes_cents);
  const events = [];
  for (let i = 0; i < record.actions.length; i++) {
    try {
      events.push(...(await duel.apply(record.actions[i], dealer)));
    } catch (error) {
      verdict.problems.push({ code: 'refused', seq: i, reason: String(error.message || error) });
      return done();
    }
  }
  verdict.passed.push({ code: 'replayed', actions: record.actions.length });

  const replayed = drawsOf(events, 0);
  const count = Math.max(replayed.length, record.draws.length);
  let mismatch = false;
  for (let i = 0; i < count; i++) {
    const want = replayed[i];
    const got = record.draws[i];
    const ok = sameDraw(want, got);
    verdict.draws.push({ n: i, kind: (want || got || {}).kind, recorded: got || null, computed: want || null, ok });
    if (!ok && want && got) {
      mismatch = true;
      verdict.problems.push({ code: 'draw', n: want.n, recorded: got, computed: want });
    }
  }
  if (replayed.length !== record.draws.length) {
    verdict.problems.push({ code: 'draw_count', recorded: record.draws.length, computed: replayed.length });
  } else if (!mismatch) {
    verdict.passed.push({ code: 'draws', count: replayed.length });
  }

  const recorded = record.result;
  if (!duel.result) verdict.problems.push({ code: 'not_finished' });
  else if (recorded && recorded.tricks === duel.result.tricks && recorded.prize_cents === duel.result.prize_cents) {
    verdict.passed.push({ code: 'result', tricks: recorded.tricks, prize_cents: recorded.prize_cents });
  } else {
    verdict.problems.push({ code: 'result', recorded: recorded ?? null, computed: duel.result });
  }
  return done();
}

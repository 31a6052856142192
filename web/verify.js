// verify.js: the check anyone can run on a finished ticket, in the browser.
//
// It re-does, independently of the server, what CONTRACT.md "Fairness"
// promises:
//   1. commitment == hex(SHA-256(server_seed));
//   2. replaying the recorded actions through the rules of art. 3.2 (the
//      small state machine `Duel` below, a port of crates/engine) with the
//      HMAC-SHA256 draw stream gives exactly the recorded draws;
//   3. the replay ends with exactly the recorded result.
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

const K = new Uint32Array([
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
  const m = new Uint8Array(total);
  m.set(bytes);
  m[len] = 0x80;
  const dv = new DataView(m.buffer);
  dv.setUint32(total - 8, Math.floor(len / 0x20000000));
  dv.setUint32(total - 4, (len * 8) >>> 0);
  const h = new Uint32Array([
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
  ]);
  const w = new Uint32Array(64);
  const rotr = (x, n) => (x >>> n) | (x << (32 - n));
  for (let off = 0; off < total; off += 64) {
    for (let i = 0; i < 16; i++) w[i] = dv.getUint32(off + 4 * i);
    for (let i = 16; i < 64; i++) {
      const s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >>> 3);
      const s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >>> 10);
      w[i] = (w[i - 16] + s0 + w[i - 7] + s1) >>> 0;
    }
    let [a, b, c, d, e, f, g, hh] = h;
    for (let i = 0; i < 64; i++) {
      const t1 = (hh + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + K[i] + w[i]) >>> 0;
      const t2 = ((rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c))) >>> 0;
      hh = g; g = f; f = e; e = (d + t1) >>> 0; d = c; c = b; b = a; a = (t1 + t2) >>> 0;
    }
    h[0] += a; h[1] += b; h[2] += c; h[3] += d; h[4] += e; h[5] += f; h[6] += g; h[7] += hh;
  }
  const out = new Uint8Array(32);
  const odv = new DataView(out.buffer);
  for (let i = 0; i < 8; i++) odv.setUint32(4 * i, h[i]);
  return out;
}

/** HMAC-SHA256 (RFC 2104) over sha256Js. */
export function hmacSha256Js(key, msg) {
  let k = key.length > 64 ? sha256Js(key) : key;
  const ipad = new Uint8Array(64 + msg.length);
  const opad = new Uint8Array(64 + 32);
  for (let i = 0; i < 64; i++) {
    const b = i < k.length ? k[i] : 0;
    ipad[i] = b ^ 0x36;
    opad[i] = b ^ 0x5c;
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
        const k = await subtle.importKey('raw', key, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
        return async (msg) => new Uint8Array(await subtle.sign('HMAC', k, msg));
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
  const s = hex.trim();
  if (!/^[0-9a-fA-F]{64}$/.test(s)) return null;
  const out = new Uint8Array(32);
  for (let i = 0; i < 32; i++) out[i] = parseInt(s.slice(2 * i, 2 * i + 2), 16);
  return out;
}

// ------------------------------------------------------ the fair stream

const utf8 = new TextEncoder();
const TWO_32 = 2 ** 32;

/**
 * CONTRACT.md Fairness: draw n reads the blocks
 * HMAC-SHA256(server_seed, "{client_seed}:{serial}:{n}:{c}") for c = 0, 1, ...,
 * eight big-endian u32 each, used in order; every draw starts at c = 0.
 */
export class FairStream {
  constructor(hmac, clientSeed, serial) {
    this.hmac = hmac;
    this.prefix = `${clientSeed}:${serial}:`;
    this.start(0);
  }
  start(n) {
    this.n = n;
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
  async below(m) {
    const limit = TWO_32 - (TWO_32 % m);
    for (;;) {
      const x = await this.nextU32();
      if (x < limit) return x % m;
    }
  }
}

/** Draws from the seeds: what the server must have drawn. */
export class FairDealer {
  constructor(stream) {
    this.stream = stream;
  }
  /** art. 3.2.2: As Capone's card indexes his remaining cards sorted 7..A. */
  async capone(n, caponeHand) {
    this.stream.start(n);
    const i = await this.stream.below(caponeHand.length);
    return caponeHand[i];
  }
  /** art. 3.2.4.2: two different cards of the 16; a < 16, b < 15 shifted past a. */
  async deck(n) {
    this.stream.start(n);
    const a = await this.stream.below(DECK_SIZE);
    let b = await this.stream.below(DECK_SIZE - 1);
    if (b >= a) b += 1;
    return [a >> 1, b >> 1];
  }
}

/** Draws read from a record (no seed needed): to rebuild what was shown. */
export class RecordedDealer {
  constructor(draws) {
    this.draws = Array.isArray(draws) ? draws : [];
  }
  async capone(n, caponeHand) {
    const d = this.draws[n];
    const v = d ? valueOf(d.capone) : -1;
    if (!d || d.kind !== 'capone' || !caponeHand.includes(v)) throw new ReplayError(`draw ${n} is missing or not one of As Capone's cards`);
    return v;
  }
  async deck(n) {
    const d = this.draws[n];
    const p = d ? valueOf(d.player) : -1;
    const c = d ? valueOf(d.capone) : -1;
    if (!d || d.kind !== 'deck' || p < 0 || c < 0) throw new ReplayError(`draw ${n} is missing or not a deck draw`);
    return [p, c];
  }
}

export class ReplayError extends Error {}

// ---------------------------------------------------- the rules (art. 3.2)

const outcomeOf = (p, c) => (p > c ? 'won' : p < c ? 'lost' : 'tie');

/**
 * One ticket's interactive game: a port of crates/engine's `Game`, phases
 * play, tie_break, extra_tie_break, extra_draw, finished. Events are
 * exactly the server's (CONTRACT.md "Event").
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
    const p = this.prizes[String(tricks)];
    return Number.isSafeInteger(p) && p >= 0 ? p : 0;
  }

  /** Applies `{action: "play", card} | {action: "draw"}`; throws ReplayError when the rules refuse it. */
  async apply(action, dealer) {
    const events = [];
    const kind = action && action.action;
    if (this.phase === 'finished') throw new ReplayError('the game is finished');
    if (this.phase === 'play') {
      if (kind !== 'play') throw new ReplayError('a card is expected, not a deck draw');
      const v = valueOf(action.card);
      if (!this.hand.includes(v)) throw new ReplayError(`the card ${action.card} is not in the hand`);
      this.hand = this.hand.filter((x) => x !== v);
      const c = await dealer.capone(this.draws++, this.capone);
      this.capone = this.capone.filter((x) => x !== c);
      const outcome = outcomeOf(v, c);
      events.push({ type: 'trick', player: rankOf(v), capone: rankOf(c), outcome });
      if (outcome === 'tie') this.phase = 'tie_break'; // art. 3.2.4.1
      else {
        if (outcome === 'won') this.won++;
        else this.lost++;
        this.afterTrick(events);
      }
    } else {
      if (kind !== 'draw') throw new ReplayError('a deck draw is expected, not a card');
      const forWhat = this.phase === 'extra_draw' ? 'extra' : 'tie_break';
      const [p, c] = await dealer.deck(this.draws++);
      const outcome = outcomeOf(p, c);
      events.push({ type: 'deck', player: rankOf(p), capone: rankOf(c), outcome, for: forWhat });
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
  let n = firstN;
  for (const e of events) {
    if (e.type === 'trick') out.push({ n: n++, kind: 'capone', capone: e.capone });
    else if (e.type === 'deck') out.push({ n: n++, kind: 'deck', player: e.player, capone: e.capone });
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
  for (const a of (record && record.actions) || []) {
    try {
      steps.push({ action: a, events: await duel.apply(a, dealer) });
    } catch (e) {
      return { duel, steps, error: String(e.message || e) };
    }
  }
  return { duel, steps, error: null };
}

const sameDraw = (a, b) =>
  !!a && !!b && a.n === b.n && a.kind === b.kind && a.capone === b.capone && (a.player ?? null) === (b.player ?? null);

/**
 * Checks a public record. Never throws on bad input. Returns
 * `{valid, serial, crypto, passed: [{code, ...}], problems: [{code, ...}], draws: [...]}`
 * where each entry of `draws` is `{n, kind, recorded, computed, ok}`.
 * Codes (the page words them): passed `commitment`, `replayed`, `draws`,
 * `result`; problems `no_seed`, `bad_seed`, `commitment`, `seq`,
 * `refused`, `draw_count`, `draw`, `not_finished`, `result`, `malformed`.
 */
export async function verifyRecord(record, { prefer = 'auto' } = {}) {
  const provider = cryptoProvider(prefer);
  const v = { valid: false, serial: record && record.serial, crypto: provider.name, passed: [], problems: [], draws: [] };
  const done = () => {
    v.valid = v.problems.length === 0;
    return v;
  };
  if (!record || typeof record !== 'object' || typeof record.serial !== 'string' || typeof record.client_seed !== 'string'
      || typeof record.commitment !== 'string' || !Array.isArray(record.actions) || !Array.isArray(record.draws)) {
    v.problems.push({ code: 'malformed' });
    return done();
  }
  if (record.server_seed == null) {
    v.problems.push({ code: 'no_seed' });
    return done();
  }
  const seed = parseSeed(record.server_seed);
  if (!seed) {
    v.problems.push({ code: 'bad_seed' });
    return done();
  }
  const computed = toHex(await provider.sha256(seed));
  if (computed === record.commitment.trim().toLowerCase()) v.passed.push({ code: 'commitment', commitment: computed });
  else v.problems.push({ code: 'commitment', commitment: record.commitment, computed });

  record.actions.forEach((a, i) => {
    if (!a || a.seq !== i) v.problems.push({ code: 'seq', index: i, seq: a && a.seq });
  });

  const stream = new FairStream(await provider.hmac(seed), record.client_seed, record.serial);
  const dealer = new FairDealer(stream);
  const duel = new Duel(record.prizes_cents);
  const events = [];
  for (let i = 0; i < record.actions.length; i++) {
    try {
      events.push(...(await duel.apply(record.actions[i], dealer)));
    } catch (e) {
      v.problems.push({ code: 'refused', seq: i, reason: String(e.message || e) });
      return done();
    }
  }
  v.passed.push({ code: 'replayed', actions: record.actions.length });

  const replayed = drawsOf(events, 0);
  const count = Math.max(replayed.length, record.draws.length);
  let mismatch = false;
  for (let i = 0; i < count; i++) {
    const want = replayed[i];
    const got = record.draws[i];
    const ok = sameDraw(want, got);
    v.draws.push({ n: i, kind: (want || got || {}).kind, recorded: got || null, computed: want || null, ok });
    if (!ok && want && got) {
      mismatch = true;
      v.problems.push({ code: 'draw', n: want.n, recorded: got, computed: want });
    }
  }
  if (replayed.length !== record.draws.length) {
    v.problems.push({ code: 'draw_count', recorded: record.draws.length, computed: replayed.length });
  } else if (!mismatch) {
    v.passed.push({ code: 'draws', count: replayed.length });
  }

  const rec = record.result;
  if (!duel.result) v.problems.push({ code: 'not_finished' });
  else if (rec && rec.tricks === duel.result.tricks && rec.prize_cents === duel.result.prize_cents) {
    v.passed.push({ code: 'result', tricks: rec.tricks, prize_cents: rec.prize_cents });
  } else {
    v.problems.push({ code: 'result', recorded: rec ?? null, computed: duel.result });
  }
  return done();
}

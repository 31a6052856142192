// api.js: the HTTP API of docs/contract.md, and how the page survives a bad
// connection.
//
// Requests that are safe to repeat are retried until the server answers:
// reads, purchases (the same Idempotency-Key) and actions (the same `seq`
// and body, the first action's client seed included: the server returns
// the identical stored answer and draws nothing new, guarantee 4). A
// retried action is never given a new `seq`, nor a new client seed.

export class ApiError extends Error {
  constructor(status, code, message, retryAfter = null, params = null) {
    super(message || code);
    this.status = status;
    this.code = code;
    /**
     * The refusal's parameters (`params` of docs/contract.md's error body:
     * `reason`, a limit's `max`, an `until_ms`...): the page words the
     * refusal from `code` and these, in its own language (dom.js
     * `errorText`), never from the server's English `message`.
     */
    this.params = params || {};
    /** Seconds to wait, from a 429's `Retry-After` header (null without one). */
    this.retryAfter = retryAfter;
  }
}

/** `Retry-After`: seconds, or an HTTP date; null when absent or unreadable. */
function retryAfterSeconds(value) {
  if (value == null || value === '') return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isFinite(at) ? Math.max(0, Math.ceil((at - Date.now()) / 1000)) : null;
}

/** Hooks the page sets: shown while retrying, cleared on success. */
export const net = {
  onRetry: () => {},
  onRecovered: () => {},
  /** Every refusal the server answers (an ApiError), before it is thrown: limits.js keeps a self-exclusion's end. */
  onRefusal: () => {},
  /** Milliseconds before retry number k (0, 1, ...). */
  backoff: (k) => Math.min(250 * 2 ** k, 4000),
};

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Retry on no answer at all, a timeout, or a server that is restarting; a
 * sold-out emission (503 `sold_out`) is an answer, not an outage, and so is
 * an operator's wallet that could not confirm a payment (503
 * `wallet_unavailable`: the debit was rolled back and the ticket not sold;
 * the player decides to try again, operator.js).
 */
const retryable = (e) => e.code !== 'sold_out' && e.code !== 'wallet_unavailable' && [0, 502, 503, 504].includes(e.status);

async function once(method, path, { token, body, headers = {} }) {
  const requestHeaders = { Accept: 'application/json', ...headers };
  if (token) requestHeaders.Authorization = `Bearer ${token}`;
  let init = { method, headers: requestHeaders, cache: 'no-store' };
  // Every write says JSON, with a body or without: the server refuses any
  // other with 415 (what another site's form could send, docs/limits.md).
  if (method !== 'GET' && method !== 'HEAD') requestHeaders['Content-Type'] = 'application/json';
  if (body !== undefined) init.body = JSON.stringify(body);
  let response;
  try {
    response = await fetch(path, init);
  } catch (error) {
    throw new ApiError(0, 'network', String(error && error.message ? error.message : error));
  }
  let json = null;
  try {
    json = await response.json();
  } catch {
    if (response.ok) throw new ApiError(0, 'network', 'the answer was cut off');
  }
  if (!response.ok) {
    const refusal = new ApiError(response.status, (json && json.error) || `http_${response.status}`, (json && json.message) || response.statusText,
      retryAfterSeconds(response.headers.get('Retry-After')), json && typeof json.params === 'object' ? json.params : null);
    net.onRefusal(refusal);
    throw refusal;
  }
  // A shop's sale or payment repeated: the first answer again, nothing done twice.
  if (json && typeof json === 'object' && response.headers.get('Idempotent-Replayed') === 'true') {
    Object.defineProperty(json, 'replayed', { value: true });
  }
  return json;
}

/**
 * One request; with `retry`, the same request again until the server
 * answers (a refusal is an answer and is not retried).
 */
export async function request(method, path, opts = {}) {
  for (let attempt = 0; ; attempt++) {
    try {
      const out = await once(method, path, opts);
      if (attempt > 0) net.onRecovered();
      return out;
    } catch (error) {
      if (!opts.retry || !(error instanceof ApiError) || !retryable(error)) {
        if (attempt > 0) net.onRecovered();
        throw error;
      }
      net.onRetry(error, attempt);
      await Promise.race([sleep(net.backoff(attempt)), onlineAgain()]);
    }
  }
}

function onlineAgain() {
  return new Promise((resolve) => {
    if (typeof window === 'undefined') return;
    window.addEventListener('online', () => resolve(), { once: true });
  });
}

/** A random key that works on non-secure pages too (no crypto.randomUUID there). */
export function randomKey() {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (x) => x.toString(16).padStart(2, '0')).join('');
}

/**
 * Where a ticket's reads and actions go: a demo game's id (`DEMO-...`,
 * demo.js) at /api/demo/, a ticket's serial at /api/tickets/.
 */
const ticketPath = (id) => `${String(id).startsWith('DEMO-') ? '/api/demo' : '/api/tickets'}/${encodeURIComponent(id)}`;

export const api = {
  register: (name) => request('POST', '/api/players', { body: name ? { name } : {} }),
  me: (token) => request('GET', '/api/me', { token, retry: true }),
  tickets: (token) => request('GET', '/api/tickets', { token, retry: true }),
  ticket: (token, id) => request('GET', ticketPath(id), { token, retry: true }),
  /** A paper ticket's claim: where and until when its prize is paid. */
  claim: (token, id) => request('GET', `/api/tickets/${encodeURIComponent(id)}/claim`, { token, retry: true }),
  record: (token, id) => request('GET', `${ticketPath(id)}/record`, { token, retry: true }),
  /** A purchase takes no client seed: it comes with the ticket's first action. */
  buy: (token, key) =>
    request('POST', '/api/tickets', { token, body: {}, headers: { 'Idempotency-Key': key }, retry: true }),
  /**
   * `body`: `{seq, action: "play", card}` or `{seq, action: "draw"}`, at
   * `seq` 0 with the player's `client_seed`. A retry sends this very body.
   */
  act: (token, id, body) =>
    request('POST', `${ticketPath(id)}/actions`, { token, body, retry: true }),
  /**
   * Opens a sold paper ticket: `{ticket, token}`, `token` a bearer for that
   * ticket alone. With a player's token the ticket joins their list. The
   * same code gives the same ticket, so a lost answer is asked again.
   */
  redeem: (code, token) => request('POST', '/api/tickets/redeem', { token, body: { code }, retry: true }),
  /** A retailer's counter (`token`: the shop's retailer token); never retried: the shop clicks again. */
  retail: (token, what, serial) => request('POST', `/api/retail/${what}`, { token, body: { serial } }),
  /** The shop a retailer token signs in: `{shop}`. */
  retailMe: (token) => request('GET', '/api/retail/me', { token }),
  /** The shop's day (`YYYY-MM-DD`, Paris). */
  retailReport: (token, day) => request('GET', `/api/retail/report?day=${encodeURIComponent(day)}`, { token }),
  /**
   * A free demo game (no money, no account): `{ticket, token}`, `token` a
   * bearer for that game alone. Not retried: a lost answer costs one demo
   * of the network's hourly count, and the player clicks again.
   */
  demo: () => request('POST', '/api/demo', {}),
  /** The published blocks' roots (public). */
  emissions: () => request('GET', '/api/emissions', { retry: true }),
};

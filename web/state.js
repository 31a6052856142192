// state.js: the page's one state object `state`, the browser's storage
// (`local`, under the keys of `KEY`), and the paper tickets' own tokens.
//
// Shows nothing; needs nothing. Every other module of the page imports it.

/** The browser's storage keys (localStorage). */
export const KEY = {
  token: 'asc.token', lang: 'asc.lang', anim: 'asc.anim', sound: 'asc.sound', paper: 'asc.paper',
  scratched: 'asc.scratched', pendingBuy: 'asc.pendingBuy', current: 'asc.current',
  // Per ticket, the seed the browser drew (or the player typed) before the first card.
  seeds: 'asc.seeds',
  // The action sent and not answered yet: `{id, body}`.
  pendingAct: 'asc.pendingAct',
  // Operator mode (operator.js): the launch's session `{token, player, flags, lobby_url, started_ms, expires_ms}`,
  // the operator's lobby (kept after the session, for the page that says it ended),
  // and the reality checks answered `{started_ms, k}` (session.js).
  op: 'asc.op', lobby: 'asc.lobby', reality: 'asc.reality',
  // "Acheter un ticket à 3,00 € ?" before each purchase: '0' when the player turned it off (purchase.js).
  confirmBuy: 'asc.confirmBuy',
  // The last demo game started here (demo.js): `{id, token}`; never in "Mes tickets".
  demo: 'asc.demo',
  // The end (unix ms) of a self-exclusion the server reported here (limits.js): kept after a
  // logout or a closure, so that until then the welcome offers no new account nor demo (home.js).
  excludedUntil: 'asc.excludedUntil',
};
/** localStorage that never throws (private mode keeps to this tab). */
export const local = {
  get(key) {
    try { return localStorage.getItem(key); } catch { return null; }
  },
  set(key, value) {
    try { if (value == null) localStorage.removeItem(key); else localStorage.setItem(key, value); } catch { /* private mode: this tab only */ }
  },
  json(key, fallback) {
    try { return JSON.parse(this.get(key)) ?? fallback; } catch { return fallback; }
  },
};

/** The page's one state object; every module reads and writes it. */
export const state = {
  token: local.get(KEY.token),
  balance: null,
  anim: true,
  sound: false,
  confirmBuy: true, // ask before each purchase (settings.js, purchase.js)
  ticket: null, // the server's last word on the open ticket
  view: null, // what the table shows, rebuilt from the record and the answers' events
  busy: false,
  scratched: false,
  sending: false, // an action is on its way (its retries included)
  celebrate: null, // the id of a ticket just won here: its result celebrates once
  verdict: null, // the verification view's `{record, v}`
  // "Mes tickets" (history.js): the tickets loaded, and how the server pages them.
  tickets: null,
  ticketsPaged: false,
  ticketsNext: null,
  ticketsShown: 0,
  // The price of a ticket on sale (cents), as the server says it (purchase.js); null until known.
  price: null,
  // The largest prize of the table on sale (cents, GET /api/odds `table.top_prize_cents`); null until known.
  topPrize: null,
  // Operator mode (docs/operator-integration.md): the session of a launch
  // (operator.js), kept with the token it belongs to; null in the internal mode.
  op: storedOp(),
  // Why the page shows "session ended" (operator.js): the lobby is not shown behind it.
  ended: null,
};

/** The operator's session kept in this browser, when it belongs to the token kept here. */
function storedOp() {
  const op = local.json(KEY.op, null);
  return op && op.token && op.token === local.get(KEY.token) ? op : null;
}

// A paper ticket opened on this device keeps its own bearer token (from
// POST /api/tickets/redeem), per serial: a reload resumes it without an
// account, and it opens the ticket even when it is not in the player's list.
export const paperTokens = () => local.json(KEY.paper, {});
export const tokenFor = (id) => (isDemoId(id) ? demoToken(id) : paperTokens()[id] || state.token);
export const hasPaperToken = (id) => !!paperTokens()[id];
export function keepPaperToken(id, token) {
  const paper = paperTokens();
  if (token == null) delete paper[id];
  else paper[id] = token;
  local.set(KEY.paper, JSON.stringify(paper));
}
// A demo game (demo.js) keeps its own token too: the last one only.
export const isDemoId = (id) => String(id).startsWith('DEMO-');
const demoToken = (id) => {
  const demo = local.json(KEY.demo, null);
  return demo && demo.id === id ? demo.token : null;
};
export function keepDemo(id, token) {
  local.set(KEY.demo, id == null ? null : JSON.stringify({ id, token }));
}
/** A free demo game: no money, no account; DÉMO on every screen of it. */
export const isDemo = (tk) => !!tk && tk.channel === 'demo';
/** A ticket sold in a shop: scratched on paper, its prize paid by a retailer. */
export const isPaper = (tk) => !!tk && tk.channel === 'paper';

// A self-exclusion outlives the account on this device (the second outside audit): closing
// the account and opening another in the same browser must not undo it in a
// minute. Its end is kept (the later one, it is never shortened) and read
// while it runs; an exclusion over is forgotten.
export function keepExclusion(untilMs) {
  const until = Number(untilMs);
  if (!Number.isFinite(until) || until <= Date.now()) return;
  if (until > (deviceExclusion() ?? 0)) local.set(KEY.excludedUntil, String(until));
}
/** The end (unix ms) of the self-exclusion kept on this device while it runs; null otherwise. */
export function deviceExclusion() {
  const until = Number(local.get(KEY.excludedUntil));
  if (until > Date.now()) return until;
  if (local.get(KEY.excludedUntil) != null) local.set(KEY.excludedUntil, null);
  return null;
}

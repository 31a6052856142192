// operator.js: the page in operator mode (docs/operator-integration.md).
//
// An operator's platform launches the game with a one-time code in the
// address (`/?launch=CODE`). The page takes the code out of the address bar
// at once (a reload never sends it again), exchanges it (POST /api/launch)
// for a bearer token kept where the page keeps a player's token, and opens
// the lobby in the language the operator gave. From then on the operator
// owns the player: no registration, login, password, play money or limits
// page of ours (`body[data-mode="operator"]` hides them, style.css); the
// account area shows the balance held by the operator (GET /api/me) and a
// link back to the operator's lobby. The launch's flags decide whether the
// return to player is shown (rules.js) and drive the session's timer,
// reality checks and time limit (session.js). A purchase the operator's
// wallet refuses (402, 503 `wallet_unavailable`) is said in plain words by
// its code, never with the server's English message.
//
// In the internal mode (the default) nothing here runs: `state.op` stays null.

import { request, ApiError } from './api.js';
import { $, el, showAlert } from './dom.js';
import { t, lang, money, setLang } from './i18n.js';
import { state, local, KEY } from './state.js';

export const operatorApi = {
  /** Exchanges a launch's one-time code (a lost answer is asked again: the server says if the code was used). */
  launch: (code) => request('POST', '/api/launch', { body: { code }, retry: true }),
  /** The session's time, stakes and winnings (reality check), its flags and lobby. */
  session: (token) => request('GET', '/api/session', { token, retry: true }),
  /** Ends the session on the server (204, no body); a token already refused is ended too. */
  async end(token) {
    const response = await fetch('/api/sessions/current', { method: 'DELETE', headers: { Authorization: `Bearer ${token}`, Accept: 'application/json', 'Content-Type': 'application/json' }, cache: 'no-store' });
    if (!response.ok && response.status !== 401) throw new ApiError(response.status, `http_${response.status}`, response.statusText);
  },
};

/** Hooks set by app.js: the lobby (home.js) and the session's clock (session.js). */
const appHooks = { openHome: async () => {}, startSession: () => {}, stopSession: () => {}, rerender: () => {}, applyStrings: () => {} };
export function initOperator(hooks) {
  Object.assign(appHooks, hooks);
  applyMode();
}

/** An http(s) address, or null: the page never follows anything else. */
export function safeUrl(address) {
  if (typeof address !== 'string' || address === '') return null;
  try {
    const url = new URL(address, location.href);
    return url.protocol === 'https:' || url.protocol === 'http:' ? url.href : null;
  } catch {
    return null;
  }
}

/** The operator's lobby: this session's, else the last one kept in this browser. */
export const lobbyUrl = () => safeUrl(state.op ? state.op.lobby_url : local.get(KEY.lobby));

// ------------------------------------------------------------ the launch

/**
 * `?launch=CODE` of the address: the code, taken out of the address bar and
 * the history at once (before any request), or null.
 */
export function takeLaunchCode() {
  const query = new URLSearchParams(location.search);
  const code = query.get('launch');
  if (code == null) return null;
  query.delete('launch');
  const rest = query.toString();
  history.replaceState(null, '', `${location.pathname}${rest ? `?${rest}` : ''}${location.hash}`);
  return code;
}

/** The player's language before the server has said it: the address's, this browser's choice, or the device's. */
function guessLang() {
  const asked = new URLSearchParams(location.search).get('lang');
  if (asked) return asked;
  const kept = local.get(KEY.lang);
  if (kept) return kept;
  const dev = (navigator.languages && navigator.languages[0]) || navigator.language || 'fr';
  return /^fr\b/i.test(dev) ? 'fr' : /^en\b/i.test(dev) ? 'en' : 'fr';
}

/** Exchanges the launch's code; the lobby in the player's language, or the page that says why not. */
export async function launch(code) {
  document.body.dataset.mode = 'operator';
  // A purchase left pending belongs to an earlier player: it is not sent with the new token.
  local.set(KEY.pendingBuy, null);
  try {
    const launched = await operatorApi.launch(code);
    local.set(KEY.lang, setLang(launched.language));
    enter({
      token: launched.token, player: launched.player, flags: launched.flags || {}, lobby_url: launched.lobby_url ?? null,
      started_ms: launched.session_started_ms, expires_ms: launched.session_expires_ms,
      // This browser's clock against the server's, which began the session just now (session.js).
      skew_ms: Number.isFinite(launched.session_started_ms) ? Date.now() - launched.session_started_ms : 0,
    });
    appHooks.applyStrings();
    await appHooks.openHome();
  } catch (error) {
    setLang(guessLang());
    appHooks.applyStrings();
    const why = launchRefusal(error);
    if (why === 'launch_unavailable' && !state.op) {
      // A server without operators is in the internal mode: its own welcome is behind the brand.
      document.body.dataset.mode = 'internal';
    } else if (why !== 'launch_unavailable') {
      // A link refused by an operator's server: no earlier session of this
      // browser (maybe another player's) is opened in its place.
      appHooks.stopSession();
      forget();
    }
    showEnded(why);
  }
}

/** Why a launch was refused: the code (401), a server without operators (403, 404, 405), anything else. */
export function launchRefusal(error) {
  if (error instanceof ApiError && error.status === 401) return 'launch_invalid';
  if (error instanceof ApiError && [403, 404, 405].includes(error.status)) return 'launch_unavailable';
  return 'launch_failed';
}

/** The operator's session begins (a launch, or a reload that finds one): kept with its token. */
function enter(op) {
  state.token = op.token;
  state.balance = null;
  state.ended = null;
  state.op = op;
  local.set(KEY.token, op.token);
  local.set(KEY.op, JSON.stringify(op));
  if (safeUrl(op.lobby_url)) local.set(KEY.lobby, op.lobby_url);
  applyMode();
  appHooks.startSession();
}

/**
 * After GET /api/me (home.js): a token of the operator's mode whose
 * session this page does not know yet (another tab launched it, or the
 * storage was cleared) takes its flags and lobby from GET /api/session; a
 * session known here gets them fresh. An internal player's answer changes nothing.
 */
export async function noteMe(me) {
  if (!me || me.mode !== 'operator' || !state.token) return;
  try {
    const session = await operatorApi.session(state.token);
    const op = {
      ...(state.op && state.op.token === state.token ? state.op : {}),
      token: state.token, player: me.name ?? (state.op && state.op.player) ?? null,
      flags: session.flags || {}, lobby_url: session.lobby_url ?? null, started_ms: session.started_ms,
    };
    const fresh = !state.op || state.op.token !== state.token;
    state.op = op;
    local.set(KEY.op, JSON.stringify(op));
    if (safeUrl(op.lobby_url)) local.set(KEY.lobby, op.lobby_url);
    applyMode();
    if (fresh) appHooks.startSession();
    appHooks.rerender();
  } catch {
    /* the flags kept from the launch stay */
  }
}

/** The operator owns the accounts: ours are hidden (style.css), the lobby link shown. */
export function applyMode() {
  if (state.op) document.body.dataset.mode = 'operator';
  else if (document.body.dataset.mode !== 'operator') document.body.dataset.mode = 'internal';
  const link = $('lobby-link');
  const url = lobbyUrl();
  if (link) {
    link.hidden = document.body.dataset.mode !== 'operator' || !url;
    if (url) link.href = url;
  }
}

/** The operator's mode, with or without a session (one ended, a launch refused). */
export const operatorMode = () => document.body.dataset.mode === 'operator';

/** The return to player is shown: always in the internal mode, as the operator's flag says in its. */
export const showRtp = () => !state.op || !!(state.op.flags && state.op.flags.show_rtp);

// ------------------------------------------------------------ the session's end

/**
 * The session ends (the player's "Stop", the operator's time limit, a token
 * refused): ended on the server, forgotten here, then back to the
 * operator's lobby, or the page that says so.
 */
export async function endSession(reason) {
  const token = state.token;
  appHooks.stopSession();
  if (token && reason !== 'expired') {
    try {
      await operatorApi.end(token);
    } catch {
      /* the session expires on the server anyway; the page forgets it now */
    }
  }
  forget();
  const url = lobbyUrl();
  if (url && reason !== 'expired') {
    document.body.dataset.ended = reason;
    location.assign(url);
    return;
  }
  showEnded(reason);
}

/** The session is no longer this page's: its token and flags are forgotten (the lobby's address is kept). */
function forget() {
  if (state.op && safeUrl(state.op.lobby_url)) local.set(KEY.lobby, state.op.lobby_url);
  state.token = null;
  state.balance = null;
  state.op = null;
  local.set(KEY.token, null);
  local.set(KEY.op, null);
  local.set(KEY.pendingBuy, null);
  document.body.dataset.mode = 'operator';
  applyMode();
}

/** A token refused in the operator's mode: the session is over (no welcome of ours behind it). */
export function sessionRefused() {
  appHooks.stopSession();
  forget();
  showEnded('expired');
}

// ------------------------------------------------------------ the page "session ended" / "link refused"

const ENDED = {
  launch_invalid: ['ended.launch.title', 'ended.launch.text'],
  launch_unavailable: ['ended.unavailable.title', 'ended.unavailable.text'],
  launch_failed: ['ended.failed.title', 'ended.failed.text'],
  stop: ['ended.stop.title', 'ended.stop.text'],
  limit: ['ended.limit.title', 'ended.limit.text'],
  expired: ['ended.expired.title', 'ended.expired.text'],
};

/** Shows why there is no game here: a launch refused, or a session ended. No purchase behind it. */
export function showEnded(reason) {
  state.ended = ENDED[reason] ? reason : 'launch_failed';
  state.ticket = null;
  for (const view of document.querySelectorAll('#main > .view')) view.hidden = view.id !== 'view-ended';
  document.body.dataset.view = 'ended';
  showAlert('');
  renderEnded();
  document.body.dataset.state = 'idle';
  $('ended-title').focus();
}

function renderEnded() {
  const [title, text] = ENDED[state.ended] || ENDED.launch_failed;
  const box = $('view-ended');
  box.dataset.reason = state.ended;
  $('ended-title').textContent = t(title);
  $('ended-text').textContent = t(text);
  const url = lobbyUrl();
  const link = $('ended-lobby');
  link.hidden = !url;
  if (url) link.href = url;
  link.textContent = t('op.lobby');
}

export const endedPage = { view: 'ended', render: renderEnded };

// ------------------------------------------------------------ a purchase refused by the operator's wallet

/** The words for a refusal of the operator's wallet, by its code (402, 503). */
export const WALLET_REFUSALS = {
  insufficient_funds: 'op.refused.funds',
  limit_reached: 'op.refused.limit',
  player_blocked: 'op.refused.blocked',
  session_expired: 'op.refused.session',
  wallet_unavailable: 'op.refused.unavailable',
};

/** The i18n key of a refusal by the operator's wallet (a 402 of another code: the generic one), or null. */
export function walletRefusalKey(status, code) {
  if (status === 503 && code === 'wallet_unavailable') return WALLET_REFUSALS.wallet_unavailable;
  if (status !== 402) return null;
  return code !== 'wallet_unavailable' && WALLET_REFUSALS[code] ? WALLET_REFUSALS[code] : 'op.refused.other';
}

/**
 * A purchase refused by the operator's wallet, in the operator's mode: the
 * reason in plain words (by its code), with the link to the operator's
 * lobby. True when `error` was one (the caller shows other errors).
 */
export function showWalletRefusal(error) {
  if (!state.op || !(error instanceof ApiError)) return false;
  const key = walletRefusalKey(error.status, error.code);
  if (!key) return false;
  showAlert(t(key));
  const alert = $('alert');
  alert.dataset.reason = error.code;
  const url = lobbyUrl();
  if (url && error.code !== 'wallet_unavailable') alert.append(' ', el('a', { href: url, id: 'refusal-lobby', text: t('op.lobby') }));
  return true;
}

// ------------------------------------------------------------ the account area (#/compte) and the limits (#/limites)

/** The router's helpers (show, setBusy, errorText, renderBalance): set by app.js (`initOperatorPages`). */
let app = null;

export function initOperatorPages(ctx) {
  app = ctx;
}

async function openAccount() {
  // No session: nothing of the operator's to show, only why.
  if (!state.token) return showEnded(state.ended || 'expired');
  app.show('account');
  app.setBusy(true);
  if (state.token) {
    try {
      const me = await request('GET', '/api/me', { token: state.token, retry: true });
      state.me = me;
      state.balance = me.balance_cents;
      app.renderBalance();
    } catch (error) {
      if (error instanceof ApiError && error.status === 401) {
        app.setBusy(false);
        return sessionRefused();
      }
      showAlert(error instanceof ApiError && error.code === 'wallet_unavailable' ? t('op.balance.unavailable') : app.errorText(error));
    }
  }
  renderAccount();
  app.setBusy(false);
  $('account-title').focus();
}

function renderAccount() {
  const body = $('account-body');
  const url = lobbyUrl();
  const op = state.op || {};
  body.replaceChildren(
    el('dl', { class: 'facts account-facts' },
      el('div', {}, el('dt', { text: t('op.account.player') }), el('dd', { id: 'op-player', class: 'mono', text: op.player || (state.me && state.me.name) || '—' })),
      el('div', {}, el('dt', { text: t('op.account.balance') }),
        el('dd', { id: 'op-balance', 'data-cents': state.balance == null ? '' : String(state.balance), text: state.balance == null ? '—' : money(state.balance) })),
      op.started_ms ? el('div', {}, el('dt', { text: t('op.account.since') }), el('dd', { id: 'op-since', text: clockOf(op.started_ms) })) : null),
    el('p', { id: 'op-owner', text: t('op.account.owner') }),
    el('div', { class: 'actions' },
      url ? el('a', { class: 'button primary', id: 'account-lobby', href: url, text: t('op.lobby') }) : null,
      el('button', { type: 'button', id: 'op-stop', text: t('op.stop'), onclick: () => endSession('stop') })));
}

const clockOf = (ms) => new Intl.DateTimeFormat(lang() === 'fr' ? 'fr-FR' : 'en-GB', { hour: '2-digit', minute: '2-digit' }).format(new Date(ms));

function openLimits() {
  app.show('limits');
  renderLimits();
  app.setBusy(false);
  $('limits-title').focus();
}

function renderLimits() {
  const url = lobbyUrl();
  $('limits-body').replaceChildren(
    el('p', { id: 'op-limits', text: t('op.limits') }),
    url ? el('p', {}, el('a', { class: 'button primary', href: url, text: t('op.lobby') })) : null);
}

/** The pages of `#/compte` and `#/limites` in the operator's mode (router.js). */
export const operatorPages = {
  compte: { hash: 'compte', view: 'account', open: openAccount, render: renderAccount },
  limites: { hash: 'limites', view: 'limits', open: openLimits, render: renderLimits },
};

// account.js: the player keeps their account (docs/player-api.md).
//
// A player may play at once (POST /api/players without a login: the token
// lives in this browser only), or give the account a login and a password,
// at once on the welcome screen or later ("Garder mon compte": PUT
// /api/me/credentials). With them, "Se connecter" on another browser opens
// a session (POST /api/sessions) whose token the page uses exactly like a
// player's token, and logging out ends that session on the server (DELETE
// /api/sessions/current). The player's token of docs/contract.md stays for
// programs and tests: the folded "advanced" field of the welcome screen.
//
// Hooked from app.js with `initAccount(ctx)`: `ctx`, kept as `app`, is the
// page's state and app.js's helpers (state, local, KEY, show, showAlert,
// setBusy, errorText, ...).

import { request, ApiError } from './api.js';
import { announce } from './dom.js';
import { t } from './i18n.js';
import { local } from './state.js';

// The device tokens this browser was given, by login (docs/limits.md,
// "Logins"): sent with the next login of that account, so that strangers
// guessing its password elsewhere cannot keep its owner out of this
// device. A device token opens nothing by itself; it ends with the password.
const DEVICES = 'asc.devices';
export const deviceToken = (login) => local.json(DEVICES, {})[login] || undefined;
export function keepDeviceToken(login, token) {
  if (!login || !token) return;
  const all = local.json(DEVICES, {});
  all[login] = token;
  local.set(DEVICES, JSON.stringify(all));
}

const $ = (id) => document.getElementById(id);
/** The page's state and app.js's helpers: set by app.js (`initAccount`). */
let app = null;

/** login: 3 to 32 characters a-z 0-9 . _ - (upper case folded, as the server does). */
export const normalizeLogin = (s) => String(s || '').trim().toLowerCase();
export const validLogin = (s) => /^[a-z0-9._-]{3,32}$/.test(s);
export const validPassword = (s) => typeof s === 'string' && s.length >= 8 && s.length <= 128;

export const accountApi = {
  register: (body) => request('POST', '/api/players', { body }),
  login: (login, password) => request('POST', '/api/sessions', { body: { login, password, device_token: deviceToken(login) } }),
  me: (token) => request('GET', '/api/me', { token, retry: true }),
  credentials: (token, body) => request('PUT', '/api/me/credentials', { token, body }),
  // Recovery without e-mail, closing the account (docs/player-api.md).
  recover: (body) => request('POST', '/api/recovery', { body }),
  recoveryCode: (token, password) => request('POST', '/api/me/recovery-code', { token, body: { password } }),
  close: (token, body) => request('POST', '/api/me/close', { token, body }),
  /** 204 without a body: not through api.js's JSON reader. */
  async logout(token) {
    const response = await fetch('/api/sessions/current', { method: 'DELETE', headers: { Authorization: `Bearer ${token}`, Accept: 'application/json', 'Content-Type': 'application/json' }, cache: 'no-store' });
    if (!response.ok && response.status !== 401) {
      let body = null;
      try { body = await response.json(); } catch { /* no body */ }
      throw new ApiError(response.status, (body && body.error) || `http_${response.status}`, (body && body.message) || response.statusText);
    }
  },
};

// ------------------------------------------------------------ small helpers

function fieldError(input, text) {
  const box = $(`${input}-error`);
  const field = $(input);
  if (!box || !field) return;
  box.textContent = text || '';
  box.hidden = !text;
  if (text) {
    field.setAttribute('aria-invalid', 'true');
    field.focus();
  } else {
    field.removeAttribute('aria-invalid');
  }
}

function field(id, labelKey, { type = 'text', autocomplete, hintKey, value = '' } = {}) {
  const { el } = app;
  const described = [hintKey ? `${id}-hint` : null, `${id}-error`].filter(Boolean).join(' ');
  return el('div', { class: 'field' },
    el('label', { for: id, text: t(labelKey) }),
    el('input', { id, type, autocomplete, value, spellcheck: 'false', autocapitalize: 'off', 'aria-describedby': described }),
    hintKey ? el('p', { class: 'hint', id: `${id}-hint`, text: t(hintKey) }) : null,
    el('p', { class: 'field-error', id: `${id}-error`, role: 'alert', hidden: true }));
}

/** Checks a login and a password typed together; shows the first problem. */
function checkPair(loginId, passwordId) {
  const login = normalizeLogin($(loginId).value);
  const password = $(passwordId).value;
  fieldError(loginId, '');
  fieldError(passwordId, '');
  if (!validLogin(login)) {
    fieldError(loginId, t('account.login.bad'));
    return null;
  }
  if (!validPassword(password)) {
    fieldError(passwordId, t('account.password.bad'));
    return null;
  }
  return { login, password };
}

/** The player is in: keeps the token (the page's only key) and loads the lobby. */
async function signIn(token, balance, me) {
  const { state, local, KEY } = app;
  state.token = token;
  state.balance = balance;
  state.me = me || null;
  local.set(KEY.token, token);
  app.renderBalance();
  // Straight to the lobby (no hashchange to route a second time).
  if (location.hash) history.replaceState(null, '', location.pathname + location.search);
  await app.openHome();
}

// ------------------------------------------------------------ welcome: create, log in

async function register(ev) {
  ev.preventDefault();
  const { state } = app;
  if (state.busy) return;
  const name = $('name').value.trim();
  const typedLogin = normalizeLogin($('reg-login').value);
  const typedPassword = $('reg-password').value;
  fieldError('reg-login', '');
  fieldError('reg-password', '');
  let pair = null;
  // Login and password together or neither (play at once).
  if (typedLogin || typedPassword) {
    pair = checkPair('reg-login', 'reg-password');
    if (!pair) return;
  }
  app.setBusy(true);
  app.showAlert('');
  try {
    const body = {};
    if (name) body.name = name;
    if (pair) Object.assign(body, pair);
    const created = await accountApi.register(body);
    if (pair) keepDeviceToken(pair.login, created.device_token);
    $('reg-password').value = '';
    await signIn(created.token, created.balance_cents, { player_id: created.player_id, name: name || null, login: pair ? pair.login : null });
    // A login comes with its recovery code, shown this once.
    if (created.recovery_code) showRecoveryCode(created.recovery_code);
    $('buy')?.focus();
  } catch (error) {
    if (error instanceof ApiError && error.status === 409) fieldError('reg-login', t('account.login.taken'));
    else if (error instanceof ApiError && error.status === 400 && pair) fieldError('reg-login', app.errorText(error));
    else app.showAlert(app.errorText(error));
  } finally {
    app.setBusy(false);
  }
}

async function login(ev) {
  ev.preventDefault();
  const { state } = app;
  if (state.busy) return;
  const user = normalizeLogin($('login-login').value);
  const password = $('login-password').value;
  fieldError('login-login', '');
  fieldError('login-password', '');
  if (!user) return fieldError('login-login', t('account.login.empty'));
  if (!password) return fieldError('login-password', t('account.password.empty'));
  app.setBusy(true);
  app.showAlert('');
  try {
    const session = await accountApi.login(user, password);
    keepDeviceToken(user, session.device_token);
    const me = await accountApi.me(session.token);
    $('login-password').value = '';
    await signIn(session.token, me.balance_cents, me);
    $('buy')?.focus();
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) fieldError('login-password', t('account.login.wrong'));
    else if (error instanceof ApiError && error.status === 429) fieldError('login-password', t('account.login.slow', { wait: app.waitText(error.retryAfter ?? 60) }));
    else app.showAlert(app.errorText(error));
  } finally {
    app.setBusy(false);
  }
}

// ------------------------------------------------------------ the lobby's reminder

/** After the lobby loaded: who the player is, and a reminder to keep an account without a login. */
export async function onHome() {
  const { state } = app;
  const panel = $('keep-panel');
  if (!state.token) {
    state.me = null;
    if (panel) panel.hidden = true;
    return;
  }
  try {
    state.me = await accountApi.me(state.token);
  } catch {
    return; // the lobby shows its own error
  }
  if (panel) panel.hidden = !!state.me.login || !state.token;
}

// ------------------------------------------------------------ the account page (#/compte)

async function openAccount() {
  const { state } = app;
  app.show('account');
  app.setBusy(true);
  if (state.token) {
    try {
      state.me = await accountApi.me(state.token);
      state.balance = state.me.balance_cents;
      app.renderBalance();
    } catch (error) {
      if (error instanceof ApiError && error.status === 401) app.forgetToken();
      else app.showAlert(app.errorText(error));
    }
  }
  renderAccount();
  app.setBusy(false);
  $('account-title').focus();
}

function renderAccount() {
  const { state, el } = app;
  const body = $('account-body');
  body.replaceChildren();
  if (!state.token) {
    body.append(el('p', { text: t('account.out') }),
      el('p', {}, el('a', { class: 'button primary', href: '#', id: 'account-signin', text: t('account.out.link') })));
    return;
  }
  const me = state.me || {};
  body.append(el('dl', { class: 'facts account-facts' },
    el('div', {}, el('dt', { text: t('account.name') }), el('dd', { id: 'account-name', text: me.name || t('account.name.none') })),
    el('div', {}, el('dt', { text: t('account.login') }), el('dd', { id: 'account-login', text: me.login || t('account.login.none') })),
    el('div', {}, el('dt', { text: t('account.player') }), el('dd', { class: 'mono', text: me.player_id != null ? String(me.player_id) : '—' }))));
  const has = !!me.login;
  const form = el('form', { id: 'cred-form', class: 'stack', novalidate: true },
    el('h2', { text: t(has ? 'account.change.title' : 'account.keep.title') }),
    el('p', { class: 'hint', text: t(has ? 'account.change.text' : 'account.keep.text') }),
    field('cred-login', 'account.login.label', { autocomplete: 'username', hintKey: 'account.login.hint', value: me.login || '' }),
    field('cred-password', has ? 'account.password.new' : 'account.password.label', { type: 'password', autocomplete: 'new-password', hintKey: 'account.password.hint' }),
    has ? field('cred-current', 'account.password.current', { type: 'password', autocomplete: 'current-password' }) : null,
    el('button', { type: 'submit', class: 'primary', id: 'cred-save', text: t(has ? 'account.change.button' : 'account.keep.button') }),
    el('p', { id: 'cred-done', class: 'done', role: 'status', hidden: true }));
  form.addEventListener('submit', saveCredentials);
  body.append(form);
  if (has) body.append(recoverySection());
  body.append(el('div', { class: 'actions' },
    el('a', { class: 'button', href: '#/limites', text: t('nav.limits') }),
    el('button', { type: 'button', id: 'account-logout', text: t('account.logout') })));
  $('account-logout').addEventListener('click', askLogout);
  body.append(closeSection(has));
}

async function saveCredentials(ev) {
  ev.preventDefault();
  const { state } = app;
  if (state.busy) return;
  const has = !!(state.me && state.me.login);
  const pair = checkPair('cred-login', 'cred-password');
  if (!pair) return;
  const body = { ...pair };
  if (has) {
    const current = $('cred-current').value;
    fieldError('cred-current', '');
    if (!current) return fieldError('cred-current', t('account.password.empty'));
    body.current_password = current;
  }
  app.setBusy(true);
  try {
    const saved = await accountApi.credentials(state.token, body);
    keepDeviceToken(saved.login, saved.device_token);
    state.me = { ...(state.me || {}), login: saved.login };
    // A first login: its recovery code, shown this once.
    const code = has ? null : await accountApi.recoveryCode(state.token, pair.password).catch(() => null);
    renderAccount();
    if (code) showRecoveryCode(code.recovery_code, $('account-body'));
    const done = $('cred-done');
    done.textContent = t('account.saved', { login: saved.login });
    done.hidden = false;
    done.focus?.();
  } catch (error) {
    if (error instanceof ApiError && error.status === 409) fieldError('cred-login', t('account.login.taken'));
    else if (error instanceof ApiError && error.status === 403 && has) fieldError('cred-current', t('account.password.wrong'));
    else if (error instanceof ApiError && error.status === 401) app.forgetToken();
    else app.showAlert(app.errorText(error));
  } finally {
    app.setBusy(false);
  }
}

// ------------------------------------------------------------ logging out

let dialog = null;

/**
 * Logging out asks first. With a login: the player finds the account again
 * by logging in, and the session ends on the server. Without one: the
 * browser's token is the only key, so the page says so and offers to keep
 * the account first.
 */
export function askLogout() {
  const { state, el } = app;
  if (!state.token) return;
  $('settings').open = false;
  const login = state.me && state.me.login;
  dialog?.remove();
  dialog = el('dialog', { id: 'logout-dialog', class: 'dialog', 'aria-labelledby': 'logout-title', 'aria-describedby': 'logout-text', 'data-login': login ? 'yes' : 'no' },
    el('h2', { id: 'logout-title', text: t('logout.title') }),
    el('p', { id: 'logout-text', text: login ? t('logout.text.login', { login }) : t('logout.text.nologin') }),
    el('div', { class: 'actions' },
      login ? null : el('button', { type: 'button', class: 'primary', id: 'logout-keep', text: t('logout.keep') }),
      el('button', { type: 'button', id: 'logout-confirm', class: login ? 'primary' : null, text: t(login ? 'logout.confirm' : 'logout.confirm.nologin') }),
      el('button', { type: 'button', id: 'logout-cancel', text: t('logout.cancel') })));
  document.body.append(dialog);
  const close = () => { dialog.close(); dialog.remove(); dialog = null; };
  dialog.addEventListener('cancel', () => setTimeout(close));
  $('logout-cancel').addEventListener('click', close);
  $('logout-keep')?.addEventListener('click', () => { close(); location.hash = '#/compte'; });
  $('logout-confirm').addEventListener('click', async () => {
    close();
    await logout(!!login);
  });
  dialog.showModal();
  (login ? $('logout-confirm') : $('logout-keep')).focus();
}

async function logout(session) {
  const { state, local, KEY } = app;
  const token = state.token;
  app.setBusy(true);
  // The session ends on the server (a player's token without a login has no session to end).
  if (session && token) {
    try {
      await accountApi.logout(token);
    } catch (error) {
      app.setBusy(false);
      app.showAlert(app.errorText(error));
      return;
    }
  }
  await forgetHere('logout.done');
}

/** This browser forgets the account (a logout, a closed account), then says the text of `messageKey`. */
async function forgetHere(messageKey) {
  const { state, local, KEY } = app;
  state.token = null;
  state.balance = null;
  state.me = null;
  state.tickets = [];
  local.set(KEY.token, null);
  app.renderBalance();
  app.setBusy(false);
  if (location.hash) history.replaceState(null, '', location.pathname + location.search);
  await app.route();
  app.showAlert(t(messageKey), 'info');
}

// ------------------------------------------------------------ recovery code, closing

/**
 * The recovery code, shown this once in a panel at the top of the screen
 * the player is on (the lobby, or "Mon compte"), announced to screen
 * readers; it stays until the player says they noted it ("C'est noté").
 * Not a modal dialog: the player may copy it, or go on and come back.
 */
export function showRecoveryCode(code, where) {
  const { el } = app;
  $('recovery-panel')?.remove();
  const panel = el('section', { id: 'recovery-panel', class: 'panel recovery', 'aria-labelledby': 'recovery-title' },
    el('h2', { id: 'recovery-title', text: t('recovery.title') }),
    el('p', { id: 'recovery-text', text: t('recovery.text') }),
    el('p', { class: 'recovery-code mono', id: 'recovery-code', text: code }),
    el('p', { class: 'hint', text: t('recovery.once') }),
    el('div', { class: 'actions' },
      el('button', { type: 'button', id: 'recovery-copy', text: t('recovery.copy') }),
      el('button', { type: 'button', class: 'primary', id: 'recovery-done', text: t('recovery.done') })),
    el('p', { class: 'done', id: 'recovery-copied', role: 'status' }));
  // In the lobby just after the buy panel, across the page (the buy button stays where it was).
  if (where) where.prepend(panel);
  else $('buy-panel').after(panel);
  $('recovery-done').addEventListener('click', () => panel.remove());
  $('recovery-copy').addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(code);
      $('recovery-copied').textContent = t('recovery.copied');
    } catch {
      $('recovery-copied').textContent = t('recovery.copy.failed');
    }
  });
  // Said at once by screen readers (the live region of the page), seen at the top.
  announce(`${t('recovery.title')} : ${code}`);
}

/** "Mot de passe oublié ?" on the welcome screen: the login, the recovery code, a new password. */
async function recoverAccount(ev) {
  ev.preventDefault();
  const { state } = app;
  if (state.busy) return;
  const login = normalizeLogin($('forgot-login').value);
  const code = $('forgot-code').value.trim();
  const password = $('forgot-password').value;
  for (const id of ['forgot-login', 'forgot-code', 'forgot-password']) fieldError(id, '');
  if (!login) return fieldError('forgot-login', t('account.login.empty'));
  if (!code) return fieldError('forgot-code', t('forgot.code.empty'));
  if (!validPassword(password)) return fieldError('forgot-password', t('account.password.bad'));
  app.setBusy(true);
  app.showAlert('');
  try {
    const recovered = await accountApi.recover({ login, recovery_code: code, password });
    keepDeviceToken(login, recovered.device_token);
    const me = await accountApi.me(recovered.token);
    for (const id of ['forgot-code', 'forgot-password']) $(id).value = '';
    $('forgot').open = false;
    await signIn(recovered.token, me.balance_cents, me);
    showRecoveryCode(recovered.recovery_code);
    app.showAlert(t('forgot.done'), 'info');
    $('buy')?.focus();
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) fieldError('forgot-code', t('forgot.wrong'));
    else if (error instanceof ApiError && error.status === 429) fieldError('forgot-code', t('account.login.slow', { wait: app.waitText(error.retryAfter ?? 60) }));
    else if (error instanceof ApiError && error.status === 400) fieldError('forgot-password', app.errorText(error));
    else app.showAlert(app.errorText(error));
  } finally {
    app.setBusy(false);
  }
}

/** The account page's "Code de secours": a new one, with the password. */
function recoverySection() {
  const { el } = app;
  const form = el('form', { id: 'recovery-form', class: 'stack', novalidate: true, 'aria-labelledby': 'recovery-section-title' },
    el('h2', { id: 'recovery-section-title', text: t('recovery.section') }),
    el('p', { class: 'hint', text: t('recovery.section.text') }),
    field('recovery-password', 'account.password.current', { type: 'password', autocomplete: 'current-password' }),
    el('button', { type: 'submit', id: 'recovery-new', text: t('recovery.new') }));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const { state } = app;
    if (state.busy) return;
    const password = $('recovery-password').value;
    fieldError('recovery-password', '');
    if (!password) return fieldError('recovery-password', t('account.password.empty'));
    app.setBusy(true);
    try {
      const issued = await accountApi.recoveryCode(state.token, password);
      $('recovery-password').value = '';
      showRecoveryCode(issued.recovery_code, $('account-body'));
      $('recovery-code').scrollIntoView?.({ block: 'nearest' });
    } catch (error) {
      if (error instanceof ApiError && error.status === 403) fieldError('recovery-password', t('account.password.wrong'));
      else if (error instanceof ApiError && error.status === 401) app.forgetToken();
      else app.showAlert(app.errorText(error));
    } finally {
      app.setBusy(false);
    }
  });
  return form;
}

/** The account page's "Fermer mon compte": with the password (or, without a login, a confirmation). */
function closeSection(has) {
  const { el } = app;
  const form = el('form', { id: 'close-form', class: 'stack danger-zone', novalidate: true, 'aria-labelledby': 'close-title' },
    el('h2', { id: 'close-title', text: t('close.title') }),
    el('p', { text: t('close.text') }),
    el('p', { class: 'hint', text: t('close.kept') }),
    has ? field('close-password', 'account.password.label', { type: 'password', autocomplete: 'current-password' }) : null,
    el('label', { class: 'switch' }, el('input', { type: 'checkbox', id: 'close-sure', 'aria-describedby': 'close-sure-error' }), ' ', el('span', { text: t('close.sure') })),
    el('p', { class: 'field-error', id: 'close-sure-error', role: 'alert', hidden: true }),
    el('button', { type: 'submit', class: 'danger', id: 'close-account', text: t('close.button') }));
  form.addEventListener('submit', closeAccount);
  return form;
}

async function closeAccount(ev) {
  ev.preventDefault();
  const { state, local, KEY } = app;
  if (state.busy) return;
  const has = !!(state.me && state.me.login);
  const body = {};
  fieldError('close-sure', '');
  if (has) {
    fieldError('close-password', '');
    const password = $('close-password').value;
    if (!password) return fieldError('close-password', t('account.password.empty'));
    body.password = password;
  }
  if (!$('close-sure').checked) return fieldError('close-sure', t('close.sure.needed'));
  app.setBusy(true);
  try {
    await accountApi.close(state.token, body);
  } catch (error) {
    app.setBusy(false);
    if (error instanceof ApiError && error.code === 'ticket_in_play') app.showAlert(t('close.inplay'));
    else if (error instanceof ApiError && error.status === 403 && has) fieldError('close-password', t('account.password.wrong'));
    else if (error instanceof ApiError && error.status === 401) app.forgetToken();
    else app.showAlert(app.errorText(error));
    return;
  }
  // Closed: this browser forgets the account.
  await forgetHere('close.done');
}

// ------------------------------------------------------------ wiring

export const accountPage = { hash: 'compte', view: 'account', open: openAccount, render: renderAccount };

export function initAccount(ctx) {
  app = ctx;
  $('register-form').addEventListener('submit', register);
  $('login-form').addEventListener('submit', login);
  $('forgot-form').addEventListener('submit', recoverAccount);
}

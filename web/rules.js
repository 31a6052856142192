// rules.js: the rules on screen ("Comment jouer", #/regles) and the exact
// odds and prizes ("Chances et gains", #/chances).
//
// Every figure comes from GET /api/odds (docs/player-api.md): the math
// crate's exact fractions, the same "p/q" strings as `as-capone odds
// --json`. The page shows each fraction as the server wrote it (in an
// element with `data-fraction`, which the browser tests compare with the
// math crate), and a rounded reading beside it, computed with BigInt so
// that large numerators lose nothing. The odds page says "1 chance sur X"
// first, a rounded percentage beside, and folds the exact fractions away
// for the curious. A schedule's own return to player is not shown (a
// schedule is not bought: the table's return is the player's figure). An
// operator whose launch flags say `show_rtp: false` (operator.js) gets no
// return to player here, nor the expected payout of a ticket (the same
// figure in euros).

import { request } from './api.js';
import { t, lang, money, rankLabel, cardName } from './i18n.js';
import { showRtp } from './operator.js';

/** `key.one` or `key.other` by the page's language's plural rules, `{n}` filled. */
const tn = (key, count, params = {}) =>
  t(`${key}.${new Intl.PluralRules(lang() === 'fr' ? 'fr-FR' : 'en-GB').select(count) === 'one' ? 'one' : 'other'}`, { n: count, ...params });

const $ = (id) => document.getElementById(id);
/** The page's state and app.js's helpers (show, setBusy, errorText, el...): set by app.js (`initRules`). */
let app = null;

/**
 * GET /api/odds, read once per visit (the table on sale does not change
 * under a page); purchase.js reads the price on sale from it too.
 */
let oddsPromise = null;
export function loadOdds() {
  if (!oddsPromise) {
    oddsPromise = request('GET', '/api/odds', { retry: true }).catch((error) => {
      oddsPromise = null;
      throw error;
    });
  }
  return oddsPromise;
}

// ------------------------------------------------------------ numbers

/** "p/q" into BigInts; null when malformed. */
export function parseFraction(text) {
  const match = /^(\d+)\/(\d+)$/.exec(String(text));
  if (!match || BigInt(match[2]) === 0n) return null;
  return [BigInt(match[1]), BigInt(match[2])];
}

/** A decimal number (a string "2.83" or a Number) in the page's language: "2,83". */
export function decimal(value, digits = 2) {
  const number = typeof value === 'string' ? Number(value) : value;
  return new Intl.NumberFormat(lang() === 'fr' ? 'fr-FR' : 'en-GB', { minimumFractionDigits: digits, maximumFractionDigits: digits }).format(number);
}

/** p/q as a percentage with `digits` decimals, rounded half up (exact BigInt arithmetic). */
export function percentOf(frac, digits = 2) {
  const parsed = parseFraction(frac);
  if (!parsed) return '—';
  const [numerator, denominator] = parsed;
  const scale = 10n ** BigInt(digits);
  const scaledPercent = (numerator * 100n * scale * 2n + denominator) / (2n * denominator); // round(p/q * 100 * scale)
  const percent = Number(scaledPercent) / Number(scale);
  // Tiny chances keep a few significant digits rather than "0,00".
  if (scaledPercent === 0n && numerator > 0n) {
    const tinyPercent = Number(numerator) / Number(denominator) * 100;
    return `${new Intl.NumberFormat(lang() === 'fr' ? 'fr-FR' : 'en-GB', { maximumSignificantDigits: 3 }).format(tinyPercent)}\u00a0%`;
  }
  // A non-breaking space: "%" never alone at the start of a line.
  return `${decimal(percent, digits)}\u00a0%`;
}

/** q/p rounded to two decimals ("1 chance sur X"), as a Number; null for a zero chance. */
export function oneIn(frac) {
  const parsed = parseFraction(frac);
  if (!parsed || parsed[0] === 0n) return null;
  const [numerator, denominator] = parsed;
  return Number((denominator * 100n * 2n + numerator) / (2n * numerator)) / 100;
}

const oneInText = (frac) => {
  const oneInN = oneIn(frac);
  return oneInN == null ? t('odds.never') : t('odds.one_in', { n: oneInN >= 1000 ? decimal(Math.round(oneInN), 0) : decimal(oneInN) });
};

/** The exact fraction as the server wrote it, marked for the tests. */
function fraction(key, value) {
  return app.el('span', { class: 'frac mono', 'data-fraction': key, text: value });
}

// ------------------------------------------------------------ card illustrations

/** A small card (the game's own CSS cards), hidden from screen readers: the figure has a label. */
function mini(rank, suit, extra = '') {
  const { el } = app;
  if (suit === 'back') return el('span', { class: `card back tiny ${extra}`, 'aria-hidden': 'true' });
  const sym = suit === 'hearts' ? '♥' : '♠';
  return el('span', { class: `card ${suit === 'hearts' ? 'heart' : 'spade'} tiny ${extra}`, 'aria-hidden': 'true', 'data-card': rank },
    el('span', { class: 'rank', text: rankLabel(rank) }),
    el('span', { class: 'suit', text: sym }),
    el('span', { class: 'pip', text: sym }));
}

/** A figure: a row of cards and signs, with one sentence for screen readers. */
function figure(label, ...parts) {
  const { el } = app;
  return el('figure', { class: 'illus' },
    el('div', { class: 'illus-row', role: 'img', 'aria-label': label }, ...parts),
    el('figcaption', { class: 'hint', 'aria-hidden': 'true', text: label }));
}
const sign = (s, cls = '') => app.el('span', { class: `illus-sign ${cls}`, 'aria-hidden': 'true', text: s });
const badge = (s, cls) => app.el('span', { class: `illus-badge ${cls}`, 'aria-hidden': 'true', text: s });
const deck = () => app.el('span', { class: 'illus-deck', 'aria-hidden': 'true' }, mini(null, 'back'), app.el('span', { class: 'illus-deck-n', text: '16' }));

// ------------------------------------------------------------ Comment jouer (#/regles)

async function openRules() {
  app.show('rules');
  renderRules();
  app.setBusy(false);
  $('rules-title').focus();
  try {
    rulesOdds = await loadOdds();
    if (document.body.dataset.view === 'rules') renderRules();
  } catch {
    // The rules read without the figures; the odds page says what failed.
  }
}

let rulesOdds = null;

function renderRules() {
  const { el } = app;
  const body = $('rules-body');
  const ranks = ['A', 'K', 'Q', 'J', '10', '9', '8', '7'];
  const sec = (id, title, ...children) => el('section', { class: 'rule', 'aria-labelledby': id }, el('h2', { id, text: title }), ...children);
  body.replaceChildren(
    el('p', { class: 'lead', text: t('rules.lead') }),
    sec('rules-duel', t('rules.duel.title'),
      el('p', { text: t('rules.duel.text') }),
      figure(t('rules.duel.fig1'),
        el('span', { class: 'illus-hand' }, ...['7', '8', '9', '10', 'J', 'Q', 'K', 'A'].map((r) => mini(r, 'hearts'))),
        sign(t('rules.vs'), 'word'),
        el('span', { class: 'illus-hand' }, ...Array.from({ length: 8 }, () => mini(null, 'back')))),
      el('p', { text: t('rules.order', { order: ranks.map(rankLabel).join(' > ') }) }),
      figure(t('rules.duel.fig2', { p: cardName('Q', 'hearts'), c: cardName('9', 'spades') }),
        mini('Q', 'hearts'), sign(t('rules.vs'), 'word'), mini('9', 'spades'), sign('→'), badge(t('outcome.won'), 'won')),
      el('p', { text: t('rules.duel.end') })),
    sec('rules-tie', t('rules.tie.title'),
      el('p', { text: t('rules.tie.text') }),
      figure(t('rules.tie.fig', { p: cardName('10', 'hearts'), c: cardName('10', 'spades'), dp: cardName('K', 'hearts'), dc: cardName('8', 'spades') }),
        mini('10', 'hearts'), sign('='), mini('10', 'spades'), sign('→'), deck(), sign('→'),
        mini('K', 'hearts', 'drawn'), sign(t('rules.vs'), 'word'), mini('8', 'spades', 'drawn'), sign('→'), badge(t('outcome.won'), 'won'))),
    sec('rules-extra', t('rules.extra.title'),
      el('p', { text: t('rules.extra.text') }),
      figure(t('rules.extra.fig', { p: cardName('A', 'hearts'), c: cardName('J', 'spades') }),
        badge(t('rules.tricks', { n: 4 }), 'tally'), sign('→'), deck(), sign('→'),
        mini('A', 'hearts', 'drawn'), sign(t('rules.vs'), 'word'), mini('J', 'spades', 'drawn'), sign('→'), badge(t('rules.extra.badge'), 'extra')),
      el('ul', { class: 'rule-list' },
        el('li', { text: t('rules.extra.higher') }),
        el('li', { text: t('rules.extra.lower') }),
        el('li', { text: t('rules.extra.equal') }))),
    sec('rules-last', t('rules.last.title'),
      el('p', { text: t('rules.last.text') }),
      figure(t('rules.last.fig'),
        el('span', { class: 'illus-game' }, el('span', { class: 'illus-game-name', text: t('ticket.game1') }), badge(t('rules.tricks', { n: 4 }), 'tally')),
        sign('→'),
        el('span', { class: 'illus-game' }, el('span', { class: 'illus-game-name', text: t('ticket.gameN', { n: 1 }) }), badge(t('rules.tricks', { n: 6 }), 'won')),
        sign('→'), badge(t('rules.last.prize'), 'prize'))),
    sec('rules-prizes', t('rules.prizes.title'),
      el('p', { text: t('rules.prizes.text') }),
      el('p', { text: t('rules.strategy') })),
    rulesFigures(),
  );
}

/** The rules' exact figures, when /api/odds answered. */
function rulesFigures() {
  const { el } = app;
  const box = el('section', { class: 'rule figures', 'aria-labelledby': 'rules-figures' }, el('h2', { id: 'rules-figures', text: t('rules.figures.title') }));
  if (!rulesOdds) {
    box.append(el('p', { class: 'hint', text: t('odds.loading') }));
    return box;
  }
  const odds = rulesOdds;
  const row = (label, key, value) => el('div', {}, el('dt', { text: label }),
    el('dd', {}, fraction(key, value), el('span', { class: 'approx', text: ` ≈ ${percentOf(value)} · ${oneInText(value)}` })));
  box.append(el('dl', { class: 'facts odds-facts' },
    row(t('rules.figures.four'), 'rules-per_round-4', odds.per_round['4']),
    row(t('rules.figures.extra'), 'rules-extra_per_round', odds.extra_per_round),
    row(t('rules.figures.lose'), 'rules-final-lose', odds.final.lose)),
  el('p', {}, el('a', { href: '#/chances', text: t('rules.figures.more') })));
  return box;
}

// ------------------------------------------------------------ Chances et gains (#/chances)

let oddsState = { odds: null, error: null };

async function openOdds() {
  app.show('odds');
  app.setBusy(true);
  oddsState = { odds: null, error: null };
  renderOdds();
  try {
    oddsState.odds = await loadOdds();
  } catch (error) {
    oddsState.error = error;
  }
  renderOdds();
  app.setBusy(false);
  $('odds-title').focus();
}

function renderOdds() {
  const { el } = app;
  const body = $('odds-body');
  const { odds: odds, error } = oddsState;
  if (error) {
    body.replaceChildren(el('p', { class: 'field-error', role: 'alert', text: app.errorText(error) }));
    return;
  }
  if (!odds) {
    body.replaceChildren(el('p', { class: 'hint', text: t('odds.loading') }));
    return;
  }
  const table = odds.table;
  const price = table.price_cents;
  const block = odds.schedules.reduce((n, s) => n + s.tickets, 0);
  const finals = [['8', 'final-8'], ['7', 'final-7'], ['6', 'final-6'], ['5', 'final-5'], ['lose', 'final-lose']];

  const headline = el('p', { class: 'odds-headline', id: 'odds-one-in', 'data-one-in': table.one_in },
    el('strong', { text: t('odds.headline', { n: decimal(table.one_in) }) }));

  const rtp = showRtp();
  // The chances first, in words ("1 chance sur X"), a rounded percentage
  // beside; the exact fractions are folded below, for the curious.
  const summary = el('dl', { class: 'facts odds-facts' },
    el('div', {}, el('dt', { text: t('odds.hit') }),
      el('dd', {}, el('strong', { text: oneInText(table.hit_rate) }), ' ', el('span', { class: 'approx num', text: `≈ ${percentOf(table.hit_rate)}` }))),
    !rtp ? null : el('div', {}, el('dt', { text: t('odds.rtp') }),
      el('dd', {}, el('strong', { id: 'odds-rtp-percent', class: 'num', text: percentOf(table.rtp) }), ' ', el('span', { class: 'approx', text: t('odds.rtp.explain') }))),
    !rtp ? null : el('div', {}, el('dt', { text: t('odds.expected', { price: money(price) }) }),
      el('dd', {}, el('strong', { class: 'num', text: expectedMoney(table.expected_payout_cents) }))));

  // The chance of each final trick count: the same for every ticket, whatever its prizes.
  const rows = finals.map(([outcome]) => el('tr', { 'data-outcome': outcome },
    el('th', { scope: 'row', text: outcome === 'lose' ? t('odds.lost') : t('rules.tricks', { n: outcome }) }),
    el('td', {}, el('span', { class: 'num', text: oneInText(odds.final[outcome]) })),
    el('td', {}, el('span', { class: 'num', text: percentOf(odds.final[outcome], outcome === '8' ? 5 : 2) }))));
  const finalTable = el('div', { class: 'scroll-x', role: 'region', tabindex: '0', 'aria-labelledby': 'odds-final-title' },
    el('table', { class: 'odds-table', id: 'odds-final' },
      el('thead', {}, el('tr', {},
        el('th', { scope: 'col', text: t('odds.col.outcome') }),
        el('th', { scope: 'col', text: t('odds.col.chance') }),
        el('th', { scope: 'col', text: t('odds.col.percent') }))),
      el('tbody', {}, ...rows)));

  // One game of eight tricks in detail.
  const perRound = el('details', { class: 'more' },
    el('summary', { text: t('odds.round.title') }),
    el('p', { class: 'hint', text: t('odds.round.text') }),
    el('dl', { class: 'facts odds-facts round' },
      ...['0', '1', '2', '3', '4', '5', '6', '7', '8'].map((k) => el('div', {}, el('dt', { text: tn('odds.round.k', Number(k)) }), el('dd', {}, fraction(`per_round-${k}`, odds.per_round[k])))),
      el('div', {}, el('dt', { text: t('rules.figures.extra') }), el('dd', {}, fraction('extra_per_round', odds.extra_per_round)))));

  // Each schedule: its share of a block, its prizes, its chance to win.
  // (Not its own return to player: a schedule is not bought, a ticket is,
  // and the table's return above is the one that speaks to a player.)
  const schedules = el('ol', { class: 'schedules', id: 'schedules' },
    ...odds.schedules.map((schedule, i) => el('li', { class: 'schedule', 'data-schedule': String(i) },
      el('h3', { text: t('odds.schedule.title', { n: i + 1 }) }),
      el('p', { class: 'schedule-win' }, el('strong', { 'data-one-in': schedule.one_in, text: schedule.one_in == null ? t('odds.never') : t('odds.schedule.win', { n: decimal(schedule.one_in) }) })),
      el('table', { class: 'prizes schedule-prizes' },
        el('caption', { class: 'sr-only', text: t('odds.schedule.prizes', { n: i + 1 }) }),
        el('tbody', {}, ...['8', '7', '6', '5'].map((tricks) => el('tr', {},
          el('th', { scope: 'row', text: t('rules.tricks', { n: tricks }) }),
          el('td', { 'data-cents': String(schedule.prizes_cents[tricks] ?? 0), text: schedule.prizes_cents[tricks] ? money(schedule.prizes_cents[tricks]) : t('odds.prize.none') }))))),
      el('p', { class: 'schedule-share hint', text: t('odds.schedule.share', { n: decimal(schedule.tickets, 0), block: decimal(block, 0), percent: percentOf(schedule.share) }) }))));

  // The exact fractions, folded, for the curious.
  const exactRow = (label, key, value) => el('div', {}, el('dt', { text: label }), el('dd', {}, fraction(key, value)));
  const exact = el('details', { class: 'more exact', id: 'odds-exact' },
    el('summary', { text: t('odds.exact.title') }),
    el('p', { class: 'hint', text: t('odds.exact.text') }),
    el('dl', { class: 'facts odds-facts' },
      exactRow(t('odds.hit'), 'hit_rate', table.hit_rate),
      !rtp ? null : exactRow(t('odds.rtp'), 'rtp', table.rtp),
      !rtp ? null : exactRow(t('odds.expected.cents', { price: money(price) }), 'expected_payout_cents', table.expected_payout_cents),
      ...finals.map(([k, key]) => exactRow(k === 'lose' ? t('odds.lost') : t('rules.tricks', { n: k }), key, odds.final[k])),
      ...odds.schedules.flatMap((schedule, i) => [
        exactRow(t('odds.exact.share', { n: i + 1 }), `schedule-${i}-share`, schedule.share),
        exactRow(t('odds.exact.win', { n: i + 1 }), `schedule-${i}-win_chance`, schedule.win_chance),
      ])));

  body.replaceChildren(
    headline,
    el('p', { class: 'lead', text: t('odds.lead', { per100: decimal(per100(table.hit_rate), 0) }) }),
    summary,
    el('section', { 'aria-labelledby': 'odds-final-title' },
      el('h2', { id: 'odds-final-title', text: t('odds.final.title') }),
      el('p', { text: t('odds.final.text') }),
      finalTable,
      perRound),
    el('section', { 'aria-labelledby': 'odds-schedules-title' },
      el('h2', { id: 'odds-schedules-title', text: t('odds.schedules.title') }),
      el('p', { text: t('odds.schedules.why', { block: decimal(block, 0), price: money(price) }) }),
      el('p', { class: 'hint', text: t('odds.schedules.same') }),
      schedules),
    exact,
    el('p', { class: 'hint', text: t('odds.source') }),
  );
}

/** Out of 100 tickets, how many (p/q * 100, rounded). */
function per100(frac) {
  const parsed = parseFraction(frac);
  if (!parsed) return 0;
  const [numerator, denominator] = parsed;
  return Number((numerator * 200n + denominator) / (2n * denominator));
}

/** An exact amount of cents ("p/q") as money, rounded to the cent. */
function expectedMoney(frac) {
  const parsed = parseFraction(frac);
  if (!parsed) return '—';
  const [numerator, denominator] = parsed;
  return money(Number((numerator * 2n + denominator) / (2n * denominator)));
}

// ------------------------------------------------------------ wiring

export const rulesPage = { hash: 'regles', view: 'rules', open: openRules, render: renderRules };
export const oddsPage = { hash: 'chances', view: 'odds', open: openOdds, render: renderOdds };

export function initRules(ctx) {
  app = ctx;
}

// games.js: the games of one ticket, in words. A ticket may be played over several games: each Extra duel won (four
// tricks, then the deck) deals eight new cards (art. 3.2.5), and only the
// last game decides (art. 3.2.5.5). The server lists them in `games`; a
// server without it still says enough: every game before the current one
// ended with exactly four tricks and a won Extra duel.
//
// Shows nothing by itself (home, ticket and result use it); needs i18n.js.

import { t, tn } from './i18n.js';

/** `[{game, tricks, extra}]`: `extra` "won", "lost" or null. */
export function gamesOf(tk) {
  if (Array.isArray(tk.games) && tk.games.length) return tk.games;
  const game = tk.game || 1;
  const out = [];
  for (let g = 1; g < game; g++) out.push({ game: g, tricks: 4, extra: 'won' });
  const done = tk.phase === 'finished' && tk.result;
  const tricks = done ? tk.result.tricks : tk.tricks_won;
  out.push({ game: game, tricks, extra: done && tk.result.tricks === 4 && tk.result.prize_cents === 0 ? 'lost' : null });
  return out;
}

/**
 * The one name of a game, everywhere (the header, the banner, the recap,
 * the history, the rules): "1re partie", then "Partie Extra 1", "Partie
 * Extra 2"... (EN "First game", "Extra game 1"...).
 */
export const gameName = (n) => (n === 1 ? t('ticket.game1') : t('ticket.gameN', { n: n - 1 }));

/** One game in words: "1re partie : 4 plis, duel Extra gagné", "Partie Extra 1 : 6 plis, décisive". */
export function gameText(game, last, finished) {
  const parts = [tn('games.tricks', game.tricks)];
  if (game.extra) parts.push(t(`games.extra.${game.extra}`));
  if (last) parts.push(finished ? t('games.decides') : t('games.inplay'));
  return t('games.row', { game: gameName(game.game), what: parts.join(', ') });
}

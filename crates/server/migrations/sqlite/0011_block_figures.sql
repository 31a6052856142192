-- as-capone server schema, version 11 (issue 30): each block's figures are
-- kept as they change, so that the desk and `as-capone report` read one
-- row per block instead of every ticket (20 s for 6 million tickets before,
-- BENCHMARKS.md "The desk with 20 emissions of 20 blocks"). The PostgreSQL
-- migration of the same number makes the same change.
--
-- A block's figures are sums over its tickets, and each is a function of
-- one table's row alone:
--   sold     tickets whose status is 'sold' or 'paid'        (tickets)
--   in_play  games not finished                              (ticket_games)
--   won      finished games with a prize                     (ticket_games)
--   lost     finished games without one                      (ticket_games)
--   prizes_won_cents   the prizes of the finished games      (ticket_games)
--   prizes_paid_cents  the prize movements' entries on any   (ledger_entries)
--                      account but house:prizes (id 3)
-- A game exists only for a sold ticket (online: written with the sale; on
-- paper: with the first redemption; operator mode: once the debit is
-- acknowledged, a released ticket never had one), so "games not finished"
-- is "sold and in play". The triggers below add each row's change to its
-- block's figures in the statement that makes it: whatever path writes a
-- sale, a game or a payment, its figures move in the same transaction.
-- The figures recounted from the tickets (store/emissions.rs
-- RECOUNT_BLOCKS) must equal them: `check_ledger` compares them on every
-- block (docs/operating.md), and the tests call it after their traffic.
--
-- `shard`: always 0 here (SQLite has one writer). On PostgreSQL each server
-- connection adds to its own row (its backend's pid), so that no two
-- transactions ever wait on the same counter; a block's figures are the sum
-- of its rows.
CREATE TABLE block_figures (
    block_id          BIGINT NOT NULL,
    shard             BIGINT NOT NULL,
    sold              BIGINT NOT NULL DEFAULT 0,
    in_play           BIGINT NOT NULL DEFAULT 0,
    won               BIGINT NOT NULL DEFAULT 0,
    lost              BIGINT NOT NULL DEFAULT 0,
    prizes_won_cents  BIGINT NOT NULL DEFAULT 0,
    prizes_paid_cents BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (block_id, shard)
) WITHOUT ROWID;

-- The figures of the tickets already sold, played and paid (an upgrade):
-- recounted once, as RECOUNT_BLOCKS does.
INSERT INTO block_figures (block_id, shard, sold, in_play, won, lost, prizes_won_cents, prizes_paid_cents)
SELECT t.block_id, 0,
       SUM(CASE WHEN t.status IN ('sold', 'paid') THEN 1 ELSE 0 END),
       SUM(CASE WHEN g.phase <> 'finished' THEN 1 ELSE 0 END),
       SUM(CASE WHEN g.phase = 'finished' AND g.prize_cents > 0 THEN 1 ELSE 0 END),
       SUM(CASE WHEN g.phase = 'finished' AND g.prize_cents = 0 THEN 1 ELSE 0 END),
       COALESCE(SUM(CASE WHEN g.phase = 'finished' THEN g.prize_cents ELSE 0 END), 0),
       COALESCE(SUM(pm.amount), 0)
FROM tickets t
LEFT JOIN ticket_games g ON g.ticket_id = t.id
LEFT JOIN (SELECT m.ticket_id, SUM(l.amount_cents) AS amount FROM movements m
           JOIN ledger_entries l ON l.movement_id = m.id
           WHERE m.reason = 'prize' AND l.account_id <> 3 GROUP BY m.ticket_id) pm ON pm.ticket_id = t.id
WHERE t.status IN ('sold', 'paid') OR g.ticket_id IS NOT NULL
GROUP BY t.block_id;

-- Sold: a ticket's status in or out of ('sold', 'paid'). Tickets are
-- written unsold or printed and never deleted once sold; the insert and
-- delete triggers keep the figures right even so.
CREATE TRIGGER block_figures_ticket_status AFTER UPDATE OF status ON tickets
WHEN (old.status IN ('sold', 'paid')) <> (new.status IN ('sold', 'paid'))
BEGIN
    INSERT INTO block_figures (block_id, shard, sold)
    VALUES (new.block_id, 0, CASE WHEN new.status IN ('sold', 'paid') THEN 1 ELSE -1 END)
    ON CONFLICT (block_id, shard) DO UPDATE SET sold = sold + excluded.sold;
END;

CREATE TRIGGER block_figures_ticket_insert AFTER INSERT ON tickets
WHEN new.status IN ('sold', 'paid')
BEGIN
    INSERT INTO block_figures (block_id, shard, sold) VALUES (new.block_id, 0, 1)
    ON CONFLICT (block_id, shard) DO UPDATE SET sold = sold + 1;
END;

CREATE TRIGGER block_figures_ticket_delete AFTER DELETE ON tickets
WHEN old.status IN ('sold', 'paid')
BEGIN
    INSERT INTO block_figures (block_id, shard, sold) VALUES (old.block_id, 0, -1)
    ON CONFLICT (block_id, shard) DO UPDATE SET sold = sold - 1;
END;

-- A game: in play until it finishes, then won or lost with its prize. Its
-- every action rewrites the row; the figures move only when it finishes
-- (or, never in practice, when a finished game's prize changes).
CREATE TRIGGER block_figures_game_insert AFTER INSERT ON ticket_games
BEGIN
    INSERT INTO block_figures (block_id, shard, in_play, won, lost, prizes_won_cents)
    SELECT t.block_id, 0,
           CASE WHEN new.phase <> 'finished' THEN 1 ELSE 0 END,
           CASE WHEN new.phase = 'finished' AND new.prize_cents > 0 THEN 1 ELSE 0 END,
           CASE WHEN new.phase = 'finished' AND new.prize_cents = 0 THEN 1 ELSE 0 END,
           CASE WHEN new.phase = 'finished' THEN COALESCE(new.prize_cents, 0) ELSE 0 END
    FROM tickets t WHERE t.id = new.ticket_id
    ON CONFLICT (block_id, shard) DO UPDATE SET
        in_play = in_play + excluded.in_play, won = won + excluded.won, lost = lost + excluded.lost,
        prizes_won_cents = prizes_won_cents + excluded.prizes_won_cents;
END;

CREATE TRIGGER block_figures_game_update AFTER UPDATE OF phase, prize_cents ON ticket_games
WHEN (old.phase = 'finished') <> (new.phase = 'finished')
  OR (new.phase = 'finished' AND old.prize_cents IS NOT new.prize_cents)
BEGIN
    INSERT INTO block_figures (block_id, shard, in_play, won, lost, prizes_won_cents)
    SELECT t.block_id, 0,
           (CASE WHEN new.phase <> 'finished' THEN 1 ELSE 0 END)
             - (CASE WHEN old.phase <> 'finished' THEN 1 ELSE 0 END),
           (CASE WHEN new.phase = 'finished' AND new.prize_cents > 0 THEN 1 ELSE 0 END)
             - (CASE WHEN old.phase = 'finished' AND old.prize_cents > 0 THEN 1 ELSE 0 END),
           (CASE WHEN new.phase = 'finished' AND new.prize_cents = 0 THEN 1 ELSE 0 END)
             - (CASE WHEN old.phase = 'finished' AND old.prize_cents = 0 THEN 1 ELSE 0 END),
           (CASE WHEN new.phase = 'finished' THEN COALESCE(new.prize_cents, 0) ELSE 0 END)
             - (CASE WHEN old.phase = 'finished' THEN COALESCE(old.prize_cents, 0) ELSE 0 END)
    FROM tickets t WHERE t.id = new.ticket_id
    ON CONFLICT (block_id, shard) DO UPDATE SET
        in_play = in_play + excluded.in_play, won = won + excluded.won, lost = lost + excluded.lost,
        prizes_won_cents = prizes_won_cents + excluded.prizes_won_cents;
END;

CREATE TRIGGER block_figures_game_delete AFTER DELETE ON ticket_games
BEGIN
    INSERT INTO block_figures (block_id, shard, in_play, won, lost, prizes_won_cents)
    SELECT t.block_id, 0,
           -(CASE WHEN old.phase <> 'finished' THEN 1 ELSE 0 END),
           -(CASE WHEN old.phase = 'finished' AND old.prize_cents > 0 THEN 1 ELSE 0 END),
           -(CASE WHEN old.phase = 'finished' AND old.prize_cents = 0 THEN 1 ELSE 0 END),
           -(CASE WHEN old.phase = 'finished' THEN COALESCE(old.prize_cents, 0) ELSE 0 END)
    FROM tickets t WHERE t.id = old.ticket_id
    ON CONFLICT (block_id, shard) DO UPDATE SET
        in_play = in_play + excluded.in_play, won = won + excluded.won, lost = lost + excluded.lost,
        prizes_won_cents = prizes_won_cents + excluded.prizes_won_cents;
END;

-- Paid: an entry of a prize movement on an account other than
-- house:prizes (the player's, the shop's, the payment centre's). Entries
-- are never updated or deleted.
CREATE TRIGGER block_figures_prize_paid AFTER INSERT ON ledger_entries
WHEN new.account_id <> 3
BEGIN
    INSERT INTO block_figures (block_id, shard, prizes_paid_cents)
    SELECT t.block_id, 0, new.amount_cents
    FROM movements m JOIN tickets t ON t.id = m.ticket_id
    WHERE m.id = new.movement_id AND m.reason = 'prize'
    ON CONFLICT (block_id, shard) DO UPDATE SET prizes_paid_cents = prizes_paid_cents + excluded.prizes_paid_cents;
END;

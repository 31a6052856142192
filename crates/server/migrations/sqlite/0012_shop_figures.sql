-- as-capone server schema, version 12 (issue 30): each shop's paper figures
-- are kept as they change, as migration 11 keeps each block's, so that the
-- desk's panel of shops (GET /api/admin/shops) reads a few rows instead of
-- every paper ticket (10 s for 1.5 million paper tickets sold before,
-- BENCHMARKS.md "The desk with 20 emissions of 20 blocks"). The PostgreSQL
-- migration of the same number makes the same change.
--
-- One row per shop and emission (and per writing connection on
-- PostgreSQL, `shard` as in block_figures; 0 here), the sums over the
-- paper tickets:
--   sold              tickets the shop sold (`tickets.shop`)
--   redeemed          ...opened by their play code (a game exists)
--   won_unpaid        ...finished with a prize and not paid (`paid_ms` NULL)
--   won_unpaid_cents  their prizes
--   paid              tickets the shop paid (`tickets.paid_shop`; a game exists)
--   paid_cents        their prizes
-- What the shop is owed is read from won_unpaid of the emissions whose
-- claim deadline has not passed. A ticket's figures depend on its row and
-- its game's: the triggers of each table read the other's row as it is,
-- so one statement must not change both a paper ticket's sale or payment
-- and its game (none does: a sale, a redemption, an action and a payment
-- are separate changes). The ledger check recounts these figures from the
-- tickets (store/desk_charts.rs RECOUNT_SHOPS) and counts the shops and
-- emissions that differ.
CREATE TABLE shop_figures (
    shop             TEXT   NOT NULL,
    emission_id      BIGINT NOT NULL,
    shard            BIGINT NOT NULL,
    sold             BIGINT NOT NULL DEFAULT 0,
    redeemed         BIGINT NOT NULL DEFAULT 0,
    won_unpaid       BIGINT NOT NULL DEFAULT 0,
    won_unpaid_cents BIGINT NOT NULL DEFAULT 0,
    paid             BIGINT NOT NULL DEFAULT 0,
    paid_cents       BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (shop, emission_id, shard)
) WITHOUT ROWID;

-- The figures of the paper tickets already sold (an upgrade), counted once.
INSERT INTO shop_figures (shop, emission_id, shard, sold, redeemed, won_unpaid, won_unpaid_cents, paid, paid_cents)
SELECT shop, emission_id, 0, SUM(sold), SUM(redeemed), SUM(won_unpaid), SUM(won_unpaid_cents), SUM(paid), SUM(paid_cents)
FROM (
    SELECT t.shop AS shop, b.emission_id AS emission_id, 1 AS sold,
           CASE WHEN g.ticket_id IS NOT NULL THEN 1 ELSE 0 END AS redeemed,
           CASE WHEN g.phase = 'finished' AND g.prize_cents > 0 AND t.paid_ms IS NULL THEN 1 ELSE 0 END AS won_unpaid,
           CASE WHEN g.phase = 'finished' AND g.prize_cents > 0 AND t.paid_ms IS NULL THEN g.prize_cents ELSE 0 END
               AS won_unpaid_cents,
           0 AS paid, 0 AS paid_cents
    FROM tickets t JOIN blocks b ON b.id = t.block_id LEFT JOIN ticket_games g ON g.ticket_id = t.id
    WHERE t.shop IS NOT NULL
    UNION ALL
    SELECT t.paid_shop, b.emission_id, 0, 0, 0, 0, 1, COALESCE(g.prize_cents, 0)
    FROM tickets t JOIN blocks b ON b.id = t.block_id JOIN ticket_games g ON g.ticket_id = t.id
    WHERE t.paid_shop IS NOT NULL
) x
GROUP BY shop, emission_id;

-- A paper ticket's sale or payment: its old figures taken from its old
-- shops, its new ones added to its new shops.
CREATE TRIGGER shop_figures_ticket AFTER UPDATE OF shop, paid_ms, paid_shop ON tickets
WHEN old.shop IS NOT new.shop OR old.paid_ms IS NOT new.paid_ms OR old.paid_shop IS NOT new.paid_shop
BEGIN
    INSERT INTO shop_figures (shop, emission_id, shard, sold, redeemed, won_unpaid, won_unpaid_cents)
    SELECT old.shop, b.emission_id, 0, -1,
           -(CASE WHEN g.ticket_id IS NOT NULL THEN 1 ELSE 0 END),
           -(CASE WHEN g.phase = 'finished' AND g.prize_cents > 0 AND old.paid_ms IS NULL THEN 1 ELSE 0 END),
           -(CASE WHEN g.phase = 'finished' AND g.prize_cents > 0 AND old.paid_ms IS NULL THEN g.prize_cents ELSE 0 END)
    FROM blocks b LEFT JOIN ticket_games g ON g.ticket_id = old.id
    WHERE b.id = old.block_id AND old.shop IS NOT NULL
    ON CONFLICT (shop, emission_id, shard) DO UPDATE SET
        sold = sold + excluded.sold, redeemed = redeemed + excluded.redeemed,
        won_unpaid = won_unpaid + excluded.won_unpaid, won_unpaid_cents = won_unpaid_cents + excluded.won_unpaid_cents;
    INSERT INTO shop_figures (shop, emission_id, shard, sold, redeemed, won_unpaid, won_unpaid_cents)
    SELECT new.shop, b.emission_id, 0, 1,
           CASE WHEN g.ticket_id IS NOT NULL THEN 1 ELSE 0 END,
           CASE WHEN g.phase = 'finished' AND g.prize_cents > 0 AND new.paid_ms IS NULL THEN 1 ELSE 0 END,
           CASE WHEN g.phase = 'finished' AND g.prize_cents > 0 AND new.paid_ms IS NULL THEN g.prize_cents ELSE 0 END
    FROM blocks b LEFT JOIN ticket_games g ON g.ticket_id = new.id
    WHERE b.id = new.block_id AND new.shop IS NOT NULL
    ON CONFLICT (shop, emission_id, shard) DO UPDATE SET
        sold = sold + excluded.sold, redeemed = redeemed + excluded.redeemed,
        won_unpaid = won_unpaid + excluded.won_unpaid, won_unpaid_cents = won_unpaid_cents + excluded.won_unpaid_cents;
    INSERT INTO shop_figures (shop, emission_id, shard, paid, paid_cents)
    SELECT old.paid_shop, b.emission_id, 0, -1, -COALESCE(g.prize_cents, 0)
    FROM blocks b JOIN ticket_games g ON g.ticket_id = old.id
    WHERE b.id = old.block_id AND old.paid_shop IS NOT NULL
    ON CONFLICT (shop, emission_id, shard) DO UPDATE SET
        paid = paid + excluded.paid, paid_cents = paid_cents + excluded.paid_cents;
    INSERT INTO shop_figures (shop, emission_id, shard, paid, paid_cents)
    SELECT new.paid_shop, b.emission_id, 0, 1, COALESCE(g.prize_cents, 0)
    FROM blocks b JOIN ticket_games g ON g.ticket_id = new.id
    WHERE b.id = new.block_id AND new.paid_shop IS NOT NULL
    ON CONFLICT (shop, emission_id, shard) DO UPDATE SET
        paid = paid + excluded.paid, paid_cents = paid_cents + excluded.paid_cents;
END;

-- A paper ticket's game: opened (redeemed), finished with a prize (won,
-- unpaid unless the ticket is paid), and the prize of a paid ticket.
-- Online tickets (no shop) add nothing.
CREATE TRIGGER shop_figures_game_insert AFTER INSERT ON ticket_games
BEGIN
    INSERT INTO shop_figures (shop, emission_id, shard, redeemed, won_unpaid, won_unpaid_cents)
    SELECT t.shop, b.emission_id, 0, 1,
           CASE WHEN new.phase = 'finished' AND new.prize_cents > 0 AND t.paid_ms IS NULL THEN 1 ELSE 0 END,
           CASE WHEN new.phase = 'finished' AND new.prize_cents > 0 AND t.paid_ms IS NULL THEN new.prize_cents ELSE 0 END
    FROM tickets t JOIN blocks b ON b.id = t.block_id
    WHERE t.id = new.ticket_id AND t.shop IS NOT NULL
    ON CONFLICT (shop, emission_id, shard) DO UPDATE SET
        redeemed = redeemed + excluded.redeemed,
        won_unpaid = won_unpaid + excluded.won_unpaid, won_unpaid_cents = won_unpaid_cents + excluded.won_unpaid_cents;
    INSERT INTO shop_figures (shop, emission_id, shard, paid, paid_cents)
    SELECT t.paid_shop, b.emission_id, 0, 1, COALESCE(new.prize_cents, 0)
    FROM tickets t JOIN blocks b ON b.id = t.block_id
    WHERE t.id = new.ticket_id AND t.paid_shop IS NOT NULL
    ON CONFLICT (shop, emission_id, shard) DO UPDATE SET
        paid = paid + excluded.paid, paid_cents = paid_cents + excluded.paid_cents;
END;

CREATE TRIGGER shop_figures_game_update AFTER UPDATE OF phase, prize_cents ON ticket_games
WHEN (old.phase = 'finished') <> (new.phase = 'finished') OR old.prize_cents IS NOT new.prize_cents
BEGIN
    INSERT INTO shop_figures (shop, emission_id, shard, won_unpaid, won_unpaid_cents)
    SELECT t.shop, b.emission_id, 0,
           (CASE WHEN new.phase = 'finished' AND new.prize_cents > 0 AND t.paid_ms IS NULL THEN 1 ELSE 0 END)
             - (CASE WHEN old.phase = 'finished' AND old.prize_cents > 0 AND t.paid_ms IS NULL THEN 1 ELSE 0 END),
           (CASE WHEN new.phase = 'finished' AND new.prize_cents > 0 AND t.paid_ms IS NULL THEN new.prize_cents ELSE 0 END)
             - (CASE WHEN old.phase = 'finished' AND old.prize_cents > 0 AND t.paid_ms IS NULL THEN old.prize_cents ELSE 0 END)
    FROM tickets t JOIN blocks b ON b.id = t.block_id
    WHERE t.id = new.ticket_id AND t.shop IS NOT NULL
    ON CONFLICT (shop, emission_id, shard) DO UPDATE SET
        won_unpaid = won_unpaid + excluded.won_unpaid, won_unpaid_cents = won_unpaid_cents + excluded.won_unpaid_cents;
    INSERT INTO shop_figures (shop, emission_id, shard, paid_cents)
    SELECT t.paid_shop, b.emission_id, 0, COALESCE(new.prize_cents, 0) - COALESCE(old.prize_cents, 0)
    FROM tickets t JOIN blocks b ON b.id = t.block_id
    WHERE t.id = new.ticket_id AND t.paid_shop IS NOT NULL
    ON CONFLICT (shop, emission_id, shard) DO UPDATE SET paid_cents = paid_cents + excluded.paid_cents;
END;

CREATE TRIGGER shop_figures_game_delete AFTER DELETE ON ticket_games
BEGIN
    INSERT INTO shop_figures (shop, emission_id, shard, redeemed, won_unpaid, won_unpaid_cents)
    SELECT t.shop, b.emission_id, 0, -1,
           -(CASE WHEN old.phase = 'finished' AND old.prize_cents > 0 AND t.paid_ms IS NULL THEN 1 ELSE 0 END),
           -(CASE WHEN old.phase = 'finished' AND old.prize_cents > 0 AND t.paid_ms IS NULL THEN old.prize_cents ELSE 0 END)
    FROM tickets t JOIN blocks b ON b.id = t.block_id
    WHERE t.id = old.ticket_id AND t.shop IS NOT NULL
    ON CONFLICT (shop, emission_id, shard) DO UPDATE SET
        redeemed = redeemed + excluded.redeemed,
        won_unpaid = won_unpaid + excluded.won_unpaid, won_unpaid_cents = won_unpaid_cents + excluded.won_unpaid_cents;
    INSERT INTO shop_figures (shop, emission_id, shard, paid, paid_cents)
    SELECT t.paid_shop, b.emission_id, 0, -1, -COALESCE(old.prize_cents, 0)
    FROM tickets t JOIN blocks b ON b.id = t.block_id
    WHERE t.id = old.ticket_id AND t.paid_shop IS NOT NULL
    ON CONFLICT (shop, emission_id, shard) DO UPDATE SET
        paid = paid + excluded.paid, paid_cents = paid_cents + excluded.paid_cents;
END;

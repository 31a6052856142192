-- as-capone server schema, version 12 (issue 30): each shop's paper figures
-- are kept as they change, as migration 11 keeps each block's, so that the
-- desk's panel of shops (GET /api/admin/shops) reads a few rows instead of
-- every paper ticket (10 s for 1.5 million paper tickets sold before,
-- BENCHMARKS.md "The desk with 20 emissions of 20 blocks"). The PostgreSQL
-- migration of the same number makes the same change.
--
-- One row per shop, emission and writing connection (`shard`: its
-- backend's pid, as in block_figures; folded into shard 0 with them), the
-- sums over the paper tickets:
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
);

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

-- Adds a change to a shop's figures for an emission, on this connection's row.
CREATE FUNCTION shop_figures_add(
    the_shop TEXT, emission BIGINT, d_sold BIGINT, d_redeemed BIGINT, d_won_unpaid BIGINT, d_won_unpaid_cents BIGINT,
    d_paid BIGINT, d_paid_cents BIGINT
) RETURNS void LANGUAGE sql AS $$
    INSERT INTO shop_figures AS f (shop, emission_id, shard, sold, redeemed, won_unpaid, won_unpaid_cents, paid, paid_cents)
    VALUES (the_shop, emission, pg_backend_pid(), d_sold, d_redeemed, d_won_unpaid, d_won_unpaid_cents, d_paid, d_paid_cents)
    ON CONFLICT (shop, emission_id, shard) DO UPDATE SET
        sold = f.sold + EXCLUDED.sold, redeemed = f.redeemed + EXCLUDED.redeemed,
        won_unpaid = f.won_unpaid + EXCLUDED.won_unpaid,
        won_unpaid_cents = f.won_unpaid_cents + EXCLUDED.won_unpaid_cents,
        paid = f.paid + EXCLUDED.paid, paid_cents = f.paid_cents + EXCLUDED.paid_cents
$$;

-- A paper ticket's sale or payment: its old figures taken from its old
-- shops, its new ones added to its new shops.
CREATE FUNCTION shop_figures_ticket() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    emission BIGINT;
    played BOOLEAN;
    won BOOLEAN := false;
    prize BIGINT := 0;
BEGIN
    SELECT b.emission_id INTO emission FROM blocks b WHERE b.id = NEW.block_id;
    SELECT COALESCE(g.phase = 'finished' AND g.prize_cents > 0, false), COALESCE(g.prize_cents, 0)
      INTO won, prize FROM ticket_games g WHERE g.ticket_id = NEW.id;
    played := FOUND;
    IF OLD.shop IS NOT NULL THEN
        PERFORM shop_figures_add(OLD.shop, emission, -1, -(CASE WHEN played THEN 1 ELSE 0 END),
            -(CASE WHEN won AND OLD.paid_ms IS NULL THEN 1 ELSE 0 END),
            -(CASE WHEN won AND OLD.paid_ms IS NULL THEN prize ELSE 0 END), 0, 0);
    END IF;
    IF NEW.shop IS NOT NULL THEN
        PERFORM shop_figures_add(NEW.shop, emission, 1, CASE WHEN played THEN 1 ELSE 0 END,
            CASE WHEN won AND NEW.paid_ms IS NULL THEN 1 ELSE 0 END,
            CASE WHEN won AND NEW.paid_ms IS NULL THEN prize ELSE 0 END, 0, 0);
    END IF;
    IF OLD.paid_shop IS NOT NULL AND played THEN
        PERFORM shop_figures_add(OLD.paid_shop, emission, 0, 0, 0, 0, -1, -prize);
    END IF;
    IF NEW.paid_shop IS NOT NULL AND played THEN
        PERFORM shop_figures_add(NEW.paid_shop, emission, 0, 0, 0, 0, 1, prize);
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER shop_figures_ticket AFTER UPDATE OF shop, paid_ms, paid_shop ON tickets FOR EACH ROW
    WHEN (OLD.shop IS DISTINCT FROM NEW.shop OR OLD.paid_ms IS DISTINCT FROM NEW.paid_ms
          OR OLD.paid_shop IS DISTINCT FROM NEW.paid_shop)
    EXECUTE FUNCTION shop_figures_ticket();

-- A paper ticket's game: opened (redeemed), finished with a prize (won,
-- unpaid unless the ticket is paid), and the prize of a paid ticket.
-- Online tickets (no shop) add nothing.
CREATE FUNCTION shop_figures_game() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    the_shop TEXT;
    the_paid_shop TEXT;
    unpaid BOOLEAN;
    emission BIGINT;
    d_redeemed BIGINT := 0;
    d_won BIGINT := 0;
    d_won_cents BIGINT := 0;
    d_prize BIGINT := 0;
BEGIN
    SELECT t.shop, t.paid_shop, t.paid_ms IS NULL, b.emission_id INTO the_shop, the_paid_shop, unpaid, emission
      FROM tickets t JOIN blocks b ON b.id = t.block_id
     WHERE t.id = CASE WHEN TG_OP = 'DELETE' THEN OLD.ticket_id ELSE NEW.ticket_id END;
    IF the_shop IS NULL AND the_paid_shop IS NULL THEN
        RETURN NULL;
    END IF;
    IF TG_OP <> 'DELETE' THEN
        d_redeemed := 1;
        d_won := CASE WHEN NEW.phase = 'finished' AND NEW.prize_cents > 0 AND unpaid THEN 1 ELSE 0 END;
        d_won_cents := CASE WHEN NEW.phase = 'finished' AND NEW.prize_cents > 0 AND unpaid THEN NEW.prize_cents ELSE 0 END;
        d_prize := COALESCE(NEW.prize_cents, 0);
    END IF;
    IF TG_OP <> 'INSERT' THEN
        d_redeemed := d_redeemed - 1;
        d_won := d_won - CASE WHEN OLD.phase = 'finished' AND OLD.prize_cents > 0 AND unpaid THEN 1 ELSE 0 END;
        d_won_cents := d_won_cents
            - CASE WHEN OLD.phase = 'finished' AND OLD.prize_cents > 0 AND unpaid THEN OLD.prize_cents ELSE 0 END;
        d_prize := d_prize - COALESCE(OLD.prize_cents, 0);
    END IF;
    IF the_shop IS NOT NULL THEN
        PERFORM shop_figures_add(the_shop, emission, 0, d_redeemed, d_won, d_won_cents, 0, 0);
    END IF;
    IF the_paid_shop IS NOT NULL THEN
        PERFORM shop_figures_add(the_paid_shop, emission, 0, 0, 0, 0, d_redeemed, d_prize);
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER shop_figures_game_insert AFTER INSERT ON ticket_games FOR EACH ROW
    EXECUTE FUNCTION shop_figures_game();
CREATE TRIGGER shop_figures_game_update AFTER UPDATE OF phase, prize_cents ON ticket_games FOR EACH ROW
    WHEN ((OLD.phase = 'finished') <> (NEW.phase = 'finished') OR OLD.prize_cents IS DISTINCT FROM NEW.prize_cents)
    EXECUTE FUNCTION shop_figures_game();
CREATE TRIGGER shop_figures_game_delete AFTER DELETE ON ticket_games FOR EACH ROW
    EXECUTE FUNCTION shop_figures_game();

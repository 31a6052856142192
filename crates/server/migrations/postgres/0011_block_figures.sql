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
-- `shard`: each server connection adds to its own row, its backend's pid
-- (pg_backend_pid(), never 0), so that no two transactions ever wait on the
-- same counter: a block's figures are the sum of its rows. The rows of
-- connections that have ended are folded into the block's row of shard 0
-- (store/postgres.rs `fold_block_figures`, a few times an hour), so that
-- a block keeps a handful of rows. SQLite, one writer, only has shard 0.
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
);

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

-- Adds a change to a block's figures, on this connection's row.
CREATE FUNCTION block_figures_add(
    block BIGINT, d_sold BIGINT, d_in_play BIGINT, d_won BIGINT, d_lost BIGINT, d_won_cents BIGINT, d_paid_cents BIGINT
) RETURNS void LANGUAGE sql AS $$
    INSERT INTO block_figures AS f (block_id, shard, sold, in_play, won, lost, prizes_won_cents, prizes_paid_cents)
    VALUES (block, pg_backend_pid(), d_sold, d_in_play, d_won, d_lost, d_won_cents, d_paid_cents)
    ON CONFLICT (block_id, shard) DO UPDATE SET
        sold = f.sold + EXCLUDED.sold, in_play = f.in_play + EXCLUDED.in_play,
        won = f.won + EXCLUDED.won, lost = f.lost + EXCLUDED.lost,
        prizes_won_cents = f.prizes_won_cents + EXCLUDED.prizes_won_cents,
        prizes_paid_cents = f.prizes_paid_cents + EXCLUDED.prizes_paid_cents
$$;

-- Sold: a ticket's status in or out of ('sold', 'paid'). Tickets are
-- written unsold or printed and never deleted once sold; the insert and
-- delete triggers keep the figures right even so.
CREATE FUNCTION block_figures_ticket() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM block_figures_add(NEW.block_id, 1, 0, 0, 0, 0, 0);
    ELSIF TG_OP = 'DELETE' THEN
        PERFORM block_figures_add(OLD.block_id, -1, 0, 0, 0, 0, 0);
    ELSE
        PERFORM block_figures_add(NEW.block_id, CASE WHEN NEW.status IN ('sold', 'paid') THEN 1 ELSE -1 END,
                                  0, 0, 0, 0, 0);
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER block_figures_ticket_status AFTER UPDATE OF status ON tickets FOR EACH ROW
    WHEN ((OLD.status IN ('sold', 'paid')) <> (NEW.status IN ('sold', 'paid')))
    EXECUTE FUNCTION block_figures_ticket();
CREATE TRIGGER block_figures_ticket_insert AFTER INSERT ON tickets FOR EACH ROW
    WHEN (NEW.status IN ('sold', 'paid'))
    EXECUTE FUNCTION block_figures_ticket();
CREATE TRIGGER block_figures_ticket_delete AFTER DELETE ON tickets FOR EACH ROW
    WHEN (OLD.status IN ('sold', 'paid'))
    EXECUTE FUNCTION block_figures_ticket();

-- A game: in play until it finishes, then won or lost with its prize. Its
-- every action rewrites the row; the figures move only when it finishes
-- (or, never in practice, when a finished game's prize changes).
CREATE FUNCTION block_figures_game() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    block BIGINT;
    d_in_play BIGINT := 0;
    d_won BIGINT := 0;
    d_lost BIGINT := 0;
    d_cents BIGINT := 0;
BEGIN
    IF TG_OP <> 'DELETE' THEN
        d_in_play := CASE WHEN NEW.phase <> 'finished' THEN 1 ELSE 0 END;
        d_won := CASE WHEN NEW.phase = 'finished' AND NEW.prize_cents > 0 THEN 1 ELSE 0 END;
        d_lost := CASE WHEN NEW.phase = 'finished' AND NEW.prize_cents = 0 THEN 1 ELSE 0 END;
        d_cents := CASE WHEN NEW.phase = 'finished' THEN COALESCE(NEW.prize_cents, 0) ELSE 0 END;
    END IF;
    IF TG_OP <> 'INSERT' THEN
        d_in_play := d_in_play - CASE WHEN OLD.phase <> 'finished' THEN 1 ELSE 0 END;
        d_won := d_won - CASE WHEN OLD.phase = 'finished' AND OLD.prize_cents > 0 THEN 1 ELSE 0 END;
        d_lost := d_lost - CASE WHEN OLD.phase = 'finished' AND OLD.prize_cents = 0 THEN 1 ELSE 0 END;
        d_cents := d_cents - CASE WHEN OLD.phase = 'finished' THEN COALESCE(OLD.prize_cents, 0) ELSE 0 END;
    END IF;
    SELECT t.block_id INTO block FROM tickets t
     WHERE t.id = CASE WHEN TG_OP = 'DELETE' THEN OLD.ticket_id ELSE NEW.ticket_id END;
    PERFORM block_figures_add(block, 0, d_in_play, d_won, d_lost, d_cents, 0);
    RETURN NULL;
END $$;
CREATE TRIGGER block_figures_game_insert AFTER INSERT ON ticket_games FOR EACH ROW
    EXECUTE FUNCTION block_figures_game();
CREATE TRIGGER block_figures_game_update AFTER UPDATE OF phase, prize_cents ON ticket_games FOR EACH ROW
    WHEN ((OLD.phase = 'finished') <> (NEW.phase = 'finished')
          OR (NEW.phase = 'finished' AND OLD.prize_cents IS DISTINCT FROM NEW.prize_cents))
    EXECUTE FUNCTION block_figures_game();
CREATE TRIGGER block_figures_game_delete AFTER DELETE ON ticket_games FOR EACH ROW
    EXECUTE FUNCTION block_figures_game();

-- Paid: an entry of a prize movement on an account other than
-- house:prizes (the player's, the shop's, the payment centre's). Entries
-- are never updated or deleted.
CREATE FUNCTION block_figures_prize_paid() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    block BIGINT;
BEGIN
    SELECT t.block_id INTO block FROM movements m JOIN tickets t ON t.id = m.ticket_id
     WHERE m.id = NEW.movement_id AND m.reason = 'prize';
    IF FOUND THEN
        PERFORM block_figures_add(block, 0, 0, 0, 0, 0, NEW.amount_cents);
    END IF;
    RETURN NULL;
END $$;
-- A prize movement's id is 'prize:<ticket>' (core: Movement's natural
-- key), so the function is called only for prize entries, not for the two
-- of every sale; it still checks the reason.
CREATE TRIGGER block_figures_prize_paid AFTER INSERT ON ledger_entries FOR EACH ROW
    WHEN (NEW.account_id <> 3 AND NEW.movement_id LIKE 'prize:%')
    EXECUTE FUNCTION block_figures_prize_paid();

-- A game action runs without a transaction or a row lock on PostgreSQL: its
-- reads are plain statements and its write one statement that commits
-- itself (store/postgres.rs, Mode::Optimistic). Each of the write's guarded
-- parts (the game's seq, the seed still unset, the balance it was decided
-- on) must change its row; when one did not, the statement calls this, and
-- the error aborts the whole statement: nothing of it is committed, and the
-- server runs the request again from its reads. Serialization failure
-- (40001) is the code the server already retries.
CREATE FUNCTION as_capone_stale(held INTEGER, expected INTEGER) RETURNS TEXT LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'a guarded write found its row changed (% of % guards held)', held, expected
        USING ERRCODE = 'serialization_failure';
END
$$;

-- The kept figures' helpers of migrations 11 and 12 were SQL functions:
-- PostgreSQL parses and plans a SQL function's body again on every call
-- from a trigger (in a profile of two servers under load, 2.5 % of all
-- PostgreSQL's CPU in `fmgr_sql`, with `base_yyparse` and `stringToNode`
-- under it). The same statements in PL/pgSQL are planned once per
-- connection. Same arguments, same effect.
CREATE OR REPLACE FUNCTION block_figures_add(
    block BIGINT, d_sold BIGINT, d_in_play BIGINT, d_won BIGINT, d_lost BIGINT, d_won_cents BIGINT, d_paid_cents BIGINT
) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO block_figures AS f (block_id, shard, sold, in_play, won, lost, prizes_won_cents, prizes_paid_cents)
    VALUES (block, pg_backend_pid(), d_sold, d_in_play, d_won, d_lost, d_won_cents, d_paid_cents)
    ON CONFLICT (block_id, shard) DO UPDATE SET
        sold = f.sold + EXCLUDED.sold, in_play = f.in_play + EXCLUDED.in_play,
        won = f.won + EXCLUDED.won, lost = f.lost + EXCLUDED.lost,
        prizes_won_cents = f.prizes_won_cents + EXCLUDED.prizes_won_cents,
        prizes_paid_cents = f.prizes_paid_cents + EXCLUDED.prizes_paid_cents;
END $$;

CREATE OR REPLACE FUNCTION shop_figures_add(
    the_shop TEXT, emission BIGINT, d_sold BIGINT, d_redeemed BIGINT, d_won_unpaid BIGINT, d_won_unpaid_cents BIGINT,
    d_paid BIGINT, d_paid_cents BIGINT
) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO shop_figures AS f (shop, emission_id, shard, sold, redeemed, won_unpaid, won_unpaid_cents, paid, paid_cents)
    VALUES (the_shop, emission, pg_backend_pid(), d_sold, d_redeemed, d_won_unpaid, d_won_unpaid_cents, d_paid, d_paid_cents)
    ON CONFLICT (shop, emission_id, shard) DO UPDATE SET
        sold = f.sold + EXCLUDED.sold, redeemed = f.redeemed + EXCLUDED.redeemed,
        won_unpaid = f.won_unpaid + EXCLUDED.won_unpaid,
        won_unpaid_cents = f.won_unpaid_cents + EXCLUDED.won_unpaid_cents,
        paid = f.paid + EXCLUDED.paid, paid_cents = f.paid_cents + EXCLUDED.paid_cents;
END $$;

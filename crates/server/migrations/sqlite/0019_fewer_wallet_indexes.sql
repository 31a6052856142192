-- as-capone server schema, version 19 (issue 28): fewer indexes written by
-- each purchase through the operator's wallet. The PostgreSQL migration of
-- this number makes the same index change; the tables' keys and
-- constraints stay the same on both.
--
-- A SQLite commit writes each page it changed once, whole: a purchase's
-- round wrote a page of every index of `wallet_rounds` in the commit of
-- its reservation, and again in the commit of its settlement (counted by
-- bench/operator-pages.sh: about 3.3 WAL frames a purchase in the round's
-- six b-trees, 1 in the outbox's three). Two changes:
--
-- 1. `wallet_rounds` and `wallet_outbox` are rebuilt WITHOUT ROWID: each
--    was a table of rowids plus the unique index of its text key
--    (`round_id`, `transaction_id`), two b-trees where one keyed by the
--    text holds the same rows. Both keys are written in sale order (a
--    round is SERIAL.ATTEMPT), so new rows still go to the last pages.
-- 2. The two partial indexes of the rounds in flight (0018:
--    `wallet_rounds_unsettled` and `wallet_rounds_pending`, the same rows)
--    become one, `wallet_rounds_in_flight`: the worker's look for
--    unanswered debits and the gauge use its first columns; a purchase's
--    Idempotency-Key is found among the few rows in flight by its last
--    ones, in the index alone.
--
-- The rows are copied as they are; the outbox is rebuilt too because it
-- refers to the rounds (with foreign keys on, SQLite refuses to drop a
-- table that rows elsewhere refer to). The queries repeat the partial
-- index's condition word for word (store/wallet.rs).

CREATE TABLE wallet_rounds_v19 (
    round_id        TEXT    PRIMARY KEY,   -- SERIAL.ATTEMPT, the id the operator sees
    ticket_id       BIGINT  NOT NULL REFERENCES tickets(id),
    attempt         BIGINT  NOT NULL CHECK (attempt >= 1),
    player_id       BIGINT  NOT NULL REFERENCES players(id),
    price_cents     BIGINT  NOT NULL CHECK (price_cents > 0),
    state           TEXT    NOT NULL CHECK (state IN ('debiting', 'sold', 'refused', 'rolling_back', 'released')),
    idempotency_key TEXT,
    refusal         TEXT,              -- the operator's error code, when refused
    created_ms      BIGINT  NOT NULL,
    settled_ms      BIGINT,
    UNIQUE (ticket_id, attempt)
) WITHOUT ROWID;
INSERT INTO wallet_rounds_v19 (round_id, ticket_id, attempt, player_id, price_cents, state, idempotency_key, refusal,
                               created_ms, settled_ms)
SELECT round_id, ticket_id, attempt, player_id, price_cents, state, idempotency_key, refusal, created_ms, settled_ms
  FROM wallet_rounds ORDER BY rowid;

CREATE TABLE wallet_outbox_v19 (
    transaction_id TEXT    PRIMARY KEY,
    round_id       TEXT    NOT NULL REFERENCES wallet_rounds_v19(round_id),
    kind           TEXT    NOT NULL CHECK (kind IN ('credit', 'rollback')),
    amount_cents   BIGINT  NOT NULL CHECK (amount_cents > 0),
    body_json      TEXT    NOT NULL,
    created_ms     BIGINT  NOT NULL,
    attempts       BIGINT  NOT NULL DEFAULT 0,
    next_ms        BIGINT  NOT NULL,
    last_error     TEXT,
    acked_ms       BIGINT
) WITHOUT ROWID;
INSERT INTO wallet_outbox_v19 (transaction_id, round_id, kind, amount_cents, body_json, created_ms, attempts, next_ms,
                               last_error, acked_ms)
SELECT transaction_id, round_id, kind, amount_cents, body_json, created_ms, attempts, next_ms, last_error, acked_ms
  FROM wallet_outbox ORDER BY rowid;

-- The copies must hold every row (a CHECK fails the migration, nothing is
-- changed, if not).
CREATE TABLE migration_0019_check (
    missing BIGINT NOT NULL CHECK (missing = 0)
);
INSERT INTO migration_0019_check (missing)
SELECT (SELECT COUNT(*) FROM wallet_rounds) - (SELECT COUNT(*) FROM wallet_rounds_v19)
     + (SELECT COUNT(*) FROM wallet_outbox) - (SELECT COUNT(*) FROM wallet_outbox_v19);
DROP TABLE migration_0019_check;

DROP TABLE wallet_outbox;
DROP TABLE wallet_rounds;
-- Renaming the rounds' table renames the outbox's reference to it too.
ALTER TABLE wallet_rounds_v19 RENAME TO wallet_rounds;
ALTER TABLE wallet_outbox_v19 RENAME TO wallet_outbox;

-- Reconciliation's period.
CREATE INDEX wallet_rounds_created ON wallet_rounds (created_ms);
-- The rounds in flight: debits not settled, rollbacks not acknowledged.
CREATE INDEX wallet_rounds_in_flight ON wallet_rounds (state, created_ms, player_id, idempotency_key)
    WHERE state IN ('debiting', 'rolling_back');
-- The outbox's entries owed, by when they are due (as in 0018).
CREATE INDEX wallet_outbox_due ON wallet_outbox (next_ms) WHERE acked_ms IS NULL;

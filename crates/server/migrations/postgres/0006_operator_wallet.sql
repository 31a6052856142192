-- as-capone server schema, version 6 (issue 28): the operator mode. The
-- operator's platform owns the players and their money; the game keeps the
-- rounds (one sale of a ticket each), the debits' fate, and an outbox of the
-- credits and rollbacks it owes the operator's wallet
-- (docs/operator-integration.md). The SQLite migration of the same
-- number makes the same tables, columns and constraints.

-- A player launched by an operator is known by the operator's reference
-- (never a password or a play-money balance of ours).
ALTER TABLE players ADD COLUMN operator_ref TEXT;
CREATE UNIQUE INDEX players_operator_ref ON players (operator_ref);

-- The clearing account of the operator's wallet: a sale takes the price
-- from it, a prize pays into it, so that the double-entry ledger holds in
-- operator mode too. Its balance is the sum of its entries (never stored).
INSERT INTO accounts (name, kind) VALUES ('house:operator_wallet', 'house');

-- A launch: the one-time code's hex SHA-256 (the code is never stored), the
-- player, what the operator asked for, and the session it was exchanged for.
CREATE TABLE launches (
    code_hash    TEXT    PRIMARY KEY,
    player_id    BIGINT  NOT NULL REFERENCES players(id),
    language     TEXT    NOT NULL CHECK (language IN ('fr', 'en')),
    country      TEXT,
    flags_json   TEXT    NOT NULL,
    lobby_url    TEXT,
    created_ms   BIGINT  NOT NULL,
    expires_ms   BIGINT  NOT NULL,
    used_ms      BIGINT,
    session_hash TEXT    UNIQUE     -- the session's token hash, once exchanged
);

-- The nonces of the signed calls the operator made (a nonce seen twice is
-- refused, whichever process sees it); deleted once older than the window.
CREATE TABLE signed_nonces (
    nonce   TEXT    PRIMARY KEY,   -- key id '/' nonce
    seen_ms BIGINT  NOT NULL
);
CREATE INDEX signed_nonces_seen ON signed_nonces (seen_ms);

-- A round: one sale of a ticket through the operator's wallet. `debiting`:
-- the ticket is held (status 'sold', no game yet, never shown) and the debit
-- is sent; `sold`: the debit was acknowledged, in the transaction that
-- wrote the ticket's game; `refused`: the operator refused the debit, the
-- ticket went back to the pool; `rolling_back`: the debit's outcome is
-- unknown and its rollback waits in the outbox; `released`: the rollback was
-- acknowledged, the ticket went back to the pool. Its id is
-- SERIAL.ATTEMPT, the round id the operator sees.
CREATE TABLE wallet_rounds (
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
);
CREATE INDEX wallet_rounds_open ON wallet_rounds (state, created_ms);
CREATE INDEX wallet_rounds_player ON wallet_rounds (player_id, created_ms);
CREATE INDEX wallet_rounds_created ON wallet_rounds (created_ms);

-- What the game owes the operator's wallet and sends until acknowledged:
-- a prize's credit (written in the transaction that finishes the game) or
-- a debit's rollback. `body_json` is the request, fixed once: every attempt
-- sends the same transaction.
CREATE TABLE wallet_outbox (
    transaction_id TEXT    PRIMARY KEY,
    round_id       TEXT    NOT NULL REFERENCES wallet_rounds(round_id),
    kind           TEXT    NOT NULL CHECK (kind IN ('credit', 'rollback')),
    amount_cents   BIGINT  NOT NULL CHECK (amount_cents > 0),
    body_json      TEXT    NOT NULL,
    created_ms     BIGINT  NOT NULL,
    attempts       BIGINT  NOT NULL DEFAULT 0,
    next_ms        BIGINT  NOT NULL,
    last_error     TEXT,
    acked_ms       BIGINT
);
CREATE INDEX wallet_outbox_due ON wallet_outbox (acked_ms, next_ms);

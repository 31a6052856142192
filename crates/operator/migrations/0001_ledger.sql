-- The reference operator's ledger (crates/operator/README.md).
-- Money is integer cents. Every movement is two entries that sum to zero
-- (a player's account and the house's); a player's balance is the sum of
-- its entries, kept in players.balance_cents and checked by /admin/summary.

CREATE TABLE players (
    player             TEXT PRIMARY KEY NOT NULL,
    balance_cents      INTEGER NOT NULL CHECK (balance_cents >= 0),
    -- Stakes allowed over any 7 days (a rolling week); NULL: no limit.
    weekly_limit_cents INTEGER CHECK (weekly_limit_cents IS NULL OR weekly_limit_cents >= 0),
    blocked            INTEGER NOT NULL DEFAULT 0 CHECK (blocked IN (0, 1)),
    created_ms         INTEGER NOT NULL,
    updated_ms         INTEGER NOT NULL
);

-- One row per wallet transaction id ever answered with a final outcome:
-- applied (status 200) or refused by the player's state (status 402). The
-- stored answer is sent again, byte for byte, to a retry with the same
-- payload (request_sha256); another payload under the same id is a conflict.
CREATE TABLE transactions (
    transaction_id       TEXT PRIMARY KEY NOT NULL,
    -- The operator's own id, in order of arrival: "op-<op_seq>".
    op_seq               INTEGER NOT NULL UNIQUE,
    kind                 TEXT NOT NULL CHECK (kind IN ('debit', 'credit', 'rollback')),
    round_id             TEXT NOT NULL,
    player               TEXT NOT NULL,
    amount_cents         INTEGER NOT NULL,
    -- A rollback's debit.
    debit_transaction_id TEXT,
    -- Hex SHA-256 of the canonical request: {"kind":...,"request":{...}}.
    request_sha256       TEXT NOT NULL,
    status               INTEGER NOT NULL,
    answer_json          TEXT NOT NULL,
    applied_ms           INTEGER NOT NULL,
    -- The cents this transaction moved (0 for a refusal, a tombstone, a no-op rollback).
    moved_cents          INTEGER NOT NULL,
    -- A debit undone by a rollback.
    rolled_back          INTEGER NOT NULL DEFAULT 0 CHECK (rolled_back IN (0, 1)),
    -- A rollback of a debit never seen: a later debit with that id is refused (409 rolled_back).
    tombstone            INTEGER NOT NULL DEFAULT 0 CHECK (tombstone IN (0, 1))
);
CREATE INDEX transactions_applied ON transactions (applied_ms);
CREATE INDEX transactions_round ON transactions (round_id, kind);
CREATE INDEX transactions_debit ON transactions (debit_transaction_id) WHERE debit_transaction_id IS NOT NULL;
CREATE INDEX transactions_player_stakes ON transactions (player, kind, applied_ms);

-- Balances set by the operator's staff (/admin/players): deposits, withdrawals.
CREATE TABLE adjustments (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    player        TEXT NOT NULL,
    delta_cents   INTEGER NOT NULL,
    at_ms         INTEGER NOT NULL
);

-- Double entry: each movement is two rows summing to zero. source is
-- 'tx:<transaction_id>' or 'adj:<id>'; account is 'player:<ref>' or 'house'.
CREATE TABLE entries (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    source       TEXT NOT NULL,
    account      TEXT NOT NULL,
    amount_cents INTEGER NOT NULL,
    at_ms        INTEGER NOT NULL
);
CREATE INDEX entries_account ON entries (account);

-- Request nonces seen within the signature window (twice the window kept),
-- so that a replay is refused across a restart too. Pruned as calls come.
CREATE TABLE nonces (
    key_id  TEXT NOT NULL,
    nonce   TEXT NOT NULL,
    seen_ms INTEGER NOT NULL,
    PRIMARY KEY (key_id, nonce)
) WITHOUT ROWID;
CREATE INDEX nonces_seen ON nonces (seen_ms);

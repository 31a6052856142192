-- as-capone server schema, version 1. Portable SQL where possible (SQLite
-- now, PostgreSQL to follow): integer cents in BIGINT, times in unix
-- milliseconds (BIGINT), no JSON operators.

-- Ledger accounts: one per player, and the house's. Guarantee 3: every
-- movement is two ledger entries that sum to zero; balances are kept in
-- the same transaction, and a player's never goes negative.
CREATE TABLE accounts (
    id            INTEGER PRIMARY KEY,
    name          TEXT    NOT NULL UNIQUE,
    kind          TEXT    NOT NULL CHECK (kind IN ('player', 'house')),
    balance_cents BIGINT  NOT NULL DEFAULT 0,
    CHECK (kind = 'house' OR balance_cents >= 0)
);
INSERT INTO accounts (id, name, kind) VALUES
    (1, 'house:play_money', 'house'),   -- issues players' starting play money
    (2, 'house:sales',      'house'),   -- receives ticket prices
    (3, 'house:prizes',     'house');   -- pays prizes

CREATE TABLE players (
    id          INTEGER PRIMARY KEY,
    token_hash  TEXT    NOT NULL UNIQUE,   -- hex SHA-256 of the bearer token
    name        TEXT,
    account_id  INTEGER NOT NULL UNIQUE REFERENCES accounts(id),
    created_ms  BIGINT  NOT NULL
);

CREATE TABLE emissions (
    id          INTEGER PRIMARY KEY,
    code        TEXT    NOT NULL,
    table_toml  TEXT    NOT NULL,
    table_digest TEXT   NOT NULL,
    price_cents BIGINT  NOT NULL,
    block_size  INTEGER NOT NULL,
    secret_seed TEXT    NOT NULL,   -- hex; regenerates the blocks (keep this file secret)
    created_ms  BIGINT  NOT NULL
);

CREATE TABLE blocks (
    id          INTEGER PRIMARY KEY,
    emission_id INTEGER NOT NULL REFERENCES emissions(id),
    number      INTEGER NOT NULL,
    size        INTEGER NOT NULL,
    commitment  TEXT    NOT NULL,
    next_sale   INTEGER NOT NULL DEFAULT 0,   -- tickets sold online: the next one is at position next_sale + 1
    created_ms  BIGINT  NOT NULL,
    UNIQUE (emission_id, number)
);

CREATE TABLE tickets (
    id             INTEGER PRIMARY KEY,
    block_id       INTEGER NOT NULL REFERENCES blocks(id),
    position       INTEGER NOT NULL,   -- sale order in the block, from 1
    serial         TEXT    NOT NULL UNIQUE,
    play_code_hash TEXT    NOT NULL,
    schedule_row   INTEGER NOT NULL,
    prize_5        BIGINT  NOT NULL,
    prize_6        BIGINT  NOT NULL,
    prize_7        BIGINT  NOT NULL,
    prize_8        BIGINT  NOT NULL,
    status         TEXT    NOT NULL DEFAULT 'unsold' CHECK (status IN ('unsold', 'sold')),
    owner_id       INTEGER REFERENCES players(id),
    sold_ms        BIGINT,
    client_seed    TEXT,
    server_seed    TEXT,     -- hex; secret until the game is finished (guarantee 6)
    commitment     TEXT,     -- hex SHA-256 of the server seed, shown at purchase
    UNIQUE (block_id, position)
);
CREATE INDEX tickets_owner ON tickets (owner_id, id);

-- The interactive game of a sold ticket: the engine's state after `seq` actions.
CREATE TABLE ticket_games (
    ticket_id     INTEGER PRIMARY KEY REFERENCES tickets(id),
    seq           BIGINT  NOT NULL,
    phase         TEXT    NOT NULL,
    state_json    TEXT    NOT NULL,
    result_tricks INTEGER,
    prize_cents   BIGINT,
    finished_ms   BIGINT
);
CREATE INDEX ticket_games_phase ON ticket_games (phase);

-- Guarantee 4: one row per applied action, with the exact answer given.
CREATE TABLE actions (
    ticket_id    INTEGER NOT NULL REFERENCES tickets(id),
    seq          BIGINT  NOT NULL,
    request_json TEXT    NOT NULL,   -- canonical request, to tell a retry from a different body
    answer_json  TEXT    NOT NULL,   -- the answer's bytes, returned again on a retry
    created_ms   BIGINT  NOT NULL,
    PRIMARY KEY (ticket_id, seq)
);

-- Every random draw of a ticket, numbered n = 0, 1, ... (CONTRACT.md Fairness).
CREATE TABLE draws (
    ticket_id INTEGER NOT NULL REFERENCES tickets(id),
    n         BIGINT  NOT NULL,
    seq       BIGINT  NOT NULL,          -- the action that took it
    kind      TEXT    NOT NULL CHECK (kind IN ('capone', 'deck')),
    player    TEXT,                      -- the player's card of a deck draw
    capone    TEXT    NOT NULL,
    PRIMARY KEY (ticket_id, n)
);

CREATE TABLE movements (
    id         INTEGER PRIMARY KEY,
    reason     TEXT    NOT NULL CHECK (reason IN ('start_balance', 'ticket_sale', 'prize')),
    ticket_id  INTEGER REFERENCES tickets(id),
    created_ms BIGINT  NOT NULL
);
CREATE TABLE ledger_entries (
    id           INTEGER PRIMARY KEY,
    movement_id  INTEGER NOT NULL REFERENCES movements(id),
    account_id   INTEGER NOT NULL REFERENCES accounts(id),
    amount_cents BIGINT  NOT NULL
);
CREATE INDEX ledger_entries_account ON ledger_entries (account_id);
CREATE INDEX ledger_entries_movement ON ledger_entries (movement_id);

CREATE TABLE idempotency_keys (
    player_id    INTEGER NOT NULL REFERENCES players(id),
    key          TEXT    NOT NULL,
    request_json TEXT    NOT NULL,
    ticket_id    INTEGER NOT NULL REFERENCES tickets(id),
    created_ms   BIGINT  NOT NULL,
    PRIMARY KEY (player_id, key)
);

-- Append-only audit log: each entry holds the SHA-256 of the previous one.
CREATE TABLE audit_log (
    id         INTEGER PRIMARY KEY,
    created_ms BIGINT  NOT NULL,
    kind       TEXT    NOT NULL,
    data_json  TEXT    NOT NULL,
    prev_hash  TEXT    NOT NULL,
    hash       TEXT    NOT NULL UNIQUE
);
CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;

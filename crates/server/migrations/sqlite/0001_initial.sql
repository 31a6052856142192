-- as-capone server schema, version 1, SQLite. The PostgreSQL schema
-- (migrations/postgres) has the same tables, columns and constraints:
-- integer cents in BIGINT, times in unix milliseconds, no JSON operators,
-- so that the shared SQL of `store::reads` and `store::plan` runs on both.

-- Ledger accounts: one per player, and the house's (guarantee 3). Every
-- movement is two ledger entries that sum to zero. A player's balance is
-- kept in `balance_cents`, in the transaction of each movement, and never
-- goes negative. The house accounts' `balance_cents` stays 0: their balance
-- is the sum of their entries, so that no row is written by every sale or
-- prize (a lock every process would queue on).
CREATE TABLE accounts (
    id            INTEGER PRIMARY KEY,
    name          TEXT    NOT NULL UNIQUE,
    kind          TEXT    NOT NULL CHECK (kind IN ('player', 'house', 'shop')),
    balance_cents BIGINT  NOT NULL DEFAULT 0,
    CHECK (kind = 'house' OR balance_cents >= 0),
    CHECK (kind = 'player' OR balance_cents = 0)
);
INSERT INTO accounts (id, name, kind) VALUES
    (1, 'house:play_money', 'house'),   -- issues players' starting play money
    (2, 'house:sales',      'house'),   -- receives ticket prices
    (3, 'house:prizes',     'house');   -- pays prizes

CREATE TABLE players (
    id          INTEGER PRIMARY KEY,
    token_hash  TEXT    NOT NULL UNIQUE,   -- hex SHA-256 of the bearer token
    name        TEXT,
    account_id  BIGINT  NOT NULL UNIQUE REFERENCES accounts(id),
    created_ms  BIGINT  NOT NULL
);

-- The server key's fingerprint: HMAC-SHA256(key, "as-capone key check v1").
-- A server started with another key is refused (its seeds would differ).
CREATE TABLE server_key (
    id          INTEGER PRIMARY KEY CHECK (id = 1),
    fingerprint TEXT    NOT NULL,
    created_ms  BIGINT  NOT NULL
);

-- An emission's secret seed is never stored: it is HMAC-SHA256(server key,
-- "as-capone emission seed v1" 0x00 || seed_salt), so a copy of this
-- database reveals no unrevealed server seed and no play code. Its id is
-- the emission number printed in serials (1 to 999), chosen by the server.
CREATE TABLE emissions (
    id           INTEGER PRIMARY KEY CHECK (id BETWEEN 1 AND 999),
    code         TEXT    NOT NULL,
    channel      TEXT    NOT NULL CHECK (channel IN ('online', 'paper')),
    table_toml   TEXT    NOT NULL,
    table_digest TEXT    NOT NULL,
    price_cents  BIGINT  NOT NULL,
    block_size   BIGINT  NOT NULL,
    seed_salt    TEXT    NOT NULL UNIQUE,
    created_ms   BIGINT  NOT NULL,
    sale_end_ms  BIGINT,  -- end of sale (operator's desk)
    claim_end_ms BIGINT   -- paper prizes are paid until then (claim_days after the end of sale)
);

-- A block is published (its root public, its tickets for sale) once all its
-- tickets are written: `published_ms` is set in the transaction that writes
-- the audit entry with its root, and never changes after. `chunk_roots`: the
-- hex roots of its leaves 1 024 at a time (emission::merkle), from which
-- any ticket's inclusion proof is rebuilt.
CREATE TABLE blocks (
    id           INTEGER PRIMARY KEY,
    emission_id  BIGINT  NOT NULL REFERENCES emissions(id),
    number       BIGINT  NOT NULL,
    size         BIGINT  NOT NULL,
    root         TEXT    NOT NULL,
    chunk_roots  TEXT    NOT NULL,
    created_ms   BIGINT  NOT NULL,
    published_ms BIGINT,
    UNIQUE (emission_id, number)
);

-- A ticket's row holds only what its published leaf makes public; its
-- server seed is derived again from the server key when it is needed.
-- Status: 'unsold' (online, for sale), 'printed' (paper, not sold), 'sold'.
CREATE TABLE tickets (
    id             INTEGER PRIMARY KEY,
    block_id       BIGINT  NOT NULL REFERENCES blocks(id),
    position       BIGINT  NOT NULL,   -- sale order in the block, from 1
    serial         TEXT    NOT NULL UNIQUE,
    play_code_hash TEXT    NOT NULL,
    schedule_row   BIGINT  NOT NULL,
    prize_5        BIGINT  NOT NULL,
    prize_6        BIGINT  NOT NULL,
    prize_7        BIGINT  NOT NULL,
    prize_8        BIGINT  NOT NULL,
    commitment     TEXT    NOT NULL,   -- hex SHA-256 of the server seed, as in the leaf
    status         TEXT    NOT NULL DEFAULT 'unsold' CHECK (status IN ('unsold', 'printed', 'sold', 'paid')),
    owner_id       BIGINT  REFERENCES players(id),
    sold_ms        BIGINT,
    client_seed    TEXT,               -- the player's, with the first action
    shop           TEXT,               -- paper: the shop that sold it
    paid_ms        BIGINT,
    paid_shop      TEXT,
    UNIQUE (block_id, position),
    CHECK (status IN ('sold', 'paid') OR owner_id IS NULL),
    CHECK ((status = 'paid') = (paid_ms IS NOT NULL))
);

CREATE INDEX tickets_owner ON tickets (owner_id, id);
-- A play code opens its ticket: looked up by its hash (the code is never stored).
CREATE UNIQUE INDEX tickets_play_code ON tickets (play_code_hash);
-- The sale queue: the unsold tickets in sale order (of published blocks).
CREATE INDEX tickets_unsold ON tickets (block_id, position) WHERE status = 'unsold';

-- The interactive game of a sold ticket: the engine's state after `seq` actions.
CREATE TABLE ticket_games (
    ticket_id     INTEGER PRIMARY KEY REFERENCES tickets(id),
    seq           BIGINT  NOT NULL,
    phase         TEXT    NOT NULL,
    state_json    TEXT    NOT NULL,
    result_tricks BIGINT,
    prize_cents   BIGINT,
    finished_ms   BIGINT
);
CREATE INDEX ticket_games_phase ON ticket_games (phase);

-- Guarantee 4: one row per applied action, with the exact answer given.
CREATE TABLE actions (
    ticket_id    BIGINT  NOT NULL REFERENCES tickets(id),
    seq          BIGINT  NOT NULL,
    request_json TEXT    NOT NULL,   -- canonical request, to tell a retry from a different body
    answer_json  TEXT    NOT NULL,   -- the answer's bytes, returned again on a retry
    created_ms   BIGINT  NOT NULL,
    PRIMARY KEY (ticket_id, seq)
);

-- Every random draw of a ticket, numbered n = 0, 1, ... (CONTRACT.md Fairness).
CREATE TABLE draws (
    ticket_id BIGINT  NOT NULL REFERENCES tickets(id),
    n         BIGINT  NOT NULL,
    seq       BIGINT  NOT NULL,          -- the action that took it
    kind      TEXT    NOT NULL CHECK (kind IN ('capone', 'deck')),
    player    TEXT,                      -- the player's card of a deck draw
    capone    TEXT    NOT NULL,
    PRIMARY KEY (ticket_id, n)
);

-- A movement's id is its natural key ('sale:<ticket>', 'prize:<ticket>',
-- 'start:<player>'): a ticket can be sold, and its prize paid, only once,
-- whichever process tries, and no counter is shared by all writers.
CREATE TABLE movements (
    id         TEXT    PRIMARY KEY,
    reason     TEXT    NOT NULL CHECK (reason IN ('start_balance', 'ticket_sale', 'retail_sale', 'prize')),
    ticket_id  BIGINT  REFERENCES tickets(id),
    created_ms BIGINT  NOT NULL
);
CREATE TABLE ledger_entries (
    movement_id  TEXT    NOT NULL REFERENCES movements(id),
    account_id   BIGINT  NOT NULL REFERENCES accounts(id),
    amount_cents BIGINT  NOT NULL,
    PRIMARY KEY (movement_id, account_id)
);
CREATE INDEX ledger_entries_account ON ledger_entries (account_id);

-- A purchase's Idempotency-Key, with the answer given (returned again, byte for byte).
CREATE TABLE idempotency_keys (
    player_id    BIGINT  NOT NULL REFERENCES players(id),
    key          TEXT    NOT NULL,
    request_json TEXT    NOT NULL,
    answer_json  TEXT    NOT NULL,
    ticket_id    BIGINT  NOT NULL REFERENCES tickets(id),
    created_ms   BIGINT  NOT NULL,
    PRIMARY KEY (player_id, key)
);

-- Append-only audit log. Entries are written with their cause; the chain
-- (`chain_pos`, `prev_hash`, `hash`) is sealed in order: by the SQLite
-- writer in the same transaction, by a sealer after commit on PostgreSQL
-- (see store::audit). Once sealed an entry never changes.
CREATE TABLE audit_log (
    id         INTEGER PRIMARY KEY,
    created_ms BIGINT  NOT NULL,
    kind       TEXT    NOT NULL,
    data_json  TEXT    NOT NULL,
    chain_pos  BIGINT  UNIQUE,
    prev_hash  TEXT,
    hash       TEXT    UNIQUE,
    CHECK ((chain_pos IS NULL) = (hash IS NULL) AND (hash IS NULL) = (prev_hash IS NULL))
);
CREATE INDEX audit_log_unsealed ON audit_log (id) WHERE chain_pos IS NULL;
CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
WHEN OLD.chain_pos IS NOT NULL OR NEW.id IS NOT OLD.id OR NEW.created_ms IS NOT OLD.created_ms
  OR NEW.kind IS NOT OLD.kind OR NEW.data_json IS NOT OLD.data_json
BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;

-- Failed attempts to redeem a play code, per client address and in total
-- ('global'), in windows: the limit holds across restarts and processes.
CREATE TABLE redeem_failures (
    bucket          TEXT    PRIMARY KEY,
    window_start_ms BIGINT  NOT NULL,
    failures        BIGINT  NOT NULL
);

-- as-capone server schema, version 2 (issue 13), PostgreSQL: players keep their
-- account with a login and a password, open sessions, and set limits on
-- their own play. The SQLite migration of the same number has the same
-- tables, columns and constraints.

-- A login (lower case) and an argon2id hash (PHC string) of the password;
-- both or neither. The bearer token of the player's row stays, for programs.
ALTER TABLE players ADD COLUMN login TEXT;
ALTER TABLE players ADD COLUMN password_hash TEXT;
CREATE UNIQUE INDEX players_login ON players (login);

-- A session opened with a login and a password: its bearer token's hex
-- SHA-256 (the token is never stored) and when it stops working.
CREATE TABLE sessions (
    token_hash TEXT    PRIMARY KEY,
    player_id  BIGINT  NOT NULL REFERENCES players(id),
    created_ms BIGINT  NOT NULL,
    expires_ms BIGINT  NOT NULL
);
CREATE INDEX sessions_player ON sessions (player_id);

-- The limits a player set on their own play (NULL: none) and their
-- self-exclusion. A raise waits for its cooling-off: `pending_*` are the
-- limits that apply from `pending_from_ms` (NULL: no change pending).
CREATE TABLE player_limits (
    player_id                    BIGINT  PRIMARY KEY REFERENCES players(id),
    tickets_per_day              BIGINT  CHECK (tickets_per_day > 0),
    spend_per_week_cents         BIGINT  CHECK (spend_per_week_cents > 0),
    pending_tickets_per_day      BIGINT  CHECK (pending_tickets_per_day > 0),
    pending_spend_per_week_cents BIGINT  CHECK (pending_spend_per_week_cents > 0),
    pending_from_ms              BIGINT,
    excluded_until_ms            BIGINT,
    updated_ms                   BIGINT  NOT NULL
);

-- A player's purchases of the last day and week, read in the purchase's
-- transaction when the player has limits.
CREATE INDEX tickets_owner_sold ON tickets (owner_id, sold_ms);

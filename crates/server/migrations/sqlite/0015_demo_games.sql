-- as-capone server schema, version 15 (issue 31): the free demo ticket
-- ("Essayer gratuitement"). The PostgreSQL migration of the same number makes
-- the same change.
--
-- A demo game plays the real duel on a schedule drawn from the table on
-- sale, with no money, no account and no ticket of any block: it has no
-- serial of an emission, no ledger movement and no audit entry
-- (docs/player-api.md "Demo games"). It is read and played with its own
-- bearer token, whose SHA-256 is kept here, and is removed a day after it
-- began.
CREATE TABLE demo_games (
    -- DEMO-<16 Crockford base32 characters>, random: what the page's
    -- address and the fair stream's "serial" are.
    id TEXT PRIMARY KEY,
    -- Hex SHA-256 of the game's bearer token.
    token_hash TEXT NOT NULL,
    -- The prizes of 5, 6, 7 and 8 tricks (cents), drawn from the table's
    -- schedules in proportion to their tickets per block.
    prize5_cents BIGINT NOT NULL,
    prize6_cents BIGINT NOT NULL,
    prize7_cents BIGINT NOT NULL,
    prize8_cents BIGINT NOT NULL,
    -- The game's own random server seed (hex): a demo moves no money, so
    -- it is kept here rather than derived from the server key; revealed
    -- when the game is finished, like a ticket's.
    server_seed TEXT NOT NULL,
    -- Given (or drawn) with the first action.
    client_seed TEXT,
    -- The actions applied, in order, as a JSON array of their canonical
    -- requests; the answers are replayed from them.
    actions_json TEXT NOT NULL DEFAULT '[]',
    -- How many actions were applied: an action is written only when the
    -- row still has the seq it was decided on.
    seq BIGINT NOT NULL DEFAULT 0,
    created_ms BIGINT NOT NULL,
    finished_ms BIGINT
);
-- A request's token finds its game (and only it).
CREATE UNIQUE INDEX demo_games_token ON demo_games (token_hash);
-- The removal of games older than a day.
CREATE INDEX demo_games_created ON demo_games (created_ms);

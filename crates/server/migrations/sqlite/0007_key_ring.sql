-- as-capone server schema, version 7 (issue 29): the server key ring. The
-- database keeps each server key's id and fingerprint (HMAC-SHA256(key,
-- "as-capone key check v1")), never a key; which key is current for new
-- emissions; and, for each emission, the id of the key it was made with:
-- its blocks, its tickets' server seeds and its paper tickets' tokens all
-- derive from that key for the emission's whole life (docs/keys.md). The
-- PostgreSQL migration of the same number makes the same change.
--
-- The one key of earlier versions (table server_key, id 1) becomes key 1,
-- current, and every existing emission is marked as made with it. The old
-- table is kept, no longer written: dropping it gains nothing. (A database
-- always has its key row before its first emission; an emission without
-- one would keep a NULL key_id, which the server refuses at start.)

CREATE TABLE server_keys (
    key_id          INTEGER PRIMARY KEY CHECK (key_id >= 1),
    fingerprint     TEXT    NOT NULL UNIQUE,
    created_ms      INTEGER NOT NULL,
    -- 1 for the one key new emissions are made with.
    is_current      INTEGER NOT NULL DEFAULT 0 CHECK (is_current IN (0, 1)),
    -- When it last became current; when it stopped being current.
    current_from_ms INTEGER,
    retired_ms      INTEGER
);

CREATE UNIQUE INDEX server_keys_one_current ON server_keys (is_current) WHERE is_current = 1;

INSERT INTO server_keys (key_id, fingerprint, created_ms, is_current, current_from_ms)
SELECT 1, fingerprint, created_ms, 1, created_ms FROM server_key WHERE id = 1;

ALTER TABLE emissions ADD COLUMN key_id INTEGER REFERENCES server_keys (key_id);

UPDATE emissions SET key_id = (SELECT key_id FROM server_keys WHERE key_id = 1);

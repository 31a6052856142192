-- as-capone server schema, version 3 (issue 12): fewer pages written by
-- each game action, so that SQLite's WAL grows more slowly and restarts
-- (a database-file sync the writer waits for) less often. The PostgreSQL
-- migration of the same number makes the same tables, columns and
-- constraints. Nothing read from the database changes: the public records,
-- the audit chain and the answers are the same bytes.

-- 1. An action's draw is kept in the action's row. Every action takes
-- exactly one draw, number `seq` of its ticket's stream (core::decide
-- refuses to write anything else), so the `draws` table and its key were
-- a second row and a second index entry per action. Draws are moved only
-- if each is its action's: the check table below refuses the migration
-- (a CHECK constraint fails, nothing is changed) if an action has no draw,
-- a draw no action, or a draw another number than its action's seq.
CREATE TABLE actions_v3 (
    ticket_id    BIGINT  NOT NULL REFERENCES tickets(id),
    seq          BIGINT  NOT NULL,
    request_json TEXT    NOT NULL,   -- canonical request, to tell a retry from a different body
    answer_json  TEXT    NOT NULL,   -- the answer's bytes, returned again on a retry
    created_ms   BIGINT  NOT NULL,
    draw_kind    TEXT    NOT NULL CHECK (draw_kind IN ('capone', 'deck')),   -- draw number `seq`
    draw_player  TEXT,               -- the player's card of a deck draw
    draw_capone  TEXT    NOT NULL,
    PRIMARY KEY (ticket_id, seq)
);
INSERT INTO actions_v3 (ticket_id, seq, request_json, answer_json, created_ms, draw_kind, draw_player, draw_capone)
SELECT a.ticket_id, a.seq, a.request_json, a.answer_json, a.created_ms, d.kind, d.player, d.capone
  FROM actions a JOIN draws d ON d.ticket_id = a.ticket_id AND d.n = a.seq AND d.seq = a.seq
 ORDER BY a.rowid;
CREATE TABLE migration_0003_check (
    unmatched BIGINT NOT NULL CHECK (unmatched = 0)   -- actions without their draw, plus draws without their action
);
INSERT INTO migration_0003_check (unmatched)
SELECT (SELECT COUNT(*) FROM actions) + (SELECT COUNT(*) FROM draws) - 2 * (SELECT COUNT(*) FROM actions_v3);
DROP TABLE migration_0003_check;
DROP TABLE draws;
DROP TABLE actions;
ALTER TABLE actions_v3 RENAME TO actions;

-- 2. The games in play are counted from a partial index of a few rows
-- (those not finished), not from an index of every game's phase, whose
-- pages every action rewrote.
DROP INDEX ticket_games_phase;
CREATE INDEX ticket_games_unfinished ON ticket_games (ticket_id) WHERE phase <> 'finished';

-- 3. The audit log's `hash` is no longer a UNIQUE key: `chain_pos` is, and
-- each hash covers the previous one (store::audit checks the chain). A
-- unique index of SHA-256 values put each finished game's entry on a
-- random page. SQLite cannot drop a constraint, so the table is rebuilt
-- with the same rows, its partial index and its append-only triggers.
CREATE TABLE audit_log_v3 (
    id         INTEGER PRIMARY KEY,
    created_ms BIGINT  NOT NULL,
    kind       TEXT    NOT NULL,
    data_json  TEXT    NOT NULL,
    chain_pos  BIGINT  UNIQUE,
    prev_hash  TEXT,
    hash       TEXT,
    CHECK ((chain_pos IS NULL) = (hash IS NULL) AND (hash IS NULL) = (prev_hash IS NULL))
);
INSERT INTO audit_log_v3 (id, created_ms, kind, data_json, chain_pos, prev_hash, hash)
SELECT id, created_ms, kind, data_json, chain_pos, prev_hash, hash FROM audit_log ORDER BY id;
DROP TABLE audit_log;
ALTER TABLE audit_log_v3 RENAME TO audit_log;
CREATE INDEX audit_log_unsealed ON audit_log (id) WHERE chain_pos IS NULL;
CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
WHEN OLD.chain_pos IS NOT NULL OR NEW.id IS NOT OLD.id OR NEW.created_ms IS NOT OLD.created_ms
  OR NEW.kind IS NOT OLD.kind OR NEW.data_json IS NOT OLD.data_json
BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;

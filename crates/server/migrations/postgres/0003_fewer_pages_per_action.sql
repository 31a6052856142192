-- as-capone server schema, version 3 (issue 12): fewer pages written by
-- each game action. The SQLite migration of the same number makes the same
-- tables, columns and constraints (and says why: SQLite's WAL); here the
-- same changes keep the two schemas one. Nothing read from the database
-- changes: the public records, the audit chain and the answers are the
-- same bytes.

-- 1. An action's draw is kept in the action's row: every action takes
-- exactly one draw, number `seq` of its ticket's stream. The migration
-- fails, changing nothing, if an action has no draw, a draw no action, or
-- a draw another number than its action's seq.
ALTER TABLE actions
    ADD COLUMN draw_kind   TEXT CHECK (draw_kind IN ('capone', 'deck')),
    ADD COLUMN draw_player TEXT,
    ADD COLUMN draw_capone TEXT;
UPDATE actions a SET draw_kind = d.kind, draw_player = d.player, draw_capone = d.capone
  FROM draws d
 WHERE d.ticket_id = a.ticket_id AND d.n = a.seq AND d.seq = a.seq;
DO $$
DECLARE unmatched BIGINT;
BEGIN
    SELECT (SELECT COUNT(*) FROM actions WHERE draw_kind IS NULL)
         + (SELECT COUNT(*) FROM draws) - (SELECT COUNT(*) FROM actions WHERE draw_kind IS NOT NULL)
      INTO unmatched;
    IF unmatched <> 0 THEN
        RAISE EXCEPTION 'migration 3: % actions and draws do not match one to one (draw n of action n)', unmatched;
    END IF;
END $$;
ALTER TABLE actions ALTER COLUMN draw_kind SET NOT NULL, ALTER COLUMN draw_capone SET NOT NULL;
DROP TABLE draws;

-- 2. The games in play are counted from a partial index of the unfinished ones.
DROP INDEX ticket_games_phase;
CREATE INDEX ticket_games_unfinished ON ticket_games (ticket_id) WHERE phase <> 'finished';

-- 3. The audit log's `hash` is no longer a UNIQUE key: `chain_pos` is, and
-- each hash covers the previous one (store::audit checks the chain).
ALTER TABLE audit_log DROP CONSTRAINT audit_log_hash_key;

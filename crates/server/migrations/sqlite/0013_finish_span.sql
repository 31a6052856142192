-- as-capone server schema, version 13 (issue 30): each block keeps the
-- time of its first and last finished game, so that the desk's chart of
-- prizes (GET /api/admin/emissions/{id}/prizes) cuts the emission's
-- finishing time into spans without first reading every finished game for
-- them (a second pass over the games: 210 ms for 300 000 of them, above the
-- desk's 200 ms, BENCHMARKS.md "The desk with 20 emissions of 20 blocks").
-- The PostgreSQL migration of the same number makes the same change.
--
-- A game that finishes widens its block's span; nothing narrows it (a
-- finished game never goes back, and a game is never deleted): the span
-- holds every finish. The chart only takes its spans' edges from it; its
-- sums are still read from the games.
ALTER TABLE block_figures ADD COLUMN first_finished_ms BIGINT;
ALTER TABLE block_figures ADD COLUMN last_finished_ms BIGINT;

-- The games already finished (an upgrade), on the block's row of shard 0.
INSERT INTO block_figures (block_id, shard, first_finished_ms, last_finished_ms)
SELECT t.block_id, 0, MIN(g.finished_ms), MAX(g.finished_ms)
FROM tickets t JOIN ticket_games g ON g.ticket_id = t.id
WHERE g.phase = 'finished' AND g.finished_ms IS NOT NULL
GROUP BY t.block_id
ON CONFLICT (block_id, shard) DO UPDATE SET
    first_finished_ms = excluded.first_finished_ms, last_finished_ms = excluded.last_finished_ms;

CREATE TRIGGER block_figures_finish_span AFTER UPDATE OF phase, finished_ms ON ticket_games
WHEN new.phase = 'finished' AND new.finished_ms IS NOT NULL
 AND (old.phase <> 'finished' OR old.finished_ms IS NOT new.finished_ms)
BEGIN
    INSERT INTO block_figures (block_id, shard, first_finished_ms, last_finished_ms)
    SELECT t.block_id, 0, new.finished_ms, new.finished_ms FROM tickets t WHERE t.id = new.ticket_id
    ON CONFLICT (block_id, shard) DO UPDATE SET
        first_finished_ms = MIN(COALESCE(first_finished_ms, excluded.first_finished_ms), excluded.first_finished_ms),
        last_finished_ms = MAX(COALESCE(last_finished_ms, excluded.last_finished_ms), excluded.last_finished_ms);
END;

CREATE TRIGGER block_figures_finish_span_insert AFTER INSERT ON ticket_games
WHEN new.phase = 'finished' AND new.finished_ms IS NOT NULL
BEGIN
    INSERT INTO block_figures (block_id, shard, first_finished_ms, last_finished_ms)
    SELECT t.block_id, 0, new.finished_ms, new.finished_ms FROM tickets t WHERE t.id = new.ticket_id
    ON CONFLICT (block_id, shard) DO UPDATE SET
        first_finished_ms = MIN(COALESCE(first_finished_ms, excluded.first_finished_ms), excluded.first_finished_ms),
        last_finished_ms = MAX(COALESCE(last_finished_ms, excluded.last_finished_ms), excluded.last_finished_ms);
END;

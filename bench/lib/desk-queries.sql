-- The SQL the desk's requests run, copied from the server's code (SQLite
-- text; $1, $2 bound by bench/desk.sh) so that bench/desk.sh can print
-- each one's EXPLAIN QUERY PLAN and its time in sqlite3. Each query starts
-- at a line "-- name: NAME (WHERE IT IS; WHICH REQUESTS RUN IT)" and ends
-- at the next one; its parameters are on a line "-- bind: $1=V $2=V".
-- Keep it in step with the code when a query changes.

-- name: emissions (store/emissions.rs reports(); GET /api/admin/emissions, /api/admin/emissions/{id}/risk)
-- bind: $1=-1
SELECT id, code, channel, table_digest, table_toml, price_cents, block_size, created_ms, sale_end_ms, claim_end_ms,
                notice_ref, closing_notice_date, closing_notice_ref
         FROM emissions
         WHERE ($1 < 0 OR id = $1) ORDER BY id;

-- name: block figures, every emission (store/emissions.rs reports(None), KEPT_BLOCKS; GET /api/admin/emissions)
-- bind: $1=-1
SELECT b.emission_id, b.number, b.root, b.published_ms, b.size,
        CAST(COALESCE(SUM(f.sold), 0) AS BIGINT), CAST(COALESCE(SUM(f.in_play), 0) AS BIGINT),
        CAST(COALESCE(SUM(f.won), 0) AS BIGINT), CAST(COALESCE(SUM(f.lost), 0) AS BIGINT),
        CAST(COALESCE(SUM(f.prizes_won_cents), 0) AS BIGINT), CAST(COALESCE(SUM(f.prizes_paid_cents), 0) AS BIGINT)
 FROM blocks b LEFT JOIN block_figures f ON f.block_id = b.id
 WHERE ($1 < 0 OR b.emission_id = $1) GROUP BY b.id, b.emission_id, b.number, b.root, b.published_ms, b.size ORDER BY b.emission_id, b.number;

-- name: block figures, one emission (store/emissions.rs reports(Some(1)); GET /api/admin/emissions/1)
-- bind: $1=1
SELECT b.emission_id, b.number, b.root, b.published_ms, b.size,
        CAST(COALESCE(SUM(f.sold), 0) AS BIGINT), CAST(COALESCE(SUM(f.in_play), 0) AS BIGINT),
        CAST(COALESCE(SUM(f.won), 0) AS BIGINT), CAST(COALESCE(SUM(f.lost), 0) AS BIGINT),
        CAST(COALESCE(SUM(f.prizes_won_cents), 0) AS BIGINT), CAST(COALESCE(SUM(f.prizes_paid_cents), 0) AS BIGINT)
 FROM blocks b LEFT JOIN block_figures f ON f.block_id = b.id
 WHERE ($1 < 0 OR b.emission_id = $1) GROUP BY b.id, b.emission_id, b.number, b.root, b.published_ms, b.size ORDER BY b.emission_id, b.number;

-- name: risk chart's blocks (store/desk.rs blocks_running(); GET /api/admin/emissions/{id}/risk)
-- bind: $1=1
SELECT b.number, b.size,
                    CAST(COALESCE(SUM(f.won + f.lost), 0) AS BIGINT),
                    CAST(COALESCE(SUM(f.prizes_won_cents), 0) AS BIGINT)
             FROM blocks b LEFT JOIN block_figures f ON f.block_id = b.id
             WHERE b.emission_id = $1
             GROUP BY b.id, b.number, b.size ORDER BY b.number;

-- name: the recount of every block from its tickets (store/emissions.rs RECOUNT_BLOCKS: the ledger check's, no desk request runs it)
SELECT COUNT(*), SUM(sold), SUM(prizes_paid_cents) FROM (SELECT b.id AS id, CAST(COUNT(t.id) AS BIGINT) AS printed,
        CAST(COALESCE(SUM(CASE WHEN t.status IN ('sold', 'paid') THEN 1 ELSE 0 END), 0) AS BIGINT) AS sold,
        CAST(COALESCE(SUM(CASE WHEN t.status IN ('sold', 'paid') AND g.phase <> 'finished' THEN 1 ELSE 0 END), 0)
             AS BIGINT) AS in_play,
        CAST(COALESCE(SUM(CASE WHEN g.phase = 'finished' AND g.prize_cents > 0 THEN 1 ELSE 0 END), 0) AS BIGINT) AS won,
        CAST(COALESCE(SUM(CASE WHEN g.phase = 'finished' AND g.prize_cents = 0 THEN 1 ELSE 0 END), 0) AS BIGINT) AS lost,
        CAST(COALESCE(SUM(CASE WHEN g.phase = 'finished' THEN g.prize_cents ELSE 0 END), 0) AS BIGINT)
             AS prizes_won_cents,
        CAST(COALESCE(SUM(pm.amount), 0) AS BIGINT) AS prizes_paid_cents
 FROM blocks b JOIN tickets t ON t.block_id = b.id
 LEFT JOIN ticket_games g ON g.ticket_id = t.id
 LEFT JOIN (SELECT m.ticket_id, SUM(l.amount_cents) AS amount FROM movements m
            JOIN ledger_entries l ON l.movement_id = m.id
            WHERE m.reason = 'prize' AND l.account_id <> 3 GROUP BY m.ticket_id) pm ON pm.ticket_id = t.id
 GROUP BY b.id);

-- name: the kept figures summed (the recount's three columns must equal them)
SELECT COUNT(DISTINCT block_id), SUM(sold), SUM(prizes_paid_cents) FROM block_figures;

-- name: emission table (store/desk.rs emission_table(); GET /api/admin/emissions/{id}/risk)
-- bind: $1=1
SELECT length(table_toml) FROM emissions WHERE id = $1;

-- name: games in play (store/reads.rs active_games(); GET /api/admin/health)
SELECT COUNT(*) FROM ticket_games WHERE phase <> 'finished';

-- name: unsealed audit entries (store/reads.rs unsealed_audit(); GET /api/admin/health)
SELECT COUNT(*), MIN(created_ms) FROM audit_log WHERE chain_pos IS NULL;

-- name: players summary (store/desk.rs players_summary(); GET /api/admin/health)
-- bind: $1=NOW
SELECT (SELECT CAST(COUNT(*) AS BIGINT) FROM players),
                          (SELECT CAST(COUNT(*) AS BIGINT) FROM player_limits
                            WHERE tickets_per_day IS NOT NULL OR spend_per_week_cents IS NOT NULL),
                          (SELECT CAST(COUNT(*) AS BIGINT) FROM player_limits WHERE excluded_until_ms > $1);

-- name: current key (store/keyring.rs current_row(); GET /api/admin/health)
SELECT key_id, fingerprint FROM server_keys WHERE is_current = 1;

-- name: database schema (store/mod.rs database_schema(); GET /api/admin/version, /api/admin/health)
SELECT CAST(COALESCE(MAX(version), 0) AS BIGINT) FROM _sqlx_migrations WHERE success;

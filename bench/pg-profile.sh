#!/usr/bin/env bash
# The PostgreSQL profile: what a game request costs the
# database, against what a `pgbench -N` transaction costs it, in COUNTS (not
# times: they hold on a busy machine):
#   - statements, i.e. round trips (log_statement = all, set on the measured
#     database only, counted in the server's log; pg_stat_statements would
#     need a restart of the cluster: not done);
#   - commits and rollbacks (pg_stat_database);
#   - rows inserted, updated (HOT or not), deleted, by table
#     (pg_stat_user_tables), and the index entries they write (indexes of the
#     table x rows inserted or updated outside HOT);
#   - WAL records, bytes and full-page images of THIS database (pg_waldump
#     between the load's first and last LSN, a record counted when it touches
#     a relation of the database or is the commit of a transaction that did),
#     by relation; and, for the whole cluster, the LSN difference and
#     pg_stat_wal's writes and syncs (these two count whatever else runs on the
#     cluster at the same time: compare with the per-database bytes).
#
# Two cases, each on its own fresh database, dropped at the end:
#   1. game traffic: two `as-capone serve` processes on one database, started
#      once (migrations, first emission) and restarted, so that neither the
#      emission nor the start is counted; then two `loadtest` processes, one
#      per server, GAMES games in all with PLAYERS players; per game request
#      (a purchase or an action: the registrations of the PLAYERS players are
#      in the counts too, their rows are the `players` table's);
#   2. `pgbench -N` (scale 10) on its own database: PGBENCH_CLIENTS clients,
#      PGBENCH_TX transactions each (-t); per transaction.
# Autovacuum is off on both databases (as bench/scaleout.sh does) so that no
# vacuum or analyze writes in the middle of a count. Each measure starts
# with a CHECKPOINT (CHECKPOINT=0: not), so that both pay the full-page image
# of every page they are first to change after one, as a long run does once
# per checkpoint cycle, rather than whether the cluster's own checkpoint
# happened to fall in one of them (the per-unit figure of these images
# depends on the run's length: they are printed apart).
#
#   BIN=target/release-tests/as-capone bench/pg-profile.sh
#
# Needs: PostgreSQL on 127.0.0.1:5432 (user postgres, a superuser: ALTER
# DATABASE ... SET log_statement, a replication slot that keeps the WAL
# until pg_waldump has read it, dropped at the end), on this machine: its log
# (PG_LOG, default /var/log/postgresql/postgresql-MAJOR-main.log) and WAL
# directory (PG_WAL_DIR, default DATA_DIRECTORY/pg_wal) readable, that is run
# as root or postgres; pgbench, pg_waldump, jq, python3.
#
# Environment: PGHOST, PGPORT, PGUSER, PROFILE, BIN (bench/lib/pg-serve.sh);
# PLAYERS (32), GAMES (600), PGBENCH_CLIENTS (32), PGBENCH_TX (200),
# CHECKPOINT (1).
set -euo pipefail
# Load tools buy without choosing a limit on stakes first (an older build ignores this).
export AS_CAPONE_STAKE_LIMIT_REQUIRED=false

cd "$(dirname "$0")/.."
PLAYERS=${PLAYERS:-32}
GAMES=${GAMES:-600}
PGBENCH_CLIENTS=${PGBENCH_CLIENTS:-32}
PGBENCH_TX=${PGBENCH_TX:-200}
CHECKPOINT=${CHECKPOINT:-1}
PREFIX="as_capone_prof_$$"
SLOT=""
cleanup_extra() {
    if [ -n "$SLOT" ]; then
        psql -q -d postgres -c "SELECT pg_drop_replication_slot('$SLOT')" >/dev/null
    fi
}
# shellcheck source=bench/lib/pg-serve.sh
. bench/lib/pg-serve.sh

command -v python3 >/dev/null || { echo "python3 is not installed" >&2; exit 1; }
MAJOR=$(psql -Atqd postgres -c "SELECT current_setting('server_version_num')::int / 10000")
PG_LOG=${PG_LOG:-/var/log/postgresql/postgresql-$MAJOR-main.log}
PG_WAL_DIR=${PG_WAL_DIR:-$(psql -Atqd postgres -c 'SHOW data_directory')/pg_wal}
PG_WALDUMP=${PG_WALDUMP:-/usr/lib/postgresql/$MAJOR/bin/pg_waldump}
[ -r "$PG_LOG" ] || { echo "cannot read PostgreSQL's log $PG_LOG (set PG_LOG; run as root or postgres)" >&2; exit 1; }
[ -r "$PG_WAL_DIR" ] && [ -x "$PG_WAL_DIR" ] || { echo "cannot read the WAL directory $PG_WAL_DIR (set PG_WAL_DIR)" >&2; exit 1; }
[ -x "$PG_WALDUMP" ] || { echo "no pg_waldump at $PG_WALDUMP (set PG_WALDUMP)" >&2; exit 1; }
[ "$(psql -Atqd postgres -c 'SHOW synchronous_commit')" = on ] || { echo "synchronous_commit is not on: the profile would not be the product's" >&2; exit 1; }
PROF=bench/pg_profile.py
# Every query of this script carries the marker, so that its own statements
# are not counted.
Q="/* pg-profile */"

# Counts every statement of new sessions on database $1 in the log, without
# parameters (their values would fill it).
log_statements_of() {
    psql -q -d postgres -v ON_ERROR_STOP=1 \
        -c "ALTER DATABASE $1 SET log_statement = 'all'" \
        -c "ALTER DATABASE $1 SET log_parameter_max_length = 0" >/dev/null
}

# Snapshot of database $1's counters into $2/*_$3.csv ($3: begin or end).
# Table counters first, read in the database (that session's own commit
# counts before the database counters are read at the beginning, after they
# are read at the end: see the order in measure_*).
snapshot_tables() {
    psql -q -d "$1" -v ON_ERROR_STOP=1 --csv -c "$Q SELECT s.relname, s.n_tup_ins, s.n_tup_upd, s.n_tup_hot_upd, s.n_tup_del,
            s.seq_scan, s.seq_tup_read, COALESCE(s.idx_scan, 0) AS idx_scan, COALESCE(s.idx_tup_fetch, 0) AS idx_tup_fetch,
            (SELECT count(*) FROM pg_index i WHERE i.indrelid = s.relid) AS indexes
        FROM pg_stat_user_tables s ORDER BY 1" >"$2/tables_$3.csv"
}
snapshot_db() {
    psql -q -d postgres -v ON_ERROR_STOP=1 --csv -c "$Q SELECT xact_commit, xact_rollback, tup_inserted, tup_updated,
            tup_deleted, tup_returned, tup_fetched, blks_read, blks_hit
        FROM pg_stat_database WHERE datname = '$1'" >"$2/db_$3.csv"
    psql -q -d postgres -v ON_ERROR_STOP=1 --csv -c "$Q SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0')::bigint AS lsn,
            wal_records, wal_fpi, wal_bytes::bigint AS wal_bytes, wal_write, wal_sync FROM pg_stat_wal" >"$2/wal_$3.csv"
}

# Starts measuring database $1 into directory $2.
measure_begin() {
    mkdir -p "$2"
    if [ "$CHECKPOINT" = 1 ]; then
        psql -q -d postgres -v ON_ERROR_STOP=1 -c "$Q CHECKPOINT" >/dev/null
    fi
    snapshot_tables "$1" "$2" begin
    sleep 1 # the snapshot session's statistics are flushed when it exits
    snapshot_db "$1" "$2" begin
    LOG_FROM=$(($(stat -c %s "$PG_LOG") + 1))
    LSN_FROM=$(psql -Atqd postgres -c "$Q SELECT pg_current_wal_insert_lsn()")
}

# Ends the measure of database $1 into $2 (all its sessions closed: their
# statistics flushed) and writes the case's JSON to $2.json: name $3, unit
# $4, number of units $5.
measure_end() {
    local lsn_to oid
    sleep 1
    lsn_to=$(psql -Atqd postgres -c "$Q SELECT pg_current_wal_flush_lsn()")
    snapshot_db "$1" "$2" end
    snapshot_tables "$1" "$2" end
    tail -c "+$LOG_FROM" "$PG_LOG" | python3 "$PROF" statements "$1" >"$2/statements.json"
    oid=$(psql -Atqd postgres -c "$Q SELECT oid FROM pg_database WHERE datname = '$1'")
    psql -Atq -d "$1" -F, -c "$Q SELECT relfilenode, relname FROM pg_class WHERE relfilenode <> 0" >"$2/filenodes.csv"
    psql -q -d "$1" --csv -c "$Q SELECT i.indexrelid::regclass::text AS index, i.indrelid::regclass::text AS table
        FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = 'public'" >"$2/index_parent.csv"
    "$PG_WALDUMP" -p "$PG_WAL_DIR" -s "$LSN_FROM" -e "$lsn_to" 2>"$2/waldump.err" |
        python3 "$PROF" wal "$oid" "$2/filenodes.csv" >"$2/wal.json"
    if [ -s "$2/waldump.err" ]; then
        echo "pg_waldump $LSN_FROM..$lsn_to:" >&2
        cat "$2/waldump.err" >&2
        exit 1
    fi
    python3 "$PROF" case "$3" "$4" "$5" "$2" >"$2.json"
    # A rotated log or a WAL range that missed the load would give zeros
    # (not a fraction: the game's actions share statements and commits in
    # batches, store/pg_batch.rs).
    jq -e '([.statements[]] | add // 0) >= .units / 20 and .wal.total.write_transactions >= .units / 100
           and .db.xact_commit >= .units / 100' "$2.json" >/dev/null ||
        { echo "$3: implausible counts (log rotated? WAL range wrong?): $(jq -c '{units, statements, db, wal: .wal.total}' "$2.json")" >&2; exit 1; }
    echo "$3: statements $(cat "$2/statements.json")" >&2
}

SLOT="${PREFIX}_slot"
psql -q -d postgres -v ON_ERROR_STOP=1 -c "$Q SELECT pg_create_physical_replication_slot('$SLOT', true)" >/dev/null

# 1. Game traffic: two servers on one database.
DB="${PREFIX}_game"
say "game: two servers on $DB, first start (migrations, emission)"
new_db "$DB"
spawn_server "$PG_BASE/$DB" "$WORK/a0.log"
wait_healthy "$SERVER_PID" "$WORK/a0.log" >/dev/null
stop_servers
no_autovacuum "$DB"
log_statements_of "$DB"
spawn_server "$PG_BASE/$DB" "$WORK/a.log"
PID_A=$SERVER_PID
spawn_server "$PG_BASE/$DB" "$WORK/b.log"
PID_B=$SERVER_PID
URL_A=$(wait_healthy "$PID_A" "$WORK/a.log")
URL_B=$(wait_healthy "$PID_B" "$WORK/b.log")
say "game: two loadtests, $PLAYERS players and $GAMES games in all"
measure_begin "$DB" "$WORK/game"
loadtest "$URL_A" $((PLAYERS / 2)) $((GAMES / 2)) "$WORK/game-a.json" &
LA=$!
loadtest "$URL_B" $((PLAYERS - PLAYERS / 2)) $((GAMES - GAMES / 2)) "$WORK/game-b.json" &
LB=$!
wait "$LA"
wait "$LB"
stop_servers
jq -c '{games, actions, purchases, registrations, errors, actions_per_s}' "$WORK/game-a.json" "$WORK/game-b.json" >&2
ERRORS=$(jq -s '[.[].errors] | add' "$WORK/game-a.json" "$WORK/game-b.json")
[ "$ERRORS" = 0 ] || { echo "the loadtests had $ERRORS errors" >&2; exit 1; }
REQUESTS=$(jq -s '[.[] | .actions + .purchases] | add' "$WORK/game-a.json" "$WORK/game-b.json")
GAME_NOTE=$(jq -rs '"\([.[].games] | add) games: \([.[].purchases] | add) purchases + \([.[].actions] | add) actions = game requests; \([.[].registrations] | add) registrations also counted"' "$WORK/game-a.json" "$WORK/game-b.json")
measure_end "$DB" "$WORK/game" "game, 2 servers" "request" "$REQUESTS"

# 2. pgbench -N on its own database.
DB="${PREFIX}_pgbench"
say "pgbench -i -s 10 $DB, then pgbench -N -c $PGBENCH_CLIENTS -j 2 -t $PGBENCH_TX"
new_db "$DB"
pgbench -q -i -s 10 "$DB" >"$WORK/pgbench-init.log" 2>&1 || { cat "$WORK/pgbench-init.log" >&2; exit 1; }
no_autovacuum "$DB"
log_statements_of "$DB"
measure_begin "$DB" "$WORK/pgbench"
pgbench -N -c "$PGBENCH_CLIENTS" -j 2 -t "$PGBENCH_TX" "$DB" >"$WORK/pgbench.log" 2>&1 || { cat "$WORK/pgbench.log" >&2; exit 1; }
grep -E '^(number of transactions actually processed|number of failed)' "$WORK/pgbench.log" >&2 || true
TX=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$WORK/pgbench.log")
[ "$TX" = $((PGBENCH_CLIENTS * PGBENCH_TX)) ] || { echo "pgbench processed $TX transactions, not $((PGBENCH_CLIENTS * PGBENCH_TX))" >&2; exit 1; }
measure_end "$DB" "$WORK/pgbench" "pgbench -N" "tx" "$TX"

echo "as-capone PostgreSQL profile, $(date -u +%Y-%m-%dT%H:%MZ), $(psql -Atqd postgres -c 'SHOW server_version'), $BIN"
echo "game: two servers, two loadtests ($PLAYERS players, $GAMES games in all): $GAME_NOTE"
echo "pgbench -N -c $PGBENCH_CLIENTS -j 2 -t $PGBENCH_TX (scale 10); CHECKPOINT before each measure: $CHECKPOINT"
echo
python3 "$PROF" report "$WORK/game.json" "$WORK/pgbench.json"

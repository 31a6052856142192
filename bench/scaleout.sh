#!/usr/bin/env bash
# Scale-out benchmark, in one run on this machine:
#   1. the reference: pgbench -N (simple updates) on a scratch database;
#   2. as-capone loadtest against ONE server on PostgreSQL;
#   3. the same load against TWO servers on one PostgreSQL database (two
#      loadtest processes at once, half the players each, one per server:
#      `loadtest` takes one --url);
#   4. the same load against one server on SQLite.
# It prints a summary table and removes its databases, files and processes,
# whatever happens.
#
# The PostgreSQL cases start, as a new deployment does, from a fresh
# database whose planner has no statistics: nobody runs ANALYZE, and
# autovacuum is turned off for each table once the server has created them,
# so that it cannot analyze in the middle of a load. What the planner had
# when each load started and ended (pg_stats) is printed in the summary:
# "none", or the tables autovacuum analyzed before it was turned off.
#
#   bench/scaleout.sh            # needs PostgreSQL on 127.0.0.1:5432 (user postgres) and pgbench
#
# Environment: PGHOST, PGPORT, PGUSER (default 127.0.0.1, 5432, postgres);
# PLAYERS (64), GAMES (3000), PGBENCH_SECONDS (30); PROFILE (release: the
# cargo profile the server is built with; release-tests: the test suite's
# optimization, without link-time optimization); BIN (a binary already
# built, used as it is: no build); CPU_WINDOW (6: seconds of the two-server
# load sampled for the CPU table, which then needs GAMES to last longer);
# PERF (a file: `perf record -F 499 -a -g` of the whole machine over that
# window, for `perf report -i FILE`).
#
# Besides actions/s it prints the ratio of two servers to pgbench, and the
# CPU time per unit of work of each part (PostgreSQL, the servers, the load
# generator) sampled while each load runs: what bounds the rate on a
# machine whose cores all of them share.
set -euo pipefail
# Load tools buy without choosing a limit on stakes first (an older build ignores this).
export AS_CAPONE_STAKE_LIMIT_REQUIRED=false

cd "$(dirname "$0")/.."
PLAYERS=${PLAYERS:-64}
GAMES=${GAMES:-3000}
PGBENCH_SECONDS=${PGBENCH_SECONDS:-30}
PREFIX="as_capone_bench_$$"
# shellcheck source=bench/lib/pg-serve.sh
. bench/lib/pg-serve.sh

ROWS=()
row() { # case, actions/s, p50, p99, games, errors
    ROWS+=("$(printf '%-34s %10s %15s %15s %7s %7s' "$@")")
}
row_of() { # case, json file
    row "$1" "$(jq -r '.actions_per_s | floor' "$2")" "$(jq -r '.latency_ms.p50' "$2")" \
        "$(jq -r '.latency_ms.p99' "$2")" "$(jq -r '.games' "$2")" "$(jq -r '.errors' "$2")"
}

# 1. The reference: what this PostgreSQL does with small write transactions.
say "pgbench -i -s 10, then pgbench -N -c 64 -j 2 -T $PGBENCH_SECONDS -P 10"
new_db "${PREFIX}_pgbench"
pgbench -q -i -s 10 "${PREFIX}_pgbench" >"$WORK/pgbench-init.log" 2>&1 || { cat "$WORK/pgbench-init.log" >&2; exit 1; }
pgbench -N -c 64 -j 2 -T "$PGBENCH_SECONDS" -P 10 "${PREFIX}_pgbench" >"$WORK/pgbench.log" 2>&1 &
PGB=$!
# The CPU table's sample: from 3 s after the start to 3 s before the end.
sleep 3
history() { psql -Atq -d "${PREFIX}_pgbench" -c "SELECT count(*) FROM pgbench_history"; }
H0=$(history); pg_sample "$WORK/pg0"; C0=$(ticks_of "$PGB")
sleep $((PGBENCH_SECONDS > 8 ? PGBENCH_SECONDS - 6 : 2))
H1=$(history); pg_sample "$WORK/pg1"; C1=$(ticks_of "$PGB")
wait "$PGB" || { cat "$WORK/pgbench.log" >&2; exit 1; }
PGB_TX=$((H1 - H0))
CPU_PG_PGBENCH=$(us_per "$(pg_ticks_between "$WORK/pg0" "$WORK/pg1")" "$PGB_TX")
CPU_CLIENT_PGBENCH=$(us_per $((C1 - C0)) "$PGB_TX")
cat "$WORK/pgbench.log" >&2
TPS=$(sed -n 's/^tps = \([0-9.]*\) (without initial connection time)/\1/p' "$WORK/pgbench.log")
LAT=$(sed -n 's/^latency average = \([0-9.]*\) ms/\1/p' "$WORK/pgbench.log")
echo "pgbench tps: $TPS" >&2
psql -q -d postgres -c "DROP DATABASE ${PREFIX}_pgbench WITH (FORCE)" >/dev/null

# 2. One server on PostgreSQL.
say "one server on PostgreSQL: loadtest --players $PLAYERS --games $GAMES"
new_db "${PREFIX}_one"
spawn_server "$PG_BASE/${PREFIX}_one" "$WORK/one.log"
URL=$(wait_healthy "$SERVER_PID" "$WORK/one.log")
no_autovacuum "${PREFIX}_one"
STATS_ONE="$(statistics_of "${PREFIX}_one")"
loadtest "$URL" "$PLAYERS" "$GAMES" "$WORK/one.json"
STATS_ONE="$STATS_ONE / $(statistics_of "${PREFIX}_one")"
jq -c . "$WORK/one.json" >&2
row_of "PostgreSQL, 1 server" "$WORK/one.json"
stop_servers

# 3. Two servers on one PostgreSQL database, started at the same moment.
say "two servers on one PostgreSQL database: two loadtests of $((PLAYERS / 2)) players, $((GAMES / 2)) games each"
new_db "${PREFIX}_two"
spawn_server "$PG_BASE/${PREFIX}_two" "$WORK/two-a.log"
PID_A=$SERVER_PID
spawn_server "$PG_BASE/${PREFIX}_two" "$WORK/two-b.log"
PID_B=$SERVER_PID
URL_A=$(wait_healthy "$PID_A" "$WORK/two-a.log")
URL_B=$(wait_healthy "$PID_B" "$WORK/two-b.log")
no_autovacuum "${PREFIX}_two"
STATS_TWO="$(statistics_of "${PREFIX}_two")"
loadtest "$URL_A" $((PLAYERS / 2)) $((GAMES / 2)) "$WORK/two-a.json" &
LA=$!
loadtest "$URL_B" $((PLAYERS - PLAYERS / 2)) $((GAMES - GAMES / 2)) "$WORK/two-b.json" &
LB=$!
# The CPU table's sample: CPU_WINDOW seconds from 2 s after the start.
sleep 2
LOADS="$(child_of "$LA") $(child_of "$LB")"
# shellcheck disable=SC2086
R0=$(requests_of "$URL_A" "$URL_B"); pg_sample "$WORK/pg0"; S0=$(ticks_of "$PID_A" "$PID_B"); L0=$(ticks_of $LOADS)
if [ -n "${PERF:-}" ]; then
    # The whole machine's profile over the same window (perf report -i "$PERF").
    perf record -q -F 499 -a -g -o "$PERF" -- sleep "${CPU_WINDOW:-6}" 2>/dev/null
else
    sleep "${CPU_WINDOW:-6}"
fi
# shellcheck disable=SC2086
R1=$(requests_of "$URL_A" "$URL_B"); pg_sample "$WORK/pg1"; S1=$(ticks_of "$PID_A" "$PID_B"); L1=$(ticks_of $LOADS)
if kill -0 "$LA" 2>/dev/null && kill -0 "$LB" 2>/dev/null; then
    GAME_REQ=$((R1 - R0))
else
    GAME_REQ=0 # a load ended inside the window: no figure (raise GAMES)
fi
CPU_PG_GAME=$(us_per "$(pg_ticks_between "$WORK/pg0" "$WORK/pg1")" "$GAME_REQ")
CPU_SERVERS_GAME=$(us_per $((S1 - S0)) "$GAME_REQ")
CPU_CLIENT_GAME=$(us_per $((L1 - L0)) "$GAME_REQ")
wait "$LA"
wait "$LB"
STATS_TWO="$STATS_TWO / $(statistics_of "${PREFIX}_two")"
jq -c . "$WORK/two-a.json" "$WORK/two-b.json" >&2
row "PostgreSQL, 2 servers, 1 database" \
    "$(jq -s '[.[].actions_per_s] | add | floor' "$WORK/two-a.json" "$WORK/two-b.json")" \
    "$(jq -r '.latency_ms.p50' "$WORK/two-a.json")/$(jq -r '.latency_ms.p50' "$WORK/two-b.json")" \
    "$(jq -r '.latency_ms.p99' "$WORK/two-a.json")/$(jq -r '.latency_ms.p99' "$WORK/two-b.json")" \
    "$(jq -s '[.[].games] | add' "$WORK/two-a.json" "$WORK/two-b.json")" \
    "$(jq -s '[.[].errors] | add' "$WORK/two-a.json" "$WORK/two-b.json")"
TWO_NOTE="2 servers: actions/s summed over the two loadtests; all actions / the longer run: $(jq -s '([.[].actions] | add) / ([.[].seconds] | max) | floor' "$WORK/two-a.json" "$WORK/two-b.json"); p50 and p99 per loadtest (a/b)"
stop_servers

# 4. One server on SQLite.
say "one server on SQLite: loadtest --players $PLAYERS --games $GAMES"
spawn_server "sqlite://$WORK/bench.db" "$WORK/sqlite.log"
URL=$(wait_healthy "$SERVER_PID" "$WORK/sqlite.log")
loadtest "$URL" "$PLAYERS" "$GAMES" "$WORK/sqlite.json"
jq -c . "$WORK/sqlite.json" >&2
row_of "SQLite, 1 server" "$WORK/sqlite.json"
stop_servers

echo
echo "as-capone scale-out benchmark, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, $(psql -Atqd postgres -c 'SHOW server_version'), profile $PROFILE"
echo "pgbench -N -c 64 -j 2 -T $PGBENCH_SECONDS (scale 10): $TPS tps, latency average $LAT ms"
echo
printf '%-34s %10s %15s %15s %7s %7s\n' "case ($PLAYERS players, $GAMES games)" "actions/s" "p50 ms" "p99 ms" "games" "errors"
for r in "${ROWS[@]}"; do
    echo "$r"
done
echo "$TWO_NOTE"
echo "2 servers / pgbench -N: $(jq -s --arg tps "$TPS" '([.[].actions_per_s] | add) / ($tps | tonumber) * 100 | floor / 100' "$WORK/two-a.json" "$WORK/two-b.json")"
echo
echo "CPU per unit of work, sampled while each load runs (us of CPU time; PostgreSQL: every process of the cluster):"
printf '%-34s %14s %14s\n' "" "pgbench -N tx" "game request"
printf '%-34s %14s %14s\n' "units in the sample" "$PGB_TX" "$GAME_REQ (2 servers)"
printf '%-34s %14s %14s\n' "PostgreSQL" "$CPU_PG_PGBENCH" "$CPU_PG_GAME"
printf '%-34s %14s %14s\n' "as-capone servers" "-" "$CPU_SERVERS_GAME"
printf '%-34s %14s %14s\n' "load generator (pgbench, loadtest)" "$CPU_CLIENT_PGBENCH" "$CPU_CLIENT_GAME"
sum_of() { awk 'BEGIN { s = 0; for (i = 1; i < ARGC; i++) if (ARGV[i] != "-") s += ARGV[i]; printf "%.0f", s }' "$@"; }
SUM_PGB=$(sum_of "$CPU_PG_PGBENCH" "$CPU_CLIENT_PGBENCH")
SUM_GAME=$(sum_of "$CPU_PG_GAME" "$CPU_SERVERS_GAME" "$CPU_CLIENT_GAME")
printf '%-34s %14s %14s\n' "sum" "$SUM_PGB" "$SUM_GAME"
printf '%-34s %14s %14s\n' "what $(nproc) cores allow at that cost, /s" \
    "$(awk -v s="$SUM_PGB" -v c="$(nproc)" 'BEGIN { if (s > 0) printf "%.0f", c * 1e6 / s }')" \
    "$(awk -v s="$SUM_GAME" -v c="$(nproc)" 'BEGIN { if (s > 0) printf "%.0f", c * 1e6 / s }')"
echo "PostgreSQL planner statistics (tables in pg_stats) at the load's start / end, autovacuum off, no ANALYZE:"
echo "  1 server: $STATS_ONE; 2 servers: $STATS_TWO"

# Shared by the benchmark scripts that start `as-capone serve` on PostgreSQL
# (bench/scaleout.sh, bench/pg-profile.sh): sourced, not run. The script sets
# PREFIX (its databases' name prefix) first and may define `cleanup_extra`,
# run first by the exit trap. It sets PGHOST, PGPORT, PGUSER (default
# 127.0.0.1, 5432, postgres), PG_BASE, BIN (from BIN, or PROFILE's build,
# done here), WORK (a scratch directory), and removes on exit the processes
# in PIDS, the databases in DBS and WORK, whatever happens.
#
# Environment: PGHOST, PGPORT, PGUSER; PROFILE (release: the cargo profile
# the server is built with; release-tests: the test suite's optimization,
# without link-time optimization); BIN (a binary already built, used as it
# is: no build).
# Load tools buy without choosing a limit on stakes first (an older build ignores this).
export AS_CAPONE_STAKE_LIMIT_REQUIRED=false
: "${PREFIX:?set PREFIX before sourcing bench/lib/pg-serve.sh}"
PGHOST=${PGHOST:-127.0.0.1}
PGPORT=${PGPORT:-5432}
PGUSER=${PGUSER:-postgres}
export PGHOST PGPORT PGUSER
PG_BASE="postgres://${PGUSER}@${PGHOST}:${PGPORT}"
PROFILE=${PROFILE:-release}
BIN_GIVEN=${BIN:-}
BIN=${BIN:-target/$PROFILE/as-capone}
WORK=$(mktemp -d /tmp/as-capone-bench.XXXXXX)
PIDS=()
DBS=()

say() { echo "== $*" >&2; }

cleanup() {
    local pid db
    if declare -F cleanup_extra >/dev/null; then
        cleanup_extra || true
    fi
    for pid in "${PIDS[@]}"; do
        kill "$pid" 2>/dev/null || true
    done
    for pid in "${PIDS[@]}"; do
        wait "$pid" 2>/dev/null || true
    done
    for db in "${DBS[@]}"; do
        psql -q -d postgres -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null 2>&1 || true
    done
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

command -v pgbench >/dev/null || { echo "pgbench is not installed (apt-get install postgresql-client)" >&2; exit 1; }
command -v jq >/dev/null || { echo "jq is not installed" >&2; exit 1; }
pg_isready -q || { echo "PostgreSQL does not answer on $PGHOST:$PGPORT" >&2; exit 1; }

new_db() { # name
    psql -q -d postgres -c "CREATE DATABASE $1" >/dev/null
    # PG_DB_SET="name = value": a setting of the new database (to try one).
    if [ -n "${PG_DB_SET:-}" ]; then
        psql -q -d postgres -c "ALTER DATABASE $1 SET ${PG_DB_SET}" >/dev/null
    fi
    DBS+=("$1")
}

if [ -z "$BIN_GIVEN" ]; then
    say "cargo build --profile $PROFILE -p as-capone"
    cargo build --profile "$PROFILE" -p as-capone >&2
fi

# Starts `as-capone serve` on a free port with database URL $1, log file $2,
# in the background (its pid in SERVER_PID and PIDS). Every server of the
# run shares one key file, created by the first.
spawn_server() {
    "$BIN" serve --listen 127.0.0.1:0 --db "$1" --key-file "$WORK/server.key" --start-balance-cents 100000000 \
        --demo-token "" --initial-blocks 1 >"$2" 2>&1 &
    SERVER_PID=$!
    PIDS+=("$SERVER_PID")
}

# Waits for the server $1 (pid) logging to $2 to answer 200 on /healthz and
# prints its base URL.
wait_healthy() {
    local pid=$1 log=$2 url="" i
    for i in $(seq 1 1200); do # 120 s: the first start emits a block of 300 000 tickets
        if ! kill -0 "$pid" 2>/dev/null; then
            echo "the server (pid $pid) exited; its log:" >&2
            cat "$log" >&2
            return 1
        fi
        url=$(grep -o 'listening on http://[0-9.:]*' "$log" | head -1 | sed 's/listening on //') || true
        if [ -n "$url" ] && [ "$(curl -s -o /dev/null -w '%{http_code}' "$url/healthz")" = 200 ]; then
            echo "$url"
            return 0
        fi
        sleep 0.1
    done
    echo "the server (pid $pid) did not become healthy in 120 s; its log:" >&2
    cat "$log" >&2
    return 1
}

stop_servers() {
    local pid
    for pid in "${PIDS[@]}"; do
        kill "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    PIDS=()
}

# Turns autovacuum off for every table of database $1 (a no-statistics run
# stays one until its end).
no_autovacuum() {
    psql -qAt -d "$1" -v ON_ERROR_STOP=1 >/dev/null <<'SQL'
SELECT format('ALTER TABLE %I.%I SET (autovacuum_enabled = false)', schemaname, relname)
  FROM pg_stat_user_tables
\gexec
SQL
}

# The tables of database $1 the planner has statistics of: "none" or a list.
statistics_of() {
    psql -qAt -d "$1" -c "SELECT COALESCE(string_agg(DISTINCT tablename::text, ', ' ORDER BY tablename::text), 'none')
                          FROM pg_stats WHERE schemaname = 'public'"
}

# loadtest against $1 with $2 players and $3 games, JSON to $4.
loadtest() {
    "$BIN" loadtest --url "$1" --players "$2" --games "$3" --json >"$4"
}


# --- CPU per unit of work (bench/scaleout.sh's CPU table) -----------------
# Each load is sampled twice while it runs (after its start, before its
# end): the CPU time the processes of each part took between the two
# samples, divided by the units of work done between them, counted
# exactly (pgbench: rows of pgbench_history, one per transaction of -N;
# the game: the servers' as_capone_http_requests_total). PostgreSQL's
# share is every process of the cluster (backends, WAL writer,
# checkpointer): on a machine running other work on the same cluster it
# counts that too.
CLK_TCK=$(getconf CLK_TCK)

# CPU ticks (user + system, 1/CLK_TCK s) of the processes $@.
ticks_of() {
    local s=0 p t
    for p in "$@"; do
        t=$(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null) && s=$((s + t))
    done
    echo "$s"
}

# The PostgreSQL cluster's processes and their CPU ticks, one "pid ticks"
# a line, into file $1. Backends come and go: [`pg_ticks_between`] counts
# each process from its first sample, or from its start.
pg_sample() {
    local p
    for p in $(pgrep -u postgres -x postgres); do
        awk -v p="$p" '{print p, $14 + $15}' "/proc/$p/stat" 2>/dev/null || true
    done >"$1"
}

# CPU ticks the cluster's processes took between samples $1 and $2 (a
# process gone before the second sample is not counted).
pg_ticks_between() {
    awk 'NR == FNR { t0[$1] = $2; next } { s += $2 - ($1 in t0 ? t0[$1] : 0) } END { printf "%d", s }' "$1" "$2"
}

# The pid of the program a function run in the background (a subshell,
# pid $1) runs: its child.
child_of() {
    local i c
    for i in $(seq 1 50); do
        c=$(pgrep -P "$1" | head -1 || true)
        if [ -n "$c" ]; then
            echo "$c"
            return 0
        fi
        sleep 0.02
    done
    echo "$1"
}

# Game requests the servers at URLs $@ have answered so far.
requests_of() {
    local s=0 u n
    for u in "$@"; do
        n=$(curl -s "$u/metrics" | awk '/^as_capone_http_requests_total/ {s += $NF} END {printf "%d", s}')
        s=$((s + n))
    done
    echo "$s"
}

# µs of CPU per unit: ticks $1 over $2 units.
us_per() {
    awk -v t="$1" -v n="$2" -v hz="$CLK_TCK" 'BEGIN { if (n > 0) printf "%.0f", t * 1e6 / hz / n; else print "-" }'
}

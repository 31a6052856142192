#!/usr/bin/env bash
# Sizing figures for the deployment guide (docs/deployment.md, "Sizing"):
# the server's memory and its database's growth, on SQLite and on
# PostgreSQL, in one run on this machine.
#
# For each database: a fresh server emits one regulation block (300 000
# tickets); then its resident memory at rest, then `loadtest` plays GAMES
# whole games with PLAYERS players while the server's resident memory is
# sampled every 0.2 s; the database's size is read before and after the load
# (SQLite: (page_count - freelist_count) * page_size, read-only beside the
# running server; PostgreSQL: pg_database_size), hence bytes per printed
# ticket and per ticket sold and played to its end. It prints a table and
# removes its databases, files and processes, whatever happens.
#
#   BIN=target/release-tests/as-capone bench/sizing.sh
#
# Environment: PGHOST, PGPORT, PGUSER (default 127.0.0.1, 5432, postgres);
# PLAYERS (64), GAMES (5000); BIN (default target/release/as-capone, built
# first with `cargo build --release -p as-capone` when missing).
set -euo pipefail
# Load tools buy without choosing a limit on stakes first (an older build ignores this).
export AS_CAPONE_STAKE_LIMIT_REQUIRED=false

cd "$(dirname "$0")/.."
PGHOST=${PGHOST:-127.0.0.1}
PGPORT=${PGPORT:-5432}
PGUSER=${PGUSER:-postgres}
export PGHOST PGPORT PGUSER
PLAYERS=${PLAYERS:-64}
GAMES=${GAMES:-5000}
BIN=${BIN:-target/release/as-capone}
DB_NAME="as_capone_sizing_$$"
WORK=$(mktemp -d /tmp/as-capone-sizing.XXXXXX)
SERVER_PID=""

say() { echo "== $*" >&2; }

cleanup() {
    if [ -n "$SERVER_PID" ]; then
        kill "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
    fi
    psql -q -d postgres -c "DROP DATABASE IF EXISTS $DB_NAME WITH (FORCE)" >/dev/null 2>&1 || true
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

for tool in jq sqlite3 psql curl; do
    command -v "$tool" >/dev/null || { echo "$tool is not installed" >&2; exit 1; }
done
if [ ! -x "$BIN" ]; then
    say "cargo build --release -p as-capone"
    cargo build --release -p as-capone >&2
fi

# A figure of /proc/PID/status, in KiB.
kib() { awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status"; }

# Starts the server on database URL $1 (log $2), its pid in SERVER_PID.
start_server() {
    "$BIN" serve --listen 127.0.0.1:0 --db "$1" --key-file "$WORK/server.key" --start-balance-cents 100000000 \
        --demo-token "" --initial-blocks 1 --registrations-per-address 0 >"$2" 2>&1 &
    SERVER_PID=$!
}

# Prints the URL of the server logging to $1 once its /healthz answers 200.
wait_healthy() {
    local i url=""
    for i in $(seq 1 1200); do
        kill -0 "$SERVER_PID" 2>/dev/null || { cat "$1" >&2; return 1; }
        url=$(grep -o 'listening on http://[0-9.:]*' "$1" | head -1 | sed 's/listening on //') || true
        if [ -n "$url" ] && [ "$(curl -s -o /dev/null -w '%{http_code}' "$url/healthz")" = 200 ]; then
            echo "$url"
            return 0
        fi
        sleep 0.1
    done
    cat "$1" >&2
    return 1
}

stop_server() {
    kill "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
    SERVER_PID=""
}

# Runs the load against $1 (JSON to $2), sampling the server's resident
# memory every 0.2 s, and prints the smallest and the largest sample, in MiB
# ("min-max": the emission's buffers may still be given back early in the load).
load_sampling_rss() {
    "$BIN" loadtest --url "$1" --players "$PLAYERS" --games "$GAMES" --json >"$2" &
    local load=$!
    while kill -0 "$load" 2>/dev/null; do
        kib "$SERVER_PID" VmRSS
        sleep 0.2
    done >"$2.rss"
    wait "$load"
    sort -n "$2.rss" | awk 'NR == 1 { min = $1 } { max = $1 } END { printf "%d-%d", min / 1024, max / 1024 }'
}

sqlite_bytes() {
    sqlite3 "file:$1?mode=ro" 'SELECT (SELECT page_count FROM pragma_page_count) - (SELECT freelist_count FROM pragma_freelist_count)' |
        awk -v size="$(sqlite3 "file:$1?mode=ro" 'PRAGMA page_size')" '{ print $1 * size }'
}
pg_bytes() { psql -qAt -d "$DB_NAME" -c "SELECT pg_database_size(current_database())"; }

ROWS=()
# Measures one database: $1 label, $2 URL, $3 the function printing its size.
measure() {
    say "$1: start (one block of 300 000 tickets)"
    local url idle hwm_start before peak after json="$WORK/$1.json"
    start_server "$2" "$WORK/$1.log"
    url=$(wait_healthy "$WORK/$1.log")
    hwm_start=$(kib "$SERVER_PID" VmHWM)
    sleep 2
    idle=$(kib "$SERVER_PID" VmRSS)
    before=$($3)
    say "$1: loadtest --players $PLAYERS --games $GAMES"
    peak=$(load_sampling_rss "$url" "$json")
    after=$($3)
    local games actions
    games=$(jq -r '.games' "$json")
    actions=$(jq -r '.actions' "$json")
    ROWS+=("$(printf '%-11s %9s %9s %9s %9s %12s %12s %8s %8s %9s' "$1" "$((hwm_start / 1024))" "$((idle / 1024))" \
        "$peak" "$(($(kib "$SERVER_PID" VmRSS) / 1024))" "$before" "$after" "$((before / 300000))" \
        "$(((after - before) / games))" "$(jq -r '.actions_per_s | floor' "$json")")")
    say "$1: $games games, $actions actions, $(jq -r '.errors' "$json") errors"
    stop_server
}

measure sqlite "sqlite://$WORK/sizing.db" "sqlite_bytes $WORK/sizing.db"
psql -q -d postgres -c "CREATE DATABASE $DB_NAME" >/dev/null
measure postgresql "postgres://$PGUSER@$PGHOST:$PGPORT/$DB_NAME" pg_bytes

echo
echo "as-capone sizing, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, $(psql -Atqd postgres -c 'SHOW server_version'), $BIN, $PLAYERS players, $GAMES games"
printf '%-11s %9s %9s %9s %9s %12s %12s %8s %8s %9s\n' "database" "start MiB" "idle MiB" "load MiB" "after MiB" \
    "bytes before" "bytes after" "B/ticket" "B/game" "actions/s"
for r in "${ROWS[@]}"; do
    echo "$r"
done
echo "start: peak resident memory (VmHWM) through start-up and the block's emission; idle: resident 2 s later;"
echo "load: the smallest and largest resident memory sampled during the load; after: resident at its end;"
echo "B/ticket: the database after the emission / 300 000;"
echo "B/game: its growth during the load / games played (a ticket sold, played to its end, its answers and audit entries)"

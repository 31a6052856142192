#!/usr/bin/env bash
# Where the CPU goes: one `as-capone serve` on DB_URL under `loadtest` (64
# players, 3000 games), and the CPU time per game action of the server, of
# the load generator, and of the rest of the machine (the database's
# processes and the kernel), from /proc; with how busy both cores were.
#
#   bench/cpu-per-action.sh sqlite:///tmp/cpux.db
#   bench/cpu-per-action.sh postgres://postgres@127.0.0.1:5432/cpux    # the database is dropped and created
#
# Needs `cargo build --release -p as-capone` first. Other work on the machine
# counts as "rest": run it on a quiet machine.
set -euo pipefail
# Load tools buy without choosing a limit on stakes first (an older build ignores this).
export AS_CAPONE_STAKE_LIMIT_REQUIRED=false
cd "$(dirname "$0")/.."
DB=$1; PORT=18099; EXTRA=${2:-}
if [[ $DB == postgres* ]]; then NAME=${DB##*/}; psql -h 127.0.0.1 -U postgres -qc "DROP DATABASE IF EXISTS $NAME" -c "CREATE DATABASE $NAME"; else rm -f "${DB#sqlite://}"*; fi
RUST_LOG=warn AS_CAPONE_START_BALANCE_CENTS=100000000 target/release/as-capone serve --listen 127.0.0.1:$PORT --db $DB --initial-blocks 1 --demo-token "" $EXTRA > /tmp/cpux.log 2>&1 &
SP=$!
for i in $(seq 1 60); do curl -sf localhost:$PORT/healthz >/dev/null && break; sleep 1; done
busy() { awk '/^cpu /{print $2+$3+$4+$7+$8}' /proc/stat; }
tk=$(getconf CLK_TCK)
b1=$(busy); s1=$(awk '{print $14+$15}' /proc/$SP/stat)
OUT=$( { /usr/bin/time -f "LT %U %S" target/release/as-capone loadtest --url http://127.0.0.1:$PORT --players 64 --games 3000 --json; } 2>&1 )
b2=$(busy); s2=$(awk '{print $14+$15}' /proc/$SP/stat)
kill $SP; wait $SP 2>/dev/null
acts=$(echo "$OUT" | grep -o '"actions":[0-9]*' | head -1 | cut -d: -f2)
aps=$(echo "$OUT" | grep -o '"actions_per_s":[0-9.]*' | head -1 | cut -d: -f2)
lt=$(echo "$OUT" | awk '/^LT/{print $2+$3}')
python3 - "$tk" "$acts" "$b1" "$b2" "$s1" "$s2" "$lt" "$aps" "$DB" <<'PY'
import sys
tk,acts,b1,b2,s1,s2,lt,aps=map(float,sys.argv[1:9]); db=sys.argv[9]
total=(b2-b1)/tk; srv=(s2-s1)/tk
print(f"{db}: {acts:.0f} actions, {aps:.0f} actions/s; CPU us per action: server {1e6*srv/acts:.0f}, loadtest {1e6*lt/acts:.0f}, rest (database, kernel) {1e6*(total-srv-lt)/acts:.0f}, total {1e6*total/acts:.0f}; both cores busy {100*total/(2*acts/aps):.0f}%")
PY

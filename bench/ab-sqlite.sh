#!/usr/bin/env bash
# One binary's `serve` on a fresh SQLite file under `loadtest` (64 players):
# run it for two binaries in turn, in one session, to compare them on the
# same (noisy) machine.
#
#   git worktree add /tmp/old REV && (cd /tmp/old && CARGO_TARGET_DIR=/tmp/oldtarget cargo build --release -p as-capone)
#   for i in 1 2; do
#     bench/ab-sqlite.sh /tmp/oldtarget/release/as-capone 6000 before
#     bench/ab-sqlite.sh target/release/as-capone 6000 after
#   done
set -euo pipefail
# Load tools buy without choosing a limit on stakes first (an older build ignores this).
export AS_CAPONE_STAKE_LIMIT_REQUIRED=false
cd "$(dirname "$0")/.."
BIN=$1; GAMES=$2; LABEL=$3; PORT=18098; DB=$(mktemp -d)/ab.db
RUST_LOG=warn AS_CAPONE_START_BALANCE_CENTS=100000000 "$BIN" serve --listen 127.0.0.1:$PORT --db "sqlite://$DB" \
    --initial-blocks 1 --demo-token "" >"$DB.log" 2>&1 &
SP=$!
trap 'kill $SP 2>/dev/null; wait $SP 2>/dev/null; rm -rf "$(dirname "$DB")"' EXIT
for _ in $(seq 1 60); do curl -sf "localhost:$PORT/healthz" >/dev/null && break; sleep 1; done
echo "$LABEL: $(target/release/as-capone loadtest --url "http://127.0.0.1:$PORT" --players 64 --games "$GAMES" 2>&1 | sed -n 2,3p | tr '\n' ' ')"

#!/usr/bin/env bash
# The open-loop target (p99 of an open round at 80 % of the closed loop's
# capacity, BENCHMARKS.md), measured as it is stated: a closed
# round (64 players) and at once an open round paced at PCT % (default 80)
# of the actions/s it carried, plus the purchases (8 %), both with
# bench/server-tail.sh, once a minute, each pair starting at second START
# (default 28) of the minute. On this machine RabbitMQ starts an Erlang VM
# at second 25 of every minute, which takes a core for a few hundred ms
# (docs/bench-log/2026-12-02-to-04-game-server.md): a pair started at :28 ends before the next one. Set
# START to a run's second to measure through it instead.
#
#   bench/server-open80.sh MINUTES [BINARY]
#   PCT=60 PLAYERS_OPEN=256 bench/server-open80.sh 3 target/release/as-capone
set -euo pipefail
# Load tools buy without choosing a limit on stakes first (an older build ignores this).
export AS_CAPONE_STAKE_LIMIT_REQUIRED=false
MINUTES=$1; BIN=${2:-target/release/as-capone}
cd "$(dirname "$0")/.."
waitsec() { while [ $((10#$(date +%S))) -ne "$1" ]; do sleep 0.2; done; }
for _ in $(seq 1 "$MINUTES"); do
  waitsec "${START:-28}"
  C=$(GAMES=8000 PLAYERS=64 bench/server-tail.sh 1 "$BIN" 2>&1)
  echo "$C"
  A=$(echo "$C" | head -1 | sed 's/.* \([0-9]*\) actions\/s.*/\1/')
  R=$((A * 108 / 100 * ${PCT:-80} / 100))
  echo "open loop at $R requests/s: ${PCT:-80} % of $A actions/s, plus the purchases"
  RATE=$R GAMES=${GAMES_OPEN:-10000} PLAYERS=${PLAYERS_OPEN:-64} bench/server-tail.sh 1 "$BIN" 2>&1
done

#!/usr/bin/env bash
# Where the server's threads spend a load test: per thread
# kind (tokio workers, the SQLite writer, sqlx's read workers), the CPU they
# used and the time they waited, runnable, for a core (the kernel's
# /proc/PID/task/TID/schedstat, second field), each in cores (seconds per
# second of the run); then the writer's commits and batch sizes from the
# server's metrics.
#
#   bench/server-threads.sh BINARY            # 64 players, closed loop
#   RATE=8000 bench/server-threads.sh BINARY  # open loop, paced
#   LOADGEN=OTHER_BINARY GAMES=4000 PORT=18116 bench/server-threads.sh BINARY
set -euo pipefail
# Load tools buy without choosing a limit on stakes first (an older build ignores this).
export AS_CAPONE_STAKE_LIMIT_REQUIRED=false
BIN=$1
GAMES=${GAMES:-4000}; PORT=${PORT:-18116}; PLAYERS=${PLAYERS:-64}
DIR=$(mktemp -d /tmp/server-threads.XXXXXX)
trap 'rm -rf "$DIR"' EXIT
RUST_LOG=warn AS_CAPONE_START_BALANCE_CENTS=100000000 "$BIN" serve --listen 127.0.0.1:$PORT \
  --db "sqlite://$DIR/bench.db" --initial-blocks 1 --demo-token "" --registrations-per-address 0 > "$DIR/serve.log" 2>&1 &
SP=$!
for _ in $(seq 1 90); do curl -sf localhost:$PORT/healthz >/dev/null && break; sleep 0.5; done
snap() {
  # One line per thread: id, kind, CPU ticks, run-queue nanoseconds.
  for t in /proc/$SP/task/*; do
    { c=$(tr ' ' _ < "$t/comm") && s=$(awk '{print $14+$15}' "$t/stat") && q=$(awk '{print $2}' "$t/schedstat") \
      && echo "${t##*/} $c $s $q"; } 2>/dev/null || true
  done
}
snap > "$DIR/before"; curl -s localhost:$PORT/metrics > "$DIR/metrics0"; t1=$(date +%s.%N)
OUT=$("${LOADGEN:-$BIN}" loadtest --url http://127.0.0.1:$PORT --players "$PLAYERS" --games "$GAMES" ${RATE:+--rate $RATE} --json 2>&1 | grep '^{')
t2=$(date +%s.%N); snap > "$DIR/after"
curl -s localhost:$PORT/metrics > "$DIR/metrics" || true
kill $SP; wait $SP 2>/dev/null || true
echo "$OUT" | python3 -c 'import json, sys
r = json.load(sys.stdin); l = r["latency_ms"]
print("%.0f actions/s, p50 %.2f p90 %.2f p99 %.2f max %.2f ms" % (r["actions_per_s"], l["p50"], l["p90"], l["p99"], l["max"]))'
# Per thread, what it used between the two readings (one born meanwhile
# from zero); a thread that ended meanwhile (tokio's blocking pool) is
# missing from the second reading and left out, not subtracted. Then
# summed per kind.
awk -v el="$(echo "$t2 - $t1" | bc)" -v tk="$(getconf CLK_TCK)" '
  NR == FNR { c0[$1] = $3; w0[$1] = $4; next }
  { c[$2] += $3 - c0[$1]; w[$2] += $4 - w0[$1] }
  END { for (k in c) printf "  %-16s CPU %.2f cores, waiting for a core %.2f cores\n", k, c[k] / tk / el, w[k] / 1e9 / el }
' "$DIR/before" "$DIR/after" | sort
python3 - "$DIR/metrics0" "$DIR/metrics" "$(echo "$t2 - $t1" | bc)" "$(dirname "$0")" <<'PY'
import sys
sys.path.insert(0, sys.argv[4])
import prom
m, el = prom.delta(sys.argv[1], sys.argv[2]), float(sys.argv[3])
d = lambda k: m.get(k, 0)
n = d("as_capone_commit_batch_size_count")
busy, ckpt = d("as_capone_commit_seconds_sum"), d("as_capone_writer_checkpoint_seconds_sum")
# The writer's wall time: running batches (CPU, waiting for a core, disk
# syncs) and finishing checkpoints; the rest it waited for requests.
print(f"  writer: {n:.0f} commits, {d('as_capone_commit_batch_size_sum') / max(n, 1):.1f} requests per commit, "
      f"{1e3 * busy / max(n, 1):.2f} ms per commit; busy {100 * (busy + ckpt) / el:.0f} % of the run "
      f"(batches {100 * busy / el:.0f} %, checkpoints {100 * ckpt / el:.0f} %)")
PY

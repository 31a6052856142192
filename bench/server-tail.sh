#!/usr/bin/env bash
# The game server's throughput and tail, a binary beside
# its baseline in the same minutes. Each round runs every binary given once,
# in turn, each on a fresh SQLite file: `serve`, then `loadtest` (64 players
# closed loop, or paced with RATE=requests/s), and prints per run:
# - the clock time the load started, the actions/s, the action latencies,
#   the CPU time per action of the server and of the load generator (/proc
#   and /usr/bin/time), the bytes the server wrote to disk per action (WAL
#   and checkpoints, /proc/PID/io);
# - the steady window: loadtest's rate and latencies from the moment every
#   player registered until the games ran out (with many paced players the
#   whole run's rate understates the load the server carried);
# - the machine's busy, idle and stolen time (/proc/stat: the host's other
#   guests take "steal") and the share the machine's other processes took;
# - from the server's metrics, the load's own (after it less before it):
#   the commits over 10 ms, the time the writer waited for checkpoints, and
#   the actions whose handler itself took over 10 ms (the rest of a latency
#   is the kernel, the runtimes' scheduling and the client);
# - loadtest's `--timeline` windows of 100 ms whose p99 passed 10 ms, to
#   find what else ran then.
# LOADGEN_NICE=N runs the load generator under `nice -n N`.
#
#   bench/server-tail.sh ROUNDS BINARY [BINARY...]
#   GAMES=4000 RATE=8000 bench/server-tail.sh 3 /work/base/target/release/as-capone target/release/as-capone
#   SERVER_CPUS=0 LOADGEN_CPUS=1 bench/server-tail.sh 1 target/release/as-capone   # each pinned to a core (taskset)
#   LOADGEN=target/release/as-capone bench/server-tail.sh 2 OLD NEW   # one load generator for every server
#
# Other work on the machine shares the two cores: compare binaries within a
# round, and look at the CPU per action, which load changes least.
set -euo pipefail
# Load tools buy without choosing a limit on stakes first (an older build ignores this).
export AS_CAPONE_STAKE_LIMIT_REQUIRED=false
ROUNDS=$1; shift
GAMES=${GAMES:-4000}; PORT=${PORT:-18097}; PLAYERS=${PLAYERS:-64}
DIR=$(mktemp -d /tmp/server-tail.XXXXXX)
trap 'rm -rf "$DIR"' EXIT
tk=$(getconf CLK_TCK)
for round in $(seq 1 "$ROUNDS"); do
  for BIN in "$@"; do
    rm -f "$DIR"/bench.db*
    RUST_LOG=warn AS_CAPONE_START_BALANCE_CENTS=100000000 taskset -c "${SERVER_CPUS:-0-1023}" "$BIN" serve --listen 127.0.0.1:$PORT \
      --db "sqlite://$DIR/bench.db" --initial-blocks 1 --demo-token "" --registrations-per-address 0 > "$DIR/serve.log" 2>&1 &
    SP=$!
    for _ in $(seq 1 60); do curl -sf localhost:$PORT/healthz >/dev/null && break; sleep 1; done
    curl -s localhost:$PORT/metrics > "$DIR/metrics0" || true
    s1=$(awk '{print $14+$15}' /proc/$SP/stat); w1=$(awk '/^write_bytes/{print $2}' /proc/$SP/io)
    c1=$(head -1 /proc/stat); at=$(date +%T)
    OUT=$( { /usr/bin/time -f "LT %U %S" nice -n "${LOADGEN_NICE:-0}" taskset -c "${LOADGEN_CPUS:-0-1023}" "${LOADGEN:-$BIN}" loadtest --url http://127.0.0.1:$PORT --players "$PLAYERS" \
      --games "$GAMES" ${RATE:+--rate $RATE} --json --timeline "$DIR/timeline.csv"; } 2>&1 )
    s2=$(awk '{print $14+$15}' /proc/$SP/stat); w2=$(awk '/^write_bytes/{print $2}' /proc/$SP/io)
    c2=$(head -1 /proc/stat)
    curl -s localhost:$PORT/metrics > "$DIR/metrics" || true
    kill $SP; wait $SP 2>/dev/null || true
    python3 - "$round" "$BIN" "$tk" "$s1" "$s2" "$w1" "$w2" "$c1" "$c2" "$at" <<PY
import json, sys
rnd, binary, tk, s1, s2 = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
written = int(sys.argv[7]) - int(sys.argv[6])
out = """$OUT"""
r = json.loads(next(l for l in out.splitlines() if l.startswith("{")))
lt = next(l for l in out.splitlines() if l.startswith("LT")).split()
acts = r["actions"]; l = r["latency_ms"]
srv = (s2 - s1) / tk; gen = float(lt[1]) + float(lt[2])
print(f"round {rnd} {binary} (from {sys.argv[10]}): {acts} actions, {r['actions_per_s']:.0f} actions/s, p50 {l['p50']:.2f} p90 {l['p90']:.2f} "
      f"p99 {l['p99']:.2f} max {l['max']:.2f} ms, errors {r['errors']}; CPU per action: server {1e6*srv/acts:.0f} us, "
      f"loadtest {1e6*gen/acts:.0f} us; written to disk per action {written/acts/1024:.1f} KiB")
# The load's own: the metrics after it less those before (the first
# start's block and its checkpoints are not the run's).
sys.path.insert(0, "$(dirname "$0")")
import prom
m = prom.delta("$DIR/metrics0", "$DIR/metrics")
commits = m.get("as_capone_commit_seconds_count", 0)
slow = commits - m.get('as_capone_commit_seconds_bucket{le="0.01"}', 0)
st = r.get("steady")
if st:  # loadtest's steady window: every player registered until the games ran out
    sl = st["latency_ms"]
    print(f"  steady window {st['seconds']:.2f} s: {st['requests_per_s']:.0f} game requests/s, {st['actions_per_s']:.0f} actions/s, "
          f"p50 {sl['p50']:.2f} p90 {sl['p90']:.2f} p99 {sl['p99']:.2f} max {sl['max']:.2f} ms")
# /proc/stat's cpu line: user nice system idle iowait irq softirq steal.
c1 = [int(x) for x in sys.argv[8].split()[1:9]]; c2 = [int(x) for x in sys.argv[9].split()[1:9]]
d = [b - a for a, b in zip(c1, c2)]; total = sum(d) or 1
# The rest of the busy time is the machine's other processes (and the
# kernel's work for no one): RabbitMQ here starts an Erlang VM once a minute,
# which takes a core for a few hundred ms (docs/bench-log/2026-12-02-to-04-game-server.md).
others = (total - d[3] - d[4] - d[7]) - (srv + gen) * tk
print(f"  machine: busy {100 * (total - d[3] - d[4] - d[7]) / total:.0f} % (other processes {100 * max(others, 0) / total:.1f} %), "
      f"idle {100 * (d[3] + d[4]) / total:.0f} %, stolen by the host {100 * d[7] / total:.1f} % of both cores' time")
print(f"  writer: {commits:.0f} commits, {slow:.0f} over 10 ms; waited for checkpoints "
      f"{m.get('as_capone_writer_checkpoint_seconds_count', 0):.0f} times, "
      f"{1e3 * m.get('as_capone_writer_checkpoint_seconds_sum', 0):.0f} ms in all")
# The server's own view: the actions whose handler (request read to answer
# ready, before the kernel and the client) took over 10 ms.
hb = {k.split('le="')[1].split('"')[0]: v for k, v in m.items()
      if k.startswith("as_capone_http_request_duration_seconds_bucket") and "/actions" in k}
if hb:
    over = hb["+Inf"] - hb["0.01"]
    print(f"  server's handler over 10 ms: {over:.0f} of {hb['+Inf']:.0f} actions ({100 * over / max(hb['+Inf'], 1):.2f} %)")
# loadtest --timeline: the 100 ms windows whose p99 passed 10 ms, seconds from the start.
import csv
slow = [w for w in csv.DictReader(open("$DIR/timeline.csv")) if float(w["p99_ms"]) > 10]
print(f"  windows of 100 ms with p99 over 10 ms: {len(slow)}"
      + "".join(f"; {w['start_s']} s: p99 {float(w['p99_ms']):.1f} ms" for w in slow[:8]) + (" ..." if len(slow) > 8 else ""))
PY
  done
done

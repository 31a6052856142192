#!/usr/bin/env bash
# The operator mode's cost, in one run on this machine (the operator mode's bar,
# BENCHMARKS.md "The operator mode": "with a wallet answering in 20 ms, game actions per second are within 10 % of the
# internal mode and a purchase's p99 is at most the wallet's p99 plus 10 ms"):
# ROUNDS pairs of closed-loop rounds, each on a fresh SQLite database,
#   - internal: `as-capone serve` (its own ledger) and `loadtest`;
#   - operator: `as-capone serve --wallet operator` and `loadtest --wallet
#     operator --wallet-delay-ms DELAY_MS`, which starts the reference
#     operator inside the load generator's process (its own runtime), every
#     wallet call delayed DELAY_MS, behind
#     a proxy that times each call (the wallet's own latency);
# the pair's order alternating (internal first, then operator first, ...) so
# that the machine's drift does not favour one. It prints, per pair and as
# the median of the pairs, the ratio of actions per second in the steady
# window (operator / internal), and the purchase's p99 against the wallet's
# debit p99 + 10 ms (both from the operator round), with where a purchase's
# time outside the wallet goes (before its debit left: the reservation;
# after its answer: the settlement).
#
#   bench/operator-wallet.sh                 # cargo build --release, 3 pairs
#   PROFILE=release-tests bench/operator-wallet.sh
#   BIN=target/release/as-capone ROUNDS=5 PLAYERS=128 bench/operator-wallet.sh
#
# Environment: ROUNDS (3), PLAYERS (64), GAMES (4000), DELAY_MS (20), RATE
# (none: closed loop; a number: both modes paced at that many game requests
# a second, `loadtest --rate`), KEYED (empty; 1: every purchase carries an
# Idempotency-Key, as the page's do, in both modes: `loadtest
# --idempotency-keys`), SHADOW (empty; 1: the internal rounds run the
# reference operator too, sent from the load generator the debit and credits
# the operator mode's server would have sent, the players not waiting:
# `loadtest --shadow-wallet`, so that both modes have the operator's side as
# a neighbour; docs/load-testing.md),
# PIN (empty: no pinning; "SERVER_CPUS/DRIVER_CPUS", e.g. "0/1": the server
# runs on SERVER_CPUS and the load generator, with the reference operator in
# it, on DRIVER_CPUS, in both modes, through taskset: the wallet's own CPU is
# then not taken from the server, as when the operator runs elsewhere),
# SERVER_CPU (empty: no cap; a fraction of one core, e.g. 0.5: the server
# runs in a CPU cgroup of that quota, in both modes, so that it, not the
# load generator nor the reference operator beside it, is what bounds the
# run: its throughput for a fixed CPU budget, the wallet's CPU outside it,
# as when the operator runs on its own machine; needs root and the cgroup
# v1 `cpu` controller at /sys/fs/cgroup/cpu or cgroup v2's cpu.max),
# BALLAST (0; N: N low-priority processes zero-filling a 48 MiB buffer
# again and again, on the load generator's CPUs when PIN is set, through
# the whole run: the other core is then always busy with memory traffic in
# both modes, instead of more so in the operator rounds, where the
# reference operator runs beside the load generator; docs/load-testing.md),
# DB_DIR (the run's temporary directory, on disk: where the server's
# SQLite databases go; /dev/shm takes the disk's syncs out of both modes,
# leaving the server's CPU as the bound),
# WALLET_PORT (9391: where the reference operator answers),
# OPERATOR_LEDGER_DIR (/dev/shm; empty: the system's temporary directory,
# on disk), PROFILE
# (release), BIN (a binary already built, used as it is), KEEP (a directory
# where the rounds' JSON reports are copied).
set -euo pipefail
# Load tools buy without choosing a limit on stakes first (an older build ignores this).
export AS_CAPONE_STAKE_LIMIT_REQUIRED=false

cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-3}
PLAYERS=${PLAYERS:-64}
GAMES=${GAMES:-4000}
DELAY_MS=${DELAY_MS:-20}
WALLET_PORT=${WALLET_PORT:-9391}
PROFILE=${PROFILE:-release}
BIN_GIVEN=${BIN:-}
BIN=${BIN:-target/$PROFILE/as-capone}
# The reference operator's SQLite ledger syncs every call: on this machine's
# one disk it capped the wallet at about 280 calls a second (debit p50 177 ms
# for a 20 ms delay) and slowed the server's own commits, so it is kept in
# memory: the wallet answers in its delay, as the requirement supposes.
if [ -z "${OPERATOR_LEDGER_DIR+set}" ] && [ -d /dev/shm ]; then
    OPERATOR_LEDGER_DIR=/dev/shm
fi
SERVER_PIN=() DRIVER_PIN=()
if [ -n "${PIN:-}" ]; then
    command -v taskset >/dev/null || { echo "PIN needs taskset (util-linux)" >&2; exit 1; }
    SERVER_PIN=(taskset -c "${PIN%/*}")
    DRIVER_PIN=(taskset -c "${PIN#*/}")
fi
CGROUP=""
if [ -n "${SERVER_CPU:-}" ]; then
    QUOTA=$(awk -v c="$SERVER_CPU" 'BEGIN { printf "%d", c * 100000 }')
    if [ -w /sys/fs/cgroup/cpu ]; then
        CGROUP=/sys/fs/cgroup/cpu/as-capone-bench-$$
        mkdir "$CGROUP"
        echo 100000 >"$CGROUP/cpu.cfs_period_us"
        echo "$QUOTA" >"$CGROUP/cpu.cfs_quota_us"
    elif [ -w /sys/fs/cgroup/cgroup.subtree_control ] && grep -qw cpu /sys/fs/cgroup/cgroup.controllers; then
        CGROUP=/sys/fs/cgroup/as-capone-bench-$$
        mkdir "$CGROUP"
        echo "$QUOTA 100000" >"$CGROUP/cpu.max"
    else
        echo "SERVER_CPU needs root and a writable CPU cgroup (v1 /sys/fs/cgroup/cpu or v2 cpu.max)" >&2
        exit 1
    fi
    # The server moves itself into the group before it starts.
    SERVER_PIN=(sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$CGROUP" "${SERVER_PIN[@]}")
fi
WORK=$(mktemp -d /tmp/as-capone-opwallet.XXXXXX)
PIDS=()
BALLAST_PIDS=()

say() { echo "== $*" >&2; }

cleanup() {
    local pid
    for pid in "${PIDS[@]}"; do
        kill "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    if [ -n "${KEEP:-}" ]; then
        mkdir -p "$KEEP"
        cp "$WORK"/*.json "$KEEP"/ 2>/dev/null || true
    fi
    for pid in "${BALLAST_PIDS[@]}"; do
        kill "$pid" 2>/dev/null || true
    done
    rm -rf "$WORK"
    if [ -n "$CGROUP" ]; then
        rmdir "$CGROUP" 2>/dev/null || true
    fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

command -v jq >/dev/null || { echo "jq is not installed" >&2; exit 1; }

if [ -z "$BIN_GIVEN" ]; then
    if [ "$PROFILE" = release ]; then
        say "cargo build --release -p as-capone"
        cargo build --release -p as-capone >&2
    else
        say "cargo build --profile $PROFILE -p as-capone"
        cargo build --profile "$PROFILE" -p as-capone >&2
    fi
fi

# The keys both sides share (the server's --operator-keys, the load
# generator's AS_CAPONE_OPERATOR_KEYS), fresh for the run.
KEYS="bench:$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')"
export AS_CAPONE_OPERATOR_KEYS="$KEYS"

# Starts `as-capone serve` on a free port with a fresh SQLite database
# named $1, then the extra flags; its pid in SERVER_PID, its URL in URL.
start_server() {
    local name=$1 log="$WORK/$1.log" i
    shift
    "${SERVER_PIN[@]}" "$BIN" serve --listen 127.0.0.1:0 --db "sqlite://${DB_DIR:-$WORK}/$name-$$.db" --key-file "$WORK/server.key" \
        --start-balance-cents 100000000 --demo-token "" --initial-blocks 1 --registrations-per-address 0 "$@" >"$log" 2>&1 &
    SERVER_PID=$!
    PIDS+=("$SERVER_PID")
    URL=""
    for i in $(seq 1 1200); do
        if ! kill -0 "$SERVER_PID" 2>/dev/null; then
            echo "the server exited; its log:" >&2
            cat "$log" >&2
            exit 1
        fi
        URL=$(grep -o 'listening on http://[0-9.:]*' "$log" | head -1 | sed 's/listening on //') || true
        if [ -n "$URL" ] && [ "$(curl -s -o /dev/null -w '%{http_code}' "$URL/healthz")" = 200 ]; then
            return 0
        fi
        sleep 0.1
    done
    echo "the server did not become healthy in 120 s; its log:" >&2
    cat "$log" >&2
    exit 1
}

stop_server() {
    kill "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
    if [ -n "${DB_DIR:-}" ]; then
        rm -f "$DB_DIR"/*-$$.db "$DB_DIR"/*-$$.db-* "$DB_DIR"/*-$$.db.*
    fi
    PIDS=()
}

# The CPU seconds process $1 used so far (utime + stime, USER_HZ 100).
cpu_of() {
    awk '{sub(/.*\) /, ""); print ($12 + $13) / 100}' "/proc/$1/stat"
}

# The same, apart: "user system" seconds.
cpu_split_of() {
    awk '{sub(/.*\) /, ""); print $12 / 100, $13 / 100}' "/proc/$1/stat"
}

# The context switches of process $1's threads so far (voluntary: a thread
# that waited; involuntary: a thread preempted), summed over its threads.
switches_of() {
    cat /proc/"$1"/task/*/status 2>/dev/null | awk '/ctxt_switches/ { n += $2 } END { print n + 0 }'
}

# Samples process $1's CPU and context switches every 0.5 s into file $2
# ("seconds cpu_seconds switches" lines) until it is stopped; its pid in
# SAMPLER_PID.
start_sampler() {
    local pid=$1 out=$2
    (while kill -0 "$pid" 2>/dev/null; do
        echo "$(date +%s.%N) $(cpu_of "$pid" 2>/dev/null) $(switches_of "$pid")"
        sleep 0.5
    done) >"$out" 2>/dev/null &
    SAMPLER_PID=$!
}

# The server's cores while the load ran: the median of its 0.5 s samples,
# the first two and last two (start-up, registrations, the end) left out.
steady_cores() {
    awk 'NR > 1 && $2 != "" { u[n++] = ($2 - pc) / ($1 - pt) } { pt = $1; pc = $2 }
         END { m = 0; for (i = 2; i < n - 2; i++) v[m++] = u[i]; asort(v); printf "%.3f", (m ? v[int((m + 1) / 2)] : 0) }' "$1"
}

# The server's context switches a second while the load ran, the same way.
steady_switches() {
    awk 'NR > 1 && $3 != "" { u[n++] = ($3 - ps) / ($1 - pt) } { pt = $1; ps = $3 }
         END { m = 0; for (i = 2; i < n - 2; i++) v[m++] = u[i]; asort(v); printf "%.0f", (m ? v[int((m + 1) / 2)] : 0) }' "$1"
}

# The machine's CPU time stolen by the host during round $1 (the `steal`
# column of /proc/stat), as a share of the time its cores were busy or
# stolen. On a shared virtual machine a process's own CPU time (what the
# cgroup cap and "µs an action" count) includes the time its vCPU was
# descheduled by the host, so a round with more steal looks costlier.
steal_share() {
    paste -d' ' "$WORK/$1.stat0" "$WORK/$1.stat1" | awk '{ n = (NF - 2) / 2; busy = 0
        for (i = 2; i <= n + 1; i++) { d[i - 1] = $(i + n + 1) - $i }
        busy = d[1] + d[2] + d[3] + d[6] + d[7] + d[8]
        printf "%.2f", (busy ? d[8] / busy : 0) }'
}

# Runs the load generator ($@ after the round's name $1) against the server
# with its CPU sampled; then the round's total CPU.
load_round() {
    local name=$1
    shift
    start_sampler "$SERVER_PID" "$WORK/$name.samples"
    head -1 /proc/stat >"$WORK/$name.stat0"
    cpu_split_of "$SERVER_PID" >"$WORK/$name.split0"
    "${DRIVER_PIN[@]}" "$BIN" loadtest "$@" >"$WORK/$name.json"
    cpu_split_of "$SERVER_PID" >"$WORK/$name.split1"
    head -1 /proc/stat >"$WORK/$name.stat1"
    kill "$SAMPLER_PID" 2>/dev/null || true
    wait "$SAMPLER_PID" 2>/dev/null || true
    cpu_of "$SERVER_PID" >"$WORK/$name.cpu"
}

internal_round() { # json file
    start_server "internal-$1"
    SHADOW_ARGS=()
    if [ -n "${SHADOW:-}" ]; then
        SHADOW_ARGS=(--shadow-wallet --wallet-delay-ms "$DELAY_MS" --operator-listen "127.0.0.1:$WALLET_PORT"
            ${OPERATOR_LEDGER_DIR:+--operator-ledger-dir "$OPERATOR_LEDGER_DIR"})
    fi
    load_round "$1" --url "$URL" --players "$PLAYERS" --games "$GAMES" ${RATE:+--rate "$RATE"} ${KEYED:+--idempotency-keys} --json \
        "${SHADOW_ARGS[@]}"
    stop_server
}

operator_round() { # json file
    start_server "operator-$1" --wallet operator --operator-wallet-url "http://127.0.0.1:$WALLET_PORT" \
        --operator-keys "$KEYS"
    load_round "$1" --url "$URL" --players "$PLAYERS" --games "$GAMES" ${RATE:+--rate "$RATE"} ${KEYED:+--idempotency-keys} --json \
        --wallet operator --wallet-delay-ms "$DELAY_MS" --operator-listen "127.0.0.1:$WALLET_PORT" \
        ${OPERATOR_LEDGER_DIR:+--operator-ledger-dir "$OPERATOR_LEDGER_DIR"}
    stop_server
}

for _ in $(seq 1 "${BALLAST:-0}"); do
    # Zero-fills a 48 MiB buffer again and again: more than the last-level
    # cache, at the lowest priority, on the load generator's CPUs.
    "${DRIVER_PIN[@]}" nice -n 19 dd if=/dev/zero of=/dev/null bs=48M status=none &
    BALLAST_PIDS+=($!)
done

for r in $(seq 1 "$ROUNDS"); do
    if [ $((r % 2)) = 1 ]; then
        say "pair $r: internal, then operator ($PLAYERS players, $GAMES games each)"
        internal_round "i$r"
        operator_round "o$r"
    else
        say "pair $r: operator, then internal"
        operator_round "o$r"
        internal_round "i$r"
    fi
    jq -c '{wallet_mode, steady: .steady.actions_per_s, purchase: .purchase_latency_ms, errors, shadow_wallet}' "$WORK/i$r.json" "$WORK/o$r.json" >&2
done

LOOP="closed loop"
[ -n "${RATE:-}" ] && LOOP="paced at $RATE requests/s"
[ -n "${SHADOW:-}" ] && LOOP="$LOOP, internal rounds with the shadow wallet"
echo
echo "as-capone operator wallet benchmark, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, $BIN, SQLite, $LOOP, $PLAYERS players, $GAMES games a round, wallet delay $DELAY_MS ms"
printf '%-5s %12s %12s %7s %13s %13s %13s %8s %14s %14s\n' pair "internal a/s" "operator a/s" ratio \
    "purchase p99" "debit p99" "bound (+10)" met "before p99" "after p99"
CPU_LINES=()
STEADY_LINES=()
SPLIT_LINES=()
# load_split NAME ACTIONS: the server's user and system µs an action during
# the round's loadtest (the server's start and first emission left out).
load_split() {
    read -r u0 s0 <"$WORK/$1.split0"
    read -r u1 s1 <"$WORK/$1.split1"
    echo "$(jq -n "($u1 - $u0) * 1e6 / $2 | round") + $(jq -n "($s1 - $s0) * 1e6 / $2 | round")"
}
RATIOS=()
MET=0
for r in $(seq 1 "$ROUNDS"); do
    i="$WORK/i$r.json" o="$WORK/o$r.json"
    ia=$(jq '.steady.actions_per_s' "$i")
    oa=$(jq '.steady.actions_per_s' "$o")
    ia_all=$(jq .actions "$i") oa_all=$(jq .actions "$o")
    ratio=$(jq -n "$oa / $ia * 1000 | round / 1000")
    RATIOS+=("$ratio")
    pp=$(jq '.purchase_latency_ms.p99' "$o")
    dp=$(jq '.wallet.calls.debit.latency_ms.p99' "$o")
    bound=$(jq '.wallet.purchase_p99_bound_ms' "$o")
    met=$(jq -r '.wallet.purchase_p99_within_bound' "$o")
    [ "$met" = true ] && MET=$((MET + 1))
    printf '%-5s %12.0f %12.0f %7s %13.2f %13.2f %13.2f %8s %14.2f %14.2f\n' "$r" "$ia" "$oa" "$ratio" "$pp" "$dp" "$bound" "$met" \
        "$(jq '.wallet.purchase_split_ms.before_debit.p99' "$o")" "$(jq '.wallet.purchase_split_ms.after_debit.p99' "$o")"
    # The server's CPU per action (all its work: purchases, prizes, the
    # outbox, divided by the actions), and the operator side's in all.
    ic=$(steady_cores "$WORK/i$r.samples") oc=$(steady_cores "$WORK/o$r.samples")
    STEADY_LINES+=("pair $r: the server's cores while loaded (median of 0.5 s samples): internal $ic ($(jq -n "$ic * 1e6 / $ia | round") µs an action), operator $oc ($(jq -n "$oc * 1e6 / $oa | round") µs an action), ratio $(jq -n "$oc / $oa / ($ic / $ia) * 1000 | round / 1000"); the host's steal, a share of the busy time: internal $(steal_share "i$r"), operator $(steal_share "o$r"); context switches an action: internal $(jq -n "$(steady_switches "$WORK/i$r.samples") / $ia * 100 | round / 100"), operator $(jq -n "$(steady_switches "$WORK/o$r.samples") / $oa * 100 | round / 100")")
    SPLIT_LINES+=("pair $r: the server's CPU during the load, µs an action, user + system: internal $(load_split "i$r" "$ia_all"), operator $(load_split "o$r" "$oa_all")")
    CPU_LINES+=("pair $r: server CPU per action µs: internal $(jq -n "$(cat "$WORK/i$r.cpu") * 1e6 / $(jq .actions "$i") | round"), operator $(jq -n "$(cat "$WORK/o$r.cpu") * 1e6 / $(jq .actions "$o") | round"); the operator side's CPU $(jq '.wallet.operator_cpu_s' "$o") s for $(jq .purchases "$o") purchases, the server's $(cat "$WORK/o$r.cpu") s, the whole round $(jq '.seconds | . * 100 | round / 100' "$o") s")
done
printf '%s\n' "${CPU_LINES[@]}"
printf '%s\n' "${SPLIT_LINES[@]}"
printf '%s\n' "${STEADY_LINES[@]}"
MEDIAN=$(printf '%s\n' "${RATIOS[@]}" | sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}')
echo "actions/s operator / internal: median $MEDIAN over $ROUNDS pairs (the requirement: at least 0.9)"
echo "purchase p99 <= debit p99 + 10 ms: $MET of $ROUNDS operator rounds"
echo "internal purchase p99 ms: $(jq -s -c '[.[].purchase_latency_ms.p99]' "$WORK"/i*.json); action p99 ms internal $(jq -s -c '[.[].steady.latency_ms.p99]' "$WORK"/i*.json), operator $(jq -s -c '[.[].steady.latency_ms.p99]' "$WORK"/o*.json)"

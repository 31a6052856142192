#!/usr/bin/env bash
# The operator mode's cost to the server, counted instead of timed: the
# user-space instructions the server executes per game action, in the
# internal mode and in the operator mode (wallet delayed DELAY_MS), under
# valgrind's callgrind. On this shared machine a timed comparison
# (bench/operator-wallet.sh) moves by 20 to 40 % from one minute to the next
# with the host and with what runs on the other core; an instruction count
# does not. It leaves out what the kernel does (the sockets' work) and the
# caches' misses; it is the noise-free half of the comparison.
#
# Each round: a fresh SQLite database in /dev/shm, created by the server
# started once natively (its block emitted at native speed), then the server
# again under callgrind with instrumentation off; a warm-up load; then
# instrumentation on for `loadtest --players PLAYERS --games GAMES`, dumped
# at its end. ROUNDS pairs, the order alternating.
#
# valgrind hides SHA-NI from the program, so SHA-256 (token hashes, the
# audit chain, the server seeds, the wallet's signatures) runs in software
# and costs about ten times its native share: the script also prints the
# count without `sha2::sha256::compress256` (inclusive).
#
# Under callgrind the server runs some fifty times slower, so what it does
# by the clock rather than by the request (the operator worker's look at
# the outbox five times a second, the WAL checkpoints ten times a second,
# the gauges) is counted some fifty times its native share of a loaded
# second, more so in the slower operator rounds. So after the load the
# server is left idle, instrumented, for as long as the load took, and the
# script also prints the count without SHA-256 and without that idle
# count: the work the load itself made.
#
#   bench/operator-instructions.sh                  # BIN=target/release/as-capone
#   BIN=target/release-tests/as-capone ROUNDS=3 GAMES=600 bench/operator-instructions.sh
#
# Environment: BIN, ROUNDS (2), PLAYERS (32), GAMES (400), DELAY_MS (20),
# KEYED (empty; 1: every purchase carries an Idempotency-Key, as the
# page's do: `loadtest --idempotency-keys`, both modes),
# WALLET_PORT (9392), KEEP (a folder: each round's callgrind file is copied
# there, as NAME.cg, for callgrind_annotate). Needs valgrind (callgrind, callgrind_control,
# callgrind_annotate) and jq.
set -euo pipefail
cd "$(dirname "$0")/.."
export AS_CAPONE_STAKE_LIMIT_REQUIRED=false
BIN=${BIN:-target/release/as-capone}
ROUNDS=${ROUNDS:-2}
PLAYERS=${PLAYERS:-32}
GAMES=${GAMES:-400}
DELAY_MS=${DELAY_MS:-20}
WALLET_PORT=${WALLET_PORT:-9392}
for tool in valgrind callgrind_control callgrind_annotate jq; do
    command -v "$tool" >/dev/null || { echo "$tool is not installed (apt install valgrind jq)" >&2; exit 1; }
done
[ -x "$BIN" ] || { echo "no binary at $BIN: cargo build --release -p as-capone" >&2; exit 1; }

WORK=$(mktemp -d /tmp/as-capone-instr.XXXXXX)
SERVER_PID=""
cleanup() {
    [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null
    rm -rf "$WORK" /dev/shm/as-capone-instr-$$-*
}
trap cleanup EXIT
trap 'exit 130' INT TERM

KEYS="bench:$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')"
export AS_CAPONE_OPERATOR_KEYS="$KEYS"

# Waits until the log $1 names the server's address; prints its URL.
url_of() {
    local i url
    for i in $(seq 1 1200); do
        url=$(grep -o 'listening on http://[0-9.:]*' "$1" | head -1 | sed 's/listening on //') || true
        if [ -n "$url" ]; then
            echo "$url"
            return 0
        fi
        sleep 0.25
    done
    echo "the server did not start; its log:" >&2
    cat "$1" >&2
    exit 1
}

# round NAME MODE: prints "instructions actions purchases sha256_instructions
# idle_instructions".
round() {
    local name=$1 mode=$2 db="/dev/shm/as-capone-instr-$$-$1.db" serve load url out idle
    serve=(serve --listen 127.0.0.1:0 --db "sqlite://$db" --key-file "$WORK/server.key" --start-balance-cents 100000000
        --demo-token "" --initial-blocks 1 --registrations-per-address 0)
    load=(${KEYED:+--idempotency-keys})
    if [ "$mode" = operator ]; then
        serve+=(--wallet operator --operator-wallet-url "http://127.0.0.1:$WALLET_PORT" --operator-keys "$KEYS")
        load+=(--wallet operator --wallet-delay-ms "$DELAY_MS" --operator-listen "127.0.0.1:$WALLET_PORT"
            --operator-ledger-dir /dev/shm)
    fi
    "$BIN" "${serve[@]}" >"$WORK/$name.native.log" 2>&1 &
    SERVER_PID=$!
    url_of "$WORK/$name.native.log" >/dev/null
    kill "$SERVER_PID"
    wait "$SERVER_PID" 2>/dev/null || true
    valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$WORK/$name.cg.%p" \
        "$BIN" "${serve[@]}" >"$WORK/$name.log" 2>&1 &
    SERVER_PID=$!
    url=$(url_of "$WORK/$name.log")
    "$BIN" loadtest --url "$url" --players "$PLAYERS" --games 64 "${load[@]}" --json >/dev/null
    callgrind_control -i on "$SERVER_PID" >/dev/null 2>&1
    local started ended
    started=$(date +%s.%N)
    "$BIN" loadtest --url "$url" --players "$PLAYERS" --games "$GAMES" "${load[@]}" --json >"$WORK/$name.json"
    ended=$(date +%s.%N)
    # The dump (NAME.cg.PID.1) holds the load alone. Then the server idle for
    # as long as the load took (NAME.cg.PID.2): what it does by the clock
    # (the worker's look at the outbox five times a second, the checkpoints
    # ten times a second, the gauges), the same with or without players.
    callgrind_control -d "$SERVER_PID" >/dev/null 2>&1
    sleep "$(jq -n "$ended - $started")"
    callgrind_control -d "$SERVER_PID" >/dev/null 2>&1
    kill "$SERVER_PID"
    wait "$SERVER_PID" 2>/dev/null || true
    SERVER_PID=""
    out=$(ls "$WORK/$name".cg.*.1)
    idle=$(ls "$WORK/$name".cg.*.2)
    [ "$(jq .errors "$WORK/$name.json")" = 0 ] || { echo "round $name: the load had errors" >&2; exit 1; }
    local sha
    sha=$(callgrind_annotate --inclusive=yes --threshold=100 "$out" | awk '/sha2::sha256::compress256 / { gsub(",", "", $1); print $1; exit }')
    echo "$(awk '/^totals:/ { print $2; exit }' "$out") $(jq .actions "$WORK/$name.json") $(jq .purchases "$WORK/$name.json") \
${sha:-0} $(awk '/^totals:/ { print $2; exit }' "$idle")"
    [ -n "${KEEP:-}" ] && mkdir -p "$KEEP" && cp "$out" "$KEEP/$name.cg"
    rm -f "$WORK/$name".cg.* "$db" "$db"-*
}

echo "as-capone operator mode, instructions per action, $(date -u +%Y-%m-%dT%H:%MZ), $BIN, SQLite in /dev/shm, $PLAYERS players, $GAMES games a round, wallet delay $DELAY_MS ms"
printf '%-5s %18s %18s %7s %18s %18s %7s %18s %18s %7s\n' pair "internal Ir/action" "operator Ir/action" ratio \
    "internal w/o sha" "operator w/o sha" ratio "internal w/o idle" "operator w/o idle" ratio
RATIOS=() LOADED=()
for r in $(seq 1 "$ROUNDS"); do
    if [ $((r % 2)) = 1 ]; then
        i=$(round "i$r" internal) o=$(round "o$r" operator)
    else
        o=$(round "o$r" operator) i=$(round "i$r" internal)
    fi
    read -r ii ia _ is id <<<"$i"
    read -r oi oa _ os od <<<"$o"
    ipa=$((ii / ia)) opa=$((oi / oa)) ipx=$(((ii - is) / ia)) opx=$(((oi - os) / oa))
    ipl=$(((ii - is - id) / ia)) opl=$(((oi - os - od) / oa))
    ratio=$(jq -n "$opa / $ipa * 1000 | round / 1000") ratiox=$(jq -n "$opx / $ipx * 1000 | round / 1000")
    ratiol=$(jq -n "$opl / $ipl * 1000 | round / 1000")
    RATIOS+=("$ratiox") LOADED+=("$ratiol")
    printf '%-5s %18s %18s %7s %18s %18s %7s %18s %18s %7s\n' "$r" "$ipa" "$opa" "$ratio" "$ipx" "$opx" "$ratiox" \
        "$ipl" "$opl" "$ratiol"
done
echo "operator / internal instructions per action without SHA-256: $(printf '%s\n' "${RATIOS[@]}" | sort -g | tr '\n' ' ')"
echo "the same without the idle server's work over the load's time: $(printf '%s\n' "${LOADED[@]}" | sort -g | tr '\n' ' ')"

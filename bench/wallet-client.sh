#!/usr/bin/env bash
# The CPU a call to the operator's wallet costs the game server's side, through
# its transport (crates/server/src/operator/transport.rs: each call driven in
# the caller's task) and through reqwest (a connection task per connection,
# which the transport replaced): `examples/wallet_calls.rs` against the
# reference operator (`as-capone-operator`, its ledger in /dev/shm), ROUNDS
# alternating pairs at each IN_FLIGHT. Prints each run's CPU per call and the
# median per client (BENCHMARKS.md, "The operator mode").
#
#   bench/wallet-client.sh
#   PROFILE=release-tests ROUNDS=5 CALLS=40000 bench/wallet-client.sh
#
# Environment: ROUNDS (3), CALLS (20000), IN_FLIGHT ("8 1": one series per
# value), PORT (9394), PROFILE (release).
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-3}
CALLS=${CALLS:-20000}
IN_FLIGHT=${IN_FLIGHT:-8 1}
PORT=${PORT:-9394}
PROFILE=${PROFILE:-release}
PROFILE_FLAG=(--profile "$PROFILE")
[ "$PROFILE" = release ] && PROFILE_FLAG=(--release)
cargo build "${PROFILE_FLAG[@]}" -p as-capone-operator --bin as-capone-operator >&2
cargo build "${PROFILE_FLAG[@]}" -p as-capone-server --example wallet_calls >&2
WORK=$(mktemp -d /dev/shm/as-capone-wallet-client.XXXXXX)
OPERATOR_PID=""
cleanup() {
    [ -n "$OPERATOR_PID" ] && kill "$OPERATOR_PID" 2>/dev/null
    rm -rf "$WORK"
}
trap cleanup EXIT
KEYS="bench:$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')"
"target/$PROFILE/as-capone-operator" --listen "127.0.0.1:$PORT" --database "$WORK/operator.db" --keys "$KEYS" \
    >"$WORK/operator.log" 2>&1 &
OPERATOR_PID=$!
for _ in $(seq 1 100); do
    curl -s -o /dev/null "http://127.0.0.1:$PORT/" && break
    sleep 0.1
done
# An unsigned balance request: the operator refuses it (401, a signed JSON
# error of about 100 bytes) after parsing it, as it would check a real one.
URL="http://127.0.0.1:$PORT/wallet/balance"
echo "as-capone wallet client benchmark, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, $CALLS calls a run"
for n in $IN_FLIGHT; do
    for r in $(seq 1 "$ROUNDS"); do
        for client in reqwest transport; do
            "target/$PROFILE/examples/wallet_calls" "$client" "$URL" "$CALLS" "$n" | tee -a "$WORK/runs"
        done
    done
    for client in reqwest transport; do
        grep "^$client: .*($n in flight)" "$WORK/runs" | awk -v c="$client" -v n="$n" '{ v[NR] = $2 }
            END { asort(v); printf "median %s, %d in flight: %.1f µs of CPU a call over %d runs\n", c, n, v[int((NR + 1) / 2)], NR }'
    done
done

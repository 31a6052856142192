#!/usr/bin/env bash
# What a purchase costs the server outside its own instructions, counted
# instead of timed: the system calls it makes and the database pages it
# writes, per purchase, in the internal mode and in the operator mode
# (wallet delayed DELAY_MS). bench/operator-instructions.sh counts the
# user-space instructions; this counts what they ask of the kernel, the
# half that callgrind leaves out, with the same freedom from this shared
# machine's noise (a count does not move with the neighbours; only the
# batching does, see below).
#
# Each mode: a fresh SQLite database in /dev/shm, a warm-up load, then
# `strace -f` on the server for `loadtest --players PLAYERS --games GAMES`.
# Printed per purchase:
#   - every system call, by name (the load's actions included: one
#     purchase and its game's eleven to fourteen actions);
#   - the WAL frames written (each a 24-byte header and a page, two
#     pwrite64 calls), by the table or index the page belongs to (SQLite's
#     `dbstat` on the database at the end), and the pages the checkpoints
#     copied back into the database file.
# Under strace the server runs some ten times slower, so its group commit
# gathers more requests a commit than at full speed (the script prints the
# requests a commit): a page shared by a commit's requests is written once
# a commit, so the per-purchase pages here are a lower bound, more so for
# the pages every commit of a kind writes (an index's last leaf). How many
# requests share a commit moves from run to run, so the operator's own
# tables and indexes (`wallet_*`) are also counted per commit: how many of
# them a commit that wrote any wrote (a commit's frames end with the one
# whose header carries the database's size).
#
#   BIN=target/release-tests/as-capone bench/operator-pages.sh
#
# Environment: BIN (target/release/as-capone), PLAYERS (64), GAMES (1000),
# DELAY_MS (20), WALLET_PORT (9393), KEYED (empty; 1: every purchase
# carries an Idempotency-Key, as the page's do, in both modes). Needs strace, python3 with its sqlite3
# module (SQLite's dbstat), jq and curl.
set -euo pipefail
cd "$(dirname "$0")/.."
export AS_CAPONE_STAKE_LIMIT_REQUIRED=false
BIN=${BIN:-target/release/as-capone}
PLAYERS=${PLAYERS:-64}
GAMES=${GAMES:-1000}
DELAY_MS=${DELAY_MS:-20}
WALLET_PORT=${WALLET_PORT:-9393}
for tool in strace python3 jq curl; do
    command -v "$tool" >/dev/null || { echo "$tool is not installed" >&2; exit 1; }
done
[ -x "$BIN" ] || { echo "no binary at $BIN: cargo build --release -p as-capone" >&2; exit 1; }

WORK=$(mktemp -d /tmp/as-capone-pages.XXXXXX)
SERVER_PID=""
cleanup() {
    [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null
    rm -rf "$WORK" /dev/shm/as-capone-pages-$$-*
}
trap cleanup EXIT
trap 'exit 130' INT TERM

KEYS="bench:$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')"
export AS_CAPONE_OPERATOR_KEYS="$KEYS"

# The sum and count of the group commit's histogram, from /metrics.
batches() {
    curl -s "$1/metrics" | awk '/^as_capone_commit_batch_size_(sum|count)/ { printf "%s ", $2 }'
}

# round MODE: the trace of the load in $WORK/MODE.trace, the database at
# its end in $WORK/MODE.db, the load's report in $WORK/MODE.json.
round() {
    local mode=$1 db="/dev/shm/as-capone-pages-$$-$1.db" url i strace_pid
    local serve=(serve --listen 127.0.0.1:0 --db "sqlite://$db" --key-file "$WORK/server.key"
        --start-balance-cents 100000000 --demo-token "" --initial-blocks 1 --registrations-per-address 0)
    local load=(${KEYED:+--idempotency-keys})
    if [ "$mode" = operator ]; then
        serve+=(--wallet operator --operator-wallet-url "http://127.0.0.1:$WALLET_PORT" --operator-keys "$KEYS")
        load+=(--wallet operator --wallet-delay-ms "$DELAY_MS" --operator-listen "127.0.0.1:$WALLET_PORT"
            --operator-ledger-dir /dev/shm)
    fi
    "$BIN" "${serve[@]}" >"$WORK/$mode.log" 2>&1 &
    SERVER_PID=$!
    url=""
    for i in $(seq 1 1200); do
        url=$(grep -o 'listening on http://[0-9.:]*' "$WORK/$mode.log" | head -1 | sed 's/listening on //') || true
        [ -n "$url" ] && [ "$(curl -s -o /dev/null -w '%{http_code}' "$url/healthz")" = 200 ] && break
        sleep 0.1
    done
    [ -n "$url" ] || { echo "the server did not start; its log:" >&2; cat "$WORK/$mode.log" >&2; exit 1; }
    "$BIN" loadtest --url "$url" --players "$PLAYERS" --games 64 "${load[@]}" --json >/dev/null
    local before after
    before=$(batches "$url")
    strace -f -qq -s 8 -x -p "$SERVER_PID" -o "$WORK/$mode.trace" &
    strace_pid=$!
    sleep 1
    "$BIN" loadtest --url "$url" --players "$PLAYERS" --games "$GAMES" "${load[@]}" --json >"$WORK/$mode.json"
    kill -INT "$strace_pid"
    wait "$strace_pid" 2>/dev/null || true
    after=$(batches "$url")
    echo "$before $after" >"$WORK/$mode.batches"
    [ "$(jq .errors "$WORK/$mode.json")" = 0 ] || { echo "the $mode load had errors" >&2; exit 1; }
    # A copy of the database as the load left it (the WAL's pages included).
    python3 -c 'import sqlite3, sys; src = sqlite3.connect(sys.argv[1]); dst = sqlite3.connect(sys.argv[2]); src.backup(dst)' \
        "$db" "$WORK/$mode.db"
    kill "$SERVER_PID"
    wait "$SERVER_PID" 2>/dev/null || true
    SERVER_PID=""
    rm -f "$db" "$db"-*
}

round internal
round operator

echo "as-capone, what a purchase asks of the kernel, $(date -u +%Y-%m-%dT%H:%MZ), $BIN, SQLite in /dev/shm, $PLAYERS players, $GAMES games a mode, wallet delay $DELAY_MS ms, under strace"
python3 - "$WORK" <<'EOF'
import collections, json, re, sqlite3, sys
work = sys.argv[1]
call = re.compile(r'^\d+ +([a-z_0-9]+)\((.*)')
pwrite = re.compile(r'^(\d+), "((?:\\x[0-9a-f]{2})+)"\.*, (\d+), (\d+)')
out = {}
for mode in ("internal", "operator"):
    report = json.load(open(f"{work}/{mode}.json"))
    purchases = report["purchases"]
    owner = {page: name for name, page in sqlite3.connect(f"{work}/{mode}.db").execute("SELECT name, pageno FROM dbstat")}
    calls, frames, checkpointed = collections.Counter(), collections.Counter(), collections.Counter()
    lines = open(f"{work}/{mode}.trace").read().splitlines()
    writes = []
    for line in lines:
        m = call.match(line)
        if not m:
            continue
        calls[m[1]] += 1
        if m[1] == "pwrite64" and (w := pwrite.match(m[2])):
            writes.append((int(w[1]), bytes(int(x, 16) for x in w[2].split("\\x")[1:]), int(w[3]), int(w[4])))
    # The WAL's descriptor: the one its 32-byte header is written to.
    wal = {fd for fd, _, size, offset in writes if size == 32 and offset == 0}
    # A commit's frames: those up to its last, whose header carries the
    # database's size (zero in the others). Per commit, the operator's own
    # b-trees it wrote (`wallet_*`).
    in_commit, own_per_commit = set(), []
    for fd, head, size, offset in writes:
        if fd in wal and size == 24:
            name = owner.get(int.from_bytes(head[:4], "big"), "(a page freed since)")
            frames[name] += 1
            in_commit.add(name)
            if int.from_bytes(head[4:8], "big") != 0:
                own_per_commit.append(len({n for n in in_commit if "wallet_" in n}))
                in_commit = set()
        elif fd not in wal and size > 24:
            checkpointed[owner.get(offset // size + 1, "(a page freed since)")] += 1
    s0, c0, s1, c1 = (float(x) for x in open(f"{work}/{mode}.batches").read().split())
    out[mode] = dict(purchases=purchases, actions=report["actions"], calls=calls, frames=frames,
                     checkpointed=checkpointed, batch=(s1 - s0) / max(c1 - c0, 1), commits=(c1 - c0) / purchases,
                     own=[n for n in own_per_commit if n])
i, o = out["internal"], out["operator"]
print(f"purchases: internal {i['purchases']} ({i['actions']} actions), operator {o['purchases']} ({o['actions']} actions)")
print(f"requests a commit: internal {i['batch']:.1f}, operator {o['batch']:.1f}; commits a purchase: internal {i['commits']:.2f}, operator {o['commits']:.2f}")
def table(title, key, top=None):
    names = set(i[key]) | set(o[key])
    rows = sorted(names, key=lambda n: -(o[key][n] / o["purchases"] - i[key][n] / i["purchases"]))
    ti, to = sum(i[key].values()) / i["purchases"], sum(o[key].values()) / o["purchases"]
    print(f"\n{title} a purchase: internal {ti:.2f}, operator {to:.2f} ({to - ti:+.2f})")
    print(f"  {'internal':>9} {'operator':>9} {'extra':>7}")
    for n in rows[:top]:
        a, b = i[key][n] / i["purchases"], o[key][n] / o["purchases"]
        if abs(b - a) >= 0.005 or a >= 0.005:
            print(f"  {a:9.2f} {b:9.2f} {b - a:+7.2f}  {n}")
table("system calls", "calls", 16)
table("WAL frames", "frames")
table("pages checkpointed", "checkpointed", 12)
# The operator's own tables and indexes, per commit as well: how many
# requests shared a commit moves from run to run (and between the modes),
# and each of these b-trees costs about a frame in a commit that touches
# it, whatever the number of rounds in it.
own = {n: v for n, v in o["frames"].items() if "wallet_" in n}
touching = o["own"]
print(f"\nthe operator's own b-trees ({len(own)}): {sum(own.values()) / o['purchases']:.2f} WAL frames a purchase; "
      f"{len(touching)} commits wrote some, {sum(touching) / max(len(touching), 1):.2f} of these b-trees each on average "
      f"(at most {max(touching, default=0)})")
for n, v in sorted(own.items(), key=lambda kv: -kv[1]):
    print(f"  {v / o['purchases']:6.2f} a purchase  {n}")
EOF

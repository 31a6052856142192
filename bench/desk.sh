#!/usr/bin/env bash
# The operator's desk (/desk, web/desk.js) on a database of 20 emissions of
# 20 blocks of 15 000 tickets (6 000 000 tickets): how long each of its
# requests takes, and why (the desk's bar: "each screen answers within 200 ms").
# A benchmark, not a test: it prints figures and PASS/FAIL against the bound,
# and exits 0 whatever they are.
#
# 1. The database (SQLite), built once and kept (DESK_DB, with its key file
#    DESK_DB.key and a marker DESK_DB.done; a re-run with the same DESK_DB
#    skips this step):
#    - `as-capone serve` with a prize table of blocks of 15 000 tickets
#      (allow_non_regulation_table), an operator token and five shops'
#      retailer tokens. Its first start emits emission 1's first block; the
#      rest goes through the desk's API, each request timed: 19 more blocks
#      of emission 1 (POST /api/admin/emissions/1/blocks), then emissions 2
#      to 20 of 20 blocks each (POST /api/admin/emissions). Odd emissions are
#      sold online, even ones on paper. Emissions 1 and 2 are closed
#      (POST /api/admin/emissions/{id}/close).
#    - The server stopped, sqlite3 writes a state of play without playing
#      6 million games over HTTP. SYNTHETIC: the queries' cost is measured,
#      not the game. Emission e has sold (21 - e) / 20 of its tickets, in sale
#      order (block by block), over (21 - e) x 3 days ending an hour ago
#      (its creation and publication dated back to match). Online: each sold
#      ticket owned by one of 20 000 players, its sale movement, and a game;
#      paper: sold by one of the shops (its retail_sale movement), 90 % of
#      them opened (a game). The last 0.2 % sold of each emission are in
#      play, the others finished with a number of tricks drawn by a hash of
#      the ticket's id from the game's exact final odds (`as-capone odds
#      --json`: 5 tricks 31 %, 6 4 %, 7 0.08 %, 8 1 in 8 million; the rest
#      lose), and the prize of the ticket's own prize column for it.
#      Online prizes are credited (their prize movement); paper prizes are
#      paid by the shop that sold the ticket for 70 % of the winners (status
#      paid, paid_ms, paid_shop, the prize movement to the shop's account).
#      Every movement is two ledger entries summing to zero; each player's
#      balance is its entries' sum (a start_balance movement covering its
#      purchases plus 10 000). 1 % of the players have limits, 0.2 % are
#      self-excluded. Not written: the games' actions, the audit entries of
#      sales and games, the shops' stored answers: no desk request reads them.
#      No ANALYZE is run (the server never runs one: a deployed database has
#      no sqlite_stat1 unless its operator made one).
# 2. The server restarted on it: a cold page refresh (the first after the
#    start), then restarted again: each request of bench/lib/desk-paths.txt
#    timed cold (its first after the start) and WARM times more, min, median,
#    p90 and max per request and PASS/FAIL against BOUND_MS; then REFRESHES
#    page refreshes as desk.js makes them: its `page` requests at once, then its
#    `each` requests for every emission and its `open` requests for the
#    newest emission (whose charts box is open at first) at once, at most 6
#    at a time (a browser's connections to one host over HTTP/1.1).
# 3. Each desk query's EXPLAIN QUERY PLAN and its time in sqlite3
#    (bench/lib/desk-queries.sql, copied from the server's code).
#
#   bench/desk.sh
#   WARM=20 DESK_DB=/var/tmp/desk.db BIN=target/release/as-capone nice -n -15 bench/desk.sh
#   PATHS_FILE=my-paths.txt bench/desk.sh     # other requests to time (desk-paths.txt's format)
#   SKIP_EXPLAIN=1 bench/desk.sh
#
# Environment: BIN (default target/release-tests/as-capone, used as it is:
# no build), DESK_DB (default /var/tmp/as-capone-desk-bench/desk-EMISSIONSxBLOCKSxBLOCK_SIZE.db),
# EMISSIONS (20), BLOCKS (20), BLOCK_SIZE (15000), PLAYERS (20000), WARM (20:
# warm requests of each path, fewer once WARM_BUDGET_S, 60, is spent, at
# least 2), REFRESHES (3 warm page refreshes, fewer past REFRESH_BUDGET_S, 300),
# BOUND_MS (200), PORT (18131), REQUEST_TIMEOUT_MS (120000: a request slower
# than the server's default 10 s is measured, not cut), PATHS_FILE
# (bench/lib/desk-paths.txt), EACH_IDS (the emissions whose `each` requests
# are timed one by one: "1 EMISSIONS", the most and the least sold),
# OPEN_IDS (the emissions whose charts box is open in the page refreshes:
# the newest, as the page opens it; "1" for the most sold one).
# Only SQLite: DB=postgres://... is refused (the state of play is sqlite3 SQL).
set -euo pipefail
# Load tools buy without choosing a limit on stakes first (an older build ignores this).
export AS_CAPONE_STAKE_LIMIT_REQUIRED=false
HERE=$(cd "$(dirname "$0")" && pwd)
if [[ "${DB:-sqlite}" == postgres* ]]; then
    echo "bench/desk.sh builds its state of play with sqlite3: PostgreSQL is not supported yet" >&2
    exit 2
fi
BIN=${BIN:-target/release-tests/as-capone}
EMISSIONS=${EMISSIONS:-20}; BLOCKS=${BLOCKS:-20}; BLOCK_SIZE=${BLOCK_SIZE:-15000}; PLAYERS=${PLAYERS:-20000}
WARM=${WARM:-20}; WARM_BUDGET_S=${WARM_BUDGET_S:-60}; REFRESHES=${REFRESHES:-3}; REFRESH_BUDGET_S=${REFRESH_BUDGET_S:-300}; BOUND_MS=${BOUND_MS:-200}; PORT=${PORT:-18131}; REQUEST_TIMEOUT_MS=${REQUEST_TIMEOUT_MS:-120000}
PATHS_FILE=${PATHS_FILE:-$HERE/lib/desk-paths.txt}
EACH_IDS=${EACH_IDS:-"1 $EMISSIONS"}
DESK_DB=${DESK_DB:-/var/tmp/as-capone-desk-bench/desk-${EMISSIONS}x${BLOCKS}x${BLOCK_SIZE}.db}
TOKEN=desk-bench-operator-token-0001
SHOPS=("Tabac du Port" "Bar des Sports" "Maison de la Presse" "Tabac de la Gare" "Le Balto")
URL=http://127.0.0.1:$PORT

[ -x "$BIN" ] || { echo "no server binary $BIN (cargo build --profile release-tests -p as-capone, or BIN=...)" >&2; exit 1; }
for c in sqlite3 curl jq python3; do
    command -v $c >/dev/null || { echo "$c is not installed" >&2; exit 1; }
done
[ -r "$PATHS_FILE" ] || { echo "no paths file $PATHS_FILE" >&2; exit 1; }
(( EMISSIONS >= 2 && EMISSIONS <= 20 && BLOCKS >= 1 && BLOCKS <= 20 )) \
    || { echo "EMISSIONS is 2 to 20 and BLOCKS 1 to 20 (one call of the desk's API per emission, its shares in 3-day steps)" >&2; exit 1; }
WORK=$(mktemp -d /tmp/desk-bench.XXXXXX)
SP=""
cleanup() {
    if [ -n "$SP" ]; then kill "$SP" 2>/dev/null || true; wait "$SP" 2>/dev/null || true; fi
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
say() { echo "== $*" >&2; }
ms() { date +%s%3N; }

echo "bench/desk.sh at $(date -u +%FT%TZ) on $(hostname): $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)," \
     "nice $(nice), binary $BIN ($(stat -c %y "$BIN" | cut -d. -f1)), database $DESK_DB"

# The prize table: blocks of BLOCK_SIZE, in the shape of the test fixture's
# (crates/testkit/src/fixture.rs, BLOCKS_OF_2000): 3/4 of the tickets in the first row.
cat > "$WORK/table.toml" <<EOF
game = "As Capone"
code = "DSK"
price_cents = 300
block_size = $BLOCK_SIZE

[[schedule]]
tickets = $((BLOCK_SIZE * 3 / 4))
prizes_cents = { 5 = 300, 6 = 1000, 7 = 10000, 8 = 100000 }

[[schedule]]
tickets = $((BLOCK_SIZE - BLOCK_SIZE * 3 / 4))
prizes_cents = { 5 = 600, 6 = 3000, 7 = 20000, 8 = 200000 }
EOF

# Starts the server on DESK_DB and waits until it answers (its start time in START_MS).
start_server() {
    local retailers="" s
    for s in "${SHOPS[@]}"; do retailers+="\"$s:shop-token-${#retailers}-desk-bench\", "; done
    cat > "$WORK/serve.toml" <<EOF
listen = "127.0.0.1:$PORT"
db = "sqlite://$DESK_DB"
key_file = "$DESK_DB.key"
table = "$WORK/table.toml"
initial_blocks = 1
demo_token = ""
operator_tokens = ["$TOKEN"]
allow_non_regulation_table = true
retailer_tokens = [${retailers%, }]
request_timeout_ms = $REQUEST_TIMEOUT_MS
EOF
    local t0; t0=$(ms)
    RUST_LOG=warn "$BIN" serve --config "$WORK/serve.toml" > "$WORK/serve.log" 2>&1 &
    SP=$!
    for _ in $(seq 1 600); do
        if ! kill -0 "$SP" 2>/dev/null; then echo "the server exited; its log:" >&2; cat "$WORK/serve.log" >&2; exit 1; fi
        curl -sf "$URL/healthz" >/dev/null && { START_MS=$(( $(ms) - t0 )); return 0; }
        sleep 0.1
    done
    echo "the server did not answer in 60 s; its log:" >&2; cat "$WORK/serve.log" >&2; exit 1
}
stop_server() { kill "$SP"; wait "$SP" 2>/dev/null || true; SP=""; }

# POST $1 with body $2 as the operator; fails unless 2xx. Prints the time in ms.
post() {
    local out code t
    out=$(curl -s -o "$WORK/answer.json" -w '%{http_code} %{time_total}' -X POST -H "Authorization: Bearer $TOKEN" \
        -H 'Content-Type: application/json' --data-binary "$2" "$URL$1")
    read -r code t <<<"$out"
    [[ "$code" == 2* ]] || { echo "POST $1 answered $code: $(cat "$WORK/answer.json")" >&2; exit 1; }
    awk -v t="$t" 'BEGIN { printf "%.0f", t * 1000 }'
}

# ------------------------------------------------------------ 1. the database
build_database() {
    mkdir -p "$(dirname "$DESK_DB")"
    rm -f "$DESK_DB" "$DESK_DB-wal" "$DESK_DB-shm" "$DESK_DB.key" "$DESK_DB.done"
    say "building $DESK_DB: $EMISSIONS emissions x $BLOCKS blocks x $BLOCK_SIZE tickets"
    local t_all; t_all=$(ms)
    start_server
    echo "first start (emission 1, block 1 of $BLOCK_SIZE tickets): $START_MS ms"
    local table e channel t sum=0
    table=$(jq -Rs . < "$WORK/table.toml")
    if (( BLOCKS > 1 )); then
        t=$(post /api/admin/emissions/1/blocks "{\"blocks\": $((BLOCKS - 1))}")
        echo "emission 1 (online): $((BLOCKS - 1)) more blocks in $t ms"
        sum=$((sum + t))
    fi
    for e in $(seq 2 "$EMISSIONS"); do
        if (( e % 2 )); then channel=online; else channel=paper; fi
        t=$(post /api/admin/emissions "{\"table\": $table, \"blocks\": $BLOCKS, \"channel\": \"$channel\"}")
        [ "$(jq .emission "$WORK/answer.json")" = "$e" ] || { echo "expected emission $e: $(cat "$WORK/answer.json")" >&2; exit 1; }
        echo "emission $e ($channel): $BLOCKS blocks in $t ms"
        sum=$((sum + t))
    done
    for e in 1 2; do post "/api/admin/emissions/$e/close" '{}' >/dev/null; done
    local tickets=$((EMISSIONS * BLOCKS * BLOCK_SIZE))
    echo "emitted through the API: $((tickets - BLOCK_SIZE)) tickets in $sum ms ($(( (tickets - BLOCK_SIZE) * 1000 / (sum > 0 ? sum : 1) )) tickets/s)"
    stop_server
    say "writing the state of play with sqlite3 (synthetic)"
    local t_sql; t_sql=$(ms)
    state_of_play > "$WORK/play.sql"
    sqlite3 -bail "$DESK_DB" < "$WORK/play.sql" | grep -v '^off$\|^wal$' > "$WORK/play.out"
    echo "state of play written in $(( $(ms) - t_sql )) ms; database built in $(( ($(ms) - t_all) / 1000 )) s," \
         "$(du -m "$DESK_DB" | cut -f1) MiB"
    touch "$DESK_DB.done"
}

# The SQL of the state of play (see the header). Shares in per mille of a
# hash of the ticket's id: h(id, k) = the top bits of id * a large odd
# number mod 2^32, one number per question k.
state_of_play() {
    local now; now=$(ms)
    local day=86400000 hour=3600000
    local shops_sql="" i=0 s T5 T6 T7 T8 ODDS_NOTE
    # The exact chance of ending with 5, 6, 7 and 8 tricks, cumulated, in billionths.
    read -r T5 T6 T7 T8 ODDS_NOTE < <("$BIN" odds --json | python3 -c '
import json, sys
from fractions import Fraction
f = json.load(sys.stdin)["final"]
acc, out = Fraction(0), []
for k in "5678":
    acc += Fraction(f[k]); out.append(round(acc * 10**9))
print(*out, " ".join(f"{k}: {f[k]}" for k in "5678"))')
    for s in "${SHOPS[@]}"; do
        shops_sql+="${shops_sql:+ UNION ALL }SELECT $i, '$s', (SELECT id FROM accounts WHERE name = 'shop:$s')"
        i=$((i + 1))
    done
    cat <<EOF
PRAGMA journal_mode = OFF;
PRAGMA synchronous = OFF;
PRAGMA cache_size = -1000000;
PRAGMA temp_store = MEMORY;
BEGIN;
CREATE TEMP TABLE shop_of (k INTEGER PRIMARY KEY, name TEXT NOT NULL, account INTEGER NOT NULL);
INSERT INTO shop_of $shops_sql;
-- Each emission's sales: its share sold and the span of its sale.
CREATE TEMP TABLE em AS
SELECT id, channel, price_cents,
       ($EMISSIONS + 1 - id) * block_size * $BLOCKS / $EMISSIONS AS n_sold,
       $now - $hour - ($EMISSIONS + 1 - id) * 3 * $day AS start_ms
  FROM emissions;
UPDATE emissions SET created_ms = (SELECT start_ms FROM em WHERE em.id = emissions.id) - $hour;
UPDATE blocks SET created_ms = (SELECT start_ms FROM em WHERE em.id = blocks.emission_id) - $hour,
                  published_ms = (SELECT start_ms FROM em WHERE em.id = blocks.emission_id) - $hour;
-- The tickets sold, with h_* shares from a hash of the id (h_result in
-- billionths, the others per mille).
-- The tricks' spread: the game's exact final odds (as-capone odds --json),
-- cumulated, in billionths: $ODDS_NOTE.
CREATE TEMP TABLE s (id INTEGER PRIMARY KEY, e, channel, price, sold_ms, recent, h_result, h_open, h_pay,
                     prize_5, prize_6, prize_7, prize_8, player, shop);
INSERT INTO s
SELECT t.id, em.id, em.channel, em.price_cents,
       em.start_ms + ((b.number - 1) * e.block_size + t.position - 1) * ($now - $hour - em.start_ms) / em.n_sold,
       (b.number - 1) * e.block_size + t.position > em.n_sold - MAX(em.n_sold / 500, 1),
       ((t.id * 2654435761) % 4294967296) * 1000000000 / 4294967296,
       ((t.id * 2246822519) % 4294967296) * 1000 / 4294967296,
       ((t.id * 3266489917) % 4294967296) * 1000 / 4294967296,
       t.prize_5, t.prize_6, t.prize_7, t.prize_8,
       1 + t.id % $PLAYERS,
       t.id % ${#SHOPS[@]}
  FROM tickets t JOIN blocks b ON b.id = t.block_id JOIN emissions e ON e.id = b.emission_id JOIN em ON em.id = e.id
 WHERE (b.number - 1) * e.block_size + t.position <= em.n_sold
 ORDER BY t.id;
-- The games: every online ticket sold, 90 % of the paper ones (opened);
-- the recent ones in play (no tricks yet).
CREATE TEMP TABLE g (id INTEGER PRIMARY KEY, channel, sold_ms, player, shop, h_pay, tricks, prize, finished_ms);
INSERT INTO g
SELECT id, channel, sold_ms, player, shop, h_pay, tricks,
       CASE tricks WHEN 5 THEN prize_5 WHEN 6 THEN prize_6 WHEN 7 THEN prize_7 WHEN 8 THEN prize_8
                   ELSE CASE WHEN tricks IS NULL THEN NULL ELSE 0 END END,
       sold_ms + 120000
  FROM (SELECT s.*, CASE WHEN recent THEN NULL
                         WHEN h_result < $T5 THEN 5 WHEN h_result < $T6 THEN 6 WHEN h_result < $T7 THEN 7
                         WHEN h_result < $T8 THEN 8 ELSE h_result % 5 END AS tricks
          FROM s WHERE channel = 'online' OR h_open < 900)
 ORDER BY id;

-- Players and their accounts (account id 1 000 000 + player id).
INSERT INTO accounts (id, name, kind, balance_cents)
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $PLAYERS)
SELECT 1000000 + i, 'player:bench-' || i, 'player', 0 FROM n;
INSERT INTO players (id, token_hash, name, account_id, created_ms)
SELECT id - 1000000, printf('%064x', id), NULL, id, $now - 70 * $day FROM accounts WHERE id > 1000000;
INSERT INTO player_limits (player_id, tickets_per_day, spend_per_week_cents, updated_ms, excluded_until_ms)
SELECT id, 20, 5000, $now - $day, CASE WHEN id % 500 = 0 THEN $now + 30 * $day END FROM players WHERE id % 100 = 0;

-- Sales. Online: the player's ticket. Paper: the shop's; opened by a player for 90 %.
UPDATE tickets SET status = 'sold', owner_id = s.player, sold_ms = s.sold_ms, client_seed = printf('%064x', s.id)
  FROM s WHERE s.id = tickets.id AND s.channel = 'online';
UPDATE tickets SET status = 'sold', sold_ms = s.sold_ms, shop = so.name
  FROM s JOIN shop_of so ON so.k = s.shop WHERE s.id = tickets.id AND s.channel = 'paper';
UPDATE tickets SET owner_id = g.player, client_seed = printf('%064x', g.id)
  FROM g WHERE g.id = tickets.id AND g.channel = 'paper';
-- Paper prizes paid by the shop that sold the ticket, a day after the game (at most an hour ago).
CREATE TEMP TABLE paid (id INTEGER PRIMARY KEY, prize, paid_ms, shop, account);
INSERT INTO paid
SELECT g.id, g.prize, MIN(g.finished_ms + $day, $now - $hour), so.name, so.account
  FROM g JOIN shop_of so ON so.k = g.shop
 WHERE g.channel = 'paper' AND g.prize > 0 AND g.h_pay < 700 ORDER BY g.id;
UPDATE tickets SET status = 'paid', paid_ms = paid.paid_ms, paid_shop = paid.shop FROM paid WHERE paid.id = tickets.id;

-- The games: finished (a state of the engine's JSON's size), or in play.
INSERT INTO ticket_games (ticket_id, seq, phase, state_json, result_tricks, prize_cents, finished_ms)
SELECT id, CASE WHEN tricks IS NULL THEN 3 ELSE 10 END,
       CASE WHEN tricks IS NULL THEN 'play' ELSE 'finished' END,
       '{"prizes":{"5":300,"6":1000,"7":10000,"8":100000},"phase":"' || CASE WHEN tricks IS NULL THEN 'play' ELSE 'finished' END
         || '","game":1,"hand":[],"capone":[],"tied":null,"tricks_won":' || COALESCE(tricks, 0) || ',"tricks_lost":'
         || (8 - COALESCE(tricks, 0)) || ',"draws":10,"seq":10,"result":{"tricks":' || COALESCE(tricks, 0)
         || ',"prize_cents":' || COALESCE(prize, 0) || '}}',
       tricks, prize, CASE WHEN tricks IS NULL THEN NULL ELSE finished_ms END
  FROM g ORDER BY id;

-- Movements, two ledger entries each. Sales: the player's or the shop's.
INSERT INTO movements (id, reason, ticket_id, created_ms)
SELECT CASE channel WHEN 'online' THEN 'sale:' ELSE 'retail_sale:' END || id,
       CASE channel WHEN 'online' THEN 'ticket_sale' ELSE 'retail_sale' END, id, sold_ms FROM s ORDER BY id;
INSERT INTO ledger_entries (movement_id, account_id, amount_cents)
SELECT CASE channel WHEN 'online' THEN 'sale:' ELSE 'retail_sale:' END || s.id,
       CASE channel WHEN 'online' THEN 1000000 + player ELSE (SELECT account FROM shop_of WHERE k = s.shop) END, -price
  FROM s ORDER BY s.id;
INSERT INTO ledger_entries (movement_id, account_id, amount_cents)
SELECT CASE channel WHEN 'online' THEN 'sale:' ELSE 'retail_sale:' END || id, 2, price FROM s ORDER BY id;
-- Prizes: credited online when the game finished; paid by the shop on paper.
CREATE TEMP TABLE pz AS
SELECT id, prize, finished_ms AS at, 1000000 + player AS account FROM g WHERE channel = 'online' AND prize > 0
UNION ALL SELECT id, prize, paid_ms, account FROM paid;
INSERT INTO movements (id, reason, ticket_id, created_ms) SELECT 'prize:' || id, 'prize', id, at FROM pz ORDER BY id;
INSERT INTO ledger_entries (movement_id, account_id, amount_cents) SELECT 'prize:' || id, 3, -prize FROM pz ORDER BY id;
INSERT INTO ledger_entries (movement_id, account_id, amount_cents) SELECT 'prize:' || id, account, prize FROM pz ORDER BY id;
-- Each player's play money: its purchases plus 10 000, so that its balance, the sum of its entries, is 10 000 + its prizes.
CREATE TEMP TABLE spent AS SELECT player, SUM(price) AS cents FROM s WHERE channel = 'online' GROUP BY player;
INSERT INTO movements (id, reason, ticket_id, created_ms) SELECT 'start:' || id, 'start_balance', NULL, $now - 70 * $day FROM players;
INSERT INTO ledger_entries (movement_id, account_id, amount_cents)
SELECT 'start:' || p.id, 1, -(10000 + COALESCE(sp.cents, 0)) FROM players p LEFT JOIN spent sp ON sp.player = p.id;
INSERT INTO ledger_entries (movement_id, account_id, amount_cents)
SELECT 'start:' || p.id, p.account_id, 10000 + COALESCE(sp.cents, 0) FROM players p LEFT JOIN spent sp ON sp.player = p.id;
CREATE TEMP TABLE bal AS SELECT account_id, SUM(amount_cents) AS cents FROM ledger_entries WHERE account_id > 1000000 GROUP BY account_id;
CREATE INDEX temp.bal_id ON bal (account_id);
UPDATE accounts SET balance_cents = (SELECT cents FROM bal WHERE bal.account_id = accounts.id) WHERE id > 1000000;
COMMIT;
-- What was written, and the ledger's sum (0).
SELECT 'sold ' || (SELECT COUNT(*) FROM tickets WHERE status IN ('sold', 'paid')) || ', paid on paper ' || (SELECT COUNT(*) FROM tickets WHERE status = 'paid')
    || ', games ' || (SELECT COUNT(*) FROM ticket_games) || ' (in play ' || (SELECT COUNT(*) FROM ticket_games WHERE phase <> 'finished')
    || '), movements ' || (SELECT COUNT(*) FROM movements)
    || ', ledger entries ' || (SELECT COUNT(*) FROM ledger_entries);
-- The server's own ledger check (store/reads.rs check_ledger()): all 0.
SELECT 'ledger check: sum ' || (SELECT CAST(COALESCE(SUM(amount_cents), 0) AS BIGINT) FROM ledger_entries)
    || ', unbalanced movements ' || (SELECT COUNT(*) FROM (SELECT movement_id FROM ledger_entries GROUP BY movement_id
              HAVING SUM(amount_cents) <> 0 OR COUNT(*) <> 2) AS bad)
    || ', balance mismatches ' || (SELECT COUNT(*) FROM accounts a WHERE a.kind = 'player' AND a.balance_cents <>
              (SELECT CAST(COALESCE(SUM(l.amount_cents), 0) AS BIGINT) FROM ledger_entries l WHERE l.account_id = a.id))
    || ', negative players ' || (SELECT COUNT(*) FROM accounts WHERE kind = 'player' AND balance_cents < 0);
PRAGMA journal_mode = WAL;
EOF
}

if [ -e "$DESK_DB.done" ] && [ -e "$DESK_DB" ]; then
    say "using the database built before: $DESK_DB ($(du -m "$DESK_DB" | cut -f1) MiB; remove $DESK_DB.done to build it again)"
else
    build_database
    cat "$WORK/play.out"
fi

# ------------------------------------------------------------ 2. the requests
# The requests: "page PATH" and "each PATH" lines.
mapfile -t PAGE < <(awk '$1 == "page" { print $2 }' "$PATHS_FILE")
mapfile -t EACH < <(awk '$1 == "each" { print $2 }' "$PATHS_FILE")
mapfile -t OPEN < <(awk '$1 == "open" { print $2 }' "$PATHS_FILE")
(( ${#PAGE[@]} + ${#EACH[@]} + ${#OPEN[@]} > 0 )) || { echo "$PATHS_FILE names no request" >&2; exit 1; }

# GET $1 as the operator: "CODE SECONDS".
get() { curl -s -o "$WORK/body" -w '%{http_code} %{time_total}\n' -H "Authorization: Bearer $TOKEN" "$URL$1"; }

# A page refresh as desk.js makes it: the page's requests at once, then
# every emission's `each` requests and the open emission's `open` ones
# (the newest: its charts box is the one open at first) at once, 6
# connections at most. Prints "total_ms page_ms each_ms codes" (codes: each
# distinct HTTP status seen).
refresh() {
    local args=() p id t0 t1 t2 codes open
    for p in "${PAGE[@]}"; do args+=(-o /dev/null "$URL$p"); done
    t0=$(ms)
    codes=$( ((${#args[@]})) && curl -s --no-progress-meter -Z --parallel-max 6 -w '%{http_code}\n' -H "Authorization: Bearer $TOKEN" "${args[@]}" || true)
    t1=$(ms)
    args=()
    for id in $IDS; do for p in "${EACH[@]}"; do args+=(-o /dev/null "$URL${p//\{id\}/$id}"); done; done
    open=${OPEN_IDS:-$(tr ' ' '\n' <<<"$IDS" | grep . | sort -n | tail -1)}
    for id in $open; do for p in "${OPEN[@]}"; do args+=(-o /dev/null "$URL${p//\{id\}/$id}"); done; done
    codes+=$'\n'$( ((${#args[@]})) && curl -s --no-progress-meter -Z --parallel-max 6 -w '%{http_code}\n' -H "Authorization: Bearer $TOKEN" "${args[@]}" || true)
    t2=$(ms)
    echo "$((t2 - t0)) $((t1 - t0)) $((t2 - t1)) $(echo "$codes" | grep . | sort | uniq -c | awk '{printf "%s%sx%s", (NR > 1 ? "," : ""), $2, $1}')"
}

say "starting the server on the database (cold: its first requests)"
start_server
echo "server start on the database: $START_MS ms"
IDS=$(curl -s -H "Authorization: Bearer $TOKEN" "$URL/api/admin/emissions" | jq -r '.emissions[].emission' | tr '\n' ' ')
# That listing warmed the emissions' figures: start again for a cold refresh.
stop_server; start_server
read -r total page each codes <<<"$(refresh)"
echo "cold page refresh (the first after a start, server start $START_MS ms): $total ms (page's requests $page ms, then" \
     "$(wc -w <<<"$IDS") emissions' $each ms), answers $codes"
stop_server; start_server
say "timing each request: its first after a start (cold), then $WARM times"
: > "$WORK/times"
time_path() { # label path: its first request, then WARM more while WARM_BUDGET_S lasts (at least 2)
    local i out t0 shown=""
    t0=$(ms)
    for i in $(seq 0 "$WARM"); do
        if (( i > 2 && $(ms) - t0 > WARM_BUDGET_S * 1000 )); then break; fi
        out=$(get "$2")
        echo "$1 $i $out" >> "$WORK/times"
        if [[ "$out" != 200* && -z "$shown" ]]; then
            echo "$1 answered $(cut -c1-300 "$WORK/body")"; shown=1
        fi
    done
}
for p in "${PAGE[@]}"; do time_path "$p" "$p"; done
for p in "${EACH[@]}" "${OPEN[@]}"; do for id in $EACH_IDS; do time_path "${p//\{id\}/$id}" "${p//\{id\}/$id}"; done; done
: > "$WORK/refreshes"
say "$REFRESHES page refreshes (at most $REFRESH_BUDGET_S s)"
t0=$(ms)
for i in $(seq 1 "$REFRESHES"); do
    if (( i > 1 && $(ms) - t0 > REFRESH_BUDGET_S * 1000 )); then break; fi
    refresh >> "$WORK/refreshes"
done
stop_server

python3 - "$WORK/times" "$WORK/refreshes" "$BOUND_MS" "$WARM" <<'PY'
import sys
times, refreshes, bound, warm = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
def q(v, p):  # nearest rank
    v = sorted(v); return v[min(len(v) - 1, max(0, int(round(p * len(v) + 0.5)) - 1))]
rows = {}
for line in open(times):
    label, i, code, t = line.split()
    rows.setdefault(label, []).append((int(i), code, 1000 * float(t)))
print(f"\nper request, ms (cold: the first after a start; warm: up to {warm} more, one at a time); bound {bound:.0f} ms on the warm p90")
print(f"{'request':48} {'status':>6} {'cold':>8} {'warm n':>6} {'min':>8} {'median':>8} {'p90':>8} {'max':>8}  verdict")
for label, r in rows.items():
    cold = next(t for i, c, t in r if i == 0)
    w = [t for i, c, t in r if i > 0]
    codes = ",".join(sorted({c for _, c, _ in r}))
    ok = all(c == "200" for _, c, _ in r)
    verdict = ("PASS" if q(w, 0.9) <= bound else f"FAIL (+{q(w, 0.9) - bound:.0f} ms)") if ok else "NOT SERVED" if codes == "404" else "ERROR"
    if ok and cold > bound: verdict += f", cold +{cold - bound:.0f} ms"
    print(f"{label:48} {codes:>6} {cold:8.1f} {len(w):6d} {min(w):8.1f} {q(w, .5):8.1f} {q(w, .9):8.1f} {max(w):8.1f}  {verdict}")
r = [l.split() for l in open(refreshes) if l.strip()]
if r:
    tot = [float(x[0]) for x in r]; pg = [float(x[1]) for x in r]; ea = [float(x[2]) for x in r]
    print(f"\nwarm page refreshes ({len(r)}), ms: whole min {min(tot):.0f} median {q(tot, .5):.0f} p90 {q(tot, .9):.0f} max {max(tot):.0f}; "
          f"the page's requests at once: median {q(pg, .5):.0f}; then every emission's at once: median {q(ea, .5):.0f}; "
          f"answers {sorted({x[3] for x in r})}")
PY

# ------------------------------------------------------------ 3. the plans
if [ -z "${SKIP_EXPLAIN:-}" ]; then
    echo
    echo "the desk's queries (bench/lib/desk-queries.sql, copied from the code): EXPLAIN QUERY PLAN and time in sqlite3 (warm file cache, default page cache)"
    python3 - "$HERE/lib/desk-queries.sql" "$(ms)" > "$WORK/explain.sql" <<'PY'
import re, sys
text, now = open(sys.argv[1]).read(), sys.argv[2]
for part in re.split(r"^-- name: ", text, flags=re.M)[1:]:
    lines = part.splitlines()
    name = lines[0]
    binds = next((l[len("-- bind: "):].split() for l in lines if l.startswith("-- bind: ")), [])
    sql = "\n".join(l for l in lines[1:] if not l.startswith("--")).strip()
    print(".parameter clear")
    for b in binds:
        k, v = b.split("=")
        print(f".parameter set {k} {now if v == 'NOW' else v}")
    print(f".print\n.print '-- {name}'")
    print(".timer off\n.eqp off")
    print(f"EXPLAIN QUERY PLAN {sql}")
    print(".timer on\n.headers off\n.mode list")
    print(f"SELECT 'rows: ' || COUNT(*) FROM ({sql.rstrip(';')});")
PY
    sqlite3 -readonly "$DESK_DB" < "$WORK/explain.sql"
fi

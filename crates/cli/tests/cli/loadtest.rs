//! `as-capone loadtest` against the real server: it plays whole games, and
//! `--rate` paces the players.

use crate::common;

use serde_json::Value;
use std::process::Command;
use std::time::Instant;

/// Blocks of 1 000 tickets of one row.
fn table() -> String {
    testkit::table_toml("LDT", 300, 1000, &[(1000, [300, 1000, 10000, 100000])])
}

fn loadtest(url: &str, extra: &[&str]) -> (Value, f64) {
    let t0 = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_as-capone"))
        .args(["loadtest", "--url", url, "--players", "4", "--games", "12", "--json"])
        .args(extra)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    (serde_json::from_slice(&out.stdout).unwrap(), t0.elapsed().as_secs_f64())
}

fn actions_of(v: &Value) -> f64 {
    v["actions"].as_u64().unwrap() as f64
}

fn lat_max(v: &Value) -> f64 {
    v["latency_ms"]["max"].as_f64().unwrap()
}

/// One number from the server's SQLite database `name` in `dir`, read
/// beside the running server.
fn count(dir: &std::path::Path, name: &str, sql: &str) -> i64 {
    use sqlx::Connection;
    let url = testkit::sqlite_url(dir, name);
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let mut conn = sqlx::SqliteConnection::connect(&url).await.unwrap();
        sqlx::query_scalar(sqlx::AssertSqlSafe(sql.to_string())).fetch_one(&mut conn).await.unwrap()
    })
}

#[test]
fn loadtest_plays_whole_games_and_paces_them_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("table.toml"), table()).unwrap();
    let mut server = common::start_server(dir.path(), "load.db", &["--initial-blocks", "1"]);
    let url = server.url.clone();

    let (v, _) = loadtest(&url, &[]);
    assert_eq!(v["games"], 12);
    assert_eq!(v["errors"], 0);
    let actions = v["actions"].as_u64().unwrap();
    assert!(actions >= 12 * 8, "at least eight cards a game: {actions}");
    let lat = &v["latency_ms"];
    assert!(lat["p50"].as_f64().unwrap() <= lat["p99"].as_f64().unwrap());
    assert!(lat["p99"].as_f64().unwrap() <= lat["max"].as_f64().unwrap());

    // Paced at 100 requests/s, ~110 requests cannot take less than ~1 s.
    let timeline = dir.path().join("timeline.csv");
    let (v, wall) = loadtest(&url, &["--rate", "100", "--timeline", timeline.to_str().unwrap()]);
    assert_eq!(v["games"], 12);
    let requests = v["actions"].as_u64().unwrap() + v["purchases"].as_u64().unwrap();
    let floor = (requests - 4) as f64 / 100.0;
    assert!(v["seconds"].as_f64().unwrap() >= floor * 0.95, "{v}, at least {floor} s");
    assert!(wall >= floor * 0.95);
    assert_eq!(v["rate"], 100.0);
    // The steady window (every player registered until the games ran out)
    // carried the rate asked for, and lies inside the run.
    let steady = &v["steady"];
    let window = steady["seconds"].as_f64().unwrap();
    assert!(window > 0.5 && window <= v["seconds"].as_f64().unwrap(), "{v}");
    let carried = steady["requests_per_s"].as_f64().unwrap();
    assert!((75.0..=110.0).contains(&carried), "{v}: {carried} game requests/s in the steady window at --rate 100");
    assert!(steady["actions_per_s"].as_f64().unwrap() < carried);
    let sl = &steady["latency_ms"];
    assert!(sl["p50"].as_f64().unwrap() > 0.0, "{v}: no action in the steady window");
    assert!(sl["max"].as_f64().unwrap() <= lat_max(&v), "{v}: the window's actions are among the run's");

    // The timeline: every action in one 100 ms window of its slot, the
    // windows in order over the run, each within the run's latencies.
    let csv = std::fs::read_to_string(&timeline).unwrap();
    let mut lines = csv.lines();
    assert_eq!(lines.next(), Some("start_s,actions,p50_ms,p99_ms,max_ms,sent_late_p99_ms,sent_late_max_ms"));
    let rows: Vec<Vec<f64>> = lines.map(|l| l.split(',').map(|f| f.parse().unwrap()).collect()).collect();
    assert!(rows.len() >= 8, "about 1 s of actions in 100 ms windows: {csv}");
    assert_eq!(rows.iter().map(|r| r[1]).sum::<f64>(), actions_of(&v), "{csv}");
    for pair in rows.windows(2) {
        assert!(pair[1][0] > pair[0][0] && pair[1][0] <= v["seconds"].as_f64().unwrap(), "{csv}");
    }
    for r in &rows {
        assert!((r[0] * 10.0 - (r[0] * 10.0).round()).abs() < 1e-9, "a window starts on a tenth of a second: {csv}");
        // The CSV has two decimals: a window's max may round up past the run's.
        assert!(r[1] >= 1.0 && r[2] <= r[3] && r[3] <= r[4] && r[4] <= lat_max(&v) + 0.005, "{csv}");
        assert!(0.0 <= r[5] && r[5] <= r[6], "{csv}");
    }

    // `--idempotency-keys`: each purchase carries a key of its own, as the
    // page's do (the runs before sent none).
    assert_eq!(count(dir.path(), "load.db", "SELECT COUNT(*) FROM idempotency_keys"), 0);
    let (v, _) = loadtest(&url, &["--idempotency-keys"]);
    assert_eq!(
        (v["games"].as_u64(), v["errors"].as_u64(), v["idempotency_keys"].as_bool()),
        (Some(12), Some(0), Some(true))
    );
    let keyed = count(dir.path(), "load.db", "SELECT COUNT(DISTINCT key) FROM idempotency_keys");
    assert_eq!(keyed, v["purchases"].as_i64().unwrap(), "{v}");

    // `--shadow-wallet`: the reference operator runs beside the internal
    // mode's players and is sent the debit of each purchase and the credit
    // of each prize the operator mode's server would have sent, each
    // applied (the control of bench/operator-wallet.sh's SHADOW=1).
    let wallet_addr = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().to_string();
    let (v, _) = loadtest(&url, &["--shadow-wallet", "--wallet-delay-ms", "5", "--operator-listen", &wallet_addr]);
    assert_eq!(
        (v["games"].as_u64(), v["errors"].as_u64(), v["wallet_mode"].as_str()),
        (Some(12), Some(0), Some("internal"))
    );
    let calls = v["purchases"].as_u64().unwrap() + v["games_won"].as_u64().unwrap();
    let shadow = &v["shadow_wallet"];
    assert_eq!(
        (shadow["calls"].as_u64(), shadow["applied"].as_u64(), shadow["failed"].as_u64()),
        (Some(calls), Some(calls), Some(0)),
        "{v}"
    );
    assert!(v.get("wallet").is_none(), "no operator's report in the internal mode: {v}");
    // In the operator mode the server makes those calls: refused.
    let out = Command::new(env!("CARGO_BIN_EXE_as-capone"))
        .args(["loadtest", "--url", &url, "--wallet", "operator", "--shadow-wallet"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--shadow-wallet is for the internal mode"));

    let out = Command::new(env!("CARGO_BIN_EXE_as-capone"))
        .args(["loadtest", "--url", &url, "--rate", "0"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    server.sigkill().unwrap();
}

/// `loadtest --wallet operator`: the reference operator in the load
/// generator's process (every wallet call delayed 20 ms), the server in
/// operator mode in front of it. Each player is launched by the operator,
/// every purchase waits for its debit and is debited exactly once, every
/// prize is credited once of its amount, and the players' balances at the
/// operator moved by exactly that (the load generator checks the
/// operator's ledger and fails otherwise; the figures are in its report).
#[test]
fn loadtest_in_operator_mode_debits_each_purchase_once_and_credits_each_prize() {
    let dir = tempfile::tempdir().unwrap();
    // Prizes in most games, so that credits are exercised.
    let table = testkit::table_toml("LDO", 300, 1000, &[(1000, [300, 600, 1000, 5000])]);
    std::fs::write(dir.path().join("table.toml"), table).unwrap();
    let keys = format!("bench:{}", "7e".repeat(32));
    // A free port for the operator's wallet, known to the server at its start.
    let wallet_addr = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().to_string();
    let wallet_url = format!("http://{wallet_addr}");
    let mut server = common::start_server(
        dir.path(),
        "operator.db",
        &[
            "--initial-blocks",
            "1",
            "--wallet",
            "operator",
            "--operator-wallet-url",
            &wallet_url,
            "--operator-keys",
            &keys,
        ],
    );
    let run = |players: &str, games: &str| {
        let out = Command::new(env!("CARGO_BIN_EXE_as-capone"))
            .args(["loadtest", "--url", &server.url, "--players", players, "--games", games, "--json"])
            .args(["--wallet", "operator", "--wallet-delay-ms", "20", "--operator-listen", &wallet_addr])
            // Keyed, as the page's purchases: each looks for its key's round in flight.
            .arg("--idempotency-keys")
            .env("AS_CAPONE_OPERATOR_KEYS", &keys)
            .output()
            .unwrap();
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).to_string(),
            String::from_utf8_lossy(&out.stderr).to_string(),
        )
    };
    let (ok, stdout, stderr) = run("4", "16");
    assert!(ok, "{stderr}\n{stdout}");
    let v: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        (v["games"].as_u64(), v["errors"].as_u64(), v["wallet_mode"].as_str()),
        (Some(16), Some(0), Some("operator"))
    );
    // Launched, not registered: one launch per player.
    assert_eq!(v["registrations"], 4, "{v}");
    let w = &v["wallet"];
    let ledger = &w["ledger"];
    let purchases = v["purchases"].as_u64().unwrap();
    assert_eq!(purchases, 16);
    assert_eq!(ledger["debits"].as_u64(), Some(purchases), "{v}");
    assert_eq!(ledger["rounds_debited"].as_u64(), Some(purchases), "{v}");
    assert_eq!(ledger["debited_cents"].as_u64(), Some(300 * purchases), "{v}");
    assert_eq!(ledger["rollbacks"], 0, "{v}");
    let won = v["games_won"].as_u64().unwrap();
    assert!(won > 0, "with prizes in most games, some game was won: {v}");
    assert_eq!(ledger["credits"].as_u64(), Some(won), "{v}");
    let net = ledger["debited_cents"].as_i64().unwrap() - ledger["credited_cents"].as_i64().unwrap();
    assert_eq!(ledger["players_net_cents"].as_i64(), Some(net), "{v}");
    // The proxy saw each debit, each at least the operator's delay, and
    // each purchase waited for its debit.
    let debit = &w["calls"]["debit"];
    assert_eq!(debit["calls"].as_u64(), Some(purchases), "{v}");
    assert!(debit["latency_ms"]["p50"].as_f64().unwrap() >= 20.0, "{v}");
    assert_eq!(w["purchase_split_ms"]["purchases"].as_u64(), Some(purchases), "{v}");
    assert!(v["purchase_latency_ms"]["p50"].as_f64().unwrap() >= 20.0, "{v}");
    assert!(w["calls"]["credit"]["calls"].as_u64() >= Some(won), "{v}");
    // Every round carries its purchase's key, each its own.
    let keyed = count(
        dir.path(),
        "operator.db",
        "SELECT COUNT(DISTINCT idempotency_key) FROM wallet_rounds WHERE state = 'sold' AND idempotency_key IS NOT NULL",
    );
    assert_eq!(keyed, purchases as i64, "{v}");
    // The purchase's bound (the debit's p99 + 10 ms, BENCHMARKS.md "The operator mode") is computed from the same run.
    let bound = w["purchase_p99_bound_ms"].as_f64().unwrap();
    assert!((bound - debit["latency_ms"]["p99"].as_f64().unwrap() - 10.0).abs() < 1e-9, "{v}");

    // Keys the server does not hold: the launches are refused, the run fails.
    let (ok, _, stderr) = Command::new(env!("CARGO_BIN_EXE_as-capone"))
        .args(["loadtest", "--url", &server.url, "--players", "1", "--games", "1", "--json"])
        .args(["--wallet", "operator", "--operator-listen", &wallet_addr])
        .env("AS_CAPONE_OPERATOR_KEYS", format!("other:{}", "11".repeat(32)))
        .output()
        .map(|o| (o.status.success(), (), String::from_utf8_lossy(&o.stderr).to_string()))
        .unwrap();
    assert!(!ok && stderr.contains("launch"), "{stderr}");
    server.sigkill().unwrap();
}

//! `as-capone loadtest` against the real server: it plays whole games, and
//! `--rate` paces the players.

mod common;

use serde_json::Value;
use std::process::Command;
use std::time::Instant;

/// Blocks of 1 000 tickets of one row.
fn table() -> String {
    testkit::fixture::table_toml("LDT", 300, 1000, &[(1000, [300, 1000, 10000, 100000])])
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

    let out = Command::new(env!("CARGO_BIN_EXE_as-capone"))
        .args(["loadtest", "--url", &url, "--rate", "0"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    server.sigkill().unwrap();
}

//! The deployment guide's files (`deploy/`, `docs/deployment.md`) against
//! the real server: every metric the alert rules and the guide name is one
//! a live server exports (SQLite and PostgreSQL), the rule file has
//! Prometheus's shape, the example configuration passes the server's own
//! parser and agrees with the unit, the proxy and the scrape
//! configuration, `systemd-analyze verify` accepts the unit (where the
//! machine has it), and `--log-format json` writes one JSON object per line.

use crate::common;

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use testkit::TestDb;

/// The repository's root.
fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(relative: &str) -> String {
    std::fs::read_to_string(repo().join(relative)).unwrap_or_else(|e| panic!("{relative}: {e}"))
}

/// The metric names a text mentions: `as_capone_` and what follows of
/// `[a-z0-9_]`, not inside a longer word, and not a Rust path (a log
/// line's `target`, `as_capone_server::keys`).
fn metric_names(text: &str) -> BTreeSet<String> {
    let bytes = text.as_bytes();
    let mut names = BTreeSet::new();
    for (at, _) in text.match_indices("as_capone_") {
        if at > 0 && (bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_') {
            continue;
        }
        let end = text[at..]
            .find(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'))
            .map_or(text.len(), |n| at + n);
        if !text[end..].starts_with("::") {
            names.insert(text[at..end].to_string());
        }
    }
    names
}

/// The names in a Prometheus exposition: each sample's (a histogram's
/// `_bucket`, `_sum` and `_count` included) and each `# TYPE` line's.
fn exported_names(exposition: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for line in exposition.lines() {
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            names.extend(rest.split_whitespace().next().map(str::to_string));
        } else if !line.starts_with('#') && !line.trim().is_empty() {
            names.extend(line.split(['{', ' ']).next().map(str::to_string));
        }
    }
    names
}

/// A sample's value in an exposition (a metric without labels).
fn sample(exposition: &str, name: &str) -> Option<f64> {
    exposition.lines().find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.trim().parse().ok())
}

/// A purchase by the demo player and a request for a path that does not
/// exist, then the exposition, once the audit entries the purchase wrote
/// are chained (at once on SQLite, just after commit on PostgreSQL).
async fn scrape_after_traffic(url: &str) -> String {
    let c = reqwest::Client::new();
    let bought =
        c.post(format!("{url}/api/tickets")).bearer_auth("demo").json(&serde_json::json!({})).send().await.unwrap();
    assert_eq!(bought.status(), 201, "{}", bought.text().await.unwrap());
    assert_eq!(c.get(format!("{url}/no-such-page")).send().await.unwrap().status(), 404);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let text = c.get(format!("{url}/metrics")).send().await.unwrap().text().await.unwrap();
        let unsealed = sample(&text, "as_capone_audit_unsealed_entries").expect("the unsealed entries' gauge");
        let age = sample(&text, "as_capone_audit_unsealed_oldest_age_seconds").expect("their age's gauge");
        if unsealed == 0.0 {
            assert_eq!(age, 0.0, "no unsealed entry, no age: {text}");
            assert_eq!(sample(&text, "as_capone_active_games"), Some(1.0), "the ticket bought is in play: {text}");
            return text;
        }
        assert!(Instant::now() < deadline, "the purchase's audit entries were never chained: {text}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Every metric name in the alert rules, the scrape configuration and the
/// guide is in `exposition`.
fn assert_every_documented_metric_is_exported(exposition: &str) {
    let exported = exported_names(exposition);
    let alerts = metric_names(&read("deploy/prometheus/as-capone-alerts.yml"));
    assert!(alerts.len() >= 6, "the alert rules name the metrics they watch: {alerts:?}");
    for file in ["deploy/prometheus/as-capone-alerts.yml", "deploy/prometheus/prometheus.yml", "docs/deployment.md"] {
        let missing: Vec<_> = metric_names(&read(file)).into_iter().filter(|n| !exported.contains(n)).collect();
        assert!(missing.is_empty(), "{file} names metrics the server does not export: {missing:?}\n{exposition}");
    }
}

#[test]
fn every_metric_the_alerts_and_the_guide_name_is_exported_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("table.toml"), common::BLOCKS_OF_2000).unwrap();
    // Given a backup folder, as the example configuration is: its gauge is exported too.
    let server = common::start_server(dir.path(), "deploy.db", &["--backup-dir", dir.path().to_str().unwrap()]);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let exposition = rt.block_on(scrape_after_traffic(&server.url));
    assert_every_documented_metric_is_exported(&exposition);
}

#[test]
fn every_metric_the_alerts_and_the_guide_name_is_exported_on_postgres() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let Some(db) = rt.block_on(TestDb::create()) else { return };
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("table.toml"), common::BLOCKS_OF_2000).unwrap();
    let backups = ["--backup-dir", dir.path().to_str().unwrap()];
    let server = common::spawn_server(dir.path(), &db.url, &backups).wait_listening("server");
    let exposition = rt.block_on(scrape_after_traffic(&server.url));
    assert_every_documented_metric_is_exported(&exposition);
    drop(server);
    rt.block_on(db.drop_db());
}

/// The two audit gauges of a fresh scrape: unsealed entries, the oldest's age in seconds.
async fn unsealed_gauges(url: &str) -> (f64, f64) {
    let text = reqwest::get(format!("{url}/metrics")).await.unwrap().text().await.unwrap();
    let count = sample(&text, "as_capone_audit_unsealed_entries").expect("the unsealed entries' gauge");
    (count, sample(&text, "as_capone_audit_unsealed_oldest_age_seconds").expect("their age's gauge"))
}

/// SQLite chains each entry in the transaction that writes it, so an
/// unsealed one is only ever written from outside: the gauges count it and
/// its age from the database, whichever process wrote it.
#[test]
fn the_unsealed_audit_gauges_read_the_database_on_sqlite() {
    use sqlx::Connection;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("table.toml"), common::BLOCKS_OF_2000).unwrap();
    let server = common::start_server(dir.path(), "audit.db", &[]);
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        assert_eq!(unsealed_gauges(&server.url).await, (0.0, 0.0));
        let url = testkit::sqlite_url(dir.path(), "audit.db");
        let mut conn = sqlx::SqliteConnection::connect(&url).await.unwrap();
        let two_minutes_ago = server::now_ms() - 120_000;
        sqlx::query("INSERT INTO audit_log (created_ms, kind, data_json) VALUES (?, 'test', '{}')")
            .bind(two_minutes_ago)
            .execute(&mut conn)
            .await
            .unwrap();
        let (count, age) = unsealed_gauges(&server.url).await;
        assert_eq!(count, 1.0);
        assert!((120.0..180.0).contains(&age), "the entry is two minutes old: {age}");
    });
}

/// PostgreSQL: while another session holds the sealer's advisory lock
/// ("ASCAUDIT", `crates/server/src/store/audit.rs`), no process seals: a
/// purchase's entries stay unsealed and the gauges show them growing old,
/// as the alert `AsCaponeAuditUnsealed` expects; once it is released they
/// are chained and the gauges fall back to 0.
#[test]
fn the_unsealed_audit_gauges_show_a_sealer_that_cannot_seal_on_postgres() {
    use sqlx::Connection;
    const SEAL_LOCK: i64 = 0x4153_4341_5544_4954;
    let rt = tokio::runtime::Runtime::new().unwrap();
    let Some(db) = rt.block_on(TestDb::create()) else { return };
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("table.toml"), common::BLOCKS_OF_2000).unwrap();
    let server = common::spawn_server(dir.path(), &db.url, &[]).wait_listening("server");
    rt.block_on(async {
        let mut conn = sqlx::PgConnection::connect(&db.url).await.unwrap();
        sqlx::query("SELECT pg_advisory_lock($1)").bind(SEAL_LOCK).execute(&mut conn).await.unwrap();
        let c = reqwest::Client::new();
        let bought =
            c.post(format!("{}/api/tickets", server.url)).bearer_auth("demo").json(&serde_json::json!({})).send();
        let bought = bought.await.unwrap();
        assert_eq!(bought.status(), 201);
        tokio::time::sleep(Duration::from_millis(2_100)).await;
        let (count, age) = unsealed_gauges(&server.url).await;
        assert!(count >= 1.0 && age >= 2.0, "the purchase's entries wait, unsealed: {count} entries, {age} s");
        sqlx::query("SELECT pg_advisory_unlock($1)").bind(SEAL_LOCK).execute(&mut conn).await.unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        while unsealed_gauges(&server.url).await != (0.0, 0.0) {
            assert!(Instant::now() < deadline, "the entries were not chained once the lock was free");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    });
    drop(server);
    rt.block_on(db.drop_db());
}

fn text_at<'a>(value: &'a serde_yaml_ng::Value, key: &str, what: &str) -> &'a str {
    let text = value.get(key).and_then(|v| v.as_str()).unwrap_or_else(|| panic!("{what}: no {key}"));
    assert!(!text.trim().is_empty(), "{what}: {key} is empty");
    text
}

#[test]
fn the_alert_rules_are_prometheus_rule_groups_covering_what_the_guide_promises() {
    let file: serde_yaml_ng::Value = serde_yaml_ng::from_str(&read("deploy/prometheus/as-capone-alerts.yml")).unwrap();
    let groups = file.get("groups").and_then(|g| g.as_sequence()).expect("groups: [...]");
    assert!(!groups.is_empty());
    let mut exprs = BTreeMap::new();
    for group in groups {
        text_at(group, "name", "a group");
        let rules = group.get("rules").and_then(|r| r.as_sequence()).expect("a group's rules: [...]");
        for rule in rules {
            let alert = text_at(rule, "alert", "a rule").to_string();
            let expr = text_at(rule, "expr", &alert).to_string();
            let duration = text_at(rule, "for", &alert);
            let (digits, unit) = duration.split_at(duration.len() - 1);
            assert!(digits.parse::<u32>().is_ok() && "smhd".contains(unit), "{alert}: for {duration}");
            let severity = rule.get("labels").map(|l| text_at(l, "severity", &alert)).expect("labels.severity");
            assert!(["warning", "critical"].contains(&severity), "{alert}: severity {severity}");
            text_at(rule.get("annotations").expect("annotations"), "summary", &alert);
            assert_eq!(expr.matches('(').count(), expr.matches(')').count(), "{alert}: {expr}");
            assert!(exprs.insert(alert.clone(), expr).is_none(), "two rules are named {alert}");
        }
    }
    // What docs/deployment.md says the file watches, each by the metric that shows it.
    for watched in [
        "up{job=\"as-capone\"} == 0",
        "as_capone_audit_unsealed_oldest_age_seconds",
        "as_capone_active_games",
        "as_capone_wallet_outbox_oldest_age_seconds",
        "as_capone_http_requests_total{status=~\"5..\"}",
        "histogram_quantile(0.99, sum by (le) (rate(as_capone_http_request_duration_seconds_bucket",
        "increase(as_capone_ceiling_refused_total",
        "as_capone_ceiling_use_ratio",
    ] {
        assert!(exprs.values().any(|e| e.contains(watched)), "no rule watches {watched}: {exprs:?}");
    }
    // The scrape configuration loads this file and scrapes the example's operations address.
    let scrape: serde_yaml_ng::Value = serde_yaml_ng::from_str(&read("deploy/prometheus/prometheus.yml")).unwrap();
    let rule_files = scrape.get("rule_files").and_then(|r| r.as_sequence()).expect("rule_files");
    assert!(rule_files.iter().any(|f| f.as_str() == Some("as-capone-alerts.yml")), "{rule_files:?}");
    let job = &scrape.get("scrape_configs").and_then(|s| s.as_sequence()).expect("scrape_configs")[0];
    assert_eq!(text_at(job, "job_name", "the scrape job"), "as-capone", "the rules' up{{job=...}}");
    let targets = &job["static_configs"][0]["targets"];
    let config = server::Config::from_toml_file(&repo().join("deploy/as-capone.toml")).unwrap();
    let ops = config.ops_listen.expect("the example has an operations address");
    assert!(targets.as_sequence().unwrap().iter().any(|t| t.as_str() == Some(ops.as_str())), "{targets:?}");
}

/// `Key=value` lines of a unit file (a key given twice keeps every value).
pub(crate) fn unit_settings(unit: &str) -> BTreeMap<String, Vec<String>> {
    let mut settings: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for line in unit.lines().map(str::trim).filter(|l| !l.starts_with('#') && !l.starts_with('[')) {
        if let Some((key, value)) = line.split_once('=') {
            settings.entry(key.to_string()).or_default().push(value.to_string());
        }
    }
    settings
}

#[test]
fn the_example_configuration_is_valid_and_matches_the_unit_and_the_proxy() {
    let config = server::Config::from_toml_file(&repo().join("deploy/as-capone.toml")).expect("the example parses");
    let listen: std::net::SocketAddr = config.listen.parse().unwrap();
    assert!(listen.ip().is_loopback(), "only the proxy reaches the server: {listen}");
    assert!(config.trust_forwarded_for && config.trusted_proxy_hops == 1, "one proxy appends X-Forwarded-For");
    assert_eq!(config.log_format, server::LogFormat::Json);
    assert!(config.demo_token.is_empty(), "no demo player in production");
    assert!(config.key_file.is_none(), "the unit gives the key as a credential");
    let db = server::sqlite_path(&config.db).expect("the example is the one-process SQLite setup");

    let unit = unit_settings(&read("deploy/as-capone.service"));
    let one = |key: &str| unit.get(key).and_then(|v| v.first()).map(String::as_str).unwrap_or("");
    assert!(db.starts_with(format!("/var/lib/{}", one("StateDirectory"))), "{db:?} is in the state directory");
    assert!(one("ExecStart").contains("serve --config %d/as-capone.toml --key-file %d/server.key"));
    let credentials = &unit["LoadCredential"];
    for name in ["as-capone.toml", "server.key"] {
        assert!(credentials.iter().any(|c| c.starts_with(&format!("{name}:/etc/as-capone/"))), "{credentials:?}");
    }
    for (key, value) in [
        ("DynamicUser", "yes"),
        ("ProtectSystem", "strict"),
        ("ProtectHome", "yes"),
        ("PrivateTmp", "yes"),
        ("NoNewPrivileges", "yes"),
        ("CapabilityBoundingSet", ""),
        ("MemoryDenyWriteExecute", "yes"),
        ("RestrictAddressFamilies", "AF_INET AF_INET6 AF_UNIX"),
        ("SystemCallFilter", "@system-service"),
        ("ReadWritePaths", "%S/as-capone"),
    ] {
        assert_eq!(one(key), value, "{key}");
    }
    assert!(one("LimitNOFILE").parse::<usize>().unwrap() > config.max_connections, "room for max_connections");

    // The hourly backup: the server's user and database, into the folder whose age the server exports.
    let backup = unit_settings(&read("deploy/as-capone-backup.service"));
    let its = |key: &str| backup.get(key).and_then(|v| v.first()).map(String::as_str).unwrap_or("");
    let installed = |path: &Path| path.display().to_string().replace("/var/lib/", "%S/");
    let backup_dir = config.backup_dir.as_deref().expect("the example names the backup folder");
    assert!(its("ExecStart").contains(&format!("backup --db sqlite://{} ", installed(&db))), "{}", its("ExecStart"));
    assert!(its("ExecStart").contains(&format!("--out {}/as-capone-", installed(backup_dir))));
    assert!(backup_dir.starts_with(db.parent().unwrap()), "{backup_dir:?}: in the server's state directory");
    for key in ["DynamicUser", "StateDirectory", "ProtectSystem", "ReadWritePaths", "NoNewPrivileges", "UMask"] {
        assert_eq!(its(key), one(key), "{key}: as the server's");
    }
    assert_eq!(its("User"), "as-capone", "the server's dynamic user (its unit's name)");
    let timer = unit_settings(&read("deploy/as-capone-backup.timer"));
    assert_eq!(timer["OnCalendar"], ["hourly"]);
    assert_eq!(timer["Persistent"], ["true"]);

    let nginx = read("deploy/nginx/as-capone.conf");
    assert!(nginx.contains(&format!("server {};", config.listen)), "the proxy's upstream is the server");
    assert!(nginx.contains("proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;"));
    assert!(nginx.contains("ssl_certificate ") && nginx.contains("listen 443 ssl"));
    assert!(nginx.contains(&format!("client_max_body_size {}k;", config.body_limit_bytes / 1024)));
}

#[test]
fn systemd_accepts_the_units() {
    if Command::new("systemd-analyze").arg("--version").output().is_err() {
        eprintln!("skipped: systemd-analyze is not installed here, the unit files are not verified");
        return;
    }
    // The units as installed, but with this build's executable, which exists here.
    let dir = tempfile::tempdir().unwrap();
    let names = ["as-capone.service", "as-capone-backup.service", "as-capone-backup.timer"];
    for name in names {
        let unit = read(&format!("deploy/{name}")).replace("/usr/local/bin/as-capone", env!("CARGO_BIN_EXE_as-capone"));
        std::fs::write(dir.path().join(name), unit).unwrap();
    }
    let out = Command::new("systemd-analyze")
        .args(["verify", "--man=no"])
        .args(names.map(|n| dir.path().join(n)))
        .output()
        .unwrap();
    let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{said}");
    // verify exits 0 on an unknown key or system call group, and says so.
    let about_ours: Vec<_> = said.lines().filter(|l| names.iter().any(|n| l.contains(n))).collect();
    assert!(about_ours.is_empty(), "systemd-analyze verify: {about_ours:?}");
}

/// Runs `command` (a server) with its log in a file until it listens,
/// asks it for a page, stops it with SIGTERM and returns its log lines.
fn log_until_stopped(command: &mut Command, dir: &Path) -> Vec<String> {
    let log = dir.join("server.log");
    let mut child: Child = command.stdout(Stdio::null()).stderr(std::fs::File::create(&log).unwrap()).spawn().unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let addr = loop {
        let text = std::fs::read_to_string(&log).unwrap();
        if let Some(rest) = text.split("listening on http://").nth(1) {
            break rest.split([',', ' ', '"']).next().unwrap().to_string();
        }
        assert!(child.try_wait().unwrap().is_none() && Instant::now() < deadline, "no start: {text}");
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut page = String::new();
    let mut stream = std::net::TcpStream::connect(&addr).unwrap();
    std::io::Write::write_all(&mut stream, b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").unwrap();
    stream.read_to_string(&mut page).unwrap();
    assert!(page.starts_with("HTTP/1.1 200"), "{page}");
    // SAFETY: kill(2) on our own child's pid, with a plain signal number.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGTERM) }, 0);
    let deadline = Instant::now() + Duration::from_secs(30);
    while child.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "SIGTERM did not stop the server");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::fs::read_to_string(&log).unwrap().lines().map(str::to_string).collect()
}

/// Every line is a JSON object with a timestamp, a level, a target and a
/// message at the top level; the start line, the new key's WARN line (with
/// its `file` field) and the shutdown are among them.
fn assert_json_lines(lines: &[String], key_file: &Path) {
    assert!(lines.len() >= 3, "{lines:?}");
    let mut events = Vec::new();
    for line in lines {
        let event: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
        let field = |k: &str| event.get(k).and_then(Value::as_str).unwrap_or_else(|| panic!("no {k}: {line}"));
        let timestamp = field("timestamp");
        assert!(timestamp.len() >= 20 && &timestamp[4..5] == "-" && &timestamp[10..11] == "T", "{line}");
        assert!(["TRACE", "DEBUG", "INFO", "WARN", "ERROR"].contains(&field("level")), "{line}");
        assert!(!field("target").is_empty() && !field("message").is_empty(), "{line}");
        events.push(event);
    }
    let listening = events.iter().find(|e| e["message"].as_str().unwrap().contains("listening on http://"));
    let listening = listening.expect("the start line");
    assert_eq!(listening["level"], "INFO");
    assert!(listening["target"].as_str().unwrap().starts_with("as_capone_server"), "{listening}");
    let key = key_file.display().to_string();
    let new_key = events.iter().find(|e| e["level"] == "WARN" && e["file"] == key.as_str());
    assert!(new_key.is_some(), "the new key's warning, its file a field of its own: {lines:?}");
}

#[test]
fn log_format_json_writes_one_json_object_per_line_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("table.toml"), common::BLOCKS_OF_2000).unwrap();
    let db = testkit::sqlite_url(dir.path(), "logs.db");
    let mut command = testkit::serve_command(common::exe(), dir.path(), &db, &["--log-format", "json"]);
    let lines = log_until_stopped(&mut command, dir.path());
    assert_json_lines(&lines, &common::key_file(dir.path()));
    // A format the server does not write is refused, with the two it does.
    let out = Command::new(common::exe()).args(["serve", "--log-format", "xml"]).output().unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && said.contains(r#"log format is "text" or "json", not "xml""#), "{said}");
}

#[test]
fn the_log_format_environment_variable_writes_json_lines_on_postgres() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let Some(db) = rt.block_on(TestDb::create()) else { return };
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("table.toml"), common::BLOCKS_OF_2000).unwrap();
    let mut command = testkit::serve_command(common::exe(), dir.path(), &db.url, &[]);
    command.env("AS_CAPONE_LOG_FORMAT", "json");
    let lines = log_until_stopped(&mut command, dir.path());
    assert_json_lines(&lines, &common::key_file(dir.path()));
    rt.block_on(db.drop_db());
}

//! Releases and upgrades (docs/upgrading.md): the version shown, a
//! database newer than the binary or with an edited migration refused,
//! changing nothing, and every release's fixture upgraded by this build
//! with every ticket, balance, record and the audit chain unchanged.
//!
//! A release's fixture (`tests/fixtures/releases/VERSION/`) is written by
//! that release's own `make_release_fixture` (ignored here; run by
//! `tests/fixtures/releases/make.sh`): a server of that release filled over
//! its HTTP API, its database dumped as SQL text (`sqlite3 .dump`,
//! `pg_dump --no-owner --no-privileges --inserts`), its server key, and
//! `BACKEND.json`: the handles of what it made (players' tokens, tickets,
//! paper serials and codes), every answer the API gave about them, the
//! audit log's rows once sealed and the ledger's sums.

use crate::helpers::*;
use crate::money::play_out;
use crate::paper::{emit_paper, lost, pick, play_plan, redeem_ok, sell, take, won};
use engine::{Event, Next};
use record::{Record, verify, verify_against};
use serde_json::{Value, json};
use std::collections::HashSet;
use std::path::PathBuf;

/// The folder of every release's fixture.
fn releases() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../server/tests/fixtures/releases"))
}

fn backend_name() -> &'static str {
    match crate::helpers::backend() {
        Backend::Sqlite => "sqlite",
        Backend::Postgres => "postgres",
    }
}

/// The audit log's rows, every column.
const AUDIT_ROWS: &str =
    "SELECT id, created_ms, kind, data_json, chain_pos, prev_hash, hash FROM audit_log ORDER BY id";

/// Every account's balance and the sum and count of its ledger entries.
const LEDGER_ROWS: &str = "SELECT a.id, a.name, a.kind, a.balance_cents,
       CAST(COALESCE((SELECT SUM(l.amount_cents) FROM ledger_entries l WHERE l.account_id = a.id), 0) AS BIGINT) AS total,
       (SELECT COUNT(*) FROM ledger_entries l WHERE l.account_id = a.id) AS entries
  FROM accounts a ORDER BY a.id";

/// What the API answers about the fixture's `handles`: each player's
/// account, limits and tickets, each ticket and its record, each paper
/// ticket as a shop validates it, and the emissions (desk and public).
async fn observe(app: &TestApp, handles: &Value) -> Value {
    let get = |path: String, token: Option<String>| async move {
        let r = app.get(&path, token.as_deref()).await;
        assert_eq!(r.status, 200, "GET {path}: {}", r.json);
        r.json
    };
    let mut players = Vec::new();
    for token in handles["players"].as_array().unwrap() {
        let t = token.as_str().map(str::to_string);
        players.push(json!({
            "me": get("/api/me".into(), t.clone()).await,
            "limits": get("/api/me/limits".into(), t.clone()).await,
            "tickets": get("/api/tickets".into(), t).await,
        }));
    }
    let mut tickets = Vec::new();
    for h in handles["tickets"].as_array().unwrap() {
        let (id, t) = (h["id"].as_str().unwrap(), h["token"].as_str().map(str::to_string));
        let ticket = get(format!("/api/tickets/{id}"), t.clone()).await;
        let record = get(format!("/api/tickets/{id}/record"), t).await;
        tickets.push(json!({"ticket": ticket, "record": record}));
    }
    let mut paper = Vec::new();
    for p in handles["paper"].as_array().unwrap() {
        let r = app.retail("validate", Some(SHOP_A_TOKEN), p["serial"].as_str().unwrap()).await;
        assert_eq!(r.status, 200, "{}", r.json);
        paper.push(r.json);
    }
    json!({
        "players": players,
        "tickets": tickets,
        "paper": paper,
        "desk": get("/api/admin/emissions".into(), Some(OPERATOR.into())).await,
        "emissions": get("/api/emissions".into(), None).await,
    })
}

/// Every value of `old` is in `new`, equal (an object of `new` may have
/// more keys: a newer release may add fields; an array has the same
/// length and each element contains the old one).
fn assert_contains(old: &Value, new: &Value, path: &str) {
    match (old, new) {
        (Value::Object(o), Value::Object(n)) => {
            for (k, v) in o {
                let there = n.get(k).unwrap_or_else(|| panic!("{path}.{k} is gone after the upgrade"));
                assert_contains(v, there, &format!("{path}.{k}"));
            }
        }
        (Value::Array(o), Value::Array(n)) => {
            assert_eq!(o.len(), n.len(), "{path}: as many elements after the upgrade");
            for (i, (a, b)) in o.iter().zip(n).enumerate() {
                assert_contains(a, b, &format!("{path}[{i}]"));
            }
        }
        _ => assert_eq!(old, new, "{path} changed in the upgrade"),
    }
}

/// Whether a plan plays an Extra duel (its first game ends in a draw for one).
fn extra(p: &Foreseen) -> bool {
    p.all_events().any(|e| matches!(e, Event::GameOver { next: Next::ExtraDraw, .. }))
}

/// Buys a ticket of player `token` whose plan satisfies `want` and plays
/// its first `upto` actions (all of them: `None`); its handle.
async fn online(app: &TestApp, token: &str, want: impl Fn(&Foreseen) -> bool, upto: Option<usize>) -> Value {
    let (t, plan) = find_ticket(app, token, 40, want).await;
    let id = t["id"].as_str().unwrap();
    let n = upto.unwrap_or(plan.actions.len());
    app.play(token, id, &plan.actions[..n]).await;
    json!({"id": id, "token": token})
}

/// Fills a server's database as a release would be used: online tickets
/// in every state, paper tickets sold, paid, owed and sold unplayed,
/// players with limits; the handles of what it made.
async fn fill(app: &TestApp) -> Value {
    let (a, b) = (app.register().await, app.register().await);
    let r = app.client.put(format!("{}/api/me/limits", app.url)).bearer_auth(&a);
    let r = app.send(r.json(&json!({"tickets_per_day": 40, "spend_per_week_cents": 20_000}))).await;
    assert_eq!(r.status, 200, "{}", r.json);
    let upto_extra = |p: &Foreseen| p.first(|e| matches!(e, Event::GameOver { next: Next::ExtraDraw, .. }));
    let mut tickets = vec![
        online(app, &a, |p| p.game.result().unwrap().prize_cents > 0 && !extra(p), None).await,
        online(app, &a, |p| p.game.result().unwrap().prize_cents == 0 && !extra(p), None).await,
        online(app, &a, extra, None).await,
        online(app, &b, |p| p.actions.len() > 3, Some(2)).await,
    ];
    let (t, plan) = find_ticket(app, &b, 40, extra).await;
    let at = upto_extra(&plan).unwrap();
    app.play(&b, t["id"].as_str().unwrap(), &plan.actions[..=at]).await;
    tickets.push(json!({"id": t["id"], "token": b}));
    let unplayed = app.buy(&b).await;
    tickets.push(json!({"id": unplayed["id"], "token": b}));

    let emission = emit_paper(app, 1).await;
    let printed = app.print_file(emission, 1).await;
    let mut taken = HashSet::new();
    let mut paper = Vec::new();
    // Won and paid, won and owed, lost: redeemed and played.
    for (want, shop, pay) in [(won as fn(&Foreseen) -> bool, 0, true), (won, 1, false), (lost, 1, false)] {
        let (p, plan) = pick(&printed, &mut taken, want);
        let (name, token) = [(SHOP_A, SHOP_A_TOKEN), (SHOP_B, SHOP_B_TOKEN)][shop];
        sell(app, token, name, &p.serial).await;
        let (_, ticket_token) = redeem_ok(app, &p.code, Some(&a)).await;
        play_plan(app, &ticket_token, &p.serial, &plan).await;
        if pay {
            let r = app.retail("pay", Some(token), &p.serial).await;
            assert_eq!(r.status, 200, "{}", r.json);
        }
        tickets.push(json!({"id": p.serial, "token": ticket_token}));
        paper.push(json!({"serial": p.serial, "code": p.code}));
    }
    // Sold, not scratched yet; printed and never sold.
    let sold = take(&printed, &mut taken);
    sell(app, SHOP_B_TOKEN, SHOP_B, &sold.serial).await;
    paper.push(json!({"serial": sold.serial, "code": sold.code}));
    let unsold = take(&printed, &mut taken);
    paper.push(json!({"serial": unsold.serial, "code": unsold.code}));
    json!({"players": [a, b], "tickets": tickets, "paper": paper})
}

both! {
/// Writes this release's fixture for this test binary's database
/// (`tests/fixtures/releases/VERSION/BACKEND.{sql,key,json}`); run by
/// `tests/fixtures/releases/make.sh` when a release is made.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "writes a release's fixture: run by tests/fixtures/releases/make.sh"]
async fn make_release_fixture() {
    let Some(app) = spawn_app().await else { return };
    let handles = fill(&app).await;
    let audit = app.sealed_audit_check().await;
    assert_eq!((audit.first_broken, audit.unsealed), (None, 0), "{audit:?}");
    assert!(app.app.store().check_ledger().await.unwrap().is_sound());
    let facts = json!({
        "release": server::VERSION,
        "schema": server::schema_version(),
        "backend": backend_name(),
        "handles": handles,
        "observed": observe(&app, &handles).await,
        "audit": app.dump(AUDIT_ROWS).await,
        "ledger": app.dump(LEDGER_ROWS).await,
    });
    let url = app.db_url.clone();
    let key = std::fs::read_to_string(app.key_file()).unwrap();
    let db = app.stop().await;
    let dump = match crate::helpers::backend() {
        Backend::Sqlite => command_output("sqlite3", &[url.trim_start_matches("sqlite://"), ".dump"]),
        Backend::Postgres => {
            command_output("pg_dump", &["--no-owner", "--no-privileges", "--inserts", "--dbname", &url])
        }
    };
    let dir = releases().join(server::VERSION);
    std::fs::create_dir_all(&dir).unwrap();
    let name = backend_name();
    std::fs::write(dir.join(format!("{name}.sql")), dump).unwrap();
    std::fs::write(dir.join(format!("{name}.key")), key).unwrap();
    std::fs::write(dir.join(format!("{name}.json")), serde_json::to_string_pretty(&facts).unwrap() + "\n").unwrap();
    db.remove().await;
}
}

fn command_output(program: &str, args: &[&str]) -> String {
    let out = std::process::Command::new(program).args(args).output().unwrap_or_else(|e| panic!("{program}: {e}"));
    assert!(out.status.success(), "{program}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// A fresh database holding a release's dump, with its server key.
async fn restore(release: &std::path::Path) -> Option<TestDatabase> {
    let db = TestDatabase::create().await?;
    let name = backend_name();
    let sql = std::fs::read_to_string(release.join(format!("{name}.sql"))).unwrap();
    // psql's meta-commands (`\restrict` of newer pg_dumps) are not SQL.
    let sql: String = sql.lines().filter(|l| !l.starts_with('\\')).map(|l| format!("{l}\n")).collect();
    exec_script(&db.url, sql).await;
    // The key file the owner's alone, as a server accepts it (a checked-out
    // fixture is 0644): written 0600 from its creation.
    let key = std::fs::read(release.join(format!("{name}.key"))).unwrap();
    let mut options = std::fs::OpenOptions::new();
    std::os::unix::fs::OpenOptionsExt::mode(options.write(true).create_new(true), 0o600);
    std::io::Write::write_all(&mut options.open(&db.key_file).unwrap(), &key).unwrap();
    Some(db)
}

/// Runs a SQL script on the database at `url` (one connection).
async fn exec_script(url: &str, sql: String) {
    use sqlx::Connection;
    let sql = sqlx::AssertSqlSafe(sql);
    match crate::helpers::backend() {
        Backend::Sqlite => {
            let opts: sqlx::sqlite::SqliteConnectOptions = url.parse().unwrap();
            let mut conn = sqlx::SqliteConnection::connect_with(&opts.create_if_missing(true)).await.unwrap();
            sqlx::raw_sql(sql).execute(&mut conn).await.expect("the dump restores");
            conn.close().await.unwrap();
        }
        Backend::Postgres => {
            let mut conn = sqlx::PgConnection::connect(url).await.unwrap();
            sqlx::raw_sql(sql).execute(&mut conn).await.expect("the dump restores");
            conn.close().await.unwrap();
        }
    }
}

/// Every finished ticket's record verifies, against the root the server publishes.
async fn records_verify(app: &TestApp, observed: &Value) -> usize {
    let mut verified = 0;
    for t in observed["tickets"].as_array().unwrap() {
        if t["ticket"]["ticket"]["phase"] != "finished" {
            continue;
        }
        let record: Record = serde_json::from_value(t["record"].clone()).unwrap();
        assert!(verify(&record).is_valid(), "{}", verify(&record));
        let root = crate::fairness::published_root(app, record.emission, record.block).await;
        let v = verify_against(&record, Some(&root));
        assert!(v.is_valid(), "{v}");
        verified += 1;
    }
    verified
}

both! {
/// Every release's fixture, upgraded by this build: the same answers, the
/// same audit log (then sealed on, unbroken), the same ledger; and play
/// goes on: the ticket left in play is finished, a new one is bought and
/// finished, the paper ticket sold unplayed is scratched and played.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_release_upgrades_keeping_every_ticket_balance_record_and_the_audit_chain() {
    let mut found: Vec<PathBuf> = std::fs::read_dir(releases()).unwrap().map(|e| e.unwrap().path()).collect();
    found.retain(|p| p.join(format!("{}.json", backend_name())).exists());
    found.sort();
    assert!(found.iter().any(|p| p.ends_with("0.1.0")), "the fixture of release 0.1.0 is there: {found:?}");
    for release in found {
        let facts: Value =
            serde_json::from_str(&std::fs::read_to_string(release.join(format!("{}.json", backend_name()))).unwrap())
                .unwrap();
        let Some(db) = restore(&release).await else { return };
        let app = spawn_app_on(db, |_| {}).await;
        let v = app.admin_get("/api/admin/version").await;
        assert_eq!(v.json["database_schema"], server::schema_version(), "{}: migrated: {}", release.display(), v.json);
        assert!(facts["schema"].as_i64().unwrap() <= server::schema_version());

        let handles = &facts["handles"];
        let observed = observe(&app, handles).await;
        // A player's usage counts the purchases of the last day and week,
        // from now: it shrinks as the fixture ages (its tickets were sold
        // when the release was made), so it is compared apart: never more
        // than then, and the rest of the answers equal.
        let mut then = facts["observed"].clone();
        for (i, player) in then["players"].as_array_mut().into_iter().flatten().enumerate() {
            if let Some(used) = player["limits"].as_object_mut().and_then(|l| l.remove("used")) {
                let now = &observed["players"][i]["limits"]["used"];
                for (k, was) in used.as_object().expect("usage is an object") {
                    let (was, is) =
                        (was.as_i64().unwrap(), now[k].as_i64().unwrap_or_else(|| panic!("used.{k}: {now}")));
                    assert!(
                        (0..=was).contains(&is),
                        "players[{i}].limits.used.{k}: {is} now, {was} when the fixture was made"
                    );
                }
            }
        }
        assert_contains(&then, &observed, "observed");
        assert!(records_verify(&app, &observed).await >= 6, "the finished tickets' records verify");
        let audit = app.dump(AUDIT_ROWS).await;
        let before: Vec<String> = serde_json::from_value(facts["audit"].clone()).unwrap();
        assert!(audit.len() >= before.len(), "the audit log keeps its {} rows", before.len());
        for (old, new) in before.iter().zip(&audit) {
            assert_eq!(old, new, "the audit log's rows are unchanged");
        }
        // Every account and its entries unchanged; a later migration may
        // add house accounts (0009: house:payment_centre), with no entry.
        let ledger = app.dump(LEDGER_ROWS).await;
        let before = serde_json::from_value::<Vec<String>>(facts["ledger"].clone()).unwrap();
        assert!(ledger.len() >= before.len(), "{ledger:?}");
        assert_eq!(ledger[..before.len()], before[..], "the ledger's accounts and entries are unchanged");
        for added in &ledger[before.len()..] {
            assert!(
                added.contains("kind=\"house\"|") && added.ends_with("|balance_cents=0|total=0|entries=0|"),
                "an account added by a migration is a house account without entries: {added}"
            );
        }

        // Play goes on.
        let in_play = handles["tickets"].as_array().unwrap().iter().find(|h| {
            let t = &facts["observed"]["tickets"].as_array().unwrap();
            t.iter().any(|o| o["ticket"]["ticket"]["id"] == h["id"] && o["ticket"]["ticket"]["phase"] != "finished")
        });
        let h = in_play.expect("a ticket left in play");
        let token = h["token"].as_str().unwrap();
        let t =
            app.get(&format!("/api/tickets/{}", h["id"].as_str().unwrap()), Some(token)).await.json["ticket"].clone();
        assert_eq!(play_out(&app, token, &t).await["phase"], "finished");
        let player = handles["players"][0].as_str().unwrap();
        let balance = app.balance(player).await;
        let end = play_out(&app, player, &app.buy(player).await).await;
        assert_eq!(app.balance(player).await, balance - 300 + end["result"]["prize_cents"].as_i64().unwrap());
        let sold = handles["paper"].as_array().unwrap().iter().find(|p| {
            facts["observed"]["paper"]
                .as_array()
                .unwrap()
                .iter()
                .any(|o| o["serial"] == p["serial"] && o["status"] == "sold")
        });
        let (ticket, ticket_token) = redeem_ok(&app, sold.unwrap()["code"].as_str().unwrap(), None).await;
        assert_eq!(play_out(&app, &ticket_token, &ticket).await["phase"], "finished");

        let check = app.sealed_audit_check().await;
        assert_eq!((check.first_broken, check.unsealed), (None, 0), "{check:?}");
        assert!(check.entries as usize > before.len());
        assert!(app.app.store().check_ledger().await.unwrap().is_sound());
        app.shutdown().await;
    }
}
}

both! {
/// `/healthz` and the operator's desk show the binary's version and schema
/// version, and the desk the database's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_version_is_shown_by_healthz_and_the_desk() {
    let Some(app) = spawn_app().await else { return };
    let h = app.get("/healthz", None).await;
    assert_eq!(
        h.json,
        json!({"status": "ok", "version": env!("CARGO_PKG_VERSION"), "schema": server::schema_version()})
    );
    let v = app.admin_get("/api/admin/version").await;
    assert_eq!(v.status, 200, "{}", v.json);
    let schema = server::schema_version();
    assert_eq!(v.json, json!({"version": server::VERSION, "schema": schema, "database_schema": schema}));
    assert_eq!(app.get("/api/admin/version", None).await.status, 401);
    let player = app.register().await;
    assert_eq!(app.get("/api/admin/version", Some(&player)).await.status, 403);
    app.shutdown().await;
}
}

/// Runs `change` on the database of `app`, stops it and starts a server
/// on it again, which must refuse, leaving the migrations' table and the
/// tickets as they were; the refusal's text.
async fn refused(app: TestApp, change: &str) -> String {
    app.exec_sql(change).await.unwrap();
    let migrations = "SELECT version, description, success FROM _sqlx_migrations ORDER BY version";
    let tickets = "SELECT id, serial, status FROM tickets ORDER BY id";
    let (rows_before, tickets_before) = (app.dump(migrations).await, app.dump(tickets).await);
    let (db_url, backend) = (app.db_url.clone(), app.backend);
    let db = app.stop().await;
    let (db, error) = match try_spawn_app_on(db, server::ServerSeeds::InsecureFixedForTests(SEED), TABLE, |_| {}).await
    {
        Ok(_) => panic!("a server started on a database it must refuse ({change})"),
        Err(refusal) => refusal,
    };
    // The database is as it was.
    assert_eq!(dump_at(backend, &db_url, migrations).await, rows_before, "nothing was changed");
    assert_eq!(dump_at(backend, &db_url, tickets).await, tickets_before, "nothing was changed");
    db.remove().await;
    format!("{error:#}")
}

both! {
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_newer_than_the_binary_is_refused_and_changes_nothing() {
    let Some(app) = spawn_app().await else { return };
    let newer = "INSERT INTO _sqlx_migrations (version, description, installed_on, success, checksum, execution_time)
                 VALUES (9999, 'from a newer release', CURRENT_TIMESTAMP, TRUE, X'00', 1)";
    let newer = if app.backend == Backend::Postgres { newer.replace("X'00'", "'\\x00'::bytea") } else { newer.into() };
    let error = refused(app, &newer).await;
    let schema = server::schema_version();
    let want = format!(
        "this database has schema version 9999, newer than this binary's {schema} (as-capone {}): use a newer binary",
        server::VERSION
    );
    assert!(error.contains(&want), "{error}");
    assert!(error.contains("nothing was changed"), "{error}");
}
}

both! {
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_whose_applied_migration_was_edited_is_refused_with_a_clear_message() {
    let Some(app) = spawn_app().await else { return };
    let change = if app.backend == Backend::Postgres {
        "UPDATE _sqlx_migrations SET checksum = '\\x00'::bytea WHERE version = 3"
    } else {
        "UPDATE _sqlx_migrations SET checksum = X'00' WHERE version = 3"
    };
    let error = refused(app, change).await;
    assert!(error.contains("migration 3 applied to this database differs from the one this binary"), "{error}");
    assert!(!error.contains("previously applied but has been modified"), "not sqlx's words: {error}");
}
}

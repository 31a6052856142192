//! `as-capone keys` (docs/keys.md) with the binary, on SQLite and
//! PostgreSQL: `keys new` makes key 1, a server runs on the key directory,
//! `keys new` and `keys use` rotate to key 2, and then `keys list` shows
//! which emissions use each key, and `as-capone verify` passes on a game of
//! each key's emission.

use crate::common;

use serde_json::{Value, json};
use std::path::Path;
use std::process::Command;

const OPERATOR: &str = "operator-token-for-the-keys-test";

/// Runs `as-capone ARGS`: success, and stdout with stderr.
fn run(args: &[&str]) -> (bool, String) {
    let out = Command::new(common::exe()).args(args).output().unwrap();
    (out.status.success(), String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr))
}

/// Buys a ticket and plays it to its end; its record and the published
/// emissions, saved in `dir` as `NAME.json` and `NAME-emissions.json`.
async fn finished_record(url: &str, dir: &Path, name: &str) -> (u64, std::path::PathBuf, std::path::PathBuf) {
    let c = reqwest::Client::new();
    let player: Value =
        c.post(format!("{url}/api/players")).json(&json!({})).send().await.unwrap().json().await.unwrap();
    let token = player["token"].as_str().unwrap();
    let r = c.post(format!("{url}/api/tickets")).bearer_auth(token).json(&json!({})).send().await.unwrap();
    let r: Value = r.json().await.unwrap();
    let mut t = r["ticket"].clone();
    let serial = t["serial"].as_str().unwrap().to_string();
    while t["phase"] != "finished" {
        let mut body = common::next_action(&t);
        if t["seq"] == 0 {
            body["client_seed"] = json!("keys-test");
        }
        let r = c.post(format!("{url}/api/tickets/{serial}/actions")).bearer_auth(token).json(&body).send().await;
        let r: Value = r.unwrap().json().await.unwrap();
        t = r["ticket"].clone();
    }
    let record = c.get(format!("{url}/api/tickets/{serial}/record")).bearer_auth(token).send().await.unwrap();
    let record: Value = record.json().await.unwrap();
    let emissions: Value = c.get(format!("{url}/api/emissions")).send().await.unwrap().json().await.unwrap();
    let (file, list) = (dir.join(format!("{name}.json")), dir.join(format!("{name}-emissions.json")));
    std::fs::write(&file, record.to_string()).unwrap();
    std::fs::write(&list, emissions.to_string()).unwrap();
    (record["emission"].as_u64().unwrap(), file, list)
}

fn rotation_with_the_binary(db: &str) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("table.toml"), common::BLOCKS_OF_2000).unwrap();
    let keys = dir.path().join("keys");
    let keys_arg = keys.to_str().unwrap();
    let (ok, text) = run(&["keys", "new", "--key-dir", keys_arg]);
    assert!(ok && text.starts_with("key 1 fingerprint "), "{text}");
    let one = text.split_whitespace().nth(3).unwrap().to_string();
    let serve = ["--initial-blocks", "1", "--demo-token", "", "--operator-tokens", OPERATOR, "--key-dir", keys_arg];
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();

    let mut server = common::spawn_server(dir.path(), db, &serve).wait_listening("keys, key 1");
    let old = rt.block_on(finished_record(&server.url, dir.path(), "old"));
    server.kill();
    let (ok, text) = run(&["keys", "new", "--key-dir", keys_arg]);
    assert!(ok && text.starts_with("key 2 fingerprint "), "{text}");
    let two = text.split_whitespace().nth(3).unwrap().to_string();
    let (ok, text) = run(&["keys", "use", "2", "--key-dir", keys_arg, "--db", db]);
    assert!(ok && text.contains("key 2") && text.contains("now current"), "{text}");

    let mut server = common::spawn_server(dir.path(), db, &serve).wait_listening("keys, key 2");
    rt.block_on(async {
        let c = reqwest::Client::new();
        let close = c.post(format!("{}/api/admin/emissions/1/close", server.url)).bearer_auth(OPERATOR);
        assert_eq!(close.json(&json!({})).send().await.unwrap().status(), 200);
        let r = c
            .post(format!("{}/api/admin/emissions", server.url))
            .bearer_auth(OPERATOR)
            .json(&json!({"table": common::BLOCKS_OF_2000, "blocks": 1, "channel": "online"}))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 201);
    });
    let new = rt.block_on(finished_record(&server.url, dir.path(), "new"));
    server.kill();
    assert_eq!((old.0, new.0), (1, 2));

    let (ok, text) = run(&["keys", "list", "--db", db, "--json"]);
    assert!(ok, "{text}");
    let list: Value = serde_json::from_str(&text).unwrap();
    let ring = list["keys"].as_array().unwrap();
    assert_eq!(ring.len(), 2, "{list}");
    assert_eq!(
        (&ring[0]["key_id"], &ring[0]["fingerprint"], &ring[0]["current"]),
        (&json!(1), &json!(one), &json!(false))
    );
    assert_eq!(
        (&ring[1]["key_id"], &ring[1]["fingerprint"], &ring[1]["current"]),
        (&json!(2), &json!(two), &json!(true))
    );
    assert!(ring[0]["retired_ms"].is_i64(), "{list}");
    assert_eq!(ring[0]["emissions"][0][0], 1, "emission 1 uses key 1: {list}");
    assert_eq!(ring[1]["emissions"][0][0], 2, "emission 2 uses key 2: {list}");
    let (ok, text) = run(&["keys", "list", "--db", db]);
    assert!(ok && text.contains("key 2 fingerprint") && text.contains("current"), "{text}");
    for (_, record, emissions) in [old, new] {
        let (ok, text) = run(&["verify", record.to_str().unwrap(), "--manifest", emissions.to_str().unwrap()]);
        assert!(ok && text.contains("is the one published in"), "{text}");
    }
}

#[test]
fn keys_new_use_and_list_rotate_the_ring_and_verify_passes_on_games_of_both_keys_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    rotation_with_the_binary(&format!("sqlite://{}", dir.path().join("keys.db").display()));
}

#[test]
fn keys_new_use_and_list_rotate_the_ring_and_verify_passes_on_games_of_both_keys_postgres() {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let Some(db) = rt.block_on(testkit::TestDb::create()) else { return };
    rotation_with_the_binary(&db.url);
    rt.block_on(db.drop_db());
}

/// A key file its group or others may read stops `serve` at start, naming
/// the file, its mode and the fix (the second outside audit), before the database is
/// created. A key handed over by systemd (`LoadCredential=`: mode 0400 and
/// the service's ACL, which `stat` shows as 0440, under
/// `$CREDENTIALS_DIRECTORY`) is read as it is; `chmod 600` as the message
/// says, and it starts.
#[cfg(unix)]
#[test]
fn a_key_file_others_may_read_stops_serve_unless_systemd_handed_it_over() {
    use std::os::unix::fs::PermissionsExt;
    use testkit::{Spawned, serve_command, sqlite_url};
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("table.toml"), common::BLOCKS_OF_2000).unwrap();
    let key = common::key_file(dir.path());
    std::fs::write(&key, format!("{}\n", "5a".repeat(32))).unwrap();
    let chmod = |mode: u32| std::fs::set_permissions(&key, std::fs::Permissions::from_mode(mode)).unwrap();
    let db = sqlite_url(dir.path(), "modes.db");
    let serve = |credentials: bool| {
        let mut command = serve_command(common::exe(), dir.path(), &db, &["--demo-token", ""]);
        if credentials {
            command.env("CREDENTIALS_DIRECTORY", dir.path());
        } else {
            command.env_remove("CREDENTIALS_DIRECTORY");
        }
        Spawned::new(&mut command).unwrap().try_wait_listening(None, std::time::Duration::from_secs(60))
    };
    chmod(0o644);
    let refused = serve(false).err().expect("serve refuses a key file of mode 0644");
    let file = key.display();
    assert!(refused.contains(&format!("the key file {file} has mode 0644")), "{refused}");
    assert!(refused.contains(&format!("chmod 600 {file}")), "{refused}");
    assert!(!dir.path().join("modes.db").exists(), "refused before the database is created");
    chmod(0o440);
    drop(serve(true).unwrap_or_else(|log| panic!("a systemd credential is read as it is: {log}")));
    chmod(0o600);
    drop(serve(false).unwrap_or_else(|log| panic!("0600 starts: {log}")));
}

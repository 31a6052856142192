//! The crash test: the real `as-capone serve` binary is killed with SIGKILL
//! in the middle of many concurrent games, restarted on the same database,
//! and nothing that was answered is lost ("Nothing is shown to a player
//! before it is durable", guarantees 3 and 4): every answered action gives
//! back the identical bytes, every ticket, draw and cent is there, every
//! unfinished game continues where it stopped, and the ledger and audit
//! chain are sound.

use crate::common;

use record::{Record, verify};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const TABLE: &str = common::BLOCKS_OF_2000;
const START: i64 = 1_000_000;

/// Starts the server on the test's table and database.
fn start(dir: &std::path::Path) -> common::Server {
    let start = START.to_string();
    common::start_server(
        dir,
        "crash.db",
        &["--start-balance-cents", &start, "--demo-token", "", "--initial-blocks", "2"],
    )
}

/// What a client was told: (ticket id, seq, request body, answer bytes).
type Seen = Arc<Mutex<Vec<(String, u64, Value, Vec<u8>)>>>;

async fn post(
    c: &reqwest::Client,
    url: &str,
    token: Option<&str>,
    body: &Value,
) -> Result<(u16, Vec<u8>), reqwest::Error> {
    let mut r = c.post(url).json(body);
    if let Some(t) = token {
        r = r.bearer_auth(t);
    }
    let resp = r.send().await?;
    let status = resp.status().as_u16();
    Ok((status, resp.bytes().await?.to_vec()))
}

/// One player playing games until the server dies.
async fn player(url: String, seen: Seen, tokens: Arc<Mutex<Vec<String>>>) {
    let c = reqwest::Client::new();
    let Ok((201, b)) = post(&c, &format!("{url}/api/players"), None, &json!({})).await else { return };
    let token = serde_json::from_slice::<Value>(&b).unwrap()["token"].as_str().unwrap().to_string();
    tokens.lock().unwrap().push(token.clone());
    loop {
        let Ok((201, b)) = post(&c, &format!("{url}/api/tickets"), Some(&token), &json!({})).await else { return };
        let mut t = serde_json::from_slice::<Value>(&b).unwrap()["ticket"].clone();
        let id = t["id"].as_str().unwrap().to_string();
        while t["phase"] != "finished" {
            let body = common::next_action(&t);
            let Ok((status, bytes)) = post(&c, &format!("{url}/api/tickets/{id}/actions"), Some(&token), &body).await
            else {
                return;
            };
            assert_eq!(status, 200, "{}", String::from_utf8_lossy(&bytes));
            t = serde_json::from_slice::<Value>(&bytes).unwrap()["ticket"].clone();
            seen.lock().unwrap().push((id.clone(), body["seq"].as_u64().unwrap(), body, bytes));
        }
    }
}

#[test]
fn sigkill_in_the_middle_loses_nothing_that_was_answered() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("table.toml"), TABLE).unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let mut server = start(dir.path());
    let url = server.url.clone();
    let seen: Seen = Arc::default();
    let tokens: Arc<Mutex<Vec<String>>> = Arc::default();
    rt.block_on(async {
        let tasks: Vec<_> = (0..16).map(|_| tokio::spawn(player(url.clone(), seen.clone(), tokens.clone()))).collect();
        tokio::time::sleep(Duration::from_millis(1500)).await;
        server.sigkill().unwrap(); // SIGKILL: no shutdown, no flush
        for t in tasks {
            t.await.unwrap();
        }
    });
    let seen = seen.lock().unwrap().clone();
    let tokens = tokens.lock().unwrap().clone();
    assert!(seen.len() > 200, "enough actions were answered before the kill: {}", seen.len());

    let mut server = start(dir.path());
    let url = server.url.clone();
    rt.block_on(async {
        let c = reqwest::Client::new();
        // Every answered action is kept: the same request gives the same bytes.
        let mut owner = std::collections::HashMap::new();
        for token in &tokens {
            let list: Value =
                c.get(format!("{url}/api/tickets")).bearer_auth(token).send().await.unwrap().json().await.unwrap();
            for t in list["tickets"].as_array().unwrap() {
                owner.insert(t["id"].as_str().unwrap().to_string(), token.clone());
            }
        }
        for (id, seq, body, bytes) in &seen {
            let token = owner.get(id).unwrap_or_else(|| panic!("ticket {id} is kept"));
            let (status, again) =
                post(&c, &format!("{url}/api/tickets/{id}/actions"), Some(token), body).await.unwrap();
            assert_eq!(status, 200);
            assert_eq!(&again, bytes, "ticket {id} seq {seq}: the answer given before the crash");
        }
        // Every unfinished game continues where it stopped; then every
        // record verifies and every balance adds up.
        for token in &tokens {
            let list: Value =
                c.get(format!("{url}/api/tickets")).bearer_auth(token).send().await.unwrap().json().await.unwrap();
            let tickets = list["tickets"].as_array().unwrap().clone();
            let mut prizes = 0;
            for t in &tickets {
                let id = t["id"].as_str().unwrap();
                let answered = seen.iter().filter(|s| s.0 == id).map(|s| s.1 + 1).max().unwrap_or(0);
                assert!(t["seq"].as_u64().unwrap() >= answered, "ticket {id} kept every answered action");
                let mut t = t.clone();
                while t["phase"] != "finished" {
                    let (status, bytes) =
                        post(&c, &format!("{url}/api/tickets/{id}/actions"), Some(token), &common::next_action(&t))
                            .await
                            .unwrap();
                    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&bytes));
                    t = serde_json::from_slice::<Value>(&bytes).unwrap()["ticket"].clone();
                }
                prizes += t["result"]["prize_cents"].as_i64().unwrap();
                let record: Record = c
                    .get(format!("{url}/api/tickets/{id}/record"))
                    .bearer_auth(token)
                    .send()
                    .await
                    .unwrap()
                    .json()
                    .await
                    .unwrap();
                let v = verify(&record);
                assert!(v.is_valid(), "{v}");
            }
            let me: Value =
                c.get(format!("{url}/api/me")).bearer_auth(token).send().await.unwrap().json().await.unwrap();
            assert_eq!(me["balance_cents"].as_i64().unwrap(), START - 300 * tickets.len() as i64 + prizes);
        }
    });
    server.sigkill().unwrap();

    // The ledger and the audit chain, checked in-process on the same file.
    rt.block_on(async {
        let app =
            common::in_process_app(format!("sqlite://{}", dir.path().join("crash.db").display()), dir.path()).await;
        let ledger = app.store().check_ledger().await.unwrap();
        assert!(ledger.is_sound(), "{ledger:?}");
        let audit = app.store().check_audit_chain().await.unwrap();
        assert_eq!((audit.first_broken, &audit.forged), (None, &None), "{audit:?}");
        app.shutdown().await.unwrap();
    });
}

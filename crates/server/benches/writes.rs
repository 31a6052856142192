//! The storage half of the server's throughput figure: 64 players
//! each playing one whole game (a purchase, then actions until it is
//! finished) at once through [`Store`] on SQLite, without HTTP, with group
//! commit (the server's default) and, as the baseline in the same group,
//! one transaction and one disk sync per request (`group_commit = false`).
//! The end-to-end figure (HTTP, latency percentiles, open loop) is
//! `bench/server-tail.sh`'s; this one isolates the write path so that a
//! change to it can be compared in the same run.
//!
//!   cargo bench -p as-capone-server --bench writes

use as_capone_server::ActionRequest;
use as_capone_server::BuyRequest;
use as_capone_server::Caller;
use as_capone_server::Metrics;
use as_capone_server::{Config, Store};
use as_capone_server::{Keyring, ServerKey};
use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use std::sync::Arc;

const PLAYERS: usize = 64;

/// One whole game of `player`: buy, then play the highest card (or draw)
/// until the game is finished; the number of actions.
async fn one_game(store: Arc<Store>, player: i64) -> usize {
    let answer =
        store.buy_ticket(player, BuyRequest { key: None, stake_limit_required: false }).await.expect("a purchase");
    let mut ticket: Value = serde_json::from_str::<Value>(&answer).expect("JSON")["ticket"].take();
    let serial = ticket["id"].as_str().expect("the ticket's id").to_string();
    let caller = Caller::Player(player);
    let mut actions = 0;
    while ticket["phase"] != "finished" {
        let seq = ticket["seq"].as_u64().expect("seq");
        let body = if ticket["phase"] == "play" {
            // Any order gives the same odds (docs/rules.md); the highest card.
            json!({"seq": seq, "action": "play", "card": ticket["hand"].as_array().and_then(|h| h.last()).expect("a hand")})
        } else {
            json!({"seq": seq, "action": "draw"})
        };
        let request: ActionRequest = serde_json::from_value(body).expect("an action");
        let answer = store.run_action(&caller, &serial, request).await.expect("an action");
        ticket = serde_json::from_str::<Value>(&answer).expect("JSON")["ticket"].take();
        actions += 1;
    }
    actions
}

/// A bootstrapped store (the example table, one block) and its players.
fn store(rt: &tokio::runtime::Runtime, dir: &std::path::Path, group_commit: bool) -> (Arc<Store>, Vec<i64>) {
    rt.block_on(async {
        let config = Config {
            db: format!("sqlite://{}", dir.join("bench.db").display()),
            group_commit,
            initial_blocks: 1,
            demo_token: String::new(),
            start_balance_cents: 1_000_000_000,
            ..Config::default()
        };
        let keys = Keyring::new(ServerKey::from_bytes([7; 32]), None);
        let store = Store::open(&config, Arc::new(Metrics::new()), keys).await.expect("open");
        store.bootstrap(&config, &math::PrizeTable::example()).await.expect("bootstrap");
        let mut players = Vec::new();
        for _ in 0..PLAYERS {
            players.push(store.create_player(None, None).await.expect("a player").player_id);
        }
        (Arc::new(store), players)
    })
}

fn writes(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let mut g = c.benchmark_group("server_writes_64_players_one_game_each");
    g.sample_size(10);
    for (name, group_commit) in [("group_commit", true), ("baseline_one_transaction_per_request", false)] {
        let dir = tempfile::tempdir().unwrap();
        let (store, players) = store(&rt, dir.path(), group_commit);
        g.bench_function(name, |b| {
            b.iter(|| {
                rt.block_on(async {
                    let games: Vec<_> = players.iter().map(|&p| tokio::spawn(one_game(store.clone(), p))).collect();
                    let mut actions = 0;
                    for game in games {
                        actions += game.await.unwrap();
                    }
                    assert!(actions >= PLAYERS * 8, "at least eight cards a game");
                })
            })
        });
        rt.block_on(store.close()).unwrap();
    }
    g.finish();
}

criterion_group!(benches, writes);
criterion_main!(benches);

//! Guarantee 6: records of games played over HTTP verify; changed ones fail.

use crate::helpers::*;
use crate::money::play_out_with;
use record::{Published, Record, verify, verify_against};

both! {
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn guarantee_6_records_of_finished_games_verify_and_tampering_fails() {
    let Some(app) = spawn_app().await else { return };
    let token = app.register().await;
    for i in 0..4 {
        let seed = format!("player-seed-{i}");
        let t = app.buy(&token).await;
        let id = t["id"].as_str().unwrap();
        let unfinished = app.get(&format!("/api/tickets/{id}/record"), Some(&token)).await;
        assert_eq!(unfinished.json["server_seed"], serde_json::Value::Null);
        assert_eq!(unfinished.json["client_seed"], serde_json::Value::Null, "not played yet");
        assert!(!verify(&serde_json::from_value::<Record>(unfinished.json).unwrap()).is_valid());
        // docs/contract.md Fairness 2: the player's seed comes with the first action.
        let end = play_out_with(&app, &token, &t, Some(&seed)).await;
        assert_eq!(end["client_seed"], seed);
        let r = app.get(&format!("/api/tickets/{id}/record"), Some(&token)).await;
        assert_eq!(r.status, 200);
        for k in [
            "serial",
            "client_seed",
            "commitment",
            "server_seed",
            "prizes_cents",
            "actions",
            "draws",
            "result",
            "emission",
            "block",
            "position",
            "leaf",
            "proof",
            "root",
        ] {
            assert!(r.json.get(k).is_some(), "record has {k}");
        }
        assert_eq!(r.json["client_seed"], seed);
        assert_eq!(r.json["result"], end["result"]);
        let record: Record = serde_json::from_value(r.json.clone()).unwrap();
        let v = verify(&record);
        assert!(v.is_valid(), "{v}");
        assert_eq!(record.actions.len() as u64, end["seq"].as_u64().unwrap());
        // ...and against the root GET /api/emissions publishes.
        let published = published_root(&app, record.emission, record.block).await;
        let v = verify_against(&record, Some(&published));
        assert!(v.is_valid(), "{v}");

        let mut bad = record.clone();
        let d = &mut bad.draws[0];
        d.capone = if d.capone == engine::Rank::Ace { engine::Rank::Seven } else { engine::Rank::Ace };
        assert!(!verify(&bad).is_valid());
        let mut bad = record.clone();
        bad.result.as_mut().unwrap().prize_cents += 1;
        assert!(!verify(&bad).is_valid());
        let mut bad = record.clone();
        bad.server_seed = Some(hex::encode([0x5b; 32]));
        assert!(!verify(&bad).is_valid());
        let mut bad = record.clone();
        bad.client_seed = Some(format!("{seed}x"));
        assert!(!verify(&bad).is_valid(), "another client seed gives other draws");
    }
    app.shutdown().await;
}
}

/// The root of block `block` of emission `emission`, as `GET /api/emissions`
/// (public, no token) publishes it.
pub async fn published_root(app: &TestApp, emission: u32, block: u32) -> Published {
    let r = app.get("/api/emissions", None).await;
    assert_eq!(r.status, 200, "{}", r.json);
    let e = r.json["emissions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["emission"] == emission)
        .unwrap_or_else(|| panic!("emission {emission} is published: {}", r.json));
    let b = e["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["block"] == block)
        .unwrap_or_else(|| panic!("block {block} is published: {e}"));
    let mut root = [0u8; 32];
    hex::decode_to_slice(b["root"].as_str().unwrap(), &mut root).unwrap();
    Published { root, source: format!("GET /api/emissions (emission {emission}, block {block})") }
}

//! Guarantee 6: records of games played over HTTP verify; changed ones fail.

use crate::helpers::*;
use crate::money::play_out;
use server::record::{Record, verify};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn guarantee_6_records_of_finished_games_verify_and_tampering_fails() {
    let Some(app) = spawn_app().await else { return };
    let token = app.register().await;
    for i in 0..4 {
        let seed = format!("player-seed-{i}");
        let t = app.buy(&token, Some(&seed)).await;
        let id = t["id"].as_str().unwrap();
        let unfinished = app.get(&format!("/api/tickets/{id}/record"), Some(&token)).await;
        assert_eq!(unfinished.json["server_seed"], serde_json::Value::Null);
        assert!(!verify(&serde_json::from_value::<Record>(unfinished.json).unwrap()).is_valid());
        let end = play_out(&app, &token, &t).await;
        let r = app.get(&format!("/api/tickets/{id}/record"), Some(&token)).await;
        assert_eq!(r.status, 200);
        for k in ["serial", "client_seed", "commitment", "server_seed", "prizes_cents", "actions", "draws", "result"] {
            assert!(r.json.get(k).is_some(), "record has {k}");
        }
        assert_eq!(r.json["client_seed"], seed);
        assert_eq!(r.json["result"], end["result"]);
        let record: Record = serde_json::from_value(r.json.clone()).unwrap();
        let v = verify(&record);
        assert!(v.is_valid(), "{v}");
        assert_eq!(record.actions.len() as u64, end["seq"].as_u64().unwrap());

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
    }
    app.shutdown().await;
}

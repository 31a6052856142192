//! web/verify.js against the Rust implementation: the same verdict on a
//! real record and on tampered ones, the page's own SHA-256 equal to
//! WebCrypto's and to Rust's, and the check view failing on a record
//! altered on its way to the page.

use crate::harness::*;
use crate::webdriver::Screen;
use engine::{Event, FairStream, Outcome};
use serde_json::{Value, json};
use server::record::Record;
use sha2::{Digest, Sha256};

async fn verdict_in_page(b: &Browser, record: &Value, prefer: &str) -> Value {
    b.exec_async(
        "const done = arguments[arguments.length - 1];
         import('/verify.js').then(m => m.verifyRecord(arguments[0], {prefer: arguments[1]}))
           .then(v => done(v), e => done({error: String(e)}));",
        json!([record, prefer]),
    )
    .await
}

fn rust_valid(record: &Value) -> Option<bool> {
    let r: Record = serde_json::from_value(record.clone()).ok()?;
    Some(server::record::verify(&r).is_valid())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_checks_a_record_as_the_rust_verifier_does_and_catches_tampering() {
    let srv = spawn_server().await;
    let Some(b) = browser(&srv.url, Screen::Desktop { width: 1100, height: 900 }).await else { return };
    let serial = serial_of_sale(1);
    let plan = find_seed(&serial, "ver", |p| {
        p.all_events().any(|e| matches!(e, Event::Deck { .. }))
            && p.all_events().any(|e| matches!(e, Event::Trick { outcome: Outcome::Tie, .. }))
            && p.all_events().any(|e| matches!(e, Event::ExtraGame { .. }))
    });

    // A ticket played through the API.
    let player = srv.post("/api/players", None, &json!({})).await;
    let token = player["token"].as_str().unwrap().to_string();
    let bought = srv.post("/api/tickets", Some(&token), &json!({"client_seed": plan.client_seed})).await;
    assert_eq!(bought["ticket"]["serial"], serial.as_str());
    for (k, a) in plan.actions.iter().enumerate() {
        srv.post(&format!("/api/tickets/{serial}/actions"), Some(&token), &action_json(k, *a)).await;
    }
    let record: Value = srv.get(&format!("/api/tickets/{serial}/record"), &token).await;
    assert_eq!(rust_valid(&record), Some(true));

    b.open("/?anim=0").await;
    // The page reads its token when it starts: store it, then reload.
    b.exec("localStorage.setItem('asc.token', arguments[0]);", json!([token])).await;
    b.refresh().await;
    b.wait_for(
        "document.body.dataset.state === 'idle' && document.getElementById('balance').dataset.cents !== ''",
        "the player",
    )
    .await;

    // The module: WebCrypto and the built-in SHA-256 agree with Rust.
    for prefer in ["webcrypto", "js"] {
        let v = verdict_in_page(&b, &record, prefer).await;
        assert_eq!(v["valid"], true, "{prefer}: {v}");
        assert_eq!(v["crypto"], prefer);
        assert_eq!(v["draws"].as_array().unwrap().len(), record["draws"].as_array().unwrap().len());
    }
    let hashes = b
        .exec_async(
            "const done = arguments[arguments.length - 1];
             import('/verify.js').then(async m => {
               const enc = new TextEncoder();
               const inputs = ['', 'abc', 'x'.repeat(55), 'y'.repeat(56), 'z'.repeat(64), 'é'.repeat(300)];
               const web = m.cryptoProvider('webcrypto');
               const out = [];
               for (const s of inputs) out.push([m.toHex(m.sha256Js(enc.encode(s))), m.toHex(await web.sha256(enc.encode(s)))]);
               const key = new Uint8Array(32).fill(0x5a);
               const msg = enc.encode(arguments[0]);
               out.push([m.toHex(m.hmacSha256Js(key, msg)), m.toHex(await (await web.hmac(key))(msg))]);
               done(out);
             }, e => done(String(e)));",
            json!([format!("{}:{serial}:3:0", plan.client_seed)]),
        )
        .await;
    let inputs = [String::new(), "abc".into(), "x".repeat(55), "y".repeat(56), "z".repeat(64), "é".repeat(300)];
    for (k, s) in inputs.iter().enumerate() {
        let want = hex::encode(Sha256::digest(s.as_bytes()));
        assert_eq!(hashes[k], json!([want, want]), "SHA-256 of input {k}");
    }
    let block = hex::encode(FairStream::new(&SEED, &plan.client_seed, &serial).block(3, 0));
    assert_eq!(hashes[inputs.len()], json!([block, block]), "HMAC block of draw 3");

    // Tampered records: the page and Rust refuse every one.
    let mut tampered: Vec<(&str, Value)> = Vec::new();
    let draws = record["draws"].as_array().unwrap().clone();
    for (k, d) in draws.iter().enumerate() {
        let mut t = record.clone();
        let c = d["capone"].as_str().unwrap();
        t["draws"][k]["capone"] = json!(if c == "A" { "7" } else { "A" });
        tampered.push(("a draw's card", t));
        if d["kind"] == "deck" {
            let mut t = record.clone();
            let p = d["player"].as_str().unwrap();
            t["draws"][k]["player"] = json!(if p == "K" { "Q" } else { "K" });
            tampered.push(("a deck draw's player card", t));
        }
    }
    let seed = record["server_seed"].as_str().unwrap().to_string();
    for pos in [0, 31, 63] {
        let mut s: Vec<u8> = seed.bytes().collect();
        s[pos] = if s[pos] == b'0' { b'1' } else { b'0' };
        let mut t = record.clone();
        t["server_seed"] = json!(String::from_utf8(s).unwrap());
        tampered.push(("a digit of the seed", t));
    }
    let mut t = record.clone();
    t["commitment"] = json!(hex::encode(Sha256::digest(b"another seed")));
    tampered.push(("the commitment", t));
    let mut t = record.clone();
    t["client_seed"] = json!(format!("{}x", plan.client_seed));
    tampered.push(("the client seed", t));
    let mut t = record.clone();
    t["result"]["prize_cents"] = json!(record["result"]["prize_cents"].as_u64().unwrap() + 100);
    tampered.push(("the prize", t));
    let mut t = record.clone();
    t["result"]["tricks"] = json!((record["result"]["tricks"].as_u64().unwrap() + 1) % 9);
    tampered.push(("the tricks", t));
    let mut t = record.clone();
    t["draws"].as_array_mut().unwrap().pop();
    tampered.push(("a missing draw", t));
    let mut t = record.clone();
    t["actions"][0]["seq"] = json!(5);
    tampered.push(("an action's seq", t));
    let mut t = record.clone();
    t["server_seed"] = Value::Null;
    tampered.push(("no seed", t));
    let mut t = record.clone();
    let cards: Vec<usize> =
        (0..t["actions"].as_array().unwrap().len()).filter(|&k| t["actions"][k]["action"] == "play").collect();
    let (x, y) = (cards[0], cards[1]);
    let cx = t["actions"][x]["card"].clone();
    t["actions"][x]["card"] = t["actions"][y]["card"].clone();
    t["actions"][y]["card"] = cx;
    tampered.push(("two cards swapped", t));
    for (what, t) in &tampered {
        let v = verdict_in_page(&b, t, "webcrypto").await;
        assert_eq!(v["valid"], false, "the page accepts a record with {what} changed: {v}");
        assert!(!v["problems"].as_array().unwrap().is_empty());
        assert_eq!(rust_valid(t), Some(false), "Rust accepts (or cannot read) a record with {what} changed");
    }
    eprintln!("{} tampered records refused by verify.js and by Rust", tampered.len());

    // The check view on the real record.
    b.goto(&format!("{}/?anim=0#v={serial}", srv.url)).await;
    b.wait_verdict().await;
    assert_eq!(b.exec("return document.getElementById('verdict').dataset.valid", json!([])).await, "true");
    assert_eq!(b.exec("return document.querySelectorAll('#verify-checks li.ok').length", json!([])).await, 4);

    // ... and on a record altered on its way to the page (draw 2's card).
    b.exec(
        r#"const real = window.fetch;
           window.fetch = async (url, init) => {
             const r = await real(url, init);
             if (!String(url).endsWith('/record')) return r;
             const rec = await r.json();
             rec.draws[2].capone = rec.draws[2].capone === 'A' ? '7' : 'A';
             return new Response(JSON.stringify(rec), {status: 200, headers: {'Content-Type': 'application/json'}});
           };"#,
        json!([]),
    )
    .await;
    b.click("#verify-back").await;
    b.wait_for("document.body.dataset.view === 'game' && document.body.dataset.state === 'idle'", "the ticket").await;
    b.click("#verify-btn").await;
    b.wait_verdict().await;
    assert_eq!(b.exec("return document.getElementById('verdict').dataset.valid", json!([])).await, "false");
    assert!(b.text("#verdict").await.contains("ÉCHEC"));
    assert!(b.text("#verify-checks").await.contains("Tirage 2"), "the problem names the draw");
    assert_eq!(b.exec("return document.querySelectorAll('#verify-draws tr.bad').length", json!([])).await, 1);
    b.exec("document.querySelector('#verify-draws tr.bad').scrollIntoView({block: 'center'})", json!([])).await;
    b.shot("desktop-10-verify-tampered").await;
    b.close().await;
    srv.app.shutdown().await.unwrap();
}

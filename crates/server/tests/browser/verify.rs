//! web/verify.js against the Rust implementation: the same verdict on a
//! real record and on tampered ones (draws, seeds, result, and the Merkle
//! leaf, proof and root), the page's own SHA-256 equal to WebCrypto's and
//! to Rust's, the check view showing the published root it checked
//! against, and failing with a clear line on a record (or a published
//! root) altered on its way to the page.

use crate::harness::*;
use crate::webdriver::Screen;
use engine::{Event, FairStream, Outcome};
use record::Record;
use serde_json::{Value, json};
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

/// The verdict with `emissions` given as the published list (instead of GET /api/emissions).
async fn verdict_with_published(b: &Browser, record: &Value, emissions: &Value, prefer: &str) -> Value {
    b.exec_async(
        "const done = arguments[arguments.length - 1];
         import('/verify.js').then(m => m.verifyRecord(arguments[0], {prefer: arguments[2], emissions: arguments[1]}))
           .then(v => done(v), e => done({error: String(e)}));",
        json!([record, emissions, prefer]),
    )
    .await
}

fn codes(list: &Value) -> Vec<String> {
    list.as_array().unwrap().iter().map(|p| p["code"].as_str().unwrap().to_string()).collect()
}

/// A hex hash with its first digit changed.
fn other_hex(h: &str) -> String {
    let first = if h.starts_with('0') { '1' } else { '0' };
    format!("{first}{}", &h[1..])
}

/// The UTC year of a unix time in milliseconds (the page shows it in local time; a year is safe).
fn chrono_year(ms: i64) -> i64 {
    // Days from 1970-01-01 to the civil year (Howard Hinnant's algorithm).
    let z = ms.div_euclid(86_400_000) + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    yoe + era * 400 + i64::from(m <= 2)
}

fn rust_valid(record: &Value) -> Option<bool> {
    let r: Record = serde_json::from_value(record.clone()).ok()?;
    Some(record::verify(&r).is_valid())
}

/// The module: WebCrypto and the built-in SHA-256 agree with Rust, the
/// Merkle leaf and proof included, against GET /api/emissions; the leaf's
/// bytes and hash, SHA-256 and the HMAC of a draw as Rust computes them.
async fn the_module_agrees_with_rust(
    b: &Browser,
    record: &Value,
    emissions: &Value,
    published_root: &str,
    client_seed: &str,
    serial: &str,
) {
    for prefer in ["webcrypto", "js"] {
        let v = verdict_in_page(b, record, prefer).await;
        assert_eq!(v["valid"], true, "{prefer}: {v}");
        assert_eq!(v["crypto"], prefer);
        assert_eq!(v["draws"].as_array().unwrap().len(), record["draws"].as_array().unwrap().len());
        assert_eq!(
            codes(&v["passed"]),
            ["leaf", "proof", "published", "commitment", "replayed", "draws", "result"],
            "{prefer}: {v}"
        );
        assert_eq!(v["published"]["root"], published_root);
        assert_eq!(v["published"]["block"], 1);
        assert_eq!(v["published"]["emission"], 1);
        assert_eq!(v["published"]["source"], "GET /api/emissions");
        assert_eq!(v["published"]["published_ms"], emissions["emissions"][0]["blocks"][0]["published_ms"]);
    }
    // The leaf's bytes and hash as Rust computes them (ticket bytes v2).
    let leaf: record::RecordLeaf = serde_json::from_value(record["leaf"].clone()).unwrap();
    let leaf = leaf.leaf().unwrap();
    let (bytes, len) = leaf.bytes();
    let in_page = b
        .exec_async(
            "const done = arguments[arguments.length - 1];
             import('/verify.js').then(async m => {
               const l = m.parseLeaf(arguments[0]);
               const bytes = m.leafBytes(l);
               const out = [m.toHex(bytes)];
               for (const p of ['webcrypto', 'js']) out.push(m.toHex(await m.leafHash(m.cryptoProvider(p), bytes)));
               done(out);
             }, e => done([String(e)]));",
            json!([record["leaf"]]),
        )
        .await;
    let hash = hex::encode(leaf.hash());
    assert_eq!(in_page, json!([hex::encode(&bytes[..len]), hash, hash]), "the leaf's bytes and hash");
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
            json!([format!("{}:{serial}:3:0", client_seed)]),
        )
        .await;
    let inputs = [String::new(), "abc".into(), "x".repeat(55), "y".repeat(56), "z".repeat(64), "é".repeat(300)];
    for (k, s) in inputs.iter().enumerate() {
        let want = hex::encode(Sha256::digest(s.as_bytes()));
        assert_eq!(hashes[k], json!([want, want]), "SHA-256 of input {k}");
    }
    let block = hex::encode(FairStream::new(&SEED, client_seed, serial).block(3, 0));
    assert_eq!(hashes[inputs.len()], json!([block, block]), "HMAC block of draw 3");
}

/// The real record with one thing changed: each draw's card (and a deck
/// draw's player card), digits of the seed, the commitment, the client
/// seed, the prize, the tricks, a draw missing, an action's seq, no seed,
/// two cards swapped.
fn tampered_records(record: &Value, client_seed: &str) -> Vec<(&'static str, Value)> {
    let mut tampered: Vec<(&'static str, Value)> = Vec::new();
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
    t["client_seed"] = json!(format!("{}x", client_seed));
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
    tampered
}

/// The real record with one of its ties to the published root changed,
/// each with the problems that must name it: the prizes, the position, the
/// block, the leaf's commitment, play code hash and row.
fn merkle_changes(record: &Value) -> Vec<(&'static str, Value, &'static [&'static str])> {
    let mut merkle: Vec<(&'static str, Value, &'static [&'static str])> = Vec::new();
    let mut t = record.clone();
    t["prizes_cents"]["8"] = json!(record["prizes_cents"]["8"].as_u64().unwrap() * 10);
    t["leaf"]["prizes_cents"] = t["prizes_cents"].clone();
    merkle.push(("the prizes, in the record and its leaf", t, &["proof"]));
    let mut t = record.clone();
    t["leaf"]["prizes_cents"]["5"] = json!(record["prizes_cents"]["5"].as_u64().unwrap() + 100);
    merkle.push(("the leaf's prizes alone", t, &["leaf_prizes", "proof"]));
    let mut t = record.clone();
    t["prizes_cents"]["7"] = json!(record["prizes_cents"]["7"].as_u64().unwrap() + 100);
    merkle.push(("the record's prizes alone", t, &["leaf_prizes"]));
    let mut t = record.clone();
    t["position"] = json!(2);
    t["leaf"]["position"] = json!(2);
    merkle.push(("the position, in the record and its leaf", t, &["serial_digits", "proof"]));
    let mut t = record.clone();
    t["block"] = json!(2);
    merkle.push(("the block", t, &["serial_digits"]));
    let mut t = record.clone();
    t["leaf"]["commitment"] = json!(other_hex(record["commitment"].as_str().unwrap()));
    merkle.push(("the leaf's commitment", t, &["leaf_commitment", "proof"]));
    let mut t = record.clone();
    t["leaf"]["play_code_sha256"] = json!(other_hex(record["leaf"]["play_code_sha256"].as_str().unwrap()));
    merkle.push(("the leaf's play code hash", t, &["proof"]));
    let mut t = record.clone();
    t["leaf"]["row"] = json!(record["leaf"]["row"].as_u64().unwrap() ^ 1);
    merkle.push(("the leaf's row", t, &["proof"]));
    merkle
}

/// Records altered on their way to the page (`merkle`'s prizes, position,
/// a proof node and the root), and a published root altered: the check
/// view refuses each with its line.
async fn altered_on_their_way_each_refused_with_its_line(
    b: &Browser,
    merkle: &[(&str, Value, &[&str])],
    published_root: &str,
) {
    // Records altered on their way to the page, and a published root
    // altered: each refused with its line.
    b.exec(
        r#"const real = window.fetch;
           window.__tamperRecord = null;
           window.__tamperRoot = null;
           window.fetch = async (url, init) => {
             const r = await real(url, init);
             const u = String(url);
             if (u.endsWith('/record') && window.__tamperRecord) {
               return new Response(JSON.stringify(window.__tamperRecord), {status: 200, headers: {'Content-Type': 'application/json'}});
             }
             if (u.endsWith('/api/emissions') && window.__tamperRoot) {
               const e = await r.json();
               e.emissions[0].blocks[0].root = window.__tamperRoot;
               return new Response(JSON.stringify(e), {status: 200, headers: {'Content-Type': 'application/json'}});
             }
             return r;
           };"#,
        json!([]),
    )
    .await;
    let lines: [(&str, Value, Option<String>, &str); 5] = [
        (
            "the prizes",
            merkle[0].1.clone(),
            None,
            "La preuve d’inclusion ne mène pas de la feuille du ticket à la racine",
        ),
        (
            "the position",
            merkle[3].1.clone(),
            None,
            "désignent l’émission 1, bloc 1, position 1, et non l’émission 1, bloc 1, position 2",
        ),
        ("a proof node", merkle[8].1.clone(), None, "La preuve d’inclusion ne mène pas"),
        ("the root", merkle[merkle.len() - 1].1.clone(), None, "n’est pas celle publiée pour l’émission 1, bloc 1"),
        (
            "the published root",
            Value::Null,
            Some(other_hex(published_root)),
            "n’est pas celle publiée pour l’émission 1, bloc 1",
        ),
    ];
    for (what, rec, root, line) in lines {
        b.exec("window.__tamperRecord = arguments[0]; window.__tamperRoot = arguments[1];", json!([rec, root])).await;
        b.click("#verify-back").await;
        b.wait_for("document.body.dataset.view === 'game' && document.body.dataset.state === 'idle'", "the ticket")
            .await;
        b.click("#verify-btn").await;
        b.wait_verdict().await;
        assert_eq!(
            b.exec("return document.getElementById('verdict').dataset.valid", json!([])).await,
            "false",
            "{what}"
        );
        assert!(b.text("#verdict").await.contains("ÉCHEC"), "{what}");
        let checks = b.text("#verify-checks li.bad").await;
        let all = b
            .exec("return [...document.querySelectorAll('#verify-checks li.bad')].map(e => e.textContent)", json!([]))
            .await;
        assert!(
            all.as_array().unwrap().iter().any(|l| l.as_str().unwrap().contains(line)),
            "{what}: no line says {line:?}: {all} (first: {checks})"
        );
    }
    b.exec("document.getElementById('verify-checks').scrollIntoView({block: 'start'})", json!([])).await;
    b.shot("desktop-10b-verify-root-changed").await;
    b.exec("window.__tamperRecord = null; window.__tamperRoot = null;", json!([])).await;
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

    // A ticket played through the API, the client seed with the first card.
    let player = srv.post("/api/players", None, &json!({})).await;
    let token = player["token"].as_str().unwrap().to_string();
    let bought = srv.post("/api/tickets", Some(&token), &json!({})).await;
    assert_eq!(bought["ticket"]["serial"], serial.as_str());
    for k in 0..plan.actions.len() {
        srv.post(&format!("/api/tickets/{serial}/actions"), Some(&token), &plan.action_body(k)).await;
    }
    let record: Value = srv.get(&format!("/api/tickets/{serial}/record"), &token).await;
    assert_eq!(rust_valid(&record), Some(true));
    assert_eq!(record["client_seed"], plan.client_seed.as_str());
    let emissions = srv.get("/api/emissions", "").await;
    let published_root = emissions["emissions"][0]["blocks"][0]["root"].as_str().unwrap().to_string();
    assert_eq!(record["root"], published_root.as_str(), "the ticket's block root is the published one");

    b.open("/?anim=0").await;
    // The page reads its token when it starts: store it, then reload.
    b.exec("localStorage.setItem('asc.token', arguments[0]);", json!([token])).await;
    b.refresh().await;
    b.wait_for(
        "document.body.dataset.state === 'idle' && document.getElementById('balance').dataset.cents !== ''",
        "the player",
    )
    .await;

    the_module_agrees_with_rust(&b, &record, &emissions, &published_root, &plan.client_seed, &serial).await;

    // Tampered records: the page and Rust refuse every one.
    let tampered = tampered_records(&record, &plan.client_seed);
    for (what, t) in &tampered {
        let v = verdict_in_page(&b, t, "webcrypto").await;
        assert_eq!(v["valid"], false, "the page accepts a record with {what} changed: {v}");
        assert!(!v["problems"].as_array().unwrap().is_empty());
        assert_eq!(rust_valid(t), Some(false), "Rust accepts (or cannot read) a record with {what} changed");
    }
    eprintln!("{} tampered records refused by verify.js and by Rust", tampered.len());

    // The record's ties to the published root: each change is refused with
    // the problem that names it, by both hash implementations and by Rust.
    let mut merkle = merkle_changes(&record);
    let steps = record["proof"].as_array().unwrap().len();
    assert!(steps >= 5, "a block of 100 tickets: 7 steps: {}", record["proof"]);
    for k in [0, steps / 2, steps - 1] {
        let mut t = record.clone();
        let node = record["proof"][k].as_str().unwrap();
        t["proof"][k] = json!(format!("{}{}", &node[..1], other_hex(&node[1..])));
        merkle.push(("one proof node", t, &["proof"]));
    }
    let mut t = record.clone();
    let node = record["proof"][0].as_str().unwrap();
    t["proof"][0] = json!(format!("{}{}", if node.starts_with('L') { "R" } else { "L" }, &node[1..]));
    merkle.push(("one proof step's side", t, &["proof"]));
    let mut t = record.clone();
    t["proof"].as_array_mut().unwrap().pop();
    merkle.push(("a missing proof step", t, &["proof"]));
    let mut t = record.clone();
    t["root"] = json!(other_hex(&published_root));
    merkle.push(("the root", t, &["proof", "published"]));
    for (what, t, want) in &merkle {
        for prefer in ["webcrypto", "js"] {
            let v = verdict_in_page(&b, t, prefer).await;
            assert_eq!(v["valid"], false, "{prefer}: the page accepts a record with {what} changed: {v}");
            let got = codes(&v["problems"]);
            for w in *want {
                assert!(got.iter().any(|g| g == w), "{prefer}, {what}: the problem {w} is not among {got:?}");
            }
        }
        assert_eq!(rust_valid(t), Some(false), "Rust accepts (or cannot read) a record with {what} changed");
    }
    // The published list itself: another root for the block, or no such block.
    let mut other = emissions.clone();
    other["emissions"][0]["blocks"][0]["root"] = json!(other_hex(&published_root));
    let v = verdict_with_published(&b, &record, &other, "js").await;
    assert_eq!(codes(&v["problems"]), ["published"], "{v}");
    let mut none = emissions.clone();
    none["emissions"][0]["blocks"] = json!([]);
    let v = verdict_with_published(&b, &record, &none, "webcrypto").await;
    assert_eq!(codes(&v["problems"]), ["not_published"], "{v}");
    eprintln!("{} records with a changed leaf, proof or root refused by verify.js and by Rust", merkle.len());

    // The check view on the real record: the root it checked, its block,
    // and where and when that root was published.
    b.goto(&format!("{}/?anim=0#v={serial}", srv.url)).await;
    b.wait_verdict().await;
    assert_eq!(b.exec("return document.getElementById('verdict').dataset.valid", json!([])).await, "true");
    assert_eq!(b.exec("return document.querySelectorAll('#verify-checks li.ok').length", json!([])).await, 7);
    assert_eq!(b.text("#verify-root").await, published_root);
    assert_eq!(b.text("#verify-where").await, "jeu TST, émission 1, bloc 1, position 1");
    let published = b.text("#verify-published").await;
    assert!(published.starts_with("GET /api/emissions, publié le "), "{published}");
    let year = chrono_year(emissions["emissions"][0]["blocks"][0]["published_ms"].as_i64().unwrap());
    assert!(published.contains(&year.to_string()), "the date of publication: {published}");
    let checks = b.text("#verify-checks").await;
    assert!(checks.contains(&format!("La preuve d’inclusion ({steps} étapes) mène")), "{checks}");
    assert!(checks.contains("Cette racine est celle publiée pour l’émission 1, bloc 1"), "{checks}");
    b.shot("desktop-9b-verify-root").await;

    altered_on_their_way_each_refused_with_its_line(&b, &merkle, &published_root).await;

    // ... and on a record altered on its way to the page (draw 2's card).
    b.alter_records_in_flight().await;
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

//! A paper block's print file holds every play code of the block, and a
//! play code opens its ticket (the second outside audit): with the codes it is given only
//! before any ticket of the block is sold (then 409, and no other request
//! gives a code), without them at any time (`codes=false`); every download
//! is written to the audit log with the operator token and the address
//! that asked, and the desk's figures (`GET /api/admin/emissions`, what
//! `web/desk.js` shows on the block's line) count them.

use crate::helpers::*;
use crate::paper::{emit_paper, sell};
use serde_json::{Value, json};

/// A second operator token, first in the configuration: the tests' own
/// [`OPERATOR`] is then token 2.
const FIRST_OPERATOR: &str = "the-first-operator-token-of-the-print-tests";

/// The audit log's entries of the print file's downloads.
const DOWNLOADS: &str = "FROM audit_log WHERE kind = 'print_file_downloaded'";

fn path(emission: u64, block: u64) -> String {
    format!("/api/admin/emissions/{emission}/blocks/{block}/print.csv")
}

/// The print file's lines with the `play_code` field (the third) left empty.
fn without_codes(csv: &str) -> String {
    let mut lines = csv.lines();
    let mut out = format!("{}\n", lines.next().unwrap());
    for line in lines {
        let mut f: Vec<&str> = line.split(',').collect();
        f[2] = "";
        out.push_str(&f.join(","));
        out.push('\n');
    }
    out
}

/// Panics if `body` holds any of `codes`, as printed or without its dashes.
fn assert_no_code(what: &str, body: &[u8], codes: &[String]) {
    let text = String::from_utf8_lossy(body).to_uppercase();
    for code in codes {
        assert!(!text.contains(code) && !text.contains(&code.replace('-', "")), "{what} gives the play code {code}");
    }
}

/// The last download's audit entry: its time and its data.
async fn last_entry(app: &TestApp) -> (i64, Value) {
    let at = app.query_i64(&format!("SELECT created_ms {DOWNLOADS} ORDER BY id DESC LIMIT 1")).await;
    let data = app.query_text(&format!("SELECT data_json {DOWNLOADS} ORDER BY id DESC LIMIT 1")).await;
    (at, serde_json::from_str(&data).unwrap())
}

/// Each block's `print_downloads` on the desk, for emission `emission`.
async fn desk_downloads(app: &TestApp, emission: u64) -> Vec<Value> {
    let r = app.admin_get(&format!("/api/admin/emissions/{emission}")).await;
    assert_eq!(r.status, 200, "{}", r.json);
    r.json["blocks"].as_array().unwrap().iter().map(|b| b["print_downloads"].clone()).collect()
}

both! {
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_print_file_gives_its_play_codes_only_before_any_sale_and_every_download_is_audited_and_shown() {
    let Some(app) = spawn_app_with(|c| c.operator_tokens.insert(0, FIRST_OPERATOR.into())).await else { return };
    let emission = emit_paper(&app, 2).await;
    let none = json!({"count": 0, "with_codes": 0, "last": null});
    assert_eq!(desk_downloads(&app, emission).await, vec![none.clone(), none.clone()]);
    assert_eq!(desk_downloads(&app, 1).await, vec![Value::Null; 2], "an online block has no print file");

    // Before any sale: the file with every play code, its download audited
    // with the token that asked (the second of the configuration) and the address.
    let r = app.admin_get(&path(emission, 1)).await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.bytes));
    let with_codes = String::from_utf8(r.bytes).unwrap();
    let printed = app.print_file(emission, 1).await;
    let codes: Vec<String> = printed.iter().map(|p| p.code.clone()).collect();
    assert_eq!(codes.len(), 50);
    for c in &codes {
        emission::PlayCode::parse(c).unwrap_or_else(|e| panic!("{c}: {e}"));
    }
    assert_eq!(app.query_i64(&format!("SELECT COUNT(*) {DOWNLOADS}")).await, 2);
    let (at, entry) = last_entry(&app).await;
    let by_operator_2 = json!({"emission": emission, "block": 1, "codes": true, "operator_token": 2, "address": "127.0.0.1"});
    assert_eq!(entry, by_operator_2);
    let last = json!({"at_ms": at, "codes": true, "operator_token": 2, "address": "127.0.0.1"});
    assert_eq!(desk_downloads(&app, emission).await[0], json!({"count": 2, "with_codes": 2, "last": last}));

    // One ticket of block 1 sold: its codes are refused, saying why and what to do ...
    sell(&app, SHOP_A_TOKEN, SHOP_A, &printed[0].serial).await;
    let r = app.admin_get(&path(emission, 1)).await;
    assert_error(&r, 409, "conflict");
    let message = r.json["message"].as_str().unwrap();
    assert!(message.contains("1 ticket(s) sold") && message.contains("codes=false"), "{message}");
    assert_no_code("the refusal", &r.bytes, &codes);
    // ... in every spelling of the request ...
    let p = path(emission, 1);
    for (variant, status) in [
        (format!("{p}?codes=true"), 409),
        (format!("{p}?CODES=false"), 409),
        (format!("{p}?codes=false&codes=true"), 400),
        (format!("{p}?codes=1"), 400),
        (format!("/api/admin/emissions/{emission}/blocks/01/print.csv"), 409),
    ] {
        let r = app.admin_get(&variant).await;
        assert_eq!(r.status.as_u16(), status, "{variant}: {}", String::from_utf8_lossy(&r.bytes));
        assert_no_code(&variant, &r.bytes, &codes);
    }
    let r = app.get(&p, Some(FIRST_OPERATOR)).await;
    assert_error(&r, 409, "conflict");
    assert_eq!(app.query_i64(&format!("SELECT COUNT(*) {DOWNLOADS}")).await, 2, "a refusal gives no file: no entry");
    // ... and no other answer of the desk, the public or the shop gives one.
    let shop = app.retail("validate", Some(SHOP_A_TOKEN), &printed[0].serial).await;
    assert_eq!(shop.status, 200, "{}", shop.json);
    assert_no_code("validate", &shop.bytes, &codes);
    for other in [
        "/api/admin/emissions".to_string(),
        format!("/api/admin/emissions/{emission}"),
        format!("/api/admin/emissions/{emission}/sales"),
        format!("/api/admin/emissions/{emission}/prizes"),
        "/api/admin/shops".into(),
        "/api/admin/claims".into(),
        "/api/admin/health".into(),
    ] {
        let r = app.admin_get(&other).await;
        assert_eq!(r.status, 200, "{other}: {}", r.json);
        assert_no_code(&other, &r.bytes, &codes);
    }
    let public = app.get("/api/emissions", None).await;
    assert_no_code("/api/emissions", &public.bytes, &codes);

    // Without the codes it is still given, the same file but the play codes, and audited.
    let r = app.admin_get(&format!("{p}?codes=false")).await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.bytes));
    assert_eq!(String::from_utf8(r.bytes.clone()).unwrap(), without_codes(&with_codes));
    assert_no_code("codes=false", &r.bytes, &codes);
    let (at_nocodes, entry) = last_entry(&app).await;
    assert_eq!(entry, json!({"emission": emission, "block": 1, "codes": false, "operator_token": 2, "address": "127.0.0.1"}));

    // Block 2 has no ticket sold: its codes are given, to the first token.
    let r = app.get(&path(emission, 2), Some(FIRST_OPERATOR)).await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.bytes));
    let (at_2, entry) = last_entry(&app).await;
    assert_eq!(entry, json!({"emission": emission, "block": 2, "codes": true, "operator_token": 1, "address": "127.0.0.1"}));

    // The desk counts each block's downloads and shows the last one.
    let last_1 = json!({"at_ms": at_nocodes, "codes": false, "operator_token": 2, "address": "127.0.0.1"});
    let last_2 = json!({"at_ms": at_2, "codes": true, "operator_token": 1, "address": "127.0.0.1"});
    assert_eq!(
        desk_downloads(&app, emission).await,
        vec![json!({"count": 3, "with_codes": 2, "last": last_1}), json!({"count": 1, "with_codes": 1, "last": last_2})]
    );
    // The entries are in the sealed chain like any other.
    let check = app.sealed_audit_check().await;
    assert_eq!((check.first_broken, check.unsealed), (None, 0), "{check:?}");
    app.shutdown().await;
}
}

both! {
/// The desk reads the downloads at every refresh: through migration 20's
/// partial index (the audit log holds an entry per sale and per game), by
/// SQLite's plan; PostgreSQL plans a small table by cost, so there the
/// index is checked to exist as written.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_desk_reads_the_print_file_downloads_through_their_own_index() {
    let Some(app) = spawn_app().await else { return };
    let select = "SELECT created_ms, data_json FROM audit_log WHERE kind = 'print_file_downloaded' ORDER BY id";
    if backend() == Backend::Postgres {
        let defs = app.dump("SELECT indexdef FROM pg_indexes WHERE indexname = 'audit_log_print_files'").await;
        assert_eq!(defs.len(), 1, "{defs:?}");
        assert!(defs[0].contains("(id) WHERE (kind = 'print_file_downloaded'::text)"), "{defs:?}");
    } else {
        let plan = app.dump(&format!("EXPLAIN QUERY PLAN {select}")).await.join("\n");
        assert!(plan.contains("USING INDEX audit_log_print_files"), "{plan}");
        assert!(!plan.contains("SCAN audit_log\n") && !plan.ends_with("SCAN audit_log"), "{plan}");
    }
    app.shutdown().await;
}
}

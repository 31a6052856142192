//! `http_bodies`: the JSON bodies of the server's POST endpoints, sent to a
//! real server ([`server::App`], the whole router, on a SQLite database in a
//! temporary directory) over loopback.
//!
//! The router is private to the server crate (`server::http`), so the
//! harness cannot call it in-process with `tower::ServiceExt::oneshot`: it
//! starts one server per process on `127.0.0.1:0` (as the API tests do),
//! then sends one request per input with `reqwest`. About a thousand
//! inputs a second.
//!
//! Setup, once per process: player A with tickets, player B with one, a
//! paper emission (emission 2) whose print file gives serials and play
//! codes, and the first ticket of it sold. The configuration is the API
//! tests' (an operator token, two shops, the small table allowed), with a
//! large start balance and large limits on wrong play codes so that the
//! fuzzer keeps reaching the success paths.
//!
//! The input: byte 0 chooses the endpoint (low four bits, modulo 9), the
//! token (bits 4 and 5: the endpoint's own token, none, or a wrong one)
//! and the content type (bits 6 and 7: JSON, none, or text/plain); for the
//! endpoints with an id in their path, byte 1 chooses the id (a ticket of
//! A, A's latest ticket, B's ticket, unknown ones, junk); the rest is the
//! body, in which `$S0`..`$S9` stand for the paper serials, `$C0`..`$C9`
//! for their play codes and `$T` for A's latest ticket id.
//!
//! | low bits | endpoint |
//! |---|---|
//! | 0 | `POST /api/players` |
//! | 1 | `POST /api/tickets` |
//! | 2 | `POST /api/tickets/{id}/actions` |
//! | 3 | `POST /api/tickets/redeem` |
//! | 4 | `POST /api/retail/sell` |
//! | 5 | `POST /api/retail/validate` |
//! | 6 | `POST /api/retail/pay` |
//! | 7 | `POST /api/admin/emissions` |
//! | 8 | `POST /api/admin/emissions/{id}/blocks` |
//!
//! What must hold: never a 5xx; every 4xx answers the JSON object
//! `{"error": string, "message": string}`; every 2xx answers JSON.
//!
//! Not sent: an emission request that the server would accept with more
//! than [`MAX_TICKETS_EMITTED`] tickets (blocks times block size). Writing
//! a large emission is legitimate operator work that takes seconds, not a
//! body the parser mishandles; the harness reads such a body itself and
//! skips it.

use serde_json::Value;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;
use testkit::TABLE;

/// The largest emission (tickets over all its blocks) a fuzz input may
/// make the server write.
const MAX_TICKETS_EMITTED: u64 = 2_000;

const OPERATOR: &str = "operator-token-of-the-fuzz-harness";
const SHOP_A: &str = "retailer-token-of-the-fuzz-harness";
const SHOP_B: &str = "retailer-token-of-another-shop";

/// The server of this process and what the setup made.
struct Harness {
    rt: tokio::runtime::Runtime,
    client: reqwest::Client,
    url: String,
    token_a: String,
    token_b: String,
    ticket_a: String,
    ticket_b: String,
    serials: Vec<String>,
    codes: Vec<String>,
    _dir: tempfile::TempDir,
    // The server runs as long as the process: it is never shut down.
    _app: server::App,
}

/// A's latest ticket (`$T`, and the first choice of ticket id).
static LATEST_A: Mutex<String> = Mutex::new(String::new());

fn latest_a() -> String {
    LATEST_A.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

fn harness() -> &'static Harness {
    static H: OnceLock<Harness> = OnceLock::new();
    H.get_or_init(start)
}

fn start() -> Harness {
    let rt =
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("a tokio runtime");
    let dir = tempfile::tempdir().expect("a temporary directory");
    let config = server::Config {
        listen: "127.0.0.1:0".into(),
        db: format!("sqlite://{}", dir.path().join("fuzz.db").display()),
        start_balance_cents: 1 << 40,
        demo_token: String::new(),
        initial_blocks: 1,
        key_file: Some(dir.path().join("server.key")),
        operator_tokens: vec![OPERATOR.into()],
        allow_non_regulation_table: true,
        // Purchases without a limit on stakes chosen first: the fuzzer reaches the game.
        stake_limit_required: false,
        retailer_tokens: vec![format!("Tabac du Fuzz:{SHOP_A}"), format!("Bar des Tests:{SHOP_B}")],
        redeem_failures_per_address: u32::MAX,
        redeem_failures_global: u32::MAX,
        ..server::Config::default()
    };
    let table = math::PrizeTable::parse_toml(TABLE).expect("the harness's table");
    let options = server::AppOptions { config, table, seeds: server::ServerSeeds::FromKey };
    let app = rt.block_on(server::App::start(options)).expect("the server starts");
    let url = app.url();
    let client = reqwest::Client::builder().timeout(Duration::from_secs(60)).build().expect("a client");

    let (token_a, token_b, ticket_a, ticket_b, serials, codes) = rt.block_on(async {
        let post = |path: &str, token: Option<&str>, body: Value| {
            let mut req = client.post(format!("{url}{path}")).json(&body);
            if let Some(t) = token {
                req = req.bearer_auth(t);
            }
            async move {
                let r = req.send().await.expect("setup request");
                let status = r.status();
                let json: Value = r.json().await.expect("setup answer");
                assert!(status.is_success(), "setup: {status} {json}");
                json
            }
        };
        let a = post("/api/players", None, serde_json::json!({"name": "A"})).await;
        let b = post("/api/players", None, serde_json::json!({})).await;
        let token_a = a["token"].as_str().expect("a token").to_string();
        let token_b = b["token"].as_str().expect("a token").to_string();
        let t = post("/api/tickets", Some(&token_a), serde_json::json!({})).await;
        let ticket_a = t["ticket"]["id"].as_str().expect("a ticket id").to_string();
        post("/api/tickets", Some(&token_a), serde_json::json!({})).await;
        let t = post("/api/tickets", Some(&token_b), serde_json::json!({})).await;
        let ticket_b = t["ticket"]["id"].as_str().expect("a ticket id").to_string();
        post(
            "/api/admin/emissions",
            Some(OPERATOR),
            serde_json::json!({"table": TABLE, "blocks": 1, "channel": "paper"}),
        )
        .await;
        let csv = client
            .get(format!("{url}/api/admin/emissions/2/blocks/1/print.csv"))
            .bearer_auth(OPERATOR)
            .send()
            .await
            .expect("print file")
            .text()
            .await
            .expect("print file");
        let mut serials = Vec::new();
        let mut codes = Vec::new();
        for line in csv.lines().skip(1).take(10) {
            let f: Vec<&str> = line.split(',').collect();
            serials.push(f[1].to_string());
            codes.push(f[2].to_string());
        }
        assert_eq!(serials.len(), 10, "the print file: {csv}");
        post("/api/retail/sell", Some(SHOP_A), serde_json::json!({"serial": serials[0]})).await;
        (token_a, token_b, ticket_a, ticket_b, serials, codes)
    });
    *LATEST_A.lock().unwrap() = ticket_a.clone();
    Harness { rt, client, url, token_a, token_b, ticket_a, ticket_b, serials, codes, _dir: dir, _app: app }
}

/// `$S0`..`$S9`, `$C0`..`$C9` and `$T` replaced (module doc).
fn substitute(h: &Harness, body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(body.len());
    let mut i = 0;
    while i < body.len() {
        if body[i] == b'$' && i + 1 < body.len() {
            let digit = body.get(i + 2).filter(|d| d.is_ascii_digit()).map(|d| usize::from(d - b'0'));
            match (body[i + 1], digit) {
                (b'S', Some(d)) => {
                    out.extend_from_slice(h.serials[d].as_bytes());
                    i += 3;
                    continue;
                }
                (b'C', Some(d)) => {
                    out.extend_from_slice(h.codes[d].as_bytes());
                    i += 3;
                    continue;
                }
                (b'T', _) => {
                    out.extend_from_slice(latest_a().as_bytes());
                    i += 2;
                    continue;
                }
                _ => {}
            }
        }
        out.push(body[i]);
        i += 1;
    }
    out
}

/// Whether the server would accept this emission and write more than
/// [`MAX_TICKETS_EMITTED`] tickets (module doc).
fn large_emission(body: &[u8]) -> bool {
    let Ok(v) = serde_json::from_slice::<Value>(body) else { return false };
    let Some(blocks) = v.get("blocks").and_then(Value::as_u64) else { return false };
    let table = match v.get("table") {
        Some(Value::String(t)) => math::PrizeTable::parse_toml(t),
        Some(t @ Value::Object(_)) => math::PrizeTable::from_json(&t.to_string()),
        _ => return false,
    };
    match table {
        Ok(t) => blocks.saturating_mul(u64::from(t.block_size)) > MAX_TICKETS_EMITTED,
        Err(_) => false,
    }
}

/// Runs the harness; panics when an invariant breaks.
pub(crate) fn run(data: &[u8]) {
    let h = harness();
    let Some((&head, rest)) = data.split_first() else { return };
    let endpoint = head & 0x0f;
    let (path, own_token, rest): (String, Option<&str>, &[u8]) = match endpoint % 9 {
        0 => ("/api/players".into(), None, rest),
        1 => ("/api/tickets".into(), Some(&h.token_a), rest),
        2 => {
            let (id, rest) = rest.split_first().map(|(b, r)| (*b, r)).unwrap_or((0, &[]));
            let id = match id % 8 {
                0 => latest_a(),
                1 => h.ticket_a.clone(),
                2 => h.ticket_b.clone(),
                3 => "999999999".into(),
                4 => "abc".into(),
                5 => "-1".into(),
                6 => "99999999999999999999999".into(),
                _ => "%FF".into(),
            };
            (format!("/api/tickets/{id}/actions"), Some(&h.token_a), rest)
        }
        3 => ("/api/tickets/redeem".into(), Some(&h.token_a), rest),
        4 => ("/api/retail/sell".into(), Some(SHOP_A), rest),
        5 => ("/api/retail/validate".into(), Some(SHOP_A), rest),
        6 => ("/api/retail/pay".into(), Some(SHOP_A), rest),
        7 => ("/api/admin/emissions".into(), Some(OPERATOR), rest),
        _ => {
            let (id, rest) = rest.split_first().map(|(b, r)| (*b, r)).unwrap_or((0, &[]));
            let id = ["1", "2", "3", "0", "x", "4294967296"][usize::from(id) % 6];
            (format!("/api/admin/emissions/{id}/blocks"), Some(OPERATOR), rest)
        }
    };
    let token = match (head >> 4) & 3 {
        0 | 1 => own_token,
        2 => None,
        _ => Some(if endpoint % 9 == 4 { SHOP_B } else { "not-a-token" }),
    };
    let token = if endpoint % 9 == 3 && (head >> 4) & 3 == 1 { Some(h.token_b.as_str()) } else { token };
    let body = substitute(h, rest);
    if endpoint % 9 == 7 && large_emission(&body) {
        return;
    }
    let content_type = match head >> 6 {
        0 | 1 => Some("application/json"),
        2 => None,
        _ => Some("text/plain"),
    };

    let mut req = h.client.post(format!("{}{path}", h.url)).body(body.clone());
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    if let Some(c) = content_type {
        req = req.header("content-type", c);
    }
    let (status, answer) = h.rt.block_on(async {
        let r = req.send().await.unwrap_or_else(|e| panic!("POST {path}: no answer: {e}"));
        let status = r.status();
        let bytes = r.bytes().await.unwrap_or_else(|e| panic!("POST {path}: the answer breaks off: {e}"));
        (status, bytes)
    });
    let shown =
        || format!("POST {path} {:?} -> {status} {}", String::from_utf8_lossy(&body), String::from_utf8_lossy(&answer));
    assert!(!status.is_server_error(), "a 5xx: {}", shown());
    let json: Value = serde_json::from_slice(&answer).unwrap_or_else(|_| panic!("the answer is not JSON: {}", shown()));
    if status.is_client_error() {
        assert!(
            json.get("error").is_some_and(Value::is_string) && json.get("message").is_some_and(Value::is_string),
            "a 4xx not in the shape {{\"error\", \"message\"}}: {}",
            shown()
        );
    }
    if status.is_success()
        && endpoint % 9 == 1
        && let Some(id) = json["ticket"]["id"].as_str()
    {
        *LATEST_A.lock().unwrap_or_else(|e| e.into_inner()) = id.to_string();
    }
}

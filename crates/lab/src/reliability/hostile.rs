//! A corpus of hostile requests, generated from categories, each written
//! byte for byte on its own TCP connection (so that requests no HTTP
//! library would send can be sent too: bad `Content-Length`, made-up
//! methods, invalid UTF-8 in paths, half-sent headers).
//!
//! Every request must be refused with a 4xx in the error shape
//! `{"error": "...", "message": "..."}` (`application/json`), and change
//! nothing: after each one, two players' balances and ticket lists, the
//! operator's figures (`GET /api/admin/emissions`) and the row counts of
//! the SQLite file (read-only, with `sqlite3` when it is installed) are
//! compared with the moment before. A few cases expect something else, and
//! say so: `HEAD` on a static file answers like `GET`; requests the HTTP
//! layer cannot parse (invalid bytes in the request line, oversized
//! headers) may be refused with a bare 4xx or a closed connection, since no
//! route is reached; a connection that stops half-way through its headers
//! must be closed by the server within a bounded time (the time is
//! reported); a made-up method must not become a metric label.

use super::{Backend, Database, OPERATOR_TOKEN, ReliabilityArgs, Rng, Server, next_action};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// What a case must get.
#[derive(Clone, Copy, Debug)]
enum Want {
    /// A 4xx in the error shape.
    Refused,
    /// One of these statuses in the error shape.
    Exactly(&'static [u16]),
    /// The request cannot be parsed as HTTP: a 4xx (shape when it has a
    /// body) or the connection closed without an answer.
    Protocol,
    /// `HEAD` on a static file: 200 with no body, like `GET`.
    HeadOk,
    /// A request that stops half-way: the server must close the connection.
    Closed,
}

type Build = Box<dyn Fn(&Ctx) -> Vec<u8> + Send + Sync>;
/// A named request part built from the context.
type Named<T> = (&'static str, fn(&Ctx) -> T);

struct Case {
    cat: &'static str,
    name: String,
    build: Build,
    want: Want,
    /// A made-up method that must not show up in `/metrics`.
    metric_probe: Option<String>,
    /// The answer must come within this many seconds.
    max_secs: Option<f64>,
    /// Run in the background (slow: waits for a timeout).
    slow: bool,
    /// Slowloris: after the first bytes, one more header line every second.
    drip: bool,
}

/// Who and what the corpus aims at.
#[derive(Clone, Debug, Default)]
struct Ctx {
    addr: String,
    a_token: String,
    b_token: String,
    /// Player A's ticket in play, its seq, phase and hand.
    a_ticket: String,
    a_seq: u64,
    a_phase: String,
    a_hand: Vec<String>,
    /// The body A sent at seq - 1 (for a conflicting replay).
    a_prev_card: Option<String>,
    /// B's finished ticket and B's fresh one.
    b_done: String,
    b_open: String,
}

impl Ctx {
    fn valid_action(&self) -> Value {
        if self.a_phase == "play" {
            json!({"seq": self.a_seq, "action": "play", "card": self.a_hand.first().cloned().unwrap_or_default()})
        } else {
            json!({"seq": self.a_seq, "action": "draw"})
        }
    }
    fn actions_path(&self) -> String {
        format!("/api/tickets/{}/actions", self.a_ticket)
    }
}

/// An HTTP answer read off the socket.
#[derive(Debug, Default, Clone)]
struct Answer {
    status: Option<u16>,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
    secs: f64,
    /// Why the answer is missing or cut.
    note: Option<String>,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
    fn in_shape(&self) -> bool {
        let json = self.header("content-type").is_some_and(|c| c.starts_with("application/json"));
        let v: Value = serde_json::from_slice(&self.body).unwrap_or_default();
        json && v["error"].is_string() && v["message"].is_string()
    }
    fn brief(&self) -> String {
        match self.status {
            Some(s) => format!(
                "{s} [{}] {}",
                self.header("content-type").unwrap_or("no content-type"),
                printable(&self.body[..self.body.len().min(240)])
            ),
            None => format!("no answer ({})", self.note.as_deref().unwrap_or("closed")),
        }
    }
}

/// Bytes as text, escaping what is not printable.
fn printable(b: &[u8]) -> String {
    let mut s = String::new();
    for &c in b {
        match c {
            b'\r' => s.push_str("\\r"),
            b'\n' => s.push_str("\\n"),
            0x20..=0x7e => s.push(c as char),
            _ => s.push_str(&format!("\\x{c:02x}")),
        }
    }
    s
}

/// Sends raw bytes on a new connection and reads one answer.
fn exchange(addr: &str, req: &[u8], head_only: bool, timeout: Duration, drip: bool) -> Answer {
    let began = Instant::now();
    let mut a = Answer::default();
    let mut s = match TcpStream::connect(addr) {
        Ok(s) => s,
        Err(e) => {
            a.note = Some(format!("connect: {e}"));
            return a;
        }
    };
    let _ = s.set_read_timeout(Some(Duration::from_millis(200)));
    let _ = s.set_nodelay(true);
    if let Err(e) = s.write_all(req) {
        a.note = Some(format!("write: {e}"));
    }
    let deadline = began + timeout;
    let mut buf = Vec::new();
    let mut chunk = [0u8; 65536];
    let mut next_drip = Instant::now() + Duration::from_secs(1);
    let mut n_drip = 0;
    loop {
        if Instant::now() >= deadline {
            a.note = Some(format!("no answer and still open after {:.0} s", timeout.as_secs_f64()));
            break;
        }
        if drip && Instant::now() >= next_drip {
            next_drip += Duration::from_secs(1);
            n_drip += 1;
            if s.write_all(format!("X-Drip-{n_drip}: a\r\n").as_bytes()).is_err() {
                a.note = Some("closed".into());
                break;
            }
        }
        match s.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => {
                buf.extend_from_slice(&chunk[..n]);
                if complete(&buf, head_only) {
                    break;
                }
            }
            Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {}
            Err(e) => {
                if buf.is_empty() {
                    a.note = Some(format!("read: {e}"));
                }
                break;
            }
        }
    }
    a.secs = began.elapsed().as_secs_f64();
    parse(&buf, &mut a);
    a
}

/// Where the head ends, if it has.
fn head_end(buf: &[u8]) -> Option<usize> {
    buf.windows(4).position(|w| w == b"\r\n\r\n").map(|p| p + 4)
}

fn complete(buf: &[u8], head_only: bool) -> bool {
    let Some(end) = head_end(buf) else { return false };
    if head_only {
        return true;
    }
    let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
    if let Some(len) =
        head.lines().find_map(|l| l.strip_prefix("content-length:")).and_then(|v| v.trim().parse::<usize>().ok())
    {
        return buf.len() >= end + len;
    }
    if head.contains("transfer-encoding: chunked") {
        return buf[end..].windows(5).any(|w| w == b"0\r\n\r\n");
    }
    false
}

fn parse(buf: &[u8], a: &mut Answer) {
    let Some(end) = head_end(buf) else {
        if !buf.is_empty() {
            a.note = Some(format!("incomplete answer: {}", printable(&buf[..buf.len().min(200)])));
        }
        return;
    };
    let head = String::from_utf8_lossy(&buf[..end]).to_string();
    let mut lines = head.split("\r\n");
    a.status = lines.next().and_then(|l| l.split(' ').nth(1)).and_then(|s| s.parse().ok());
    for l in lines {
        if let Some((k, v)) = l.split_once(':') {
            a.headers.push((k.trim().to_string(), v.trim().to_string()));
        }
    }
    let rest = &buf[end..];
    a.body = if a.header("transfer-encoding").is_some_and(|t| t.contains("chunked")) {
        dechunk(rest)
    } else {
        rest.to_vec()
    };
}

fn dechunk(mut b: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(p) = b.windows(2).position(|w| w == b"\r\n") {
        let size = usize::from_str_radix(String::from_utf8_lossy(&b[..p]).trim(), 16).unwrap_or(0);
        if size == 0 || b.len() < p + 2 + size {
            break;
        }
        out.extend_from_slice(&b[p + 2..p + 2 + size]);
        b = &b[(p + 4 + size).min(b.len())..];
    }
    out
}

/// A request: method, target, headers (Host and Connection: close added
/// unless given), body (with its Content-Length unless one is given).
fn req(method: &str, target: &str, headers: &[(&str, String)], body: &[u8]) -> Vec<u8> {
    let mut r = format!("{method} {target} HTTP/1.1\r\n").into_bytes();
    let has = |n: &str| headers.iter().any(|(k, _)| k.eq_ignore_ascii_case(n));
    if !has("host") {
        r.extend_from_slice(b"Host: 127.0.0.1\r\n");
    }
    r.extend_from_slice(b"Connection: close\r\n");
    for (k, v) in headers {
        r.extend_from_slice(format!("{k}: {v}\r\n").as_bytes());
    }
    if !has("content-length") && !has("transfer-encoding") && (!body.is_empty() || method == "POST") {
        r.extend_from_slice(format!("Content-Length: {}\r\n", body.len()).as_bytes());
    }
    r.extend_from_slice(b"\r\n");
    r.extend_from_slice(body);
    r
}

fn bearer(t: &str) -> (&'static str, String) {
    ("Authorization", format!("Bearer {t}"))
}

fn json_ct() -> (&'static str, String) {
    ("Content-Type", "application/json".into())
}

/// A simple GET with a token, for the snapshots and the set-up.
fn get(ctx: &Ctx, path: &str, token: &str) -> Answer {
    exchange(&ctx.addr, &req("GET", path, &[bearer(token)], b""), false, Duration::from_secs(10), false)
}

fn post_json(ctx: &Ctx, path: &str, token: Option<&str>, body: &Value, extra: &[(&str, String)]) -> Answer {
    let mut h = vec![json_ct()];
    if let Some(t) = token {
        h.push(bearer(t));
    }
    h.extend(extra.iter().cloned());
    exchange(&ctx.addr, &req("POST", path, &h, body.to_string().as_bytes()), false, Duration::from_secs(10), false)
}

fn body_json(a: &Answer) -> Value {
    serde_json::from_slice(&a.body).unwrap_or_default()
}

/// Everything a refused request must leave as it was.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Snapshot {
    parts: Vec<(String, String)>,
}

fn snapshot(ctx: &Ctx, sqlite: Option<&std::path::Path>) -> Snapshot {
    let mut parts = Vec::new();
    for (who, t) in [("A", &ctx.a_token), ("B", &ctx.b_token)] {
        for path in ["/api/me", "/api/tickets"] {
            let a = get(ctx, path, t);
            parts.push((format!("{who} GET {path}"), format!("{:?} {}", a.status, String::from_utf8_lossy(&a.body))));
        }
    }
    let a = get(ctx, "/api/admin/emissions", OPERATOR_TOKEN);
    let mut figures = body_json(&a);
    // The report's own clock-free figures only.
    strip_times(&mut figures);
    parts.push(("operator figures".into(), format!("{:?} {figures}", a.status)));
    if let Some(file) = sqlite {
        let sql = "SELECT (SELECT COUNT(*) FROM players), (SELECT COUNT(*) FROM accounts), (SELECT COUNT(*) FROM actions), \
                   (SELECT COUNT(*) FROM ticket_games), (SELECT COUNT(*) FROM idempotency_keys), (SELECT COUNT(*) FROM movements), \
                   (SELECT COUNT(*) FROM ledger_entries), (SELECT COUNT(*) FROM audit_log), \
                   (SELECT COUNT(*) FROM tickets WHERE status <> 'printed'), (SELECT COUNT(*) FROM emissions), (SELECT COUNT(*) FROM blocks)";
        if let Ok(out) = std::process::Command::new("sqlite3").arg("-readonly").arg(file).arg(sql).output() {
            let text = String::from_utf8_lossy(&out.stdout).trim().to_string();
            parts.push((
                "row counts (players|accounts|actions|ticket_games|idempotency_keys|movements|ledger_entries|audit_log|tickets sold|emissions|blocks)"
                    .into(),
                text,
            ));
        }
    }
    Snapshot { parts }
}

fn strip_times(v: &mut Value) {
    match v {
        Value::Object(m) => {
            m.retain(|k, _| !k.ends_with("_ms") && k != "generated_at");
            m.values_mut().for_each(strip_times);
        }
        Value::Array(a) => a.iter_mut().for_each(strip_times),
        _ => {}
    }
}

fn diff(a: &Snapshot, b: &Snapshot) -> Vec<String> {
    a.parts
        .iter()
        .zip(&b.parts)
        .filter(|(x, y)| x != y)
        .map(|(x, y)| format!("{}: {} -> {}", x.0, clip(&x.1), clip(&y.1)))
        .collect()
}

fn clip(s: &str) -> String {
    if s.len() > 300 { format!("{}...", &s[..s.floor_char_boundary(300)]) } else { s.to_string() }
}

/// Buys a ticket for `token` and plays `n` actions; returns its last JSON.
fn buy_and_play(ctx: &Ctx, token: &str, n: usize) -> anyhow::Result<Value> {
    let a = post_json(ctx, "/api/tickets", Some(token), &json!({}), &[]);
    anyhow::ensure!(a.status == Some(201), "purchase: {}", a.brief());
    let mut t = body_json(&a)["ticket"].clone();
    for _ in 0..n {
        if t["phase"] == "finished" {
            break;
        }
        let id = t["id"].as_str().unwrap_or_default().to_string();
        let a = post_json(ctx, &format!("/api/tickets/{id}/actions"), Some(token), &next_action(&t), &[]);
        anyhow::ensure!(a.status == Some(200), "action: {}", a.brief());
        t = body_json(&a)["ticket"].clone();
    }
    Ok(t)
}

fn set_a_ticket(ctx: &mut Ctx, t: &Value) {
    ctx.a_ticket = t["id"].as_str().unwrap_or_default().to_string();
    ctx.a_seq = t["seq"].as_u64().unwrap_or(0);
    ctx.a_phase = t["phase"].as_str().unwrap_or_default().to_string();
    ctx.a_hand = t["hand"].as_array().into_iter().flatten().filter_map(|c| c.as_str().map(str::to_string)).collect();
}

/// Re-reads A's ticket (a case may have moved it); a finished one is
/// replaced by a fresh ticket with two actions played.
fn refresh(ctx: &mut Ctx) -> anyhow::Result<()> {
    let a = get(ctx, &format!("/api/tickets/{}", ctx.a_ticket), &ctx.a_token);
    let mut t = body_json(&a)["ticket"].clone();
    if t["phase"] == "finished" || a.status != Some(200) {
        t = buy_and_play(ctx, &ctx.a_token.clone(), 2)?;
    }
    set_a_ticket(ctx, &t);
    Ok(())
}

fn setup(addr: &str) -> anyhow::Result<Ctx> {
    let mut ctx = Ctx { addr: addr.to_string(), ..Default::default() };
    for who in ["a", "b"] {
        let a = post_json(&ctx, "/api/players", None, &json!({"name": format!("hostile-{who}")}), &[]);
        anyhow::ensure!(a.status == Some(201), "registration: {}", a.brief());
        let token = body_json(&a)["token"].as_str().unwrap_or_default().to_string();
        if who == "a" {
            ctx.a_token = token;
        } else {
            ctx.b_token = token;
        }
    }
    let b_token = ctx.b_token.clone();
    let done = buy_and_play(&ctx, &b_token, 1000)?;
    ctx.b_done = done["id"].as_str().unwrap_or_default().to_string();
    let open = buy_and_play(&ctx, &b_token, 0)?;
    ctx.b_open = open["id"].as_str().unwrap_or_default().to_string();
    // A's ticket: two actions played, so that some cards have left the hand.
    let a_token = ctx.a_token.clone();
    let t = buy_and_play(&ctx, &a_token, 2)?;
    set_a_ticket(&mut ctx, &t);
    ctx.a_prev_card = None;
    Ok(ctx)
}

fn add(v: &mut Vec<Case>, cat: &'static str, name: String, want: Want, build: Build) {
    v.push(Case { cat, name, build, want, metric_probe: None, max_secs: None, slow: false, drip: false });
}

/// The corpus.
fn corpus(rng: &mut Rng) -> Vec<Case> {
    let mut v: Vec<Case> = Vec::new();

    // ---- malformed JSON, to every endpoint with a body ----
    let deep_arrays = format!("{}{}", "[".repeat(7000), "]".repeat(7000));
    let deep_objects = format!("{}1{}", "{\"a\":".repeat(2500), "}".repeat(2500));
    let malformed: Vec<(&str, Vec<u8>)> = vec![
        ("open brace", b"{".to_vec()),
        ("close brace", b"}".to_vec()),
        ("open bracket", b"[".to_vec()),
        ("truncated after key", b"{\"seq\":".to_vec()),
        ("truncated after comma", b"{\"seq\": 0,".to_vec()),
        ("unquoted key", b"{seq: 0}".to_vec()),
        ("single quotes", b"{'seq': 0, 'action': 'draw'}".to_vec()),
        ("missing comma", b"{\"seq\": 0 \"action\": \"draw\"}".to_vec()),
        ("trailing comma", b"{\"seq\": 0, \"action\": \"draw\",}".to_vec()),
        ("NaN", b"{\"seq\": NaN}".to_vec()),
        ("Infinity", b"{\"seq\": Infinity}".to_vec()),
        ("hex number", b"{\"seq\": 0x10}".to_vec()),
        ("leading zero", b"{\"seq\": 01}".to_vec()),
        ("bare fraction", b"{\"seq\": .5}".to_vec()),
        ("extra close", b"{\"seq\": 0}}".to_vec()),
        ("trailing garbage", b"{\"seq\": 0} trailing".to_vec()),
        ("two objects", b"{\"seq\": 0}{\"seq\": 0}".to_vec()),
        ("line comment", b"// comment\n{\"seq\": 0}".to_vec()),
        ("block comment", b"/* c */{\"seq\": 0}".to_vec()),
        ("byte order mark", b"\xef\xbb\xbf{\"seq\": 0}".to_vec()),
        ("bad escape", b"{\"a\": \"\\x41\"}".to_vec()),
        ("short unicode escape", b"{\"a\": \"\\u12\"}".to_vec()),
        ("unterminated string", b"{\"a\": \"unterminated}".to_vec()),
        ("a string", b"\"just a string\"".to_vec()),
        ("null", b"null".to_vec()),
        ("true", b"true".to_vec()),
        ("a number", b"0".to_vec()),
        ("huge exponent", b"1e999".to_vec()),
        ("truncated object", b"{\"seq\": 0, \"action\": \"draw\"".to_vec()),
        ("deep arrays (7000 levels)", deep_arrays.into_bytes()),
        ("deep objects (2500 levels)", deep_objects.into_bytes()),
        ("duplicate key", b"{\"name\": \"x\", \"name\": \"y\", \"seq\": 0, \"seq\": 0}".to_vec()),
        ("nul byte", b"\x00".to_vec()),
        ("xml", b"<seq>0</seq>".to_vec()),
        ("form encoding", b"seq=0&action=draw".to_vec()),
        ("key without value", b"{\"seq\"}".to_vec()),
        ("colon without key", b"{:0}".to_vec()),
        ("raw newline in string", b"{\"name\": \"a\nb\"}".to_vec()),
    ];
    type Target = (&'static str, fn(&Ctx) -> String, bool);
    let targets: [Target; 4] = [
        ("action", |c: &Ctx| c.actions_path(), true),
        ("registration", |_c: &Ctx| "/api/players".to_string(), false),
        ("purchase", |_c: &Ctx| "/api/tickets".to_string(), true),
        ("redeem", |_c: &Ctx| "/api/tickets/redeem".to_string(), false),
    ];
    for (name, body) in &malformed {
        for &(tname, path, auth) in &targets {
            if *name == "null" && (tname == "registration" || tname == "purchase") {
                continue; // JSON null is an absent optional body (CONTRACT.md)
            }
            let body = body.clone();
            add(
                &mut v,
                "malformed_json",
                format!("{name} -> {tname}"),
                Want::Exactly(&[400]),
                Box::new(move |c: &Ctx| {
                    let mut h = vec![json_ct()];
                    if auth {
                        h.push(bearer(&c.a_token));
                    }
                    req("POST", &path(c), &h, &body)
                }),
            );
        }
    }

    // ---- wrong types ----
    let action_bodies: Vec<Named<String>> = vec![
        ("seq as string", |c| format!(r#"{{"seq": "{}", "action": "draw"}}"#, c.a_seq)),
        ("seq as float", |c| format!(r#"{{"seq": {}.5, "action": "draw"}}"#, c.a_seq)),
        ("seq as bool", |_| r#"{"seq": true, "action": "draw"}"#.into()),
        ("seq as array", |c| format!(r#"{{"seq": [{}], "action": "draw"}}"#, c.a_seq)),
        ("seq as object", |c| format!(r#"{{"seq": {{"n": {}}}, "action": "draw"}}"#, c.a_seq)),
        ("seq null", |_| r#"{"seq": null, "action": "play", "card": "7"}"#.into()),
        ("seq missing", |c| {
            format!(r#"{{"action": "play", "card": "{}"}}"#, c.a_hand.first().cloned().unwrap_or_default())
        }),
        ("action as number", |c| format!(r#"{{"seq": {}, "action": 1}}"#, c.a_seq)),
        ("action null", |c| format!(r#"{{"seq": {}, "action": null}}"#, c.a_seq)),
        ("action unknown", |c| format!(r#"{{"seq": {}, "action": "win"}}"#, c.a_seq)),
        ("action upper case", |c| {
            format!(
                r#"{{"seq": {}, "action": "PLAY", "card": "{}"}}"#,
                c.a_seq,
                c.a_hand.first().cloned().unwrap_or_default()
            )
        }),
        ("action as array", |c| format!(r#"{{"seq": {}, "action": ["play"]}}"#, c.a_seq)),
        ("action missing", |c| {
            format!(r#"{{"seq": {}, "card": "{}"}}"#, c.a_seq, c.a_hand.first().cloned().unwrap_or_default())
        }),
        ("card as number", |c| format!(r#"{{"seq": {}, "action": "play", "card": 7}}"#, c.a_seq)),
        ("card as array", |c| format!(r#"{{"seq": {}, "action": "play", "card": ["Q"]}}"#, c.a_seq)),
        ("card null", |c| format!(r#"{{"seq": {}, "action": "play", "card": null}}"#, c.a_seq)),
        ("card unknown", |c| format!(r#"{{"seq": {}, "action": "play", "card": "Z"}}"#, c.a_seq)),
        ("card 11", |c| format!(r#"{{"seq": {}, "action": "play", "card": "11"}}"#, c.a_seq)),
        ("card 1", |c| format!(r#"{{"seq": {}, "action": "play", "card": "1"}}"#, c.a_seq)),
        ("card empty", |c| format!(r#"{{"seq": {}, "action": "play", "card": ""}}"#, c.a_seq)),
        ("card doubled", |c| format!(r#"{{"seq": {}, "action": "play", "card": "QQ"}}"#, c.a_seq)),
        ("card French V", |c| format!(r#"{{"seq": {}, "action": "play", "card": "V"}}"#, c.a_seq)),
        ("card with space", |c| format!(r#"{{"seq": {}, "action": "play", "card": " Q"}}"#, c.a_seq)),
        ("card as object", |c| format!(r#"{{"seq": {}, "action": "play", "card": {{"rank": "Q"}}}}"#, c.a_seq)),
        ("client_seed as number", |c| format!(r#"{{"seq": {}, "action": "draw", "client_seed": 12}}"#, c.a_seq)),
        ("body an array of the right values", |c| {
            // The fields of the valid next action, in order, as an array.
            let a = c.valid_action();
            match a.get("card") {
                Some(card) => format!(r#"[{}, "play", {card}]"#, c.a_seq),
                None => format!(r#"[{}, "draw"]"#, c.a_seq),
            }
        }),
        ("body an empty object", |_| "{}".into()),
        ("body an empty array", |_| "[]".into()),
    ];
    for (name, f) in action_bodies {
        add(
            &mut v,
            "wrong_types",
            format!("action: {name}"),
            Want::Refused,
            Box::new(move |c: &Ctx| req("POST", &c.actions_path(), &[json_ct(), bearer(&c.a_token)], f(c).as_bytes())),
        );
    }
    let other_bodies: Vec<(&str, &str, bool, &str)> = vec![
        ("/api/players", "name as number", false, r#"{"name": 12}"#),
        ("/api/players", "name as array", false, r#"{"name": ["x"]}"#),
        ("/api/players", "name as object", false, r#"{"name": {"first": "x"}}"#),
        ("/api/players", "name as bool", false, r#"{"name": true}"#),
        ("/api/players", "body an array of a name", false, r#"["array-name"]"#),
        ("/api/players", "body an array of null", false, r#"[null]"#),
        ("/api/tickets", "client_seed as object", true, r#"{"client_seed": {"a": 1}}"#),
        ("/api/tickets", "client_seed as number", true, r#"{"client_seed": 5}"#),
        ("/api/tickets", "body a string", true, r#""buy""#),
        ("/api/tickets/redeem", "code as number", false, r#"{"code": 123456}"#),
        ("/api/tickets/redeem", "code null", false, r#"{"code": null}"#),
        ("/api/tickets/redeem", "code as array", false, r#"{"code": ["x"]}"#),
        ("/api/tickets/redeem", "code missing", false, r#"{}"#),
        ("/api/retail/validate", "serial as number (no shop token)", false, r#"{"serial": 5}"#),
        (
            "/api/admin/emissions",
            "blocks as string (operator)",
            false,
            r#"{"table": "x", "blocks": "2", "channel": "online"}"#,
        ),
        (
            "/api/admin/emissions",
            "table as number (operator)",
            false,
            r#"{"table": 5, "blocks": 1, "channel": "online"}"#,
        ),
        (
            "/api/admin/emissions",
            "channel unknown (operator)",
            false,
            r#"{"table": "x", "blocks": 1, "channel": "moon"}"#,
        ),
    ];
    for (path, name, auth, body) in other_bodies {
        add(
            &mut v,
            "wrong_types",
            format!("{path}: {name}"),
            Want::Refused,
            Box::new(move |c: &Ctx| {
                let mut h = vec![json_ct()];
                if auth {
                    h.push(bearer(&c.a_token));
                }
                if path.starts_with("/api/admin") {
                    h.push(bearer(OPERATOR_TOKEN));
                }
                req("POST", path, &h, body.as_bytes())
            }),
        );
    }

    // ---- huge and negative numbers ----
    let numbers: Vec<(&str, &str, &str)> = vec![
        ("huge_numbers", "seq 1e400", "1e400"),
        ("huge_numbers", "seq 2^64", "18446744073709551616"),
        ("huge_numbers", "seq 2^64 - 1", "18446744073709551615"),
        ("huge_numbers", "seq 2^63", "9223372036854775808"),
        ("huge_numbers", "seq 2^63 - 1", "9223372036854775807"),
        ("huge_numbers", "seq 2^53 + 1", "9007199254740993"),
        ("huge_numbers", "seq 10^30", "1000000000000000000000000000000"),
        ("huge_numbers", "seq 1e18 as float", "1e18"),
        (
            "huge_numbers",
            "seq 100 digits",
            "1000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
        ),
        ("huge_numbers", "seq 2^32", "4294967296"),
        ("huge_numbers", "seq 2^31", "2147483648"),
        ("huge_numbers", "seq 1.7976931348623157e308", "1.7976931348623157e308"),
        ("negative_numbers", "seq -1", "-1"),
        ("negative_numbers", "seq -2^63", "-9223372036854775808"),
        ("negative_numbers", "seq -2^63 - 1", "-9223372036854775809"),
        ("negative_numbers", "seq -1e10", "-1e10"),
        ("negative_numbers", "seq -0.0", "-0.0"),
        ("negative_numbers", "seq -2^31", "-2147483648"),
        ("negative_numbers", "seq -1e400", "-1e400"),
        ("negative_numbers", "seq -0.5", "-0.5"),
    ];
    for (cat, name, n) in numbers {
        for (kind, card) in [("draw", false), ("play", true)] {
            add(
                &mut v,
                cat,
                format!("{name} ({kind})"),
                Want::Refused,
                Box::new(move |c: &Ctx| {
                    let body = if card {
                        format!(
                            r#"{{"seq": {n}, "action": "play", "card": "{}"}}"#,
                            c.a_hand.first().cloned().unwrap_or_default()
                        )
                    } else {
                        format!(r#"{{"seq": {n}, "action": "draw"}}"#)
                    };
                    req("POST", &c.actions_path(), &[json_ct(), bearer(&c.a_token)], body.as_bytes())
                }),
            );
        }
    }
    for (name, body) in
        [("purchase with Content-Length 2^64", "18446744073709551616"), ("purchase with Content-Length -1", "-1")]
    {
        add(
            &mut v,
            "negative_numbers",
            name.into(),
            Want::Protocol,
            Box::new(move |c: &Ctx| {
                req("POST", "/api/tickets", &[json_ct(), bearer(&c.a_token), ("Content-Length", body.into())], b"{}")
            }),
        );
    }
    for id in ["-1", "-9223372036854775809", "18446744073709551616", "1e400"] {
        add(
            &mut v,
            "huge_numbers",
            format!("ticket id {id}"),
            Want::Refused,
            Box::new(move |c: &Ctx| req("GET", &format!("/api/tickets/{id}"), &[bearer(&c.a_token)], b"")),
        );
        add(
            &mut v,
            "huge_numbers",
            format!("admin emission id {id}"),
            Want::Refused,
            Box::new(move |_c: &Ctx| req("GET", &format!("/api/admin/emissions/{id}"), &[bearer(OPERATOR_TOKEN)], b"")),
        );
    }

    // ---- control characters and invalid UTF-8 ----
    let nasty: Vec<(&str, Vec<u8>)> = vec![
        ("escaped NUL", b"\\u0000".to_vec()),
        ("escaped BEL", b"\\u0007".to_vec()),
        ("escaped ESC sequence", b"\\u001b[31m".to_vec()),
        ("escaped DEL", b"\\u007f".to_vec()),
        ("escaped C1 control", b"\\u0085".to_vec()),
        ("raw tab", b"a\tb".to_vec()),
        ("raw control byte", b"a\x01b".to_vec()),
        ("raw NUL byte", b"a\x00b".to_vec()),
        ("lone surrogate escape", b"\\ud800".to_vec()),
        ("invalid UTF-8 byte", b"\xff".to_vec()),
        ("overlong encoding", b"\xc0\xaf".to_vec()),
        ("encoded surrogate", b"\xed\xa0\x80".to_vec()),
        ("truncated multibyte", b"\xe2\x82".to_vec()),
        ("code point above U+10FFFF", b"\xf4\x90\x80\x80".to_vec()),
    ];
    for (name, bytes) in &nasty {
        let b1 = bytes.clone();
        add(
            &mut v,
            "control_utf8",
            format!("registration name with {name}"),
            Want::Exactly(&[400]),
            Box::new(move |_c: &Ctx| {
                let mut body = b"{\"name\": \"x".to_vec();
                body.extend_from_slice(&b1);
                body.extend_from_slice(b"\"}");
                req("POST", "/api/players", &[json_ct()], &body)
            }),
        );
        let b2 = bytes.clone();
        add(
            &mut v,
            "control_utf8",
            format!("card with {name}"),
            Want::Refused,
            Box::new(move |c: &Ctx| {
                let mut body = format!(
                    r#"{{"seq": {}, "action": "play", "card": "{}"#,
                    c.a_seq,
                    c.a_hand.first().cloned().unwrap_or_default()
                )
                .into_bytes();
                body.extend_from_slice(&b2);
                body.extend_from_slice(b"\"}");
                req("POST", &c.actions_path(), &[json_ct(), bearer(&c.a_token)], &body)
            }),
        );
        let b3 = bytes.clone();
        add(
            &mut v,
            "control_utf8",
            format!("redeem code with {name}"),
            Want::Refused,
            Box::new(move |_c: &Ctx| {
                let mut body = b"{\"code\": \"ABCD".to_vec();
                body.extend_from_slice(&b3);
                body.extend_from_slice(b"\"}");
                req("POST", "/api/tickets/redeem", &[json_ct()], &body)
            }),
        );
    }
    add(
        &mut v,
        "control_utf8",
        "client_seed with control characters at seq 0".into(),
        Want::Refused,
        Box::new(|c: &Ctx| {
            let body = r#"{"seq": 0, "action": "play", "card": "7", "client_seed": "a\u0007b"}"#;
            req(
                "POST",
                &format!("/api/tickets/{}/actions", c.b_open),
                &[json_ct(), bearer(&c.b_token)],
                body.as_bytes(),
            )
        }),
    );
    add(
        &mut v,
        "control_utf8",
        "client_seed non-ASCII at seq 0".into(),
        Want::Refused,
        Box::new(|c: &Ctx| {
            let body = r#"{"seq": 0, "action": "play", "card": "7", "client_seed": "é"}"#;
            req(
                "POST",
                &format!("/api/tickets/{}/actions", c.b_open),
                &[json_ct(), bearer(&c.b_token)],
                body.as_bytes(),
            )
        }),
    );
    add(
        &mut v,
        "control_utf8",
        "client_seed of 65 characters at seq 0".into(),
        Want::Refused,
        Box::new(|c: &Ctx| {
            let body = format!(r#"{{"seq": 0, "action": "play", "card": "7", "client_seed": "{}"}}"#, "s".repeat(65));
            req(
                "POST",
                &format!("/api/tickets/{}/actions", c.b_open),
                &[json_ct(), bearer(&c.b_token)],
                body.as_bytes(),
            )
        }),
    );
    add(
        &mut v,
        "control_utf8",
        "registration name of 65 characters".into(),
        Want::Exactly(&[400]),
        Box::new(|_c: &Ctx| {
            req("POST", "/api/players", &[json_ct()], format!(r#"{{"name": "{}"}}"#, "n".repeat(65)).as_bytes())
        }),
    );
    for (name, raw) in [
        ("Authorization with invalid UTF-8", b"Bearer \xff\xfe".to_vec()),
        ("Authorization with a NUL", b"Bearer a\x00b".to_vec()),
        ("Authorization with a control byte", b"Bearer a\x07b".to_vec()),
        ("Authorization with Latin-1", b"Bearer caf\xe9".to_vec()),
    ] {
        add(
            &mut v,
            "control_utf8",
            name.into(),
            Want::Protocol,
            Box::new(move |_c: &Ctx| {
                let mut r = b"GET /api/me HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nAuthorization: ".to_vec();
                r.extend_from_slice(&raw);
                r.extend_from_slice(b"\r\n\r\n");
                r
            }),
        );
    }
    for (name, raw) in [
        ("raw byte 0xFF in the path", b"/api/tickets/\xff".to_vec()),
        ("raw NUL in the path", b"/api/tickets/a\x00b".to_vec()),
        ("raw space-like control in the path", b"/api/\x0bme".to_vec()),
        ("raw UTF-8 in the path", "/api/tickets/é".as_bytes().to_vec()),
    ] {
        add(
            &mut v,
            "control_utf8",
            name.into(),
            Want::Protocol,
            Box::new(move |c: &Ctx| {
                let mut r = b"GET ".to_vec();
                r.extend_from_slice(&raw);
                r.extend_from_slice(
                    format!(
                        " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nAuthorization: Bearer {}\r\n\r\n",
                        c.a_token
                    )
                    .as_bytes(),
                );
                r
            }),
        );
    }

    // ---- 1 MB bodies ----
    let mb = 1 << 20;
    let big_targets: Vec<(&str, &str)> = vec![
        ("/api/players", "registration"),
        ("/api/tickets", "purchase"),
        ("ACTIONS", "action"),
        ("/api/tickets/redeem", "redeem"),
        ("/api/retail/sell", "retail sell"),
        ("/api/admin/emissions", "operator emission"),
    ];
    for (path, name) in big_targets {
        add(
            &mut v,
            "big_bodies",
            format!("1 MB JSON string -> {name}"),
            Want::Exactly(&[413]),
            Box::new(move |c: &Ctx| {
                let body = format!(r#"{{"name": "{}"}}"#, "x".repeat(mb));
                let p = if path == "ACTIONS" { c.actions_path() } else { path.to_string() };
                let t = if path.starts_with("/api/admin") { OPERATOR_TOKEN.to_string() } else { c.a_token.clone() };
                req("POST", &p, &[json_ct(), bearer(&t)], body.as_bytes())
            }),
        );
    }
    add(
        &mut v,
        "big_bodies",
        "1 MB of zeros -> action".into(),
        Want::Exactly(&[413]),
        Box::new(move |c: &Ctx| req("POST", &c.actions_path(), &[json_ct(), bearer(&c.a_token)], &vec![0u8; mb])),
    );
    add(
        &mut v,
        "big_bodies",
        "1 MB of spaces -> registration".into(),
        Want::Exactly(&[413]),
        Box::new(move |_c: &Ctx| req("POST", "/api/players", &[json_ct()], &vec![b' '; mb])),
    );
    add(
        &mut v,
        "big_bodies",
        "1 MB text/plain -> purchase".into(),
        Want::Exactly(&[413]),
        Box::new(move |c: &Ctx| {
            req("POST", "/api/tickets", &[("Content-Type", "text/plain".into()), bearer(&c.a_token)], &vec![b'a'; mb])
        }),
    );
    add(
        &mut v,
        "big_bodies",
        "1 MB chunked -> action".into(),
        Want::Exactly(&[413]),
        Box::new(move |c: &Ctx| {
            let mut body = Vec::new();
            for _ in 0..16 {
                body.extend_from_slice(b"10000\r\n");
                body.extend(std::iter::repeat_n(b'[', 0x10000));
                body.extend_from_slice(b"\r\n");
            }
            body.extend_from_slice(b"0\r\n\r\n");
            req(
                "POST",
                &c.actions_path(),
                &[json_ct(), bearer(&c.a_token), ("Transfer-Encoding", "chunked".into())],
                &body,
            )
        }),
    );
    add(
        &mut v,
        "big_bodies",
        "1 MB array of valid actions -> action".into(),
        Want::Exactly(&[413]),
        Box::new(move |c: &Ctx| {
            let one = c.valid_action().to_string();
            let mut body = String::from("[");
            while body.len() < mb {
                body.push_str(&one);
                body.push(',');
            }
            body.push_str(&one);
            body.push(']');
            req("POST", &c.actions_path(), &[json_ct(), bearer(&c.a_token)], body.as_bytes())
        }),
    );
    add(
        &mut v,
        "big_bodies",
        "17 KB body (just above the limit) -> registration".into(),
        Want::Exactly(&[413]),
        Box::new(move |_c: &Ctx| {
            req("POST", "/api/players", &[json_ct()], format!(r#"{{"name": "{}"}}"#, "y".repeat(17 * 1024)).as_bytes())
        }),
    );
    add(
        &mut v,
        "big_bodies",
        "1 MB body on a GET".into(),
        Want::Refused,
        Box::new(move |_c: &Ctx| req("GET", "/api/me", &[json_ct()], &vec![b'{'; mb])),
    );

    // ---- tokens ----
    type Endpoint = (&'static str, fn(&Ctx) -> (String, String, Vec<u8>));
    let endpoints: Vec<Endpoint> = vec![
        ("GET /api/me", |_c| ("GET".into(), "/api/me".into(), vec![])),
        ("GET /api/tickets", |_c| ("GET".into(), "/api/tickets".into(), vec![])),
        ("POST /api/tickets", |_c| ("POST".into(), "/api/tickets".into(), vec![])),
        ("GET ticket", |c| ("GET".into(), format!("/api/tickets/{}", c.a_ticket), vec![])),
        ("POST action (a valid body)", |c| {
            ("POST".into(), c.actions_path(), c.valid_action().to_string().into_bytes())
        }),
        ("GET record", |c| ("GET".into(), format!("/api/tickets/{}/record", c.a_ticket), vec![])),
        ("GET /api/admin/emissions", |_c| ("GET".into(), "/api/admin/emissions".into(), vec![])),
        ("POST /api/retail/validate", |c| {
            ("POST".into(), "/api/retail/validate".into(), json!({"serial": c.a_ticket}).to_string().into_bytes())
        }),
    ];
    let long_token = rng.hex(5000);
    type TokenFn = Box<dyn Fn(&Ctx) -> Option<String> + Send + Sync>;
    let tokens: Vec<(&str, TokenFn)> = vec![
        ("missing", Box::new(|_c| None)),
        ("empty", Box::new(|_c| Some(String::new()))),
        ("scheme only", Box::new(|_c| Some("Bearer".into()))),
        ("scheme and space", Box::new(|_c| Some("Bearer ".into()))),
        ("unknown token", Box::new(|_c| Some("Bearer 0123456789abcdef0123456789abcdef".into()))),
        ("Basic scheme", Box::new(|_c| Some("Basic dXNlcjpwYXNz".into()))),
        ("player token with a suffix", Box::new(|c| Some(format!("Bearer {}x", c.a_token)))),
        ("player token truncated", Box::new(|c| Some(format!("Bearer {}", &c.a_token[..c.a_token.len() / 2])))),
        ("player token as Token scheme", Box::new(|c| Some(format!("Token {}", c.a_token)))),
        ("player token without scheme", Box::new(|c| Some(c.a_token.clone()))),
        ("player token and a second word", Box::new(|c| Some(format!("Bearer {} extra", c.a_token)))),
        ("token of 300 characters", Box::new(|_c| Some(format!("Bearer {}", "a".repeat(300))))),
        ("token of 10 000 characters", Box::new(move |_c| Some(format!("Bearer {long_token}")))),
        ("operator token with a suffix", Box::new(|_c| Some(format!("Bearer {OPERATOR_TOKEN}x")))),
        ("SQL in the token", Box::new(|_c| Some("Bearer ' OR '1'='1".into()))),
    ];
    let tokens = std::sync::Arc::new(tokens);
    for (ename, ep) in &endpoints {
        for ti in 0..tokens.len() {
            let tokens = tokens.clone();
            let ep = *ep;
            add(
                &mut v,
                "tokens",
                format!("{ename} with {} token", tokens[ti].0),
                Want::Exactly(&[401, 403]),
                Box::new(move |c: &Ctx| {
                    let (m, p, body) = ep(c);
                    let mut h = vec![json_ct()];
                    if let Some(t) = (tokens[ti].1)(c) {
                        h.push(("Authorization", t));
                    }
                    req(&m, &p, &h, &body)
                }),
            );
        }
    }
    for (name, f) in [
        ("player token on the operator's desk", (|c: &Ctx| c.a_token.clone()) as fn(&Ctx) -> String),
        ("player token on the retail desk", |c: &Ctx| c.a_token.clone()),
    ] {
        let path = if name.contains("operator") { "/api/admin/emissions" } else { "/api/retail/validate" };
        add(
            &mut v,
            "tokens",
            name.into(),
            Want::Exactly(&[401, 403]),
            Box::new(move |c: &Ctx| req("POST", path, &[json_ct(), bearer(&f(c))], br#"{"serial": "x"}"#)),
        );
    }
    add(
        &mut v,
        "tokens",
        "two Authorization headers, a bad one first".into(),
        Want::Exactly(&[400, 401]),
        Box::new(|c: &Ctx| req("GET", "/api/me", &[("Authorization", "Bearer nope".into()), bearer(&c.a_token)], b"")),
    );

    // ---- other players' tickets ----
    let other: Vec<Named<Vec<u8>>> = vec![
        ("B reads A's ticket", |c| req("GET", &format!("/api/tickets/{}", c.a_ticket), &[bearer(&c.b_token)], b"")),
        ("B reads A's record", |c| {
            req("GET", &format!("/api/tickets/{}/record", c.a_ticket), &[bearer(&c.b_token)], b"")
        }),
        ("B plays A's ticket (A's valid next action)", |c| {
            req("POST", &c.actions_path(), &[json_ct(), bearer(&c.b_token)], c.valid_action().to_string().as_bytes())
        }),
        ("A reads B's finished ticket", |c| {
            req("GET", &format!("/api/tickets/{}", c.b_done), &[bearer(&c.a_token)], b"")
        }),
        ("A reads B's record (seed revealed)", |c| {
            req("GET", &format!("/api/tickets/{}/record", c.b_done), &[bearer(&c.a_token)], b"")
        }),
        ("A plays B's fresh ticket", |c| {
            req(
                "POST",
                &format!("/api/tickets/{}/actions", c.b_open),
                &[json_ct(), bearer(&c.a_token)],
                br#"{"seq": 0, "action": "play", "card": "7"}"#,
            )
        }),
        ("A replays B's purchase Idempotency-Key space", |c| {
            req("GET", &format!("/api/tickets/{}", c.b_open.to_lowercase()), &[bearer(&c.a_token)], b"")
        }),
        ("A's ticket id in upper case, by B", |c| {
            req("GET", &format!("/api/tickets/{}", c.a_ticket.to_uppercase()), &[bearer(&c.b_token)], b"")
        }),
        ("operator token reads a player's ticket", |c| {
            req("GET", &format!("/api/tickets/{}", c.a_ticket), &[bearer(OPERATOR_TOKEN)], b"")
        }),
        ("operator token plays a player's ticket", |c| {
            req(
                "POST",
                &c.actions_path(),
                &[json_ct(), bearer(OPERATOR_TOKEN)],
                c.valid_action().to_string().as_bytes(),
            )
        }),
    ];
    for (name, f) in other {
        add(&mut v, "other_players", name.into(), Want::Exactly(&[401, 403, 404]), Box::new(f));
    }

    // ---- unknown ids ----
    let ids: Vec<String> = vec![
        rng.hex(16),
        rng.hex(32),
        "0".into(),
        "ASC-0000-0000-0".into(),
        "null".into(),
        "undefined".into(),
        "x".repeat(300),
        "%C3%A9".into(),
        "%20".into(),
        "a.b".into(),
        "...".into(),
        "%2A".into(),
        "'%20OR%201=1--".into(),
    ];
    for id in ids {
        for (what, sub, method) in [("ticket", "", "GET"), ("record", "/record", "GET"), ("action", "/actions", "POST")]
        {
            let id = id.clone();
            add(
                &mut v,
                "unknown_ids",
                format!("{what} of unknown id {}", clip(&id)),
                Want::Refused,
                Box::new(move |c: &Ctx| {
                    let body: &[u8] = if method == "POST" { br#"{"seq": 0, "action": "draw"}"# } else { b"" };
                    req(method, &format!("/api/tickets/{id}{sub}"), &[json_ct(), bearer(&c.a_token)], body)
                }),
            );
        }
    }
    for path in ["/api/admin/emissions/999", "/api/admin/emissions/1/blocks/999/print.csv", "/api/admin/emissions/abc"]
    {
        add(
            &mut v,
            "unknown_ids",
            format!("operator GET {path}"),
            Want::Refused,
            Box::new(move |_c: &Ctx| req("GET", path, &[bearer(OPERATOR_TOKEN)], b"")),
        );
    }

    // ---- path tricks ----
    let paths: Vec<&str> = vec![
        "/api/tickets/%2e%2e/actions",
        "/api/tickets/%2e%2e",
        "/api/tickets/%2e%2e%2fme",
        "/api/tickets/..%2f..%2fme",
        "/%2e%2e/%2e%2e/etc/passwd",
        "/../../etc/passwd",
        "/..%2f..%2fetc%2fpasswd",
        "/app.js/../../Cargo.toml",
        "/%2e%2e/Cargo.toml",
        "/web/../Cargo.toml",
        "/.git/config",
        "/.env",
        "/etc/passwd",
        "/api//me",
        "//api/me",
        "/api/me/",
        "/api/tickets//actions",
        "/api/tickets/%FF",
        "/api/tickets/%FF/record",
        "/api/tickets/%FF/actions",
        "/api/tickets/%00",
        "/api/tickets/%",
        "/api/tickets/%zz",
        "/api/tickets/%C0%AF",
        "/%FF",
        "/%FF.js",
        "/API/ME",
        "/api/me;jsessionid=1",
        "/api/me%00",
        "/index.html%00.js",
        "/app.js%2f..",
        "/api/admin/emissions/%2e%2e",
        "/api/admin%2femissions",
        "/api/%61dmin/emissions",
        "/api/tickets/redeem/../../admin/emissions",
        "/metrics/..",
        "/nonexistent",
        "/api/nonexistent",
        "/api",
        "/api/",
        "*",
        "http://evil.example/api/me",
    ];
    for p in paths {
        add(
            &mut v,
            "path_tricks",
            format!("GET {p} (no token)"),
            if p == "*" || p.starts_with("http://") { Want::Protocol } else { Want::Refused },
            Box::new(move |_c: &Ctx| req("GET", p, &[], b"")),
        );
    }
    for (name, len) in
        [("very long path, 8 KB", 8 * 1024), ("very long path, 60 KB", 60 * 1024), ("very long path, 1 MB", 1 << 20)]
    {
        add(
            &mut v,
            "path_tricks",
            name.into(),
            if len > 16 * 1024 { Want::Protocol } else { Want::Refused },
            Box::new(move |_c: &Ctx| req("GET", &format!("/api/tickets/{}", "a".repeat(len)), &[], b"")),
        );
    }
    add(
        &mut v,
        "path_tricks",
        "many segments (5000 slashes)".into(),
        Want::Refused,
        Box::new(|_c: &Ctx| req("GET", &format!("/api{}", "/x".repeat(5000)), &[], b"")),
    );
    add(
        &mut v,
        "path_tricks",
        "query string of 8 KB on an action".into(),
        Want::Refused,
        Box::new(|c: &Ctx| {
            req(
                "POST",
                &format!("{}?{}", c.actions_path(), "q=1&".repeat(2000)),
                &[json_ct()],
                c.valid_action().to_string().as_bytes(),
            )
        }),
    );

    // ---- header abuse ----
    for ct in [
        "text/plain",
        "application/xml",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
        "",
        "application/jsonx",
        "json",
        "application/json\u{0}",
        "text/json",
    ] {
        let ct = ct.to_string();
        let want = if ct.contains('\u{0}') { Want::Protocol } else { Want::Exactly(&[400, 415]) };
        let ct2 = ct.clone();
        add(
            &mut v,
            "headers",
            format!("Content-Type {:?} on a valid action", ct),
            want,
            Box::new(move |c: &Ctx| {
                req(
                    "POST",
                    &c.actions_path(),
                    &[("Content-Type", ct.clone()), bearer(&c.a_token)],
                    c.valid_action().to_string().as_bytes(),
                )
            }),
        );
        add(
            &mut v,
            "headers",
            format!("Content-Type {:?} on a registration with a name", ct2),
            want,
            Box::new(move |_c: &Ctx| {
                req("POST", "/api/players", &[("Content-Type", ct2.clone())], br#"{"name": "ct"}"#)
            }),
        );
    }
    add(
        &mut v,
        "headers",
        "no Content-Type on a valid action".into(),
        Want::Exactly(&[400, 415]),
        Box::new(|c: &Ctx| {
            req("POST", &c.actions_path(), &[bearer(&c.a_token)], c.valid_action().to_string().as_bytes())
        }),
    );
    for (name, size) in
        [("one header of 8 KB", 8 * 1024), ("one header of 64 KB", 64 * 1024), ("one header of 1 MB", 1 << 20)]
    {
        add(
            &mut v,
            "headers",
            name.to_string(),
            Want::Protocol,
            Box::new(move |_c: &Ctx| req("GET", "/api/me", &[("X-Junk", "j".repeat(size))], b"")),
        );
    }
    for (name, n) in [("200 headers", 200), ("5000 headers", 5000)] {
        add(
            &mut v,
            "headers",
            name.into(),
            Want::Protocol,
            Box::new(move |_c: &Ctx| {
                let h: Vec<(&str, String)> = (0..n).map(|i| ("X-Many", format!("v{i}"))).collect();
                req("GET", "/api/me", &h, b"")
            }),
        );
    }
    add(
        &mut v,
        "headers",
        "header name of 10 KB".into(),
        Want::Protocol,
        Box::new(|_c: &Ctx| {
            let mut r = b"GET /api/me HTTP/1.1\r\nHost: x\r\nConnection: close\r\n".to_vec();
            r.extend(std::iter::repeat_n(b'N', 10 * 1024));
            r.extend_from_slice(b": v\r\n\r\n");
            r
        }),
    );
    for (name, cl) in [
        ("Content-Length above the body limit, short body", "1000000"),
        ("Content-Length of 10 GB, short body", "10000000000"),
    ] {
        v.push(Case {
            cat: "headers",
            name: name.into(),
            build: Box::new(move |c: &Ctx| {
                req(
                    "POST",
                    &c.actions_path(),
                    &[json_ct(), bearer(&c.a_token), ("Content-Length", cl.into())],
                    b"{\"seq\": 0",
                )
            }),
            want: Want::Exactly(&[413]),
            metric_probe: None,
            max_secs: Some(2.0),
            slow: true,
            drip: false,
        });
    }
    for (name, headers, body) in [
        ("Content-Length not a number", vec![("Content-Length", "abc".to_string())], b"{}".to_vec()),
        (
            "two different Content-Lengths",
            vec![("Content-Length", "2".to_string()), ("Content-Length", "5".to_string())],
            b"{}".to_vec(),
        ),
        (
            "Content-Length and chunked together",
            vec![("Content-Length", "2".to_string()), ("Transfer-Encoding", "chunked".to_string())],
            b"zz\r\n{}\r\n0\r\n\r\n".to_vec(),
        ),
        ("bad chunk size", vec![("Transfer-Encoding", "chunked".to_string())], b"zz\r\n{}\r\n0\r\n\r\n".to_vec()),
        ("Transfer-Encoding gzip", vec![("Transfer-Encoding", "gzip".to_string())], b"{}".to_vec()),
        ("Content-Length with a plus sign", vec![("Content-Length", "+2".to_string())], b"{}".to_vec()),
    ] {
        add(
            &mut v,
            "headers",
            format!("{name} -> registration"),
            Want::Protocol,
            Box::new(move |_c: &Ctx| {
                let mut h = vec![json_ct()];
                h.extend(headers.iter().map(|(k, v)| (*k, v.clone())));
                req("POST", "/api/players", &h, &body)
            }),
        );
    }
    // Well-formed chunks and a length: refused in the error shape, in either
    // order (a proxy in front might have read the length).
    for (first, second) in [("Content-Length", "Transfer-Encoding"), ("Transfer-Encoding", "Content-Length")] {
        add(
            &mut v,
            "headers",
            format!("{first} then {second}, both well-formed -> registration"),
            Want::Exactly(&[400]),
            Box::new(move |_c: &Ctx| {
                let value = |h: &str| if h == "Content-Length" { "2".to_string() } else { "chunked".to_string() };
                let h = vec![json_ct(), (first, value(first)), (second, value(second))];
                req("POST", "/api/players", &h, b"2\r\n{}\r\n0\r\n\r\n")
            }),
        );
    }
    add(
        &mut v,
        "headers",
        "Content-Length shorter than the body (smuggled second request)".into(),
        Want::Refused,
        Box::new(|c: &Ctx| {
            let smuggled = format!(
                "POST {} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAuthorization: Bearer {}\r\nContent-Length: {}\r\n\r\n{}",
                c.actions_path(),
                c.a_token,
                c.valid_action().to_string().len(),
                c.valid_action()
            );
            let mut body = b"{\"name\": 1}".to_vec();
            let len = body.len();
            body.extend_from_slice(smuggled.as_bytes());
            req("POST", "/api/players", &[json_ct(), ("Content-Length", len.to_string())], &body)
        }),
    );
    for (name, key) in [
        ("Idempotency-Key of 129 characters", "k".repeat(129)),
        ("Idempotency-Key empty", String::new()),
        ("Idempotency-Key non-ASCII", "clé".to_string()),
    ] {
        add(
            &mut v,
            "headers",
            format!("purchase with {name}"),
            Want::Exactly(&[400]),
            Box::new(move |c: &Ctx| {
                let mut r = format!("POST /api/tickets HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAuthorization: Bearer {}\r\nContent-Length: 0\r\nIdempotency-Key: ", c.a_token).into_bytes();
                r.extend_from_slice(key.as_bytes());
                r.extend_from_slice(b"\r\n\r\n");
                r
            }),
        );
    }
    add(
        &mut v,
        "headers",
        "Expect: 100-continue with 10 MB announced".into(),
        Want::Exactly(&[413, 417]),
        Box::new(|_c: &Ctx| {
            req(
                "POST",
                "/api/players",
                &[json_ct(), ("Expect", "100-continue".into()), ("Content-Length", "10000000".into())],
                b"",
            )
        }),
    );
    add(
        &mut v,
        "headers",
        "request line HTTP/3.0".into(),
        Want::Protocol,
        Box::new(|_c: &Ctx| b"GET /api/me HTTP/3.0\r\nHost: x\r\nConnection: close\r\n\r\n".to_vec()),
    );
    add(
        &mut v,
        "headers",
        "request line without version".into(),
        Want::Protocol,
        Box::new(|_c: &Ctx| b"GET /api/me\r\nHost: x\r\n\r\n".to_vec()),
    );
    add(
        &mut v,
        "headers",
        "garbage instead of a request".into(),
        Want::Protocol,
        Box::new(|_c: &Ctx| b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03 TLS hello\r\n\r\n".to_vec()),
    );

    // HEAD on the static files answers like GET (200, no body).
    for p in ["/", "/app.js", "/style.css", "/favicon.svg"] {
        add(&mut v, "headers", format!("HEAD {p}"), Want::HeadOk, Box::new(move |_c: &Ctx| req("HEAD", p, &[], b"")));
    }
    add(
        &mut v,
        "headers",
        "HEAD on an unknown file".into(),
        Want::Refused,
        Box::new(|_c: &Ctx| req("HEAD", "/nope.js", &[], b"")),
    );
    // Methods: known ones where they do not belong, and made-up ones.
    for (m, p) in [
        ("PUT", "/api/me"),
        ("DELETE", "/api/tickets"),
        ("PATCH", "ACTIONS"),
        ("OPTIONS", "/api/players"),
        ("TRACE", "/api/me"),
        ("DELETE", "/"),
        ("PUT", "/app.js"),
        ("get", "/api/me"),
        ("PROPFIND", "/"),
        ("MKCOL", "/api/tickets"),
        ("BREW", "/api/tickets"),
        ("CONNECT", "/api/me"),
    ] {
        add(
            &mut v,
            "methods",
            format!("{m} {p}"),
            if m == "CONNECT" { Want::Protocol } else { Want::Refused },
            Box::new(move |c: &Ctx| {
                let path = if p == "ACTIONS" { c.actions_path() } else { p.to_string() };
                req(m, &path, &[bearer(&c.a_token), json_ct()], b"")
            }),
        );
    }
    for i in 0..25 {
        let m = format!("X{}{}", rng.hex(6).to_uppercase(), i);
        let p = ["/api/me", "/api/tickets", "/", "/metrics", "/healthz"][i % 5];
        let probe = m.clone();
        v.push(Case {
            cat: "methods",
            name: format!("made-up method {m} {p}"),
            build: Box::new(move |_c: &Ctx| req(&m, p, &[], b"")),
            want: Want::Refused,
            metric_probe: Some(probe),
            max_secs: None,
            slow: false,
            drip: false,
        });
    }
    add(
        &mut v,
        "methods",
        "method of 8 KB".into(),
        Want::Protocol,
        Box::new(|_c: &Ctx| req(&"M".repeat(8 * 1024), "/api/me", &[], b"")),
    );

    // ---- out of turn ----
    let turns: Vec<Named<Vec<u8>>> = vec![
        ("the wrong kind for the phase", |c| {
            let body = if c.a_phase == "play" {
                json!({"seq": c.a_seq, "action": "draw"})
            } else {
                json!({"seq": c.a_seq, "action": "play", "card": "7"})
            };
            req("POST", &c.actions_path(), &[json_ct(), bearer(&c.a_token)], body.to_string().as_bytes())
        }),
        ("a card no longer in the hand", |c| {
            let gone = ["7", "8", "9", "10", "J", "Q", "K", "A"]
                .into_iter()
                .find(|r| !c.a_hand.iter().any(|h| h == r))
                .unwrap_or("7");
            let body = json!({"seq": c.a_seq, "action": "play", "card": gone});
            req("POST", &c.actions_path(), &[json_ct(), bearer(&c.a_token)], body.to_string().as_bytes())
        }),
        ("play without a card", |c| {
            req(
                "POST",
                &c.actions_path(),
                &[json_ct(), bearer(&c.a_token)],
                format!(r#"{{"seq": {}, "action": "play"}}"#, c.a_seq).as_bytes(),
            )
        }),
        ("draw with a card", |c| {
            req(
                "POST",
                &c.actions_path(),
                &[json_ct(), bearer(&c.a_token)],
                format!(r#"{{"seq": {}, "action": "draw", "card": "Q"}}"#, c.a_seq).as_bytes(),
            )
        }),
        ("client_seed after seq 0", |c| {
            let mut b = c.valid_action();
            b["client_seed"] = json!("late-seed");
            req("POST", &c.actions_path(), &[json_ct(), bearer(&c.a_token)], b.to_string().as_bytes())
        }),
        ("play on a finished ticket", |c| {
            req(
                "POST",
                &format!("/api/tickets/{}/actions", c.b_done),
                &[json_ct(), bearer(&c.b_token)],
                br#"{"seq": 100, "action": "play", "card": "7"}"#,
            )
        }),
        ("draw on a finished ticket", |c| {
            req(
                "POST",
                &format!("/api/tickets/{}/actions", c.b_done),
                &[json_ct(), bearer(&c.b_token)],
                br#"{"seq": 100, "action": "draw"}"#,
            )
        }),
        ("draw as the first action", |c| {
            req(
                "POST",
                &format!("/api/tickets/{}/actions", c.b_open),
                &[json_ct(), bearer(&c.b_token)],
                br#"{"seq": 0, "action": "draw"}"#,
            )
        }),
        ("lower-case card not in the hand", |c| {
            let gone = ["j", "q", "k", "a"].into_iter().find(|r| !c.a_hand.iter().any(|h| h.eq_ignore_ascii_case(r)));
            let body = json!({"seq": c.a_seq, "action": "play", "card": gone.unwrap_or("x")});
            req("POST", &c.actions_path(), &[json_ct(), bearer(&c.a_token)], body.to_string().as_bytes())
        }),
        ("redeem a paper code on an online ticket's serial", |c| {
            req("POST", "/api/tickets/redeem", &[json_ct()], json!({"code": c.a_ticket}).to_string().as_bytes())
        }),
        ("retail pay of an online ticket (no shop)", |c| {
            req(
                "POST",
                "/api/retail/pay",
                &[json_ct(), bearer(&c.a_token)],
                json!({"serial": c.b_done}).to_string().as_bytes(),
            )
        }),
    ];
    for (name, f) in turns {
        add(&mut v, "out_of_turn", name.into(), Want::Refused, Box::new(f));
    }

    // ---- wrong seq ----
    let seqs: Vec<Named<u64>> = vec![
        ("seq + 1", |c| c.a_seq + 1),
        ("seq + 2", |c| c.a_seq + 2),
        ("seq + 100", |c| c.a_seq + 100),
        ("seq - 1 with a different body", |c| c.a_seq.saturating_sub(1)),
        ("seq 0 on a ticket in play", |_c| 0),
        ("seq u64::MAX", |_c| u64::MAX),
        ("seq i64::MAX", |_c| i64::MAX as u64),
        ("seq i64::MAX + 1", |_c| i64::MAX as u64 + 1),
        ("seq u32::MAX", |_c| u32::MAX as u64),
    ];
    for (name, f) in seqs {
        for kind in ["play", "draw"] {
            if kind == "draw" && name.starts_with("seq - 1") {
                continue; // the same draw again would be a legitimate retry
            }
            add(
                &mut v,
                "wrong_seq",
                format!("{name} ({kind})"),
                Want::Refused,
                Box::new(move |c: &Ctx| {
                    let seq = f(c);
                    let body = if kind == "play" {
                        // For seq - 1, a card that differs from the one sent then.
                        let card = c.a_hand.last().cloned().unwrap_or_else(|| "7".into());
                        json!({"seq": seq, "action": "play", "card": card})
                    } else {
                        json!({"seq": seq, "action": "draw"})
                    };
                    req("POST", &c.actions_path(), &[json_ct(), bearer(&c.a_token)], body.to_string().as_bytes())
                }),
            );
        }
    }

    // ---- unknown fields ----
    let unknown: Vec<Named<Vec<u8>>> = vec![
        ("action with an unknown field", |c| {
            let mut b = c.valid_action();
            b["bogus"] = json!(1);
            req("POST", &c.actions_path(), &[json_ct(), bearer(&c.a_token)], b.to_string().as_bytes())
        }),
        ("action with a prize_cents field", |c| {
            let mut b = c.valid_action();
            b["prize_cents"] = json!(5000000);
            req("POST", &c.actions_path(), &[json_ct(), bearer(&c.a_token)], b.to_string().as_bytes())
        }),
        ("action with a server_seed field", |c| {
            let mut b = c.valid_action();
            b["server_seed"] = json!("00");
            req("POST", &c.actions_path(), &[json_ct(), bearer(&c.a_token)], b.to_string().as_bytes())
        }),
        ("action with a Seq field in another case", |c| {
            let mut b = c.valid_action();
            b["Seq"] = json!(0);
            req("POST", &c.actions_path(), &[json_ct(), bearer(&c.a_token)], b.to_string().as_bytes())
        }),
        ("registration with balance_cents", |_c| {
            req("POST", "/api/players", &[json_ct()], br#"{"name": "u", "balance_cents": 99999999}"#)
        }),
        ("registration with is_admin", |_c| req("POST", "/api/players", &[json_ct()], br#"{"is_admin": true}"#)),
        ("purchase with price_cents", |c| {
            req("POST", "/api/tickets", &[json_ct(), bearer(&c.a_token)], br#"{"price_cents": 0}"#)
        }),
        ("purchase with a ticket id", |c| {
            req(
                "POST",
                "/api/tickets",
                &[json_ct(), bearer(&c.a_token)],
                json!({"ticket": c.b_open}).to_string().as_bytes(),
            )
        }),
        ("redeem with an extra field", |_c| {
            req("POST", "/api/tickets/redeem", &[json_ct()], br#"{"code": "x", "serial": "y"}"#)
        }),
        ("retail validate with an extra field (no shop)", |_c| {
            req("POST", "/api/retail/validate", &[json_ct()], br#"{"serial": "x", "shop": "y"}"#)
        }),
    ];
    for (name, f) in unknown {
        add(&mut v, "unknown_fields", name.into(), Want::Refused, Box::new(f));
    }

    // ---- the player's own account (docs/player-api.md) ----
    // Malformed bodies to each of its endpoints: 400 before anything runs.
    type AccountTarget = (&'static str, &'static str, &'static str);
    let account_targets: [AccountTarget; 4] = [
        ("login", "POST", "/api/sessions"),
        ("limits", "PUT", "/api/me/limits"),
        ("self-exclusion", "POST", "/api/me/self-exclusion"),
        ("credentials", "PUT", "/api/me/credentials"),
    ];
    for (name, body) in &malformed {
        for &(tname, method, path) in &account_targets {
            let body = body.clone();
            add(
                &mut v,
                "player_account",
                format!("{name} -> {tname}"),
                Want::Exactly(&[400]),
                Box::new(move |c: &Ctx| req(method, path, &[json_ct(), bearer(&c.a_token)], &body)),
            );
        }
    }
    // Bodies of the right shape with wrong values or types: refused, and no
    // limit, exclusion, login or session is written.
    let account_bodies: Vec<(&str, &'static str, &'static str, &'static str)> = vec![
        (
            "limits: negative tickets",
            "PUT",
            "/api/me/limits",
            r#"{"tickets_per_day": -1, "spend_per_week_cents": null}"#,
        ),
        ("limits: zero tickets", "PUT", "/api/me/limits", r#"{"tickets_per_day": 0, "spend_per_week_cents": null}"#),
        ("limits: a billion tickets", "PUT", "/api/me/limits", r#"{"tickets_per_day": 1000000000}"#),
        ("limits: tickets as a string", "PUT", "/api/me/limits", r#"{"tickets_per_day": "5"}"#),
        ("limits: tickets as a boolean", "PUT", "/api/me/limits", r#"{"tickets_per_day": true}"#),
        ("limits: a fraction of a cent", "PUT", "/api/me/limits", r#"{"spend_per_week_cents": 1.5}"#),
        ("limits: 2^63 cents", "PUT", "/api/me/limits", r#"{"spend_per_week_cents": 9223372036854775808}"#),
        ("limits: an unknown field", "PUT", "/api/me/limits", r#"{"tickets_per_day": 5, "player_id": 1}"#),
        ("self-exclusion: zero days", "POST", "/api/me/self-exclusion", r#"{"days": 0}"#),
        ("self-exclusion: negative days", "POST", "/api/me/self-exclusion", r#"{"days": -30}"#),
        ("self-exclusion: eleven years", "POST", "/api/me/self-exclusion", r#"{"days": 4015}"#),
        ("self-exclusion: days as a string", "POST", "/api/me/self-exclusion", r#"{"days": "30"}"#),
        ("self-exclusion: half a day", "POST", "/api/me/self-exclusion", r#"{"days": 0.5}"#),
        ("self-exclusion: no days", "POST", "/api/me/self-exclusion", r#"{}"#),
        ("self-exclusion: for another player", "POST", "/api/me/self-exclusion", r#"{"days": 7, "player_id": 2}"#),
        (
            "credentials: a login with a space",
            "PUT",
            "/api/me/credentials",
            r#"{"login": "a b c", "password": "12345678"}"#,
        ),
        (
            "credentials: a login of two letters",
            "PUT",
            "/api/me/credentials",
            r#"{"login": "ab", "password": "12345678"}"#,
        ),
        (
            "credentials: SQL in the login",
            "PUT",
            "/api/me/credentials",
            r#"{"login": "x' OR '1'='1", "password": "12345678"}"#,
        ),
        (
            "credentials: a password of 7",
            "PUT",
            "/api/me/credentials",
            r#"{"login": "hostile", "password": "1234567"}"#,
        ),
        (
            "credentials: a login as a number",
            "PUT",
            "/api/me/credentials",
            r#"{"login": 12345, "password": "12345678"}"#,
        ),
        ("credentials: no password", "PUT", "/api/me/credentials", r#"{"login": "hostile"}"#),
        ("registration: a login without a password", "POST", "/api/players", r#"{"login": "hostile"}"#),
        ("registration: a password without a login", "POST", "/api/players", r#"{"password": "12345678"}"#),
        (
            "registration: a login with control characters",
            "POST",
            "/api/players",
            "{\"login\": \"a\\u0000b\", \"password\": \"12345678\"}",
        ),
        ("login: a login as an array", "POST", "/api/sessions", r#"{"login": ["a"], "password": "12345678"}"#),
        ("login: no password", "POST", "/api/sessions", r#"{"login": "hostile"}"#),
        (
            "login: an extra field",
            "POST",
            "/api/sessions",
            r#"{"login": "hostile", "password": "12345678", "player_id": 1}"#,
        ),
    ];
    for (name, method, path, body) in account_bodies {
        // A registration meets the address's limit first once the burst case spent it.
        let want: &'static [u16] = if path == "/api/players" { &[400, 429] } else { &[400] };
        add(
            &mut v,
            "player_account",
            name.into(),
            Want::Exactly(want),
            Box::new(move |c: &Ctx| req(method, path, &[json_ct(), bearer(&c.a_token)], body.as_bytes())),
        );
    }
    // Logins that do not match: 401 (429 once the address's attempts are spent).
    let logins: Vec<(&str, &'static str)> = vec![
        ("login: an unknown login", r#"{"login": "nobody-here", "password": "12345678"}"#),
        ("login: SQL in the login", r#"{"login": "' OR 1=1 --", "password": "12345678"}"#),
        ("login: SQL in the password", r#"{"login": "nobody-here", "password": "' OR '1'='1"}"#),
        ("login: a password of 10 000 characters", ""),
    ];
    for (name, body) in logins {
        add(
            &mut v,
            "player_account",
            name.into(),
            Want::Exactly(&[401, 429]),
            Box::new(move |_c: &Ctx| {
                let long = json!({"login": "nobody-here", "password": "p".repeat(10_000)}).to_string();
                let body = if body.is_empty() { long.as_str() } else { body };
                req("POST", "/api/sessions", &[json_ct()], body.as_bytes())
            }),
        );
    }
    // Without a token, with a made-up one, or a player's own token as a session.
    let unauthenticated: Vec<(&str, &'static str, &'static str)> = vec![
        ("limits without a token", "GET", "/api/me/limits"),
        ("set limits without a token", "PUT", "/api/me/limits"),
        ("self-exclusion without a token", "POST", "/api/me/self-exclusion"),
        ("credentials without a token", "PUT", "/api/me/credentials"),
        ("logout without a token", "DELETE", "/api/sessions/current"),
    ];
    for (name, method, path) in unauthenticated {
        add(
            &mut v,
            "player_account",
            name.into(),
            Want::Exactly(&[401]),
            Box::new(move |_c: &Ctx| req(method, path, &[json_ct()], br#"{"days": 7, "tickets_per_day": 1}"#)),
        );
        add(
            &mut v,
            "player_account",
            format!("{name}, a made-up session token"),
            Want::Exactly(&[401]),
            Box::new(move |_c: &Ctx| {
                req(method, path, &[json_ct(), bearer(&"5e".repeat(24))], br#"{"days": 7, "tickets_per_day": 1}"#)
            }),
        );
    }

    // ---- half-sent requests (the server must close them) ----
    let halves: Vec<(&str, &'static [u8], bool)> = vec![
        ("request line only", b"GET /api/me HTTP/1.1\r\n", false),
        ("stops inside a header", b"GET /api/me HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthori", false),
        (
            "headers without the blank line",
            b"POST /api/players HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n",
            false,
        ),
        ("stops inside the request line", b"GET /api/tic", false),
        ("slowloris: a header line every second", b"GET /api/me HTTP/1.1\r\nHost: x\r\n", true),
    ];
    for (name, bytes, drip) in halves {
        v.push(Case {
            cat: "half_sent",
            name: name.into(),
            build: Box::new(move |_c: &Ctx| bytes.to_vec()),
            want: Want::Closed,
            metric_probe: None,
            max_secs: None,
            slow: true,
            drip,
        });
    }
    v
}

/// The verdict on one answer.
fn judge(case: &Case, a: &Answer, stall_cap: f64, head: bool) -> Result<(), String> {
    if let Some(max) = case.max_secs
        && a.secs > max
    {
        return Err(format!("took {:.1} s (at most {max} s expected)", a.secs));
    }
    match case.want {
        Want::Closed => {
            if a.note.as_deref().is_some_and(|n| n.starts_with("no answer and still open")) {
                Err(format!("still open after {stall_cap:.0} s"))
            } else if a.status.is_some_and(|s| s >= 500) {
                Err(format!("closed after {:.1} s with a 5xx", a.secs))
            } else {
                Ok(())
            }
        }
        Want::HeadOk => match a.status {
            Some(200) if a.body.is_empty() => Ok(()),
            _ => Err("HEAD should answer like GET: 200, no body".into()),
        },
        Want::Protocol => match a.status {
            None if a.note.as_deref().is_some_and(|n| n.starts_with("no answer and still open")) => {
                Err("no answer, connection left open".into())
            }
            None => Ok(()),
            Some(s) if (400..500).contains(&s) => {
                if a.body.is_empty() || a.in_shape() {
                    Ok(())
                } else {
                    Err("a body not in the error shape".into())
                }
            }
            Some(s) => Err(format!("status {s}, a 4xx expected")),
        },
        Want::Refused | Want::Exactly(_) => {
            let Some(s) = a.status else { return Err("no answer".into()) };
            let status_ok = match case.want {
                Want::Exactly(list) => list.contains(&s),
                _ => (400..500).contains(&s),
            };
            if !status_ok {
                return Err(format!(
                    "status {s}, expected {}",
                    match case.want {
                        Want::Exactly(l) => format!("{l:?}"),
                        _ => "a 4xx".into(),
                    }
                ));
            }
            // An answer to HEAD has no body: its type alone is checked.
            let head_ok = head
                && a.body.is_empty()
                && a.header("content-type").is_some_and(|c| c.starts_with("application/json"));
            if !a.in_shape() && !head_ok {
                return Err("not in the error shape {\"error\", \"message\"} (application/json)".into());
            }
            if s == 429 && a.header("retry-after").is_none() {
                return Err("429 without Retry-After".into());
            }
            Ok(())
        }
    }
}

pub fn run(args: &ReliabilityArgs, seed: u64) -> anyhow::Result<Value> {
    println!("\n== hostile requests on sqlite ==");
    let db = Database::create(args, Backend::Sqlite, "hostile")?.expect("SQLite is always there");
    let server = Server::start(&db, &["--initial-blocks", "2"])?;
    let began = Instant::now();
    let mut ctx = setup(&server.addr)?;
    let sqlite_file =
        db.sqlite_file().filter(|_| std::process::Command::new("sqlite3").arg("-version").output().is_ok());
    let mut rng = Rng::new(seed ^ 0x4057);
    let cases = corpus(&mut rng);
    let stall = Duration::from_secs(args.stall_cap_secs);
    let normal_timeout = Duration::from_secs(15);

    // The slow cases in the background (they wait for timeouts).
    let slow: Vec<_> = cases
        .iter()
        .enumerate()
        .filter(|(_, c)| c.slow)
        .map(|(i, c)| {
            let bytes = (c.build)(&ctx);
            let addr = ctx.addr.clone();
            let drip = c.drip;
            let timeout = if matches!(c.want, Want::Closed) { stall } else { normal_timeout };
            (i, std::thread::spawn(move || exchange(&addr, &bytes, false, timeout, drip)))
        })
        .collect();

    #[derive(Default)]
    struct Cat {
        cases: u64,
        passed: u64,
        in_shape: u64,
        bare: u64,
        failures: Vec<Value>,
    }
    let mut cats: BTreeMap<&'static str, Cat> = BTreeMap::new();
    let mut changed_cases = 0u64;
    let mut server_errors = 0u64;
    let mut results: Vec<(usize, Answer, Vec<u8>, Option<String>)> = Vec::new();
    let mut before = snapshot(&ctx, sqlite_file.as_deref());
    for (i, case) in cases.iter().enumerate() {
        if case.slow {
            continue;
        }
        let bytes = (case.build)(&ctx);
        let head_only = bytes.starts_with(b"HEAD ");
        let a = exchange(&ctx.addr, &bytes, head_only, normal_timeout, false);
        let mut extra = None;
        if let Some(m) = &case.metric_probe {
            let metrics = exchange(&ctx.addr, &req("GET", "/metrics", &[], b""), false, normal_timeout, false);
            if String::from_utf8_lossy(&metrics.body).contains(m.as_str()) {
                extra = Some(format!(
                    "the made-up method {m} is a label of /metrics (now {} bytes): unbounded labels",
                    metrics.body.len()
                ));
            }
        }
        let after = snapshot(&ctx, sqlite_file.as_deref());
        let d = diff(&before, &after);
        if !d.is_empty() {
            changed_cases += 1;
            let note = format!("CHANGED STATE: {}", d.join("; "));
            extra = Some(match extra {
                Some(e) => format!("{e}; {note}"),
                None => note,
            });
            refresh(&mut ctx)?;
            before = snapshot(&ctx, sqlite_file.as_deref());
        } else {
            before = after;
        }
        results.push((i, a, bytes, extra));
    }
    for (i, h) in slow {
        let a = h.join().unwrap_or_default();
        results.push((i, a, (cases[i].build)(&ctx), None));
    }
    // Slow cases could not be snapshotted one by one: one check at the end.
    let end = snapshot(&ctx, sqlite_file.as_deref());
    let slow_changed = diff(&before, &end);
    let mut stalls = Vec::new();
    results.sort_by_key(|r| r.0);
    for (i, a, bytes, extra) in &results {
        let case = &cases[*i];
        let cat = cats.entry(case.cat).or_default();
        cat.cases += 1;
        if a.status.is_some_and(|s| s >= 500) {
            server_errors += 1;
        }
        if a.status.is_some() {
            if a.in_shape() {
                cat.in_shape += 1;
            } else {
                cat.bare += 1;
            }
        }
        if matches!(case.want, Want::Closed) {
            stalls.push(json!({"case": case.name, "closed_after_s": (a.secs * 10.0).round() / 10.0,
                "status": a.status, "open_at_cap": a.note.as_deref().is_some_and(|n| n.starts_with("no answer and still open"))}));
        }
        let verdict = judge(case, a, stall.as_secs_f64(), bytes.starts_with(b"HEAD "));
        let problem = match (verdict, extra) {
            (Ok(()), None) => None,
            (Ok(()), Some(e)) => Some(e.clone()),
            (Err(e), None) => Some(e),
            (Err(e), Some(x)) => Some(format!("{e}; {x}")),
        };
        match problem {
            None => cat.passed += 1,
            Some(p) => cat.failures.push(json!({
                "case": case.name,
                "request": clip(&printable(&bytes[..bytes.len().min(400)])),
                "answer": a.brief(),
                "seconds": (a.secs * 100.0).round() / 100.0,
                "problem": p,
            })),
        }
    }
    // Registrations in a burst: some must be refused (429, Retry-After).
    let burst = 300usize;
    let addr = ctx.addr.clone();
    let burst_began = Instant::now();
    let answers: Vec<Answer> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..10)
            .map(|_| {
                let addr = addr.clone();
                s.spawn(move || {
                    (0..burst / 10)
                        .map(|_| {
                            exchange(
                                &addr,
                                &req("POST", "/api/players", &[json_ct()], b"{}"),
                                false,
                                normal_timeout,
                                false,
                            )
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        hs.into_iter().flat_map(|h| h.join().unwrap_or_default()).collect()
    });
    let burst_secs = burst_began.elapsed().as_secs_f64();
    let created = answers.iter().filter(|a| a.status == Some(201)).count();
    let limited: Vec<&Answer> = answers.iter().filter(|a| a.status == Some(429)).collect();
    let limited_ok = limited.iter().all(|a| a.in_shape() && a.header("retry-after").is_some());
    let burst_5xx = answers.iter().filter(|a| a.status.is_some_and(|s| s >= 500)).count() as u64;
    server_errors += burst_5xx;
    let cat = cats.entry("registration_burst").or_default();
    cat.cases += 1;
    cat.in_shape += limited.len() as u64;
    if !limited.is_empty() && limited_ok && burst_5xx == 0 {
        cat.passed += 1;
    } else {
        cat.failures.push(json!({
            "case": format!("{burst} registrations from one address in {burst_secs:.2} s"),
            "request": "POST /api/players {} (x300, 10 at a time)",
            "answer": format!("{created} created (201), {} refused (429){}, {burst_5xx} 5xx", limited.len(),
                if limited_ok { "" } else { ", some 429 without the shape or Retry-After" }),
            "problem": "registrations are not rate-limited: a 429 with Retry-After was expected within the burst",
        }));
    }

    let error_lines = server.errors.lock().unwrap().clone();
    drop(server);
    let total: u64 = cats.values().map(|c| c.cases).sum();
    let passed: u64 = cats.values().map(|c| c.passed).sum();
    println!("  {:<20} {:>6} {:>7} {:>7} {:>9} {:>6}", "category", "cases", "passed", "failed", "in shape", "bare");
    for (name, c) in &cats {
        println!(
            "  {:<20} {:>6} {:>7} {:>7} {:>9} {:>6}",
            name,
            c.cases,
            c.passed,
            c.cases - c.passed,
            c.in_shape,
            c.bare
        );
    }
    println!("  {:<20} {:>6} {:>7} {:>7}", "total", total, passed, total - passed);
    for s in &stalls {
        println!(
            "  half-sent request {:?}: {}",
            s["case"],
            if s["open_at_cap"].as_bool().unwrap_or(false) {
                format!("still open after {} s", args.stall_cap_secs)
            } else {
                format!("closed by the server after {} s", s["closed_after_s"])
            }
        );
    }
    for (name, c) in &cats {
        for f in &c.failures {
            println!(
                "  FAIL [{name}] {}\n       request: {}\n       answer:  {}\n       problem: {}",
                f["case"].as_str().unwrap_or_default(),
                clip(f["request"].as_str().unwrap_or_default()),
                f["answer"].as_str().unwrap_or_default(),
                f["problem"].as_str().unwrap_or_default()
            );
        }
    }
    if !slow_changed.is_empty() {
        println!("  CHANGED STATE during the slow cases: {}", slow_changed.join("; "));
    }
    let ok = passed == total && slow_changed.is_empty() && error_lines.is_empty() && total >= 500;
    println!(
        "hostile: {total} cases, {passed} passed, {} failed; {changed_cases} changed the state; 5xx {server_errors}; {:.0} s: {}",
        total - passed,
        began.elapsed().as_secs_f64(),
        if ok { "PASS" } else { "FAIL" }
    );
    let categories: serde_json::Map<String, Value> = cats
        .iter()
        .map(|(k, c)| {
            (
                k.to_string(),
                json!({"cases": c.cases, "passed": c.passed, "failed": c.cases - c.passed,
                "answered_in_shape": c.in_shape, "answered_without_shape": c.bare, "failures": c.failures}),
            )
        })
        .collect();
    Ok(json!({
        "cases": total,
        "passed": passed,
        "failed": total - passed,
        "changed_state": changed_cases + u64::from(!slow_changed.is_empty()),
        "server_errors_5xx": server_errors,
        "row_counts_checked": sqlite_file.is_some(),
        "half_sent": stalls,
        "burst": {"requests": burst, "created": created, "refused_429": limited.len(), "seconds": burst_secs},
        "categories": categories,
        "server_error_log_lines": error_lines,
        "seconds": began.elapsed().as_secs_f64(),
        "ok": ok,
    }))
}

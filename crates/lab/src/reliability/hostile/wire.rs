//! Requests written byte for byte on a TCP socket, and their answers read
//! back, so that requests no HTTP library would send can be sent too.

use super::case::Ctx;
use serde_json::Value;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// An HTTP answer read off the socket.
#[derive(Debug, Default, Clone)]
pub(super) struct Answer {
    pub(super) status: Option<u16>,
    pub(super) headers: Vec<(String, String)>,
    pub(super) body: Vec<u8>,
    pub(super) secs: f64,
    /// Why the answer is missing or cut.
    pub(super) note: Option<String>,
}

impl Answer {
    pub(super) fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
    pub(super) fn in_shape(&self) -> bool {
        let json = self.header("content-type").is_some_and(|c| c.starts_with("application/json"));
        let v: Value = serde_json::from_slice(&self.body).unwrap_or_default();
        json && v["error"].is_string() && v["message"].is_string()
    }
    pub(super) fn brief(&self) -> String {
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
pub(super) fn printable(b: &[u8]) -> String {
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
pub(super) fn exchange(addr: &str, req: &[u8], head_only: bool, timeout: Duration, drip: bool) -> Answer {
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
pub(super) fn req(method: &str, target: &str, headers: &[(&str, String)], body: &[u8]) -> Vec<u8> {
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

pub(super) fn bearer(t: &str) -> (&'static str, String) {
    ("Authorization", format!("Bearer {t}"))
}

pub(super) fn json_ct() -> (&'static str, String) {
    ("Content-Type", "application/json".into())
}

/// A simple GET with a token, for the snapshots and the set-up.
pub(super) fn get(ctx: &Ctx, path: &str, token: &str) -> Answer {
    exchange(&ctx.addr, &req("GET", path, &[bearer(token)], b""), false, Duration::from_secs(10), false)
}

pub(super) fn post_json(ctx: &Ctx, path: &str, token: Option<&str>, body: &Value, extra: &[(&str, String)]) -> Answer {
    let mut h = vec![json_ct()];
    if let Some(t) = token {
        h.push(bearer(t));
    }
    h.extend(extra.iter().cloned());
    exchange(&ctx.addr, &req("POST", path, &h, body.to_string().as_bytes()), false, Duration::from_secs(10), false)
}

pub(super) fn body_json(a: &Answer) -> Value {
    serde_json::from_slice(&a.body).unwrap_or_default()
}

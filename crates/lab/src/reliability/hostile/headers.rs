//! Header abuse: content types, sizes, framing, request lines the HTTP layer
//! cannot parse, and requests that stop half-way.

use super::case::{Case, Ctx, Want, add};
use super::wire::{bearer, json_ct, req};
use crate::reliability::rng::Rng;

/// Wrong or missing `Content-Type`, oversized headers and too many of them.
pub(super) fn content_types(v: &mut Vec<Case>, _rng: &mut Rng) {
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
            v,
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
            v,
            "headers",
            format!("Content-Type {:?} on a registration with a name", ct2),
            want,
            Box::new(move |_c: &Ctx| {
                req("POST", "/api/players", &[("Content-Type", ct2.clone())], br#"{"name": "ct"}"#)
            }),
        );
    }
    add(
        v,
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
            v,
            "headers",
            name.to_string(),
            Want::Protocol,
            Box::new(move |_c: &Ctx| req("GET", "/api/me", &[("X-Junk", "j".repeat(size))], b"")),
        );
    }
    for (name, n) in [("200 headers", 200), ("5000 headers", 5000)] {
        add(
            v,
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
        v,
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
}

/// `Content-Length` and `Transfer-Encoding` that lie or disagree, smuggling, bad
/// `Idempotency-Key`s, `Expect`, and request lines that are not HTTP/1.1.
pub(super) fn framing(v: &mut Vec<Case>, _rng: &mut Rng) {
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
            v,
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
            v,
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
        v,
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
            v,
            "headers",
            format!("purchase with {name}"),
            Want::Exactly(&[400]),
            Box::new(move |c: &Ctx| {
                let mut r = format!("POST /api/tickets HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\nContent-Length: 0\r\nIdempotency-Key: ", c.a_token).into_bytes();
                r.extend_from_slice(key.as_bytes());
                r.extend_from_slice(b"\r\n\r\n");
                r
            }),
        );
    }
    add(
        v,
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
        v,
        "headers",
        "request line HTTP/3.0".into(),
        Want::Protocol,
        Box::new(|_c: &Ctx| b"GET /api/me HTTP/3.0\r\nHost: x\r\nConnection: close\r\n\r\n".to_vec()),
    );
    add(
        v,
        "headers",
        "request line without version".into(),
        Want::Protocol,
        Box::new(|_c: &Ctx| b"GET /api/me\r\nHost: x\r\n\r\n".to_vec()),
    );
    add(
        v,
        "headers",
        "garbage instead of a request".into(),
        Want::Protocol,
        Box::new(|_c: &Ctx| b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03 TLS hello\r\n\r\n".to_vec()),
    );
}

/// Half-sent requests: the server must close them.
pub(super) fn half_sent(v: &mut Vec<Case>, _rng: &mut Rng) {
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
}

//! Control characters and invalid UTF-8, in bodies, headers and paths.

use super::case::{Case, Ctx, Want, add};
use super::wire::{bearer, json_ct, req};
use crate::reliability::rng::Rng;

/// Control characters and invalid UTF-8 inside JSON strings, and strings too long.
pub(super) fn control_in_bodies(v: &mut Vec<Case>, _rng: &mut Rng) {
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
            v,
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
            v,
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
            v,
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
        v,
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
        v,
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
        v,
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
        v,
        "control_utf8",
        "registration name of 65 characters".into(),
        Want::Exactly(&[400]),
        Box::new(|_c: &Ctx| {
            req("POST", "/api/players", &[json_ct()], format!(r#"{{"name": "{}"}}"#, "n".repeat(65)).as_bytes())
        }),
    );
}

/// Invalid bytes in the `Authorization` header and in the request path.
pub(super) fn control_in_head(v: &mut Vec<Case>, _rng: &mut Rng) {
    for (name, raw) in [
        ("Authorization with invalid UTF-8", b"Bearer \xff\xfe".to_vec()),
        ("Authorization with a NUL", b"Bearer a\x00b".to_vec()),
        ("Authorization with a control byte", b"Bearer a\x07b".to_vec()),
        ("Authorization with Latin-1", b"Bearer caf\xe9".to_vec()),
    ] {
        add(
            v,
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
            v,
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
}

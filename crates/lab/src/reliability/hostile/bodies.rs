//! Bodies past the size limit, however they are framed.

use super::case::{Case, Ctx, Want, add};
use super::wire::{bearer, json_ct, req};
use crate::reliability::rng::Rng;
use crate::reliability::testbed::OPERATOR_TOKEN;

/// 1 MB bodies to every endpoint that takes one: 413.
pub(super) fn big_bodies(v: &mut Vec<Case>, _rng: &mut Rng) {
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
            v,
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
        v,
        "big_bodies",
        "1 MB of zeros -> action".into(),
        Want::Exactly(&[413]),
        Box::new(move |c: &Ctx| req("POST", &c.actions_path(), &[json_ct(), bearer(&c.a_token)], &vec![0u8; mb])),
    );
    add(
        v,
        "big_bodies",
        "1 MB of spaces -> registration".into(),
        Want::Exactly(&[413]),
        Box::new(move |_c: &Ctx| req("POST", "/api/players", &[json_ct()], &vec![b' '; mb])),
    );
    add(
        v,
        "big_bodies",
        "1 MB text/plain -> purchase".into(),
        Want::Exactly(&[413]),
        Box::new(move |c: &Ctx| {
            req("POST", "/api/tickets", &[("Content-Type", "text/plain".into()), bearer(&c.a_token)], &vec![b'a'; mb])
        }),
    );
    add(
        v,
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
        v,
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
        v,
        "big_bodies",
        "17 KB body (just above the limit) -> registration".into(),
        Want::Exactly(&[413]),
        Box::new(move |_c: &Ctx| {
            req("POST", "/api/players", &[json_ct()], format!(r#"{{"name": "{}"}}"#, "y".repeat(17 * 1024)).as_bytes())
        }),
    );
    add(
        v,
        "big_bodies",
        "1 MB body on a GET".into(),
        Want::Refused,
        Box::new(move |_c: &Ctx| req("GET", "/api/me", &[json_ct()], &vec![b'{'; mb])),
    );
}

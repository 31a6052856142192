//! `HEAD` on the static files, known methods where they do not belong, and
//! made-up methods (which must not become metric labels).

use super::case::{Case, Ctx, Want, add};
use super::wire::{bearer, json_ct, req};
use crate::reliability::rng::Rng;

/// `HEAD` answers like `GET`; other methods are refused.
pub(super) fn methods(v: &mut Vec<Case>, rng: &mut Rng) {
    // HEAD on the static files answers like GET (200, no body).
    for p in ["/", "/app.js", "/style.css", "/favicon.svg"] {
        add(v, "headers", format!("HEAD {p}"), Want::HeadOk, Box::new(move |_c: &Ctx| req("HEAD", p, &[], b"")));
    }
    add(
        v,
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
            v,
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
        v,
        "methods",
        "method of 8 KB".into(),
        Want::Protocol,
        Box::new(|_c: &Ctx| req(&"M".repeat(8 * 1024), "/api/me", &[], b"")),
    );
}

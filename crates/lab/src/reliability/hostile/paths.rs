//! Ids that do not exist and paths that try to escape their route.

use super::case::{Case, Ctx, Want, add};
use super::state::clip;
use super::wire::{bearer, json_ct, req};
use crate::reliability::rng::Rng;
use crate::reliability::testbed::OPERATOR_TOKEN;

/// Ticket and emission ids that do not exist or cannot be ids.
pub(super) fn unknown_ids(v: &mut Vec<Case>, rng: &mut Rng) {
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
                v,
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
            v,
            "unknown_ids",
            format!("operator GET {path}"),
            Want::Refused,
            Box::new(move |_c: &Ctx| req("GET", path, &[bearer(OPERATOR_TOKEN)], b"")),
        );
    }
}

/// Path traversal, encodings, duplicated slashes and oversized paths.
pub(super) fn path_tricks(v: &mut Vec<Case>, _rng: &mut Rng) {
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
            v,
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
            v,
            "path_tricks",
            name.into(),
            if len > 16 * 1024 { Want::Protocol } else { Want::Refused },
            Box::new(move |_c: &Ctx| req("GET", &format!("/api/tickets/{}", "a".repeat(len)), &[], b"")),
        );
    }
    add(
        v,
        "path_tricks",
        "many segments (5000 slashes)".into(),
        Want::Refused,
        Box::new(|_c: &Ctx| req("GET", &format!("/api{}", "/x".repeat(5000)), &[], b"")),
    );
    add(
        v,
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
}

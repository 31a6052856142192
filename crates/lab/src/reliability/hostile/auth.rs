//! Tokens that are missing, forged or misused, and other players' tickets.

use super::case::{Case, Ctx, Named, Want, add};
use super::wire::{bearer, json_ct, req};
use crate::reliability::rng::Rng;
use crate::reliability::testbed::OPERATOR_TOKEN;
use serde_json::json;

/// Every protected endpoint with each kind of bad token: 401 or 403.
pub(super) fn tokens(v: &mut Vec<Case>, rng: &mut Rng) {
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
                v,
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
            v,
            "tokens",
            name.into(),
            Want::Exactly(&[401, 403]),
            Box::new(move |c: &Ctx| req("POST", path, &[json_ct(), bearer(&f(c))], br#"{"serial": "x"}"#)),
        );
    }
    add(
        v,
        "tokens",
        "two Authorization headers, a bad one first".into(),
        Want::Exactly(&[400, 401]),
        Box::new(|c: &Ctx| req("GET", "/api/me", &[("Authorization", "Bearer nope".into()), bearer(&c.a_token)], b"")),
    );
}

/// One player reaching for another's tickets, or the operator for a player's: refused.
pub(super) fn other_players(v: &mut Vec<Case>, _rng: &mut Rng) {
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
        add(v, "other_players", name.into(), Want::Exactly(&[401, 403, 404]), Box::new(f));
    }
}

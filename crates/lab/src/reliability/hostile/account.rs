//! The player's own account (docs/player-api.md): limits, self-exclusion,
//! credentials, logins and sessions.

use super::case::{Case, Ctx, Want, add};
use super::wire::{bearer, json_ct, req};
use crate::reliability::rng::Rng;
use serde_json::json;

/// Malformed bodies to each of its endpoints: 400 before anything runs.
pub(super) fn account_malformed(v: &mut Vec<Case>, _rng: &mut Rng) {
    let malformed = super::json::malformed_bodies();
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
                v,
                "player_account",
                format!("{name} -> {tname}"),
                Want::Exactly(&[400]),
                Box::new(move |c: &Ctx| req(method, path, &[json_ct(), bearer(&c.a_token)], &body)),
            );
        }
    }
}

/// Bodies of the right shape with wrong values or types: refused, and no
/// limit, exclusion, login or session is written.
pub(super) fn account_values(v: &mut Vec<Case>, _rng: &mut Rng) {
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
            v,
            "player_account",
            name.into(),
            Want::Exactly(want),
            Box::new(move |c: &Ctx| req(method, path, &[json_ct(), bearer(&c.a_token)], body.as_bytes())),
        );
    }
}

/// Logins that do not match, and the account's endpoints without a valid session.
pub(super) fn account_logins(v: &mut Vec<Case>, _rng: &mut Rng) {
    // A password longer than the document's 128 characters is refused as
    // malformed (400) before any count or hash.
    let logins: Vec<(&str, &'static str, &'static [u16])> = vec![
        ("login: an unknown login", r#"{"login": "nobody-here", "password": "12345678"}"#, &[401, 429]),
        ("login: SQL in the login", r#"{"login": "' OR 1=1 --", "password": "12345678"}"#, &[401, 429]),
        ("login: SQL in the password", r#"{"login": "nobody-here", "password": "' OR '1'='1"}"#, &[401, 429]),
        ("login: a password of 10 000 characters", "", &[400]),
    ];
    for (name, body, want) in logins {
        add(
            v,
            "player_account",
            name.into(),
            Want::Exactly(want),
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
            v,
            "player_account",
            name.into(),
            Want::Exactly(&[401]),
            Box::new(move |_c: &Ctx| req(method, path, &[json_ct()], br#"{"days": 7, "tickets_per_day": 1}"#)),
        );
        add(
            v,
            "player_account",
            format!("{name}, a made-up session token"),
            Want::Exactly(&[401]),
            Box::new(move |_c: &Ctx| {
                req(method, path, &[json_ct(), bearer(&"5e".repeat(24))], br#"{"days": 7, "tickets_per_day": 1}"#)
            }),
        );
    }
}

//! Bodies that are not JSON, JSON of the wrong types, numbers out of range
//! and fields nobody asked for.

use super::case::{Case, Ctx, Named, Want, add};
use super::wire::{bearer, json_ct, req};
use crate::reliability::rng::Rng;
use crate::reliability::testbed::OPERATOR_TOKEN;
use serde_json::json;

/// Malformed JSON bodies, sent to every endpoint that reads one.
pub(super) fn malformed_bodies() -> Vec<(&'static str, Vec<u8>)> {
    let deep_arrays = format!("{}{}", "[".repeat(7000), "]".repeat(7000));
    let deep_objects = format!("{}1{}", "{\"a\":".repeat(2500), "}".repeat(2500));
    vec![
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
    ]
}

/// Malformed JSON, to every endpoint with a body: 400.
pub(super) fn malformed_json(v: &mut Vec<Case>, _rng: &mut Rng) {
    let malformed = malformed_bodies();
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
                continue; // JSON null is an absent optional body (docs/contract.md)
            }
            let body = body.clone();
            add(
                v,
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
}

/// JSON of the right syntax with fields of the wrong type.
pub(super) fn wrong_types(v: &mut Vec<Case>, _rng: &mut Rng) {
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
            v,
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
            v,
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
}

/// Huge and negative numbers where a sequence number or an id goes.
pub(super) fn numbers(v: &mut Vec<Case>, _rng: &mut Rng) {
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
                v,
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
            v,
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
            v,
            "huge_numbers",
            format!("ticket id {id}"),
            Want::Refused,
            Box::new(move |c: &Ctx| req("GET", &format!("/api/tickets/{id}"), &[bearer(&c.a_token)], b"")),
        );
        add(
            v,
            "huge_numbers",
            format!("admin emission id {id}"),
            Want::Refused,
            Box::new(move |_c: &Ctx| req("GET", &format!("/api/admin/emissions/{id}"), &[bearer(OPERATOR_TOKEN)], b"")),
        );
    }
}

/// Fields the API does not know, some naming what a client must never set.
pub(super) fn unknown_fields(v: &mut Vec<Case>, _rng: &mut Rng) {
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
        add(v, "unknown_fields", name.into(), Want::Refused, Box::new(f));
    }
}

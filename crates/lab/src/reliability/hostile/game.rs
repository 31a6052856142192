//! Moves out of turn and sequence numbers that do not follow.

use super::case::{Case, Ctx, Named, Want, add};
use super::wire::{bearer, json_ct, req};
use crate::reliability::rng::Rng;
use serde_json::json;

/// Actions the game does not allow at this point.
pub(super) fn out_of_turn(v: &mut Vec<Case>, _rng: &mut Rng) {
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
        add(v, "out_of_turn", name.into(), Want::Refused, Box::new(f));
    }
}

/// Sequence numbers ahead of, behind or far from the ticket's.
pub(super) fn wrong_seq(v: &mut Vec<Case>, _rng: &mut Rng) {
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
                v,
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
}

//! The players and tickets the corpus aims at, and the state every refused
//! request must leave as it was.

use super::case::Ctx;
use super::wire::{body_json, get, post_json};
use crate::reliability::testbed::OPERATOR_TOKEN;
use serde_json::{Value, json};
use testkit::next_action;

/// Everything a refused request must leave as it was.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Snapshot {
    pub(super) parts: Vec<(String, String)>,
}

pub(super) fn snapshot(ctx: &Ctx, sqlite: Option<&std::path::Path>) -> Snapshot {
    let mut parts = Vec::new();
    for (who, t) in [("A", &ctx.a_token), ("B", &ctx.b_token)] {
        for path in ["/api/me", "/api/tickets"] {
            let a = get(ctx, path, t);
            parts.push((format!("{who} GET {path}"), format!("{:?} {}", a.status, String::from_utf8_lossy(&a.body))));
        }
    }
    let a = get(ctx, "/api/admin/emissions", OPERATOR_TOKEN);
    let mut figures = body_json(&a);
    // The report's own clock-free figures only.
    strip_times(&mut figures);
    parts.push(("operator figures".into(), format!("{:?} {figures}", a.status)));
    if let Some(file) = sqlite {
        let sql = "SELECT (SELECT COUNT(*) FROM players), (SELECT COUNT(*) FROM accounts), (SELECT COUNT(*) FROM actions), \
                   (SELECT COUNT(*) FROM ticket_games), (SELECT COUNT(*) FROM idempotency_keys), (SELECT COUNT(*) FROM movements), \
                   (SELECT COUNT(*) FROM ledger_entries), (SELECT COUNT(*) FROM audit_log), \
                   (SELECT COUNT(*) FROM tickets WHERE status <> 'printed'), (SELECT COUNT(*) FROM emissions), (SELECT COUNT(*) FROM blocks)";
        if let Ok(out) = std::process::Command::new("sqlite3").arg("-readonly").arg(file).arg(sql).output() {
            let text = String::from_utf8_lossy(&out.stdout).trim().to_string();
            parts.push((
                "row counts (players|accounts|actions|ticket_games|idempotency_keys|movements|ledger_entries|audit_log|tickets sold|emissions|blocks)"
                    .into(),
                text,
            ));
        }
    }
    Snapshot { parts }
}

fn strip_times(v: &mut Value) {
    match v {
        Value::Object(m) => {
            m.retain(|k, _| !k.ends_with("_ms") && k != "generated_at");
            m.values_mut().for_each(strip_times);
        }
        Value::Array(a) => a.iter_mut().for_each(strip_times),
        _ => {}
    }
}

pub(super) fn diff(a: &Snapshot, b: &Snapshot) -> Vec<String> {
    a.parts
        .iter()
        .zip(&b.parts)
        .filter(|(x, y)| x != y)
        .map(|(x, y)| format!("{}: {} -> {}", x.0, clip(&x.1), clip(&y.1)))
        .collect()
}

pub(super) fn clip(s: &str) -> String {
    if s.len() > 300 { format!("{}...", &s[..s.floor_char_boundary(300)]) } else { s.to_string() }
}

/// Buys a ticket for `token` and plays `n` actions; returns its last JSON.
fn buy_and_play(ctx: &Ctx, token: &str, n: usize) -> anyhow::Result<Value> {
    let a = post_json(ctx, "/api/tickets", Some(token), &json!({}), &[]);
    anyhow::ensure!(a.status == Some(201), "purchase: {}", a.brief());
    let mut t = body_json(&a)["ticket"].clone();
    for _ in 0..n {
        if t["phase"] == "finished" {
            break;
        }
        let id = t["id"].as_str().unwrap_or_default().to_string();
        let a = post_json(ctx, &format!("/api/tickets/{id}/actions"), Some(token), &next_action(&t), &[]);
        anyhow::ensure!(a.status == Some(200), "action: {}", a.brief());
        t = body_json(&a)["ticket"].clone();
    }
    Ok(t)
}

fn set_a_ticket(ctx: &mut Ctx, t: &Value) {
    ctx.a_ticket = t["id"].as_str().unwrap_or_default().to_string();
    ctx.a_seq = t["seq"].as_u64().unwrap_or(0);
    ctx.a_phase = t["phase"].as_str().unwrap_or_default().to_string();
    ctx.a_hand = t["hand"].as_array().into_iter().flatten().filter_map(|c| c.as_str().map(str::to_string)).collect();
}

/// Re-reads A's ticket (a case may have moved it); a finished one is
/// replaced by a fresh ticket with two actions played.
pub(super) fn refresh(ctx: &mut Ctx) -> anyhow::Result<()> {
    let a = get(ctx, &format!("/api/tickets/{}", ctx.a_ticket), &ctx.a_token);
    let mut t = body_json(&a)["ticket"].clone();
    if t["phase"] == "finished" || a.status != Some(200) {
        t = buy_and_play(ctx, &ctx.a_token.clone(), 2)?;
    }
    set_a_ticket(ctx, &t);
    Ok(())
}

pub(super) fn setup(addr: &str) -> anyhow::Result<Ctx> {
    let mut ctx = Ctx { addr: addr.to_string(), ..Default::default() };
    for who in ["a", "b"] {
        let a = post_json(&ctx, "/api/players", None, &json!({"name": format!("hostile-{who}")}), &[]);
        anyhow::ensure!(a.status == Some(201), "registration: {}", a.brief());
        let token = body_json(&a)["token"].as_str().unwrap_or_default().to_string();
        if who == "a" {
            ctx.a_token = token;
        } else {
            ctx.b_token = token;
        }
    }
    let b_token = ctx.b_token.clone();
    let done = buy_and_play(&ctx, &b_token, 1000)?;
    ctx.b_done = done["id"].as_str().unwrap_or_default().to_string();
    let open = buy_and_play(&ctx, &b_token, 0)?;
    ctx.b_open = open["id"].as_str().unwrap_or_default().to_string();
    // A's ticket: two actions played, so that some cards have left the hand.
    let a_token = ctx.a_token.clone();
    let t = buy_and_play(&ctx, &a_token, 2)?;
    set_a_ticket(&mut ctx, &t);
    ctx.a_prev_card = None;
    Ok(ctx)
}

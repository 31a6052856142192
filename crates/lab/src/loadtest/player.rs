//! A player: its session, then games one after another until none is
//! left, each a purchase and its actions to the end.

use super::conn::Conn;
use super::latency::TIMELINE_WINDOW;
use super::operator_mode::{self, OperatorSide};
use super::pace::Pace;
use super::shared::Shared;
use super::tally::Tally;
use anyhow::Context;
use serde::Deserialize;
use serde_json::json;
use std::borrow::Cow;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

/// What the load generator reads of an answer: its ticket.
#[derive(Deserialize)]
struct Answer<'a> {
    #[serde(borrow)]
    ticket: TicketState<'a>,
}

/// The fields of a ticket that the player plays with.
#[derive(Deserialize)]
struct TicketState<'a> {
    #[serde(borrow)]
    id: Cow<'a, str>,
    #[serde(borrow, default)]
    serial: Cow<'a, str>,
    #[serde(default)]
    price_cents: Option<i64>,
    seq: u64,
    #[serde(borrow)]
    phase: Cow<'a, str>,
    #[serde(borrow, default)]
    hand: Vec<Cow<'a, str>>,
    result: Option<Prize>,
}

#[derive(Deserialize)]
struct Prize {
    prize_cents: i64,
}

/// The answer's text, for an error message.
fn text(bytes: &[u8]) -> Cow<'_, str> {
    String::from_utf8_lossy(&bytes[..bytes.len().min(500)])
}

/// A player's session: registered, or, in operator mode, launched by the
/// operator (a signed launch, then the page's exchange of its one-time
/// code) as player `index`.
async fn session(s: &Shared, c: &mut Conn, t: &mut Tally, index: usize) -> anyhow::Result<String> {
    let Some(keys) = &s.launch_keys else { return register(s, c, t).await };
    let launch =
        operator::launch(&s.url, keys, &OperatorSide::launch_request(index)).await.context("the operator's launch")?;
    let body = json!({"code": launch.code}).to_string();
    let (status, bytes, _) = c.send(s, "/api/launch", None, None, Some(body), Instant::now()).await?;
    anyhow::ensure!(status == 200, "POST /api/launch answered {status}: {}", text(&bytes));
    t.players += 1;
    #[derive(Deserialize)]
    struct Launched {
        token: String,
    }
    Ok(serde_json::from_slice::<Launched>(&bytes).context("no token")?.token)
}

async fn register(s: &Shared, c: &mut Conn, t: &mut Tally) -> anyhow::Result<String> {
    let body = json!({"name": "loadtest"}).to_string();
    let (status, bytes, _) = c.send(s, "/api/players", None, None, Some(body), Instant::now()).await?;
    anyhow::ensure!(status == 201, "POST /api/players answered {status}: {}", text(&bytes));
    t.players += 1;
    #[derive(Deserialize)]
    struct Created {
        token: String,
    }
    Ok(serde_json::from_slice::<Created>(&bytes).context("no token")?.token)
}

/// One player: games one after another until none is left.
pub(super) async fn player(s: Arc<Shared>, index: usize, players: usize) -> Tally {
    let mut t = Tally::default();
    let mut conn = Conn { sender: None };
    let registered = session(&s, &mut conn, &mut t, index).await;
    // Every player connects and registers first, then all start together
    // (one that failed too, so that no one waits for it): a paced player's
    // first slots must not be charged the time the others took to connect
    // and register. Paced players start spread over one interval.
    s.ready.wait().await;
    s.all_registered.get_or_init(Instant::now);
    let offset = s.interval.map(|i| i.mul_f64(index as f64 / players as f64)).unwrap_or_default();
    let mut pace = Pace { interval: s.interval, next: Instant::now() + offset };
    let mut token = match registered {
        Ok(tok) => tok,
        Err(e) => {
            t.error(format!("{e:#}"));
            return t;
        }
    };
    while Instant::now() < s.deadline && s.games_left.fetch_sub(1, Ordering::Relaxed) > 0 {
        s.started.fetch_add(1, Ordering::Relaxed);
        if let Err(e) = game(&s, &mut conn, &mut t, &mut token, &mut pace, index).await {
            t.error(format!("{e:#}"));
        }
    }
    s.budget_spent();
    t
}

async fn game(
    s: &Shared,
    c: &mut Conn,
    t: &mut Tally,
    token: &mut String,
    pace: &mut Pace,
    index: usize,
) -> anyhow::Result<()> {
    let at = pace.slot().await;
    let key = |s: &Shared| {
        let n = s.purchases_sent.fetch_add(1, Ordering::Relaxed);
        s.purchase_keys.as_ref().map(|prefix| format!("{prefix}-{n}"))
    };
    let (mut status, mut bytes, mut us) =
        c.send(s, "/api/tickets", Some(token), key(s).as_deref(), Some("{}".into()), at).await?;
    if status == 402 && s.launch_keys.is_none() {
        // Out of play money: a new player takes over.
        *token = register(s, c, t).await?;
        (status, bytes, us) =
            c.send(s, "/api/tickets", Some(token), key(s).as_deref(), Some("{}".into()), Instant::now()).await?;
    }
    anyhow::ensure!(status == 201, "POST /api/tickets answered {status}: {}", text(&bytes));
    s.answered(false);
    t.purchases += 1;
    t.purchase_us.push(us);
    let bought = serde_json::from_slice::<Answer>(&bytes).context("a purchase's answer")?.ticket;
    let id = bought.id.into_owned();
    t.price_cents = t.price_cents.or(bought.price_cents);
    let serial = bought.serial.into_owned();
    if let (Some(shadow), Some(price)) = (&s.shadow, bought.price_cents) {
        shadow.send(wallet::TxKind::Debit, &serial, operator_mode::player_ref(index), price);
    }
    if s.launch_keys.is_some() {
        t.purchases_seen.push(operator_mode::Purchase { serial: serial.clone(), at, us });
    }
    let path = format!("/api/tickets/{id}/actions");
    let mut answered = Instant::now();
    loop {
        let answer: Answer = serde_json::from_slice(&bytes).with_context(|| format!("an answer: {}", text(&bytes)))?;
        let ticket = answer.ticket;
        let seq = ticket.seq;
        let body = match &*ticket.phase {
            "finished" => {
                t.finished += 1;
                if let Some(prize) = ticket.result.filter(|r| r.prize_cents > 0) {
                    t.won += 1;
                    t.won_cents += prize.prize_cents;
                    if let Some(shadow) = &s.shadow {
                        shadow.send(
                            wallet::TxKind::Credit,
                            &serial,
                            operator_mode::player_ref(index),
                            prize.prize_cents,
                        );
                    }
                }
                return Ok(());
            }
            "play" => {
                // Any order gives the same odds (docs/rules.md); play the highest card.
                let card = ticket.hand.last().context("hand")?;
                json!({"seq": seq, "action": "play", "card": card}).to_string()
            }
            _ => json!({"seq": seq, "action": "draw"}).to_string(),
        };
        let at = pace.slot().await;
        let steady = s.steady();
        // Late through the load generator's own fault: after both the slot
        // and the previous answer (its timer or its threads waited).
        let late = Instant::now().saturating_duration_since(at.max(answered));
        let (status, next, us) = c.send(s, &path, Some(token), None, Some(body), at).await?;
        answered = Instant::now();
        anyhow::ensure!(status == 200, "POST {path} answered {status}: {}", text(&next));
        s.answered(true);
        t.actions += 1;
        t.action_us.push(us);
        if steady {
            t.steady_action_us.push(us);
        }
        if let Some(from) = s.timeline_from {
            let window = at.saturating_duration_since(from).as_nanos() / TIMELINE_WINDOW.as_nanos();
            let late = late.as_micros().min(u128::from(u32::MAX)) as u32;
            t.timeline.push((u32::try_from(window).unwrap_or(u32::MAX), us, late));
        }
        bytes = next;
    }
}

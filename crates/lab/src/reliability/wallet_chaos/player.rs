//! The client players: who each is at the operator, what they share with
//! the run, and each one's loop of launches, purchases and actions.

use super::client::{Trouble, client, launch, send, short};
use crate::reliability::rng::Rng;
use math::REGULATION_PRICE_CENTS;
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};
use testkit::next_action;
use wallet::Keys;

/// The balance of the players who never run out, in cents.
pub(super) const RICH_CENTS: i64 = 1_000_000_000;
/// The balance of the player who runs out: three tickets.
pub(super) const POOR_CENTS: i64 = 3 * REGULATION_PRICE_CENTS as i64;
/// The weekly stake limit of the limited player: five tickets.
pub(super) const LIMIT_CENTS: i64 = 5 * REGULATION_PRICE_CENTS as i64;
/// A player that cannot reach its server for this long fails the run.
pub(super) const STUCK: Duration = Duration::from_secs(180);

/// Who a client player is, at the operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// Never runs out: every purchase is sold, or unknown (503), never refused.
    Rich,
    /// Blocked at the operator: every purchase refused `player_blocked`.
    Blocked,
    /// Three tickets' worth: refused `insufficient_funds` once spent.
    Poor,
    /// A weekly stake limit of five tickets: refused `limit_reached`.
    Limited,
}

impl Kind {
    fn refusal(self) -> Option<&'static str> {
        match self {
            Kind::Rich => None,
            Kind::Blocked => Some(wallet::errors::PLAYER_BLOCKED),
            Kind::Poor => Some(wallet::errors::INSUFFICIENT_FUNDS),
            Kind::Limited => Some(wallet::errors::LIMIT_REACHED),
        }
    }

    pub(super) fn start_cents(self) -> i64 {
        match self {
            Kind::Rich | Kind::Blocked | Kind::Limited => RICH_CENTS,
            Kind::Poor => POOR_CENTS,
        }
    }
}

/// A ticket a player was answered 201 for, and its prize once finished.
#[derive(Debug, Clone)]
pub(super) struct Held {
    pub(super) player: String,
    pub(super) serial: String,
    pub(super) price_cents: i64,
    /// `Some` once the ticket is finished (0: no prize).
    pub(super) prize_cents: Option<i64>,
}

#[derive(Default)]
pub(super) struct Counters {
    pub(super) launches: AtomicU64,
    pub(super) relaunches: AtomicU64,
    pub(super) purchases_sold: AtomicU64,
    pub(super) purchases_unknown_503: AtomicU64,
    pub(super) purchases_pending_409: AtomicU64,
    pub(super) actions: AtomicU64,
    pub(super) connection_errors: AtomicU64,
    pub(super) resent: AtomicU64,
    pub(super) server_errors: AtomicU64,
    pub(super) unexpected: AtomicU64,
}

pub(super) struct Shared {
    /// The current URL of each of our server processes.
    pub(super) urls: Vec<RwLock<String>>,
    pub(super) keys: Keys,
    pub(super) stop: AtomicBool,
    pub(super) counters: Counters,
    pub(super) refusals: Mutex<BTreeMap<String, u64>>,
    pub(super) held: Mutex<Vec<Held>>,
    pub(super) failures: Mutex<Vec<String>>,
}

impl Shared {
    pub(super) fn fail(&self, what: String) {
        let mut f = self.failures.lock().unwrap();
        if f.len() < 40 {
            eprintln!("  FAIL {what}");
            f.push(what);
        }
    }

    fn url(&self, server: usize) -> String {
        self.urls[server].read().unwrap().clone()
    }
}

/// One client player: launched, then buying and playing tickets until the
/// run has sold enough (or, for the refused players, until refused three
/// times), resending what our server died under.
pub(super) async fn player(shared: Arc<Shared>, server: usize, name: String, kind: Kind, seed: u64) {
    let mut p = Player {
        shared,
        server,
        name,
        kind,
        c: client(),
        rng: Rng::new(seed),
        token: None,
        ticket: None,
        buying: None,
        acting: None,
        refused: 0,
        bought: 0,
        down_since: None,
        settling_since: None,
    };
    loop {
        if p.ticket.is_none() && p.buying.is_none() && p.done() {
            return;
        }
        let url = p.shared.url(p.server);
        let step = p.step(&url).await;
        if !p.after_step(step).await {
            return;
        }
    }
}

/// A client player between two of its steps.
struct Player {
    shared: Arc<Shared>,
    server: usize,
    name: String,
    kind: Kind,
    c: reqwest::Client,
    rng: Rng,
    /// The session's bearer token, once launched.
    token: Option<String>,
    /// The ticket in play, as last answered.
    ticket: Option<Value>,
    /// The purchase in progress: its `Idempotency-Key`.
    buying: Option<String>,
    /// The action in progress: its ticket, seq and body, sent again the same.
    acting: Option<(String, u64, Vec<u8>)>,
    refused: u32,
    bought: u32,
    down_since: Option<Instant>,
    settling_since: Option<Instant>,
}

impl Player {
    /// Whether it has played enough: the run says so for the players who
    /// never run out.
    fn done(&self) -> bool {
        // The refused players play on until refused three times (the poor
        // one may win its money back for a while), at most 300 tickets.
        match self.kind {
            Kind::Rich => self.shared.stop.load(Ordering::Relaxed),
            _ => self.refused >= 3 || self.bought >= 300,
        }
    }

    /// One request: a launch without a session, a purchase without a
    /// ticket, else the ticket's next action (or its end noted).
    async fn step(&mut self, url: &str) -> Result<(), Trouble> {
        let Some(tok) = self.token.clone() else {
            let t = launch(&self.c, url, &self.shared.keys, &self.name).await?;
            self.shared.counters.launches.fetch_add(1, Ordering::Relaxed);
            self.token = Some(t);
            return Ok(());
        };
        if self.ticket.is_none() {
            return self.buy(url, &tok).await;
        }
        self.play(url, &tok).await
    }

    /// `POST /api/tickets` under the purchase's key, and what its answer means.
    async fn buy(&mut self, url: &str, tok: &str) -> Result<(), Trouble> {
        let ctr = &self.shared.counters;
        let (name, kind) = (&self.name, self.kind);
        let key = self.buying.get_or_insert_with(|| self.rng.hex(16)).clone();
        let (s, b) =
            send(&self.c, reqwest::Method::POST, format!("{url}/api/tickets"), Some(tok), None, Some(&key)).await?;
        let v: Value = serde_json::from_slice(&b).unwrap_or_default();
        let error = v["error"].as_str().unwrap_or_default().to_string();
        if s != 409 {
            self.settling_since = None;
        }
        match s {
            201 => {
                let t = v["ticket"].clone();
                let serial = t["serial"].as_str().unwrap_or_default().to_string();
                if serial.is_empty() {
                    return Err(Trouble::Failed(format!("a ticket without a serial: {}", short(&b))));
                }
                ctr.purchases_sold.fetch_add(1, Ordering::Relaxed);
                self.bought += 1;
                let price = t["price_cents"].as_i64().unwrap_or(REGULATION_PRICE_CENTS as i64);
                self.shared.held.lock().unwrap().push(Held {
                    player: name.clone(),
                    serial,
                    price_cents: price,
                    prize_cents: None,
                });
                self.ticket = Some(t);
                self.buying = None;
            }
            402 => {
                *self.shared.refusals.lock().unwrap().entry(error.clone()).or_default() += 1;
                self.buying = None;
                self.refused += 1;
                if kind.refusal() != Some(error.as_str()) {
                    ctr.unexpected.fetch_add(1, Ordering::Relaxed);
                    return Err(Trouble::Failed(format!("{name} ({kind:?}) refused: {}", short(&b))));
                }
            }
            503 if error == "wallet_unavailable" => {
                // Unknown outcome: rolled back, the ticket not sold; a new purchase.
                ctr.purchases_unknown_503.fetch_add(1, Ordering::Relaxed);
                self.buying = None;
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            // A purchase of this key whose debit is still being
            // settled (the first attempt died with our server):
            // the same key again in a moment.
            409 if error == "conflict" && v["message"].as_str().is_some_and(|m| m.contains("retry in a moment")) => {
                ctr.purchases_pending_409.fetch_add(1, Ordering::Relaxed);
                let since = *self.settling_since.get_or_insert_with(Instant::now);
                if since.elapsed() > STUCK {
                    self.buying = None;
                    self.settling_since = None;
                    return Err(Trouble::Failed(format!(
                        "{name}: a purchase still settling after {} s",
                        STUCK.as_secs()
                    )));
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            401 => return Err(Trouble::Relaunch(short(&b))),
            s => {
                if s >= 500 {
                    ctr.server_errors.fetch_add(1, Ordering::Relaxed);
                } else {
                    ctr.unexpected.fetch_add(1, Ordering::Relaxed);
                }
                self.buying = None;
                return Err(Trouble::Failed(format!("{name}: POST /api/tickets: {s} {}", short(&b))));
            }
        }
        Ok(())
    }

    /// The ticket's end noted with its prize, or its next action sent (the
    /// action in progress again, the same, when it was not answered).
    async fn play(&mut self, url: &str, tok: &str) -> Result<(), Trouble> {
        let ctr = &self.shared.counters;
        let t = self.ticket.clone().unwrap_or_default();
        let id = t["id"].as_str().unwrap_or_default().to_string();
        if t["phase"] == "finished" {
            let prize = t["result"]["prize_cents"].as_i64().unwrap_or(0);
            let serial = t["serial"].as_str().unwrap_or_default();
            let mut held = self.shared.held.lock().unwrap();
            if let Some(h) = held.iter_mut().rev().find(|h| h.serial == serial) {
                h.prize_cents = Some(prize);
            }
            self.ticket = None;
            return Ok(());
        }
        let (seq, body) = match &self.acting {
            Some((pid, seq, body)) if *pid == id => {
                ctr.resent.fetch_add(1, Ordering::Relaxed);
                (*seq, body.clone())
            }
            _ => {
                let a = next_action(&t);
                let body = serde_json::to_vec(&a).unwrap_or_default();
                let seq = a["seq"].as_u64().unwrap_or(0);
                self.acting = Some((id.clone(), seq, body.clone()));
                (seq, body)
            }
        };
        let path = format!("{url}/api/tickets/{id}/actions");
        match send(&self.c, reqwest::Method::POST, path, Some(tok), Some(body), None).await? {
            (200, b) => {
                let v: Value = serde_json::from_slice(&b).unwrap_or_default();
                ctr.actions.fetch_add(1, Ordering::Relaxed);
                self.ticket = Some(v["ticket"].clone());
                self.acting = None;
                Ok(())
            }
            (401, b) => Err(Trouble::Relaunch(short(&b))),
            (s, b) => {
                if s >= 500 {
                    ctr.server_errors.fetch_add(1, Ordering::Relaxed);
                } else {
                    ctr.unexpected.fetch_add(1, Ordering::Relaxed);
                }
                self.acting = None;
                // Resynchronise on the ticket as stored.
                let get = format!("{url}/api/tickets/{id}");
                if let Ok((200, b)) = send(&self.c, reqwest::Method::GET, get, Some(tok), None, None).await {
                    let v: Value = serde_json::from_slice(&b).unwrap_or_default();
                    self.ticket = Some(v["ticket"].clone());
                }
                Err(Trouble::Failed(format!("{}: ticket {id} seq {seq}: {s} {}", self.name, short(&b))))
            }
        }
    }

    /// What a step's trouble means for the player: wait and try again,
    /// launch again, or count a failure; false when the player stops.
    async fn after_step(&mut self, step: Result<(), Trouble>) -> bool {
        let ctr = &self.shared.counters;
        match step {
            Ok(()) => self.down_since = None,
            Err(Trouble::Down) => {
                ctr.connection_errors.fetch_add(1, Ordering::Relaxed);
                let since = *self.down_since.get_or_insert_with(Instant::now);
                if since.elapsed() > STUCK {
                    let (name, server) = (&self.name, self.server);
                    self.shared.fail(format!("{name}: no answer from server {server} for {} s", STUCK.as_secs()));
                    return false;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Err(Trouble::Relaunch(why)) => {
                ctr.relaunches.fetch_add(1, Ordering::Relaxed);
                if self.token.is_some() {
                    // A session of ours lost: sessions are durable, this is a failure.
                    self.shared.fail(format!("{}: the session was refused: {why}", self.name));
                }
                self.token = None;
            }
            Err(Trouble::Failed(what)) => {
                self.shared.fail(what);
                if self.shared.failures.lock().unwrap().len() >= 40 {
                    return false; // the run has failed: no endless loop on a failure that repeats
                }
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
        true
    }
}

//! A case of the corpus: the request it writes, what it must get, and
//! the context it is built from.

use crate::reliability::rng::Rng;
use serde_json::{Value, json};

/// What a case must get.
#[derive(Clone, Copy, Debug)]
pub(super) enum Want {
    /// A 4xx in the error shape.
    Refused,
    /// One of these statuses in the error shape.
    Exactly(&'static [u16]),
    /// The request cannot be parsed as HTTP: a 4xx (shape when it has a
    /// body) or the connection closed without an answer.
    Protocol,
    /// `HEAD` on a static file: 200 with no body, like `GET`.
    HeadOk,
    /// A request that stops half-way: the server must close the connection.
    Closed,
}

pub(super) type Build = Box<dyn Fn(&Ctx) -> Vec<u8> + Send + Sync>;
/// A named request part built from the context.
pub(super) type Named<T> = (&'static str, fn(&Ctx) -> T);

pub(super) struct Case {
    pub(super) cat: &'static str,
    pub(super) name: String,
    pub(super) build: Build,
    pub(super) want: Want,
    /// A made-up method that must not show up in `/metrics`.
    pub(super) metric_probe: Option<String>,
    /// The answer must come within this many seconds.
    pub(super) max_secs: Option<f64>,
    /// Run in the background (slow: waits for a timeout).
    pub(super) slow: bool,
    /// Slowloris: after the first bytes, one more header line every second.
    pub(super) drip: bool,
}

/// Who and what the corpus aims at.
#[derive(Clone, Debug, Default)]
pub(super) struct Ctx {
    pub(super) addr: String,
    pub(super) a_token: String,
    pub(super) b_token: String,
    /// Player A's ticket in play, its seq, phase and hand.
    pub(super) a_ticket: String,
    pub(super) a_seq: u64,
    pub(super) a_phase: String,
    pub(super) a_hand: Vec<String>,
    /// The body A sent at seq - 1 (for a conflicting replay).
    pub(super) a_prev_card: Option<String>,
    /// B's finished ticket and B's fresh one.
    pub(super) b_done: String,
    pub(super) b_open: String,
}

impl Ctx {
    pub(super) fn valid_action(&self) -> Value {
        if self.a_phase == "play" {
            json!({"seq": self.a_seq, "action": "play", "card": self.a_hand.first().cloned().unwrap_or_default()})
        } else {
            json!({"seq": self.a_seq, "action": "draw"})
        }
    }
    pub(super) fn actions_path(&self) -> String {
        format!("/api/tickets/{}/actions", self.a_ticket)
    }
}

pub(super) fn add(v: &mut Vec<Case>, cat: &'static str, name: String, want: Want, build: Build) {
    v.push(Case { cat, name, build, want, metric_probe: None, max_secs: None, slow: false, drip: false });
}

/// One category of cases: appends its cases to the corpus.
pub(super) type Category = fn(&mut Vec<Case>, &mut Rng);

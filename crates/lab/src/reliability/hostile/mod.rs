//! A corpus of hostile requests, generated from categories, each written
//! byte for byte on its own TCP connection (so that requests no HTTP
//! library would send can be sent too: bad `Content-Length`, made-up
//! methods, invalid UTF-8 in paths, half-sent headers).
//!
//! Every request must be refused with a 4xx in the error shape
//! `{"error": "...", "message": "..."}` (`application/json`), and change
//! nothing: after each one, two players' balances and ticket lists, the
//! operator's figures (`GET /api/admin/emissions`) and the row counts of
//! the SQLite file (read-only, with `sqlite3` when it is installed) are
//! compared with the moment before. A few cases expect something else, and
//! say so: `HEAD` on a static file answers like `GET`; requests the HTTP
//! layer cannot parse (invalid bytes in the request line, oversized
//! headers) may be refused with a bare 4xx or a closed connection, since no
//! route is reached; a connection that stops half-way through its headers
//! must be closed by the server within a bounded time (the time is
//! reported); a made-up method must not become a metric label.

mod account;
mod auth;
mod bodies;
mod game;
mod headers;
mod json;
mod methods;
mod paths;
mod runner;
mod state;
mod text;
mod wire;

pub use runner::run;

use crate::reliability::Rng;
use serde_json::{Value, json};

/// What a case must get.
#[derive(Clone, Copy, Debug)]
enum Want {
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

type Build = Box<dyn Fn(&Ctx) -> Vec<u8> + Send + Sync>;
/// A named request part built from the context.
type Named<T> = (&'static str, fn(&Ctx) -> T);

struct Case {
    cat: &'static str,
    name: String,
    build: Build,
    want: Want,
    /// A made-up method that must not show up in `/metrics`.
    metric_probe: Option<String>,
    /// The answer must come within this many seconds.
    max_secs: Option<f64>,
    /// Run in the background (slow: waits for a timeout).
    slow: bool,
    /// Slowloris: after the first bytes, one more header line every second.
    drip: bool,
}

/// Who and what the corpus aims at.
#[derive(Clone, Debug, Default)]
struct Ctx {
    addr: String,
    a_token: String,
    b_token: String,
    /// Player A's ticket in play, its seq, phase and hand.
    a_ticket: String,
    a_seq: u64,
    a_phase: String,
    a_hand: Vec<String>,
    /// The body A sent at seq - 1 (for a conflicting replay).
    a_prev_card: Option<String>,
    /// B's finished ticket and B's fresh one.
    b_done: String,
    b_open: String,
}

impl Ctx {
    fn valid_action(&self) -> Value {
        if self.a_phase == "play" {
            json!({"seq": self.a_seq, "action": "play", "card": self.a_hand.first().cloned().unwrap_or_default()})
        } else {
            json!({"seq": self.a_seq, "action": "draw"})
        }
    }
    fn actions_path(&self) -> String {
        format!("/api/tickets/{}/actions", self.a_ticket)
    }
}

fn add(v: &mut Vec<Case>, cat: &'static str, name: String, want: Want, build: Build) {
    v.push(Case { cat, name, build, want, metric_probe: None, max_secs: None, slow: false, drip: false });
}

/// One category of cases: appends its cases to the corpus.
type Category = fn(&mut Vec<Case>, &mut Rng);

/// The corpus: every category in turn, in the order of the report.
fn corpus(rng: &mut Rng) -> Vec<Case> {
    let categories: &[Category] = &[
        json::malformed_json,
        json::wrong_types,
        json::numbers,
        text::control_in_bodies,
        text::control_in_head,
        bodies::big_bodies,
        auth::tokens,
        auth::other_players,
        paths::unknown_ids,
        paths::path_tricks,
        headers::content_types,
        headers::framing,
        methods::methods,
        game::out_of_turn,
        game::wrong_seq,
        json::unknown_fields,
        account::account_malformed,
        account::account_values,
        account::account_logins,
        headers::half_sent,
    ];
    let mut v = Vec::new();
    for category in categories {
        category(&mut v, rng);
    }
    v
}

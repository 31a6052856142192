//! Reconciliation: the game's rounds of a period against the operator's
//! transactions. Every ticket sold is matched by exactly one debit of its
//! price, every debit by exactly one sold ticket, every released ticket
//! (a refused or rolled-back purchase) by no debit or a rolled-back one,
//! every prize by exactly one credit of its amount; each departure is a
//! [`Mismatch`], and a clean period has none.

use crate::ids::{RoundId, TxKind};
use crate::messages::OperatorTransaction;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use utoipa::ToSchema;

/// Where a round stands on the game's side.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum RoundState {
    /// The debit was acknowledged: the ticket is the player's.
    Sold,
    /// The debit was refused, or rolled back (acknowledged): the ticket went back to the pool.
    Released,
    /// The debit was sent and not answered yet, or its rollback is not acknowledged yet.
    Unresolved,
}

/// One round as the game recorded it (what the game server's
/// `GET /api/admin/wallet/rounds` lists, read back by the reconciliation
/// command).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct OurRound {
    /// The round: the ticket's serial and its sale's attempt (`SERIAL.N`).
    pub round_id: String,
    /// The operator's reference of the player.
    pub player: String,
    pub price_cents: i64,
    #[schema(inline)]
    pub state: RoundState,
    /// The prize won, once the game finished with one.
    pub prize_cents: Option<i64>,
    /// The prize's credit is acknowledged by the operator (our outbox is done with it).
    pub credit_acknowledged: bool,
}

/// A departure from the rules above.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Mismatch {
    pub round_id: String,
    /// A stable code: `sold_without_debit`, `debit_amount_differs`,
    /// `debit_without_ticket`, `released_but_debited`, `rollback_of_sold_ticket`,
    /// `unresolved`, `prize_not_credited`, `credit_pending`, `credit_amount_differs`,
    /// `credit_without_prize`, `duplicate`, `player_differs`, `unknown_round`.
    pub kind: &'static str,
    pub detail: String,
}

/// The outcome of a reconciliation.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Report {
    pub rounds: usize,
    pub sold: usize,
    pub released: usize,
    pub prizes: usize,
    pub operator_transactions: usize,
    pub debited_cents: i64,
    pub credited_cents: i64,
    pub mismatches: Vec<Mismatch>,
}

impl Report {
    pub fn clean(&self) -> bool {
        self.mismatches.is_empty()
    }
}

#[derive(Default)]
struct Theirs<'a> {
    debits: Vec<&'a OperatorTransaction>,
    credits: Vec<&'a OperatorTransaction>,
    rollbacks: Vec<&'a OperatorTransaction>,
}

/// Compares `ours` (the rounds begun in the period) with `theirs` (the
/// operator's transactions of the period, and of any round in `ours`).
/// Operator transactions of rounds that are not in `ours` count only when
/// the round's id is well formed but unknown to us (`unknown_round`) and
/// `strict` is set (the period covers everything the game ever sold).
pub fn reconcile(ours: &[OurRound], theirs: &[OperatorTransaction], strict: bool) -> Report {
    let mut report = Report { rounds: ours.len(), operator_transactions: theirs.len(), ..Report::default() };
    let mut by_round: BTreeMap<&str, Theirs<'_>> = BTreeMap::new();
    let mut seen_ids = BTreeSet::new();
    let mut push = |round: &str, kind: &'static str, detail: String| {
        report.mismatches.push(Mismatch { round_id: round.to_string(), kind, detail });
    };
    for t in theirs {
        if !seen_ids.insert(t.transaction_id.as_str()) {
            push(&t.round_id, "duplicate", format!("transaction {} appears twice", t.transaction_id));
            continue;
        }
        let entry = by_round.entry(t.round_id.as_str()).or_default();
        match t.kind {
            TxKind::Debit => entry.debits.push(t),
            TxKind::Credit => entry.credits.push(t),
            TxKind::Rollback => entry.rollbacks.push(t),
        }
        let expected = RoundId::parse(&t.round_id).map(|r| r.tx(t.kind));
        if expected.as_deref() != Some(t.transaction_id.as_str()) {
            push(
                &t.round_id,
                "duplicate",
                format!("transaction {} is not the round's {} id", t.transaction_id, t.kind),
            );
        }
    }
    let known: BTreeSet<&str> = ours.iter().map(|r| r.round_id.as_str()).collect();
    for round in ours {
        let empty = Theirs::default();
        let t = by_round.get(round.round_id.as_str()).unwrap_or(&empty);
        let id = round.round_id.as_str();
        for tx in t.debits.iter().chain(&t.credits).chain(&t.rollbacks) {
            if tx.player != round.player {
                push(
                    id,
                    "player_differs",
                    format!("{} is for {}, the round for {}", tx.transaction_id, tx.player, round.player),
                );
            }
        }
        if t.debits.len() > 1 || t.credits.len() > 1 || t.rollbacks.len() > 1 {
            push(
                id,
                "duplicate",
                format!("{} debits, {} credits, {} rollbacks", t.debits.len(), t.credits.len(), t.rollbacks.len()),
            );
        }
        let live_debit = t.debits.iter().find(|d| !d.rolled_back);
        match round.state {
            RoundState::Sold => {
                report.sold += 1;
                match live_debit {
                    None => push(id, "sold_without_debit", "the ticket was sold but no debit stands".into()),
                    Some(d) if d.amount_cents != round.price_cents => push(
                        id,
                        "debit_amount_differs",
                        format!("debited {} cents, the ticket costs {}", d.amount_cents, round.price_cents),
                    ),
                    Some(d) => report.debited_cents += d.amount_cents,
                }
                if !t.rollbacks.is_empty() {
                    push(id, "rollback_of_sold_ticket", "a rollback was applied to a sold ticket's debit".into());
                }
            }
            RoundState::Released => {
                report.released += 1;
                if live_debit.is_some() {
                    push(id, "released_but_debited", "the ticket went back to the pool but its debit stands".into());
                }
            }
            RoundState::Unresolved => push(id, "unresolved", "the debit's outcome is not settled yet".into()),
        }
        match round.prize_cents.filter(|p| *p > 0) {
            Some(prize) => {
                report.prizes += 1;
                match t.credits.first() {
                    None if round.credit_acknowledged => push(
                        id,
                        "prize_not_credited",
                        format!("{prize} cents acknowledged but not in the operator's list"),
                    ),
                    None => push(id, "credit_pending", format!("{prize} cents still in the outbox")),
                    Some(c) if c.amount_cents != prize => push(
                        id,
                        "credit_amount_differs",
                        format!("credited {} cents, the prize is {prize}", c.amount_cents),
                    ),
                    Some(c) => report.credited_cents += c.amount_cents,
                }
            }
            None => {
                if !t.credits.is_empty() {
                    push(id, "credit_without_prize", "a credit was applied to a round with no prize".into());
                }
            }
        }
    }
    for (round, t) in &by_round {
        if known.contains(round) {
            continue;
        }
        let live = t.debits.iter().any(|d| !d.rolled_back);
        if live {
            push(round, "debit_without_ticket", "the operator holds a debit for a round the game did not sell".into());
        } else if !t.credits.is_empty() {
            push(round, "credit_without_prize", "a credit for a round the game does not know".into());
        } else if strict {
            push(round, "unknown_round", "transactions of a round the game does not know".into());
        }
    }
    report
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ours(round: &str, state: RoundState, prize: Option<i64>) -> OurRound {
        OurRound {
            round_id: round.into(),
            player: "p1".into(),
            price_cents: 300,
            state,
            prize_cents: prize,
            credit_acknowledged: prize.is_some(),
        }
    }

    fn tx(round: &str, kind: TxKind, amount: i64, rolled_back: bool) -> OperatorTransaction {
        OperatorTransaction {
            transaction_id: format!("{round}:{kind}"),
            kind,
            round_id: round.into(),
            player: "p1".into(),
            amount_cents: amount,
            applied_ms: 1,
            rolled_back,
        }
    }

    fn kinds(r: &Report) -> Vec<&'static str> {
        r.mismatches.iter().map(|m| m.kind).collect()
    }

    #[test]
    fn a_clean_period_has_no_mismatch() {
        let ours = [
            ours("A.1", RoundState::Sold, Some(1000)),
            ours("B.1", RoundState::Sold, None),
            ours("C.1", RoundState::Released, None),
            ours("D.1", RoundState::Released, None),
        ];
        let theirs = [
            tx("A.1", TxKind::Debit, 300, false),
            tx("A.1", TxKind::Credit, 1000, false),
            tx("B.1", TxKind::Debit, 300, false),
            // C: refused, the operator has nothing; D: debited then rolled back.
            tx("D.1", TxKind::Debit, 300, true),
            tx("D.1", TxKind::Rollback, 300, false),
        ];
        let r = reconcile(&ours, &theirs, true);
        assert!(r.clean(), "{:?}", r.mismatches);
        assert_eq!((r.sold, r.released, r.prizes, r.debited_cents, r.credited_cents), (2, 2, 1, 600, 1000));
    }

    #[test]
    fn every_kind_of_departure_is_listed() {
        let ours = [
            ours("A.1", RoundState::Sold, None),       // no debit
            ours("B.1", RoundState::Sold, None),       // wrong amount
            ours("C.1", RoundState::Released, None),   // debit stands
            ours("D.1", RoundState::Sold, Some(500)),  // prize never credited
            ours("E.1", RoundState::Sold, Some(500)),  // credit of another amount
            ours("F.1", RoundState::Unresolved, None), // unknown debit
            ours("G.1", RoundState::Sold, None),       // credit without prize, rolled back
        ];
        let mut pending = ours[3].clone();
        pending.round_id = "H.1".into();
        pending.credit_acknowledged = false;
        let mut ours = ours.to_vec();
        ours.push(pending);
        let theirs = [
            tx("B.1", TxKind::Debit, 200, false),
            tx("C.1", TxKind::Debit, 300, false),
            tx("D.1", TxKind::Debit, 300, false),
            tx("E.1", TxKind::Debit, 300, false),
            tx("E.1", TxKind::Credit, 400, false),
            tx("G.1", TxKind::Debit, 300, false),
            tx("G.1", TxKind::Credit, 100, false),
            tx("G.1", TxKind::Rollback, 300, false),
            tx("H.1", TxKind::Debit, 300, false),
            tx("Z.1", TxKind::Debit, 300, false),
            tx("Z.1", TxKind::Debit, 300, false),
        ];
        let r = reconcile(&ours, &theirs, true);
        assert_eq!(
            kinds(&r),
            [
                "duplicate",
                "sold_without_debit",
                "debit_amount_differs",
                "released_but_debited",
                "prize_not_credited",
                "credit_amount_differs",
                "unresolved",
                "rollback_of_sold_ticket",
                "credit_without_prize",
                "credit_pending",
                "debit_without_ticket",
            ]
        );
    }
}

//! Round and transaction ids. A round is one sale of a ticket: its id is
//! the ticket's serial and the sale's attempt number (a purchase whose debit
//! was refused or rolled back returns its ticket to the pool, and the
//! ticket's next sale is a new round). Each money step of a round has one
//! transaction id, derived, never random: a retry after a timeout, a crash
//! or a duplicate delivery sends the same id, and the operator applies it
//! once.

use serde::{Deserialize, Serialize};
use std::fmt;

/// The money steps of a round.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum TxKind {
    /// The ticket's price, taken from the player's wallet.
    Debit,
    /// The prize, paid into the player's wallet.
    Credit,
    /// The debit undone: the purchase did not happen.
    Rollback,
}

impl TxKind {
    pub fn as_str(self) -> &'static str {
        match self {
            TxKind::Debit => "debit",
            TxKind::Credit => "credit",
            TxKind::Rollback => "rollback",
        }
    }

    pub fn parse(s: &str) -> Option<TxKind> {
        match s {
            "debit" => Some(TxKind::Debit),
            "credit" => Some(TxKind::Credit),
            "rollback" => Some(TxKind::Rollback),
            _ => None,
        }
    }
}

impl fmt::Display for TxKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A round: `SERIAL.ATTEMPT`, e.g. `ACP-001-00001-000042-17.1`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RoundId {
    pub serial: String,
    pub attempt: u32,
}

impl RoundId {
    pub fn new(serial: &str, attempt: u32) -> RoundId {
        RoundId { serial: serial.to_string(), attempt }
    }

    /// The round's id as sent.
    pub fn id(&self) -> String {
        format!("{}.{}", self.serial, self.attempt)
    }

    /// The id of the round's transaction of `kind`: `ROUND:KIND`.
    pub fn tx(&self, kind: TxKind) -> String {
        format!("{}:{}", self.id(), kind)
    }

    /// A round id as sent, back into its parts.
    pub fn parse(s: &str) -> Option<RoundId> {
        let (serial, attempt) = s.rsplit_once('.')?;
        let attempt: u32 = attempt.parse().ok().filter(|a| *a >= 1)?;
        (!serial.is_empty() && attempt.to_string().len() == s.len() - serial.len() - 1)
            .then(|| RoundId { serial: serial.to_string(), attempt })
    }

    /// A transaction id back into its round and kind.
    pub fn parse_tx(s: &str) -> Option<(RoundId, TxKind)> {
        let (round, kind) = s.rsplit_once(':')?;
        Some((RoundId::parse(round)?, TxKind::parse(kind)?))
    }
}

impl fmt::Display for RoundId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.serial, self.attempt)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transaction_ids_are_derived_from_the_round_and_the_step() {
        let round = RoundId::new("ACP-001-00001-000042-17", 1);
        assert_eq!(round.tx(TxKind::Debit), "ACP-001-00001-000042-17.1:debit");
        assert_eq!(round.tx(TxKind::Credit), "ACP-001-00001-000042-17.1:credit");
        assert_eq!(round.tx(TxKind::Rollback), "ACP-001-00001-000042-17.1:rollback");
        // The same round and step give the same id, every time.
        assert_eq!(round.tx(TxKind::Debit), RoundId::new("ACP-001-00001-000042-17", 1).tx(TxKind::Debit));
        // The ticket's next sale is another round.
        assert_ne!(round.tx(TxKind::Debit), RoundId::new("ACP-001-00001-000042-17", 2).tx(TxKind::Debit));
        assert_eq!(
            RoundId::parse_tx("ACP-001-00001-000042-17.2:rollback"),
            Some((RoundId::new("ACP-001-00001-000042-17", 2), TxKind::Rollback))
        );
    }

    #[test]
    fn malformed_ids_do_not_parse() {
        for bad in ["", ".1", "X.0", "X.01", "X.-1", "X", "X.1:refund", "X.1"] {
            assert!(RoundId::parse_tx(bad).is_none(), "{bad}");
        }
        assert!(RoundId::parse("X.01").is_none());
        assert_eq!(RoundId::parse("X.1"), Some(RoundId::new("X", 1)));
    }
}

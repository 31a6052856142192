//! What the game believes of an answer of the operator's wallet
//! (docs/operator-integration.md, "How the game reads an answer"), checked
//! in one place against the request it answers. The signature is checked
//! first, by the caller (it holds the clock and the request's nonce); then
//! [`WalletRequest::read`] takes a signed answer's status and body:
//!
//! - a 200 is [`Verdict::Applied`] only when its body has the protocol's
//!   fields and no other (each once, none `null`) and every field agrees
//!   with the request: the same `transaction_id` (none for a balance), the
//!   request's currency, a balance of 0 or more, an `operator_transaction_id`
//!   (none for a balance) of 1 to 128 characters with no control character;
//! - a 4xx is [`Verdict::Refused`] only when its body is exactly
//!   `{"error", "message"}` and its status and code are a refusal the
//!   protocol has for this request (a debit's 402 `insufficient_funds`, a
//!   credit's 409 `rolled_back`, ...);
//! - anything else is [`Verdict::Unknown`]: treated as no answer at all (a
//!   debit is rolled back, a credit or rollback is sent again), never
//!   believed either way.

use crate::messages::{BalanceRequest, MoneyRequest, RollbackRequest, WalletAnswer, errors, paths};
use serde::Deserialize;

/// A request to the operator's wallet as the game sent it: what its answer
/// must match.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WalletRequest {
    Balance(BalanceRequest),
    Debit(MoneyRequest),
    Credit(MoneyRequest),
    Rollback(RollbackRequest),
}

/// What a signed answer says, once checked against its request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// 200, matching the request: applied (or applied before, for a retry).
    Applied(WalletAnswer),
    /// A refusal the protocol has for this request: not applied.
    Refused { status: u16, code: String, message: String },
    /// Anything else: whether it was applied is unknown.
    Unknown(String),
}

/// A refusal's body: these two fields and no other.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Refusal {
    error: String,
    message: String,
}

/// The refusals of a debit, by status.
const DEBIT_REFUSALS: [(u16, &[&str]); 4] = [
    (400, &[errors::BAD_REQUEST]),
    (402, &[errors::INSUFFICIENT_FUNDS, errors::LIMIT_REACHED, errors::PLAYER_BLOCKED, errors::SESSION_EXPIRED]),
    (404, &[errors::UNKNOWN_PLAYER]),
    (409, &[errors::TRANSACTION_CONFLICT, errors::ROLLED_BACK]),
];
/// A credit is never refused for the player's state (a prize is owed).
const CREDIT_REFUSALS: [(u16, &[&str]); 3] = [
    (400, &[errors::BAD_REQUEST]),
    (404, &[errors::UNKNOWN_PLAYER]),
    (409, &[errors::TRANSACTION_CONFLICT, errors::ROLLED_BACK]),
];
/// A rollback of a debit never seen is a success (a tombstone), never `rolled_back`.
const ROLLBACK_REFUSALS: [(u16, &[&str]); 3] =
    [(400, &[errors::BAD_REQUEST]), (404, &[errors::UNKNOWN_PLAYER]), (409, &[errors::TRANSACTION_CONFLICT])];
const BALANCE_REFUSALS: [(u16, &[&str]); 2] = [(400, &[errors::BAD_REQUEST]), (404, &[errors::UNKNOWN_PLAYER])];

/// The longest `operator_transaction_id` believed, in characters.
const MAX_OPERATOR_ID_CHARS: usize = 128;

impl WalletRequest {
    /// The request sent to `path` (one of [`paths`]' wallet paths) with
    /// these exact bytes; why not when they are not one.
    pub fn parse(path: &str, body: &[u8]) -> Result<WalletRequest, String> {
        let bad = |e: serde_json::Error| format!("the request to {path} is not the protocol's: {e}");
        match path {
            paths::BALANCE => serde_json::from_slice(body).map(WalletRequest::Balance).map_err(bad),
            paths::DEBIT => serde_json::from_slice(body).map(WalletRequest::Debit).map_err(bad),
            paths::CREDIT => serde_json::from_slice(body).map(WalletRequest::Credit).map_err(bad),
            paths::ROLLBACK => serde_json::from_slice(body).map(WalletRequest::Rollback).map_err(bad),
            _ => Err(format!("{path} is not a path of the wallet whose answers are read here")),
        }
    }

    /// Its path at the wallet.
    pub fn path(&self) -> &'static str {
        match self {
            WalletRequest::Balance(_) => paths::BALANCE,
            WalletRequest::Debit(_) => paths::DEBIT,
            WalletRequest::Credit(_) => paths::CREDIT,
            WalletRequest::Rollback(_) => paths::ROLLBACK,
        }
    }

    /// `balance`, `debit`, `credit` or `rollback`.
    pub fn kind(&self) -> &'static str {
        match self {
            WalletRequest::Balance(_) => "balance",
            WalletRequest::Debit(_) => "debit",
            WalletRequest::Credit(_) => "credit",
            WalletRequest::Rollback(_) => "rollback",
        }
    }

    /// The transaction it is (none for a balance).
    pub fn transaction_id(&self) -> Option<&str> {
        match self {
            WalletRequest::Balance(_) => None,
            WalletRequest::Debit(r) | WalletRequest::Credit(r) => Some(&r.transaction_id),
            WalletRequest::Rollback(r) => Some(&r.transaction_id),
        }
    }

    fn currency(&self) -> &str {
        match self {
            WalletRequest::Balance(r) => &r.currency,
            WalletRequest::Debit(r) | WalletRequest::Credit(r) => &r.currency,
            WalletRequest::Rollback(r) => &r.currency,
        }
    }

    /// The error codes the protocol has for a refusal of this request with `status`.
    pub fn refusals(&self, status: u16) -> &'static [&'static str] {
        let table: &[(u16, &'static [&'static str])] = match self {
            WalletRequest::Balance(_) => &BALANCE_REFUSALS,
            WalletRequest::Debit(_) => &DEBIT_REFUSALS,
            WalletRequest::Credit(_) => &CREDIT_REFUSALS,
            WalletRequest::Rollback(_) => &ROLLBACK_REFUSALS,
        };
        table.iter().find(|(s, _)| *s == status).map_or(&[], |(_, codes)| codes)
    }

    /// Whether the 200 `answer` answers this request, field by field; why not.
    pub fn check(&self, answer: &WalletAnswer) -> Result<(), String> {
        match (self.transaction_id(), answer.transaction_id.as_deref()) {
            (Some(ours), Some(theirs)) if ours != theirs => {
                return Err(format!("it answers transaction {theirs:?}, not {ours:?}"));
            }
            (Some(ours), None) => return Err(format!("it names no transaction (the request was {ours:?})")),
            (None, Some(theirs)) => return Err(format!("a balance's answer names transaction {theirs:?}")),
            _ => {}
        }
        if answer.currency != self.currency() {
            return Err(format!("its currency is {:?}, the request's {:?}", answer.currency, self.currency()));
        }
        if answer.balance_cents < 0 {
            return Err(format!("its balance is negative ({} cents)", answer.balance_cents));
        }
        match (&answer.operator_transaction_id, self) {
            (Some(id), WalletRequest::Balance(_)) => {
                Err(format!("a balance's answer names operator transaction {id:?}"))
            }
            (Some(id), _) if !plain_id(id) => Err(format!(
                "its operator_transaction_id {id:?} is not 1 to {MAX_OPERATOR_ID_CHARS} characters without a control character"
            )),
            _ => Ok(()),
        }
    }

    /// Reads a signed answer (its signature already checked) of `status`
    /// with `body`.
    pub fn read(&self, status: u16, body: &[u8]) -> Verdict {
        if status == 200 {
            return match serde_json::from_slice::<WalletAnswer>(body) {
                Ok(answer) => match self.check(&answer) {
                    Ok(()) => Verdict::Applied(answer),
                    Err(why) => {
                        Verdict::Unknown(format!("answer 200 to a {} that does not match it: {why}", self.kind()))
                    }
                },
                Err(e) => Verdict::Unknown(format!("answer 200 unreadable: {e}")),
            };
        }
        match serde_json::from_slice::<Refusal>(body) {
            Ok(r) if self.refusals(status).contains(&r.error.as_str()) => {
                Verdict::Refused { status, code: r.error, message: r.message }
            }
            Ok(r) => Verdict::Unknown(format!(
                "answer {status} {:?} is not a refusal of a {} the protocol has ({})",
                r.error,
                self.kind(),
                r.message
            )),
            Err(e) => Verdict::Unknown(format!("answer {status} unreadable: {e}")),
        }
    }
}

/// 1 to [`MAX_OPERATOR_ID_CHARS`] characters, none a control character.
fn plain_id(id: &str) -> bool {
    (1..=MAX_OPERATOR_ID_CHARS).contains(&id.chars().count()) && !id.chars().any(char::is_control)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::{RoundId, TxKind};
    use crate::messages::CURRENCY;

    fn round() -> RoundId {
        RoundId::new("ACP-001-00001-000042-17", 1)
    }

    fn money(kind: TxKind) -> MoneyRequest {
        MoneyRequest {
            transaction_id: round().tx(kind),
            round_id: round().id(),
            player: "p-1".into(),
            amount_cents: 300,
            currency: CURRENCY.into(),
            game: "ACP".into(),
        }
    }

    /// Every request the game sends, with its body.
    fn requests() -> Vec<(WalletRequest, Vec<u8>)> {
        let rollback = RollbackRequest {
            transaction_id: round().tx(TxKind::Rollback),
            round_id: round().id(),
            player: "p-1".into(),
            debit_transaction_id: round().tx(TxKind::Debit),
            amount_cents: 300,
            currency: CURRENCY.into(),
        };
        let balance = BalanceRequest { player: "p-1".into(), currency: CURRENCY.into() };
        vec![
            (WalletRequest::Balance(balance.clone()), serde_json::to_vec(&balance).unwrap()),
            (WalletRequest::Debit(money(TxKind::Debit)), serde_json::to_vec(&money(TxKind::Debit)).unwrap()),
            (WalletRequest::Credit(money(TxKind::Credit)), serde_json::to_vec(&money(TxKind::Credit)).unwrap()),
            (WalletRequest::Rollback(rollback.clone()), serde_json::to_vec(&rollback).unwrap()),
        ]
    }

    /// The answer the reference operator gives to `request`.
    fn good(request: &WalletRequest) -> serde_json::Value {
        match request.transaction_id() {
            None => serde_json::json!({"balance_cents": 9_700, "currency": "EUR"}),
            Some(t) => serde_json::json!({"transaction_id": t, "balance_cents": 9_700, "currency": "EUR",
                                          "operator_transaction_id": "op-1"}),
        }
    }

    fn read(request: &WalletRequest, status: u16, body: &serde_json::Value) -> Verdict {
        request.read(status, &serde_json::to_vec(body).unwrap())
    }

    fn unknown(v: &Verdict) -> &str {
        match v {
            Verdict::Unknown(why) => why,
            other => panic!("believed: {other:?}"),
        }
    }

    #[test]
    fn a_request_is_read_back_from_its_path_and_bytes() {
        for (request, body) in requests() {
            assert_eq!(WalletRequest::parse(request.path(), &body).unwrap(), request);
        }
        let debit = serde_json::to_vec(&money(TxKind::Debit)).unwrap();
        assert!(WalletRequest::parse(paths::ROLLBACK, &debit).is_err(), "a debit is not a rollback");
        assert!(WalletRequest::parse(paths::TRANSACTIONS, b"{\"from_ms\":0,\"to_ms\":1}").is_err());
    }

    #[test]
    fn the_answer_that_matches_its_request_is_applied() {
        for (request, _) in requests() {
            let answer = good(&request);
            match read(&request, 200, &answer) {
                Verdict::Applied(a) => {
                    assert_eq!((a.balance_cents, a.transaction_id.as_deref()), (9_700, request.transaction_id()))
                }
                other => panic!("{}: {other:?}", request.kind()),
            }
            // The operator's own id is optional; a zero balance is a balance.
            let mut bare = answer.clone();
            bare.as_object_mut().unwrap().remove("operator_transaction_id");
            bare["balance_cents"] = 0.into();
            assert!(matches!(read(&request, 200, &bare), Verdict::Applied(_)), "{}", request.kind());
        }
    }

    #[test]
    fn a_200_that_does_not_match_its_request_is_unknown_whatever_field_differs() {
        for (request, _) in requests() {
            let kind = request.kind();
            let mut cases: Vec<(&str, serde_json::Value)> = Vec::new();
            let mut edit = |what: &'static str, f: &dyn Fn(&mut serde_json::Value)| {
                let mut a = good(&request);
                f(&mut a);
                cases.push((what, a));
            };
            edit("another currency", &|a| a["currency"] = "USD".into());
            edit("a negative balance", &|a| a["balance_cents"] = (-1).into());
            edit("a field the protocol does not have", &|a| a["bonus_cents"] = 500.into());
            edit("no balance", &|a| drop(a.as_object_mut().unwrap().remove("balance_cents")));
            edit("no currency", &|a| drop(a.as_object_mut().unwrap().remove("currency")));
            edit("a balance in euros", &|a| a["balance_cents"] = 97.5.into());
            edit("a null id", &|a| a["operator_transaction_id"] = serde_json::Value::Null);
            if request.transaction_id().is_some() {
                edit("another transaction", &|a| {
                    a["transaction_id"] = round().tx(TxKind::Debit).replace(".1:", ".2:").into()
                });
                edit("no transaction", &|a| drop(a.as_object_mut().unwrap().remove("transaction_id")));
                edit("an empty operator id", &|a| a["operator_transaction_id"] = "".into());
                edit("an operator id with a newline", &|a| a["operator_transaction_id"] = "op\n1".into());
                edit("a long operator id", &|a| a["operator_transaction_id"] = "o".repeat(129).into());
            } else {
                edit("a transaction", &|a| a["transaction_id"] = round().tx(TxKind::Debit).into());
                edit("an operator transaction", &|a| a["operator_transaction_id"] = "op-1".into());
            }
            for (what, answer) in cases {
                let verdict = read(&request, 200, &answer);
                assert!(matches!(verdict, Verdict::Unknown(_)), "{kind} with {what}: {answer} gave {verdict:?}");
            }
            // A field twice is not read either.
            let twice = br#"{"balance_cents":9700,"currency":"EUR","currency":"EUR"}"#;
            assert!(unknown(&request.read(200, twice)).contains("duplicate"), "{kind}");
        }
        // A credit's answer naming the debit of its round (the audit's case).
        let (credit, _) = &requests()[2];
        let mut a = good(credit);
        a["transaction_id"] = round().tx(TxKind::Debit).into();
        assert!(unknown(&read(credit, 200, &a)).contains("not \"ACP-001-00001-000042-17.1:credit\""));
        let mut a = good(credit);
        a["operator_transaction_id"] = "o".repeat(128).into();
        assert!(matches!(read(credit, 200, &a), Verdict::Applied(_)), "128 characters are an id");
    }

    #[test]
    fn a_refusal_is_believed_only_when_the_protocol_has_it_for_this_request() {
        let all = requests();
        let (balance, debit, credit, rollback) = (&all[0].0, &all[1].0, &all[2].0, &all[3].0);
        let refusal = |code: &str| serde_json::json!({"error": code, "message": "no"});
        let refused = |v: Verdict| matches!(v, Verdict::Refused { .. });
        for code in [errors::INSUFFICIENT_FUNDS, errors::LIMIT_REACHED, errors::PLAYER_BLOCKED, errors::SESSION_EXPIRED]
        {
            assert!(refused(read(debit, 402, &refusal(code))), "{code}");
            // A prize is owed whatever the player's state.
            unknown(&read(credit, 402, &refusal(code)));
            // The right code with another status.
            unknown(&read(debit, 409, &refusal(code)));
        }
        assert_eq!(
            read(debit, 409, &refusal(errors::ROLLED_BACK)),
            Verdict::Refused { status: 409, code: errors::ROLLED_BACK.into(), message: "no".into() }
        );
        assert!(refused(read(credit, 409, &refusal(errors::ROLLED_BACK))));
        unknown(&read(rollback, 409, &refusal(errors::ROLLED_BACK)));
        assert!(refused(read(rollback, 409, &refusal(errors::TRANSACTION_CONFLICT))));
        for request in [balance, debit, credit, rollback] {
            assert!(refused(read(request, 404, &refusal(errors::UNKNOWN_PLAYER))), "{}", request.kind());
            assert!(refused(read(request, 400, &refusal(errors::BAD_REQUEST))), "{}", request.kind());
            // A code the protocol does not have; a field it does not have.
            unknown(&read(request, 404, &refusal("no_such_player")));
            let mut extra = refusal(errors::UNKNOWN_PLAYER);
            extra["retry"] = true.into();
            unknown(&read(request, 404, &extra));
            // A signature refused, a timeout, too many requests: never refusals.
            for status in [401, 408, 429] {
                unknown(&read(request, status, &refusal(errors::BAD_SIGNATURE)));
            }
            // Other statuses, even signed and in the error's shape.
            for status in [201, 204, 302, 500, 503] {
                unknown(&read(request, status, &refusal(errors::UNKNOWN_PLAYER)));
            }
            assert!(unknown(&request.read(404, b"not json")).contains("unreadable"));
        }
    }
}

//! The rules a request's shape must follow (400 otherwise), the ledger's
//! limits, and the digest that tells a retry from a conflicting request.

use super::answer::Answer;
use serde::Serialize;
use sha2::{Digest, Sha256};
use wallet::{CURRENCY, TxKind, errors};

/// Seven days: the operator's weekly stake limit is over a rolling week.
pub const WEEK_MS: i64 = 7 * 24 * 3600 * 1000;

/// The largest amount of one transaction, in cents (ten million euros):
/// sums of amounts then stay far within SQLite's 64-bit integers.
pub const MAX_AMOUNT_CENTS: i64 = 1_000_000_000;

/// The largest balance the staff can set, in cents.
pub const MAX_BALANCE_CENTS: i64 = 1_000_000_000_000_000;

fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// The canonical text of a transaction request: its kind and its fields in
/// the protocol's order, as JSON.
pub(super) fn request_sha256(kind: TxKind, request: &impl Serialize) -> String {
    #[derive(Serialize)]
    struct Canonical<'a, T> {
        kind: &'a str,
        request: &'a T,
    }
    sha256_hex(&serde_json::to_vec(&Canonical { kind: kind.as_str(), request }).expect("serializable"))
}

/// 1 to `max` characters (not bytes: as JSON Schema's maxLength counts), none a control character.
pub(super) fn valid_ref(s: &str, max: usize) -> bool {
    !s.is_empty() && s.chars().count() <= max && s.chars().all(|c| !c.is_control())
}

/// The rules a request's shape must follow (400 otherwise).
pub(super) fn check_currency(currency: &str) -> Result<(), Answer> {
    if currency == CURRENCY {
        Ok(())
    } else {
        Err(Answer::error(400, errors::BAD_REQUEST, format!("the currency must be {CURRENCY}, not {currency:?}")))
    }
}

pub(super) fn check_player(player: &str) -> Result<(), Answer> {
    if valid_ref(player, 64) {
        Ok(())
    } else {
        Err(Answer::error(400, errors::BAD_REQUEST, "a player reference is 1 to 64 printable characters"))
    }
}

pub(super) fn check_ids(transaction_id: &str, round_id: &str, amount_cents: i64) -> Result<(), Answer> {
    if !valid_ref(transaction_id, 128) || !valid_ref(round_id, 128) {
        return Err(Answer::error(
            400,
            errors::BAD_REQUEST,
            "transaction and round ids are 1 to 128 printable characters",
        ));
    }
    if !(1..=MAX_AMOUNT_CENTS).contains(&amount_cents) {
        return Err(Answer::error(
            400,
            errors::BAD_REQUEST,
            format!("amount_cents is a whole number from 1 to {MAX_AMOUNT_CENTS}"),
        ));
    }
    Ok(())
}

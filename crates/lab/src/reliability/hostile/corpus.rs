//! The corpus: its categories in the order of the report.

use super::case::{Case, Category};
use super::{account, auth, bodies, game, headers, json, methods, paths, text};
use crate::reliability::rng::Rng;

/// The corpus: every category in turn, in the order of the report.
pub(super) fn corpus(rng: &mut Rng) -> Vec<Case> {
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

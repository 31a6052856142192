//! A player's login and password, their sessions, their recovery code and
//! the closure of their account.

use crate::changes::{AuditRecord, Changes, Effect, PlayerWrite};

use crate::error::AppError;
use crate::rows::{LimitsRow, PlayerId};
use format::iso8601;
use serde_json::json;

/// Which of a player's tokens a request came with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Via {
    /// The player's own token (docs/contract.md's, given at registration).
    OwnToken,
    /// A session's token (by its hex SHA-256), opened with the login and password.
    Session(String),
}

/// What the `token_hash` of a player whose own token is revoked holds: no
/// SHA-256 in hex, so no token matches it, and one per player (the column
/// is unique).
pub fn revoked_token_hash(player: PlayerId) -> String {
    format!("revoked:{player}")
}

/// The refusal of a login another player holds (409).
pub fn login_taken(login: &str) -> AppError {
    AppError::Conflict(format!("the login {login:?} is taken: choose another"))
}

/// A login and password for `player`. `was` is the password hash the
/// request was checked against (`None`: the account had none), `current`
/// the one stored now: they differ when another request changed it
/// meanwhile. `login_owner` is the player holding the login, if any.
///
/// Whoever knew the old password may have opened sessions or kept the
/// player's own token: every one of them ends, but the token the change
/// came with (`via`), which keeps working.
#[allow(clippy::too_many_arguments)]
pub fn set_credentials(
    player: PlayerId,
    current: Option<String>,
    was: Option<String>,
    login_owner: Option<PlayerId>,
    login: &str,
    password_hash: &str,
    via: &Via,
    now: i64,
) -> Result<Changes, AppError> {
    if login_owner.is_some_and(|p| p != player) {
        return Err(login_taken(login));
    }
    if current != was {
        return Err(AppError::Conflict("the account's password changed meanwhile: try again".into()));
    }
    Ok(Changes {
        player: Some(PlayerWrite::Credentials {
            player,
            login: login.to_string(),
            password_hash: password_hash.to_string(),
            was,
            keep_session: match via {
                Via::Session(token_hash) => Some(token_hash.clone()),
                Via::OwnToken => None,
            },
            revoke_own_token: matches!(via, Via::Session(_)),
            recovery_hash: None,
        }),
        audit: Some(crate::changes::AuditRecord {
            created_ms: now,
            kind: "credentials_set",
            data_json: json!({
                "player_id": player,
                "login": login,
                "other_sessions_ended": true,
                "own_token_revoked": matches!(via, Via::Session(_)),
            })
            .to_string(),
        }),
        answer: json!({"login": login}).to_string(),
        ..Changes::none(Effect::Player)
    })
}

/// A session for `player`, whose password hash was `verified` against the
/// password given; refused if it changed since (`current`).
pub fn open_session(
    player: PlayerId,
    current: Option<String>,
    verified: &str,
    token_hash: &str,
    expires_ms: i64,
    now: i64,
) -> Result<Changes, AppError> {
    if current.as_deref() != Some(verified) {
        return Err(AppError::Unauthorized("wrong login or password".into()));
    }
    Ok(Changes {
        player: Some(PlayerWrite::OpenSession {
            token_hash: token_hash.to_string(),
            player,
            created_ms: now,
            expires_ms,
        }),
        ..Changes::none(Effect::Player)
    })
}

/// A logout: a session ends; the player's own token is revoked, unless
/// the account has no password (`password_hash`), which it would then lose
/// for good: that is refused (409) until the player sets a login.
pub fn logout(player: PlayerId, via: &Via, password_hash: Option<&str>, now: i64) -> Result<Changes, AppError> {
    match via {
        Via::Session(token_hash) => Ok(Changes {
            player: Some(PlayerWrite::CloseSession { token_hash: token_hash.clone() }),
            ..Changes::none(Effect::Player)
        }),
        Via::OwnToken if password_hash.is_none() => Err(AppError::Conflict(
            "this token is the only key of an account without a login: set a login and a password \
             (PUT /api/me/credentials) before logging out, or the account is lost"
                .into(),
        )),
        Via::OwnToken => Ok(Changes {
            player: Some(PlayerWrite::RevokeOwnToken { player }),
            audit: Some(crate::changes::AuditRecord {
                created_ms: now,
                kind: "own_token_revoked",
                data_json: json!({"player_id": player}).to_string(),
            }),
            ..Changes::none(Effect::Player)
        }),
    }
}

// ------------------------------------------------------------ recovery and closure

/// The recovery code's alphabet: 32 symbols, none mistaken for another
/// (no `0`, `1`, `I`, `O`), so each is 5 bits.
pub const RECOVERY_ALPHABET: &[u8; 32] = b"23456789ABCDEFGHJKLMNPQRSTUVWXYZ";
/// A recovery code's symbols: 16, 80 bits.
pub const RECOVERY_LEN: usize = 16;

/// A recovery code from 10 random bytes (80 bits): `XXXX-XXXX-XXXX-XXXX`.
pub fn recovery_code(random: [u8; 10]) -> String {
    let mut bits: u128 = 0;
    for b in random {
        bits = (bits << 8) | u128::from(b);
    }
    let mut out = String::with_capacity(RECOVERY_LEN + 3);
    for i in 0..RECOVERY_LEN {
        if i > 0 && i % 4 == 0 {
            out.push('-');
        }
        let shift = 5 * (RECOVERY_LEN - 1 - i);
        out.push(RECOVERY_ALPHABET[((bits >> shift) & 31) as usize] as char);
    }
    out
}

/// A recovery code as typed (any case, with or without dashes or spaces)
/// in the form that is hashed: its 16 symbols, upper case. `None`: not a
/// recovery code (it is then a wrong one, and said no more precisely).
pub fn parse_recovery_code(typed: &str) -> Option<String> {
    let code: String =
        typed.chars().filter(|c| !matches!(c, '-' | ' ' | '\u{a0}')).map(|c| c.to_ascii_uppercase()).collect();
    (code.len() == RECOVERY_LEN && code.bytes().all(|b| RECOVERY_ALPHABET.contains(&b))).then_some(code)
}

/// A new password set with the recovery code whose hash `verified` matched:
/// a new recovery hash, every token of the player ends (the code's holder
/// may not be the one who held the sessions), a new session opens.
#[allow(clippy::too_many_arguments)]
pub fn recover(
    player: PlayerId,
    verified: &str,
    password_hash: &str,
    recovery_hash: &str,
    session_token_hash: &str,
    expires_ms: i64,
    now: i64,
) -> Changes {
    Changes {
        player: Some(PlayerWrite::Recover {
            player,
            password_hash: password_hash.to_string(),
            recovery_hash: recovery_hash.to_string(),
            was_recovery: verified.to_string(),
            session_token_hash: session_token_hash.to_string(),
            created_ms: now,
            expires_ms,
        }),
        audit: Some(AuditRecord {
            created_ms: now,
            kind: "password_recovered",
            data_json: json!({"player_id": player, "other_sessions_ended": true, "own_token_revoked": true})
                .to_string(),
        }),
        ..Changes::none(Effect::Player)
    }
}

/// A new recovery code for a player whose password hash `password_was`
/// matched: the old code stops working.
pub fn renew_recovery(player: PlayerId, password_was: &str, recovery_hash: &str, now: i64) -> Changes {
    Changes {
        player: Some(PlayerWrite::SetRecovery {
            player,
            recovery_hash: recovery_hash.to_string(),
            password_was: password_was.to_string(),
        }),
        audit: Some(AuditRecord {
            created_ms: now,
            kind: "recovery_code_renewed",
            data_json: json!({"player_id": player}).to_string(),
        }),
        ..Changes::none(Effect::Player)
    }
}

/// Closing an account: refused (409 `self_excluded`, with `until_ms`)
/// during the player's self-exclusion, which closing the account and
/// opening another would otherwise undo in a minute (the second outside audit; loi
/// 2010-476, art. 26: the self-excluded are kept from play); refused (409
/// `ticket_in_play`) while
/// one of its tickets is not finished, so that no game is left without
/// anybody who can finish it or be paid its prize. The login, the password
/// and recovery hashes go, every token ends; the tickets, games and ledger
/// movements stay (docs/player-api.md "Closing an account"), and the
/// closure is in the audit log with the balance left.
pub fn close(
    player: PlayerId,
    password_was: Option<String>,
    current: Option<String>,
    limits: Option<LimitsRow>,
    in_play: i64,
    balance_cents: i64,
    now: i64,
) -> Result<Changes, AppError> {
    if current != password_was {
        return Err(AppError::Conflict("the account's password changed meanwhile: try again".into()));
    }
    if let Some(until) = limits.and_then(|l| l.excluded_at(now)) {
        return Err(AppError::ExcludedAccountClose(format!(
            "you excluded yourself from play until {}: the account cannot be closed before then",
            iso8601(until)
        ))
        .because("account_close", crate::params! { "until_ms": until }));
    }
    if in_play > 0 {
        return Err(AppError::TicketInPlay(format!(
            "{in_play} of your tickets {} not finished: finish {} before closing the account",
            if in_play == 1 { "is" } else { "are" },
            if in_play == 1 { "it" } else { "them" }
        )));
    }
    Ok(Changes {
        player: Some(PlayerWrite::Close { player, closed_ms: now, password_was }),
        audit: Some(AuditRecord {
            created_ms: now,
            kind: "account_closed",
            data_json: json!({"player_id": player, "balance_cents": balance_cents}).to_string(),
        }),
        answer: json!({"closed_ms": now, "balance_cents": balance_cents}).to_string(),
        ..Changes::none(Effect::Player)
    })
}
#[cfg(test)]
mod tests {
    use super::*;
    use crate::account::limits::DAY_MS;
    const NOW: i64 = 1_800_000_000_000;
    #[test]
    fn a_login_taken_or_a_password_changed_meanwhile_is_a_conflict() {
        let own = Via::OwnToken;
        let e = set_credentials(1, None, None, Some(2), "ana", "h", &own, NOW).unwrap_err();
        assert_eq!(e.code(), "conflict");
        let e = set_credentials(1, Some("h2".into()), Some("h1".into()), None, "ana", "h3", &own, NOW).unwrap_err();
        assert_eq!(e.code(), "conflict");
        let c = set_credentials(1, Some("h1".into()), Some("h1".into()), Some(1), "ana", "h3", &own, NOW).unwrap();
        assert!(matches!(c.player, Some(PlayerWrite::Credentials { ref was, .. }) if was.as_deref() == Some("h1")));
        assert!(open_session(1, Some("h1".into()), "h0", "t", NOW + 1, NOW).is_err());
        assert!(open_session(1, Some("h1".into()), "h1", "t", NOW + 1, NOW).is_ok());
    }

    #[test]
    fn a_password_change_ends_every_token_but_the_one_it_came_with() {
        let write = |via: &Via| {
            set_credentials(1, Some("h1".into()), Some("h1".into()), None, "ana", "h2", via, NOW).unwrap().player
        };
        match write(&Via::Session("s".into())) {
            Some(PlayerWrite::Credentials { keep_session, revoke_own_token, .. }) => {
                assert_eq!((keep_session.as_deref(), revoke_own_token), (Some("s"), true));
            }
            other => panic!("{other:?}"),
        }
        match write(&Via::OwnToken) {
            Some(PlayerWrite::Credentials { keep_session, revoke_own_token, .. }) => {
                assert_eq!((keep_session, revoke_own_token), (None, false));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_logout_ends_what_it_came_with_and_never_loses_an_account_without_a_login() {
        let c = logout(1, &Via::Session("s".into()), Some("h"), NOW).unwrap();
        assert_eq!(c.player, Some(PlayerWrite::CloseSession { token_hash: "s".into() }));
        let c = logout(1, &Via::OwnToken, Some("h"), NOW).unwrap();
        assert_eq!(c.player, Some(PlayerWrite::RevokeOwnToken { player: 1 }));
        assert_eq!(c.audit.unwrap().kind, "own_token_revoked");
        assert_eq!(logout(1, &Via::OwnToken, None, NOW).unwrap_err().code(), "conflict");
        assert!(!revoked_token_hash(1).bytes().all(|b| b.is_ascii_hexdigit()));
    }

    #[test]
    fn a_recovery_code_is_80_bits_in_four_groups_of_an_unambiguous_alphabet() {
        let code = recovery_code([0; 10]);
        assert_eq!(code, "2222-2222-2222-2222");
        assert_eq!(recovery_code([0xff; 10]), "ZZZZ-ZZZZ-ZZZZ-ZZZZ");
        // Every bit counts: one bit flipped anywhere changes the code.
        let mut seen = std::collections::HashSet::new();
        for byte in 0..10 {
            for bit in 0..8 {
                let mut r = [0u8; 10];
                r[byte] = 1 << bit;
                assert!(seen.insert(recovery_code(r)));
            }
        }
        assert!(!seen.contains(&code));
        let c = recovery_code(*b"as capone!");
        assert_eq!(parse_recovery_code(&c).unwrap(), c.replace('-', ""));
        assert_eq!(parse_recovery_code(&c.to_lowercase().replace('-', " ")), parse_recovery_code(&c));
        for bad in ["2222-2222-2222-222", "2222-2222-2222-22220", "O222-2222-2222-2222", "1222-2222-2222-2222", ""] {
            assert_eq!(parse_recovery_code(bad), None, "{bad}");
        }
    }

    #[test]
    fn closing_waits_for_the_tickets_in_play_and_a_password_changed_meanwhile() {
        let e = close(1, Some("h".into()), Some("h".into()), None, 1, 500, NOW).unwrap_err();
        assert_eq!((e.status(), e.code()), (409, "ticket_in_play"));
        let e = close(1, Some("h".into()), Some("h2".into()), None, 0, 500, NOW).unwrap_err();
        assert_eq!(e.code(), "conflict");
        let c = close(1, None, None, None, 0, 500, NOW).unwrap();
        assert_eq!(c.player, Some(PlayerWrite::Close { player: 1, closed_ms: NOW, password_was: None }));
        assert_eq!(c.audit.unwrap().kind, "account_closed");
    }

    /// Responsible play (docs/player-api.md "Closing an account"): a self-exclusion is not undone by closing the account (and
    /// opening another); once it ends, the account closes.
    #[test]
    fn closing_is_refused_until_the_self_exclusion_ends() {
        let until = NOW + DAY_MS;
        let excluded = LimitsRow { excluded_until_ms: Some(until), ..LimitsRow::default() };
        let e = close(1, None, None, Some(excluded), 0, 500, NOW).unwrap_err();
        assert_eq!((e.status(), e.code(), e.reason()), (409, "self_excluded", Some("account_close")));
        assert_eq!(e.body().params.unwrap()["until_ms"], until);
        // Refused before a ticket in play is even looked at: the exclusion is said first.
        assert_eq!(close(1, None, None, Some(excluded), 1, 500, NOW).unwrap_err().code(), "self_excluded");
        // The last millisecond still excludes; at its end the account closes.
        assert_eq!(close(1, None, None, Some(excluded), 0, 500, until - 1).unwrap_err().code(), "self_excluded");
        let c = close(1, None, None, Some(excluded), 0, 500, until).unwrap();
        assert_eq!(c.player, Some(PlayerWrite::Close { player: 1, closed_ms: until, password_was: None }));
        // Limits without an exclusion do not hold the closure.
        let limited = LimitsRow { tickets_per_day: Some(2), ..LimitsRow::default() };
        assert!(close(1, None, None, Some(limited), 0, 500, NOW).is_ok());
    }
}

//! The decisions of a player's own account (docs/player-api.md):
//! the limits they set on their play and their self-exclusion, checked in
//! the purchase's unit; their login and password; their sessions. Plain
//! code like [`crate::online`]: the time, the password hashes and the
//! session tokens come in as arguments.

use crate::changes::{AuditRecord, Changes, Effect, Movement, PlayerWrite, Reason};

use crate::api::{LimitsView, PendingView, PurchaseVerdict, UsageView};
use crate::error::AppError;
use crate::rows::{Account, AccountId, LimitsRow, PendingLimits, PlayerId, Usage};
use format::iso8601;
use serde_json::json;

/// A new player: the play money moves from the house to their account.
pub fn new_player(player: PlayerId, account: AccountId, start_balance: i64, now: i64) -> Changes {
    let empty = Account { player, id: account, balance_cents: 0 };
    let movement = Movement::new(Reason::StartBalance, None, &empty, start_balance, now);
    Changes {
        movement: Some(movement),
        audit: Some(AuditRecord {
            created_ms: now,
            kind: "player_created",
            data_json: json!({"player_id": player, "balance_cents": start_balance}).to_string(),
        }),
        ..Changes::none(Effect::PlayerCreated)
    }
}

pub const DAY_MS: i64 = 86_400_000;
pub const WEEK_MS: i64 = 7 * DAY_MS;
/// The largest limits a player may set.
pub const MAX_TICKETS_PER_DAY: i64 = 1_000;
pub const MAX_SPEND_PER_WEEK_CENTS: i64 = 10_000_000;
/// The longest self-exclusion, in days: twelve months (a self-exclusion
/// lasts from 24 hours to 12 months, as for France's online operators).
pub const MAX_EXCLUSION_DAYS: i64 = 365;

impl LimitsRow {
    /// The limits in force at `now`: a raise whose cooling-off is over applies.
    pub fn at(&self, now: i64) -> LimitsRow {
        match self.pending {
            Some(p) if p.from_ms <= now => LimitsRow {
                tickets_per_day: p.tickets_per_day,
                spend_per_week_cents: p.spend_per_week_cents,
                pending: None,
                excluded_until_ms: self.excluded_until_ms,
            },
            _ => *self,
        }
    }

    /// The self-exclusion's end, while it lasts.
    pub fn excluded_at(&self, now: i64) -> Option<i64> {
        self.excluded_until_ms.filter(|&until| until > now)
    }
}

/// The price of a ticket (art. 2, docs/rules.md), in cents, as the ledger counts them.
const REGULATION_PRICE_CENTS: i64 = math::REGULATION_PRICE_CENTS as i64;

/// The price a purchase counts against the limit on stakes: the ticket on
/// sale's, else the regulation's (art. 2; with nothing on sale the
/// purchase is then refused as sold out).
pub fn checked_price(on_sale: Option<i64>) -> i64 {
    on_sale.unwrap_or(REGULATION_PRICE_CENTS)
}

/// Where a purchase's usage windows begin: the last 24 hours, the last 7 days.
pub fn windows(now: i64) -> (i64, i64) {
    (now - DAY_MS, now - WEEK_MS)
}

/// A purchase of `price` cents by a player with these limits and this
/// usage: refused during a self-exclusion (403 `self_excluded`), before
/// the player chose a limit on stakes when one is `required` (403
/// `limit_required`), or beyond a limit (403 `limit_reached`). Each
/// refusal carries its parameters, for the page to word it (`params`).
pub fn check_purchase(limits: &LimitsRow, usage: &Usage, price: i64, required: bool, now: i64) -> Result<(), AppError> {
    let l = limits.at(now);
    if let Some(until) = l.excluded_at(now) {
        return Err(AppError::SelfExcluded(format!(
            "you excluded yourself from play until {}: no ticket can be bought before then",
            iso8601(until)
        ))
        .with(crate::params! { "until_ms": until }));
    }
    if required && l.spend_per_week_cents.is_none() {
        return Err(AppError::LimitRequired(
            "choose a limit on your stakes over seven days before your first purchase (PUT /api/me/limits)".into(),
        ));
    }
    if let Some(max) = l.tickets_per_day
        && usage.tickets_today >= max
    {
        return Err(AppError::LimitReached(format!(
            "your limit of {max} {} a day is reached: {} bought in the last 24 hours",
            if max == 1 { "ticket" } else { "tickets" },
            usage.tickets_today
        ))
        .because("tickets_per_day", crate::params! { "max": max, "used": usage.tickets_today }));
    }
    if let Some(max) = l.spend_per_week_cents
        && usage.spent_week_cents + price > max
    {
        return Err(AppError::LimitReached(format!(
            "your limit of {} a week would be passed: {} spent in the last 7 days, a ticket costs {}",
            format::euros(max),
            format::euros(usage.spent_week_cents),
            format::euros(price)
        ))
        .because(
            "spend_per_week",
            crate::params! { "max_cents": max, "used_cents": usage.spent_week_cents, "price_cents": price },
        ));
    }
    Ok(())
}

/// The limits a player asks for (`None`: no limit).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LimitsRequest {
    pub tickets_per_day: Option<i64>,
    pub spend_per_week_cents: Option<i64>,
}

impl LimitsRequest {
    pub fn check(&self) -> Result<(), AppError> {
        if let Some(n) = self.tickets_per_day
            && !(1..=MAX_TICKETS_PER_DAY).contains(&n)
        {
            return Err(AppError::BadRequest(format!(
                "tickets_per_day must be 1 to {MAX_TICKETS_PER_DAY}, or null for no limit"
            )));
        }
        if let Some(n) = self.spend_per_week_cents
            && !(1..=MAX_SPEND_PER_WEEK_CENTS).contains(&n)
        {
            return Err(AppError::BadRequest(format!(
                "spend_per_week_cents must be 1 to {MAX_SPEND_PER_WEEK_CENTS}, or null for no limit"
            )));
        }
        Ok(())
    }
}

/// `new` is at least as strict as `old` (a limit is stricter than none).
fn at_least_as_strict(new: Option<i64>, old: Option<i64>) -> bool {
    match (new, old) {
        (_, None) => true,
        (Some(n), Some(o)) => n <= o,
        (None, Some(_)) => false,
    }
}

/// The player's limits as the API shows them.
pub fn view(row: &LimitsRow, usage: &Usage, rules: LimitRules, now: i64) -> LimitsView {
    let cooling_off_ms = rules.cooling_off_ms;
    let l = row.at(now);
    LimitsView {
        tickets_per_day: l.tickets_per_day,
        spend_per_week_cents: l.spend_per_week_cents,
        pending: l.pending.map(|p| PendingView {
            tickets_per_day: p.tickets_per_day,
            spend_per_week_cents: p.spend_per_week_cents,
            from_ms: p.from_ms,
        }),
        excluded_until_ms: l.excluded_at(now),
        used: UsageView { tickets_today: usage.tickets_today, spent_week_cents: usage.spent_week_cents },
        cooling_off_hours: cooling_off_ms / 3_600_000,
        stake_limit_required: rules.stake_limit_required,
        exclusion_days: (1, MAX_EXCLUSION_DAYS),
        purchase: purchase_verdict(row, usage, rules, now),
    }
}

/// What a purchase would meet now from these limits and this usage: the
/// verdict of the purchase's own check ([`check_purchase`]), at the price
/// of `rules`.
pub fn purchase_verdict(row: &LimitsRow, usage: &Usage, rules: LimitRules, now: i64) -> PurchaseVerdict {
    let refusal = check_purchase(row, usage, rules.price_cents, rules.stake_limit_required, now).err();
    PurchaseVerdict {
        may_buy: refusal.is_none(),
        price_cents: rules.price_cents,
        refusal: refusal.as_ref().map(Into::into),
    }
}

/// The server's rules on limits (its configuration).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LimitRules {
    /// How long before a raised limit applies.
    pub cooling_off_ms: i64,
    /// A limit on stakes over seven days is chosen before the first
    /// purchase and kept (décret 2010-518, art. 16).
    pub stake_limit_required: bool,
    /// The price of a ticket, in cents, that the limits' verdict counts
    /// ([`purchase_verdict`]): the ticket on sale's, read by the server
    /// with each request on the limits ([`checked_price`]); the purchase
    /// itself counts the price of the ticket it sells.
    pub price_cents: i64,
}

fn limits_changes(
    player: PlayerId,
    row: LimitsRow,
    usage: &Usage,
    rules: LimitRules,
    now: i64,
    kind: &'static str,
) -> Changes {
    let answer = serde_json::to_string(&view(&row, usage, rules, now)).expect("limits serialize");
    Changes {
        player: Some(PlayerWrite::Limits { player, row, updated_ms: now }),
        audit: Some(crate::changes::AuditRecord {
            created_ms: now,
            kind,
            data_json: json!({
                "player_id": player,
                "tickets_per_day": row.tickets_per_day,
                "spend_per_week_cents": row.spend_per_week_cents,
                "pending": row.pending.map(|p| json!({"tickets_per_day": p.tickets_per_day,
                    "spend_per_week_cents": p.spend_per_week_cents, "from_ms": p.from_ms})),
                "excluded_until_ms": row.excluded_until_ms,
            })
            .to_string(),
        }),
        answer,
        ..Changes::none(Effect::Player)
    }
}

/// New limits: a stricter limit (or a first one) applies at once; a
/// looser one (higher, or none) only after the cooling-off, the current
/// one holding until then. Asking again for the same raise keeps its date.
pub fn set_limits(
    player: PlayerId,
    current: Option<LimitsRow>,
    request: LimitsRequest,
    usage: &Usage,
    rules: LimitRules,
    now: i64,
) -> Result<Changes, AppError> {
    request.check()?;
    if rules.stake_limit_required && request.spend_per_week_cents.is_none() {
        return Err(AppError::BadRequest(
            "a limit on stakes over seven days is required: it can be raised, not removed".into(),
        )
        .because("stake_limit_required", crate::params! {}));
    }
    let cooling_off_ms = rules.cooling_off_ms;
    let cur = current.unwrap_or_default().at(now);
    let tickets_now = at_least_as_strict(request.tickets_per_day, cur.tickets_per_day);
    let spend_now = at_least_as_strict(request.spend_per_week_cents, cur.spend_per_week_cents);
    let mut row = LimitsRow {
        tickets_per_day: if tickets_now { request.tickets_per_day } else { cur.tickets_per_day },
        spend_per_week_cents: if spend_now { request.spend_per_week_cents } else { cur.spend_per_week_cents },
        pending: None,
        excluded_until_ms: cur.excluded_until_ms,
    };
    if !(tickets_now && spend_now) {
        let from_ms = match cur.pending {
            Some(p)
                if p.tickets_per_day == request.tickets_per_day
                    && p.spend_per_week_cents == request.spend_per_week_cents =>
            {
                p.from_ms
            }
            _ => now + cooling_off_ms,
        };
        row.pending = Some(PendingLimits {
            tickets_per_day: request.tickets_per_day,
            spend_per_week_cents: request.spend_per_week_cents,
            from_ms,
        });
    }
    Ok(limits_changes(player, row, usage, rules, now, "limits_set"))
}

/// A self-exclusion of `days` from now: it can be made longer, never shorter.
pub fn self_exclude(
    player: PlayerId,
    current: Option<LimitsRow>,
    days: i64,
    usage: &Usage,
    rules: LimitRules,
    now: i64,
) -> Result<Changes, AppError> {
    if !(1..=MAX_EXCLUSION_DAYS).contains(&days) {
        return Err(AppError::BadRequest(format!(
            "days must be 1 to {MAX_EXCLUSION_DAYS} (a self-exclusion lasts from 24 hours to 12 months)"
        )));
    }
    let cur = current.unwrap_or_default().at(now);
    let until = (now + days * DAY_MS).max(cur.excluded_at(now).unwrap_or(0));
    let row = LimitsRow { excluded_until_ms: Some(until), ..cur };
    Ok(limits_changes(player, row, usage, rules, now, "self_excluded"))
}

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

    const NOW: i64 = 1_800_000_000_000;
    const COOL_MS: i64 = 72 * 3_600_000;
    const COOL: LimitRules = LimitRules { cooling_off_ms: COOL_MS, stake_limit_required: false, price_cents: 300 };
    const REQUIRED: LimitRules = LimitRules { cooling_off_ms: COOL_MS, stake_limit_required: true, price_cents: 300 };

    #[test]
    fn guarantee_3_a_new_player_gets_the_play_money_in_one_balanced_movement() {
        let c = new_player(5, 50, 10_000, NOW);
        let m = c.movement.unwrap();
        assert_eq!(m.entries(), [(crate::rows::HOUSE_PLAY_MONEY, -10_000), (50, 10_000)]);
        assert_eq!(m.id, "start:5");
        assert_eq!((m.player_balance.unwrap().before, m.player_balance.unwrap().after), (0, 10_000));
        assert_eq!(c.audit.unwrap().kind, "player_created");
    }

    fn row_of(c: &Changes) -> LimitsRow {
        match &c.player {
            Some(PlayerWrite::Limits { row, .. }) => *row,
            other => panic!("not a limits write: {other:?}"),
        }
    }

    fn req(t: Option<i64>, s: Option<i64>) -> LimitsRequest {
        LimitsRequest { tickets_per_day: t, spend_per_week_cents: s }
    }

    #[test]
    fn a_first_limit_and_a_lower_one_apply_at_once() {
        let c = set_limits(1, None, req(Some(5), Some(3000)), &Usage::default(), COOL, NOW).unwrap();
        let row = row_of(&c);
        assert_eq!((row.tickets_per_day, row.spend_per_week_cents, row.pending), (Some(5), Some(3000), None));
        let c = set_limits(1, Some(row), req(Some(2), Some(3000)), &Usage::default(), COOL, NOW + 1).unwrap();
        assert_eq!(row_of(&c).tickets_per_day, Some(2));
        assert_eq!(row_of(&c).pending, None);
        assert_eq!(c.audit.as_ref().unwrap().kind, "limits_set");
    }

    #[test]
    fn a_raise_or_a_removal_waits_for_the_cooling_off_and_the_old_limit_holds() {
        let start = LimitsRow { tickets_per_day: Some(2), spend_per_week_cents: Some(3000), ..LimitsRow::default() };
        let c = set_limits(1, Some(start), req(Some(10), None), &Usage::default(), COOL, NOW).unwrap();
        let row = row_of(&c);
        assert_eq!((row.tickets_per_day, row.spend_per_week_cents), (Some(2), Some(3000)));
        let p = row.pending.unwrap();
        assert_eq!((p.tickets_per_day, p.spend_per_week_cents, p.from_ms), (Some(10), None, NOW + COOL_MS));
        // Until then, the old limit refuses the third ticket of the day.
        let used = Usage { tickets_today: 2, spent_week_cents: 600 };
        let e = check_purchase(&row, &used, 300, false, NOW + COOL_MS - 1).unwrap_err();
        assert_eq!(e.code(), "limit_reached");
        // Asking again keeps the date; after it, the raise applies.
        let again = row_of(&set_limits(1, Some(row), req(Some(10), None), &used, COOL, NOW + 1000).unwrap());
        assert_eq!(again.pending.unwrap().from_ms, NOW + COOL_MS);
        assert!(check_purchase(&row, &used, 300, false, NOW + COOL_MS).is_ok());
        assert_eq!(row.at(NOW + COOL_MS).tickets_per_day, Some(10));
        assert_eq!(row.at(NOW + COOL_MS).spend_per_week_cents, None);
    }

    #[test]
    fn lowering_one_limit_and_raising_the_other_splits_them() {
        let start = LimitsRow { tickets_per_day: Some(5), spend_per_week_cents: Some(3000), ..LimitsRow::default() };
        let row = row_of(&set_limits(1, Some(start), req(Some(3), Some(6000)), &Usage::default(), COOL, NOW).unwrap());
        assert_eq!((row.tickets_per_day, row.spend_per_week_cents), (Some(3), Some(3000)));
        assert_eq!(row.pending.unwrap().spend_per_week_cents, Some(6000));
        assert_eq!(row.pending.unwrap().tickets_per_day, Some(3));
    }

    #[test]
    fn the_spend_limit_counts_the_price_of_the_ticket_being_bought() {
        let row = LimitsRow { spend_per_week_cents: Some(900), ..LimitsRow::default() };
        assert!(check_purchase(&row, &Usage { tickets_today: 0, spent_week_cents: 600 }, 300, false, NOW).is_ok());
        let e = check_purchase(&row, &Usage { tickets_today: 0, spent_week_cents: 700 }, 300, false, NOW).unwrap_err();
        assert_eq!(e.code(), "limit_reached");
        assert!(e.to_string().contains("9,00"), "{e}");
    }

    #[test]
    fn a_self_exclusion_refuses_purchases_until_it_ends_and_is_never_shortened() {
        let row = row_of(&self_exclude(1, None, 30, &Usage::default(), COOL, NOW).unwrap());
        assert_eq!(row.excluded_until_ms, Some(NOW + 30 * DAY_MS));
        let e = check_purchase(&row, &Usage::default(), 300, false, NOW + DAY_MS).unwrap_err();
        assert_eq!(e.code(), "self_excluded");
        let shorter = row_of(&self_exclude(1, Some(row), 7, &Usage::default(), COOL, NOW + 1).unwrap());
        assert_eq!(shorter.excluded_until_ms, Some(NOW + 30 * DAY_MS));
        assert!(check_purchase(&row, &Usage::default(), 300, false, NOW + 30 * DAY_MS).is_ok());
        assert!(self_exclude(1, None, 0, &Usage::default(), COOL, NOW).is_err());
        assert!(self_exclude(1, None, MAX_EXCLUSION_DAYS + 1, &Usage::default(), COOL, NOW).is_err());
    }

    /// Décret 2010-518, art. 16: a new account chooses its limit on stakes
    /// before its first purchase, and keeps one (raised, never removed).
    #[test]
    fn decret_2010_518_art_16_a_stake_limit_is_chosen_before_the_first_purchase_and_kept() {
        let none = LimitsRow::default();
        let e = check_purchase(&none, &Usage::default(), 300, true, NOW).unwrap_err();
        assert_eq!((e.status(), e.code()), (403, "limit_required"));
        // Only tickets per day: still no stake limit.
        let day_only = LimitsRow { tickets_per_day: Some(5), ..LimitsRow::default() };
        assert_eq!(check_purchase(&day_only, &Usage::default(), 300, true, NOW).unwrap_err().code(), "limit_required");
        // Not required (tests, load tools): no refusal.
        assert!(check_purchase(&none, &Usage::default(), 300, false, NOW).is_ok());
        // Chosen: the purchase passes; removing it is refused, raising it waits.
        let row = row_of(&set_limits(1, None, req(None, Some(3000)), &Usage::default(), REQUIRED, NOW).unwrap());
        assert!(check_purchase(&row, &Usage::default(), 300, true, NOW).is_ok());
        let e = set_limits(1, Some(row), req(None, None), &Usage::default(), REQUIRED, NOW).unwrap_err();
        assert_eq!((e.code(), e.reason()), ("bad_request", Some("stake_limit_required")));
        let raised =
            row_of(&set_limits(1, Some(row), req(None, Some(9000)), &Usage::default(), REQUIRED, NOW).unwrap());
        assert_eq!((raised.spend_per_week_cents, raised.pending.unwrap().from_ms), (Some(3000), NOW + COOL_MS));
        // A self-exclusion is said before the missing limit.
        let excluded = LimitsRow { excluded_until_ms: Some(NOW + DAY_MS), ..LimitsRow::default() };
        assert_eq!(check_purchase(&excluded, &Usage::default(), 300, true, NOW).unwrap_err().code(), "self_excluded");
    }

    #[test]
    fn every_refusal_of_a_purchase_carries_what_the_page_needs_to_word_it() {
        let row = LimitsRow { tickets_per_day: Some(2), spend_per_week_cents: Some(900), ..LimitsRow::default() };
        let e = check_purchase(&row, &Usage { tickets_today: 12, spent_week_cents: 0 }, 300, true, NOW).unwrap_err();
        let body = serde_json::to_value(e.body()).unwrap();
        assert_eq!(body["params"], serde_json::json!({"reason": "tickets_per_day", "max": 2, "used": 12}));
        let e = check_purchase(&row, &Usage { tickets_today: 0, spent_week_cents: 700 }, 300, true, NOW).unwrap_err();
        let body = serde_json::to_value(e.body()).unwrap();
        assert_eq!(
            body["params"],
            serde_json::json!({"reason": "spend_per_week", "max_cents": 900, "used_cents": 700, "price_cents": 300})
        );
        let excluded = LimitsRow { excluded_until_ms: Some(NOW + DAY_MS), ..row };
        let e = check_purchase(&excluded, &Usage::default(), 300, true, NOW).unwrap_err();
        assert_eq!(serde_json::to_value(e.body()).unwrap()["params"], serde_json::json!({"until_ms": NOW + DAY_MS}));
    }

    #[test]
    fn decret_2010_518_art_16_the_limits_say_what_a_purchase_would_meet_in_the_purchase_s_own_words() {
        let usage = |tickets_today, spent_week_cents| Usage { tickets_today, spent_week_cents };
        let verdict = |row: &LimitsRow, used: Usage, rules: LimitRules, now: i64| {
            let verdict = purchase_verdict(row, &used, rules, now);
            // The verdict is the purchase's own check, refusal for refusal.
            let check = check_purchase(row, &used, rules.price_cents, rules.stake_limit_required, now);
            assert_eq!(verdict.refusal, check.as_ref().err().map(Into::into));
            assert_eq!(verdict.may_buy, check.is_ok());
            verdict
        };
        // No limit, none required: may buy.
        let free = verdict(&LimitsRow::default(), usage(50, 50_000), COOL, NOW);
        assert_eq!((free.may_buy, free.price_cents, free.refusal), (true, 300, None));
        // A new player who must choose a limit on stakes first (art. 16).
        let required = verdict(&LimitsRow::default(), usage(0, 0), REQUIRED, NOW).refusal.unwrap();
        assert_eq!((required.error.as_str(), required.params), ("limit_required", None));
        // The week's stakes count the price of the ticket on sale: 700 + 300 > 900, 600 + 300 is not.
        let row = LimitsRow { tickets_per_day: Some(2), spend_per_week_cents: Some(900), ..LimitsRow::default() };
        let week = verdict(&row, usage(0, 700), REQUIRED, NOW).refusal.unwrap();
        assert_eq!(week.error, "limit_reached");
        assert_eq!(
            serde_json::Value::Object(week.params.unwrap()),
            serde_json::json!({"reason": "spend_per_week", "max_cents": 900, "used_cents": 700, "price_cents": 300})
        );
        assert!(verdict(&row, usage(0, 600), REQUIRED, NOW).may_buy);
        let dearer = LimitRules { price_cents: 500, ..REQUIRED };
        assert_eq!(verdict(&row, usage(0, 600), dearer, NOW).refusal.unwrap().error, "limit_reached");
        // The day's tickets.
        let day = verdict(&row, usage(2, 0), REQUIRED, NOW).refusal.unwrap();
        assert_eq!(day.params.unwrap()["reason"], "tickets_per_day");
        // A self-exclusion is said first, until it ends.
        let excluded = LimitsRow { excluded_until_ms: Some(NOW + DAY_MS), ..row };
        let refusal = verdict(&excluded, usage(2, 700), REQUIRED, NOW).refusal.unwrap();
        assert_eq!(
            (refusal.error.as_str(), refusal.params.unwrap()["until_ms"].as_i64()),
            ("self_excluded", Some(NOW + DAY_MS))
        );
        assert!(verdict(&excluded, usage(0, 0), REQUIRED, NOW + DAY_MS).may_buy);
        // In the limits' answer, as the page reads it.
        let view = serde_json::to_value(view(&row, &usage(2, 0), REQUIRED, NOW)).unwrap();
        assert_eq!(view["purchase"]["may_buy"], false);
        assert_eq!(view["purchase"]["refusal"]["params"]["max"], 2);
        // Nothing on sale: the regulation's price (art. 2), as the purchase counts it.
        assert_eq!((checked_price(None), checked_price(Some(250))), (300, 250));
    }

    /// A self-exclusion lasts from 24 hours to 12 months.
    #[test]
    fn a_self_exclusion_lasts_from_24_hours_to_12_months() {
        let day = row_of(&self_exclude(1, None, 1, &Usage::default(), COOL, NOW).unwrap());
        assert_eq!(day.excluded_until_ms, Some(NOW + DAY_MS));
        let year = row_of(&self_exclude(1, None, 365, &Usage::default(), COOL, NOW).unwrap());
        assert_eq!(year.excluded_until_ms, Some(NOW + 365 * DAY_MS));
        assert_eq!(self_exclude(1, None, 366, &Usage::default(), COOL, NOW).unwrap_err().code(), "bad_request");
    }

    #[test]
    fn the_statement_sums_stakes_and_winnings_per_paris_day_week_and_month() {
        use format::calendar::paris_day_bounds;
        // Saturday 5 December 2026, 21:00 in Paris (20:00 UTC).
        let (today, _) = paris_day_bounds((2026, 12, 5));
        let now = today + 21 * 3_600_000;
        let stake = |ms| PlayMovement { stake: true, amount_cents: -300, ms };
        let win = |ms, c| PlayMovement { stake: false, amount_cents: c, ms };
        let (nov30, _) = paris_day_bounds((2026, 11, 30));
        let (oct31, _) = paris_day_bounds((2026, 10, 31));
        let moves = [
            stake(today + 1),           // today, 00:00:00.001 Paris
            win(today + 60_000, 1_000), // today
            stake(today - 1),           // yesterday, 23:59:59.999 Paris
            stake(nov30 + 3_600_000),   // Monday of this week, in November
            stake(oct31 + 3_600_000),   // October: in no day nor week shown, in the third month
        ];
        let v = statement(&moves, Some(today), now);
        assert_eq!((v.days.len(), v.weeks.len(), v.months.len()), (7, 4, 3));
        assert_eq!(v.days[0].label, "2026-12-05");
        assert_eq!((v.days[0].stakes_cents, v.days[0].winnings_cents, v.days[0].net_cents), (300, 1_000, 700));
        assert_eq!((v.days[1].label.as_str(), v.days[1].stakes_cents), ("2026-12-04", 300));
        assert_eq!(v.weeks[0].label, "2026-11-30");
        assert_eq!((v.weeks[0].stakes_cents, v.weeks[0].winnings_cents), (900, 1_000));
        assert_eq!((v.months[0].label.as_str(), v.months[0].stakes_cents), ("2026-12", 600));
        assert_eq!((v.months[1].label.as_str(), v.months[1].stakes_cents), ("2026-11", 300));
        assert_eq!((v.months[2].label.as_str(), v.months[2].stakes_cents), ("2026-10", 300));
        let since = v.since.unwrap();
        assert_eq!((since.stakes_cents, since.winnings_cents, since.net_cents), (300, 1_000, 700));
        // The oldest period read is October's first day.
        assert_eq!(statement_from(now), paris_day_bounds((2026, 10, 1)).0);
    }

    #[test]
    fn limits_out_of_range_are_refused() {
        for r in [req(Some(0), None), req(None, Some(0)), req(Some(MAX_TICKETS_PER_DAY + 1), None)] {
            assert_eq!(set_limits(1, None, r, &Usage::default(), COOL, NOW).unwrap_err().code(), "bad_request");
        }
    }

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

    /// Issue 48: a self-exclusion is not undone by closing the account (and
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

/// One of the player's money movements for their statement: `ticket_sale`
/// (a stake, negative) or `prize` (a win, positive), in cents, at `ms`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlayMovement {
    pub stake: bool,
    pub amount_cents: i64,
    pub ms: i64,
}

/// How many days, weeks and months a statement shows.
pub const STATEMENT_DAYS: usize = 7;
pub const STATEMENT_WEEKS: usize = 4;
pub const STATEMENT_MONTHS: usize = 3;

/// The start of the oldest period a statement shows at `now`: the first
/// day of the month [`STATEMENT_MONTHS`] − 1 months back, or the Monday
/// [`STATEMENT_WEEKS`] − 1 weeks back, whichever is earlier (Paris time).
pub fn statement_from(now: i64) -> i64 {
    let periods = statement_periods(now);
    periods.iter().map(|p| p.0).min().unwrap_or(now)
}

/// `(from, to, kind, label)` of every period of a statement at `now`, newest
/// first in each kind: Paris calendar days, ISO weeks (Monday to Sunday)
/// and calendar months; `label` is the day (`2026-12-05`), the week's
/// Monday, or the month (`2026-12`).
fn statement_periods(now: i64) -> Vec<(i64, i64, &'static str, String)> {
    use format::calendar::{civil_from_days, day_text, days_from_civil, monday_of, paris_day, paris_day_bounds};
    let today = days_from_civil(paris_day(now));
    let bounds = |from_days: i64, to_days: i64| {
        (paris_day_bounds(civil_from_days(from_days)).0, paris_day_bounds(civil_from_days(to_days)).0)
    };
    let label = |days: i64| day_text(civil_from_days(days));
    let mut out = Vec::new();
    for k in 0..STATEMENT_DAYS as i64 {
        let (from, to) = bounds(today - k, today - k + 1);
        out.push((from, to, "day", label(today - k)));
    }
    let monday = monday_of(today);
    for k in 0..STATEMENT_WEEKS as i64 {
        let start = monday - 7 * k;
        let (from, to) = bounds(start, start + 7);
        out.push((from, to, "week", label(start)));
    }
    let (mut y, mut m, _) = civil_from_days(today);
    for _ in 0..STATEMENT_MONTHS {
        let start = days_from_civil((y, m, 1));
        let (ny, nm) = if m == 12 { (y + 1, 1) } else { (y, m + 1) };
        let (from, to) = bounds(start, days_from_civil((ny, nm, 1)));
        out.push((from, to, "month", format!("{y:04}-{m:02}")));
        (y, m) = if m == 1 { (y - 1, 12) } else { (y, m - 1) };
    }
    out
}

/// The player's statement ("bilan de jeu"): stakes, winnings and net
/// result per day, week and month (Paris time), and since `since` when
/// given (the reminder of time played), from their money movements.
pub fn statement(movements: &[PlayMovement], since: Option<i64>, now: i64) -> crate::api::StatementView {
    use crate::api::{StatementPeriod, StatementView};
    let sum = |from: i64, to: i64| {
        let (mut stakes, mut winnings) = (0, 0);
        for m in movements.iter().filter(|m| m.ms >= from && m.ms < to) {
            if m.stake {
                stakes += -m.amount_cents;
            } else {
                winnings += m.amount_cents;
            }
        }
        (stakes, winnings)
    };
    let period = |from: i64, to: i64, label: String| {
        let (stakes_cents, winnings_cents) = sum(from, to);
        StatementPeriod {
            label,
            from_ms: from,
            to_ms: to,
            stakes_cents,
            winnings_cents,
            net_cents: winnings_cents - stakes_cents,
        }
    };
    let mut view = StatementView { days: vec![], weeks: vec![], months: vec![], since: None };
    for (from, to, kind, label) in statement_periods(now) {
        let p = period(from, to, label);
        match kind {
            "day" => view.days.push(p),
            "week" => view.weeks.push(p),
            _ => view.months.push(p),
        }
    }
    view.since = since.map(|s| period(s, now + 1, String::new()));
    view
}

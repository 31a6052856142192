//! A new player's account, the limits a player sets on their play and
//! their self-exclusion, checked in the purchase's unit.

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
    fn limits_out_of_range_are_refused() {
        for r in [req(Some(0), None), req(None, Some(0)), req(Some(MAX_TICKETS_PER_DAY + 1), None)] {
            assert_eq!(set_limits(1, None, r, &Usage::default(), COOL, NOW).unwrap_err().code(), "bad_request");
        }
    }
}

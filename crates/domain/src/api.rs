//! The JSON shapes of the HTTP API (docs/contract.md), and the request newtypes
//! that parse rather than validate: [`ClientSeed`], [`ActionRequest`],
//! [`IdempotencyKey`].

use crate::error::AppError;
use engine::{Action, Event, Game, GameResult, Hand, PrizeSchedule};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

mod schemas;

/// `POST /api/players` body. Its OpenAPI schema is two exact shapes
/// (`api/schemas.rs`).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewPlayerBody {
    /// A display name, at most 64 characters, no control character.
    pub name: Option<String>,
    /// A login to keep the account (with `password`), as the OpenAPI document
    /// describes it: left out, or a text (never `null`, which the document
    /// does not allow either).
    #[serde(default, deserialize_with = "present_not_null")]
    pub login: Option<String>,
    #[serde(default, deserialize_with = "present_not_null")]
    pub password: Option<String>,
}

/// `POST /api/players` answer (201).
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct PlayerCreated {
    pub player_id: i64,
    pub token: String,
    pub balance_cents: i64,
    /// With a login: the account's recovery code (`XXXX-XXXX-XXXX-XXXX`),
    /// shown this once; with the login it sets a new password (`POST /api/recovery`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovery_code: Option<String>,
    /// With a login: this device's token, sent with its next logins
    /// (`POST /api/sessions`, docs/limits.md "Logins").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_token: Option<String>,
}

/// `GET /api/me` answer.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct Me {
    pub player_id: i64,
    pub balance_cents: i64,
    /// The display name, if one was given.
    pub name: Option<String>,
    /// The login, once the player chose one (docs/player-api.md).
    pub login: Option<String>,
    /// `internal` (this server's play money) or `operator` (the balance is
    /// the operator's wallet's; docs/operator-integration.md).
    pub mode: String,
}

/// `POST /api/tickets` body: nothing is needed. A `client_seed` here is
/// refused: it comes with the ticket's first action, after the ticket (and
/// its committed server seed) is assigned (docs/contract.md Fairness, 2).
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BuyBody {
    /// Not documented: always refused, with a message saying where the seed goes.
    #[schema(ignore)]
    pub client_seed: Option<serde_json::Value>,
}

impl BuyBody {
    pub fn check(&self) -> Result<(), AppError> {
        match self.client_seed {
            None => Ok(()),
            Some(_) => Err(AppError::BadRequest(
                "a purchase takes no client_seed: send it with the ticket's first action (seq 0), once the \
                 ticket and the commitment to its server seed are yours"
                    .into(),
            )),
        }
    }
}

/// The result of a finished ticket.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ResultView {
    pub tricks: u8,
    pub prize_cents: u64,
}

impl From<GameResult> for ResultView {
    fn from(r: GameResult) -> ResultView {
        ResultView { tricks: r.tricks, prize_cents: r.prize_cents }
    }
}

/// A ticket as the player sees it (docs/contract.md "Ticket").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct TicketView {
    pub id: String,
    pub serial: String,
    pub price_cents: i64,
    /// `{"5": cents, "6": cents, "7": cents, "8": cents}`
    #[schema(value_type = Object)]
    pub prizes_cents: PrizeSchedule,
    /// Actions applied so far: the `seq` of the next action.
    pub seq: u64,
    /// `play`, `tie_break`, `extra_draw` or `finished`.
    pub phase: String,
    /// 1 for the first game, 2 for the first Extra game, ...
    pub game: u32,
    #[schema(value_type = Vec<String>)]
    pub hand: Hand,
    pub capone_cards_left: u32,
    pub tricks_won: u8,
    pub tricks_lost: u8,
    pub result: Option<ResultView>,
    /// `hex(SHA-256(server_seed))`, committed in the block's published
    /// Merkle root before the sale, shown at purchase (guarantee 6).
    pub commitment: String,
    /// The player's seed, given with the first action; `null` before.
    pub client_seed: Option<String>,
    /// Revealed when the ticket is finished.
    pub server_seed: Option<String>,
    /// `online`, `paper`, or `demo` for a free demo game (`POST /api/demo`).
    pub channel: String,
    /// `in_play` (a paper ticket: from its redemption), `won`, `lost` or `paid` (docs/contract.md life cycle).
    pub status: String,
    /// A paper ticket's shop side; `null` online.
    pub retail: Option<RetailView>,
    /// When it was bought online or sold by a shop (unix ms).
    pub sold_ms: Option<i64>,
    /// The ticket's games so far; the last one decides (art. 3.2.5.5).
    pub games: Vec<GameSummary>,
}

/// One game of a ticket (docs/player-api.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct GameSummary {
    /// 1 for the first game, 2 for the first Extra game, ...
    pub game: u32,
    /// Tricks won so far in this game (its result once it is over).
    pub tricks: u8,
    /// `won`: four tricks and the Extra duel won, the next game followed;
    /// `lost`: four tricks and the Extra duel lost; `null`: no Extra duel.
    pub extra: Option<ExtraDuel>,
}

/// How an Extra duel ended (art. 3.2.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ExtraDuel {
    Won,
    Lost,
}

/// The games of a ticket, from its state: every game before the current
/// one ended with exactly four tricks and a won Extra duel (art. 3.2.3.4,
/// 3.2.5.4); the current one has its tricks so far, and a lost Extra duel
/// when the ticket finished on four tricks.
pub fn games_of(g: &Game) -> Vec<GameSummary> {
    let n = g.game_number();
    let mut games: Vec<GameSummary> =
        (1..n).map(|game| GameSummary { game, tricks: 4, extra: Some(ExtraDuel::Won) }).collect();
    let tricks = g.result().map_or(g.tricks_won(), |r| r.tricks);
    let extra = (g.is_finished() && tricks == 4).then_some(ExtraDuel::Lost);
    games.push(GameSummary { game: n, tricks, extra });
    games
}

/// A paper ticket's shop side: who sold it, who paid it, until when its
/// prize can be claimed.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, ToSchema)]
pub struct RetailView {
    pub sold_by: Option<String>,
    pub paid_ms: Option<i64>,
    pub paid_by: Option<String>,
    /// The claim deadline (unix ms), once the emission's sale has ended.
    pub claim_until_ms: Option<i64>,
}

/// What the storage knows of a sold ticket, enough to show and play it.
#[derive(Debug, Clone)]
pub struct SoldTicket {
    pub serial: String,
    pub price_cents: i64,
    pub client_seed: Option<String>,
    /// Derived from the server key (the server's key ring); never stored.
    pub server_seed: [u8; 32],
    /// As stored with the ticket when its block was emitted.
    pub commitment: String,
    pub channel: Channel,
    /// Paper tickets only.
    pub retail: Option<RetailView>,
    /// When it was bought online or sold by a shop.
    pub sold_ms: Option<i64>,
    pub game: Game,
}

/// Where a ticket is sold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Channel {
    Online,
    Paper,
}

impl Channel {
    pub fn as_str(self) -> &'static str {
        match self {
            Channel::Online => "online",
            Channel::Paper => "paper",
        }
    }
    pub fn parse(s: &str) -> Option<Channel> {
        match s {
            "online" => Some(Channel::Online),
            "paper" => Some(Channel::Paper),
            _ => None,
        }
    }
}

impl SoldTicket {
    pub fn view(&self) -> TicketView {
        let g = &self.game;
        TicketView {
            id: self.serial.clone(),
            serial: self.serial.clone(),
            price_cents: self.price_cents,
            prizes_cents: g.prizes(),
            seq: g.seq(),
            phase: g.phase().name().to_string(),
            game: g.game_number(),
            hand: g.hand(),
            capone_cards_left: g.capone_cards_left(),
            tricks_won: g.tricks_won(),
            tricks_lost: g.tricks_lost(),
            result: g.result().map(ResultView::from),
            commitment: self.commitment.clone(),
            client_seed: self.client_seed.clone(),
            // Guarantee 6: the seed stays secret until the ticket is decided.
            server_seed: g.is_finished().then(|| hex::encode(self.server_seed)),
            channel: self.channel.as_str().to_string(),
            status: self.status().to_string(),
            retail: self.retail.clone(),
            sold_ms: self.sold_ms,
            games: games_of(g),
        }
    }

    /// The life-cycle status of a ticket with a game: an online ticket is
    /// in play from its purchase, a paper one from its redemption (its play
    /// code opened it and created its game).
    pub fn status(&self) -> &'static str {
        if self.retail.as_ref().is_some_and(|r| r.paid_ms.is_some()) {
            return "paid";
        }
        match self.game.result() {
            Some(r) if r.prize_cents > 0 => "won",
            Some(_) => "lost",
            None => "in_play",
        }
    }
}

/// `{"ticket": Ticket}`
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct TicketEnvelope {
    pub ticket: TicketView,
}

/// `POST /api/tickets` answer (201).
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct Purchased {
    pub ticket: TicketView,
    pub balance_cents: i64,
}

/// `GET /api/tickets` answer.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct TicketList {
    pub tickets: Vec<TicketView>,
    /// With `limit`: the `before` of the next page, `null` on the last one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next: Option<String>,
}

/// `POST /api/tickets/{id}/actions` answer. It is stored as written and a
/// retry gets the same bytes (guarantee 4).
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ActionAnswer {
    pub ticket: TicketView,
    /// In the order they happened: `trick`, `deck`, `game_over`,
    /// `extra_game`, `finished` (docs/contract.md "Event").
    #[schema(value_type = Vec<Object>)]
    pub events: Vec<Event>,
    /// The player's balance; `null` for a paper ticket played with its own
    /// token (its prize is paid by a shop, never to a wallet).
    pub balance_cents: Option<i64>,
}

/// `POST /api/tickets/{id}/actions` body: `{"seq": n, "action": "play",
/// "card": "Q"}` or `{"seq": n, "action": "draw"}`; with the first action
/// (`seq` 0) an optional `"client_seed"`. Read through `ActionBody`, so
/// that an unknown field is refused (400) like in every other body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "ActionBody")]
pub struct ActionRequest {
    /// The number of actions already applied to the ticket.
    pub seq: u64,
    #[serde(flatten)]
    pub action: Action,
    /// The player's seed (printable ASCII, 1 to 64 characters), at `seq` 0
    /// only; absent there, the server picks a random one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_seed: Option<String>,
}

/// The wire form of an action's body: every field named, unknown ones
/// refused. Its OpenAPI schema is four exact shapes (`api/schemas.rs`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ActionBody {
    #[serde(deserialize_with = "json_integer")]
    pub seq: u64,
    pub action: ActionKind,
    #[serde(default)]
    pub card: Option<engine::Rank>,
    #[serde(default)]
    pub client_seed: Option<String>,
}

/// The two actions of the game.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ActionKind {
    Play,
    Draw,
}

/// A JSON integer, as JSON Schema counts them: `1` or `1.0` (a number with
/// no fractional part), within `u64`.
/// A JSON integer in i64's range, also written as a whole float (`30.0`).
pub fn json_i64<'de, D: serde::Deserializer<'de>>(d: D) -> Result<i64, D::Error> {
    match serde_json::Number::deserialize(d)? {
        n if n.is_i64() => Ok(n.as_i64().expect("checked")),
        n => match n.as_f64() {
            Some(f) if f.fract() == 0.0 && (-9.2e18..9.2e18).contains(&f) => Ok(f as i64),
            _ => Err(serde::de::Error::custom(format!("expected a whole number, found {n}"))),
        },
    }
}

/// [`json_i64`], or `null`.
pub fn json_opt_i64<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
    #[derive(Deserialize)]
    struct Wrap(#[serde(deserialize_with = "json_i64")] i64);
    Ok(Option::<Wrap>::deserialize(d)?.map(|Wrap(n)| n))
}

/// The most characters of a password, as the document's `maxLength` says.
pub const PASSWORD_MAX_CHARS: usize = 128;

/// A password field, refused at parsing (400) above
/// [`PASSWORD_MAX_CHARS`] characters (counted as the document's
/// `maxLength` counts them), whatever the account: the document and the
/// server refuse the same bodies.
pub fn password_field<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    let password = String::deserialize(d)?;
    match password.chars().count() {
        n if n > PASSWORD_MAX_CHARS => {
            Err(serde::de::Error::custom(format!("a password has at most {PASSWORD_MAX_CHARS} characters, not {n}")))
        }
        _ => Ok(password),
    }
}

/// [`password_field`], or `null`.
pub fn opt_password_field<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    #[derive(Deserialize)]
    struct Wrap(#[serde(deserialize_with = "password_field")] String);
    Ok(Option::<Wrap>::deserialize(d)?.map(|Wrap(p)| p))
}

/// A field that may be left out but is never `null` (the document gives it
/// no `null`): absent, `None` (with `#[serde(default)]`); `null`, refused.
pub fn present_not_null<'de, D: serde::Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<T>, D::Error> {
    T::deserialize(d).map(Some)
}

fn json_integer<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    match serde_json::Number::deserialize(d)? {
        n if n.is_u64() => Ok(n.as_u64().expect("checked")),
        n => match n.as_f64() {
            Some(f) if f.fract() == 0.0 && (0.0..18_446_744_073_709_551_616.0).contains(&f) => Ok(f as u64),
            _ => Err(serde::de::Error::custom(format!("expected a whole number from 0 to 2^64 - 1, found {n}"))),
        },
    }
}

impl TryFrom<ActionBody> for ActionRequest {
    type Error = String;
    fn try_from(b: ActionBody) -> Result<ActionRequest, String> {
        let action = match (b.action, b.card) {
            (ActionKind::Play, Some(card)) => Action::Play { card },
            (ActionKind::Play, None) => return Err("`play` needs a `card`".into()),
            (ActionKind::Draw, None) => Action::Draw,
            (ActionKind::Draw, Some(_)) => return Err("`draw` takes no `card`".into()),
        };
        Ok(ActionRequest { seq: b.seq, action, client_seed: b.client_seed })
    }
}

impl ActionRequest {
    /// The canonical text stored with an applied action: a retry is "the
    /// same request" when its canonical text is the same, whatever the
    /// spacing or key order of its JSON.
    pub fn canonical(&self) -> String {
        serde_json::to_string(self).expect("an action serializes")
    }
}

/// A player's contribution to the draws (docs/contract.md Fairness).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientSeed(String);

impl ClientSeed {
    pub const MAX_LEN: usize = 64;

    /// Printable ASCII without spaces, 1 to 64 characters: it is part of
    /// the HMAC message and of a record people copy by hand.
    pub fn parse(s: &str) -> Result<ClientSeed, AppError> {
        if s.is_empty() || s.len() > Self::MAX_LEN {
            return Err(AppError::BadRequest(format!("client_seed must have 1 to {} characters", Self::MAX_LEN)));
        }
        if !s.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(AppError::BadRequest("client_seed must be printable ASCII without spaces".into()));
        }
        Ok(ClientSeed(s.to_string()))
    }

    /// The seed of a player who gave none: 16 random bytes (the server
    /// draws them from the OS CSPRNG) in hex.
    pub fn from_random(bytes: [u8; 16]) -> ClientSeed {
        ClientSeed(hex::encode(bytes))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The `Idempotency-Key` header of a purchase.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdempotencyKey(String);

impl IdempotencyKey {
    pub fn parse(s: &str) -> Result<IdempotencyKey, AppError> {
        if s.is_empty() || s.len() > 128 || !s.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(AppError::BadRequest("Idempotency-Key must be 1 to 128 printable ASCII characters".into()));
        }
        Ok(IdempotencyKey(s.to_string()))
    }
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A player's display name.
pub fn parse_name(name: Option<String>) -> Result<Option<String>, AppError> {
    match name {
        Some(n) if n.chars().count() > 64 => Err(AppError::BadRequest("name must have at most 64 characters".into())),
        Some(n) if n.chars().any(char::is_control) => {
            Err(AppError::BadRequest("name must not contain control characters".into()))
        }
        other => Ok(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::Rank;

    #[test]
    fn action_request_reads_the_contract_shapes() {
        let a: ActionRequest = serde_json::from_str(r#"{"seq": 3, "action": "play", "card": "Q"}"#).unwrap();
        assert_eq!(a, ActionRequest { seq: 3, action: Action::play(Rank::Queen), client_seed: None });
        assert_eq!(a.canonical(), r#"{"seq":3,"action":"play","card":"Q"}"#);
        let s: ActionRequest =
            serde_json::from_str(r#"{"client_seed": "lucky", "seq": 0, "action": "play", "card": "7"}"#).unwrap();
        assert_eq!(s.canonical(), r#"{"seq":0,"action":"play","card":"7","client_seed":"lucky"}"#);
        let d: ActionRequest = serde_json::from_str(r#"{"action":"draw","seq":0}"#).unwrap();
        assert_eq!(d.canonical(), r#"{"seq":0,"action":"draw"}"#);
        assert!(serde_json::from_str::<ActionRequest>(r#"{"seq":0,"action":"play","card":"11"}"#).is_err());
        assert!(serde_json::from_str::<ActionRequest>(r#"{"seq":-1,"action":"draw"}"#).is_err());
    }

    #[test]
    fn client_seeds_are_bounded_and_printable() {
        assert!(ClientSeed::parse("lucky-7").is_ok());
        assert!(ClientSeed::parse("").is_err());
        assert!(ClientSeed::parse("a b").is_err());
        assert!(ClientSeed::parse("é").is_err());
        assert!(ClientSeed::parse(&"x".repeat(65)).is_err());
        assert_eq!(ClientSeed::from_random([7; 16]).as_str().len(), 32);
    }
}

/// `GET /api/me/limits` answer, and that of every change of the limits.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct LimitsView {
    /// `null`: no limit.
    pub tickets_per_day: Option<i64>,
    pub spend_per_week_cents: Option<i64>,
    /// A raise waiting for its cooling-off.
    pub pending: Option<PendingView>,
    /// The end of a self-exclusion in force (unix ms).
    pub excluded_until_ms: Option<i64>,
    pub used: UsageView,
    pub cooling_off_hours: i64,
    /// The player must keep a limit on stakes over seven days, chosen
    /// before their first purchase (décret 2010-518, art. 16): it can be
    /// raised, not removed; without one a purchase is refused (403
    /// `limit_required`).
    pub stake_limit_required: bool,
    /// The shortest and longest self-exclusion, in days (24 hours to 12 months).
    pub exclusion_days: (i64, i64),
    /// Whether the player's limits let them buy a ticket now, and if not
    /// the refusal a purchase would get: the page shows it, never decides it.
    pub purchase: PurchaseVerdict,
}

/// What a purchase would meet now from the player's own limits and
/// self-exclusion: decided by the check the purchase itself makes
/// (`domain::account::check_purchase`), at the price of the ticket on sale.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct PurchaseVerdict {
    /// The limits and the self-exclusion let the player buy one ticket now
    /// (a purchase may still be refused for something else: the balance,
    /// nothing on sale).
    pub may_buy: bool,
    /// The price the check counts against the limit on stakes, in cents.
    pub price_cents: i64,
    /// The refusal a purchase would get, as its 403 says it (`error`
    /// `self_excluded`, `limit_required` or `limit_reached`, with the same
    /// `message` and `params`: `reason`, `max`, `used`, `until_ms`, ...);
    /// `null` when the player may buy.
    pub refusal: Option<Refusal>,
}

/// A refusal in the shape of the API's error body (docs/contract.md).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Refusal {
    pub error: String,
    pub message: String,
    /// What a page needs to word the refusal; absent when none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub params: Option<serde_json::Map<String, serde_json::Value>>,
}

impl From<&AppError> for Refusal {
    fn from(error: &AppError) -> Refusal {
        let body = error.body();
        Refusal { error: body.error.to_string(), message: body.message, params: body.params }
    }
}

/// `GET /api/tickets/{id}/claim`: where and until when a paper ticket's
/// prize is paid (docs/shops.md "Claims and the payout ceiling").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct PaperClaim {
    /// `seller` (the shop that sold it, `shop`), `any_shop` (any shop of
    /// the operator), `payment_centre` (the prize is above the payout
    /// ceiling: the operator's payment centre), or `null`: nothing to claim
    /// (not won, not finished, or paid).
    #[schema(pattern = "^(seller|any_shop|payment_centre)$")]
    pub pay_at: Option<String>,
    /// The shop that sold it.
    pub shop: Option<String>,
    pub prize_cents: i64,
    /// Paid already (by `paid_by` at `paid_ms`; no shop: the payment centre).
    pub paid_ms: Option<i64>,
    pub paid_by: Option<String>,
    /// The last instant to claim it, once the emission's sale has ended;
    /// before: `claim_days` days after the closing notice's date.
    pub claim_until_ms: Option<i64>,
    pub claim_days: u32,
    /// The claim deadline passed: the prize can no longer be paid.
    pub expired: bool,
}

/// `GET /api/me/statement`: the player's "bilan de jeu", their online
/// stakes, winnings and net result per Paris calendar day (the last 7),
/// ISO week (the last 4) and calendar month (the last 3), newest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct StatementView {
    pub days: Vec<StatementPeriod>,
    pub weeks: Vec<StatementPeriod>,
    pub months: Vec<StatementPeriod>,
    /// Since `since_ms` (the query's), to now: the reminder of time played.
    pub since: Option<StatementPeriod>,
}

/// One period of a statement: `[from_ms, to_ms)`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct StatementPeriod {
    /// `2026-12-05` (a day, or a week's Monday), `2026-12` (a month); empty for `since`.
    pub label: String,
    pub from_ms: i64,
    pub to_ms: i64,
    /// The tickets bought (their prices).
    pub stakes_cents: i64,
    /// The prizes credited.
    pub winnings_cents: i64,
    /// Winnings less stakes.
    pub net_cents: i64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct PendingView {
    pub tickets_per_day: Option<i64>,
    pub spend_per_week_cents: Option<i64>,
    /// When these limits apply (unix ms).
    pub from_ms: i64,
}

/// Online purchases in the limits' windows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct UsageView {
    /// Tickets bought in the last 24 hours.
    pub tickets_today: i64,
    /// Cents spent in the last 7 days.
    pub spent_week_cents: i64,
}

//! The OpenAPI document served at `/api/openapi.json`, generated from the
//! handlers' and types' annotations (utoipa).

use super::writes::JsonWrites;
use engine::{GameResult, PrizeSchedule, Rank};
use record::RecordAction;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{OpenApi, ToSchema};

#[derive(OpenApi)]
#[openapi(
    info(title = "as-capone", description = "The As Capone game server (see docs/contract.md)"),
    paths(
        super::account::create_player,
        super::account::me,
        super::account::get_limits,
        super::account::statement,
        super::game::get_claim,
        super::account::put_limits,
        super::account::self_exclusion,
        super::account::put_credentials,
        super::account::login,
        super::account::logout,
        super::account::recover,
        super::account::renew_recovery_code,
        super::account::close_account,
        super::public::odds,
        super::game::buy_ticket,
        super::game::list_tickets,
        super::game::get_ticket,
        super::game::post_action,
        super::game::get_record,
        super::demo::start,
        super::demo::get,
        super::demo::act,
        super::demo::record,
        super::public::public_emissions,
        super::admin::create_emission,
        super::admin::add_blocks,
        super::admin::list_emissions,
        super::admin::get_emission,
        super::admin::print_file,
        super::admin::close_emission,
        super::admin::version,
        super::desk::health,
        super::desk::check_table,
        super::desk::risk,
        super::claims::list,
        super::claims::pay,
        super::certification::certification,
        super::desk_charts::sales,
        super::desk_charts::prizes,
        super::desk_charts::shops,
        super::retail::redeem,
        super::retail::sell,
        super::retail::validate,
        super::retail::pay,
        super::retail::me,
        super::retail::report,
        super::public::healthz,
        super::public::metrics,
        super::operator::launch,
        super::operator::exchange,
        super::operator::session,
        super::operator::rounds,
    ),
    components(schemas(
        NewPlayerBodyDoc,
        domain::api::PlayerCreated,
        domain::api::Me,
        domain::api::BuyBody,
        domain::api::Purchased,
        domain::api::TicketView,
        domain::api::TicketEnvelope,
        domain::api::TicketList,
        super::demo::DemoStartedAnswer,
        domain::demo::DemoRecord,
        ActionBodyDoc,
        super::retail::CodeBody,
        super::retail::SerialBody,
        super::retail::Redeemed,
        domain::retail::RetailAnswer,
        domain::retail::ShopMe,
        domain::retail::ShopReport,
        domain::retail::CountAmount,
        domain::retail::ShopPayment,
        super::admin::NewEmission,
        super::admin::MoreBlocks,
        super::admin::CloseBody,
        super::claims::ClaimPayBody,
        crate::store::Claims,
        crate::store::Claim,
        super::admin::TableDoc,
        super::public::Emissions,
        super::admin::Reports,
        super::admin::VersionInfo,
        super::desk::DeskHealth,
        super::desk::TableCheckBody,
        super::desk::TableCheck,
        super::desk::RiskChart,
        super::desk::BlockRunning,
        super::desk_charts::SalesChart,
        super::desk_charts::BlockSales,
        super::desk_charts::PrizesChart,
        super::desk_charts::PrizePoint,
        super::desk_charts::ShopsChart,
        super::desk_charts::ShopFigures,
        super::desk::DatabaseHealth,
        super::desk::AuditHealth,
        super::desk::WalletHealth,
        super::desk::ProcessFigures,
        crate::store::CurrentKey,
        crate::store::PlayersSummary,
        super::public::Health,
        crate::store::EmissionCreated,
        crate::store::EmissionReport,
        domain::api::ActionAnswer,
        domain::api::ResultView,
        domain::api::GameSummary,
        domain::api::ExtraDuel,
        domain::api::LimitsView,
        domain::api::StatementView,
        domain::api::StatementPeriod,
        domain::api::PaperClaim,
        domain::api::PendingView,
        domain::api::UsageView,
        super::account::LimitsBody,
        super::account::SelfExclusionBody,
        super::account::CredentialsBody,
        super::account::LoginBody,
        super::account::SessionCreated,
        super::account::CredentialsSet,
        super::account::RecoveryBody,
        super::account::Recovered,
        super::account::RecoveryCodeBody,
        super::account::RecoveryCode,
        super::account::CloseAccountBody,
        super::account::AccountClosed,
        domain::error::ErrorBody,
        LaunchBody,
        LaunchFlagsDoc,
        LaunchAnswerDoc,
        LaunchSession,
        RoundsDoc,
        RoundDoc,
        super::operator::ExchangeBody,
        super::operator::SessionView,
    )),
    modifiers(&BearerAuth, &JsonWrites)
)]
pub struct ApiDoc;

// The record crate links no OpenAPI generator (a verifier needs none), so
// the document describes its types through these mirrors: same names, same
// fields, same serde attributes, so the same schemas as `record::Record`'s JSON.

/// The two kinds of random draw (docs/rules.md).
#[derive(ToSchema)]
#[schema(as = DrawKind)]
#[serde(rename_all = "snake_case")]
#[allow(dead_code)]
pub enum DrawKindDoc {
    /// As Capone's card, uniform over his remaining hand (art. 3.2.2).
    Capone,
    /// A deck draw: two different cards of the 16 (art. 3.2.4.2, 3.2.5.2).
    Deck,
}

/// Random draw number `n`: `{"n", "kind", "player"?, "capone"}`.
#[derive(ToSchema)]
#[schema(as = RecordDraw)]
#[allow(dead_code)]
pub struct RecordDrawDoc {
    pub n: u64,
    pub kind: DrawKindDoc,
    /// The player's card of a deck draw.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>)]
    pub player: Option<Rank>,
    /// As Capone's card: `7` `8` `9` `10` `J` `Q` `K` `A`.
    #[schema(value_type = String)]
    pub capone: Rank,
}

/// The public record of one ticket.
#[derive(ToSchema)]
#[schema(as = Record)]
#[allow(dead_code)]
pub struct RecordDoc {
    pub serial: String,
    /// The player's seed, given with the first action; `null` before it.
    pub client_seed: Option<String>,
    pub commitment: String,
    /// Hex; `null` until the ticket is finished.
    pub server_seed: Option<String>,
    /// `{"5": cents, "6": cents, "7": cents, "8": cents}`
    #[schema(value_type = Object)]
    pub prizes_cents: PrizeSchedule,
    /// `{"seq", "action": "play", "card"}` or `{"seq", "action": "draw"}`, in order.
    #[schema(value_type = Vec<Object>)]
    pub actions: Vec<RecordAction>,
    pub draws: Vec<RecordDrawDoc>,
    #[schema(value_type = Option<domain::api::ResultView>)]
    pub result: Option<GameResult>,
    /// The emission's number, the block's and the ticket's position (from 1).
    pub emission: u32,
    pub block: u32,
    pub position: u32,
    /// The fields of the ticket's Merkle leaf (docs/fairness.md).
    pub leaf: RecordLeafDoc,
    /// The leaf's inclusion proof, from the leaf up: `"L<64 hex>"` when the
    /// sibling is on the left, `"R<64 hex>"` when on the right.
    pub proof: Vec<String>,
    /// Hex Merkle root of the block, as published.
    pub root: String,
}

/// The fields of a ticket's Merkle leaf ([`emission::Leaf`]).
#[derive(ToSchema)]
#[schema(as = RecordLeaf)]
#[allow(dead_code)]
pub struct RecordLeafDoc {
    pub serial: String,
    pub position: u32,
    /// The schedule row of the table, from 0.
    pub row: u32,
    /// `{"5": cents, "6": cents, "7": cents, "8": cents}`
    #[schema(value_type = Object)]
    pub prizes_cents: PrizeSchedule,
    /// Hex SHA-256 of the play code (16 characters, no dashes).
    pub play_code_sha256: String,
    /// Hex SHA-256 of the server seed.
    pub commitment: String,
}

struct BearerAuth;

impl utoipa::Modify for BearerAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
    }
}

/// The document as JSON text, as this server serves it: with
/// `stake_limit_required` (a player must keep a limit on stakes, décret
/// 2010-518 art. 16) the limits' body requires `spend_per_week_cents` and
/// gives it no `null`, since the server refuses both; so the document
/// allows exactly the bodies this server takes.
pub fn document_json(stake_limit_required: bool) -> String {
    let doc = ApiDoc::openapi();
    if !stake_limit_required {
        return doc.to_json().expect("the OpenAPI document serializes");
    }
    let mut doc = serde_json::to_value(&doc).expect("the OpenAPI document serializes");
    let limits = &mut doc["components"]["schemas"]["LimitsBody"];
    let spend = &mut limits["properties"]["spend_per_week_cents"];
    assert_eq!(spend["type"], serde_json::json!(["integer", "null"]), "the limits' body as LimitsBody declares it");
    spend["type"] = "integer".into();
    limits["required"] = serde_json::json!(["spend_per_week_cents"]);
    doc.to_string()
}

// The request bodies as the document describes them: the exact shapes
// the server takes, where serde alone would describe looser ones.

/// The OpenAPI document of `POST /api/players`'s body (documentation
/// only): a name alone, or a login with its password, so that every body
/// the document allows is one the server takes.
#[derive(ToSchema)]
#[schema(as = NewPlayerBody)]
#[allow(dead_code)]
#[serde(untagged)]
pub enum NewPlayerBodyDoc {
    /// A player without a login (play at once; `PUT /api/me/credentials` later).
    Anonymous(AnonymousPlayer),
    /// A player who keeps their account with a login and a password.
    WithLogin(PlayerWithLogin),
}

/// `{"name": "..."}`
#[derive(ToSchema)]
#[allow(dead_code)]
#[serde(deny_unknown_fields)]
pub struct AnonymousPlayer {
    /// A display name, at most 64 characters, no control character.
    #[schema(max_length = 64, pattern = "^[^\\u0000-\\u001F\\u007F-\\u009F]*$")]
    name: Option<String>,
}

/// `{"name": "...", "login": "...", "password": "..."}`
#[derive(ToSchema)]
#[allow(dead_code)]
#[serde(deny_unknown_fields)]
pub struct PlayerWithLogin {
    #[schema(max_length = 64, pattern = "^[^\\u0000-\\u001F\\u007F-\\u009F]*$")]
    name: Option<String>,
    /// 3 to 32 of `a-z 0-9 . _ -` (upper case is folded to lower case).
    #[schema(pattern = "^[A-Za-z0-9._-]{3,32}$")]
    login: String,
    /// 8 to 128 characters.
    #[schema(min_length = 8, max_length = 128)]
    password: String,
}

/// The OpenAPI document of an action's body (documentation only): one of
/// four exact shapes, so that every body the document allows is one the
/// server reads (Schemathesis checks it). Whether the action fits the
/// ticket's state (its `seq`, its phase, the cards in hand) is the game's
/// rule, answered 409 or 422.
#[derive(ToSchema)]
#[schema(as = ActionBody)]
#[allow(dead_code)]
#[serde(untagged)]
pub enum ActionBodyDoc {
    /// The ticket's first action (`seq` 0): a card, and optionally the player's seed.
    FirstPlay(FirstPlay),
    /// A later card.
    Play(LaterPlay),
    /// The first action as a deck click (refused 422: a ticket starts with a card).
    FirstDraw(FirstDraw),
    /// A click on the 16-card deck (art. 3.2.4.2, 3.2.5.2).
    Draw(LaterDraw),
}

/// `play`
#[derive(ToSchema)]
#[allow(dead_code)]
#[serde(rename_all = "snake_case")]
pub enum PlayTag {
    Play,
}

/// `draw`
#[derive(ToSchema)]
#[allow(dead_code)]
#[serde(rename_all = "snake_case")]
pub enum DrawTag {
    Draw,
}

/// `{"seq": 0, "action": "play", "card": "Q", "client_seed": "..."}`
#[derive(ToSchema)]
#[allow(dead_code)]
#[serde(deny_unknown_fields)]
pub struct FirstPlay {
    #[schema(minimum = 0, maximum = 0)]
    seq: u64,
    action: PlayTag,
    /// A card of the hand: `7` `8` `9` `10` `J` `Q` `K` `A` (any case).
    #[schema(pattern = "^(7|8|9|10|[JjQqKkAa])$")]
    card: String,
    /// The player's seed: 1 to 64 printable ASCII characters, no space.
    #[schema(pattern = "^[!-~]{1,64}$")]
    client_seed: Option<String>,
}

/// `{"seq": n, "action": "play", "card": "Q"}`, n at least 1.
#[derive(ToSchema)]
#[allow(dead_code)]
#[serde(deny_unknown_fields)]
pub struct LaterPlay {
    #[schema(minimum = 1)]
    seq: u64,
    action: PlayTag,
    #[schema(pattern = "^(7|8|9|10|[JjQqKkAa])$")]
    card: String,
}

/// `{"seq": 0, "action": "draw", "client_seed": "..."}`
#[derive(ToSchema)]
#[allow(dead_code)]
#[serde(deny_unknown_fields)]
pub struct FirstDraw {
    #[schema(minimum = 0, maximum = 0)]
    seq: u64,
    action: DrawTag,
    #[schema(pattern = "^[!-~]{1,64}$")]
    client_seed: Option<String>,
}

/// `{"seq": n, "action": "draw"}`, n at least 1.
#[derive(ToSchema)]
#[allow(dead_code)]
#[serde(deny_unknown_fields)]
pub struct LaterDraw {
    #[schema(minimum = 1)]
    seq: u64,
    action: DrawTag,
}

/// `POST /api/operator/launch` body (wallet::LaunchRequest; docs/operator-integration.md).
#[derive(ToSchema)]
#[allow(dead_code)]
pub struct LaunchBody {
    /// The operator's reference of the player: 1 to 64 printable ASCII characters.
    #[schema(min_length = 1, max_length = 64, pattern = "^[!-~]{1,64}$")]
    player: String,
    /// EUR only.
    #[schema(pattern = "^EUR$")]
    currency: String,
    /// fr or en.
    #[schema(pattern = "^(fr|en)$")]
    language: String,
    /// ISO 3166-1 alpha-2.
    #[schema(pattern = "^[A-Z]{2}$")]
    country: Option<String>,
    flags: Option<LaunchFlagsDoc>,
    /// Where "back to the lobby" leads.
    #[schema(pattern = "^https?://", max_length = 2048)]
    lobby_url: Option<String>,
}

/// What the operator lets the page show (wallet::LaunchFlags).
#[derive(ToSchema)]
#[allow(dead_code)]
pub struct LaunchFlagsDoc {
    show_rtp: Option<bool>,
    session_timer: Option<bool>,
    #[schema(minimum = 1, maximum = 1440)]
    reality_check_minutes: Option<u32>,
    #[schema(minimum = 1, maximum = 1440)]
    session_limit_minutes: Option<u32>,
}

/// The launch's answer (wallet::LaunchAnswer).
#[derive(ToSchema)]
#[allow(dead_code)]
pub struct LaunchAnswerDoc {
    /// Open it in the player's browser: it holds the one-time code.
    url: String,
    code: String,
    /// The code is refused after this instant (unix ms).
    expires_ms: i64,
}

/// `POST /api/launch` answer: a session of the launched player.
#[derive(ToSchema)]
#[allow(dead_code)]
pub struct LaunchSession {
    /// The session's bearer token.
    token: String,
    /// The operator's reference of the player.
    player: String,
    language: String,
    flags: LaunchFlagsDoc,
    lobby_url: Option<String>,
    session_started_ms: i64,
    session_expires_ms: i64,
}

/// `GET /api/admin/wallet/rounds` answer.
#[derive(ToSchema)]
#[allow(dead_code)]
pub struct RoundsDoc {
    rounds: Vec<RoundDoc>,
}

/// A round (wallet::reconcile::OurRound).
#[derive(ToSchema)]
#[allow(dead_code)]
pub struct RoundDoc {
    /// SERIAL.ATTEMPT
    round_id: String,
    player: String,
    price_cents: i64,
    /// sold, released or unresolved.
    state: String,
    prize_cents: Option<i64>,
    credit_acknowledged: bool,
}

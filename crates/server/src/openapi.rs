//! The OpenAPI document served at `/api/openapi.json`, generated from the
//! handlers' and types' annotations (utoipa).

use engine::{GameResult, PrizeSchedule, Rank};
use record::RecordAction;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{OpenApi, ToSchema};

#[derive(OpenApi)]
#[openapi(
    info(title = "as-capone", description = "The As Capone game server (see spec/CONTRACT.md)"),
    paths(
        crate::http::create_player,
        crate::http::me,
        crate::account::get_limits,
        crate::account::put_limits,
        crate::account::self_exclusion,
        crate::account::put_credentials,
        crate::account::login,
        crate::account::logout,
        crate::odds::odds,
        crate::http::buy_ticket,
        crate::http::list_tickets,
        crate::http::get_ticket,
        crate::http::act,
        crate::http::record,
        crate::admin::public_emissions,
        crate::admin::create_emission,
        crate::admin::add_blocks,
        crate::admin::list_emissions,
        crate::admin::get_emission,
        crate::admin::print_file,
        crate::admin::close_emission,
        crate::retail::redeem,
        crate::retail::sell,
        crate::retail::validate,
        crate::retail::pay,
        crate::http::healthz,
        crate::http::metrics,
    ),
    components(schemas(
        crate::api::NewPlayerBodyDoc,
        crate::api::PlayerCreated,
        crate::api::Me,
        crate::api::BuyBody,
        crate::api::Purchased,
        crate::api::TicketView,
        crate::api::TicketEnvelope,
        crate::api::TicketList,
        crate::api::ActionBodyDoc,
        crate::retail::CodeBody,
        crate::retail::SerialBody,
        crate::retail::Redeemed,
        crate::core::decide::RetailAnswer,
        crate::admin::NewEmission,
        crate::admin::MoreBlocks,
        crate::admin::TableDoc,
        crate::admin::Emissions,
        crate::admin::Reports,
        crate::store::EmissionCreated,
        crate::store::EmissionReport,
        crate::api::ActionAnswer,
        crate::api::ResultView,
        crate::api::GameSummary,
        crate::api::ExtraDuel,
        crate::account::LimitsView,
        crate::account::PendingView,
        crate::account::UsageView,
        crate::account::LimitsBody,
        crate::account::SelfExclusionBody,
        crate::account::CredentialsBody,
        crate::account::LoginBody,
        crate::account::SessionCreated,
        crate::account::CredentialsSet,
        crate::error::ErrorBody,
    )),
    modifiers(&BearerAuth)
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
    #[schema(value_type = Option<crate::api::ResultView>)]
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

/// The document as JSON text.
pub fn document_json() -> String {
    ApiDoc::openapi().to_json().expect("the OpenAPI document serializes")
}

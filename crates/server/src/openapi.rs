//! The OpenAPI document served at `/api/openapi.json`, generated from the
//! handlers' and types' annotations (utoipa).

use utoipa::OpenApi;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};

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

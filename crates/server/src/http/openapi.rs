//! The OpenAPI document served at `/api/openapi.json` ([`document`]),
//! generated from the handlers' annotations and the schemas their types
//! derive where they are defined (utoipa): the record's in the record
//! crate, the launch's and the rounds' in the wallet crate, the API's
//! shapes in the domain crate.

use super::state::AppState;
use super::writes::JsonWrites;
use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use utoipa::OpenApi;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};

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
        domain::api::NewPlayerBody,
        domain::api::PlayerCreated,
        domain::api::Me,
        domain::api::BuyBody,
        domain::api::Purchased,
        domain::api::TicketView,
        domain::api::TicketEnvelope,
        domain::api::TicketList,
        super::demo::DemoStartedAnswer,
        domain::demo::DemoRecord,
        domain::api::ActionBody,
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
        wallet::LaunchRequest,
        wallet::LaunchFlags,
        wallet::LaunchAnswer,
        super::operator::LaunchSession,
        super::operator::Rounds,
        wallet::OurRound,
        super::operator::ExchangeBody,
        super::operator::SessionView,
    )),
    modifiers(&BearerAuth, &JsonWrites)
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

/// `GET /api/openapi.json`: this document, as this server's configuration makes it.
pub async fn document(State(state): State<AppState>) -> Response {
    let document = document_json(state.limit_rules.stake_limit_required);
    ([(header::CONTENT_TYPE, "application/json")], document).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The document's side of `writes::json_only`: [`JsonWrites`].
    #[test]
    fn the_document_says_each_write_takes_json_and_may_answer_415() {
        let doc: serde_json::Value = serde_json::from_str(&document_json(true)).unwrap();
        let mut writes = 0;
        for (path, item) in doc["paths"].as_object().unwrap() {
            for method in ["post", "put", "patch", "delete"] {
                let Some(op) = item.get(method) else { continue };
                writes += 1;
                assert_eq!(
                    op["responses"]["415"]["content"]["application/json"]["schema"]["$ref"],
                    "#/components/schemas/ErrorBody",
                    "{method} {path}"
                );
                let body = &op["requestBody"];
                assert_eq!(body["required"], true, "{method} {path}: {body}");
                assert!(body["content"].get("application/json").is_some(), "{method} {path}: {body}");
            }
        }
        assert!(writes >= 20, "{writes} writes");
        // One that reads no body takes any JSON value.
        assert_eq!(
            doc["paths"]["/api/demo"]["post"]["requestBody"]["content"]["application/json"]["schema"],
            serde_json::json!({})
        );
    }

    /// Every `$ref` of `value`.
    fn refs<'a>(value: &'a serde_json::Value, out: &mut Vec<&'a str>) {
        match value {
            serde_json::Value::Object(map) => {
                if let Some(serde_json::Value::String(r)) = map.get("$ref") {
                    out.push(r);
                }
                map.values().for_each(|v| refs(v, out));
            }
            serde_json::Value::Array(items) => items.iter().for_each(|v| refs(v, out)),
            _ => {}
        }
    }

    #[test]
    fn every_reference_of_the_document_names_one_of_its_schemas() {
        let doc: serde_json::Value = serde_json::from_str(&document_json(false)).unwrap();
        let schemas = doc["components"]["schemas"].as_object().unwrap();
        let mut found = Vec::new();
        refs(&doc, &mut found);
        assert!(found.len() > 100, "{} references", found.len());
        for r in found {
            let name = r.strip_prefix("#/components/schemas/").unwrap_or_else(|| panic!("{r}"));
            assert!(schemas.contains_key(name), "{r} names no schema");
        }
    }

    /// A record's `result` is the engine's `GameResult`, which its schema
    /// names `ResultView` (record's `result_schema`): the two are one shape.
    #[test]
    fn the_record_result_is_a_result_view() {
        let result = engine::GameResult { tricks: 6, prize_cents: 1_500 };
        let json = serde_json::to_value(result).unwrap();
        let view: domain::api::ResultView = serde_json::from_value(json.clone()).unwrap();
        assert_eq!(serde_json::to_value(view).unwrap(), json);
        let doc: serde_json::Value = serde_json::from_str(&document_json(false)).unwrap();
        let schemas = &doc["components"]["schemas"];
        let mut fields: Vec<&String> = schemas["ResultView"]["properties"].as_object().unwrap().keys().collect();
        let mut keys: Vec<&String> = json.as_object().unwrap().keys().collect();
        fields.sort();
        keys.sort();
        assert_eq!(fields, keys);
        assert_eq!(schemas["Record"]["properties"]["result"]["oneOf"][1]["$ref"], "#/components/schemas/ResultView");
    }
}

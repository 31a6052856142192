//! The API's own document is exact: Schemathesis
//! (PyPI) generates requests from `/api/openapi.json` against the real
//! server and checks every answer with `--checks all`: no 5xx, every
//! status, header and body as documented, schema-valid data accepted and
//! invalid data refused, the stateful phase's links followed. Any failure
//! fails the test, with Schemathesis's report.
//!
//! It runs once per role, each against a server of its own: a player's
//! token over the whole API (the operator's and the shops' operations then
//! answer 403), the operator's token over the operator's desk (tag
//! `operator`), and a shop's token over the shops' endpoints (tag
//! `retail`), so that every request body is generated and checked with a
//! token that reaches its handler.
//!
//! A short pass runs here (`AS_CAPONE_SCHEMATHESIS_EXAMPLES`, default 12
//! examples per operation and phase for the player, the operator's and the
//! shop's runs a third of it: they cover few operations, and every
//! operator's example that is accepted writes an emission); docs/testing.md
//! gives the long run. When `schemathesis` is not installed the test is
//! skipped with a message, unless `AS_CAPONE_REQUIRE_SCHEMATHESIS=1` (CI),
//! where it fails.

use crate::helpers::*;

/// Who Schemathesis speaks as.
enum Role {
    Player,
    Operator,
    Shop,
}

/// Runs Schemathesis against a fresh server as `role`; fails with its
/// report when it finds anything.
async fn schemathesis_as(role: Role) {
    if !schemathesis_installed() {
        return;
    }
    let Some(app) = spawn_app().await else { return };
    let player = app.register().await;
    // A ticket in the player's history, so that the list has an item.
    app.buy(&player).await;
    let examples: u32 =
        std::env::var("AS_CAPONE_SCHEMATHESIS_EXAMPLES").ok().and_then(|e| e.parse().ok()).unwrap_or(12);
    let (token, scope, examples): (String, &[&str], u32) = match role {
        Role::Player => (player, &[], examples),
        Role::Operator => (OPERATOR.to_string(), &["--include-tag", "operator"], examples.div_ceil(3)),
        Role::Shop => (SHOP_A_TOKEN.to_string(), &["--include-tag", "retail"], examples.div_ceil(3)),
    };
    run_schemathesis(&app.url, &token, scope, examples).await;
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn schemathesis_finds_nothing_in_the_openapi_document() {
    schemathesis_as(Role::Player).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn schemathesis_finds_nothing_with_the_operators_token() {
    schemathesis_as(Role::Operator).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn schemathesis_finds_nothing_with_a_shops_token() {
    schemathesis_as(Role::Shop).await;
}

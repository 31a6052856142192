//! `as-capone serve --config FILE` with flags: the configuration is checked
//! once whole, so that a setting of the file may stand on what a flag gives
//! (a finding of the second outside audit).

use crate::common::*;

/// A shop's own payout ceiling in the file, the shop itself from
/// `--retailer-tokens`: the server starts and the shop has its ceiling.
/// (The file was checked alone, before the flags, and refused: "names a
/// shop no retailer token names".) A ceiling naming no shop at all is still
/// refused, with the file's name.
#[test]
fn a_files_shop_payout_ceilings_may_name_the_shops_of_retailer_tokens() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("table.toml"), BLOCKS_OF_2000).unwrap();
    let config = dir.path().join("as-capone.toml");
    std::fs::write(&config, "shop_payout_ceilings = { \"Tabac du Port\" = 250000 }\n").unwrap();
    let config = config.to_str().unwrap();
    let token = "tabac-du-port-token-0001";
    let shop = format!("Tabac du Port:{token}");
    let server = start_server(dir.path(), "config.db", &["--config", config, "--retailer-tokens", &shop]);
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let me: serde_json::Value = rt.block_on(async {
        let r = reqwest::Client::new().get(format!("{}/api/retail/me", server.url)).bearer_auth(token).send().await;
        r.unwrap().json().await.unwrap()
    });
    assert_eq!(me["shop"], "Tabac du Port", "{me}");
    assert_eq!(me["payout_ceiling_cents"], 250000, "{me}");
    drop(server);
    // Another shop's token: the file's ceiling names no shop, refused.
    let other = testkit::serve_command(
        exe(),
        dir.path(),
        &testkit::sqlite_url(dir.path(), "config.db"),
        &["--config", config, "--retailer-tokens", "Bar:bar-token-000000000001"],
    )
    .output()
    .unwrap();
    assert!(!other.status.success());
    let log = String::from_utf8_lossy(&other.stderr);
    assert!(log.contains(&format!("configuration {config}")), "{log}");
    assert!(log.contains("shop_payout_ceilings names Tabac du Port, which no retailer token names"), "{log}");
}

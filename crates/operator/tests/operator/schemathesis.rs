//! The operator's wallet document is exact: Schemathesis (PyPI) generates
//! requests from `/openapi.json` (docs/operator-wallet.openapi.json) against
//! a real reference operator, signed by the hooks in `schemathesis_hooks.py`
//! with the test key (in every spelling of the headers the document's
//! patterns allow), and checks every answer with `--checks all`: no 5xx
//! (chaos off), every status, header and body as documented, valid data
//! accepted and invalid data refused (a case with broken signature headers
//! is sent unsigned and must be refused), and the hooks' own check that
//! every answer of a wallet path, a 405 included, is signed and bound to
//! its request.
//!
//! When `schemathesis` is not installed the test is skipped with a message,
//! unless `AS_CAPONE_REQUIRE_SCHEMATHESIS=1` (CI), where it fails.
//! `AS_CAPONE_SCHEMATHESIS_EXAMPLES` sets the examples per operation and
//! phase (default 30).

use crate::helpers::*;
use std::process::Command;

fn schemathesis_installed() -> bool {
    let found = Command::new("schemathesis").arg("--version").output().is_ok_and(|o| o.status.success());
    if !found {
        assert!(
            std::env::var("AS_CAPONE_REQUIRE_SCHEMATHESIS").as_deref() != Ok("1"),
            "schemathesis is required (pip install schemathesis)"
        );
        eprintln!("SKIPPED: schemathesis is not installed (pip install schemathesis)");
    }
    found
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn schemathesis_finds_nothing_in_the_operators_wallet_document() {
    if !schemathesis_installed() {
        return;
    }
    let op = operator().await;
    // The documented examples' player, so that examples reach the ledger's 200s.
    op.player("demo-player", 1_000_000).await;
    let examples: u32 =
        std::env::var("AS_CAPONE_SCHEMATHESIS_EXAMPLES").ok().and_then(|e| e.parse().ok()).unwrap_or(30);
    let here = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/operator");
    let url = format!("{}/openapi.json", op.running.url());
    let work = tempfile::tempdir().unwrap();
    let started = std::time::Instant::now();
    let output = tokio::task::spawn_blocking({
        let work = work.path().to_path_buf();
        move || {
            Command::new("schemathesis")
                .current_dir(work)
                .env("SCHEMATHESIS_HOOKS", format!("{here}/schemathesis_hooks.py"))
                .env("AS_CAPONE_OPERATOR_TEST_KEY_ID", "test-key")
                .env("AS_CAPONE_OPERATOR_TEST_KEY_HEX", "ab".repeat(32))
                .env(
                    "AS_CAPONE_OPERATOR_DOCUMENT",
                    concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/operator-wallet.openapi.json"),
                )
                .args(["--config-file", &format!("{here}/schemathesis.toml"), "run", &url, "--checks", "all"])
                .args(["--max-examples", &examples.to_string()])
                // One worker (see crates/server/tests/api/schemathesis.rs); no
                // stateful phase: the document has no links.
                .args(["--phases", "examples,coverage,fuzzing", "--workers", "1", "--seed", "20261205"])
                .args(["--no-color", "--suppress-health-check", "all"])
                .output()
                .expect("schemathesis runs")
        }
    })
    .await
    .unwrap();
    let report = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    eprintln!("{report}\n(run in {:.1} s)", started.elapsed().as_secs_f64());
    assert!(output.status.success(), "Schemathesis found problems (report above)");
    assert!(report.contains("passed"), "no test case ran");
    // The signed cases reached the ledger: money moved, and the ledger is balanced.
    let s = op.assert_balanced().await;
    assert!(s.debit.count + s.credit.count + s.rollback.count > 0, "no signed call was applied: {s:?}");
    op.running.stop().await;
}

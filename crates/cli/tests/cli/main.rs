//! The command line's integration tests, one binary (so that the test build
//! links the server and its dependencies once, not once per file): each
//! module drives the real `as-capone` binary (`CARGO_BIN_EXE_as-capone`) as
//! an operator, an auditor or a player would, on SQLite and, where the
//! module says so, on PostgreSQL. Run one part with a filter:
//! `cargo test -p as-capone --test cli -- reliability::`.

/// One test at a time unless told otherwise (`--test-threads`,
/// `RUST_TEST_THREADS`): several of these modules kill servers, time their
/// restarts or load the machine (reliability, crash, scaleout, wallet_chaos,
/// password_flood), and each ran alone as a binary of its own before they
/// were one. libtest reads the variable when the binary starts, so it is
/// set before `main`, from the ELF initializers (as the server's browser
/// tests do).
#[cfg(target_os = "linux")]
#[used]
#[unsafe(link_section = ".init_array")]
static ONE_AT_A_TIME: extern "C" fn() = {
    extern "C" fn one_at_a_time() {
        if std::env::var_os("RUST_TEST_THREADS").is_none() {
            // SAFETY: run before `main`, while this process has one thread.
            unsafe { std::env::set_var("RUST_TEST_THREADS", "1") };
        }
    }
    one_at_a_time
};

mod common;

mod backup;
mod certify;
mod config_file;
mod crash;
mod deploy;
mod emit;
mod keys;
mod loadtest;
mod password_flood;
mod reconcile;
mod reliability;
mod report;
mod scaleout;
mod scheduled_backup;
mod serve_db;
mod toolkit;
mod upgrade;
mod verify;
mod wallet_chaos;

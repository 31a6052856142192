//! What the binary's integration tests share: the real `as-capone serve`
//! started through the test kit (`testkit::start_server`) with this package's
//! executable, and the server in-process on a test's database.

#![allow(dead_code, unused_imports)] // each module uses its own part of this one

use std::path::Path;
pub use testkit::{BLOCKS_OF_2000, Server, Spawned, key_file, next_action};

/// The executable under test.
pub fn exe() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_as-capone"))
}

/// Starts `as-capone serve` on port 0 with the table at `dir/table.toml` and
/// an SQLite file `dir/{db_name}`, and waits until it listens. `extra` is
/// appended to the command line. The server is killed when dropped.
pub fn start_server(dir: &Path, db_name: &str, extra: &[&str]) -> Server {
    testkit::start_server(exe(), dir, &testkit::sqlite_url(dir, db_name), extra)
}

/// Spawns `as-capone serve` on `db_url` without waiting for it: several
/// servers can be started at the same moment, then
/// [`Spawned::wait_listening`] on each.
pub fn spawn_server(dir: &Path, db_url: &str, extra: &[&str]) -> Spawned {
    testkit::spawn_server(exe(), dir, db_url, extra)
}

/// The server in-process on a test's database (prize table
/// [`BLOCKS_OF_2000`], the key of the servers started in `dir`), to run its
/// own checks of the ledger and the audit log.
pub async fn in_process_app(db: String, dir: &Path) -> server::App {
    let config = server::Config {
        listen: "127.0.0.1:0".into(),
        db,
        demo_token: String::new(),
        key_file: Some(key_file(dir)),
        allow_non_regulation_table: true,
        ..Default::default()
    };
    let table = math::PrizeTable::parse_toml(BLOCKS_OF_2000).unwrap();
    server::App::start(server::AppOptions { config, table, seeds: Default::default() }).await.unwrap()
}

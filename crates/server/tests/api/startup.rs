//! Start-up refuses what it must, clearly, and leaves nothing behind
//! (a finding of the second outside audit): a migrations' table that lost a row is refused
//! with what happened and what to do, never with the SQL error of a
//! migration run twice; a start refused by its database leaves no key
//! file that it made. (The configuration's half, `shop_payout_ceilings`
//! with `--retailer-tokens`: crates/cli/tests/cli/config_file.rs.)

use crate::helpers::*;

const MIGRATIONS: &str = "SELECT version, description, success FROM _sqlx_migrations ORDER BY version";
const TICKETS: &str = "SELECT id, serial, status FROM tickets ORDER BY id";

/// Runs `change` on the database of `app`, stops it, and starts a server
/// on it again with `tune`, which must be refused, leaving the migrations'
/// table and the tickets as they were; the refusal's text and the database.
async fn refused_after(app: TestApp, change: &str, tune: impl FnOnce(&mut server::Config)) -> (String, TestDatabase) {
    app.exec_sql(change).await.unwrap();
    let (migrations, tickets) = (app.dump(MIGRATIONS).await, app.dump(TICKETS).await);
    let (db_url, backend) = (app.db_url.clone(), app.backend);
    let db = app.stop().await;
    let (db, error) = match try_spawn_app_on(db, server::ServerSeeds::InsecureFixedForTests(SEED), TABLE, tune).await {
        Ok(_) => panic!("a server started on a database it must refuse ({change})"),
        Err(refusal) => refusal,
    };
    assert_eq!(dump_at(backend, &db_url, MIGRATIONS).await, migrations, "nothing was changed");
    assert_eq!(dump_at(backend, &db_url, TICKETS).await, tickets, "nothing was changed");
    (format!("{error:#}"), db)
}

/// Not the words of the database or of sqlx: the refusal says it itself.
fn not_raw(error: &str) {
    for raw in ["error returned from database", "while executing migration", "no such table", "already exists"] {
        assert!(!error.contains(raw), "a raw error ({raw}): {error}");
    }
}

both! {
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_migration_row_deleted_below_the_last_is_refused_with_what_happened_and_changes_nothing() {
    let Some(app) = spawn_app().await else { return };
    app.buy(&app.register().await).await;
    let schema = server::schema_version();
    let (error, db) = refused_after(app, "DELETE FROM _sqlx_migrations WHERE version = 3", |_| {}).await;
    let want = format!(
        "this database has migration {schema} applied but not migration 3, which comes before it: the row of \
         migration 3 in _sqlx_migrations was deleted"
    );
    assert!(error.contains(&want), "{error}");
    assert!(error.contains("restore the database from a backup") && error.contains("nothing was changed"), "{error}");
    not_raw(&error);
    db.remove().await;
}
}

both! {
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_last_rows_deleted_make_a_migration_run_again_that_fails_and_is_told_so() {
    let Some(app) = spawn_app().await else { return };
    app.buy(&app.register().await).await;
    // Rows 3 and after gone: migration 3 runs again on tables it already
    // changed (its `draws` table is long gone) and fails, rolled back.
    let (error, db) = refused_after(app, "DELETE FROM _sqlx_migrations WHERE version >= 3", |_| {}).await;
    let want = "migration 3 failed on this database and was not applied (its changes were rolled back; the \
                database is left at schema version 2)";
    assert!(error.contains(want), "{error}");
    assert!(error.contains("restore it from a backup (docs/backups.md)"), "{error}");
    db.remove().await;
}
}

/// A row of a migration newer than this binary (a downgrade).
fn newer_row(backend: Backend) -> String {
    let newer = "INSERT INTO _sqlx_migrations (version, description, installed_on, success, checksum, execution_time)
                 VALUES (9999, 'from a newer release', CURRENT_TIMESTAMP, TRUE, X'00', 1)";
    if backend == Backend::Postgres { newer.replace("X'00'", "'\\x00'::bytea") } else { newer.into() }
}

both! {
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_start_its_database_refuses_leaves_no_key_file_it_made_and_keeps_the_one_it_found() {
    let Some(app) = spawn_app().await else { return };
    let key_file = app.key_file().to_path_buf();
    let key = std::fs::read_to_string(&key_file).unwrap();
    let change = newer_row(app.backend);
    // The key file gone (given elsewhere, say): the refused start makes none.
    std::fs::remove_file(&key_file).unwrap();
    let (error, db) = refused_after(app, &change, |_| {}).await;
    assert!(error.contains("newer than this binary's"), "{error}");
    assert!(!key_file.exists(), "the refused start left a new key file: {}", key_file.display());
    // A key ring's directory made by the start goes with its key.
    let ring = db.dir().join("ring");
    let config = |c: &mut server::Config| {
        c.key_file = None;
        c.key_dir = Some(ring.clone());
    };
    let (db, error) =
        try_spawn_app_on(db, server::ServerSeeds::InsecureFixedForTests(SEED), TABLE, config).await.err().unwrap();
    assert!(format!("{error:#}").contains("newer than this binary's"), "{error:#}");
    assert!(!ring.exists(), "the refused start left its key directory");
    // A key file the start found is left as it was.
    std::fs::write(&key_file, &key).unwrap();
    set_owner_only(&key_file);
    let (db, error) =
        try_spawn_app_on(db, server::ServerSeeds::InsecureFixedForTests(SEED), TABLE, |_| {}).await.err().unwrap();
    assert!(format!("{error:#}").contains("newer than this binary's"), "{error:#}");
    assert_eq!(std::fs::read_to_string(&key_file).unwrap(), key, "the key file found is kept");
    db.remove().await;
}
}

/// Mode 0600: a key file others may read is refused (keys.rs).
fn set_owner_only(path: &std::path::Path) {
    #[cfg(unix)]
    std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
}

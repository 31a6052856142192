//! The files that hold secrets are the owner's alone (the second outside audit): a backup
//! (it holds the password, recovery and token hashes) is created mode 0600
//! on both databases, and a server refuses to start on a key file that
//! its group or others may read or write, naming the file, its mode and
//! the fix. (`keys::tests` in the server crate checks the refusal's every
//! mode; `keys::a_key_file_others_may_read_...` in the CLI's tests the
//! binary, with systemd's credentials.)

use crate::helpers::*;
use server::{ServerSeeds, backup};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

both! {
/// `as-capone backup` as a library, while the server runs: SQLite's online
/// copy, PostgreSQL's `pg_dump` (which, given a file name, would create it
/// 0644 under the usual umask 022).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn backup_files_are_the_owners_alone() {
    let Some(app) = spawn_app().await else { return };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("as-capone.backup");
    match backend() {
        Backend::Sqlite => {
            let src = Path::new(app.db_url.trim_start_matches("sqlite://"));
            backup::backup_sqlite(src, &out, backup::BackupPace::default(), false).unwrap();
        }
        Backend::Postgres => {
            let done = backup::pg_dump(&app.db_url, &out, false).unwrap();
            assert!(done.tables > 0 && done.bytes > 0, "{done:?}");
        }
    }
    assert_eq!(mode(&out), 0o600, "the backup {}: {:04o}", out.display(), mode(&out));
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(left, vec![std::ffi::OsString::from("as-capone.backup")], "nothing beside it");
    app.shutdown().await;
}
}

both! {
/// A key file its group or others may read stops the start, before the
/// database is opened; `chmod 600` as the message says, and it starts. The
/// same for a key directory's file.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_others_may_read_stop_the_server_at_start() {
    let Some(db) = TestDatabase::create().await else { return };
    let start = |db: TestDatabase, tune: fn(&mut server::Config)| try_spawn_app_on(db, ServerSeeds::InsecureFixedForTests(SEED), TABLE, tune);
    // The first start creates the key file, 0600.
    let app = start(db, |_| {}).await.map_err(|(_, e)| e).unwrap();
    let db = app.stop().await;
    let key = db.key_file.clone();
    assert_eq!(mode(&key), 0o600);
    chmod(&key, 0o644);
    let (db, e) = match start(db, |_| {}).await {
        Ok(_) => panic!("a server started on a key file of mode 0644"),
        Err(refused) => refused,
    };
    let e = format!("{e:#}");
    assert!(e.contains(&format!("the key file {} has mode 0644", key.display())), "{e}");
    assert!(e.contains("its group or others may read it"), "{e}");
    assert!(e.contains(&format!("chmod 600 {}", key.display())), "{e}");
    chmod(&key, 0o600);
    let app = start(db, |_| {}).await.map_err(|(_, e)| e).unwrap();
    let db = app.stop().await;

    // A key directory: its key 1 is the same key, written 0600 then opened to the group.
    let ring = db.dir().join("keys");
    std::fs::create_dir(&ring).unwrap();
    let one = server::key_path(&ring, 1);
    std::fs::copy(&key, &one).unwrap();
    assert_eq!(mode(&one), 0o600);
    chmod(&one, 0o640);
    let with_ring = |c: &mut server::Config| {
        let dir = Path::new(c.key_file.as_ref().unwrap()).parent().unwrap().join("keys");
        (c.key_file, c.key_dir) = (None, Some(dir));
    };
    let (db, e) = match start(db, with_ring).await {
        Ok(_) => panic!("a server started on a key directory's file of mode 0640"),
        Err(refused) => refused,
    };
    let e = format!("{e:#}");
    assert!(e.contains(&format!("the key file {} has mode 0640", one.display())), "{e}");
    assert!(e.contains(&format!("chmod 600 {}", one.display())), "{e}");
    chmod(&one, 0o600);
    start(db, with_ring).await.map_err(|(_, e)| e).unwrap().shutdown().await;
}
}

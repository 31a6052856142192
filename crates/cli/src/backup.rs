//! `as-capone backup --db URL --out FILE` and `as-capone restore --from FILE
//! --db URL` (docs/backups.md): thin commands over `server::backup`.
//!
//! - SQLite: an online copy through SQLite's backup API while the server
//!   runs, checked and renamed into place; a restore into a new file.
//! - PostgreSQL: `pg_dump --format=custom` and `pg_restore` into a new,
//!   empty database (the client tools must be on PATH).
//!
//! Both print what they did; a restore then reads the database as the
//! server would (schema version, ledger, audit chain) and fails when the
//! ledger or the chain does not hold.

use clap::Args;
use server::backup::{self, BackupPace};
use std::path::PathBuf;
use std::time::Duration;

#[derive(Args, Debug)]
pub struct BackupArgs {
    /// The database to copy: `sqlite://FILE` (or a path) or `postgres://...`.
    #[arg(long, env = "AS_CAPONE_DB")]
    pub db: String,
    /// The backup file to write (a SQLite file, or pg_dump's custom format).
    #[arg(long)]
    pub out: PathBuf,
    /// Replace `--out` when it exists.
    #[arg(long)]
    pub force: bool,
    /// SQLite: pages copied per step of the backup API.
    #[arg(long, default_value_t = 1024)]
    pub pages_per_step: i32,
    /// SQLite: pause between two steps, in milliseconds.
    #[arg(long, default_value_t = 2)]
    pub pause_ms: u64,
}

#[derive(Args, Debug)]
#[command(group = clap::ArgGroup::new("origin").required(true).args(["from", "recovered_by"]))]
pub struct RestoreArgs {
    /// The backup file (`as-capone backup`'s).
    #[arg(long)]
    pub from: Option<PathBuf>,
    /// The database was brought back by other means, with the servers
    /// stopped (a point-in-time recovery, a standby that was behind
    /// promoted): say how (e.g. "pgBackRest to 2026-12-05 10:30"). Nothing
    /// is copied; the database is checked and marked restored, so that the
    /// next start withdraws the blocks that were on sale (docs/backups.md).
    #[arg(long)]
    pub recovered_by: Option<String>,
    /// The new database: `sqlite://FILE` (a new file) or `postgres://...`
    /// (an existing, empty database: `createdb NAME` first).
    #[arg(long)]
    pub db: String,
    /// SQLite: replace an existing database file (never one a server is
    /// serving). PostgreSQL always refuses a database that has tables.
    #[arg(long)]
    pub force: bool,
}

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_current_thread().enable_all().build()?)
}

pub fn run_backup(args: BackupArgs) -> anyhow::Result<()> {
    let out = args.out.display();
    match server::sqlite_path(&args.db) {
        Some(src) => {
            let pace = BackupPace { pages_per_step: args.pages_per_step, pause: Duration::from_millis(args.pause_ms) };
            let done = backup::backup_sqlite(&src, &args.out, pace, args.force)?;
            println!(
                "backup {out}: {} pages in {} steps, {} bytes, {:.3} s, schema version {} ({} migrations), \
                 integrity ok",
                done.pages,
                done.steps,
                done.bytes,
                done.elapsed.as_secs_f64(),
                done.check.schema_version,
                done.check.migrations
            );
        }
        None => {
            let done = backup::pg_dump(&args.db, &args.out, args.force)?;
            println!(
                "backup {out}: pg_dump --format=custom, {} tables' rows, {} bytes, {:.3} s, schema version present",
                done.tables,
                done.bytes,
                done.elapsed.as_secs_f64()
            );
        }
    }
    Ok(())
}

pub fn run_restore(args: RestoreArgs) -> anyhow::Result<()> {
    let (source, checked) = match (&args.from, &args.recovered_by) {
        (Some(from), _) => (format!("backup {}", from.display()), copy_backup(from, &args)?),
        (None, Some(how)) => {
            anyhow::ensure!(!args.force, "--force replaces a database by a backup's copy: not with --recovered-by");
            (how.clone(), None)
        }
        (None, None) => anyhow::bail!("give --from FILE or --recovered-by HOW"),
    };
    let check = match checked {
        Some(check) => check,
        None => runtime()?.block_on(backup::check_database(&args.db))?,
    };
    if !check.is_sound() && args.from.is_some() && server::sqlite_path(&args.db).is_none() {
        // Nothing of a refused backup stays in the database it went into.
        runtime()?.block_on(backup::pg_empty(&args.db))?;
    }
    anyhow::ensure!(check.is_sound(), "{} fails its check: {}; nothing restored", source, refusal(&check));
    println!(
        "restored {source} into {}: schema version {}, {} players, {} tickets sold, {} paper tickets printed and not \
         sold, {} actions; ledger {} ({} entries, sum {} cents); audit chain {} ({} entries, {} to seal at the \
         next start); {} ticket rows of {} blocks as published",
        args.db,
        check.schema_version,
        check.players,
        check.tickets_sold,
        check.tickets_printed,
        check.actions,
        if check.ledger.is_sound() { "sound" } else { "UNSOUND" },
        check.ledger.entries,
        check.ledger.sum_cents,
        if check.audit.first_broken.is_none() { "verified" } else { "BROKEN" },
        check.audit.entries,
        check.audit.unsealed,
        check.rows.tickets,
        check.rows.blocks
    );
    let marked = runtime()?.block_on(server::mark_restored(&args.db, &source))?;
    println!(
        "marked restored (restore {}): it holds what happened until {}; the next server start withdraws the {} \
         online blocks on sale then (their unsold tickets may have been sold and revealed after that point) and \
         emits new ones in their place (docs/backups.md, \"After a restore\")",
        marked.id,
        if marked.point_ms == 0 { "its first event".to_string() } else { format::calendar::iso8601(marked.point_ms) },
        marked.blocks_on_sale
    );
    Ok(())
}

/// Copies the backup `from` into the database `--db`. A SQLite backup is
/// read as the server would before it is copied, and its check is returned:
/// the copy is the same bytes (checked again by SQLite's own checks).
fn copy_backup(from: &std::path::Path, args: &RestoreArgs) -> anyhow::Result<Option<backup::DatabaseCheck>> {
    match server::sqlite_path(&args.db) {
        Some(path) => {
            // The backup read as the server would, before anything is written.
            let url = format!("sqlite://{}", from.display());
            backup::check_sqlite_file(from)?;
            let check = runtime()?.block_on(backup::check_database(&url))?;
            anyhow::ensure!(
                check.is_sound(),
                "{} fails its check: {}; nothing restored",
                from.display(),
                refusal(&check)
            );
            backup::restore_sqlite(from, &path, args.force)?;
            Ok(Some(check))
        }
        None => {
            anyhow::ensure!(
                !args.force,
                "--force is for SQLite files: a PostgreSQL restore goes into a new, empty database (createdb NAME)"
            );
            runtime()?.block_on(backup::pg_restore(from, &args.db))?;
            Ok(None)
        }
    }
}

/// Why a database's check fails, in words: the first thing that differs.
fn refusal(check: &backup::DatabaseCheck) -> String {
    if let Some(why) = &check.schema_difference {
        return format!("{why}: a database changed outside as-capone is not believed");
    }
    if let Some(why) = &check.rows.first_mismatch {
        return why.clone();
    }
    if let Some(pos) = check.audit.first_broken {
        return format!("the audit chain breaks at entry {pos}");
    }
    format!("the ledger is not sound: {:?}", check.ledger)
}

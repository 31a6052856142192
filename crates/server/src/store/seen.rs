//! A database put back to an earlier point without a word is found at the
//! next start: whatever brought it back (a backup, a point-in-time
//! recovery, a standby that was behind), it ends up knowing it was restored.
//!
//! `as-capone restore` marks what it restores (`restores.rs`); a
//! point-in-time recovery, a standby promoted while it was behind, or a
//! file copied back may not be marked. So each server records outside the
//! database, in its `seen_file` (`Config::seen_path`: by default
//! `DB_FILE.seen` beside a SQLite file; configure it for PostgreSQL, on
//! the server's own disk), how far it saw the audit chain of each database
//! it served, by the database's identity (`database_identity`, made once
//! at random, kept by every copy): every second while it serves, and once
//! a restore is settled. At the next start, a database whose sealed chain
//! ends before what this server saw of the same identity went back in
//! time: it is marked restored (source "found behind ..."), and settled as
//! any restore before anything is served. A database no server saw further
//! is never marked (another database, or the same one moving on).
//!
//! What it cannot see: a restore to less than a second before the last
//! record, a server that never served the database (a new machine), and a
//! `seen_file` put back with the database (a file-system snapshot of both).

use super::clock::now_ms;
use super::db::on_db;
use super::shell::Store;
use domain::{Changes, Effect, RestoreWrite};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

/// What a server saw of one database.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
pub struct Seen {
    /// The last sealed entry's position in its audit chain.
    pub chain_pos: i64,
    /// When it was seen (unix ms).
    pub seen_ms: i64,
}

/// The file's content: database identity to what was seen of it.
type SeenFile = BTreeMap<String, Seen>;

fn read(path: &Path) -> SeenFile {
    std::fs::read_to_string(path).ok().and_then(|t| serde_json::from_str(&t).ok()).unwrap_or_default()
}

/// Writes `seen` for `id` into the file at `path` (a whole new file,
/// renamed into place); `only_forward`: unless the file holds more.
fn write(path: &Path, id: &str, seen: Seen, only_forward: bool) -> std::io::Result<()> {
    let mut all = read(path);
    if only_forward && all.get(id).is_some_and(|s| s.chain_pos >= seen.chain_pos) {
        return Ok(());
    }
    all.insert(id.to_string(), seen);
    let temp = path.with_extension(format!("{}.tmp", std::process::id()));
    std::fs::write(&temp, serde_json::to_vec_pretty(&all).expect("a map serializes"))?;
    std::fs::rename(&temp, path)
}

impl Store {
    /// The database's identity and its last sealed chain position.
    async fn seen_now(&self) -> anyhow::Result<(String, Seen)> {
        let (id, pos): (String, Option<i64>) = on_db!(&self.db, pool => sqlx::query_as(
            "SELECT (SELECT id FROM database_identity WHERE one = 1),
                    (SELECT MAX(chain_pos) FROM audit_log)",
        )
        .fetch_one(pool)
        .await?);
        Ok((id, Seen { chain_pos: pos.unwrap_or(0), seen_ms: now_ms() }))
    }

    /// At start, before restores are settled: marks the database restored
    /// when this server saw its chain further (see the module doc).
    pub(super) async fn find_going_back(&self, path: &Path) -> anyhow::Result<()> {
        let (id, now) = self.seen_now().await?;
        let Some(saw) = read(path).get(&id).copied() else { return Ok(()) };
        if now.chain_pos >= saw.chain_pos {
            return Ok(());
        }
        let pending: i64 = on_db!(&self.db, pool => sqlx::query_scalar(
            "SELECT COUNT(*) FROM restores WHERE settled_ms IS NULL",
        )
        .fetch_one(pool)
        .await?);
        if pending > 0 {
            return Ok(()); // marked by `as-capone restore`: settled next
        }
        let point_ms: i64 = on_db!(&self.db, pool => sqlx::query_scalar(super::restores::POINT).fetch_one(pool).await?);
        let source = format!(
            "found behind at a start: its audit chain ends at entry {}, this server saw it reach {} at {} ({})",
            now.chain_pos,
            saw.chain_pos,
            format::calendar::iso8601(saw.seen_ms),
            path.display()
        );
        tracing::warn!("this database went back in time: {source}");
        let write = RestoreWrite::Mark { point_ms, marked_ms: now_ms(), source };
        let mut units = self.writer.units().await?;
        units.put(Changes { restore: Some(write), ..Changes::none(Effect::Emission) }).await?;
        units.commit().await?;
        Ok(())
    }

    /// Records what this server sees of the database now; `reset`: even
    /// if the file says more (after a restore is settled).
    pub(super) async fn record_seen(&self, path: &Path, reset: bool) -> anyhow::Result<()> {
        let (id, now) = self.seen_now().await?;
        let path = path.to_path_buf();
        tokio::task::spawn_blocking(move || write(&path, &id, now, !reset)).await??;
        Ok(())
    }
}

/// Records what the server sees, every second, until `stop`.
pub async fn watch(
    store: std::sync::Arc<Store>,
    path: std::path::PathBuf,
    stop: impl std::future::Future<Output = ()>,
) {
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    tokio::pin!(stop);
    let mut warned = false;
    loop {
        tokio::select! {
            _ = &mut stop => break,
            _ = tick.tick() => {
                if let Err(e) = store.record_seen(&path, false).await
                    && !std::mem::replace(&mut warned, true)
                {
                    tracing::warn!(error = %e, file = %path.display(), "cannot record how far this server saw the audit chain");
                }
            }
        }
    }
    let _ = store.record_seen(&path, false).await;
}

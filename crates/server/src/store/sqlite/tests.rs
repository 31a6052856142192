//! The SQLite shell's tests: the group commit's retry with savepoints, a
//! migration's rebuild, the files' modes, the writer's memory, the WAL's
//! restarts.

use super::connect::{connect_options, write_connection};
use super::memory::{InFlightKeys, WriterState};
use super::unit::SqliteUnit;
use super::writer::{Job, Opened, open, run_batch, try_batch};
use crate::config::Config;
use crate::keys::{Keyring, ServerKey};
use crate::metrics::Metrics;
use crate::store::db::Db;
use crate::store::schema;
use crate::store::wallet_loads::keyed_in_flight_sql;
use domain::error::{AppError, StoreError};
use domain::usecase::{self, Op};
use domain::{Changes, ForSale, RoundState, TicketId, TicketRow, WalletWrite};
use rusqlite::{Connection, OptionalExtension};
use std::sync::Arc;
use tokio::sync::oneshot;

fn job(op: Op) -> Job {
    let (reply, _) = oneshot::channel();
    Job { op, reply }
}

fn new_player(token_hash: &str) -> Op {
    Op::CreatePlayer(usecase::CreatePlayer {
        token_hash: token_hash.into(),
        name: None,
        start_balance: 500,
        credentials: None,
        recovery_hash: None,
    })
}

/// A new database `test.db` in a temporary directory, opened with its
/// writer running.
async fn opened() -> (tempfile::TempDir, Arc<Keyring>, Arc<Metrics>, Opened) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("test.db");
    let config = Config { db: format!("sqlite://{}", file.display()), ..Config::default() };
    let keys = Arc::new(Keyring::new(ServerKey::from_bytes([1; 32]), None));
    let metrics = Arc::new(Metrics::new());
    let opened = open(&config, metrics.clone(), keys.clone()).await.unwrap();
    (dir, keys, metrics, opened)
}

fn count(conn: &Connection, sql: &str) -> i64 {
    conn.query_row(sql, [], |r| r.get(0)).unwrap()
}

/// A batch runs without savepoints; a unit that fails after writing
/// (here a guarded write that finds no row: the end of the sale of an
/// emission that does not exist) makes the batch run again with
/// savepoints, and only that unit is undone: the requests before and
/// after it in the same batch are committed, once.
#[tokio::test]
async fn a_unit_failing_after_writing_undoes_itself_alone() {
    let (dir, keys, _, opened) = opened().await;
    let file = dir.path().join("test.db");
    // The test drives batches itself on a second write connection; the
    // opened writer stays idle.
    let mut conn = write_connection(&file).unwrap();
    let mut state = WriterState::load(&Db::Sqlite(opened.read.clone()), keys).await.unwrap();
    let close_unknown = Changes {
        close: Some(domain::Close::new(99, 1, (2026, 12, 5), None, 30)),
        audit: Some(domain::AuditRecord { created_ms: 1, kind: "sale_ended", data_json: "{}".into() }),
        ..Changes::none(domain::Effect::Emission)
    };
    let jobs = [job(new_player("a")), job(Op::Apply(Box::new(close_unknown))), job(new_player("b"))];

    // Without savepoints the batch gives up, and nothing stays written.
    assert!(try_batch(&mut conn, &mut state, &jobs, 1, false).is_none());
    assert!(conn.is_autocommit(), "the failed attempt was rolled back");
    assert_eq!(count(&conn, "SELECT count(*) FROM players"), 0);

    let results = run_batch(&mut conn, &mut state, &jobs);
    assert!(results[0].is_ok() && results[2].is_ok(), "{results:?}");
    assert!(
        matches!(&results[1], Err(AppError::Storage(StoreError::Stale(m))) if m.contains("close")),
        "{:?}",
        results[1]
    );
    assert_eq!(count(&conn, "SELECT count(*) FROM players WHERE token_hash IN ('a', 'b')"), 2);
    assert_eq!(count(&conn, "SELECT count(*) FROM audit_log WHERE kind = 'sale_ended'"), 0);
    // Each new player's play money was written once.
    assert_eq!(count(&conn, "SELECT count(*) FROM movements"), 2);
    drop(conn);
    opened.writer.close().await.unwrap();
}

/// An operator's player (7, `op-7`) and a block of four tickets, three
/// sold to them: the rows the wallet's rounds below refer to.
const PLAYER_7_AND_FOUR_TICKETS: &str = "
    INSERT INTO accounts (id, name, kind) VALUES (100, 'player:7', 'player');
    INSERT INTO players (id, token_hash, account_id, created_ms, operator_ref) VALUES (7, 't', 100, 1, 'op-7');
    INSERT INTO emissions (id, code, channel, table_toml, table_digest, price_cents, block_size, seed_salt, created_ms)
         VALUES (1, 'ACP', 'online', '', 'd', 300, 4, 's', 1);
    INSERT INTO blocks (id, emission_id, number, size, root, chunk_roots, created_ms) VALUES (1, 1, 1, 4, 'r', '', 1);
    INSERT INTO tickets (id, block_id, position, serial, play_code_hash, schedule_row, prize_5, prize_6, prize_7,
                         prize_8, commitment, status, owner_id, sold_ms)
         VALUES (1, 1, 1, 'ACP-1', 'h1', 0, 3, 10, 100, 1000, 'c1', 'sold', 7, 5),
                (2, 1, 2, 'ACP-2', 'h2', 0, 3, 10, 100, 1000, 'c2', 'sold', 7, 6),
                (3, 1, 3, 'ACP-3', 'h3', 0, 3, 10, 100, 1000, 'c3', 'unsold', NULL, NULL),
                (4, 1, 4, 'ACP-4', 'h4', 0, 3, 10, 100, 1000, 'c4', 'sold', 7, 8);";

/// Migration 0019 rebuilds the operator's rounds and outbox WITHOUT
/// ROWID with the same rows, on a database of schema 18 holding rounds
/// in every state and owed and acknowledged entries, with foreign keys
/// on as `open` migrates: the rows are the same, every reference holds
/// (the outbox's now points at the rebuilt rounds), and the indexes are
/// the new ones.
#[tokio::test]
async fn migration_19_rebuilds_the_rounds_and_the_outbox_with_the_same_rows() {
    use sqlx::{Connection as _, Executor as _};
    let dir = tempfile::tempdir().unwrap();
    let opts = connect_options(&format!("sqlite://{}", dir.path().join("v18.db").display())).unwrap();
    let mut conn = sqlx::SqliteConnection::connect_with(&opts).await.unwrap();
    schema::SQLITE.run_to(18, &mut conn).await.unwrap();
    conn.execute(PLAYER_7_AND_FOUR_TICKETS).await.unwrap();
    conn.execute(
        "INSERT INTO wallet_rounds (round_id, ticket_id, attempt, player_id, price_cents, state, idempotency_key,
                                    refusal, created_ms, settled_ms)
              VALUES ('ACP-1.1', 1, 1, 7, 300, 'sold', 'k1', NULL, 10, 11),
                     ('ACP-2.1', 2, 1, 7, 300, 'debiting', 'k2', NULL, 12, NULL),
                     ('ACP-3.1', 3, 1, 7, 300, 'refused', NULL, 'insufficient_funds', 13, 14),
                     ('ACP-3.2', 3, 2, 7, 300, 'rolling_back', NULL, NULL, 15, 16);
         INSERT INTO wallet_outbox (transaction_id, round_id, kind, amount_cents, body_json, created_ms, attempts,
                                    next_ms, last_error, acked_ms)
              VALUES ('ACP-1.1.credit', 'ACP-1.1', 'credit', 1000, '{\"c\":1}', 20, 2, 21, 'timeout', 22),
                     ('ACP-3.2.rollback', 'ACP-3.2', 'rollback', 300, '{\"r\":1}', 16, 0, 16, NULL, NULL);",
    )
    .await
    .unwrap();
    const ROUNDS: &str = "SELECT group_concat(quote(round_id) || quote(ticket_id) || quote(attempt) || quote(player_id)
            || quote(price_cents) || quote(state) || quote(idempotency_key) || quote(refusal) || quote(created_ms)
            || quote(settled_ms), ';') FROM (SELECT * FROM wallet_rounds ORDER BY round_id)";
    const OUTBOX: &str = "SELECT group_concat(quote(transaction_id) || quote(round_id) || quote(kind)
            || quote(amount_cents) || quote(body_json) || quote(created_ms) || quote(attempts) || quote(next_ms)
            || quote(last_error) || quote(acked_ms), ';') FROM (SELECT * FROM wallet_outbox ORDER BY transaction_id)";
    async fn rows(conn: &mut sqlx::SqliteConnection) -> (String, String) {
        let r: String = sqlx::query_scalar(ROUNDS).fetch_one(&mut *conn).await.unwrap();
        let o: String = sqlx::query_scalar(OUTBOX).fetch_one(&mut *conn).await.unwrap();
        (r, o)
    }
    let before = rows(&mut conn).await;
    assert!(before.0.contains("'rolling_back'") && before.1.contains("'timeout'"), "{before:?}");

    schema::SQLITE.run(&mut conn).await.unwrap();
    assert_eq!(rows(&mut conn).await, before);
    let broken: Vec<(String,)> =
        sqlx::query_as("SELECT \"table\" FROM pragma_foreign_key_check").fetch_all(&mut conn).await.unwrap();
    assert!(broken.is_empty(), "{broken:?}");
    let ok: String = sqlx::query_scalar("PRAGMA integrity_check").fetch_one(&mut conn).await.unwrap();
    assert_eq!(ok, "ok");
    for table in ["wallet_rounds", "wallet_outbox"] {
        let sql: String = sqlx::query_scalar("SELECT sql FROM sqlite_schema WHERE name = $1")
            .bind(table)
            .fetch_one(&mut conn)
            .await
            .unwrap();
        assert!(sql.ends_with("WITHOUT ROWID"), "{sql}");
    }
    let indexes: Vec<String> = sqlx::query_scalar(
        "SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name IN ('wallet_rounds', 'wallet_outbox')
         ORDER BY name",
    )
    .fetch_all(&mut conn)
    .await
    .unwrap();
    assert_eq!(
        indexes,
        // The keys are the tables themselves; UNIQUE (ticket_id, attempt) stays.
        ["sqlite_autoindex_wallet_rounds_2", "wallet_outbox_due", "wallet_rounds_created", "wallet_rounds_in_flight"]
    );
    // The outbox refers to the rebuilt rounds: an entry of no round is refused.
    let orphan = conn
        .execute(
            "INSERT INTO wallet_outbox (transaction_id, round_id, kind, amount_cents, body_json, created_ms, next_ms)
             VALUES ('ACP-9.1.credit', 'ACP-9.1', 'credit', 1, '{}', 1, 1)",
        )
        .await
        .unwrap_err();
    assert!(orphan.to_string().contains("FOREIGN KEY"), "{orphan}");
    // A second round of the same ticket and attempt is refused too.
    let twice = conn
        .execute(
            "INSERT INTO wallet_rounds (round_id, ticket_id, attempt, player_id, price_cents, state, created_ms)
             VALUES ('ACP-3.2bis', 3, 2, 7, 300, 'debiting', 30)",
        )
        .await
        .unwrap_err();
    assert!(twice.to_string().contains("UNIQUE"), "{twice}");
    conn.close().await.unwrap();
}

/// A new database, its WAL, its shared memory and its lock file are
/// readable and writable by their owner only (0600): the database holds
/// password hashes and the hashes of players' tokens.
#[cfg(unix)]
#[tokio::test]
async fn a_new_database_and_its_files_are_private() {
    use std::os::unix::fs::PermissionsExt;
    let (dir, _, _, opened) = opened().await;
    opened.writer.write(new_player("p")).await.unwrap();
    for name in ["test.db", "test.db-wal", "test.db-shm", "test.db.lock"] {
        let mode = std::fs::metadata(dir.path().join(name)).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{name}: {mode:o}");
    }
    opened.writer.close().await.unwrap();
}

/// The round reserved for an operator's debit is remembered, with its
/// ticket, from the reservation until it leaves `debiting`, so the
/// settlement reads no row (`store/wallet.rs`, `round`);
/// a sale of another ticket than the queue's next is not remembered;
/// a failed write (`reload`) forgets it with the rest of the memory.
#[tokio::test]
async fn a_held_ticket_is_remembered_from_its_reservation_to_its_settlement() {
    use domain::{Effect, Sale};
    let (dir, keys, _, opened) = opened().await;
    let conn = write_connection(&dir.path().join("test.db")).unwrap();
    let mut state = WriterState::load(&Db::Sqlite(opened.read.clone()), keys).await.unwrap();
    let ticket = |id: TicketId| ForSale {
        ticket_id: id,
        serial: format!("ACP-001-00001-{id:06}-17"),
        prizes: engine::PrizeSchedule::new([300, 1000, 10_000, 1_000_000]),
        price_cents: 300,
        commitment: "c".into(),
        server_seed: [7; 32],
        last_attempt: Some(0),
    };
    let reserve = |id: TicketId, round: &str| Changes {
        sale: Some(Sale { ticket_id: id, owner: 5, sold_ms: 1 }),
        wallet: vec![WalletWrite::NewRound {
            round: round.into(),
            ticket_id: id,
            attempt: 1,
            player: 5,
            operator_ref: "op-5".into(),
            price_cents: 300,
            key: Some(format!("key-{id}")),
            created_ms: 1,
        }],
        ..Changes::none(Effect::Wallet)
    };
    let settle = |round: &str, to: RoundState| Changes {
        wallet: vec![WalletWrite::Round {
            round: round.into(),
            from: RoundState::Debiting,
            to,
            refusal: None,
            settled_ms: 2,
        }],
        ..Changes::none(Effect::Wallet)
    };
    state.for_sale.extend([ticket(1), ticket(2), ticket(3)]);
    // The keyed rounds in flight, loaded from the database (none yet).
    let loaded = InFlightKeys::load(&conn).unwrap();
    assert!(loaded.by_key.is_empty() && loaded.key_of.is_empty());
    state.in_flight_keys = Some(loaded);
    state.written(&reserve(1, "R1.1"));
    let held = &state.held["R1.1"];
    assert_eq!((held.ticket.ticket_id, held.round.ticket_id, held.round.player), (1, 1, 5));
    assert_eq!((held.round.round.id(), held.round.state), ("R1.1".to_string(), RoundState::Debiting));
    assert_eq!((held.round.operator_ref.as_str(), held.round.idempotency_key.as_deref()), ("op-5", Some("key-1")));
    assert_eq!(Some(held.round.wallet_account), state.operator_wallet);
    state.written(&reserve(9, "R9.1"));
    assert!(!state.held.contains_key("R9.1"), "not the queue's next ticket");
    state.written(&reserve(2, "R2.1"));
    state.written(&reserve(3, "R3.1"));
    assert_eq!(state.held.len(), 3);
    // Each keyed round is in flight, the queue's next ticket or not.
    let in_flight = |state: &WriterState, id: TicketId| {
        state.in_flight_keys.as_ref().unwrap().by_key.get(&(5, format!("key-{id}"))).map(|r| (r.round.id(), r.state))
    };
    assert_eq!(in_flight(&state, 1), Some(("R1.1".to_string(), RoundState::Debiting)));
    assert_eq!(in_flight(&state, 9), Some(("R9.1".to_string(), RoundState::Debiting)));
    state.written(&settle("R1.1", RoundState::Sold));
    state.written(&settle("R2.1", RoundState::RollingBack));
    assert!(!state.held.contains_key("R1.1") && !state.held.contains_key("R2.1"), "settled");
    assert_eq!(state.held.get("R3.1").map(|t| t.ticket.ticket_id), Some(3), "still debiting");
    // Sold: no longer in flight, and remembered by its ticket for its
    // prize's credit; rolling back: still in flight, until released.
    assert_eq!(in_flight(&state, 1), None);
    let sold = &state.sold_rounds[&1];
    assert_eq!((sold.round.id(), sold.state, sold.player, sold.price_cents), ("R1.1".into(), RoundState::Sold, 5, 300));
    assert_eq!(in_flight(&state, 2), Some(("R2.1".to_string(), RoundState::RollingBack)));
    assert!(!state.sold_rounds.contains_key(&2));
    let released = Changes {
        wallet: vec![WalletWrite::Round {
            round: "R2.1".into(),
            from: RoundState::RollingBack,
            to: RoundState::Released,
            refusal: None,
            settled_ms: 3,
        }],
        ..Changes::none(Effect::Wallet)
    };
    state.written(&released);
    assert_eq!(in_flight(&state, 2), None);
    assert_eq!(state.in_flight_keys.as_ref().unwrap().key_of.len(), 2, "R3.1 and R9.1");
    // The sold round is forgotten when its game ends.
    let mut finished = TicketRow {
        id: 1,
        owner: Some(5),
        ticket: domain::api::SoldTicket {
            serial: "ACP-001-00001-000001-17".into(),
            price_cents: 300,
            client_seed: None,
            server_seed: [7; 32],
            commitment: "c".into(),
            channel: domain::api::Channel::Online,
            retail: None,
            sold_ms: Some(1),
            game: engine::Game::new(engine::PrizeSchedule::new([300, 1000, 10_000, 1_000_000])),
        },
    };
    let game = |row: &TicketRow| Changes {
        game: Some(domain::GameWrite { row: row.clone(), from_seq: Some(0), finished_ms: None, phase_changed: false }),
        ..Changes::none(Effect::Wallet)
    };
    state.written(&game(&finished));
    assert!(state.sold_rounds.contains_key(&1), "its game is not over");
    let mut draws = engine::FastSource::new([1; 32], 0);
    while !finished.ticket.game.is_finished() {
        let game = &mut finished.ticket.game;
        let action = match game.phase().name() {
            "play" => engine::Action::Play { card: game.hand().iter().next().expect("a card") },
            _ => engine::Action::Draw,
        };
        game.apply(action, &mut draws, &mut engine::Discard).unwrap();
    }
    state.written(&game(&finished));
    assert!(!state.sold_rounds.contains_key(&1), "its game is over");
    // A launch's player's reference is remembered from its write.
    let launch = Changes {
        wallet: vec![WalletWrite::OperatorPlayer { player: 8, reference: "op-8".into() }],
        ..Changes::none(Effect::Wallet)
    };
    state.written(&launch);
    assert_eq!(state.operator_refs.get(&8).map(String::as_str), Some("op-8"));
    state.for_sale.push_back(ticket(4));
    state.written(&reserve(4, "R4.1"));
    assert!(state.sold_rounds.is_empty() && in_flight(&state, 4).is_some());
    state.written(&settle("R4.1", RoundState::Sold));
    assert!(!state.sold_rounds.is_empty());
    state.reload(&conn);
    assert!(state.held.is_empty() && state.operator_refs.is_empty(), "forgotten after a failed write");
    assert!(state.in_flight_keys.is_none() && state.sold_rounds.is_empty(), "the database answers again");
    opened.writer.close().await.unwrap();
}

/// A keyed purchase's reservation learns whether its key has a round in
/// flight from the writer's memory, loaded from the database when first
/// asked: every keyed round `debiting` or `rolling_back` (here written
/// behind the writer, as a server restarted with rounds in flight finds
/// them), none of the others; and a key with none is a known "none".
#[tokio::test]
async fn the_keyed_rounds_in_flight_are_loaded_once_and_answered_from_memory() {
    use crate::store::wallet_loads::Fetch as _;
    let (dir, keys, _, opened) = opened().await;
    let mut conn = write_connection(&dir.path().join("test.db")).unwrap();
    conn.execute_batch(PLAYER_7_AND_FOUR_TICKETS).unwrap();
    conn.execute_batch(
        "INSERT INTO wallet_rounds (round_id, ticket_id, attempt, player_id, price_cents, state, idempotency_key,
                                    refusal, created_ms, settled_ms)
              VALUES ('ACP-1.1', 1, 1, 7, 300, 'sold', 'k1', NULL, 10, 11),
                     ('ACP-2.1', 2, 1, 7, 300, 'debiting', 'k2', NULL, 12, NULL),
                     ('ACP-3.1', 3, 1, 7, 300, 'rolling_back', 'k3', NULL, 13, 14),
                     ('ACP-4.1', 4, 1, 7, 300, 'debiting', NULL, NULL, 15, NULL);",
    )
    .unwrap();
    let mut state = WriterState::load(&Db::Sqlite(opened.read.clone()), keys).await.unwrap();
    let mut unit = SqliteUnit { conn: &mut conn, state: &mut state, savepoints: false, wrote: false, open: false };
    let known = |unit: &mut SqliteUnit<'_>, key: &str| {
        unit.pending_remembered(7, key).unwrap().map(|r| r.map(|r| (r.round.id(), r.state, r.price_cents)))
    };
    assert_eq!(known(&mut unit, "k2"), Some(Some(("ACP-2.1".into(), RoundState::Debiting, 300))));
    assert_eq!(known(&mut unit, "k3"), Some(Some(("ACP-3.1".into(), RoundState::RollingBack, 300))));
    assert_eq!(known(&mut unit, "k1"), Some(None), "sold: not in flight");
    assert_eq!(known(&mut unit, "k9"), Some(None), "no round: a known none");
    assert_eq!(unit.pending_remembered(8, "k2").unwrap().map(|r| r.is_none()), Some(true), "another player's key");
    let loaded = unit.state.in_flight_keys.as_ref().unwrap();
    assert_eq!((loaded.by_key.len(), loaded.key_of.len()), (2, 2), "the unkeyed round is not there");
    // The same answers as the database's query.
    for key in ["k1", "k2", "k3", "k9"] {
        let sql = keyed_in_flight_sql() + " AND r.idempotency_key = ?1";
        let read: Option<String> = unit.conn.query_row(&sql, [key], |r| r.get("round_id")).optional().unwrap();
        assert_eq!(known(&mut unit, key).unwrap().map(|r| r.0), read, "{key}");
    }
    // Nothing is remembered of a sold round but from its settlement: the database answers.
    assert!(unit.sold_remembered(1).is_none());
    drop(conn);
    opened.writer.close().await.unwrap();
}

/// Under a steady stream of commits the WAL starts again from its
/// beginning (the writer finishes the background checkpoints): its file
/// stays a few thousand frames long while about 45 000 are written.
/// Without the writer's part it passes 12 000 after about 800 commits
/// (the automatic checkpoint waits for 20 000).
#[tokio::test]
async fn the_wal_starts_again_under_a_steady_stream_of_commits() {
    let (dir, _, metrics, opened) = opened().await;
    let frame = 24 + 4096;
    let wal = dir.path().join("test.db-wal");
    // One request at a time: one commit each, of about fifteen pages.
    for player in 0..3000 {
        opened.writer.write(new_player(&format!("p{player}"))).await.unwrap();
        if player % 100 == 99 {
            let frames = std::fs::metadata(&wal).unwrap().len() / frame;
            assert!(frames < 12_000, "the WAL grew to {frames} frames after {player} commits");
        }
    }
    let players: i64 = sqlx::query_scalar("SELECT count(*) FROM players").fetch_one(&opened.read).await.unwrap();
    assert_eq!(players, 3000);
    let restarts = metrics.writer_checkpoint_seconds.get_sample_count();
    assert!(restarts >= 2, "the writer finished {restarts} checkpoints in {players} commits");
    opened.writer.close().await.unwrap();
}

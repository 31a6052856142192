//! [`WriterState`]: what only the SQLite writer changes, kept in memory
//! (the module's doc says why that is right), and what it learns from each
//! unit written.

use crate::keys::Keyring;
use crate::store::audit::{self, Head};
use crate::store::db::Db;
use crate::store::error::DbResult;
use crate::store::wallet_loads::{keyed_in_flight_sql, owned_sqlite, round_row};
use domain::error::StoreError;
use domain::{Account, AccountId, Changes, ForSale, LimitsRow, PlayerId, PlayerWrite, TicketId, TicketRow};
use domain::{Reserved, RoundRow, RoundState, WalletWrite};
use rusqlite::{Connection, OptionalExtension};
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

/// Most rows remembered; past that the memory starts again empty.
pub(super) const CACHE_LIMIT: usize = 200_000;

/// What only the writer changes, kept in memory (see the module's doc).
pub(super) struct WriterState {
    pub(super) keys: Arc<Keyring>,
    pub(super) audit_head: Head,
    /// Sold, unfinished tickets by serial, as last written.
    pub(super) tickets: HashMap<String, TicketRow>,
    pub(super) accounts: HashMap<PlayerId, Account>,
    /// Players' limits (`None`: the player set none), as last read or written.
    pub(super) limits: HashMap<PlayerId, Option<LimitsRow>>,
    /// The next unsold tickets, in sale order.
    pub(super) for_sale: VecDeque<ForSale>,
    /// The rounds of an operator's debit, by round id, with the ticket each
    /// holds, from the reservation until the round leaves `debiting`: the
    /// settlement reads no row (operator mode).
    pub(super) held: HashMap<String, Reserved>,
    /// Players' operator references (set once by a launch, never changed).
    pub(super) operator_refs: HashMap<PlayerId, String>,
    /// The ledger's clearing account of the operator's wallet.
    pub(super) operator_wallet: Option<AccountId>,
    /// Every round of an Idempotency-Key in flight (`debiting` or
    /// `rolling_back`), so that a keyed purchase's reservation reads no row
    /// to learn that its key has none (operator mode). Loaded from the
    /// database when first asked; `None` until then, and again after a
    /// failed write or past [`CACHE_LIMIT`]: then the database answers.
    pub(super) in_flight_keys: Option<InFlightKeys>,
    /// Sold rounds by ticket, from their settlement until their game ends:
    /// whose operator's wallet a prize is credited to, read from no row.
    pub(super) sold_rounds: HashMap<TicketId, RoundRow>,
}

/// The rounds of an Idempotency-Key in flight: by player and key, and each
/// one's player and key by round id (a settlement names only its round).
#[derive(Default)]
pub(super) struct InFlightKeys {
    pub(super) by_key: HashMap<(PlayerId, String), RoundRow>,
    pub(super) key_of: HashMap<String, (PlayerId, String)>,
}

impl InFlightKeys {
    /// Every keyed round in flight, from the writer's connection.
    pub(super) fn load(conn: &Connection) -> Result<InFlightKeys, StoreError> {
        let mut keys = InFlightKeys::default();
        let mut stmt = conn.prepare_cached(&keyed_in_flight_sql()).db()?;
        let mut rows = stmt.query([]).db()?;
        while let Some(row) = rows.next().db()? {
            keys.insert(round_row(&owned_sqlite(row).db()?)?);
        }
        Ok(keys)
    }

    pub(super) fn insert(&mut self, round: RoundRow) {
        if let Some(key) = &round.idempotency_key {
            self.key_of.insert(round.round.id(), (round.player, key.clone()));
            self.by_key.insert((round.player, key.clone()), round);
        }
    }

    /// Round `round` moved to `to`: still in flight, or gone from here.
    pub(super) fn moved(&mut self, round: &str, to: RoundState) {
        if matches!(to, RoundState::Debiting | RoundState::RollingBack) {
            if let Some(r) = self.key_of.get(round).and_then(|k| self.by_key.get_mut(k)) {
                r.state = to;
            }
        } else if let Some(k) = self.key_of.remove(round) {
            self.by_key.remove(&k);
        }
    }
}

impl WriterState {
    pub(super) async fn load(db: &Db, keys: Arc<Keyring>) -> Result<WriterState, StoreError> {
        Ok(WriterState {
            keys,
            audit_head: audit::head(db).await?,
            tickets: HashMap::new(),
            accounts: HashMap::new(),
            limits: HashMap::new(),
            for_sale: VecDeque::new(),
            held: HashMap::new(),
            operator_refs: HashMap::new(),
            in_flight_keys: None,
            sold_rounds: HashMap::new(),
            operator_wallet: match db {
                Db::Sqlite(pool) => sqlx::query_scalar("SELECT id FROM accounts WHERE name = 'house:operator_wallet'")
                    .fetch_optional(pool)
                    .await
                    .db()?,
                _ => None,
            },
        })
    }

    pub(super) fn reload(&mut self, conn: &Connection) {
        self.tickets.clear();
        self.accounts.clear();
        self.limits.clear();
        self.for_sale.clear();
        self.held.clear();
        self.operator_refs.clear();
        self.in_flight_keys = None;
        self.sold_rounds.clear();
        match conn.query_row(audit::HEAD_SELECT, [], |r| Ok((r.get(0)?, r.get(1)?))).optional() {
            Ok(row) => self.audit_head = Head::stored(row),
            Err(e) => tracing::error!(error = %e, "reloading the audit chain's head"),
        }
    }

    pub(super) fn remember_ref(&mut self, player: PlayerId, reference: &str) {
        if self.operator_refs.len() >= CACHE_LIMIT {
            self.operator_refs.clear();
        }
        self.operator_refs.insert(player, reference.to_string());
    }

    /// What the memory learns from a unit written in the transaction.
    pub(super) fn written(&mut self, changes: &Changes) {
        if let Some(sale) = &changes.sale
            && self.for_sale.front().is_some_and(|f| f.ticket_id == sale.ticket_id)
        {
            let sold = self.for_sale.pop_front();
            let new_round = changes
                .wallet
                .iter()
                .find(|w| matches!(w, WalletWrite::NewRound { ticket_id, .. } if *ticket_id == sale.ticket_id));
            if let (Some(ticket), Some(new_round), Some(wallet_account)) = (sold, new_round, self.operator_wallet)
                && let Some((id, round)) = held_round(new_round, wallet_account)
            {
                if self.held.len() >= CACHE_LIMIT {
                    self.held.clear();
                }
                self.held.insert(id, Reserved { round, ticket });
            }
        }
        for w in &changes.wallet {
            match w {
                WalletWrite::NewRound { key: Some(_), .. } if self.in_flight_keys.is_some() => {
                    match self.operator_wallet.and_then(|account| held_round(w, account)) {
                        Some((_, round))
                            if self.in_flight_keys.as_ref().is_some_and(|k| k.by_key.len() < CACHE_LIMIT) =>
                        {
                            self.in_flight_keys.as_mut().expect("checked just above").insert(round);
                        }
                        // Not known whole any more: the database answers.
                        _ => self.in_flight_keys = None,
                    }
                }
                WalletWrite::Round { round, to, .. } => {
                    if let Some(keys) = &mut self.in_flight_keys {
                        keys.moved(round, *to);
                    }
                    if *to != RoundState::Debiting
                        && let Some(held) = self.held.remove(round)
                        && *to == RoundState::Sold
                    {
                        if self.sold_rounds.len() >= CACHE_LIMIT {
                            self.sold_rounds.clear();
                        }
                        self.sold_rounds
                            .insert(held.round.ticket_id, RoundRow { state: RoundState::Sold, ..held.round });
                    }
                }
                WalletWrite::OperatorPlayer { player, reference } => self.remember_ref(*player, reference),
                _ => {}
            }
        }
        if let Some(g) = &changes.game {
            if g.row.ticket.game.is_finished() {
                self.tickets.remove(&g.row.ticket.serial);
                self.sold_rounds.remove(&g.row.id);
            } else {
                if self.tickets.len() >= CACHE_LIMIT {
                    self.tickets.clear();
                }
                self.tickets.insert(g.row.ticket.serial.clone(), g.row.clone());
            }
        }
        if let Some(b) = changes.movement.as_ref().and_then(|m| m.player_balance)
            && let Some(a) = self.accounts.get_mut(&b.player)
        {
            a.balance_cents = b.after;
        }
        if let Some(domain::RetailWrite::Owner { serial, .. }) = &changes.retail {
            self.tickets.remove(serial);
        }
        if changes.close.is_some() || matches!(changes.restore, Some(domain::RestoreWrite::Settle { .. })) {
            // Tickets of an emission whose sale ended, or of a block
            // withdrawn after a restore, are no longer for sale.
            self.for_sale.clear();
        }
        if changes.wallet.iter().any(|w| matches!(w, WalletWrite::Release { .. })) {
            // A ticket back in the pool comes before those remembered: read them again.
            self.for_sale.clear();
        }
        if let Some(PlayerWrite::Limits { player, row, .. }) = &changes.player {
            self.limits.insert(*player, Some(*row));
        }
    }
}

/// A round just reserved, by its id, as its settlement will load it.
fn held_round(new_round: &WalletWrite, wallet_account: AccountId) -> Option<(String, RoundRow)> {
    let WalletWrite::NewRound { round, ticket_id, player, operator_ref, price_cents, key, created_ms, .. } = new_round
    else {
        return None;
    };
    Some((
        round.clone(),
        RoundRow {
            round: wallet::RoundId::parse(round)?,
            ticket_id: *ticket_id,
            player: *player,
            operator_ref: operator_ref.clone(),
            price_cents: *price_cents,
            state: RoundState::Debiting,
            idempotency_key: key.clone(),
            created_ms: *created_ms,
            wallet_account,
        },
    ))
}

//! The decisions of the operator mode (docs/operator-integration.md): the
//! operator's platform owns the players and their money, the game keeps
//! the rounds. Pure functions, like the rest of `core`: a launch, its
//! exchange for a session, a purchase in two steps (the ticket held and the
//! round recorded before the debit leaves; the debit's fate settled after),
//! a prize's credit, and the outbox's bookkeeping.
//!
//! The rules they keep (guarantee 9, ARCHITECTURE.md):
//! - the round is durable before the debit is sent (`reserve` commits it);
//! - the ticket's game is written, and the ticket shown, only in the
//!   transaction that records the debit's acknowledgement (`settle`);
//! - a refused debit returns the ticket to the pool at once; an unknown one
//!   queues its rollback, and the ticket returns to the pool once the
//!   rollback is acknowledged: a ticket never shown goes back where it was
//!   in the block's sale order, so the block still sells each of its
//!   tickets exactly once and its prizes are unchanged;
//! - a prize's credit is written in the transaction that finishes the game,
//!   into the outbox, and sent until acknowledged.

use crate::api::{Channel, Purchased, SoldTicket};
use crate::changes::{AuditRecord, Changes, Effect, GameWrite, IdempotencyWrite, Movement, PlayerWrite, Reason};
use crate::changes::{LaunchWrite, OutboxWrite, WalletWrite};
use crate::error::AppError;
use crate::rows::{ForSale, HOUSE_PRIZES, HOUSE_SALES, PlayerId, StoredAnswer, TicketId, TicketRow};
use crate::rows::{LaunchRow, Reserved, RoundRow, RoundState};
use engine::Game;
use serde_json::json;
use wallet::{MoneyRequest, RollbackRequest, RoundId, TxKind};

/// The operator's answer to a debit, as the wallet's client classified it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DebitOutcome {
    /// Applied: the player's balance after it.
    Acknowledged { balance_cents: i64 },
    /// Refused with the operator's code (`insufficient_funds`, ...).
    Refused { code: String, message: String },
    /// No answer we can trust: a timeout, a 5xx, a lost connection, a bad
    /// signature, our crash before the answer was recorded.
    Unknown { why: String },
}

/// A launch: the nonce recorded, the player known by its reference, the code stored.
pub fn launch(
    nonce_seen: bool,
    nonce: &str,
    new_player: Option<(PlayerId, &str)>,
    write: LaunchWrite,
    answer: String,
) -> Result<Changes, AppError> {
    if nonce_seen {
        return Err(AppError::BadSignature("this nonce was already used: a signed call is accepted once".into()));
    }
    let mut wallet = vec![WalletWrite::Nonce { nonce: nonce.to_string(), seen_ms: write.created_ms }];
    if let Some((player, reference)) = new_player {
        wallet.push(WalletWrite::OperatorPlayer { player, reference: reference.to_string() });
    }
    wallet.push(WalletWrite::Launch(write));
    Ok(Changes { wallet, answer, ..Changes::none(Effect::Wallet) })
}

/// The exchange of a launch code for a session of its player.
pub fn exchange(
    code_hash: &str,
    launch: Option<LaunchRow>,
    session_hash: &str,
    session_expires_ms: i64,
    now: i64,
) -> Result<Changes, AppError> {
    let Some(l) = launch else {
        return Err(AppError::LaunchInvalid(
            "this launch code is unknown: open the game again from the operator's site".into(),
        ));
    };
    if l.used_ms.is_some() {
        return Err(AppError::LaunchInvalid(
            "this launch link was already used: open the game again from the operator's site".into(),
        ));
    }
    if now >= l.expires_ms {
        return Err(AppError::LaunchInvalid(
            "this launch link has expired: open the game again from the operator's site".into(),
        ));
    }
    let flags: serde_json::Value = serde_json::from_str(&l.flags_json).map_err(AppError::internal)?;
    // The operator's session limit ends the session here too, whatever the page does.
    let limit = flags["session_limit_minutes"].as_i64().map(|m| now + m * 60_000);
    let session_expires_ms = limit.map_or(session_expires_ms, |l| l.min(session_expires_ms));
    let answer = json!({
        "player": l.operator_ref, "language": l.language, "flags": flags, "lobby_url": l.lobby_url,
        "session_started_ms": now, "session_expires_ms": session_expires_ms,
    })
    .to_string();
    Ok(Changes {
        wallet: vec![WalletWrite::LaunchUsed {
            code_hash: code_hash.to_string(),
            used_ms: now,
            session_hash: session_hash.to_string(),
        }],
        player: Some(PlayerWrite::OpenSession {
            token_hash: session_hash.to_string(),
            player: l.player,
            created_ms: now,
            expires_ms: session_expires_ms,
        }),
        answer,
        ..Changes::none(Effect::Wallet)
    })
}

/// The debit to send for a round, as the reservation's answer carries it.
pub fn debit_request(round: &RoundId, player: &str, price_cents: i64) -> MoneyRequest {
    MoneyRequest {
        transaction_id: round.tx(TxKind::Debit),
        round_id: round.id(),
        player: player.to_string(),
        amount_cents: price_cents,
        currency: wallet::CURRENCY.to_string(),
        game: game_code(&round.serial),
    }
}

/// The game's code: the serial's first part (the emission's code).
fn game_code(serial: &str) -> String {
    serial.split('-').next().unwrap_or(serial).to_string()
}

/// The first step of a purchase: the next ticket held for the player and
/// the round recorded, before the debit leaves. `stored`: the answer of a
/// purchase with the same Idempotency-Key that was sold; `pending`: a
/// round of that key whose debit is still being settled.
#[allow(clippy::too_many_arguments)]
pub fn reserve(
    player: PlayerId,
    operator_ref: &str,
    key: Option<&str>,
    stored: Option<StoredAnswer>,
    pending: Option<RoundRow>,
    for_sale: Option<ForSale>,
    last_attempt: u32,
    now: i64,
) -> Result<crate::changes::Decision, AppError> {
    if let Some(stored) = stored {
        if stored.request_json == crate::changes::buy_request_json() {
            return Ok(crate::changes::Decision::Replay(stored.answer_json));
        }
        return Err(AppError::Conflict("this Idempotency-Key was used for a purchase with another body".into()));
    }
    if let Some(p) = pending {
        return Err(AppError::Conflict(format!(
            "the purchase of this Idempotency-Key (round {}) is being confirmed by the operator's wallet; retry in a moment",
            p.round
        )));
    }
    let Some(sale) = for_sale else {
        return Err(AppError::SoldOut(
            "no ticket left for sale: every published block is sold; the operator can add blocks".into(),
        ));
    };
    let round = RoundId::new(&sale.serial, last_attempt + 1);
    let debit = debit_request(&round, operator_ref, sale.price_cents);
    Ok(crate::changes::Decision::Apply(Box::new(Changes {
        sale: Some(crate::changes::Sale { ticket_id: sale.ticket_id, owner: player, sold_ms: now }),
        wallet: vec![WalletWrite::NewRound {
            round: round.id(),
            ticket_id: sale.ticket_id,
            attempt: round.attempt,
            player,
            operator_ref: operator_ref.to_string(),
            price_cents: sale.price_cents,
            key: key.map(str::to_string),
            created_ms: now,
        }],
        answer: serde_json::to_string(&debit).expect("a debit serializes"),
        ..Changes::none(Effect::Wallet)
    })))
}

/// The second step: the debit's fate recorded. Acknowledged, the ticket's
/// game is written and the sale enters the ledger (the answer is the
/// purchase's); refused, the ticket goes back to the pool; unknown, its
/// rollback is queued. A round already settled another way (the worker
/// found its debit unanswered, or the request's own settle came first) is
/// refused with nothing written.
pub fn settle(reserved: Reserved, outcome: &DebitOutcome, now: i64) -> Result<Changes, AppError> {
    let Reserved { round: r, ticket } = reserved;
    let id = r.round.id();
    if r.state != RoundState::Debiting {
        return Err(match (r.state, outcome) {
            (RoundState::RollingBack | RoundState::Released, DebitOutcome::Acknowledged { .. }) => {
                AppError::WalletUnavailable(unconfirmed_message())
            }
            _ => AppError::Conflict(format!("round {id} is already {}", r.state.as_str())),
        });
    }
    let step = |to: RoundState, refusal: Option<String>| WalletWrite::Round {
        round: id.clone(),
        from: RoundState::Debiting,
        to,
        refusal,
        settled_ms: now,
    };
    match outcome {
        DebitOutcome::Acknowledged { balance_cents } => {
            let row = TicketRow {
                id: ticket.ticket_id,
                owner: Some(r.player),
                ticket: SoldTicket {
                    serial: ticket.serial.clone(),
                    price_cents: ticket.price_cents,
                    client_seed: None,
                    server_seed: ticket.server_seed,
                    commitment: ticket.commitment.clone(),
                    channel: Channel::Online,
                    retail: None,
                    sold_ms: Some(r.created_ms),
                    game: Game::new(ticket.prizes),
                },
            };
            let answer = Purchased { ticket: row.ticket.view(), balance_cents: *balance_cents };
            let answer = serde_json::to_string(&answer).expect("a purchase answer serializes");
            Ok(Changes {
                game: Some(GameWrite { row, from_seq: None, finished_ms: None, phase_changed: true }),
                movement: Some(Movement::house(
                    Reason::TicketSale,
                    ticket.ticket_id,
                    r.wallet_account,
                    HOUSE_SALES,
                    r.price_cents,
                    now,
                )),
                idempotency: r.idempotency_key.as_ref().map(|key| IdempotencyWrite {
                    player: r.player,
                    key: key.clone(),
                    request_json: crate::changes::buy_request_json(),
                    ticket_id: ticket.ticket_id,
                    created_ms: now,
                }),
                audit: Some(AuditRecord {
                    created_ms: now,
                    kind: "ticket_sold",
                    data_json: json!({"serial": ticket.serial, "player_id": r.player, "price_cents": r.price_cents,
                                      "commitment": ticket.commitment, "round_id": id, "wallet": "operator"})
                    .to_string(),
                }),
                wallet: vec![step(RoundState::Sold, None)],
                answer,
                ..Changes::none(Effect::Sold)
            })
        }
        DebitOutcome::Refused { code, message } => Ok(Changes {
            wallet: vec![
                step(RoundState::Refused, Some(code.clone())),
                WalletWrite::Release { ticket_id: r.ticket_id, owner: r.player },
            ],
            audit: Some(AuditRecord {
                created_ms: now,
                kind: "wallet_debit_refused",
                data_json: json!({"round_id": id, "player_id": r.player, "code": code, "message": message}).to_string(),
            }),
            ..Changes::none(Effect::Wallet)
        }),
        DebitOutcome::Unknown { why } => {
            let rollback = RollbackRequest {
                transaction_id: r.round.tx(TxKind::Rollback),
                round_id: id.clone(),
                player: r.operator_ref.clone(),
                debit_transaction_id: r.round.tx(TxKind::Debit),
                amount_cents: r.price_cents,
                currency: wallet::CURRENCY.to_string(),
            };
            Ok(Changes {
                wallet: vec![
                    step(RoundState::RollingBack, None),
                    WalletWrite::Outbox(OutboxWrite {
                        transaction_id: rollback.transaction_id.clone(),
                        round: id.clone(),
                        kind: TxKind::Rollback,
                        amount_cents: r.price_cents,
                        body_json: serde_json::to_string(&rollback).expect("a rollback serializes"),
                        created_ms: now,
                    }),
                ],
                audit: Some(AuditRecord {
                    created_ms: now,
                    kind: "wallet_debit_unknown",
                    data_json: json!({"round_id": id, "player_id": r.player, "why": why}).to_string(),
                }),
                ..Changes::none(Effect::Wallet)
            })
        }
    }
}

/// What a player is told when the debit's outcome is unknown.
pub fn unconfirmed_message() -> String {
    "the operator's wallet did not confirm the payment: no money is taken for this ticket (any debit is returned); \
     try again"
        .into()
}

/// A rollback acknowledged: the round is released and its ticket returns to the pool.
pub fn rollback_acknowledged(round: RoundRow, transaction_id: &str, now: i64) -> Result<Changes, AppError> {
    if round.state != RoundState::RollingBack {
        return Err(AppError::Conflict(format!("round {} is {}, not rolling back", round.round, round.state.as_str())));
    }
    let id = round.round.id();
    Ok(Changes {
        wallet: vec![
            WalletWrite::Round {
                round: id.clone(),
                from: RoundState::RollingBack,
                to: RoundState::Released,
                refusal: None,
                settled_ms: now,
            },
            WalletWrite::Release { ticket_id: round.ticket_id, owner: round.player },
            WalletWrite::Acked { transaction_id: transaction_id.to_string(), acked_ms: now },
        ],
        audit: Some(AuditRecord {
            created_ms: now,
            kind: "ticket_released",
            data_json: json!({"round_id": id, "player_id": round.player}).to_string(),
        }),
        ..Changes::none(Effect::Wallet)
    })
}

/// A prize won on a round: the ledger's movement to the operator's wallet
/// and the credit for the outbox, both in the unit that finishes the game.
pub fn credit(round: &RoundRow, ticket_id: TicketId, prize_cents: i64, now: i64) -> (Movement, WalletWrite) {
    let request = MoneyRequest {
        transaction_id: round.round.tx(TxKind::Credit),
        round_id: round.round.id(),
        player: round.operator_ref.clone(),
        amount_cents: prize_cents,
        currency: wallet::CURRENCY.to_string(),
        game: game_code(&round.round.serial),
    };
    let movement = Movement::house(Reason::Prize, ticket_id, HOUSE_PRIZES, round.wallet_account, prize_cents, now);
    let outbox = WalletWrite::Outbox(OutboxWrite {
        transaction_id: request.transaction_id.clone(),
        round: round.round.id(),
        kind: TxKind::Credit,
        amount_cents: prize_cents,
        body_json: serde_json::to_string(&request).expect("a credit serializes"),
        created_ms: now,
    });
    (movement, outbox)
}

/// How long the outbox waits before attempt `attempts + 1`: doubling from
/// half a second to a minute, with the given jitter (0 to 999 ms).
pub fn backoff_ms(attempts: i64, jitter_ms: i64) -> i64 {
    let base = 500_i64.saturating_mul(1_i64 << attempts.clamp(0, 7));
    base.min(60_000) + jitter_ms.clamp(0, 999)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::changes::Decision;
    use engine::PrizeSchedule;

    const NOW: i64 = 1_800_000_000_000;

    fn for_sale() -> ForSale {
        ForSale {
            ticket_id: 42,
            serial: "ACP-001-00001-000042-17".into(),
            prizes: PrizeSchedule::new([300, 1000, 10000, 100000]),
            price_cents: 300,
            commitment: engine::commitment(&[9; 32]),
            server_seed: [9; 32],
            last_attempt: None,
        }
    }

    fn round(state: RoundState) -> RoundRow {
        RoundRow {
            round: RoundId::new("ACP-001-00001-000042-17", 1),
            ticket_id: 42,
            player: 7,
            operator_ref: "op-7".into(),
            price_cents: 300,
            state,
            idempotency_key: Some("k".into()),
            created_ms: NOW,
            wallet_account: 9,
        }
    }

    fn reserved(state: RoundState) -> Reserved {
        Reserved { round: round(state), ticket: for_sale() }
    }

    fn applied(d: Result<Decision, AppError>) -> Changes {
        match d {
            Ok(Decision::Apply(c)) => *c,
            Ok(Decision::Replay(a)) => panic!("replayed {a}"),
            Err(e) => panic!("refused: {e}"),
        }
    }

    #[test]
    fn guarantee_9_a_reservation_holds_the_ticket_and_records_the_round_but_moves_no_money_and_shows_nothing() {
        let c = applied(reserve(7, "op-7", Some("k"), None, None, Some(for_sale()), 0, NOW));
        assert_eq!(c.sale.as_ref().map(|s| (s.ticket_id, s.owner)), Some((42, 7)));
        assert!(c.game.is_none() && c.movement.is_none() && c.idempotency.is_none());
        assert!(
            matches!(&c.wallet[..], [WalletWrite::NewRound { round, attempt: 1, .. }] if round == "ACP-001-00001-000042-17.1")
        );
        let debit: MoneyRequest = serde_json::from_str(&c.answer).unwrap();
        assert_eq!(debit.transaction_id, "ACP-001-00001-000042-17.1:debit");
        assert_eq!((debit.amount_cents, debit.player.as_str(), debit.game.as_str()), (300, "op-7", "ACP"));
        // The ticket's next sale after a release is another round, with another transaction id.
        let again = applied(reserve(8, "op-8", None, None, None, Some(for_sale()), 1, NOW));
        let debit: MoneyRequest = serde_json::from_str(&again.answer).unwrap();
        assert_eq!(debit.transaction_id, "ACP-001-00001-000042-17.2:debit");
    }

    #[test]
    fn a_key_already_sold_replays_and_a_key_still_settling_is_refused() {
        let stored = StoredAnswer { request_json: "{}".into(), answer_json: "{\"x\":1}".into() };
        assert!(
            matches!(reserve(7, "op-7", Some("k"), Some(stored), None, Some(for_sale()), 0, NOW), Ok(Decision::Replay(a)) if a == "{\"x\":1}")
        );
        let e = reserve(7, "op-7", Some("k"), None, Some(round(RoundState::Debiting)), Some(for_sale()), 0, NOW)
            .unwrap_err();
        assert_eq!(e.status(), 409);
        assert_eq!(reserve(7, "op-7", None, None, None, None, 0, NOW).unwrap_err().code(), "sold_out");
    }

    #[test]
    fn guarantee_9_an_acknowledged_debit_writes_the_game_the_sale_and_the_answer_in_one_change() {
        let c =
            settle(reserved(RoundState::Debiting), &DebitOutcome::Acknowledged { balance_cents: 4700 }, NOW).unwrap();
        assert!(c.game.as_ref().is_some_and(|g| g.from_seq.is_none() && g.row.owner == Some(7)));
        let m = c.movement.as_ref().unwrap();
        assert_eq!((m.id.as_str(), m.entries()), ("sale:42", [(9, -300), (HOUSE_SALES, 300)]));
        assert_eq!(c.idempotency.as_ref().map(|k| k.key.as_str()), Some("k"));
        assert!(matches!(&c.wallet[..], [WalletWrite::Round { from: RoundState::Debiting, to: RoundState::Sold, .. }]));
        let answer: serde_json::Value = serde_json::from_str(&c.answer).unwrap();
        assert_eq!(
            (answer["balance_cents"].as_i64(), answer["ticket"]["id"].as_str()),
            (Some(4700), Some("ACP-001-00001-000042-17"))
        );
    }

    #[test]
    fn guarantee_9_a_refused_debit_releases_the_ticket_and_moves_nothing() {
        let outcome = DebitOutcome::Refused { code: "insufficient_funds".into(), message: "no".into() };
        let c = settle(reserved(RoundState::Debiting), &outcome, NOW).unwrap();
        assert!(c.game.is_none() && c.movement.is_none());
        assert!(
            matches!(&c.wallet[..], [WalletWrite::Round { to: RoundState::Refused, refusal: Some(r), .. }, WalletWrite::Release { ticket_id: 42, owner: 7 }] if r == "insufficient_funds")
        );
    }

    #[test]
    fn guarantee_9_an_unknown_debit_is_never_assumed_its_rollback_is_queued() {
        let c = settle(reserved(RoundState::Debiting), &DebitOutcome::Unknown { why: "timeout".into() }, NOW).unwrap();
        assert!(c.game.is_none() && c.movement.is_none());
        let [WalletWrite::Round { to: RoundState::RollingBack, .. }, WalletWrite::Outbox(o)] = &c.wallet[..] else {
            panic!("{:?}", c.wallet)
        };
        assert_eq!(
            (o.transaction_id.as_str(), o.kind, o.amount_cents),
            ("ACP-001-00001-000042-17.1:rollback", TxKind::Rollback, 300)
        );
        let body: RollbackRequest = serde_json::from_str(&o.body_json).unwrap();
        assert_eq!(body.debit_transaction_id, "ACP-001-00001-000042-17.1:debit");
        // Its acknowledgement releases the ticket, once.
        let c = rollback_acknowledged(round(RoundState::RollingBack), &o.transaction_id, NOW).unwrap();
        assert!(matches!(
            &c.wallet[..],
            [
                WalletWrite::Round { to: RoundState::Released, .. },
                WalletWrite::Release { .. },
                WalletWrite::Acked { .. }
            ]
        ));
        assert_eq!(
            rollback_acknowledged(round(RoundState::Released), &o.transaction_id, NOW).unwrap_err().status(),
            409
        );
    }

    #[test]
    fn a_late_acknowledgement_of_a_round_being_rolled_back_shows_nothing() {
        let e = settle(reserved(RoundState::RollingBack), &DebitOutcome::Acknowledged { balance_cents: 1 }, NOW)
            .unwrap_err();
        assert_eq!(e.code(), "wallet_unavailable");
        let e = settle(reserved(RoundState::Sold), &DebitOutcome::Unknown { why: "late".into() }, NOW).unwrap_err();
        assert_eq!(e.status(), 409);
    }

    #[test]
    fn a_prize_is_a_movement_to_the_operator_and_a_credit_in_the_outbox() {
        let (m, w) = credit(&round(RoundState::Sold), 42, 1000, NOW);
        assert_eq!((m.id.as_str(), m.entries()), ("prize:42", [(HOUSE_PRIZES, -1000), (9, 1000)]));
        let WalletWrite::Outbox(o) = w else { panic!() };
        let body: MoneyRequest = serde_json::from_str(&o.body_json).unwrap();
        assert_eq!(
            (body.transaction_id.as_str(), body.amount_cents, body.player.as_str()),
            ("ACP-001-00001-000042-17.1:credit", 1000, "op-7")
        );
    }

    #[test]
    fn launch_codes_are_refused_unknown_used_or_expired() {
        let row = LaunchRow {
            player: 7,
            operator_ref: "op-7".into(),
            language: "fr".into(),
            flags_json: "{\"show_rtp\":true}".into(),
            lobby_url: None,
            expires_ms: NOW + 60_000,
            used_ms: None,
        };
        let c = exchange("h", Some(row.clone()), "s", NOW + 3_600_000, NOW).unwrap();
        assert!(matches!(c.player, Some(PlayerWrite::OpenSession { player: 7, .. })));
        let a: serde_json::Value = serde_json::from_str(&c.answer).unwrap();
        assert_eq!((a["player"].as_str(), a["flags"]["show_rtp"].as_bool()), (Some("op-7"), Some(true)));
        for (launch, word) in [
            (None, "unknown"),
            (Some(LaunchRow { used_ms: Some(NOW), ..row.clone() }), "already used"),
            (Some(LaunchRow { expires_ms: NOW, ..row }), "expired"),
        ] {
            let e = exchange("h", launch, "s", NOW, NOW).unwrap_err();
            assert_eq!(e.code(), "launch_invalid");
            assert!(e.to_string().contains(word), "{e}");
        }
        let w = LaunchWrite {
            code_hash: "h".into(),
            player: 7,
            language: "fr".into(),
            country: None,
            flags_json: "{}".into(),
            lobby_url: None,
            created_ms: NOW,
            expires_ms: NOW + 1,
        };
        assert_eq!(launch(true, "n", None, w.clone(), String::new()).unwrap_err().code(), "bad_signature");
        assert_eq!(launch(false, "n", Some((7, "op-7")), w, String::new()).unwrap().wallet.len(), 3);
    }

    #[test]
    fn the_operators_session_limit_ends_the_session() {
        let row = LaunchRow {
            player: 7,
            operator_ref: "op-7".into(),
            language: "en".into(),
            flags_json: "{\"session_limit_minutes\":30}".into(),
            lobby_url: None,
            expires_ms: NOW + 60_000,
            used_ms: None,
        };
        let c = exchange("h", Some(row.clone()), "s", NOW + 86_400_000, NOW).unwrap();
        assert!(matches!(c.player, Some(PlayerWrite::OpenSession { expires_ms, .. }) if expires_ms == NOW + 1_800_000));
        let unlimited = LaunchRow { flags_json: "{}".into(), ..row };
        let c = exchange("h", Some(unlimited), "s", NOW + 86_400_000, NOW).unwrap();
        assert!(
            matches!(c.player, Some(PlayerWrite::OpenSession { expires_ms, .. }) if expires_ms == NOW + 86_400_000)
        );
    }

    #[test]
    fn the_outbox_backs_off_to_a_minute() {
        assert_eq!(backoff_ms(0, 0), 500);
        assert_eq!(backoff_ms(1, 0), 1000);
        assert_eq!(backoff_ms(6, 0), 32_000);
        assert_eq!(backoff_ms(7, 0), 60_000);
        assert_eq!(backoff_ms(50, 999), 60_999);
    }
}

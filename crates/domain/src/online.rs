//! The decisions of the online channel: a purchase and an action on a
//! ticket. Pure functions from loaded rows and a request to a refusal, a
//! replay or one [`Changes`]: no database, no clock, no random numbers (the
//! time and the seeds come in as arguments), so every rule of money
//! (guarantee 3), of exactly-once play (guarantee 4) and of refusal
//! (guarantee 7) is tested here without a database (ARCHITECTURE.md).

use crate::api::{ActionAnswer, ActionRequest, Channel, ClientSeed, IdempotencyKey, Purchased, SoldTicket};
use crate::changes::{
    ActionWrite, AuditRecord, Changes, ClientSeedWrite, Decision, Effect, GameWrite, IdempotencyWrite, Movement,
    Reason, Sale,
};
use crate::error::AppError;
use crate::rows::RoundRow;
use crate::rows::{Account, Caller, ForSale, StoredAnswer, TicketRow};
use engine::{FairStream, Game};
use record::draws_of;
use serde_json::json;

/// A purchase request. It draws nothing: the ticket's server seed was
/// fixed when its block was emitted, the player's comes with the first action.
#[derive(Debug, Clone)]
pub struct BuyRequest {
    pub key: Option<IdempotencyKey>,
    /// The player must have a limit on stakes over seven days (config).
    pub stake_limit_required: bool,
}

/// A purchase. `stored` is what the player's Idempotency-Key holds, when
/// the request has a key; `for_sale` the next unsold ticket, with the
/// server seed its block committed to before the sale.
pub fn buy(
    account: &Account,
    stored: Option<StoredAnswer>,
    for_sale: Option<ForSale>,
    request: &BuyRequest,
    now: i64,
) -> Result<Decision, AppError> {
    let request_json = crate::changes::buy_request_json();
    if let Some(stored) = stored {
        if stored.request_json == request_json {
            return Ok(Decision::Replay(stored.answer_json));
        }
        return Err(AppError::Conflict("this Idempotency-Key was used for a purchase with another body".into()));
    }
    let Some(sale) = for_sale else {
        return Err(AppError::SoldOut(
            "no ticket left for sale: every published block is sold; the operator can add blocks".into(),
        ));
    };
    if account.balance_cents < sale.price_cents {
        return Err(AppError::InsufficientFunds { balance: account.balance_cents, price: sale.price_cents });
    }
    let movement = Movement::new(Reason::TicketSale, Some(sale.ticket_id), account, sale.price_cents, now);
    let row = TicketRow {
        id: sale.ticket_id,
        owner: Some(account.player),
        ticket: SoldTicket {
            serial: sale.serial.clone(),
            price_cents: sale.price_cents,
            client_seed: None,
            server_seed: sale.server_seed,
            commitment: sale.commitment.clone(),
            channel: Channel::Online,
            retail: None,
            sold_ms: Some(now),
            game: Game::new(sale.prizes),
        },
    };
    let balance = movement.balance_after().unwrap_or(account.balance_cents);
    let answer = Purchased { ticket: row.ticket.view(), balance_cents: balance };
    let answer = serde_json::to_string(&answer).expect("a purchase answer serializes");
    Ok(Decision::Apply(Box::new(Changes {
        sale: Some(Sale { ticket_id: sale.ticket_id, owner: account.player, sold_ms: now }),
        game: Some(GameWrite { row, from_seq: None, finished_ms: None, phase_changed: true }),
        idempotency: request.key.as_ref().map(|key| IdempotencyWrite {
            player: account.player,
            key: key.as_str().to_string(),
            request_json,
            ticket_id: sale.ticket_id,
            created_ms: now,
        }),
        audit: Some(AuditRecord {
            created_ms: now,
            kind: "ticket_sold",
            data_json: json!({"serial": sale.serial, "player_id": account.player, "price_cents": sale.price_cents,
                              "commitment": sale.commitment})
            .to_string(),
        }),
        movement: Some(movement),
        answer,
        ..Changes::none(Effect::Sold)
    })))
}

/// Who is paid a prize an online ticket wins.
#[derive(Debug, Clone)]
pub enum Payee {
    /// Nobody was loaded: a replay, a refusal, or a paper ticket (paid by a shop).
    Nobody,
    /// The player's account (the internal wallet).
    Account(Account),
    /// The ticket's sold round: the prize is credited to the operator's wallet.
    Round(RoundRow),
    /// Not loaded yet (operator mode): loaded, and the action decided
    /// again, only when it wins a prize, so that an action costs no load.
    Deferred,
}

/// A game action on `ticket` (loaded by its serial; `None` when no sold
/// ticket has it). `stored` is the action already applied at the request's
/// `seq`, loaded when that `seq` is behind the ticket; `account` the
/// player's, loaded when the action is to be applied; `random_client_seed`
/// the seed a first action without one gets.
pub fn decide_action(
    caller: &Caller,
    ticket: Option<TicketRow>,
    stored: Option<StoredAnswer>,
    payee: Payee,
    request: ActionRequest,
    random_client_seed: &ClientSeed,
    now: i64,
) -> Result<Decision, AppError> {
    // Fairness, 2: the player's seed comes with the first action only.
    let client_seed = request.client_seed.as_deref().map(ClientSeed::parse).transpose()?;
    if client_seed.is_some() && request.seq != 0 {
        return Err(AppError::BadRequest(
            "client_seed is accepted with the ticket's first action (seq 0) only; the draws of this ticket already \
             depend on the seed given then"
                .into(),
        ));
    }
    // Another player's ticket is "not found", exactly like one that does not exist.
    let Some(row) = ticket.filter(|t| caller.may_play(t)) else { return Err(AppError::ticket_not_found()) };
    let seq = row.ticket.game.seq();
    let request_json = request.canonical();
    if request.seq < seq {
        // Guarantee 4: a retry gets the answer already given; nothing is drawn.
        let stored = stored.ok_or_else(|| {
            AppError::internal(format!("ticket {}: action {} is not stored", row.ticket.serial, request.seq))
        })?;
        if stored.request_json == request_json {
            return Ok(Decision::Replay(stored.answer_json));
        }
        return Err(AppError::Conflict(format!(
            "action seq {} was already applied with another body; the ticket is at seq {seq}",
            request.seq
        )));
    }
    if request.seq > seq {
        return Err(AppError::Conflict(format!("the ticket is at seq {seq}, not {}", request.seq)));
    }
    // A paper ticket's prize is paid by a shop, never credited: it needs no account.
    let online = row.ticket.channel == Channel::Online;
    if online && matches!(payee, Payee::Nobody) {
        return Err(AppError::internal("the player's account was not loaded"));
    }
    let mut after = row.clone();
    let seed_write = match &after.ticket.client_seed {
        Some(_) if seq == 0 => return Err(AppError::internal("a ticket at seq 0 already has a client seed")),
        Some(_) => None,
        None => {
            let chosen = client_seed.unwrap_or_else(|| random_client_seed.clone());
            after.ticket.client_seed = Some(chosen.as_str().to_string());
            Some(ClientSeedWrite { ticket_id: row.id, client_seed: chosen.as_str().to_string() })
        }
    };
    let client_seed = after.ticket.client_seed.clone().unwrap_or_default();
    // Guarantee 1: the engine alone decides, with the ticket's own fair stream.
    let first_n = after.ticket.game.draws();
    let mut stream = FairStream::new(&after.ticket.server_seed, &client_seed, &after.ticket.serial);
    let mut events = Vec::new();
    after.ticket.game.apply(request.action, &mut stream, &mut events)?;
    let draw = match draws_of(&events, first_n).as_slice() {
        [draw] if draw.n == seq => *draw,
        draws => {
            return Err(AppError::internal(format!(
                "action {seq} took {} draws from number {first_n}, not draw {seq} alone",
                draws.len()
            )));
        }
    };
    let result = after.ticket.game.result();
    let prize = result.map_or(0, |r| r.prize_cents as i64);
    // The prize is credited in the transaction that finishes the game: to
    // the player's account, or into the outbox of the operator's wallet.
    let mut wallet = Vec::new();
    let movement = match &payee {
        Payee::Round(r) if online && prize > 0 => {
            let (movement, credit) = crate::operator::credit(r, row.id, prize, now);
            wallet.push(credit);
            Some(movement)
        }
        Payee::Account(a) if online && prize > 0 => Some(Movement::new(Reason::Prize, Some(row.id), a, prize, now)),
        _ => None,
    };
    let account = match &payee {
        Payee::Account(a) => Some(a.balance_cents),
        _ => None,
    };
    let balance = movement.as_ref().and_then(Movement::balance_after).or(account);
    let answer = ActionAnswer { ticket: after.ticket.view(), events, balance_cents: balance };
    let answer = serde_json::to_string(&answer).expect("an answer serializes");
    let audit = result.map(|r| AuditRecord {
        created_ms: now,
        kind: "ticket_finished",
        data_json: json!({"serial": row.ticket.serial, "tricks": r.tricks, "prize_cents": r.prize_cents,
                          "client_seed": client_seed, "server_seed": hex::encode(row.ticket.server_seed)})
        .to_string(),
    });
    Ok(Decision::Apply(Box::new(Changes {
        client_seed: seed_write,
        action: Some(ActionWrite { ticket_id: row.id, seq, request_json, created_ms: now, draw }),
        game: Some(GameWrite {
            phase_changed: after.ticket.game.phase().name() != row.ticket.game.phase().name(),
            row: after,
            from_seq: Some(seq),
            finished_ms: result.map(|_| now),
        }),
        movement,
        audit,
        answer,
        wallet,
        ..Changes::none(Effect::Played { finished_prize: result.map(|r| r.prize_cents) })
    })))
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::changes::buy_request_json;
    use crate::rows::{HOUSE_PRIZES, HOUSE_SALES};
    use engine::{Action, Phase, PrizeSchedule, Rank};

    const NOW: i64 = 1_700_000_000_000;

    fn account(balance: i64) -> Account {
        Account { player: 7, id: 70, balance_cents: balance }
    }

    fn for_sale() -> ForSale {
        ForSale {
            ticket_id: 42,
            serial: "TST-001-00001-000001-00".into(),
            prizes: PrizeSchedule::new([300, 1000, 10000, 100000]),
            price_cents: 300,
            commitment: engine::commitment(&[9; 32]),
            server_seed: [9; 32],
            last_attempt: None,
        }
    }

    fn request(key: Option<&str>) -> BuyRequest {
        BuyRequest { key: key.map(|k| IdempotencyKey::parse(k).unwrap()), stake_limit_required: false }
    }

    fn random() -> ClientSeed {
        ClientSeed::parse("random").unwrap()
    }

    fn req(seq: u64, action: Action) -> ActionRequest {
        ActionRequest { seq, action, client_seed: None }
    }

    fn applied(d: Result<Decision, AppError>) -> Changes {
        match d {
            Ok(Decision::Apply(c)) => *c,
            Ok(Decision::Replay(a)) => panic!("replayed {a}"),
            Err(e) => panic!("refused: {e}"),
        }
    }

    fn sold_ticket() -> TicketRow {
        applied(buy(&account(1000), None, Some(for_sale()), &request(None), NOW)).game.unwrap().row
    }

    #[test]
    fn guarantee_3_a_purchase_debits_the_price_and_sells_the_ticket_in_one_change() {
        let c = applied(buy(&account(1000), None, Some(for_sale()), &request(Some("k")), NOW));
        let m = c.movement.as_ref().unwrap();
        assert_eq!(m.entries(), [(70, -300), (HOUSE_SALES, 300)]);
        assert_eq!(m.entries().iter().map(|e| e.1).sum::<i64>(), 0);
        assert_eq!((m.player_balance.unwrap().before, m.player_balance.unwrap().after), (1000, 700));
        assert_eq!(m.id, "sale:42");
        let sale = c.sale.as_ref().unwrap();
        assert_eq!((sale.ticket_id, sale.owner), (42, 7));
        assert_eq!(c.idempotency.as_ref().unwrap().key, "k");
        let answer: serde_json::Value = serde_json::from_str(&c.answer).unwrap();
        assert_eq!(answer["balance_cents"], 700);
        assert_eq!(answer["ticket"]["serial"], "TST-001-00001-000001-00");
        assert_eq!(answer["ticket"]["server_seed"], serde_json::Value::Null, "guarantee 6: secret until finished");
        // Fairness, 1 and 2: the commitment is the block's, the player's seed is not asked yet.
        assert_eq!(answer["ticket"]["commitment"], engine::commitment(&[9; 32]));
        assert_eq!(answer["ticket"]["client_seed"], serde_json::Value::Null);
        assert_eq!(answer["ticket"]["status"], "in_play");
        assert_eq!(c.effect, Effect::Sold);
    }

    #[test]
    fn guarantee_4_the_same_idempotency_key_replays_and_another_body_conflicts() {
        let stored = StoredAnswer { request_json: buy_request_json(), answer_json: "{\"stored\":1}".into() };
        match buy(&account(1000), Some(stored.clone()), Some(for_sale()), &request(Some("k")), NOW) {
            Ok(Decision::Replay(a)) => assert_eq!(a, "{\"stored\":1}"),
            _ => panic!("a retry replays"),
        }
        // Even with no money left and nothing for sale, a retry replays.
        assert!(matches!(
            buy(&account(0), Some(stored.clone()), None, &request(Some("k")), NOW),
            Ok(Decision::Replay(_))
        ));
        let other = StoredAnswer { request_json: "{\"client_seed\":\"old\"}".into(), ..stored };
        let e = buy(&account(1000), Some(other), Some(for_sale()), &request(Some("k")), NOW).unwrap_err();
        assert_eq!(e.code(), "conflict");
    }

    #[test]
    fn guarantee_7_no_money_or_no_ticket_is_refused() {
        let e = buy(&account(299), None, Some(for_sale()), &request(None), NOW).unwrap_err();
        assert_eq!((e.status(), e.code()), (402, "insufficient_funds"));
        let e = buy(&account(1000), None, None, &request(None), NOW).unwrap_err();
        assert_eq!((e.status(), e.code()), (503, "sold_out"));
    }

    #[test]
    fn guarantee_4_an_action_applies_at_the_tickets_seq_and_replays_behind_it() {
        let row = sold_ticket();
        let play = req(0, Action::play(Rank::Ace));
        let c = applied(decide_action(
            &Caller::Player(7),
            Some(row.clone()),
            None,
            Payee::Account(account(700)),
            play.clone(),
            &random(),
            NOW,
        ));
        let action = c.action.as_ref().unwrap();
        assert_eq!((action.seq, action.request_json.as_str()), (0, play.canonical().as_str()));
        assert_eq!(action.draw.n, 0, "the action's one draw is number seq");
        let game = c.game.as_ref().unwrap();
        assert_eq!(game.from_seq, Some(0), "the write is guarded by the seq it was decided on");
        assert_eq!(game.row.ticket.game.seq(), 1);
        assert!(c.movement.is_none() && c.audit.is_none(), "an unfinished game moves no money");
        // Behind the ticket's seq: the stored answer, or 409 for another body.
        let mut after = game.row.clone();
        let stored = StoredAnswer { request_json: play.canonical(), answer_json: c.answer.clone() };
        match decide_action(
            &Caller::Player(7),
            Some(after.clone()),
            Some(stored.clone()),
            Payee::Nobody,
            play.clone(),
            &random(),
            NOW,
        ) {
            Ok(Decision::Replay(a)) => assert_eq!(a, c.answer),
            _ => panic!("a retry replays"),
        }
        let other = req(0, Action::play(Rank::Seven));
        let e =
            decide_action(&Caller::Player(7), Some(after.clone()), Some(stored), Payee::Nobody, other, &random(), NOW)
                .unwrap_err();
        assert_eq!(e.code(), "conflict");
        // Ahead of it: 409.
        let ahead = req(5, Action::Draw);
        let e = decide_action(
            &Caller::Player(7),
            Some(after.clone()),
            None,
            Payee::Account(account(700)),
            ahead,
            &random(),
            NOW,
        )
        .unwrap_err();
        assert_eq!(e.code(), "conflict");
        // Someone else's ticket, or none: 404, the same answer.
        after.owner = Some(8);
        let e = decide_action(
            &Caller::Player(7),
            Some(after),
            None,
            Payee::Account(account(700)),
            play.clone(),
            &random(),
            NOW,
        )
        .unwrap_err();
        assert_eq!(e.code(), "not_found");
        assert_eq!(
            decide_action(&Caller::Player(7), None, None, Payee::Account(account(700)), play, &random(), NOW)
                .unwrap_err()
                .code(),
            "not_found"
        );
    }

    #[test]
    fn fairness_2_the_client_seed_comes_with_the_first_action_and_only_then() {
        let row = sold_ticket();
        let mut first = req(0, Action::play(Rank::King));
        first.client_seed = Some("lucky-7".into());
        let c = applied(decide_action(
            &Caller::Player(7),
            Some(row.clone()),
            None,
            Payee::Account(account(700)),
            first.clone(),
            &random(),
            NOW,
        ));
        assert_eq!(c.client_seed, Some(ClientSeedWrite { ticket_id: 42, client_seed: "lucky-7".into() }));
        let after = c.game.as_ref().unwrap().row.clone();
        assert_eq!(after.ticket.client_seed.as_deref(), Some("lucky-7"));
        // The draw is the fair stream of (committed server seed, the player's seed).
        let mut stream = FairStream::new(&[9; 32], "lucky-7", &after.ticket.serial);
        let mut g = Game::new(for_sale().prizes);
        g.apply(Action::play(Rank::King), &mut stream, &mut Vec::new()).unwrap();
        assert_eq!(g, after.ticket.game);
        // Without one, the server's random seed is recorded.
        let c = applied(decide_action(
            &Caller::Player(7),
            Some(row.clone()),
            None,
            Payee::Account(account(700)),
            req(0, Action::play(Rank::King)),
            &random(),
            NOW,
        ));
        assert_eq!(c.client_seed.unwrap().client_seed, "random");
        // Later: refused with 400, whatever the seq.
        let mut later = req(1, Action::play(Rank::Ace));
        later.client_seed = Some("again".into());
        let e = decide_action(
            &Caller::Player(7),
            Some(after.clone()),
            None,
            Payee::Account(account(700)),
            later,
            &random(),
            NOW,
        )
        .unwrap_err();
        assert_eq!((e.status(), e.code()), (400, "bad_request"));
        // A malformed one: 400.
        let mut bad = req(0, Action::play(Rank::Ace));
        bad.client_seed = Some("two words".into());
        let e = decide_action(&Caller::Player(7), Some(row), None, Payee::Account(account(700)), bad, &random(), NOW)
            .unwrap_err();
        assert_eq!(e.code(), "bad_request");
        // The second action records no seed again.
        let c = applied(decide_action(
            &Caller::Player(7),
            Some(after),
            None,
            Payee::Account(account(700)),
            req(1, Action::play(Rank::Ace)),
            &random(),
            NOW,
        ));
        assert!(c.client_seed.is_none());
    }

    #[test]
    fn guarantee_7_the_engine_refuses_an_illegal_action() {
        let row = sold_ticket();
        let draw = req(0, Action::Draw);
        let e = decide_action(&Caller::Player(7), Some(row), None, Payee::Account(account(700)), draw, &random(), NOW)
            .unwrap_err();
        assert_eq!((e.status(), e.code()), (422, "invalid_action"));
    }

    #[test]
    fn guarantee_3_the_prize_is_credited_in_the_change_that_finishes_the_game() {
        let mut row = sold_ticket();
        let mut balance = 700;
        let mut seen_finish = false;
        while !row.ticket.game.is_finished() {
            let seq = row.ticket.game.seq();
            let action = match row.ticket.game.phase() {
                Phase::Play => Action::play(row.ticket.game.hand().nth(0)),
                _ => Action::Draw,
            };
            let c = applied(decide_action(
                &Caller::Player(7),
                Some(row),
                None,
                Payee::Account(account(balance)),
                req(seq, action),
                &random(),
                NOW,
            ));
            row = c.game.as_ref().unwrap().row.clone();
            if let Some(result) = row.ticket.game.result() {
                seen_finish = true;
                assert_eq!(c.audit.as_ref().unwrap().kind, "ticket_finished");
                assert_eq!(c.game.as_ref().unwrap().finished_ms, Some(NOW));
                match &c.movement {
                    Some(m) => {
                        assert!(result.prize_cents > 0);
                        assert_eq!(
                            m.entries(),
                            [(HOUSE_PRIZES, -(result.prize_cents as i64)), (70, result.prize_cents as i64)]
                        );
                        assert_eq!(m.id, format!("prize:{}", row.id));
                        balance = m.player_balance.unwrap().after;
                    }
                    None => assert_eq!(result.prize_cents, 0),
                }
                let answer: serde_json::Value = serde_json::from_str(&c.answer).unwrap();
                assert_eq!(answer["balance_cents"], balance);
                assert!(answer["ticket"]["server_seed"].is_string(), "guarantee 6: revealed at the end");
            } else {
                assert!(c.movement.is_none());
            }
        }
        assert!(seen_finish);
    }
}

//! The free demo game ("Essayer gratuitement", docs/player-api.md "Demo games"): the real duel,
//! played with the engine and a fair stream exactly like a ticket's, on a
//! prize schedule drawn from the table on sale, with no money, no account
//! and no ticket of any block (docs/player-api.md "Demo games").
//!
//! A demo game is stored as its inputs only: its schedule, its server
//! seed, the player's client seed and the actions applied. Every answer is
//! rebuilt by replaying those actions from the start, so that an action
//! sent again gets byte for byte the answer it got the first time (the
//! exactly-once rule of guarantee 4) without storing the answers. Pure
//! functions: no database, no clock, no random numbers (they come in).

use crate::api::{ActionAnswer, ActionRequest, Channel, ClientSeed, SoldTicket, TicketView};
use crate::error::AppError;
use engine::{FairStream, Game, PrizeSchedule, commitment};
use math::PrizeTable;
use record::{RecordAction, RecordDraw, draws_of};
use serde::Serialize;

/// How long a demo game is kept (and can be played) after it began.
pub const DEMO_LIFETIME_MS: i64 = 24 * 3600 * 1000;

/// The prefix of a demo game's id: no ticket serial starts with it.
pub const DEMO_PREFIX: &str = "DEMO-";

/// A demo game as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DemoRow {
    /// `DEMO-` and 16 Crockford base32 characters.
    pub id: String,
    /// Hex SHA-256 of its bearer token.
    pub token_hash: String,
    pub prizes: PrizeSchedule,
    pub server_seed: [u8; 32],
    pub client_seed: Option<String>,
    /// The requests applied, in order, as they came (their canonical JSON).
    pub actions: Vec<String>,
    pub created_ms: i64,
    pub finished_ms: Option<i64>,
}

/// The public record of a demo game: what the page replays its table from
/// (the fields of a ticket's record that do not concern a block).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct DemoRecord {
    pub serial: String,
    pub client_seed: Option<String>,
    /// Hex SHA-256 of the server seed, shown when the game began.
    pub commitment: String,
    /// Hex; `null` until the game is finished.
    pub server_seed: Option<String>,
    #[schema(value_type = Object)]
    pub prizes_cents: PrizeSchedule,
    #[schema(value_type = Vec<Object>)]
    pub actions: Vec<RecordAction>,
    #[schema(value_type = Vec<Object>)]
    pub draws: Vec<RecordDraw>,
    #[schema(value_type = Option<Object>)]
    pub result: Option<engine::GameResult>,
}

/// A new demo game: the row to write, and the answer.
#[derive(Debug, Clone)]
pub struct DemoStarted {
    pub row: DemoRow,
    pub ticket: TicketView,
}

/// Draws a schedule from `table` in proportion to its tickets per block:
/// `pick` is a uniform number below `table.block_size` (drawn by the
/// caller without bias), the position of a ticket in a block.
pub fn schedule_at(table: &PrizeTable, pick: u32) -> Result<PrizeSchedule, AppError> {
    let mut left = pick;
    for row in &table.schedules {
        if left < row.tickets {
            return Ok(row.prizes);
        }
        left -= row.tickets;
    }
    Err(AppError::internal(format!("position {pick} is past the table's {} tickets per block", table.block_size)))
}

/// A demo game that begins now.
pub fn start(
    id: String,
    token_hash: String,
    prizes: PrizeSchedule,
    server_seed: [u8; 32],
    now: i64,
) -> Result<DemoStarted, AppError> {
    let row = DemoRow {
        id,
        token_hash,
        prizes,
        server_seed,
        client_seed: None,
        actions: Vec::new(),
        created_ms: now,
        finished_ms: None,
    };
    let ticket = view(&replay(&row)?.ticket);
    Ok(DemoStarted { row, ticket })
}

/// One action of a replay: the request as it came, its draws and the answer.
#[derive(Debug, Clone)]
pub struct Step {
    pub request_json: String,
    pub action: ActionRequest,
    pub draws: Vec<RecordDraw>,
    pub answer_json: String,
}

/// A demo game replayed from its inputs.
#[derive(Debug, Clone)]
pub struct Replayed {
    /// Played as an online ticket's game, priced 0 (its view says `demo`: [`view`]).
    pub ticket: SoldTicket,
    pub steps: Vec<Step>,
}

/// The game as the player sees it: a ticket's view whose `channel` is
/// `demo` (the page shows DÉMO on every screen of it).
pub fn view(ticket: &SoldTicket) -> TicketView {
    TicketView { channel: DEMO_CHANNEL.to_string(), ..ticket.view() }
}

/// The `channel` of a demo game's view.
pub const DEMO_CHANNEL: &str = "demo";

/// Replays the stored actions with the engine and the game's fair stream.
pub fn replay(row: &DemoRow) -> Result<Replayed, AppError> {
    let mut ticket = SoldTicket {
        serial: row.id.clone(),
        price_cents: 0,
        client_seed: row.client_seed.clone(),
        server_seed: row.server_seed,
        commitment: commitment(&row.server_seed),
        channel: Channel::Online,
        retail: None,
        sold_ms: Some(row.created_ms),
        game: Game::new(row.prizes),
    };
    let mut steps = Vec::with_capacity(row.actions.len());
    if row.actions.is_empty() {
        return Ok(Replayed { ticket, steps });
    }
    let client_seed = row
        .client_seed
        .clone()
        .ok_or_else(|| AppError::internal(format!("demo game {}: actions without a client seed", row.id)))?;
    let mut stream = FairStream::new(&row.server_seed, &client_seed, &row.id);
    for (seq, request_json) in row.actions.iter().enumerate() {
        let action: ActionRequest = serde_json::from_str(request_json)
            .map_err(|e| AppError::internal(format!("demo game {}: stored action {seq}: {e}", row.id)))?;
        let first_n = ticket.game.draws();
        let mut events = Vec::new();
        ticket.game.apply(action.action, &mut stream, &mut events)?;
        let draws = draws_of(&events, first_n);
        let answer = ActionAnswer { ticket: view(&ticket), events, balance_cents: None };
        let answer_json = serde_json::to_string(&answer).expect("an answer serializes");
        steps.push(Step { request_json: request_json.clone(), action, draws, answer_json });
    }
    Ok(Replayed { ticket, steps })
}

/// What an action on a demo game comes to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DemoDecision {
    /// The action was applied before with this very body: its answer again.
    Replay(String),
    /// The game after the action (to be written if the stored row is still
    /// at `from_seq`), and the answer.
    Apply { row: DemoRow, from_seq: u64, answer: String },
}

/// An action on a demo game, decided as [`crate::online::decide_action`]
/// decides one on a ticket: a retry gets the stored answer, another body at
/// an applied `seq` or a `seq` ahead is a conflict, a client seed only
/// with the first action.
pub fn act(
    row: &DemoRow,
    request: ActionRequest,
    random_client_seed: &ClientSeed,
    now: i64,
) -> Result<DemoDecision, AppError> {
    let client_seed = request.client_seed.as_deref().map(ClientSeed::parse).transpose()?;
    if client_seed.is_some() && request.seq != 0 {
        return Err(AppError::BadRequest(
            "client_seed is accepted with the game's first action (seq 0) only; the draws already depend on the \
             seed given then"
                .into(),
        ));
    }
    let seq = row.actions.len() as u64;
    let request_json = request.canonical();
    if request.seq < seq {
        let replayed = replay(row)?;
        let step = &replayed.steps[request.seq as usize];
        if step.request_json == request_json {
            return Ok(DemoDecision::Replay(step.answer_json.clone()));
        }
        return Err(AppError::Conflict(format!(
            "action seq {} was already applied with another body; the game is at seq {seq}",
            request.seq
        )));
    }
    if request.seq > seq {
        return Err(AppError::Conflict(format!("the game is at seq {seq}, not {}", request.seq)));
    }
    let mut after = row.clone();
    if after.client_seed.is_none() {
        after.client_seed = Some(client_seed.unwrap_or_else(|| random_client_seed.clone()).as_str().to_string());
    }
    after.actions.push(request_json);
    // The engine alone decides: the new action is replayed with the others
    // (a refused action, e.g. a card not in hand, is refused here).
    let replayed = replay(&after)?;
    if replayed.ticket.game.is_finished() {
        after.finished_ms = Some(now);
    }
    let answer = replayed.steps.last().expect("the action just added").answer_json.clone();
    Ok(DemoDecision::Apply { row: after, from_seq: seq, answer })
}

/// The public record of a demo game (its server seed only once finished).
pub fn record(row: &DemoRow) -> Result<DemoRecord, AppError> {
    let replayed = replay(row)?;
    let finished = replayed.ticket.game.is_finished();
    Ok(DemoRecord {
        serial: row.id.clone(),
        client_seed: row.client_seed.clone(),
        commitment: commitment(&row.server_seed),
        server_seed: finished.then(|| hex::encode(row.server_seed)),
        prizes_cents: row.prizes,
        actions: replayed
            .steps
            .iter()
            .enumerate()
            .map(|(seq, s)| RecordAction { seq: seq as u64, action: s.action.action })
            .collect(),
        draws: replayed.steps.iter().flat_map(|s| s.draws.iter().copied()).collect(),
        result: replayed.ticket.game.result(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::{Action, Rank};

    const SEED: [u8; 32] = [7; 32];

    fn table() -> PrizeTable {
        PrizeTable::example()
    }

    fn new_row() -> DemoRow {
        let prizes = schedule_at(&table(), 0).unwrap();
        start("DEMO-0000000000000001".into(), "h".into(), prizes, SEED, 1_000).unwrap().row
    }

    fn request(seq: u64, action: Action, seed: Option<&str>) -> ActionRequest {
        ActionRequest { seq, action, client_seed: seed.map(str::to_string) }
    }

    /// Plays the game to its end, always the first legal action.
    fn play_out(mut row: DemoRow) -> (DemoRow, Vec<(ActionRequest, String)>) {
        let mut sent = Vec::new();
        for _ in 0..200 {
            let ticket = replay(&row).unwrap().ticket;
            if ticket.game.is_finished() {
                return (row, sent);
            }
            let action = match ticket.game.phase().name() {
                "play" => Action::Play { card: ticket.game.hand().iter().next().expect("a card") },
                _ => Action::Draw,
            };
            let seq = row.actions.len() as u64;
            let r = request(seq, action, (seq == 0).then_some("player-seed"));
            match act(&row, r.clone(), &ClientSeed::parse("unused").unwrap(), 2_000 + seq as i64).unwrap() {
                DemoDecision::Apply { row: after, from_seq, answer } => {
                    assert_eq!(from_seq, seq);
                    row = after;
                    sent.push((r, answer));
                }
                DemoDecision::Replay(_) => panic!("a new action is applied"),
            }
        }
        panic!("a game ends within 200 actions");
    }

    #[test]
    fn schedules_are_drawn_in_proportion_to_their_tickets_per_block() {
        // Every position of a block maps to the row holding it, in file order.
        let t = table();
        let mut at = 0u32;
        for row in &t.schedules {
            assert_eq!(schedule_at(&t, at).unwrap(), row.prizes);
            assert_eq!(schedule_at(&t, at + row.tickets - 1).unwrap(), row.prizes);
            at += row.tickets;
        }
        assert_eq!(at, t.block_size);
        assert!(schedule_at(&t, t.block_size).is_err());
    }

    #[test]
    fn a_demo_game_is_the_engine_s_game_with_its_fair_stream() {
        // Art. 3.2: the same duel as a ticket's; the draws are the fair
        // stream's of (server seed, client seed, id), so the record replays.
        let (row, sent) = play_out(new_row());
        assert!(row.finished_ms.is_some());
        let mut game = Game::new(row.prizes);
        let mut stream = FairStream::new(&SEED, "player-seed", &row.id);
        for (r, answer) in &sent {
            let mut events = Vec::new();
            game.apply(r.action, &mut stream, &mut events).unwrap();
            let a: serde_json::Value = serde_json::from_str(answer).unwrap();
            assert_eq!(a["events"], serde_json::to_value(&events).unwrap());
            assert_eq!(a["ticket"]["channel"], "demo");
            assert_eq!(a["ticket"]["price_cents"], 0);
            assert_eq!(a["balance_cents"], serde_json::Value::Null);
        }
        let rec = record(&row).unwrap();
        assert_eq!(rec.result, game.result());
        assert_eq!(rec.server_seed.as_deref(), Some(hex::encode(SEED).as_str()));
        assert_eq!(rec.actions.len(), sent.len());
        assert_eq!(rec.draws.len() as u64, game.draws());
        let unfinished = DemoRow { actions: row.actions[..1].to_vec(), finished_ms: None, ..row.clone() };
        assert_eq!(record(&unfinished).unwrap().server_seed, None, "the seed stays secret until the end");
        assert_eq!(view(&replay(&unfinished).unwrap().ticket).server_seed, None);
    }

    #[test]
    fn an_action_sent_again_gets_the_same_answer_and_another_body_is_a_conflict() {
        let (row, sent) = play_out(new_row());
        for (r, answer) in &sent {
            let again = act(&row, r.clone(), &ClientSeed::parse("other").unwrap(), 9_999).unwrap();
            assert_eq!(again, DemoDecision::Replay(answer.clone()));
        }
        // Another card at an applied seq.
        let other = request(1, Action::Play { card: Rank::Seven }, None);
        let first_two: Vec<_> = sent.iter().take(2).map(|(r, _)| r.clone()).collect();
        if first_two[1] != other {
            let err = act(&row, other, &ClientSeed::parse("x").unwrap(), 0).unwrap_err();
            assert!(matches!(err, AppError::Conflict(_)), "{err:?}");
        }
        // A seq ahead, a seed after the first action, an action once finished.
        let ahead = request(row.actions.len() as u64 + 1, Action::Draw, None);
        assert!(matches!(act(&row, ahead, &ClientSeed::parse("x").unwrap(), 0), Err(AppError::Conflict(_))));
        let seeded = request(1, Action::Draw, Some("late"));
        assert!(matches!(act(&row, seeded, &ClientSeed::parse("x").unwrap(), 0), Err(AppError::BadRequest(_))));
        let after_end = request(row.actions.len() as u64, Action::Draw, None);
        assert!(act(&row, after_end, &ClientSeed::parse("x").unwrap(), 0).is_err());
    }

    #[test]
    fn the_first_action_without_a_seed_gets_the_random_one_and_a_wrong_card_changes_nothing() {
        let row = new_row();
        let random = ClientSeed::parse("drawn-by-the-server").unwrap();
        let hand = replay(&row).unwrap().ticket.game.hand();
        let card = hand.iter().next().unwrap();
        let DemoDecision::Apply { row: after, .. } =
            act(&row, request(0, Action::Play { card }, None), &random, 5).unwrap()
        else {
            panic!("applied")
        };
        assert_eq!(after.client_seed.as_deref(), Some("drawn-by-the-server"));
        assert_eq!(after.actions.len(), 1);
        // A card the player no longer holds (art. 3.2.1: each card is played once): refused.
        assert!(act(&after, request(1, Action::Play { card }, None), &random, 6).is_err());
    }
}

//! The duel of art. 3.2 as a state machine.
//!
//! A [`Game`] is the whole interactive part of one ticket: the first game,
//! and every Extra game it leads to (art. 3.2.5.4). The player acts with
//! [`Action::Play`] (pick a card, art. 3.2.3) and [`Action::Draw`] (click the
//! 16-card deck: a tie-break, art. 3.2.4, or the Extra duel, art. 3.2.5);
//! [`Game::apply`] checks the action against the phase, asks the draw source
//! for exactly the draws the rules need, updates the state and reports
//! [`Event`]s. A refused action leaves the state untouched.

mod action;
mod event;
mod phase;
mod stored;

pub use action::{Action, ActionError};
pub use event::{DeckFor, Discard, Event, EventSink, GameResult, Next, Outcome};
pub use phase::Phase;
pub use stored::GameState;

use crate::card::{DECK_SIZE, DeckCard, Hand, Rank};
use crate::draw::DrawSource;
use crate::prize::PrizeSchedule;
use serde::{Deserialize, Serialize};

/// The interactive part of one ticket.
///
/// It deserializes only into a state the rules can reach (see
/// [`GameState`]): a stored game that was tampered with is refused when
/// read, not discovered later in the middle of a trick.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "GameState")]
pub struct Game {
    prizes: PrizeSchedule,
    phase: Phase,
    /// 1 for the first game, 2 for the first Extra game, ...
    game: u32,
    hand: Hand,
    capone: Hand,
    /// The tied trick's cards while a trick's tie-break is due.
    tied: Option<(Rank, Rank)>,
    tricks_won: u8,
    tricks_lost: u8,
    /// Random draws taken so far: the number `n` of the next one.
    draws: u64,
    /// Actions applied so far; each takes one draw, so this equals `draws`.
    seq: u64,
    result: Option<GameResult>,
}

impl Game {
    /// A new ticket: eight hearts against eight spades (art. 3.2.1.1, 3.2.1.2).
    pub fn new(prizes: PrizeSchedule) -> Game {
        Game {
            prizes,
            phase: Phase::Play,
            game: 1,
            hand: Hand::FULL,
            capone: Hand::FULL,
            tied: None,
            tricks_won: 0,
            tricks_lost: 0,
            draws: 0,
            seq: 0,
            result: None,
        }
    }

    pub fn prizes(&self) -> PrizeSchedule {
        self.prizes
    }
    pub fn phase(&self) -> Phase {
        self.phase
    }
    /// 1 for the first game, 2 for the first Extra game, and so on.
    pub fn game_number(&self) -> u32 {
        self.game
    }
    /// The player's cards still in hand.
    pub fn hand(&self) -> Hand {
        self.hand
    }
    /// How many face-down cards As Capone still holds. Which ones is not
    /// shown to the player.
    pub fn capone_cards_left(&self) -> u32 {
        self.capone.len()
    }
    /// As Capone's remaining cards (for audit and tests; a UI shows only their number).
    pub fn capone_hand(&self) -> Hand {
        self.capone
    }
    /// The cards of the tied trick while its tie-break is due.
    pub fn tied_trick(&self) -> Option<(Rank, Rank)> {
        self.tied
    }
    /// Tricks won in the current game.
    pub fn tricks_won(&self) -> u8 {
        self.tricks_won
    }
    /// Tricks lost in the current game.
    pub fn tricks_lost(&self) -> u8 {
        self.tricks_lost
    }
    /// Random draws taken so far.
    pub fn draws(&self) -> u64 {
        self.draws
    }
    /// Actions applied so far: the `seq` of the next action.
    pub fn seq(&self) -> u64 {
        self.seq
    }
    pub fn result(&self) -> Option<GameResult> {
        self.result
    }
    pub fn is_finished(&self) -> bool {
        self.phase == Phase::Finished
    }

    /// Checks that `action` is allowed now, without changing anything.
    pub fn check(&self, action: Action) -> Result<(), ActionError> {
        match (self.phase, action) {
            (Phase::Finished, _) => Err(ActionError::Finished),
            (Phase::Play, Action::Play { card }) if !self.hand.contains(card) => Err(ActionError::CardNotInHand(card)),
            (Phase::Play, Action::Play { .. }) => Ok(()),
            (Phase::Play, Action::Draw) => Err(ActionError::CardExpected),
            (Phase::TieBreak | Phase::ExtraTieBreak | Phase::ExtraDraw, Action::Play { .. }) => {
                Err(ActionError::DrawExpected)
            }
            (Phase::TieBreak | Phase::ExtraTieBreak | Phase::ExtraDraw, Action::Draw) => Ok(()),
        }
    }

    /// Applies one action of the player, taking from `source` exactly the
    /// draws the rules need and reporting what happened to `events`.
    /// A refused action returns an error and changes nothing (guarantee 7).
    ///
    /// One match decides both whether the action is allowed and what it
    /// does (it is the simulator's hot path); [`Game::check`] states the same
    /// rules on their own and the property tests hold the two together.
    #[inline(always)]
    pub fn apply<S, E>(&mut self, action: Action, source: &mut S, events: &mut E) -> Result<(), ActionError>
    where
        S: DrawSource + ?Sized,
        E: EventSink + ?Sized,
    {
        match (self.phase, action) {
            (Phase::Play, Action::Play { card }) => {
                if !self.hand.contains(card) {
                    return Err(ActionError::CardNotInHand(card));
                }
                self.play(card, source, events)
            }
            (Phase::TieBreak, Action::Draw) => self.trick_tie_break(source, events),
            (Phase::ExtraTieBreak, Action::Draw) => self.extra_tie_break(source, events),
            (Phase::ExtraDraw, Action::Draw) => self.extra_duel(source, events),
            (Phase::Finished, _) => return Err(ActionError::Finished),
            (Phase::Play, Action::Draw) => return Err(ActionError::CardExpected),
            (Phase::TieBreak | Phase::ExtraTieBreak | Phase::ExtraDraw, Action::Play { .. }) => {
                return Err(ActionError::DrawExpected);
            }
        }
        self.seq += 1;
        Ok(())
    }

    /// Rebuilds a ticket from its actions (guarantee 2): the state and every
    /// event, or the index of the first refused action and why.
    pub fn replay<S: DrawSource + ?Sized>(
        prizes: PrizeSchedule,
        actions: &[Action],
        source: &mut S,
    ) -> Result<(Game, Vec<Event>), (usize, ActionError)> {
        let mut game = Game::new(prizes);
        let mut events = Vec::new();
        for (i, a) in actions.iter().enumerate() {
            game.apply(*a, source, &mut events).map_err(|e| (i, e))?;
        }
        Ok((game, events))
    }

    /// art. 3.2.2: As Capone's card is drawn uniformly among his remaining
    /// cards, independently of the player's card; the draw indexes his
    /// cards sorted from 7 up to A (`docs/contract.md` Fairness).
    #[inline(always)]
    fn play<S, E>(&mut self, card: Rank, source: &mut S, events: &mut E)
    where
        S: DrawSource + ?Sized,
        E: EventSink + ?Sized,
    {
        self.hand.remove(card);
        source.start_draw(self.draws);
        self.draws += 1;
        // As Capone holds as many cards as the player did before this trick.
        // Counting the player's hand keeps As Capone's hand off the path
        // that computes the draw's bound (the simulator's critical path).
        let left = self.hand.len() + 1;
        debug_assert_eq!(left, self.capone.len());
        let i = source.below(left);
        let capone = self.capone.nth(i);
        self.capone = self.capone.without_nth(i);
        // art. 3.2.3.1: the higher value wins the trick; equal values tie.
        let outcome = Outcome::of(card, capone);
        events.push(Event::Trick { player: card, capone, outcome });
        if card == capone {
            // art. 3.2.4.1: an extra trick settles the tie.
            self.tied = Some((card, capone));
            self.phase = Phase::TieBreak;
            return;
        }
        // Counted without a branch: who wins a trick is a coin toss that no
        // branch predictor can guess, and this is the simulator's hot path.
        self.tricks_won += u8::from(card > capone);
        self.tricks_lost += u8::from(card < capone);
        self.after_trick(events);
    }

    /// art. 3.2.4.2, 3.2.5.2: one card for each side, drawn from the full
    /// 16-card deck every time: two different cards of the deck (`docs/rules.md`).
    #[inline(always)]
    fn deck_draw<S, E>(&mut self, for_: DeckFor, source: &mut S, events: &mut E) -> Outcome
    where
        S: DrawSource + ?Sized,
        E: EventSink + ?Sized,
    {
        source.start_draw(self.draws);
        self.draws += 1;
        let a = source.below(DECK_SIZE);
        let mut b = source.below(DECK_SIZE - 1);
        if b >= a {
            b += 1;
        }
        let player = DeckCard::new(a as u8).expect("a < 16").rank();
        let capone = DeckCard::new(b as u8).expect("b < 16").rank();
        let outcome = Outcome::of(player, capone);
        events.push(Event::Deck { player, capone, outcome, for_ });
        outcome
    }

    /// art. 3.2.4.3: the higher card takes the tied trick; art. 3.2.4.4: a
    /// new tie repeats the deck draw.
    #[inline(always)]
    fn trick_tie_break<S, E>(&mut self, source: &mut S, events: &mut E)
    where
        S: DrawSource + ?Sized,
        E: EventSink + ?Sized,
    {
        match self.deck_draw(DeckFor::TieBreak, source, events) {
            Outcome::Tie => {}
            Outcome::Won => {
                self.tricks_won += 1;
                self.tied = None;
                self.after_trick(events);
            }
            Outcome::Lost => {
                self.tricks_lost += 1;
                self.tied = None;
                self.after_trick(events);
            }
        }
    }

    /// art. 3.2.5.3: the winner of the tie-break decides access to the
    /// Extra game; a new tie repeats the deck draw (art. 3.2.4.4).
    #[inline(always)]
    fn extra_tie_break<S, E>(&mut self, source: &mut S, events: &mut E)
    where
        S: DrawSource + ?Sized,
        E: EventSink + ?Sized,
    {
        match self.deck_draw(DeckFor::TieBreak, source, events) {
            Outcome::Tie => {}
            Outcome::Won => self.start_extra_game(events),
            Outcome::Lost => self.finish(4, events),
        }
    }

    /// art. 3.2.5.2, 3.2.5.3: the Extra duel.
    #[inline(always)]
    fn extra_duel<S, E>(&mut self, source: &mut S, events: &mut E)
    where
        S: DrawSource + ?Sized,
        E: EventSink + ?Sized,
    {
        match self.deck_draw(DeckFor::Extra, source, events) {
            Outcome::Won => self.start_extra_game(events),
            Outcome::Tie => self.phase = Phase::ExtraTieBreak,
            // art. 3.2.5.3, last paragraph: the ticket loses.
            Outcome::Lost => self.finish(4, events),
        }
    }

    /// After each settled trick: the game goes on until all eight cards are
    /// played (art. 3.2.3.2), then is judged (art. 3.2.3.3 to 3.2.3.5).
    #[inline(always)]
    fn after_trick<E: EventSink + ?Sized>(&mut self, events: &mut E) {
        if !self.hand.is_empty() {
            self.phase = Phase::Play;
            return;
        }
        let tricks = self.tricks_won;
        debug_assert_eq!(tricks + self.tricks_lost, 8);
        if tricks == 4 {
            // art. 3.2.3.4: exactly four tricks lead to the Extra duel.
            events.push(Event::GameOver { tricks, next: Next::ExtraDraw });
            self.phase = Phase::ExtraDraw;
        } else {
            // art. 3.2.3.3 (five or more win) and 3.2.3.5 (three or fewer lose).
            events.push(Event::GameOver { tricks, next: Next::Finished });
            self.finish(tricks, events);
        }
    }

    /// art. 3.2.5.4: eight new cards each, the same schedule; art. 3.2.5.5:
    /// the tricks of the earlier game and the duel won count for nothing.
    #[inline(always)]
    fn start_extra_game<E: EventSink + ?Sized>(&mut self, events: &mut E) {
        self.game += 1;
        self.hand = Hand::FULL;
        self.capone = Hand::FULL;
        self.tricks_won = 0;
        self.tricks_lost = 0;
        self.phase = Phase::Play;
        events.push(Event::ExtraGame { game: self.game });
    }

    /// The ticket is decided with `tricks` in its deciding game; the prize is
    /// the schedule's for those tricks, nothing under five (art. 3.1: one
    /// prize at most).
    #[inline(always)]
    fn finish<E: EventSink + ?Sized>(&mut self, tricks: u8, events: &mut E) {
        let prize_cents = self.prizes.for_tricks(tricks);
        self.result = Some(GameResult { tricks, prize_cents });
        self.phase = Phase::Finished;
        events.push(Event::Finished { tricks, prize_cents });
    }
}

impl TryFrom<GameState> for Game {
    type Error = String;

    /// Refuses a state the rules cannot reach, saying which rule it breaks
    /// (the list is on [`GameState`]).
    fn try_from(s: GameState) -> Result<Game, String> {
        s.check()?;
        Ok(Game {
            prizes: s.prizes,
            phase: s.phase,
            game: s.game,
            hand: s.hand,
            capone: s.capone,
            tied: s.tied,
            tricks_won: s.tricks_won,
            tricks_lost: s.tricks_lost,
            draws: s.draws,
            seq: s.seq,
            result: s.result,
        })
    }
}

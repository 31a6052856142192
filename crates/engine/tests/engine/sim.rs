//! The simulator's path (`engine::sim`) against `Game::apply`: for every
//! sequence of 16-bit words, the same events in the same order, the same
//! words taken, the same result and game number.

use as_capone_engine::{
    Action, DrawSource, Event, FastSource, Game, Lane, MAX_WINDOW, Phase, PrizeSchedule, Words16, accept16, below16,
    finish_ticket, play_weakest_first, play_weakest_first_branchless, play_weakest_first_single,
};
use proptest::prelude::*;

const PRIZES: PrizeSchedule = PrizeSchedule::new([300, 1000, 10_000, 1_000_000]);

/// Words from a script first, then from a seeded ChaCha8 stream; counts
/// the words taken.
struct Scripted {
    words: Vec<u16>,
    pos: usize,
    rest: FastSource,
}

impl Scripted {
    fn new(script: &[u16], seed: u64) -> Scripted {
        Scripted { words: script.to_vec(), pos: 0, rest: FastSource::from_u64(seed, 0) }
    }
}

impl Words16 for Scripted {
    fn window<const N: usize>(&mut self) -> [u16; N] {
        assert!(N <= MAX_WINDOW);
        while self.words.len() < self.pos + N {
            let x = self.rest.next_u16();
            self.words.push(x);
        }
        self.words[self.pos..self.pos + N].try_into().unwrap()
    }
    fn consume(&mut self, n: usize) {
        assert!(self.pos + n <= self.words.len(), "consumes only words it has seen");
        self.pos += n;
    }
}

/// `FastSource`'s rule on the scripted words, for `Game::apply`.
impl DrawSource for Scripted {
    fn start_draw(&mut self, _n: u64) {}
    fn below(&mut self, m: u32) -> u32 {
        below16(self, m)
    }
}

/// The ticket through `Game::apply`, the weakest card first.
fn by_game(src: &mut Scripted) -> (Game, Vec<Event>) {
    let mut g = Game::new(PRIZES);
    let mut events = Vec::new();
    loop {
        let action = match g.phase() {
            Phase::Play => Action::play(g.hand().lowest().unwrap()),
            Phase::TieBreak | Phase::ExtraTieBreak | Phase::ExtraDraw => Action::Draw,
            Phase::Finished => break,
        };
        g.apply(action, src, &mut events).unwrap();
    }
    (g, events)
}

fn check_same(script: &[u16], seed: u64) -> Result<(), TestCaseError> {
    let mut a = Scripted::new(script, seed);
    let (g, want) = by_game(&mut a);
    type Play = fn(PrizeSchedule, &mut Scripted, &mut Vec<Event>) -> (as_capone_engine::GameResult, u32);
    let paths: [(&str, Play); 3] = [
        ("pairs", play_weakest_first),
        ("single", play_weakest_first_single),
        ("branchless", play_weakest_first_branchless),
    ];
    for (name, play) in paths {
        let mut b = Scripted::new(script, seed);
        let mut got = Vec::new();
        let (result, game) = play(PRIZES, &mut b, &mut got);
        prop_assert_eq!(&got, &want, "{}", name);
        prop_assert_eq!(Some(result), g.result(), "{}", name);
        prop_assert_eq!(game, g.game_number(), "{}", name);
        prop_assert_eq!(b.pos, a.pos, "{}: the same words taken", name);
    }
    Ok(())
}

/// Words that steer the draws to every path: any word, the words each bound
/// 1..=16 rejects, words drawing each card index of a bound (ties, wins,
/// losses), and deck words that tie.
fn word() -> impl Strategy<Value = u16> {
    let rejected: Vec<u16> =
        (1..=16u32).flat_map(|m| (0..=u16::MAX).filter(move |&x| accept16(x, m).is_none())).collect();
    let rejected = rejected.into_iter().collect::<std::collections::BTreeSet<_>>().into_iter().collect::<Vec<_>>();
    prop_oneof![
        3 => any::<u16>(),
        1 => proptest::sample::select(rejected),
        // The top bits pick the card index for any bound: 0x0000, 0x1000, ...
        3 => (0u16..16).prop_map(|k| k << 12 | 0x0800),
    ]
}

/// The lane path's steps (`engine::lanes`) against the pair path, ticket
/// after ticket on one stream: the same tricks, game number and words.
fn check_lanes(script: &[u16], seed: u64, tickets: usize) -> Result<(), TestCaseError> {
    let mut a = Scripted::new(script, seed);
    let mut b = Scripted::new(script, seed);
    let mut lane = Lane::START;
    for t in 0..tickets {
        let (r, game) = play_weakest_first(PRIZES, &mut a, &mut as_capone_engine::Discard);
        let (tricks, extra) = finish_ticket(&mut lane, &mut b);
        prop_assert_eq!((tricks, 1 + extra), (r.tricks, game), "ticket {}", t);
        prop_assert_eq!(b.pos, a.pos, "ticket {}: the same words taken", t);
        prop_assert!(lane.at_start(), "{:?}", lane);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(20_000))]

    #[test]
    fn the_lane_steps_give_the_tickets_of_the_pair_path(
        script in prop::collection::vec(word(), 0..200),
        seed in any::<u64>(),
        tickets in 1usize..4,
    ) {
        check_lanes(&script, seed, tickets)?;
    }

    #[test]
    fn the_simulation_path_gives_the_events_of_game_apply(
        script in prop::collection::vec(word(), 0..200),
        seed in any::<u64>(),
    ) {
        check_same(&script, seed)?;
    }
}

/// Many whole tickets from ChaCha streams: every common path, thousands of
/// rejected words, re-tied tie-breaks and Extra games.
#[test]
fn a_million_tickets_of_the_stream_agree() {
    for stream in 0..4u64 {
        let mut a = FastSource::from_u64(99, stream);
        let mut b = FastSource::from_u64(99, stream);
        let mut c = FastSource::from_u64(99, stream);
        let mut lane = Lane::START;
        let mut extra = 0;
        for t in 0..250_000 {
            let mut g = Game::new(PRIZES);
            while !g.is_finished() {
                let action = match g.phase() {
                    Phase::Play => Action::play(g.hand().lowest().unwrap()),
                    _ => Action::Draw,
                };
                g.apply(action, &mut a, &mut as_capone_engine::Discard).unwrap();
            }
            let (r, game) = play_weakest_first(PRIZES, &mut b, &mut as_capone_engine::Discard);
            assert_eq!((Some(r), game), (g.result(), g.game_number()), "stream {stream}, ticket {t}");
            let (tricks, extra_games) = finish_ticket(&mut lane, &mut c);
            assert_eq!((tricks, 1 + extra_games), (r.tricks, game), "lanes: stream {stream}, ticket {t}");
            extra += game - 1;
        }
        assert_eq!(b.clone().next_u32(), c.next_u32(), "stream {stream}: the lanes take the same words");
        assert_eq!(a.next_u32(), b.next_u32(), "stream {stream}: the same words taken");
        assert!(extra > 50_000);
    }
}

//! Exact odds of As Capone, by enumeration, as rational numbers.
//!
//! Against any fixed order of the player's cards, As Capone's cards come in
//! a uniformly random order (art. 3.2.2 draws uniformly among his remaining
//! cards at each trick), so the eight tricks are the 8! permutations with
//! equal weight. A trick of equal values is settled at the deck (art. 3.2.4):
//! the deck's 16 x 15 ordered pairs of different cards are enumerated too,
//! and a repeated tie (art. 3.2.4.4) is a geometric series summed exactly.
//! The Extra duel (art. 3.2.5) is the same deck duel; an Extra game is a new
//! game with the same odds, so the final distribution is another geometric
//! series: `final[k] = per_round[k] / (1 - extra_per_round)`.

use crate::fraction::{self, int, ratio};
use engine::{DECK_SIZE, DeckCard};
use num_rational::BigRational;
use num_traits::{One, Zero};
use serde_json::{Value, json};

/// The exact odds of the game.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Odds {
    /// `per_round[k]`: one game of eight tricks ends with k tricks won.
    pub per_round: [BigRational; 9],
    /// One game leads into an Extra game: four tricks, then the Extra duel won.
    pub extra_per_round: BigRational,
    /// The ticket's deciding game ends with 5, 6, 7 or 8 tricks.
    pub final_tricks: [BigRational; 4],
    /// The ticket loses.
    pub lose: BigRational,
    /// A deck duel (tie-break or Extra duel) is won by the player, ties
    /// repeated until settled (art. 3.2.4.4).
    pub deck_duel_win: BigRational,
    /// One deck draw is a tie again (two cards of the same value).
    pub deck_tie: BigRational,
    /// Expected number of tied tricks in one game.
    pub expected_ties_per_round: BigRational,
    /// Expected number of games (first and Extra) per ticket.
    pub expected_games: BigRational,
}

/// A ticket's final outcome: 5 to 8 tricks of the deciding game, or lost.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FinalOutcome {
    Tricks(u8),
    Lose,
}

impl FinalOutcome {
    /// The five outcomes, in the order of `docs/contract.md`'s `final` object.
    pub const ALL: [FinalOutcome; 5] = [
        FinalOutcome::Tricks(5),
        FinalOutcome::Tricks(6),
        FinalOutcome::Tricks(7),
        FinalOutcome::Tricks(8),
        FinalOutcome::Lose,
    ];

    /// The outcome of a finished ticket whose deciding game had `tricks`.
    pub fn of_tricks(tricks: u8) -> FinalOutcome {
        if tricks >= 5 { FinalOutcome::Tricks(tricks) } else { FinalOutcome::Lose }
    }

    /// Index in [`FinalOutcome::ALL`].
    pub fn index(self) -> usize {
        match self {
            FinalOutcome::Tricks(t) => (t - 5) as usize,
            FinalOutcome::Lose => 4,
        }
    }

    /// The key of `docs/contract.md`'s JSON: `"5"` .. `"8"`, `"lose"`.
    pub fn key(self) -> String {
        match self {
            FinalOutcome::Tricks(t) => t.to_string(),
            FinalOutcome::Lose => "lose".to_string(),
        }
    }
}

/// Counts of As Capone's 8! orders by (tricks won outright, ties) against
/// the player's cards in any fixed order.
fn permutation_counts() -> [[u64; 9]; 9] {
    let mut counts = [[0u64; 9]; 9];
    let mut perm: [u8; 8] = [0, 1, 2, 3, 4, 5, 6, 7];
    loop {
        let mut won = 0;
        let mut ties = 0;
        for (player, &capone) in perm.iter().enumerate() {
            let player = player as u8;
            won += usize::from(player > capone);
            ties += usize::from(player == capone);
        }
        counts[won][ties] += 1;
        if !next_permutation(&mut perm) {
            return counts;
        }
    }
}

/// Lexicographic next permutation; false after the last one.
fn next_permutation(v: &mut [u8]) -> bool {
    let Some(i) = (1..v.len()).rev().find(|&i| v[i - 1] < v[i]) else {
        return false;
    };
    let j = (i..v.len()).rev().find(|&j| v[j] > v[i - 1]).expect("a larger element exists");
    v.swap(i - 1, j);
    v[i..].reverse();
    true
}

/// (player higher, player lower, same value) over the deck's ordered pairs
/// of two different cards (art. 3.2.1.4, 3.2.4.2).
fn deck_pair_counts() -> (u64, u64, u64) {
    let (mut higher, mut lower, mut same) = (0, 0, 0);
    for a in 0..DECK_SIZE as u8 {
        for b in (0..DECK_SIZE as u8).filter(|&b| b != a) {
            let (p, c) = (DeckCard::new(a).unwrap().rank(), DeckCard::new(b).unwrap().rank());
            match p.cmp(&c) {
                std::cmp::Ordering::Greater => higher += 1,
                std::cmp::Ordering::Less => lower += 1,
                std::cmp::Ordering::Equal => same += 1,
            }
        }
    }
    (higher, lower, same)
}

fn binomial(n: u64, k: u64) -> u64 {
    (0..k).fold(1, |acc, i| acc * (n - i) / (i + 1))
}

impl Odds {
    /// Computes the exact odds (a few milliseconds).
    pub fn exact() -> Odds {
        let (higher, lower, same) = deck_pair_counts();
        let pairs = higher + lower + same;
        // Repeated ties: sum over k of (same/pairs)^k * higher/pairs = higher / (higher + lower).
        let p = ratio(higher, higher + lower);
        let q = fraction::complement(&p);
        let counts = permutation_counts();
        let total: u64 = counts.iter().flatten().sum();
        let mut per_round: [BigRational; 9] = std::array::from_fn(|_| BigRational::zero());
        let mut ties_sum = 0u64;
        for (won, row) in counts.iter().enumerate() {
            for (ties, &n) in row.iter().enumerate() {
                if n == 0 {
                    continue;
                }
                ties_sum += n * ties as u64;
                let weight = ratio(n, total);
                // Each tie is won at the deck with chance p, independently.
                for j in 0..=ties {
                    let pj = int(binomial(ties as u64, j as u64))
                        * num_traits::pow(p.clone(), j)
                        * num_traits::pow(q.clone(), ties - j);
                    per_round[won + j] += &weight * pj;
                }
            }
        }
        // art. 3.2.3.4, 3.2.5.3: four tricks, then the deck duel won.
        let extra_per_round = &per_round[4] * &p;
        let restart = fraction::complement(&extra_per_round);
        let final_tricks: [BigRational; 4] = std::array::from_fn(|i| &per_round[5 + i] / &restart);
        let lose = final_tricks.iter().fold(BigRational::one(), |acc, f| acc - f);
        Odds {
            per_round,
            extra_per_round,
            final_tricks,
            lose,
            deck_duel_win: p,
            deck_tie: ratio(same, pairs),
            expected_ties_per_round: ratio(ties_sum, total),
            expected_games: BigRational::one() / restart,
        }
    }

    /// The chance of a final outcome.
    pub fn final_chance(&self, o: FinalOutcome) -> &BigRational {
        match o {
            FinalOutcome::Tricks(t) => &self.final_tricks[(t - 5) as usize],
            FinalOutcome::Lose => &self.lose,
        }
    }

    /// The five final chances in [`FinalOutcome::ALL`] order.
    pub fn final_chances(&self) -> [BigRational; 5] {
        FinalOutcome::ALL.map(|o| self.final_chance(o).clone())
    }

    /// `docs/contract.md`'s `odds --json` object, without `table`.
    pub fn to_json(&self) -> Value {
        let per_round: serde_json::Map<String, Value> = self
            .per_round
            .iter()
            .enumerate()
            .map(|(k, r)| (k.to_string(), Value::String(fraction::to_string(r))))
            .collect();
        let final_: serde_json::Map<String, Value> = FinalOutcome::ALL
            .iter()
            .map(|o| (o.key(), Value::String(fraction::to_string(self.final_chance(*o)))))
            .collect();
        json!({
            "per_round": per_round,
            "extra_per_round": fraction::to_string(&self.extra_per_round),
            "final": final_,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn there_are_eight_factorial_orders() {
        let counts = permutation_counts();
        assert_eq!(counts.iter().flatten().sum::<u64>(), 40320);
        // Derangements of 8 (no tie at all): 14833.
        assert_eq!(counts.iter().map(|row| row[0]).sum::<u64>(), 14833);
        // All eight tied: the identity alone.
        assert_eq!(counts[0][8], 1);
    }

    #[test]
    fn art_3_2_4_2_deck_pairs() {
        // 16 x 15 ordered pairs; 8 values x 2 orders of their two cards tie.
        assert_eq!(deck_pair_counts(), (112, 112, 16));
    }

    #[test]
    fn probabilities_add_up_to_one() {
        let o = Odds::exact();
        let sum: BigRational = o.per_round.iter().sum();
        assert_eq!(sum, BigRational::one());
        let fin: BigRational = o.final_chances().iter().sum();
        assert_eq!(fin, BigRational::one());
        assert_eq!(o.deck_duel_win, ratio(1, 2));
        assert_eq!(o.deck_tie, ratio(1, 15));
        // Expected fixed points of a random permutation: exactly one tie per game.
        assert_eq!(o.expected_ties_per_round, int(1));
    }
}

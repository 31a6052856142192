//! Cards: the eight values and their order (art. 3.2.1.1 to 3.2.1.3), a hand
//! of distinct values, and the 16-card deck (art. 3.2.1.4).

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::str::FromStr;

/// A card value. The derived order is the game's order (art. 3.2.1.3):
/// `Seven < Eight < ... < King < Ace`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum Rank {
    Seven = 0,
    Eight = 1,
    Nine = 2,
    Ten = 3,
    Jack = 4,
    Queen = 5,
    King = 6,
    Ace = 7,
}

impl Rank {
    /// The eight values, weakest first (art. 3.2.1.1).
    pub const ALL: [Rank; 8] =
        [Rank::Seven, Rank::Eight, Rank::Nine, Rank::Ten, Rank::Jack, Rank::Queen, Rank::King, Rank::Ace];

    /// The value with index `i & 7`: a conversion the compiler turns into
    /// nothing (the discriminants are the indices), where a table lookup
    /// would add a memory load to the simulator's critical path.
    #[inline(always)]
    pub const fn from_index_wrapping(i: u8) -> Rank {
        match i & 7 {
            0 => Rank::Seven,
            1 => Rank::Eight,
            2 => Rank::Nine,
            3 => Rank::Ten,
            4 => Rank::Jack,
            5 => Rank::Queen,
            6 => Rank::King,
            _ => Rank::Ace,
        }
    }

    /// 0 for 7 up to 7 for the Ace.
    #[inline]
    pub fn index(self) -> u8 {
        self as u8
    }

    /// The name used in data: `7 8 9 10 J Q K A` (`docs/contract.md`).
    pub fn as_str(self) -> &'static str {
        ["7", "8", "9", "10", "J", "Q", "K", "A"][self as usize]
    }

    /// The name shown to French players: `7 8 9 10 V D R A` (art. 3.2.1.1).
    pub fn french(self) -> &'static str {
        ["7", "8", "9", "10", "V", "D", "R", "A"][self as usize]
    }

    /// Lenient parsing for people typing at a terminal: also accepts the
    /// French letters V, D and R.
    pub fn parse_lenient(s: &str) -> Result<Rank, ParseRankError> {
        match s.trim().to_ascii_uppercase().as_str() {
            "V" => Ok(Rank::Jack),
            "D" => Ok(Rank::Queen),
            "R" => Ok(Rank::King),
            other => other.parse(),
        }
    }
}

/// A string that names no card value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown card {0:?}: cards are 7 8 9 10 J Q K A")]
pub struct ParseRankError(pub String);

impl FromStr for Rank {
    type Err = ParseRankError;
    fn from_str(s: &str) -> Result<Rank, ParseRankError> {
        Ok(match s.to_ascii_uppercase().as_str() {
            "7" => Rank::Seven,
            "8" => Rank::Eight,
            "9" => Rank::Nine,
            "10" => Rank::Ten,
            "J" => Rank::Jack,
            "Q" => Rank::Queen,
            "K" => Rank::King,
            "A" => Rank::Ace,
            _ => return Err(ParseRankError(s.to_string())),
        })
    }
}

impl fmt::Display for Rank {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Rank {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Rank {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Rank, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// A set of distinct card values: the player's hearts (art. 3.2.1.1) or As
/// Capone's spades (art. 3.2.1.2). One bit per value, bit 0 for the 7.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Hand(u8);

/// `SELECT[bits][i]`: the index of the i-th lowest set bit of `bits`.
static SELECT: [[u8; 8]; 256] = {
    let mut t = [[0u8; 8]; 256];
    let mut bits = 0;
    while bits < 256 {
        let mut i = 0;
        let mut b = 0;
        while b < 8 {
            if bits & (1 << b) != 0 {
                t[bits][i] = b as u8;
                i += 1;
            }
            b += 1;
        }
        bits += 1;
    }
    t
};

/// `LEN[bits]`: the number of set bits. A table rather than `count_ones`,
/// which without the `popcnt` instruction (not in the baseline x86-64 target)
/// costs a dozen instructions on the simulator's hot path.
static LEN: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut bits = 0;
    while bits < 256 {
        t[bits] = (bits as u8).count_ones() as u8;
        bits += 1;
    }
    t
};

/// `WITHOUT[bits][i]`: `bits` without its i-th lowest set bit.
static WITHOUT: [[u8; 8]; 256] = {
    let mut t = [[0u8; 8]; 256];
    let mut bits = 0;
    while bits < 256 {
        let mut i = 0;
        while i < 8 {
            t[bits][i] = (bits as u8) & !(1u8 << SELECT[bits][i]);
            i += 1;
        }
        bits += 1;
    }
    t
};

impl Hand {
    /// The eight values of a new game (art. 3.2.1.1, 3.2.5.4).
    pub const FULL: Hand = Hand(0xFF);
    pub const EMPTY: Hand = Hand(0);

    pub fn from_bits(bits: u8) -> Hand {
        Hand(bits)
    }
    pub fn bits(self) -> u8 {
        self.0
    }
    #[inline]
    pub fn contains(self, r: Rank) -> bool {
        self.0 & (1 << r as u8) != 0
    }
    #[inline]
    pub fn remove(&mut self, r: Rank) {
        self.0 &= !(1 << r as u8);
    }
    #[inline]
    pub fn insert(&mut self, r: Rank) {
        self.0 |= 1 << r as u8;
    }
    #[inline]
    pub fn len(self) -> u32 {
        u32::from(LEN[self.0 as usize])
    }
    #[inline]
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
    /// The i-th card of the hand sorted from 7 up to A (`docs/contract.md` Fairness:
    /// the draw's result indexes the remaining cards in this order).
    /// Panics if `i >= self.len()`.
    #[inline]
    pub fn nth(self, i: u32) -> Rank {
        assert!(i < self.len(), "card index {i} out of a hand of {}", self.len());
        Rank::from_index_wrapping(SELECT[self.0 as usize][(i & 7) as usize])
    }
    /// The hand without its i-th card (sorted from 7 up): one table lookup
    /// from the hand and the draw, instead of finding the card first and
    /// then removing it (that chain of dependent steps bounds the
    /// simulator's speed). Panics if `i >= self.len()`.
    #[inline]
    pub fn without_nth(self, i: u32) -> Hand {
        assert!(i < self.len(), "card index {i} out of a hand of {}", self.len());
        Hand(WITHOUT[self.0 as usize][(i & 7) as usize])
    }
    /// The weakest card, if any.
    #[inline]
    pub fn lowest(self) -> Option<Rank> {
        (self.0 != 0).then(|| Rank::from_index_wrapping(self.0.trailing_zeros() as u8))
    }
    /// The strongest card, if any.
    #[inline]
    pub fn highest(self) -> Option<Rank> {
        (self.0 != 0).then(|| Rank::from_index_wrapping(7 - self.0.leading_zeros() as u8))
    }
    /// The cards, weakest first.
    pub fn iter(self) -> impl Iterator<Item = Rank> {
        Rank::ALL.into_iter().filter(move |r| self.contains(*r))
    }
}

impl FromIterator<Rank> for Hand {
    fn from_iter<I: IntoIterator<Item = Rank>>(iter: I) -> Hand {
        let mut h = Hand::EMPTY;
        for r in iter {
            h.insert(r);
        }
        h
    }
}

impl Serialize for Hand {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter())
    }
}

impl<'de> Deserialize<'de> for Hand {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Hand, D::Error> {
        let cards = Vec::<Rank>::deserialize(d)?;
        let hand: Hand = cards.iter().copied().collect();
        if hand.len() as usize != cards.len() {
            return Err(serde::de::Error::custom("a hand holds each value at most once"));
        }
        Ok(hand)
    }
}

/// Cards in the 16-card deck (art. 3.2.1.4): two of each value.
pub const DECK_SIZE: u32 = 16;

/// One card of the deck, by index 0..16 in the order
/// `7 7 8 8 9 9 10 10 J J Q Q K K A A` (`docs/contract.md` Fairness).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeckCard(u8);

impl DeckCard {
    pub fn new(index: u8) -> Option<DeckCard> {
        (u32::from(index) < DECK_SIZE).then_some(DeckCard(index))
    }
    pub fn index(self) -> u8 {
        self.0
    }
    /// Index `i` is value `i / 2`.
    #[inline]
    pub fn rank(self) -> Rank {
        Rank::from_index_wrapping(self.0 / 2)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn art_3_2_1_3_order_ace_strongest_seven_weakest() {
        let names: Vec<_> = Rank::ALL.iter().map(|r| r.as_str()).collect();
        assert_eq!(names, ["7", "8", "9", "10", "J", "Q", "K", "A"]);
        for w in Rank::ALL.windows(2) {
            assert!(w[0] < w[1]);
        }
        assert_eq!(Rank::ALL.iter().max(), Some(&Rank::Ace));
    }

    #[test]
    fn art_3_2_1_1_french_names() {
        let names: Vec<_> = Rank::ALL.iter().map(|r| r.french()).collect();
        assert_eq!(names, ["7", "8", "9", "10", "V", "D", "R", "A"]);
        assert_eq!(Rank::parse_lenient("v"), Ok(Rank::Jack));
        assert_eq!(Rank::parse_lenient(" D "), Ok(Rank::Queen));
        assert_eq!(Rank::parse_lenient("r"), Ok(Rank::King));
    }

    #[test]
    fn ranks_parse_and_print_round_trip() {
        for r in Rank::ALL {
            assert_eq!(r.as_str().parse::<Rank>(), Ok(r));
            assert_eq!(serde_json::to_string(&r).unwrap(), format!("\"{}\"", r));
        }
        assert!("1".parse::<Rank>().is_err());
        assert!("V".parse::<Rank>().is_err(), "data uses J, not V");
        assert!(serde_json::from_str::<Rank>("\"11\"").is_err());
    }

    #[test]
    fn hand_nth_indexes_cards_sorted_from_seven_up() {
        let h: Hand = [Rank::Ace, Rank::Nine, Rank::Jack].into_iter().collect();
        assert_eq!(h.len(), 3);
        assert_eq!(h.nth(0), Rank::Nine);
        assert_eq!(h.nth(1), Rank::Jack);
        assert_eq!(h.nth(2), Rank::Ace);
        assert_eq!(h.lowest(), Some(Rank::Nine));
        assert_eq!(h.highest(), Some(Rank::Ace));
        for bits in 0..=255u8 {
            let h = Hand::from_bits(bits);
            let listed: Vec<Rank> = h.iter().collect();
            let by_nth: Vec<Rank> = (0..h.len()).map(|i| h.nth(i)).collect();
            assert_eq!(listed, by_nth);
            assert_eq!(h.len(), bits.count_ones());
            for i in 0..h.len() {
                let mut removed = h;
                removed.remove(h.nth(i));
                assert_eq!(h.without_nth(i), removed);
            }
        }
        for i in 0..8 {
            assert_eq!(Rank::from_index_wrapping(i), Rank::ALL[i as usize]);
        }
    }

    #[test]
    fn hand_serde_refuses_duplicates() {
        let h: Hand = serde_json::from_str(r#"["7","A"]"#).unwrap();
        assert_eq!(serde_json::to_string(&h).unwrap(), r#"["7","A"]"#);
        assert!(serde_json::from_str::<Hand>(r#"["7","7"]"#).is_err());
    }

    #[test]
    fn art_3_2_1_4_deck_has_two_cards_of_each_value() {
        let mut count = [0; 8];
        for i in 0..DECK_SIZE as u8 {
            count[DeckCard::new(i).unwrap().rank() as usize] += 1;
        }
        assert_eq!(count, [2; 8]);
        assert!(DeckCard::new(16).is_none());
    }
}

//! The prize schedule a ticket carries under its scratch zone (art. 3.1):
//! the prize in cents for 5, 6, 7 and 8 tricks of the deciding game.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::collections::BTreeMap;

/// Prizes in integer cents for 5, 6, 7 and 8 tricks; 0 means no prize.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub struct PrizeSchedule {
    cents: [u64; 4],
}

impl PrizeSchedule {
    /// A schedule that pays nothing (for simulation).
    pub const NONE: PrizeSchedule = PrizeSchedule { cents: [0; 4] };

    /// Prizes for 5, 6, 7 and 8 tricks, in this order.
    pub const fn new(cents: [u64; 4]) -> PrizeSchedule {
        PrizeSchedule { cents }
    }

    /// The prize for a deciding game of `tricks` tricks: nothing under five
    /// (art. 3.2.3.3, 3.2.3.5).
    #[inline]
    pub fn for_tricks(&self, tricks: u8) -> u64 {
        match tricks {
            5..=8 => self.cents[(tricks - 5) as usize],
            _ => 0,
        }
    }

    /// Prizes for 5, 6, 7 and 8 tricks.
    pub fn cents(&self) -> [u64; 4] {
        self.cents
    }

    /// The largest prize of the schedule.
    pub fn largest(&self) -> u64 {
        self.cents.iter().copied().max().unwrap_or(0)
    }
}

/// Serialized as `docs/contract.md`'s `prizes_cents`: `{"5": 300, "6": 1500, ...}`.
impl Serialize for PrizeSchedule {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let map: BTreeMap<String, u64> = (5..=8u8).map(|t| (t.to_string(), self.for_tricks(t))).collect();
        map.serialize(s)
    }
}

impl<'de> Deserialize<'de> for PrizeSchedule {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<PrizeSchedule, D::Error> {
        let map = BTreeMap::<String, u64>::deserialize(d)?;
        let mut cents = [0u64; 4];
        for (k, v) in map {
            let t: u8 = match k.parse() {
                Ok(t @ 5..=8) => t,
                _ => {
                    return Err(serde::de::Error::custom(format!(
                        "unknown trick count {k:?}: prizes are for 5, 6, 7 or 8 tricks"
                    )));
                }
            };
            cents[(t - 5) as usize] = v;
        }
        Ok(PrizeSchedule { cents })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn art_3_2_3_prizes_only_from_five_tricks() {
        let p = PrizeSchedule::new([300, 1000, 10_000, 1_000_000]);
        for t in 0..=4 {
            assert_eq!(p.for_tricks(t), 0);
        }
        assert_eq!(p.for_tricks(5), 300);
        assert_eq!(p.for_tricks(8), 1_000_000);
        assert_eq!(p.largest(), 1_000_000);
    }

    #[test]
    fn serializes_as_the_contract_map() {
        let p = PrizeSchedule::new([300, 1500, 20000, 5000000]);
        let s = serde_json::to_string(&p).unwrap();
        assert_eq!(s, r#"{"5":300,"6":1500,"7":20000,"8":5000000}"#);
        assert_eq!(serde_json::from_str::<PrizeSchedule>(&s).unwrap(), p);
        let partial: PrizeSchedule = serde_json::from_str(r#"{"8":5}"#).unwrap();
        assert_eq!(partial.cents(), [0, 0, 0, 5]);
        assert!(serde_json::from_str::<PrizeSchedule>(r#"{"4":5}"#).is_err());
        assert!(serde_json::from_str::<PrizeSchedule>(r#"{"5":-1}"#).is_err());
    }
}

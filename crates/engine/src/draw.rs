//! The one door through which randomness enters a game.
//!
//! Every random draw of the game is one of two kinds (`docs/rules.md`): As Capone's
//! card, uniform over his remaining hand (art. 3.2.2), or a deck draw of two
//! different cards of 16 (art. 3.2.4.2, 3.2.5.2). The engine numbers its
//! draws `0, 1, 2, ...` over the whole ticket and announces each one with
//! [`DrawSource::start_draw`] before asking for the uniform integers it needs.

/// A source of unbiased uniform integers.
pub trait DrawSource {
    /// Random draw number `n` of the ticket starts: the following calls to
    /// [`DrawSource::below`] belong to it. A source whose numbers do not
    /// depend on the draw number (a simulation's) may ignore this.
    fn start_draw(&mut self, n: u64);

    /// A uniform integer in `0..m`, without bias. `m` is at least 1.
    fn below(&mut self, m: u32) -> u32;
}

impl<S: DrawSource + ?Sized> DrawSource for &mut S {
    #[inline]
    fn start_draw(&mut self, n: u64) {
        (**self).start_draw(n)
    }
    #[inline]
    fn below(&mut self, m: u32) -> u32 {
        (**self).below(m)
    }
}

/// Unbiased scaling by rejection, exactly as `docs/contract.md` (Fairness) writes it:
/// take the next `u32` `x`, reject it while `x >= 2^32 - (2^32 mod m)`, and
/// return `x mod m`. Guarantee 5.
#[inline]
pub fn uniform_below(m: u32, mut next_u32: impl FnMut() -> u32) -> u32 {
    assert!(m >= 1, "a uniform draw needs at least one outcome");
    let span = 1u64 << 32;
    let limit = span - span % u64::from(m);
    loop {
        let x = next_u32();
        if u64::from(x) < limit {
            return x % m;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejection_limit_is_the_largest_multiple_of_m() {
        // m = 3: 2^32 mod 3 = 1, so 2^32 - 1 = 0xFFFF_FFFF is rejected.
        let mut xs = [u32::MAX, u32::MAX, 7].into_iter();
        assert_eq!(uniform_below(3, || xs.next().unwrap()), 1);
        // 0xFFFF_FFFE is the largest accepted value for m = 3.
        let mut xs = [u32::MAX - 1].into_iter();
        assert_eq!(uniform_below(3, || xs.next().unwrap()), (u32::MAX - 1) % 3);
        // Powers of two never reject.
        let mut xs = [u32::MAX].into_iter();
        assert_eq!(uniform_below(16, || xs.next().unwrap()), 15);
        // m = 15: 2^32 mod 15 = 1.
        let mut xs = [u32::MAX, 29].into_iter();
        assert_eq!(uniform_below(15, || xs.next().unwrap()), 14);
        // m = 1: 2^32 mod 1 = 0, nothing is rejected and the answer is always 0.
        let mut xs = [u32::MAX].into_iter();
        assert_eq!(uniform_below(1, || xs.next().unwrap()), 0);
    }
}

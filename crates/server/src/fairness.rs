//! The operating system's CSPRNG, and how tests may fix every ticket's
//! server seed (docs/contract.md Fairness, guarantee 5 and 6). Real seeds are
//! derived from the server key when a block is emitted ([`crate::keys`]).

use rand_core::{OsRng, TryRngCore};

/// `N` bytes of the operating system's CSPRNG.
pub fn random_bytes<const N: usize>() -> [u8; N] {
    let mut b = [0u8; N];
    OsRng.try_fill_bytes(&mut b).expect("the operating system's random source failed");
    b
}

/// A uniform number below `m` from the operating system's CSPRNG, scaled
/// without bias by rejection ([`engine::uniform_below`]).
pub fn random_below(m: u32) -> u32 {
    engine::uniform_below(m, || u32::from_le_bytes(random_bytes::<4>()))
}

/// How the server picks each ticket's secret seed.
#[derive(Clone, Debug, Default)]
pub enum ServerSeeds {
    /// Derived from the server key when the block is emitted: the only
    /// choice a configuration file, a flag or an environment variable can make.
    #[default]
    FromKey,
    /// INSECURE, for tests only: every ticket of every block emitted gets
    /// this seed (still committed in the block's root), so a test can
    /// predict the draws and steer a game into a tie, an Extra game, a win
    /// or a loss. It can only be set from Rust code (`AppOptions`), never
    /// from the command line, and the server logs a warning when it is used.
    InsecureFixedForTests([u8; 32]),
}

impl ServerSeeds {
    /// The fixed seed, if any.
    pub fn fixed(&self) -> Option<[u8; 32]> {
        match self {
            ServerSeeds::FromKey => None,
            ServerSeeds::InsecureFixedForTests(s) => Some(*s),
        }
    }
}

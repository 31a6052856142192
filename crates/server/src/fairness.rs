//! Where server seeds come from (CONTRACT.md Fairness, guarantee 5 and 6):
//! 32 bytes of the operating system's CSPRNG per ticket.

use rand_core::{OsRng, TryRngCore};

/// `N` bytes of the operating system's CSPRNG.
pub fn random_bytes<const N: usize>() -> [u8; N] {
    let mut b = [0u8; N];
    OsRng.try_fill_bytes(&mut b).expect("the operating system's random source failed");
    b
}

/// How the server picks each ticket's secret seed.
#[derive(Clone, Debug, Default)]
pub enum ServerSeeds {
    /// 32 fresh bytes of the OS CSPRNG per ticket: the only choice a
    /// configuration file, a flag or an environment variable can make.
    #[default]
    OsRandom,
    /// INSECURE, for tests only: every ticket gets this seed, so a test can
    /// predict the draws and steer a game into a tie, an Extra game, a win
    /// or a loss. It can only be set from Rust code (`AppOptions`), never
    /// from the command line, and the server logs a warning when it is used.
    InsecureFixedForTests([u8; 32]),
}

impl ServerSeeds {
    pub fn next(&self) -> [u8; 32] {
        match self {
            ServerSeeds::OsRandom => random_bytes::<32>(),
            ServerSeeds::InsecureFixedForTests(s) => *s,
        }
    }
}

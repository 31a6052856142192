//! How the caller is told of the run, and how it stops it.

/// Told how the run goes. Each stream plays `tickets` tickets, so a whole
/// report reports `2 * tickets` through [`Progress::tickets`].
pub trait Progress: Sync {
    /// The run enters a stage: "simulation stream", "fair stream", "block risk".
    fn stage(&self, _name: &'static str) {}
    /// `n` more tickets were played.
    fn tickets(&self, _n: u64) {}
    /// Whether the caller wants the run to stop (a deadline passed): asked
    /// before each chunk of tickets; once true, [`build`](crate::build) ends with
    /// [`Stopped`] within a chunk's time.
    fn stopped(&self) -> bool {
        false
    }
}

/// [`build`](crate::build)'s error when its [`Progress`] stopped it before the end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stopped;

impl std::fmt::Display for Stopped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the report's run was stopped before its end")
    }
}

impl std::error::Error for Stopped {}

/// No progress told.
pub struct Silent;

impl Progress for Silent {}

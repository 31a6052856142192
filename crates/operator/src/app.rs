//! What the handlers share.

use crate::chaos::Chaos;
use crate::ledger::Ledger;
use wallet::Keys;

/// The shared state of the handlers.
pub(crate) struct App {
    pub(crate) ledger: Ledger,
    pub(crate) keys: Keys,
    pub(crate) chaos: Chaos,
    pub(crate) admin_token: Option<String>,
    pub(crate) game_url: Option<String>,
}

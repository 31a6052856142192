//! A reference operator on a fresh ledger, and the requests the game server sends.

use as_capone_operator::{Options, Running, WalletClient, start};
use std::time::Duration;
use wallet::{CURRENCY, Keys, MoneyRequest, RollbackRequest, RoundId, TxKind};

/// The admin token of the tests.
pub const ADMIN: &str = "admin-token-of-the-tests";

/// The key spec shared by the tests' game server and operator.
pub fn key_spec() -> String {
    format!("test-key:{}", "ab".repeat(32))
}

/// The shared keys.
pub fn keys() -> Keys {
    Keys::parse(&key_spec()).unwrap()
}

/// A running operator, its ledger's directory and a signed client.
pub struct Op {
    pub running: Running,
    pub client: WalletClient,
    pub http: reqwest::Client,
    pub dir: tempfile::TempDir,
}

/// The default options on a fresh ledger in `dir`.
pub fn options(dir: &tempfile::TempDir) -> Options {
    let mut o = Options::new("127.0.0.1:0".parse().unwrap(), dir.path().join("operator.db"), keys());
    o.admin_token = Some(ADMIN.into());
    o
}

/// A fresh operator.
pub async fn operator() -> Op {
    let dir = tempfile::tempdir().unwrap();
    let options = options(&dir);
    operator_with(options, dir).await
}

/// An operator with these options.
pub async fn operator_with(options: Options, dir: tempfile::TempDir) -> Op {
    let running = start(options).await.unwrap();
    let client = WalletClient::new(&running.url(), keys(), Duration::from_secs(10));
    Op { running, client, http: reqwest::Client::new(), dir }
}

impl Op {
    /// Creates or sets a player.
    pub async fn player(&self, player: &str, cents: i64) {
        self.running.ledger().set_player(player, cents, None, false, as_capone_operator::now_ms()).await.unwrap();
    }

    /// The player's balance, read from the ledger.
    pub async fn balance(&self, player: &str) -> i64 {
        self.running.ledger().player(player, as_capone_operator::now_ms()).await.unwrap().unwrap().balance_cents
    }

    /// GET an admin path with the token.
    pub async fn admin_get(&self, path: &str) -> serde_json::Value {
        let r = self.http.get(format!("{}{path}", self.running.url())).bearer_auth(ADMIN).send().await.unwrap();
        assert_eq!(r.status(), 200, "{path}");
        r.json().await.unwrap()
    }

    /// The ledger's summary, which must be balanced.
    pub async fn assert_balanced(&self) -> as_capone_operator::Summary {
        let s = self.running.ledger().summary().await.unwrap();
        assert!(s.balanced, "the ledger is not balanced: {s:?}");
        assert_eq!(s.entries_sum_cents, 0);
        s
    }
}

/// The debit (or credit) of round `serial.1` as the game server sends it.
pub fn money(kind: TxKind, serial: &str, player: &str, amount_cents: i64) -> MoneyRequest {
    let round = RoundId::new(serial, 1);
    MoneyRequest {
        transaction_id: round.tx(kind),
        round_id: round.id(),
        player: player.into(),
        amount_cents,
        currency: CURRENCY.into(),
        game: "ACP".into(),
    }
}

/// The rollback of round `serial.1`'s debit.
pub fn rollback(serial: &str, player: &str, amount_cents: i64) -> RollbackRequest {
    let round = RoundId::new(serial, 1);
    RollbackRequest {
        transaction_id: round.tx(TxKind::Rollback),
        round_id: round.id(),
        player: player.into(),
        debit_transaction_id: round.tx(TxKind::Debit),
        amount_cents,
        currency: CURRENCY.into(),
    }
}

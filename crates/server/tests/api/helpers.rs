use engine::{Action, DrawSource, Event, FairStream, FastSource, Game, Phase, PrizeSchedule};
use reqwest::StatusCode;
use serde_json::{Value, json};
use server::fairness::ServerSeeds;
use server::{App, AppOptions, Config};

#[path = "../common/fixture.rs"]
mod fixture;
pub use fixture::{SEED, START, TABLE};

pub struct TestApp {
    pub app: App,
    pub url: String,
    pub client: reqwest::Client,
    pub db_path: std::path::PathBuf,
    _dir: tempfile::TempDir,
}

pub async fn spawn_app() -> TestApp {
    spawn_app_with(|_| {}).await
}

pub async fn spawn_app_with(tune: impl FnOnce(&mut Config)) -> TestApp {
    let dir = tempfile::tempdir().unwrap();
    let db_path = dir.path().join("test.db");
    let mut config = Config {
        listen: "127.0.0.1:0".into(),
        db: format!("sqlite://{}", db_path.display()),
        start_balance_cents: START as u64,
        demo_token: String::new(),
        initial_blocks: 2,
        ..Config::default()
    };
    tune(&mut config);
    let table = math::PrizeTable::parse_toml(TABLE).unwrap();
    let app = App::start(AppOptions { config, table, seeds: ServerSeeds::InsecureFixedForTests(SEED) })
        .await
        .expect("server starts");
    let url = app.url();
    TestApp { app, url, client: reqwest::Client::new(), db_path, _dir: dir }
}

pub struct Resp {
    pub status: StatusCode,
    pub bytes: Vec<u8>,
    pub json: Value,
}

impl TestApp {
    pub async fn send(&self, req: reqwest::RequestBuilder) -> Resp {
        let r = req.send().await.expect("request");
        let status = r.status();
        let bytes = r.bytes().await.unwrap().to_vec();
        let json = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        Resp { status, bytes, json }
    }

    pub async fn post(&self, path: &str, token: Option<&str>, body: Value) -> Resp {
        let mut req = self.client.post(format!("{}{path}", self.url)).json(&body);
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        self.send(req).await
    }

    pub async fn get(&self, path: &str, token: Option<&str>) -> Resp {
        let mut req = self.client.get(format!("{}{path}", self.url));
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        self.send(req).await
    }

    pub async fn register(&self) -> String {
        let r = self.post("/api/players", None, json!({"name": "test"})).await;
        assert_eq!(r.status, 201, "{}", r.json);
        assert!(r.json["player_id"].as_i64().is_some(), "{}", r.json);
        r.json["token"].as_str().unwrap().to_string()
    }

    pub async fn buy(&self, token: &str, client_seed: Option<&str>) -> Value {
        let body = match client_seed {
            Some(s) => json!({"client_seed": s}),
            None => json!({}),
        };
        let r = self.post("/api/tickets", Some(token), body).await;
        assert_eq!(r.status, 201, "{}", r.json);
        r.json["ticket"].clone()
    }

    pub async fn balance(&self, token: &str) -> i64 {
        let r = self.get("/api/me", Some(token)).await;
        assert_eq!(r.status, 200);
        r.json["balance_cents"].as_i64().unwrap()
    }

    /// Plays `actions` over HTTP and returns every answer.
    pub async fn play(&self, token: &str, id: &str, actions: &[Action]) -> Vec<Resp> {
        let mut out = Vec::new();
        for (seq, a) in actions.iter().enumerate() {
            let r = self.post(&format!("/api/tickets/{id}/actions"), Some(token), action_body(seq as u64, *a)).await;
            assert_eq!(r.status, 200, "action {seq}: {}", r.json);
            out.push(r);
        }
        out
    }

    pub async fn shutdown(self) {
        self.app.shutdown().await.unwrap();
    }
}

pub fn action_body(seq: u64, a: Action) -> Value {
    match a {
        Action::Play { card } => json!({"seq": seq, "action": "play", "card": card.as_str()}),
        Action::Draw => json!({"seq": seq, "action": "draw"}),
    }
}

pub fn prizes_of(ticket: &Value) -> PrizeSchedule {
    serde_json::from_value(ticket["prizes_cents"].clone()).unwrap()
}

/// A whole ticket played offline with the server's seed: the actions and
/// the events of each action.
pub struct Plan {
    pub actions: Vec<Action>,
    pub events: Vec<Vec<Event>>,
    pub game: Game,
}

/// Tries up to `tries` random card orders on this ticket and returns the
/// first plan whose events satisfy `want`.
pub fn search(ticket: &Value, tries: u64, want: impl Fn(&Plan) -> bool) -> Option<Plan> {
    let serial = ticket["serial"].as_str().unwrap();
    let client_seed = ticket["client_seed"].as_str().unwrap();
    let prizes = prizes_of(ticket);
    for k in 0..tries {
        let mut choices = FastSource::from_u64(k, 7);
        let mut stream = FairStream::new(&SEED, client_seed, serial);
        let mut game = Game::new(prizes);
        let mut plan = Plan { actions: Vec::new(), events: Vec::new(), game: game.clone() };
        while !game.is_finished() {
            let a = match game.phase() {
                Phase::Play => {
                    let hand = game.hand();
                    Action::play(hand.nth(choices.below(hand.len())))
                }
                _ => Action::Draw,
            };
            let mut ev = Vec::new();
            game.apply(a, &mut stream, &mut ev).unwrap();
            plan.actions.push(a);
            plan.events.push(ev);
        }
        plan.game = game;
        if want(&plan) {
            return Some(plan);
        }
    }
    None
}

/// Buys tickets until one admits a plan with `want` (at most `max_tickets`).
pub async fn find_ticket(app: &TestApp, token: &str, max_tickets: usize, want: impl Fn(&Plan) -> bool) -> (Value, Plan) {
    for _ in 0..max_tickets {
        let t = app.buy(token, None).await;
        if let Some(p) = search(&t, 300, &want) {
            return (t, p);
        }
    }
    panic!("no ticket among {max_tickets} admits the wanted plan");
}

pub fn all_events(p: &Plan) -> impl Iterator<Item = &Event> {
    p.events.iter().flatten()
}

pub fn assert_error(r: &Resp, status: u16, code: &str) {
    assert_eq!(r.status.as_u16(), status, "{}", String::from_utf8_lossy(&r.bytes));
    assert_eq!(r.json["error"], code, "{}", r.json);
    assert!(r.json["message"].as_str().is_some_and(|m| !m.is_empty()), "{}", r.json);
    assert_eq!(r.json.as_object().unwrap().len(), 2, "only error and message: {}", r.json);
}

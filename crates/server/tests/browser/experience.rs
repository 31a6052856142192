//! The game screens, on a desktop window and on a 390 px phone:
//! a ticket with an Extra game (the Extra duel's outcome said on the table
//! in a banner, the earlier games recalled, every game recapped on the
//! result with the deciding one marked), "Acheter un autre ticket" buying
//! the next ticket through the lobby's purchase (a new ticket opened, the
//! balance debited once), the history ("Mes tickets": games, tricks, net
//! result, a page at a time), the commitment shown at opening with its
//! "Pourquoi ?", and the check's verdict in plain words, the technical
//! detail folded away (and unfolded when the check fails).

use crate::game::{assert_table_shows, scratch};
use crate::harness::*;
use crate::webdriver::Screen;
use engine::{Action, Event, Next, Outcome};
use serde_json::{Value, json};

/// A game of the ticket as the engine played it: its number, its tricks,
/// and its Extra duel ("won", "lost" or none).
#[derive(Debug, PartialEq)]
struct GameRecap {
    game: u64,
    tricks: u8,
    extra: Option<&'static str>,
}

fn games_of(plan: &Foreseen) -> Vec<GameRecap> {
    let events: Vec<&Event> = plan.all_events().collect();
    let mut out = Vec::new();
    for (i, e) in events.iter().enumerate() {
        if let Event::GameOver { tricks, next } = e {
            let extra = match next {
                Next::ExtraDraw if events[i..].iter().any(|e| matches!(e, Event::ExtraGame { .. })) => Some("won"),
                Next::ExtraDraw => Some("lost"),
                Next::Finished => None,
            };
            out.push(GameRecap { game: out.len() as u64 + 1, tricks: *tricks, extra });
        }
    }
    out
}

/// French, as the page says it everywhere: "1re partie", "Partie Extra 1".
fn game_name(n: u64) -> String {
    if n == 1 { "1re partie".into() } else { format!("Partie Extra {}", n - 1) }
}

fn plural_tricks(n: u8) -> String {
    if n <= 1 { format!("{n} pli") } else { format!("{n} plis") }
}

/// Money as the page writes it in French ("97,00 €"), with plain spaces.
fn euros(cents: i64) -> String {
    format!("{},{:02} €", cents / 100, cents % 100)
}

fn plain(s: &str) -> String {
    s.replace(['\u{202f}', '\u{a0}'], " ")
}

/// Is the element displayed, and (scrolled into view) inside the viewport?
/// Asked for up to two seconds: a view fades in (animations on).
async fn on_screen(b: &Browser, css: &str) -> bool {
    for _ in 0..40 {
        if visible_now(b, css).await {
            return true;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    false
}

async fn visible_now(b: &Browser, css: &str) -> bool {
    b.exec(
        "const e = document.querySelector(arguments[0]);
         // checkVisibility: false inside a closed <details> too (its content is skipped, not removed).
         if (!e || e.hidden || e.offsetParent === null || !e.checkVisibility({opacityProperty: true, visibilityProperty: true})) return false;
         e.scrollIntoView({block: 'center'});
         const r = e.getBoundingClientRect();
         const s = getComputedStyle(e);
         return r.width > 0 && r.height > 0 && r.top >= 0 && r.bottom <= window.innerHeight && s.visibility === 'visible' && Number(s.opacity) > 0.5;",
        json!([css]),
    )
    .await
        == true
}

async fn texts(b: &Browser, css: &str) -> Vec<String> {
    let v = b.exec("return [...document.querySelectorAll(arguments[0])].map(e => e.textContent)", json!([css])).await;
    v.as_array().unwrap().iter().map(|s| s.as_str().unwrap().to_string()).collect()
}

/// A click on a desktop (the element first scrolled to the middle); on a phone, a tap with a finger (a touch pointer
/// pressed and lifted on the element's middle).
async fn press(b: &Browser, css: &str, phone: bool) {
    if !phone {
        // In the middle of the window: not under the sticky header.
        b.exec("document.querySelector(arguments[0]).scrollIntoView({block: 'center'})", json!([css])).await;
        return b.click(css).await;
    }
    let r = b
        .exec(
            "const e = document.querySelector(arguments[0]); e.scrollIntoView({block: 'center'});
             const r = e.getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2];",
            json!([css]),
        )
        .await;
    let (x, y) = (r[0].as_f64().unwrap(), r[1].as_f64().unwrap());
    b.stroke("touch", &[(x, y)]).await;
}

async fn balance_shown(b: &Browser) -> i64 {
    let v = b.exec("return document.getElementById('balance').dataset.cents", json!([])).await;
    v.as_str().unwrap().parse().unwrap()
}

/// Plays `plan` by clicking (or touching), checking the table after each
/// action, the prompt at the first tie and the Extra banner and the
/// earlier game's recall when the Extra game starts.
async fn play_through_the_extra_game(b: &Browser, plan: &Foreseen, phone: bool, width: u64, name: &str) {
    let first_tie = plan.first(|e| matches!(e, Event::Trick { outcome: Outcome::Tie, .. })).unwrap();
    let extra_game = plan.first(|e| matches!(e, Event::ExtraGame { .. })).unwrap();
    for (i, a) in plan.actions.iter().enumerate() {
        match a {
            Action::Play { card } => {
                press(b, &format!("#player-hand button[data-card='{}']", card.as_str()), phone).await
            }
            Action::Draw => press(b, "#deck", phone).await,
        }
        b.wait_seq(i + 1).await;
        assert_table_shows(b, &plan.events[i], i).await;
        // Whose card is whose, under the two cards in the middle.
        assert_eq!(texts(b, "#trick .slot-label").await, ["As Capone", "Vous"], "action {i}");
        if i == first_tie {
            let prompt = b.text("#prompt").await;
            let verb = if phone { "Touchez le paquet" } else { "Cliquez sur le paquet" };
            assert!(prompt.contains(verb), "a {} screen: {prompt}", if phone { "touch" } else { "mouse" });
        }
        if i < extra_game {
            assert!(b.exec("return document.getElementById('extra-banner').hidden", json!([])).await == true);
        }
        if i == extra_game {
            // The Extra duel won, said on the table (not only to screen readers).
            assert!(on_screen(b, "#extra-banner").await, "action {i}: the Extra banner is on screen");
            let banner = b.text("#extra-banner-title").await;
            assert_eq!(banner, "Duel Extra gagné : huit nouvelles cartes — Partie Extra 1");
            assert!(b.text("#extra-banner").await.contains("seule la dernière partie décide"));
            // The trick strip starts again, and the earlier game is recalled under it.
            let empty = b.exec("return document.querySelectorAll('#history li.empty').length", json!([])).await;
            assert_eq!(empty, 8, "a new game: eight tricks to play");
            assert!(on_screen(b, "#games-earlier").await);
            assert_eq!(b.text("#games-earlier").await, "Parties précédentes : 1re partie : 4 plis, duel Extra gagné");
            if phone {
                assert_fits(b, width, "the Extra banner").await;
            }
            b.exec("document.getElementById('table').scrollIntoView({block: 'start'})", json!([])).await;
            b.shot(&format!("{name}-extra-banner")).await;
        }
        if i == extra_game + 1 && matches!(plan.actions[i], Action::Play { .. }) {
            // The new game's first trick: the banner goes, the recall stays.
            assert!(b.exec("return document.getElementById('extra-banner').hidden", json!([])).await == true);
            assert!(on_screen(b, "#games-earlier").await);
        }
    }
}

/// "Acheter un autre ticket" on the result of a ticket that won `prize`:
/// the lobby's purchase, its price on the button, one ticket debited by
/// the page and by the server; the new ticket's serial.
async fn buy_again(
    b: &Browser,
    srv: &TestServer,
    token: &str,
    prize: i64,
    phone: bool,
    width: u64,
    name: &str,
) -> String {
    // "Acheter un autre ticket": the lobby's purchase, its price on the button.
    let before = balance_shown(b).await;
    assert_eq!(before, START - 300 + prize);
    let label = plain(&b.text("#again").await);
    assert_eq!(label, "Acheter un autre ticket — 3,00 €", "the button says what it costs, as the lobby's does");
    press(b, "#again", phone).await;
    let second = serial_of_sale(2);
    b.wait_for(
        &format!(
            "document.body.dataset.view === 'game' && document.getElementById('view-game').dataset.id === '{second}'"
        ),
        "the next ticket",
    )
    .await;
    b.wait_seq(0).await;
    assert!(b.exec("return document.getElementById('result').hidden", json!([])).await == true, "a fresh ticket");
    assert_eq!(b.text("#game-title").await, format!("Ticket {second}"));
    assert!(on_screen(b, "#scratch-canvas").await, "its prizes to scratch");
    assert_eq!(balance_shown(b).await, before - 300, "the page debits one ticket");
    let me = srv.get("/api/me", token).await;
    assert_eq!(me["balance_cents"], before - 300, "the server debited one ticket, once");
    let list = srv.get("/api/tickets", token).await;
    let serials: Vec<&str> =
        list["tickets"].as_array().unwrap().iter().map(|t| t["serial"].as_str().unwrap()).collect();
    assert_eq!(serials.len(), 2, "exactly one more ticket: {serials:?}");
    assert!(serials.contains(&second.as_str()));
    assert_eq!(
        b.exec("return localStorage.getItem('asc.pendingBuy')", json!([])).await,
        Value::Null,
        "the purchase is settled"
    );
    // The new ticket is the player's to play: its own seed, not yet sent.
    b.choose_seed("another-seed").await;
    if phone {
        assert_fits(b, width, "the next ticket").await;
    }
    b.exec("window.scrollTo(0, 0)", json!([])).await;
    b.shot(&format!("{name}-bought-again")).await;
    second
}

/// The check of ticket `serial`: the verdict in plain words, the detail
/// folded away; then, on a record changed on its way, the failure in plain
/// words with its number of problems, the detail open.
async fn the_verdict_in_plain_words(
    b: &Browser,
    url: &str,
    serial: &str,
    anim: bool,
    phone: bool,
    width: u64,
    name: &str,
) {
    // The check: the verdict in plain words, the detail folded away.
    b.goto(&format!("{}/{}#t={serial}", url, if anim { "" } else { "?anim=0" })).await;
    b.wait_for("document.body.dataset.state === 'idle' && !document.getElementById('result').hidden", "the ticket")
        .await;
    press(b, "#verify-btn", phone).await;
    assert_eq!(b.wait_verdict().await, "true");
    assert_eq!(b.text("#verdict").await, "Partie honnête : les cartes ne pouvaient plus changer après votre achat.");
    assert!(on_screen(b, "#verdict-more").await);
    assert!(b.text("#verdict-more").await.contains("Votre navigateur a refait seul tous les calculs"));
    assert_eq!(b.exec("return document.getElementById('verify-details').open", json!([])).await, false);
    assert!(!on_screen(b, "#verify-checks").await, "the technical detail is folded away");
    let passed = b.exec("return document.querySelectorAll('#verify-checks li.ok').length", json!([])).await;
    assert_eq!(passed, 7, "every check still there, folded");
    if phone {
        assert_fits(b, width, "the verdict").await;
    }
    b.exec("window.scrollTo(0, 0)", json!([])).await;
    b.shot(&format!("{name}-verdict")).await;
    press(b, "#verify-details > summary", phone).await;
    assert!(on_screen(b, "#verify-checks").await, "the detail unfolds");

    // A record changed on its way (one of As Capone's cards): a failure in
    // plain words, with its number of problems in good French, the detail open.
    b.alter_records_in_flight().await;
    press(b, "#verify-back", phone).await;
    b.wait_for("document.body.dataset.view === 'game' && document.body.dataset.state === 'idle'", "the ticket").await;
    press(b, "#verify-btn", phone).await;
    assert_eq!(b.wait_verdict().await, "false");
    let verdict = b.text("#verdict").await;
    let problems = b.exec("return document.querySelectorAll('#verify-checks li.bad').length", json!([])).await;
    let n = problems.as_u64().unwrap();
    assert!(n >= 1);
    let count = if n == 1 { "1 problème trouvé".to_string() } else { format!("{n} problèmes trouvés") };
    assert_eq!(
        verdict,
        format!("ÉCHEC de la vérification : cette partie n’a pas pu être confirmée honnête ({count}).")
    );
    assert!(b.text("#verdict-more").await.starts_with("Ce que le serveur a enregistré ne correspond pas"));
    assert_eq!(b.exec("return document.getElementById('verify-details').open", json!([])).await, true);
    assert!(on_screen(b, "#verify-checks li.bad").await, "what is wrong is shown at once");
    b.exec("window.scrollTo(0, 0)", json!([])).await;
    b.shot(&format!("{name}-verdict-failed")).await;
}

/// A whole ticket with an Extra game, then "Acheter un autre ticket", the
/// history and the check, on `screen` (`anim`: with the animations and
/// their suspense, or without).
async fn extra_recap_buy_again_history_and_verdict(screen: Screen, name: &str, anim: bool) {
    let srv = spawn_server().await;
    let Some(b) = browser(&srv.url, screen).await else { return };
    let phone = matches!(screen, Screen::Phone { .. });
    let width = match screen {
        Screen::Phone { width, .. } | Screen::Desktop { width, .. } => u64::from(width),
    };
    let serial = serial_of_sale(1);
    let plan = find_seed(&serial, &format!("exp-{name}"), |p| {
        let tie = p.first(|e| matches!(e, Event::Trick { outcome: Outcome::Tie, .. }));
        let extra = p.first(|e| matches!(e, Event::ExtraGame { .. }));
        matches!((tie, extra), (Some(t), Some(x)) if t < x) && p.game.result().unwrap().prize_cents > 0
    });
    let games = games_of(&plan);
    assert!(games.len() >= 2 && games[0] == GameRecap { game: 1, tricks: 4, extra: Some("won") }, "{games:?}");

    b.open(if anim { "/" } else { "/?anim=0" }).await;
    assert_eq!(
        b.exec("return document.documentElement.dataset.anim", json!([])).await,
        if anim { "on" } else { "off" }
    );
    b.click("#register").await;
    b.wait_for("document.getElementById('balance').dataset.cents === '10000'", "the play money").await;
    b.click("#buy").await;
    b.wait_seq(0).await;
    let token = b.token().await;

    // At opening: the commitment in short, with "Pourquoi ?".
    let ticket = srv.get(&format!("/api/tickets/{serial}"), &token).await;
    let commitment = ticket["ticket"]["commitment"].as_str().unwrap();
    let short = b.text("#ticket-commitment").await;
    assert!(short.len() < 30 && commitment.starts_with(&short[..12]), "{short} for {commitment}");
    assert!(!on_screen(&b, "#fair-why p").await, "the explanation is folded");
    press(&b, "#fair > summary", phone).await;
    press(&b, "#fair-why > summary", phone).await;
    assert!(on_screen(&b, "#fair-why p").await, "Pourquoi ? unfolds its explanation");
    let why = b.text("#fair-why p").await;
    assert!(why.starts_with("Avant votre achat, le serveur a fixé"), "{why}");
    // French plurals: none won is singular.
    assert_eq!(plain(&b.text("#score").await), "0 gagné · 0 perdu");
    b.choose_seed(&plan.client_seed).await;
    // The phone's keyboard closes (the seed typed).
    b.exec("document.activeElement.blur()", json!([])).await;
    if phone {
        // (Scratching by touch is mobile.rs's; here the zone's button.)
        press(&b, "#reveal", phone).await;
        b.wait_for("document.getElementById('scratch').classList.contains('revealed')", "the prizes").await;
    } else {
        scratch(&b, "mouse").await;
    }

    play_through_the_extra_game(&b, &plan, phone, width, name).await;

    // The result: the prize, and every game with the deciding one marked.
    b.wait_for("!document.getElementById('result').hidden", "the result").await;
    let r = plan.game.result().unwrap();
    let prize = prize_of(&srv.get(&format!("/api/tickets/{serial}"), &token).await["ticket"], r.tricks);
    assert!(prize > 0);
    assert!(on_screen(&b, "#result-games").await, "the recap of the games is on screen");
    let rows = texts(&b, "#result-games-list li").await;
    let want: Vec<String> = games
        .iter()
        .enumerate()
        .map(|(k, g)| {
            let mut s = format!("{} : {}", game_name(g.game), plural_tricks(g.tricks));
            if let Some(x) = g.extra {
                s += if x == "won" { ", duel Extra gagné" } else { ", duel Extra perdu" };
            }
            if k == games.len() - 1 {
                s += ", décisive";
            }
            s
        })
        .collect();
    assert_eq!(rows, want, "one line per game, the last one deciding");
    let deciding = b
        .exec(
            "return [...document.querySelectorAll('#result-games-list li.decides')].map(e => e.dataset.game)",
            json!([]),
        )
        .await;
    assert_eq!(deciding, json!([games.len().to_string()]));
    assert_eq!(games.last().unwrap().tricks, r.tricks, "the deciding game's tricks are the result's");
    // The server's own list of games, when it gives one, says the same.
    let served = srv.get(&format!("/api/tickets/{serial}"), &token).await;
    if let Some(list) = served["ticket"]["games"].as_array() {
        let theirs: Vec<(u64, u64)> =
            list.iter().map(|g| (g["game"].as_u64().unwrap(), g["tricks"].as_u64().unwrap())).collect();
        let ours: Vec<(u64, u64)> = games.iter().map(|g| (g.game, u64::from(g.tricks))).collect();
        assert_eq!(theirs, ours, "the server's games");
    }
    if phone {
        assert_fits(&b, width, "the result").await;
    }
    b.exec("document.getElementById('result').scrollIntoView({block: 'start'})", json!([])).await;
    b.shot(&format!("{name}-result-recap")).await;

    let second = buy_again(&b, &srv, &token, prize, phone, width, name).await;

    // "Mes tickets": the date, the games (each one, the deciding one
    // marked), the tricks and the net result; the new ticket in play.
    press(&b, "#brand", phone).await;
    b.wait_for(&format!("document.querySelector('#tickets > li[data-id=\"{serial}\"]')"), "the history").await;
    let li = format!("#tickets > li[data-id=\"{serial}\"]");
    assert_eq!(
        b.exec(&format!("return document.querySelector('{li}').dataset.games"), json!([])).await,
        games.len().to_string()
    );
    let rows = texts(&b, &format!("{li} ol.games li")).await;
    assert_eq!(rows, want, "the history recaps every game");
    let facts = plain(&b.text(&format!("{li} .tk-facts")).await);
    let net = prize - 300;
    assert!(facts.contains(&format!("{} parties", games.len())), "{facts}");
    assert!(facts.contains(&plural_tricks(r.tricks)), "{facts}");
    let sign = if net > 0 {
        "+"
    } else if net < 0 {
        "−"
    } else {
        ""
    };
    assert!(facts.contains(&format!("Bilan {sign}{}", euros(net.abs()))), "net result: prize − price: {facts}");
    if served["ticket"]["sold_ms"].is_number() {
        assert!(facts.contains("Acheté le"), "the date of purchase: {facts}");
    }
    let other = plain(&b.text(&format!("#tickets > li[data-id=\"{second}\"]")).await);
    assert!(other.contains("En cours") && other.contains("1 partie"), "{other}");
    if phone {
        assert_fits(&b, width, "the history").await;
    }
    b.exec(&format!("document.querySelector('{li}').scrollIntoView({{block: 'center'}})"), json!([])).await;
    b.shot(&format!("{name}-history")).await;

    the_verdict_in_plain_words(&b, &srv.url, &serial, anim, phone, width, name).await;
    b.close().await;
    srv.app.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn desktop_extra_recap_buying_again_history_and_plain_verdict_with_animations() {
    extra_recap_buy_again_history_and_verdict(Screen::Desktop { width: 1280, height: 900 }, "exp-desktop", true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn phone_390_extra_recap_buying_again_history_and_plain_verdict() {
    extra_recap_buy_again_history_and_verdict(Screen::Phone { width: 390, height: 844 }, "exp-phone", false).await;
}

/// "Mes tickets" a page at a time: ten, then "Plus de tickets" for the
/// rest; each line with its games and its net result.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_history_pages_with_more_tickets() {
    let srv = spawn_server().await;
    let Some(b) = browser(&srv.url, Screen::Phone { width: 390, height: 844 }).await else { return };
    let player = srv.post("/api/players", None, &json!({})).await;
    let token = player["token"].as_str().unwrap().to_string();
    // Twelve tickets; the first one played to its end.
    let plan = find_seed(&serial_of_sale(1), "page", |p| p.game.result().unwrap().prize_cents == 0);
    for k in 0..12 {
        let r = reqwest::Client::new()
            .post(format!("{}/api/tickets", srv.url))
            .bearer_auth(&token)
            .header("Idempotency-Key", format!("page-{k}"))
            .json(&json!({}))
            .send()
            .await
            .unwrap();
        assert!(r.status().is_success(), "buy {k}: {}", r.status());
    }
    let first = serial_of_sale(1);
    for k in 0..plan.actions.len() {
        srv.post(&format!("/api/tickets/{first}/actions"), Some(&token), &plan.action_body(k)).await;
    }

    b.open("/?anim=0").await;
    b.exec("localStorage.setItem('asc.token', arguments[0]);", json!([token])).await;
    b.refresh().await;
    b.wait_for("document.querySelectorAll('#tickets > li[data-id]').length > 0", "the history").await;
    let shown = b
        .exec("return [...document.querySelectorAll('#tickets > li[data-id]')].map(e => e.dataset.id)", json!([]))
        .await;
    let shown: Vec<String> = shown.as_array().unwrap().iter().map(|s| s.as_str().unwrap().to_string()).collect();
    let newest: Vec<String> = (3..=12).rev().map(serial_of_sale).collect();
    assert_eq!(shown, newest, "the ten newest first");
    assert!(on_screen(&b, "#tickets-more").await, "a button for the rest");
    assert_eq!(b.text("#tickets-more").await, "Plus de tickets");
    assert_fits(&b, 390, "the history").await;
    b.click("#tickets-more").await;
    b.wait_for("document.querySelectorAll('#tickets > li[data-id]').length === 12", "the next page").await;
    assert!(b.exec("return document.getElementById('tickets-more').hidden", json!([])).await == true, "nothing more");
    // The played ticket: lost, one game, its tricks, the price lost.
    let r = plan.game.result().unwrap();
    let facts = plain(&b.text(&format!("#tickets > li[data-id=\"{first}\"] .tk-facts")).await);
    let games = games_of(&plan).len();
    let games_text = if games == 1 { "1 partie".to_string() } else { format!("{games} parties") };
    assert!(facts.contains(&games_text), "{facts}");
    assert!(facts.contains(&plural_tricks(r.tricks)), "{facts}");
    assert!(facts.contains("Bilan −3,00 €"), "{facts}");
    assert!(b.text(&format!("#tickets > li[data-id=\"{first}\"] .status")).await.contains("Perdu"));
    b.exec(
        &format!("document.querySelector('#tickets > li[data-id=\"{first}\"]').scrollIntoView({{block: 'center'}})"),
        json!([]),
    )
    .await;
    b.shot("exp-phone-history-pages").await;
    b.close().await;
    srv.app.shutdown().await.unwrap();
}

/// A card under the mouse, or sent and waiting for the server, keeps its
/// cream face and red ink (the generic `button:hover` must not darken it),
/// and never covers the "Vous" label.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hovered_or_pending_card_keeps_its_face() {
    let srv = spawn_server().await;
    let Some(b) = browser(&srv.url, Screen::Desktop { width: 1280, height: 900 }).await else { return };
    b.open("/?anim=0").await;
    b.click("#register").await;
    b.wait_for("document.getElementById('balance').dataset.cents === '10000'", "the play money").await;
    b.click("#buy").await;
    b.wait_seq(0).await;
    // Before the zone is scratched a card does not play: the mouse rests on
    // the queen (a press and release there) and stays over it.
    let r = b
        .exec(
            "const c = document.querySelector('#player-hand button[data-card=\"Q\"]'); c.scrollIntoView({block: 'center'});
             const r = c.getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2];",
            json!([]),
        )
        .await;
    let (x, y) = (r[0].as_f64().unwrap(), r[1].as_f64().unwrap());
    b.stroke("mouse", &[(x, y), (x, y + 1.0)]).await;
    assert_eq!(b.exec("return document.getElementById('view-game').dataset.seq", json!([])).await, "0");
    let looks = "const c = document.querySelector('#player-hand button[data-card=\"Q\"]'); const s = getComputedStyle(c);
                 const label = document.querySelector('.area-hand .side-label').getBoundingClientRect();
                 return [c.matches(':hover'), s.backgroundColor, s.color, c.getBoundingClientRect().top >= label.bottom - 0.5];";
    let hovered = b.exec(looks, json!([])).await;
    assert_eq!(hovered, json!([true, "rgb(251, 247, 238)", "rgb(200, 16, 46)", true]), "a hovered card keeps its face");
    b.shot("exp-desktop-card-hover").await;
    // The card just chosen, waiting for the server's answer: lifted higher, same face.
    b.exec("document.querySelector('#player-hand button[data-card=\"Q\"]').classList.add('pending')", json!([])).await;
    let pending = b.exec(looks, json!([])).await;
    assert_eq!(
        pending,
        json!([true, "rgb(251, 247, 238)", "rgb(200, 16, 46)", true]),
        "a pending card keeps its face, below Vous"
    );
    b.close().await;
    srv.app.shutdown().await.unwrap();
}

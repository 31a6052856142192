//! The rules ("Comment jouer", `#/regles`) and the odds ("Chances et gains",
//! `#/chances`) on a desktop and a 390 px phone: reached from the header's
//! links, they show exactly the fractions of the math crate (the same
//! strings as `as-capone odds --json`), computed here from `math::Odds`
//! and the test table, the "1 chance sur X" in French with a decimal comma,
//! the return to player as a percentage and a fraction, and each schedule's
//! prizes, share of a block and chance to win.

use crate::harness::*;
use crate::webdriver::Screen;
use math::fraction::to_string as frac;
use math::{FinalOutcome, Odds, Payout, PrizeTable};
use num_rational::BigRational;
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// Every `data-fraction` of the page's current view: key to text.
async fn fractions(b: &Browser) -> BTreeMap<String, String> {
    let v = b
        .exec(
            "const out = {}; for (const e of document.querySelectorAll('.view:not([hidden]) [data-fraction]')) out[e.dataset.fraction] = e.textContent; return out;",
            json!([]),
        )
        .await;
    v.as_object().unwrap().iter().map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string())).collect()
}

/// A BigRational as f64 (for the rounded readings only).
fn approx(r: &BigRational) -> f64 {
    let p: f64 = r.numer().to_string().parse().unwrap();
    let q: f64 = r.denom().to_string().parse().unwrap();
    p / q
}

/// "2,83": two decimals, French comma.
fn fr2(x: f64) -> String {
    format!("{x:.2}").replace('.', ",")
}

/// What the math crate says the pages must show, by `data-fraction` key.
fn expected() -> (BTreeMap<String, String>, BTreeMap<String, String>, BigRational, BigRational) {
    let odds = Odds::exact();
    let table = PrizeTable::parse_toml(TABLE).unwrap();
    let payout = Payout::compute(&table, &odds);
    let mut page = BTreeMap::new();
    for o in FinalOutcome::ALL {
        let key = match o {
            FinalOutcome::Tricks(t) => format!("final-{t}"),
            FinalOutcome::Lose => "final-lose".into(),
        };
        page.insert(key, frac(odds.final_chance(o)));
    }
    for (k, r) in odds.per_round.iter().enumerate() {
        page.insert(format!("per_round-{k}"), frac(r));
    }
    page.insert("extra_per_round".into(), frac(&odds.extra_per_round));
    page.insert("rtp".into(), frac(&payout.rtp));
    page.insert("hit_rate".into(), frac(&payout.hit_rate));
    page.insert("expected_payout_cents".into(), frac(&payout.expected_payout_cents));
    let block = BigRational::from_integer(table.block_size.into());
    // A schedule's own return to player is not on the player's page (an operator's figure):
    // its share and its chance to win are.
    for (i, row) in table.schedules.iter().enumerate() {
        let share = BigRational::from_integer(row.tickets.into()) / &block;
        let mut win = BigRational::from_integer(0.into());
        for t in 5..=8u8 {
            if row.prizes.for_tricks(t) > 0 {
                win += odds.final_chance(FinalOutcome::Tricks(t));
            }
        }
        page.insert(format!("schedule-{i}-share"), frac(&share));
        page.insert(format!("schedule-{i}-win_chance"), frac(&win));
    }
    let mut rules = BTreeMap::new();
    rules.insert("rules-per_round-4".to_string(), frac(&odds.per_round[4]));
    rules.insert("rules-extra_per_round".to_string(), frac(&odds.extra_per_round));
    rules.insert("rules-final-lose".to_string(), frac(&odds.lose));
    (page, rules, payout.hit_rate.clone(), payout.rtp.clone())
}

async fn rules_and_odds(screen: Screen, size: &str) {
    let srv = spawn_server().await;
    let (page, rules, hit_rate, rtp) = expected();
    // The server's own answer is the math crate's, string for string.
    let api: Value = reqwest::get(format!("{}/api/odds", srv.url)).await.unwrap().json().await.unwrap();
    for (k, v) in &page {
        let got = if let Some(t) = k.strip_prefix("final-") {
            &api["final"][t]
        } else if let Some(t) = k.strip_prefix("per_round-") {
            &api["per_round"][t]
        } else if let Some(rest) = k.strip_prefix("schedule-") {
            let (i, field) = rest.split_once('-').unwrap();
            &api["schedules"][i.parse::<usize>().unwrap()][field]
        } else if k == "extra_per_round" {
            &api["extra_per_round"]
        } else {
            &api["table"][k.as_str()]
        };
        assert_eq!(got, &json!(v), "GET /api/odds: {k}");
    }

    let Some(b) = browser(&srv.url, screen).await else { return };
    b.open("/?anim=0").await;

    // "Comment jouer" from the header's link.
    b.click(".bar-nav a[href='#/regles']").await;
    b.wait_for("document.body.dataset.view === 'rules' && document.body.dataset.state === 'idle'", "the rules").await;
    b.wait_for("document.querySelector('[data-fraction=\"rules-final-lose\"]')", "the rules' figures").await;
    let headings =
        b.exec("return [...document.querySelectorAll('#rules-body h2')].map(h => h.textContent)", json!([])).await;
    for key in ["rules.duel.title", "rules.tie.title", "rules.extra.title", "rules.last.title"] {
        let h = b.string("fr", key, &[]).await;
        assert!(headings.as_array().unwrap().contains(&json!(h)), "{size}: the rules explain {key}: {headings}");
    }
    // Illustrated: figures of cards, each described in one sentence.
    let figures = b
        .exec(
            "return [...document.querySelectorAll('#rules-body .illus-row[role=img]')].map(f => [f.getAttribute('aria-label'), f.querySelectorAll('.card').length]);",
            json!([]),
        )
        .await;
    let figures = figures.as_array().unwrap();
    assert!(figures.len() >= 4, "{size}: illustrations: {figures:?}");
    assert!(figures.iter().all(|f| !f[0].as_str().unwrap().is_empty()), "{size}: each figure is described");
    assert!(figures.iter().filter(|f| f[1].as_u64().unwrap() > 0).count() >= 4, "{size}: cards drawn: {figures:?}");
    assert_eq!(fractions(&b).await, rules, "{size}: the rules' figures are the math crate's");
    b.shot(&format!("rules-{size}-0-rules")).await;

    // "Chances et gains" from the footer's link.
    b.click(".footer-nav a[href='#/chances']").await;
    b.wait_for("document.body.dataset.view === 'odds' && document.body.dataset.state === 'idle'", "the odds").await;
    b.wait_for("document.querySelector('[data-fraction=\"final-5\"]')", "the odds' figures").await;
    assert_eq!(fractions(&b).await, page, "{size}: the odds page shows the math crate's fractions");
    let one_in = fr2(1.0 / approx(&hit_rate));
    assert_eq!(b.text("#odds-one-in").await, format!("1 chance sur {one_in} de gagner"));
    assert_eq!(
        b.text("#odds-rtp-percent").await.replace(['\u{a0}', '\u{202f}'], " "),
        format!("{} %", fr2(approx(&rtp) * 100.0)),
        "the return to player as a percentage"
    );
    // Each schedule: its prizes, as the table has them.
    let table = PrizeTable::parse_toml(TABLE).unwrap();
    let shown = b
        .exec(
            "return [...document.querySelectorAll('#schedules > li')].map(li => [...li.querySelectorAll('td[data-cents]')].map(td => Number(td.dataset.cents)));",
            json!([]),
        )
        .await;
    let want: Vec<Vec<u64>> =
        table.schedules.iter().map(|r| [8, 7, 6, 5].map(|t| r.prizes.for_tricks(t)).to_vec()).collect();
    assert_eq!(shown, json!(want), "{size}: the prize schedules");
    let why = b.string("fr", "odds.schedules.same", &[]).await;
    assert!(b.text("#odds-body").await.contains(&why), "{size}: why prizes differ between tickets");
    b.shot(&format!("rules-{size}-1-odds")).await;
    if size == "phone" {
        let over = b.overflow_x().await;
        assert!(over <= 0, "the odds page scrolls sideways by {over} px: {}", b.overflowing().await);
    }

    // In English: the same fractions, a decimal point.
    b.click("#lang").await;
    b.wait_for("document.documentElement.lang === 'en'", "English").await;
    assert_eq!(b.text("#odds-one-in").await, format!("1 chance in {} to win", one_in.replace(',', ".")));
    assert_eq!(fractions(&b).await, page);
    b.close().await;
    srv.app.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rules_and_odds_pages_show_the_math_crates_fractions_on_a_desktop() {
    rules_and_odds(Screen::Desktop { width: 1280, height: 900 }, "desktop").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rules_and_odds_pages_show_the_math_crates_fractions_on_a_phone() {
    rules_and_odds(Screen::Phone { width: 390, height: 844 }, "phone").await;
}

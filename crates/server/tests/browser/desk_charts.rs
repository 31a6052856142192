//! The desk's charts of sales, prizes and shops (docs/operating.md "The desk page",
//! web/desk.js `drawSales`, `drawPrizes`, `drawShops`), in Chromium: each
//! drawn as inline SVG with the figures of its endpoint (a line per block,
//! a point per finished game, four bars per shop and the shops' table),
//! captioned in words in French and English, with no serious or critical
//! axe-core violation; screenshots of them.

use crate::harness::*;
use crate::webdriver::Screen;
use serde_json::{Value, json};

const OPERATOR: &str = "browser-charts-operator-token-1";
const PLAYER: &str = "browser-charts-player-token-001";
const SHOP_A: &str = "Tabac du Port";
const SHOP_A_TOKEN: &str = "browser-charts-shop-a-token-001";
const SHOP_B: &str = "Bar de la Mairie";
const SHOP_B_TOKEN: &str = "browser-charts-shop-b-token-001";
const CLIENT_SEED: &str = "desk-charts-test";

/// Plays ticket `serial` (its prizes as the API gives them) to the end with
/// `token`: any plan the engine finishes.
async fn play_out(srv: &TestServer, token: &str, serial: &str, prizes: &Value) {
    let prizes = serde_json::from_value(prizes.clone()).expect("a ticket's prizes");
    let plan = testkit::search_card_orders(serial, CLIENT_SEED, prizes, 50, |p| p.game.result().is_some())
        .expect("a plan that finishes");
    for (seq, a) in plan.actions.iter().enumerate() {
        let mut body = action_json(seq as u64, *a);
        if seq == 0 {
            body["client_seed"] = json!(CLIENT_SEED);
        }
        srv.post(&format!("/api/tickets/{serial}/actions"), Some(token), &body).await;
    }
}

/// A paper block's printed tickets: `(serial, play code)`.
async fn printed(srv: &TestServer, emission: u32, block: u32) -> Vec<(String, String)> {
    let csv = srv.get_text(&format!("/api/admin/emissions/{emission}/blocks/{block}/print.csv"), OPERATOR).await;
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |n: &str| header.iter().position(|h| *h == n).unwrap_or_else(|| panic!("{n} in {header:?}"));
    let (s, c) = (col("serial"), col("play_code"));
    lines
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[s].to_string(), f[c].to_string())
        })
        .collect()
}

/// What the page drew and wrote, read from the SVG's and the table's data attributes.
async fn drawn(b: &Browser) -> Value {
    b.exec(
        "const all = (css) => Array.from(document.querySelectorAll(css));
         return {
           sales: all('#sales-1 [data-part=sales]').map(p => ({block: Number(p.dataset.block),
             total: Number(p.dataset.total), points: Number(p.dataset.points)})),
           paperSales: all('#sales-2 [data-part=sales]').map(p => Number(p.dataset.total)),
           points: all('#prizes-1 [data-part=point]').map(c => [Number(c.dataset.finished), Number(c.dataset.value)]),
           band: !!document.querySelector('#prizes-1 [data-part=band]'),
           expected: !!document.querySelector('#prizes-1 [data-part=expected]'),
           bars: all('#shops-chart [data-part=bar]').map(r => [r.dataset.shop, r.dataset.field, Number(r.dataset.value)]),
           cells: all('#shops-table tr[data-shop]').map(tr => [tr.dataset.shop,
             Object.fromEntries(all('#shops-table tr[data-shop=\"' + tr.dataset.shop + '\"] td')
               .map(td => [td.dataset.field, Number(td.dataset.value)]))]),
         }",
        json!([]),
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_desk_draws_sales_prizes_and_shops_with_their_endpoints_figures_in_both_languages() {
    let srv = spawn_server_with(|c| {
        c.operator_tokens = vec![OPERATOR.into()];
        c.demo_token = PLAYER.into();
        c.retailer_tokens = vec![format!("{SHOP_A}:{SHOP_A_TOKEN}"), format!("{SHOP_B}:{SHOP_B_TOKEN}")];
    })
    .await;
    // Online: four tickets sold, three played to the end.
    for i in 0..4 {
        let t = srv.post("/api/tickets", Some(PLAYER), &json!({})).await;
        if i < 3 {
            let ticket = &t["ticket"];
            play_out(&srv, PLAYER, ticket["id"].as_str().unwrap(), &ticket["prizes_cents"]).await;
        }
    }
    // Paper: emission 2, one block; shop A sells two tickets, shop B one;
    // one of shop A's is redeemed and played.
    srv.post("/api/admin/emissions", Some(OPERATOR), &json!({"table": TABLE, "blocks": 1, "channel": "paper"})).await;
    let tickets = printed(&srv, 2, 1).await;
    for ((serial, _), token) in tickets.iter().zip([SHOP_A_TOKEN, SHOP_A_TOKEN, SHOP_B_TOKEN]) {
        srv.post("/api/retail/sell", Some(token), &json!({"serial": serial})).await;
    }
    let opened = srv.post("/api/tickets/redeem", None, &json!({"code": tickets[0].1})).await;
    let ticket_token = opened["token"].as_str().expect("a ticket token").to_string();
    play_out(&srv, &ticket_token, &tickets[0].0, &opened["ticket"]["prizes_cents"]).await;

    let sales = srv.get("/api/admin/emissions/1/sales", OPERATOR).await;
    let prizes = srv.get("/api/admin/emissions/1/prizes", OPERATOR).await;
    let shops = srv.get("/api/admin/shops", OPERATOR).await;
    assert_eq!(prizes["finished"], 3, "{prizes}");
    assert_eq!(shops["shops"].as_array().unwrap().len(), 2, "{shops}");

    let Some(b) = browser(&srv.url, Screen::Desktop { width: 1280, height: 900 }).await else { return };
    b.open("/desk").await;
    b.type_into("#desk-token", OPERATOR).await;
    b.click("#desk-login-go").await;
    // Sales and prizes over time are drawn for the newest emission at first
    // (each reads an emission's tickets): emission 1's box is closed and
    // its charts not asked for until it is opened.
    b.wait_for(
        "document.querySelectorAll('figure.desk-chart[data-drawn]').length === 3 \
         && !!document.querySelector('#sales-2[data-drawn]') && !!document.querySelector('#prizes-2[data-drawn]')",
        "the newest emission's sales and prizes, and the shops",
    )
    .await;
    let closed = b
        .exec(
            "return [document.getElementById('charts-1').open, document.getElementById('charts-2').open,
                     document.getElementById('sales-1').children.length]",
            json!([]),
        )
        .await;
    assert_eq!(closed, json!([false, true, 0]), "emission 1's charts wait to be opened");
    b.click("#charts-1 > summary").await;
    b.wait_for(
        "document.querySelectorAll('figure.desk-chart[data-drawn]').length === 5",
        "two emissions' sales and prizes, and the shops",
    )
    .await;
    let page = drawn(&b).await;
    // A line per block, each with its endpoint's total, a vertex per bucket and the origin.
    let want_sales: Vec<Value> = sales["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| json!({"block": s["block"], "total": s["total"], "points": sales["buckets"].as_u64().unwrap() + 1}))
        .collect();
    assert_eq!(page["sales"], json!(want_sales), "{page}");
    assert_eq!(page["sales"][0]["total"], 4, "{page}");
    assert_eq!(page["paperSales"], json!([3]), "{page}");
    // A point per finished game, at its running sum.
    let want_points: Vec<Value> =
        prizes["points"].as_array().unwrap().iter().map(|p| json!([p["finished"], p["prizes_won_cents"]])).collect();
    assert_eq!(page["points"], json!(want_points), "{page}");
    assert_eq!(page["points"].as_array().unwrap().len(), 3);
    assert_eq!((&page["band"], &page["expected"]), (&json!(true), &json!(true)));
    // Four bars per shop, and the table's six figures each.
    let fields = ["sold", "redeemed", "paid", "owed"];
    let mut want_bars = Vec::new();
    let mut want_cells = Vec::new();
    for s in shops["shops"].as_array().unwrap() {
        for f in fields {
            want_bars.push(json!([s["shop"], f, s[f]]));
        }
        let cells: serde_json::Map<String, Value> = ["sold", "redeemed", "paid", "paid_cents", "owed", "owed_cents"]
            .iter()
            .map(|f| (f.to_string(), s[*f].clone()))
            .collect();
        want_cells.push(json!([s["shop"], cells]));
    }
    assert_eq!(page["bars"], json!(want_bars), "{page}");
    assert_eq!(page["cells"], json!(want_cells), "{page}");
    let port = shops["shops"].as_array().unwrap().iter().find(|s| s["shop"] == SHOP_A).cloned().unwrap();
    assert_eq!((&port["sold"], &port["redeemed"]), (&json!(2), &json!(1)), "{shops}");

    // Captions in words, French.
    let caption = |id: &'static str| b.text(id);
    let fr = [
        caption("#sales-1 figcaption").await,
        caption("#prizes-1 figcaption").await,
        caption("#shops-chart figcaption").await,
    ];
    assert!(
        fr[0].starts_with("Ventes au fil du temps, canal en ligne") && fr[0].contains("bloc 1 : 4 vendus"),
        "{}",
        fr[0]
    );
    assert!(
        fr[1].starts_with("Lots gagnés face à l’espérance exacte")
            && fr[1].contains(prizes["mean_cents"].as_str().unwrap()),
        "{}",
        fr[1]
    );
    assert!(fr[1].contains("± 3 écarts-types"), "{}", fr[1]);
    assert!(fr[2].starts_with("Le canal papier par point de vente"), "{}", fr[2]);
    assert!(b.text("#sales-2 figcaption").await.contains("canal papier"));
    assert_eq!(b.axe().await.unwrap_or_default(), Vec::<String>::new(), "axe on the charts, French");
    b.exec("document.getElementById('sales-1').scrollIntoView({block: 'start'})", json!([])).await;
    b.shot("desk-charts-fr").await;
    b.exec("document.getElementById('desk-shops').scrollIntoView({block: 'start'})", json!([])).await;
    b.shot("desk-shops-fr").await;

    // English: the same figures, the words in English.
    b.click("#lang").await;
    b.wait_for(
        "document.documentElement.lang === 'en' && document.querySelector('#shops-chart figcaption') \
         && document.querySelector('#shops-chart figcaption').textContent.startsWith('The paper channel') \
         && document.querySelectorAll('figure.desk-chart[data-drawn]').length === 5 \
         && document.querySelector('#prizes-1 figcaption').textContent.startsWith('Prizes won')",
        "the charts in English",
    )
    .await;
    assert_eq!(drawn(&b).await, page, "the same figures in English");
    let en = b.text("#sales-1 figcaption").await;
    assert!(en.starts_with("Sales over time, online channel") && en.contains("block 1: 4 sold"), "{en}");
    assert!(b.text("#prizes-1 figcaption").await.contains("± 3 standard deviations"));
    let head = b.exec("return document.querySelector('#shops-table thead').textContent", json!([])).await;
    assert!(head.as_str().unwrap().contains("Prizes owed"), "{head}");
    assert_eq!(b.axe().await.unwrap_or_default(), Vec::<String>::new(), "axe on the charts, English");
    b.exec("document.getElementById('prizes-1').scrollIntoView({block: 'start'})", json!([])).await;
    b.shot("desk-charts-en").await;
    b.close().await;
}

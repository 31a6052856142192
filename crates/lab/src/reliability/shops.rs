//! A shop's lost answers: the sale or the payment of a paper ticket went
//! through, and its answer never reached the shop, which sends the same
//! request again. The real binary, on each backend, with two shops: paper
//! tickets are sold and their winners paid, and each answer is lost in one
//! of three ways, in turn:
//!
//! - **dropped**: the request is written on a raw socket and the
//!   connection dropped unread once the shop's screen (`validate`) shows
//!   the request applied;
//! - **killed**: the server is SIGKILLed a random moment after the request
//!   left, then restarted on the same database (the request applied or not);
//! - **at once**: the shop's terminal sends the request four times at once.
//!
//! The shop's retry must be answered 200 (never 409), every further retry
//! with the same bytes, another shop's request refused (409); at the end
//! the operator's report counts each ticket sold once and each prize paid
//! once, and the ledger and the audit chain are sound.

use super::args::{Backend, ReliabilityArgs};
use super::rng::Rng;
use super::testbed::{Database, OPERATOR_TOKEN, Server, start_server, table};
use math::REGULATION_PRICE_CENTS;
use serde_json::{Value, json};
use std::time::{Duration, Instant};
use testkit::next_action;
use tokio::io::AsyncWriteExt;

const SHOP_A: &str = "Tabac de la Fiabilite";
const SHOP_A_TOKEN: &str = "reliability-shop-a-token-0123456789";
const SHOP_B: &str = "Bar de la Fiabilite";
const SHOP_B_TOKEN: &str = "reliability-shop-b-token-0123456789";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Loss {
    Dropped,
    Killed,
    AtOnce,
}

impl Loss {
    fn name(self) -> &'static str {
        match self {
            Loss::Dropped => "dropped",
            Loss::Killed => "killed",
            Loss::AtOnce => "at_once",
        }
    }
}

#[derive(Default)]
struct Tally {
    sold: i64,
    paid: i64,
    prizes_paid_cents: i64,
    /// Retries that found their request already applied (answered again).
    replayed: u64,
    retries: u64,
    failures: Vec<String>,
}

struct Shops<'a> {
    db: &'a Database,
    server: Server,
    client: reqwest::Client,
    rng: Rng,
    /// Requests whose answer was lost so far: the next one's way is the next in turn.
    turn: usize,
}

impl Shops<'_> {
    fn url(&self) -> String {
        self.server.url.clone()
    }

    async fn post(&self, path: &str, token: &str, body: &Value) -> anyhow::Result<(u16, Vec<u8>)> {
        let r = self.client.post(format!("{}{path}", self.url())).bearer_auth(token).json(body).send().await?;
        Ok((r.status().as_u16(), r.bytes().await?.to_vec()))
    }

    async fn status_of(&self, serial: &str) -> anyhow::Result<Value> {
        let (_, b) = self.post("/api/retail/validate", SHOP_B_TOKEN, &json!({"serial": serial})).await?;
        Ok(serde_json::from_slice(&b)?)
    }

    /// `POST /api/retail/{op}` by shop A, its answer lost as `loss` says,
    /// then retried: the retry's answer (200 expected) and whether the
    /// request had been applied before it.
    async fn lose_then_retry(
        &mut self,
        op: &str,
        serial: &str,
        loss: Loss,
        done: &str,
        extra: &[&str],
    ) -> anyhow::Result<(u16, Vec<u8>, bool)> {
        let body = json!({"serial": serial});
        let path = format!("/api/retail/{op}");
        match loss {
            Loss::Dropped => {
                let body = body.to_string();
                let request = format!(
                    "POST {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {SHOP_A_TOKEN}\r\n\
                     Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
                    body.len()
                );
                let mut s = tokio::net::TcpStream::connect(&self.server.addr).await?;
                s.write_all(request.as_bytes()).await?;
                // The answer is never read: the connection goes once the request is applied.
                let until = Instant::now() + Duration::from_secs(10);
                while self.status_of(serial).await?["status"] != done && Instant::now() < until {
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
                drop(s);
            }
            Loss::Killed => {
                let (client, url, b) = (self.client.clone(), format!("{}{path}", self.url()), body.clone());
                let sent =
                    tokio::spawn(async move { client.post(url).bearer_auth(SHOP_A_TOKEN).json(&b).send().await });
                tokio::time::sleep(Duration::from_millis(self.rng.range(0, 15))).await;
                self.server.kill();
                let _ = sent.await;
                self.server = start_server(self.db, extra)?;
            }
            Loss::AtOnce => {
                let tasks: Vec<_> = (0..4)
                    .map(|_| {
                        let (client, url, b) = (self.client.clone(), format!("{}{path}", self.url()), body.clone());
                        tokio::spawn(async move {
                            let r = client.post(url).bearer_auth(SHOP_A_TOKEN).json(&b).send().await?;
                            Ok::<_, reqwest::Error>((r.status().as_u16(), r.bytes().await?.to_vec()))
                        })
                    })
                    .collect();
                let mut answers = Vec::new();
                for t in tasks {
                    answers.push(t.await??);
                }
                let retry = self.post(&path, SHOP_A_TOKEN, &body).await?;
                if answers.iter().any(|a| *a != retry) {
                    anyhow::bail!(
                        "{op} {serial}: requests sent at once were answered differently: {:?}",
                        answers.iter().map(|(s, b)| format!("{s} {}", String::from_utf8_lossy(b))).collect::<Vec<_>>()
                    );
                }
                return Ok((retry.0, retry.1, true));
            }
        }
        let applied = self.status_of(serial).await?["status"] == done;
        let (status, answer) = self.post(&path, SHOP_A_TOKEN, &body).await?;
        Ok((status, answer, applied))
    }

    /// One ticket: sold, redeemed, played out, paid if it won; each of the
    /// shop's requests answered in spite of its lost answer.
    async fn ticket(&mut self, serial: &str, code: &str, extra: &[&str], tally: &mut Tally) -> anyhow::Result<()> {
        let mut prize = 0;
        for (op, done) in [("sell", "sold"), ("pay", "paid")] {
            if op == "pay" {
                prize = self.play_out(serial, code).await?;
                if prize == 0 {
                    return Ok(());
                }
            }
            let loss = [Loss::Dropped, Loss::Killed, Loss::AtOnce][self.turn % 3];
            self.turn += 1;
            let (status, answer, applied) = self.lose_then_retry(op, serial, loss, done, extra).await?;
            tally.retries += 1;
            tally.replayed += u64::from(applied);
            anyhow::ensure!(
                status == 200,
                "{op} {serial} ({}), retried: {status} {}",
                loss.name(),
                String::from_utf8_lossy(&answer)
            );
            let body = json!({"serial": serial});
            let again = self.post(&format!("/api/retail/{op}"), SHOP_A_TOKEN, &body).await?;
            anyhow::ensure!(
                again == (200, answer.clone()),
                "{op} {serial} ({}): a second retry was answered {} {}, not the same bytes",
                loss.name(),
                again.0,
                String::from_utf8_lossy(&again.1)
            );
            let other = self.post(&format!("/api/retail/{op}"), SHOP_B_TOKEN, &body).await?;
            anyhow::ensure!(other.0 == 409, "{op} {serial}: another shop was answered {}", other.0);
            let v: Value = serde_json::from_slice(&answer)?;
            if op == "sell" {
                anyhow::ensure!(v["sold_by"] == SHOP_A, "{serial}: sold by {}", v["sold_by"]);
                tally.sold += 1;
            } else {
                anyhow::ensure!(
                    v["prize_cents"] == prize,
                    "{serial}: paid {} for a prize of {prize}",
                    v["prize_cents"]
                );
                tally.paid += 1;
                tally.prizes_paid_cents += prize;
            }
        }
        Ok(())
    }

    /// Opens the ticket with its play code and plays it to the end: its prize.
    async fn play_out(&self, serial: &str, code: &str) -> anyhow::Result<i64> {
        let r =
            self.client.post(format!("{}/api/tickets/redeem", self.url())).json(&json!({"code": code})).send().await?;
        anyhow::ensure!(r.status() == 200, "redeem {serial}: {}", r.status());
        let v: Value = r.json().await?;
        let token = v["token"].as_str().unwrap_or_default().to_string();
        let mut t = v["ticket"].clone();
        while t["phase"] != "finished" {
            let (status, b) = self.post(&format!("/api/tickets/{serial}/actions"), &token, &next_action(&t)).await?;
            anyhow::ensure!(status == 200, "playing {serial}: {status} {}", String::from_utf8_lossy(&b));
            t = serde_json::from_slice::<Value>(&b)?["ticket"].clone();
        }
        Ok(t["result"]["prize_cents"].as_i64().unwrap_or(0))
    }
}

/// The print file of the paper emission's first block: `(serial, play code)`.
async fn printed(c: &reqwest::Client, url: &str, emission: u64) -> anyhow::Result<Vec<(String, String)>> {
    let r = c
        .get(format!("{url}/api/admin/emissions/{emission}/blocks/1/print.csv"))
        .bearer_auth(OPERATOR_TOKEN)
        .send()
        .await?;
    anyhow::ensure!(r.status() == 200, "print file: {}", r.status());
    let text = r.text().await?;
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap_or_default().split(',').collect();
    let col = |n: &str| header.iter().position(|h| *h == n).ok_or_else(|| anyhow::anyhow!("no {n} in the print file"));
    let (serial, code) = (col("serial")?, col("play_code")?);
    Ok(lines.map(|l| l.split(',').collect::<Vec<_>>()).map(|f| (f[serial].to_string(), f[code].to_string())).collect())
}

pub fn run(args: &ReliabilityArgs, backend: Backend, seed: u64, rt: &tokio::runtime::Runtime) -> anyhow::Result<Value> {
    println!("\n== shops on {}: lost answers of sales and payments, retried ==", backend.name());
    let Some(db) = Database::create(args, backend, &format!("shops-{}", backend.name()))? else {
        return Ok(json!({"backend": backend.name(), "skipped": true, "ok": !args.require_postgres}));
    };
    let started = Instant::now();
    let tokens = format!("{SHOP_A}:{SHOP_A_TOKEN},{SHOP_B}:{SHOP_B_TOKEN}");
    let extra = ["--retailer-tokens", tokens.as_str(), "--initial-blocks", "1"];
    // Tickets sold at least, and winners paid at least (more tickets are
    // sold until enough have won).
    let (tickets, winners) = if args.quick { (12, 4) } else { (60, 20) };
    let mut tally = Tally::default();
    let server = start_server(&db, &extra)?;
    let client = reqwest::Client::builder().timeout(Duration::from_secs(20)).build()?;
    let mut shops = Shops { db: &db, server, client, rng: Rng::new(seed), turn: 0 };
    let outcome: anyhow::Result<()> = rt.block_on(async {
        let r = shops
            .client
            .post(format!("{}/api/admin/emissions", shops.url()))
            .bearer_auth(OPERATOR_TOKEN)
            .json(&json!({"table": table(), "blocks": 1, "channel": "paper"}))
            .send()
            .await?;
        anyhow::ensure!(r.status() == 201, "paper emission: {}", r.status());
        let emission = r.json::<Value>().await?["emission"].as_u64().unwrap_or(0);
        let printed = printed(&shops.client, &shops.url(), emission).await?;
        for (serial, code) in &printed {
            if tally.sold >= tickets && tally.paid >= winners || tally.failures.len() > 10 {
                break;
            }
            if let Err(e) = shops.ticket(serial, code, &extra, &mut tally).await {
                tally.failures.push(format!("{e:#}"));
            }
        }
        Ok(())
    });
    if let Err(e) = outcome {
        tally.failures.push(format!("{e:#}"));
    }
    // Nothing applied twice: the report counts each sale and each payment once.
    let totals = rt.block_on(super::testbed::report_totals(&db.url))?;
    let expected = json!({"sold": tally.sold, "sales_cents": tally.sold * REGULATION_PRICE_CENTS as i64, "prizes_paid_cents": tally.prizes_paid_cents});
    for (k, v) in expected.as_object().into_iter().flatten() {
        if totals[k] != *v {
            tally.failures.push(format!("the report's {k} is {}, the shops were answered {v}", totals[k]));
        }
    }
    let server_errors = shops.server.errors.lock().unwrap().clone();
    shops.server.kill();
    let (ledger, audit) = rt.block_on(super::testbed::check_ledger_and_audit(&db))?;
    if !ledger.is_sound() {
        tally.failures.push(format!("ledger unsound: {ledger:?}"));
    }
    if audit.first_broken.is_some() || audit.forged.is_some() {
        tally.failures.push(format!("audit chain broken: {audit:?}"));
    }
    tally.failures.extend(server_errors.iter().map(|l| format!("server log: {l}")));
    let ok = tally.failures.is_empty() && tally.sold >= tickets && tally.paid >= winners && tally.replayed > 0;
    println!(
        "shops on {}: {} tickets sold, {} paid ({} cents); {} lost answers retried, {} of them already applied: {}",
        backend.name(),
        tally.sold,
        tally.paid,
        tally.prizes_paid_cents,
        tally.retries,
        tally.replayed,
        if ok { "PASS" } else { "FAIL" }
    );
    for f in &tally.failures {
        println!("  FAIL {f}");
    }
    Ok(json!({
        "backend": backend.name(),
        "skipped": false,
        "tickets": tickets,
        "sold": tally.sold,
        "paid": tally.paid,
        "prizes_paid_cents": tally.prizes_paid_cents,
        "retries": tally.retries,
        "replayed": tally.replayed,
        "seconds": started.elapsed().as_secs_f64(),
        "failures": tally.failures,
        "ok": ok,
    }))
}

//! The paper channel's play codes ("guessing codes is useless",
//! docs/contract.md "Retail tickets"): wrong codes are refused and slowed
//! down per client network, the limit survives a restart, holds under
//! concurrent guesses, follows the trusted proxies' `X-Forwarded-For`,
//! and a right code never counts as a failure.

use crate::helpers::*;
use crate::paper::*;
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;

both! {
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retail_tickets_thousands_of_wrong_codes_are_refused_and_slowed_down_even_after_a_restart() {
    // "Guessing codes is useless": wrong codes are limited per client
    // network (IPv4 /24 here; the address as the trusted proxy appended it
    // to X-Forwarded-For), and the limit survives a restart.
    let defaults = server::Config::default();
    assert_eq!(
        (
            defaults.redeem_failures_per_address,
            defaults.redeem_failures_global,
            defaults.redeem_failures_per_address_slowed,
            defaults.redeem_window_s
        ),
        (20, 2000, 2, 900)
    );
    assert!(!defaults.trust_forwarded_for && !defaults.retail_pay_any_shop);
    assert_eq!((defaults.claim_days, defaults.trusted_proxy_hops), (30, 1));
    let limit = u64::from(defaults.redeem_failures_per_address);
    let window = defaults.redeem_window_s;
    let Some(app) = spawn_app_with(|c| c.trust_forwarded_for = true).await else { return };
    let emission = emit_paper(&app, 1).await;
    let printed = app.print_file(emission, 1).await;
    let holder = printed[0].clone();
    sell(&app, SHOP_A_TOKEN, SHOP_A, &holder.serial).await;
    let attacker = "203.0.113.7";

    // Codes of the wrong shape are refused (400) and not counted.
    for i in 0..(2 * limit) {
        let r = app.redeem_from(attacker, &format!("NOT-A-CODE-{i}")).await;
        assert_error(&r, 400, "bad_request");
    }
    // The first `limit` wrong codes are not found (404); then every attempt
    // from the attacker's network is refused (429), its other addresses too.
    let mut codes = wrong_codes(7);
    for i in 0..100 {
        let from = format!("203.0.113.{}", 1 + i % 250);
        let r = app.redeem_from(&from, &codes.next().unwrap()).await;
        if i < limit {
            assert_error(&r, 404, "not_found");
        } else {
            retry_after(&r, window);
        }
    }
    // Thousands more, several at a time: all refused, none ever opens a ticket.
    let app = Arc::new(app);
    let tasks: Vec<_> = (0..8u64)
        .map(|k| {
            let app = app.clone();
            tokio::spawn(async move {
                let mut refused = 0;
                for code in wrong_codes(100 + k).take(3000 / 8) {
                    let r = app.redeem_from(attacker, &code).await;
                    assert_ne!(r.status, 200, "a guess opened a ticket: {}", r.json);
                    retry_after(&r, window);
                    refused += 1;
                }
                refused
            })
        })
        .collect();
    let mut refused = 0;
    for t in tasks {
        refused += t.await.unwrap();
    }
    assert_eq!(refused, 3000 / 8 * 8);
    // Even the right code is refused from that network, before it is looked at...
    retry_after(&app.redeem_from(attacker, &holder.code).await, window);
    // ...and a forged left part of X-Forwarded-For changes nothing: the
    // client is the entry the trusted proxy appended, the right-most.
    retry_after(&app.redeem_from(&format!("198.51.100.23, {attacker}"), &holder.code).await, window);
    // The right code still works for its holder, elsewhere.
    let r = app.redeem_from("198.51.100.23", &holder.code).await;
    assert_eq!(r.status, 200, "{}", r.json);
    let token = r.json["token"].as_str().unwrap().to_string();
    assert_eq!(r.json["ticket"]["serial"], holder.serial);
    let r = app.redeem_from(&format!("{attacker}, 198.51.100.24"), &holder.code).await;
    assert_eq!(r.status, 200, "the right-most address is the client's: {}", r.json);
    // No guess sold or opened anything: one ticket sold, the holder's.
    let in_paper = format!("JOIN blocks b ON b.id = t.block_id WHERE b.emission_id = {emission}");
    assert_eq!(app.query_i64(&format!("SELECT COUNT(*) FROM tickets t {in_paper} AND t.status <> 'printed'")).await, 1);
    // The wrong codes are in the database: the attacker's network's, counted to the limit.
    let stored = "SELECT count FROM limit_counters WHERE bucket = 'redeem:203.0.113.0/24'";
    assert_eq!(app.query_i64(stored).await, limit as i64);
    assert_eq!(app.query_i64("SELECT count FROM limit_counters WHERE bucket = 'redeem:global'").await, limit as i64);
    // A metric counts the refusals (every 429), another the networks that reached the limit.
    let metrics = String::from_utf8(app.get("/metrics", None).await.bytes).unwrap();
    let metric = |name: &str| -> u64 {
        let line = metrics.lines().find(|l| l.starts_with(name)).unwrap_or_else(|| panic!("{name}:\n{metrics}"));
        line.rsplit(' ').next().unwrap().parse::<f64>().unwrap() as u64
    };
    assert_eq!(metric("as_capone_redeem_refused_total"), (100 - limit) + 3000 / 8 * 8 + 2);
    assert_eq!(metric("as_capone_redeem_limit_reached_total"), 1);

    // After a restart on the same database, the attacker is still refused.
    let app = Arc::into_inner(app).unwrap();
    let db = app.stop().await;
    let app = spawn_app_on(db, |c| c.trust_forwarded_for = true).await;
    retry_after(&app.redeem_from(attacker, &wrong_codes(9999).next().unwrap()).await, window);
    retry_after(&app.redeem_from(attacker, &holder.code).await, window);
    // The holder, from another device, resumes the same ticket with the same token.
    let r = app.redeem_from("198.51.100.99", &holder.code).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(
        (r.json["ticket"]["serial"].as_str(), r.json["token"].as_str()),
        (Some(holder.serial.as_str()), Some(token.as_str()))
    );
    app.shutdown().await;
}
}

both! {
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retail_tickets_without_a_trusted_proxy_the_forwarded_address_is_ignored() {
    // trust_forwarded_for = false (the default): the client is the TCP
    // peer, whatever X-Forwarded-For says, so changing it gains nothing.
    let Some(app) = spawn_app_with(|c| c.redeem_failures_per_address = 5).await else { return };
    let emission = emit_paper(&app, 1).await;
    let printed = app.print_file(emission, 1).await;
    sell(&app, SHOP_A_TOKEN, SHOP_A, &printed[0].serial).await;
    for (i, code) in wrong_codes(3).take(5).enumerate() {
        assert_error(&app.redeem_from(&format!("192.0.2.{i}"), &code).await, 404, "not_found");
    }
    for (i, code) in wrong_codes(4).take(5).enumerate() {
        retry_after(&app.redeem_from(&format!("198.51.100.{i}"), &code).await, 900);
    }
    retry_after(&app.redeem(&printed[0].code, None).await, 900);
    app.shutdown().await;
}
}

both! {
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retail_tickets_the_client_is_the_entry_the_nearest_trusted_proxy_appended() {
    // Two proxies in front (a CDN, then a load balancer): the client is the
    // second entry from the right; every entry left of it is the client's
    // own words. IPv6 clients are counted per /64.
    let Some(app) = spawn_app_with(|c| {
        c.trust_forwarded_for = true;
        c.trusted_proxy_hops = 2;
        c.redeem_failures_per_address = 3;
    })
    .await
    else {
        return;
    };
    let emission = emit_paper(&app, 1).await;
    let printed = app.print_file(emission, 1).await;
    sell(&app, SHOP_A_TOKEN, SHOP_A, &printed[0].serial).await;
    let mut codes = wrong_codes(21);
    // The client 2001:db8:7:7::/64 guesses from three addresses of its /64,
    // each time with another forged address on the left.
    for i in 0..3 {
        let chain = format!("10.9.{i}.9, 2001:db8:7:7::{i:x}, 192.0.2.1");
        assert_error(&app.redeem_from(&chain, &codes.next().unwrap()).await, 404, "not_found");
    }
    for chain in ["2001:db8:7:7:ffff::1, 192.0.2.1", "10.0.0.1, 2001:db8:7:7:1:2:3:4, 192.0.2.1"] {
        retry_after(&app.redeem_from(chain, &codes.next().unwrap()).await, 900);
    }
    // The same chain written as two header lines is one list.
    let r = app
        .send(
            app.client
                .post(format!("{}/api/tickets/redeem", app.url))
                .header("x-forwarded-for", "10.0.0.1, 2001:db8:7:7::99")
                .header("x-forwarded-for", "192.0.2.1")
                .json(&json!({"code": codes.next().unwrap()})),
        )
        .await;
    retry_after(&r, 900);
    // Another /64 is another client; so is the proxy's address alone (too
    // few entries: the request did not come through both proxies).
    assert_error(&app.redeem_from("2001:db8:7:8::1, 192.0.2.1", &codes.next().unwrap()).await, 404, "not_found");
    assert_error(&app.redeem_from("192.0.2.1", &codes.next().unwrap()).await, 404, "not_found");
    let r = app.redeem_from("2001:db8:7:9::1, 192.0.2.1", &printed[0].code).await;
    assert_eq!(r.status, 200, "{}", r.json);
    app.shutdown().await;
}
}

both! {
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retail_tickets_past_the_global_limit_guessing_is_slowed_and_no_holder_is_locked_out() {
    let (per_network, global, slowed, window) = (20u32, 30u32, 2u32, 4u64);
    let Some(app) = spawn_app_with(|c| {
        c.trust_forwarded_for = true;
        c.redeem_failures_per_address = per_network;
        c.redeem_failures_global = global;
        c.redeem_failures_per_address_slowed = slowed;
        c.redeem_window_s = window;
    })
    .await
    else {
        return;
    };
    let emission = emit_paper(&app, 1).await;
    let printed = app.print_file(emission, 1).await;
    let holder = printed[0].clone();
    sell(&app, SHOP_A_TOKEN, SHOP_A, &holder.serial).await;
    // 30 wrong codes from 6 networks, 5 each (under the per-network limit).
    let mut codes = wrong_codes(11);
    for i in 0..global {
        let r = app.redeem_from(&format!("10.1.{}.1", i % 6), &codes.next().unwrap()).await;
        assert_error(&r, 404, "not_found");
    }
    // Guessing is now slowed for everyone: a network that already sent
    // wrong codes is refused, a new one gets `slowed` of them...
    retry_after(&app.redeem_from("10.1.0.1", &codes.next().unwrap()).await, window);
    for _ in 0..slowed {
        assert_error(&app.redeem_from("10.2.0.1", &codes.next().unwrap()).await, 404, "not_found");
    }
    let mut wait = retry_after(&app.redeem_from("10.2.0.1", &codes.next().unwrap()).await, window);
    // ...and 40 more networks, 2 each, can do nothing to the holder: their
    // right code opens the ticket at once, from any network that sent no
    // wrong code.
    for n in 0..40 {
        for _ in 0..slowed {
            assert_error(&app.redeem_from(&format!("10.3.{n}.1"), &codes.next().unwrap()).await, 404, "not_found");
        }
    }
    let r = app.redeem_from("10.4.0.1", &holder.code).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["ticket"]["serial"], holder.serial);
    wait = wait.max(retry_after(&app.redeem_from("10.3.0.1", &codes.next().unwrap()).await, window));
    // Slowed, not locked: once the window has passed, every network starts again.
    tokio::time::sleep(Duration::from_millis(wait * 1000 + 500)).await;
    assert_error(&app.redeem_from("10.1.0.1", &codes.next().unwrap()).await, 404, "not_found");
    assert_error(&app.redeem_from("10.3.0.1", &codes.next().unwrap()).await, 404, "not_found");
    app.shutdown().await;
}
}

both! {
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retail_tickets_a_right_code_never_counts_even_when_its_client_hangs_up() {
    let limit = 5u32;
    let Some(app) = spawn_app_with(|c| {
        c.trust_forwarded_for = true;
        c.redeem_failures_per_address = limit;
    })
    .await
    else {
        return;
    };
    let emission = emit_paper(&app, 1).await;
    let printed = app.print_file(emission, 1).await;
    let holder = printed[0].clone();
    sell(&app, SHOP_A_TOKEN, SHOP_A, &holder.serial).await;
    let from = "198.51.100.61";
    // The right code, many more times than the limit: never refused.
    for _ in 0..(4 * limit) {
        let r = app.redeem_from(from, &holder.code).await;
        assert_eq!(r.status, 200, "{}", r.json);
    }
    // The right code again 40 times, each client hanging up as soon as it
    // has sent its request, at every moment of the server's work on it.
    let addr = app.url.trim_start_matches("http://").to_string();
    let body = json!({"code": holder.code}).to_string();
    for i in 0..40u64 {
        let mut s = tokio::net::TcpStream::connect(&addr).await.unwrap();
        let request = format!(
            "POST /api/tickets/redeem HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: {from}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        );
        tokio::io::AsyncWriteExt::write_all(&mut s, request.as_bytes()).await.unwrap();
        tokio::time::sleep(Duration::from_micros(i * 250)).await;
        drop(s);
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    // None of it counted: the network still has all its wrong codes.
    let mut codes = wrong_codes(41);
    for _ in 0..limit {
        assert_error(&app.redeem_from(from, &codes.next().unwrap()).await, 404, "not_found");
    }
    retry_after(&app.redeem_from(from, &codes.next().unwrap()).await, 900);
    app.shutdown().await;
}
}

both! {
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn retail_tickets_concurrent_wrong_codes_from_one_address_get_no_more_than_the_limit() {
    // "failed attempts limited per client address": however many at once.
    let limit = 20u32;
    let Some(app) = spawn_app_with(|c| {
        c.trust_forwarded_for = true;
        c.redeem_failures_per_address = limit;
    })
    .await
    else {
        return;
    };
    let app = Arc::new(app);
    let tasks: Vec<_> = (0..64u64)
        .map(|k| {
            let app = app.clone();
            tokio::spawn(async move {
                let mut looked_up = 0u32;
                for code in wrong_codes(500 + k).take(5) {
                    let r = app.redeem_from("203.0.113.99", &code).await;
                    match r.status.as_u16() {
                        404 => looked_up += 1,
                        429 => {}
                        s => panic!("{s}: {}", r.json),
                    }
                }
                looked_up
            })
        })
        .collect();
    let mut looked_up = 0;
    for t in tasks {
        looked_up += t.await.unwrap();
    }
    assert!(looked_up <= limit, "{looked_up} wrong codes were looked up from one address, the limit is {limit}");
    shutdown_shared(app).await;
}
}

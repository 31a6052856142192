//! The CPU a wallet call costs its caller, through the server's transport
//! (`crates/server/src/operator/transport.rs`) and through reqwest, which
//! it replaced: `bench/wallet-client.sh` runs this against the reference
//! operator and records the figures (BENCHMARKS.md, "The operator mode").
//!
//!   wallet_calls transport|reqwest URL CALLS IN_FLIGHT
//!
//! Sends CALLS POSTs of a small JSON body to URL (any answer will do: the
//! wallet's refusal of an unsigned call is a few hundred bytes, as a real
//! answer is), IN_FLIGHT at a time, from a runtime of two worker threads
//! (the server's on this machine); prints the process's CPU (user + system)
//! per call and the calls per second.

use as_capone_server::WalletTransport;
use bytes::Bytes;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The process's CPU seconds so far (utime + stime, USER_HZ 100).
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").expect("/proc/self/stat");
    let fields: Vec<&str> = stat[stat.rfind(')').expect("a comm") + 2..].split(' ').collect();
    (fields[11].parse::<f64>().expect("utime") + fields[12].parse::<f64>().expect("stime")) / 100.0
}

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    anyhow::ensure!(args.len() == 5, "usage: wallet_calls transport|reqwest URL CALLS IN_FLIGHT");
    let (client, url) = (args[1].clone(), args[2].clone());
    let (calls, in_flight): (usize, usize) = (args[3].parse()?, args[4].parse()?);
    anyhow::ensure!(in_flight >= 1 && calls >= in_flight, "CALLS must be at least IN_FLIGHT, at least 1");
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    let body = Bytes::from_static(b"{\"player\":\"p1\",\"currency\":\"EUR\"}");
    let transport = Arc::new(WalletTransport::new(&url, Duration::from_secs(10))?);
    let path = transport.path_of("");
    let http = reqwest::Client::new();
    let (cpu, started) = (cpu_seconds(), Instant::now());
    runtime.block_on(async {
        let mut tasks = Vec::new();
        for _ in 0..in_flight {
            let (client, url, path, body) = (client.clone(), url.clone(), path.clone(), body.clone());
            let (transport, http) = (transport.clone(), http.clone());
            tasks.push(tokio::spawn(async move {
                for _ in 0..calls / in_flight {
                    if client == "reqwest" {
                        let answer = http.post(&url).header("content-type", "application/json").body(body.clone());
                        answer.send().await?.bytes().await?;
                    } else {
                        transport.post(&path, &[], body.clone()).await.map_err(anyhow::Error::msg)?;
                    }
                }
                anyhow::Ok(())
            }));
        }
        for t in tasks {
            t.await??;
        }
        anyhow::Ok(())
    })?;
    let (cpu, seconds) = (cpu_seconds() - cpu, started.elapsed().as_secs_f64());
    let done = (calls / in_flight * in_flight) as f64;
    println!(
        "{client}: {:.1} µs of CPU a call, {:.0} calls/s ({in_flight} in flight)",
        cpu * 1e6 / done,
        done / seconds
    );
    Ok(())
}

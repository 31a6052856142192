//! The accept loop: axum's router served by hyper (HTTP/1.1, as
//! `axum::serve` with axum's default features) with the limits that
//! `axum::serve` leaves out (a hostile test found each one missing):
//!
//! - **a header-read timeout**: a connection that stops half-way through its
//!   headers, or sits idle between requests, is closed after
//!   `header_read_timeout` (hyper's timer, which axum 0.8 does not install);
//! - **a cap on open connections**: past `max_connections` the loop stops
//!   accepting until one closes (the kernel's backlog holds the rest), so
//!   slow clients cannot take every file descriptor;
//! - **a bounded graceful shutdown**: on stop, no new connection is
//!   accepted, open ones finish their requests, and after `shutdown_grace`
//!   the rest are dropped, so one stuck client cannot keep SIGTERM waiting.
//!
//! Each request carries its peer address (`ConnectInfo<SocketAddr>`), as
//! `into_make_service_with_connect_info` gives it.

use axum::Router;
use axum::body::Body;
use axum::extract::ConnectInfo;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tower::ServiceExt;

/// The limits of [`serve`].
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub max_connections: usize,
    pub header_read_timeout: Duration,
    pub shutdown_grace: Duration,
}

/// Serves `app` on `listener` until `stop` completes, then shuts down
/// within `limits.shutdown_grace`.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    limits: Limits,
    stop: impl Future<Output = ()> + Send,
) -> std::io::Result<()> {
    let permits = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let graceful = GracefulShutdown::new();
    let mut builder = http1::Builder::new();
    builder.timer(TokioTimer::new()).header_read_timeout(limits.header_read_timeout);
    tokio::pin!(stop);
    let mut full_logged = false;
    loop {
        let permit = match permits.clone().try_acquire_owned() {
            Ok(p) => p,
            Err(_) => {
                if !full_logged {
                    tracing::warn!(max = limits.max_connections, "connection limit reached: new connections wait");
                    full_logged = true;
                }
                tokio::select! {
                    p = permits.clone().acquire_owned() => p.expect("the semaphore is never closed"),
                    _ = &mut stop => break,
                }
            }
        };
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    // Out of file descriptors and the like: wait instead of spinning.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            _ = &mut stop => break,
        };
        full_logged = false;
        let _ = stream.set_nodelay(true);
        let service = app.clone().map_request(move |req: hyper::Request<Incoming>| {
            let mut req = req.map(Body::new);
            req.extensions_mut().insert(ConnectInfo(peer));
            req
        });
        let connection = builder.serve_connection(TokioIo::new(stream), TowerToHyperService::new(service));
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!(error = %e, %peer, "connection ended with an error");
            }
            drop(permit);
        });
    }
    drop(listener);
    if tokio::time::timeout(limits.shutdown_grace, graceful.shutdown()).await.is_err() {
        tracing::warn!(
            grace_ms = limits.shutdown_grace.as_millis() as u64,
            "connections still open after the grace period: closing them"
        );
    }
    Ok(())
}

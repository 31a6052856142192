//! The accept loop. axum's own `serve` always answers; the chaos switch's
//! dropped answers must not: a handler marks its response with
//! [`DropAnswer`], and the connection is then closed without writing it
//! (hyper closes an HTTP/1 connection whose service fails, sending nothing).

use axum::Router;
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tower::ServiceExt;

/// The marker of a response to drop, and the service error that drops it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct DropAnswer;

impl std::fmt::Display for DropAnswer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the chaos switch dropped this answer")
    }
}

impl std::error::Error for DropAnswer {}

/// Serves `router` on `listener` until `shutdown` turns true; then stops
/// accepting and cuts the open connections.
pub(crate) async fn serve(listener: TcpListener, router: Router, mut shutdown: watch::Receiver<bool>) {
    let mut connections = tokio::task::JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else {
                    // Out of file descriptors and the like: breathe, retry.
                    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                    continue;
                };
                let _ = stream.set_nodelay(true);
                let router = router.clone();
                connections.spawn(async move {
                    let service = hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
                        let router = router.clone();
                        async move {
                            let response = router.oneshot(request.map(axum::body::Body::new)).await.unwrap_or_else(|e| match e {});
                            if response.extensions().get::<DropAnswer>().is_some() {
                                Err(DropAnswer)
                            } else {
                                Ok(response)
                            }
                        }
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
                // Forget the connections that ended.
                while connections.try_join_next().is_some() {}
            }
            _ = shutdown.changed() => break,
        }
    }
    connections.shutdown().await;
}

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
//! - **requests framed twice**: hyper reads a request with both
//!   `Content-Length` and `Transfer-Encoding` by its chunks and drops the
//!   length before the router sees it; [`Framing`] watches the bytes hyper
//!   reads and marks such a request ([`FramedTwice`]), which `http::track`
//!   refuses with 400 (a proxy in front might have read the length: the way
//!   requests are smuggled past it).
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
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
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
        let framing = Arc::new(FramedTwiceAt::default());
        let requests = Arc::new(AtomicUsize::new(0));
        let marks = framing.clone();
        let service = app.clone().map_request(move |req: hyper::Request<Incoming>| {
            let mut req = req.map(Body::new);
            req.extensions_mut().insert(ConnectInfo(peer));
            // hyper hands the requests over in the order their heads came.
            if marks.is(requests.fetch_add(1, Ordering::Relaxed)) {
                req.extensions_mut().insert(FramedTwice);
            }
            req
        });
        let stream = Watched { inner: stream, framing: Framing::new(framing) };
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

/// A request whose head had both `Content-Length` and `Transfer-Encoding`
/// (an extension of the request).
#[derive(Debug, Clone, Copy)]
pub struct FramedTwice;

/// The number of a connection's request (from 0) whose head had both
/// headers, if one had: hyper closes the connection after it.
#[derive(Debug, Default)]
struct FramedTwiceAt(AtomicUsize);

impl FramedTwiceAt {
    fn mark(&self, request: usize) {
        self.0.store(request + 1, Ordering::Relaxed);
    }
    fn is(&self, request: usize) -> bool {
        self.0.load(Ordering::Relaxed) == request + 1
    }
}

/// The longest request head or chunk-size line followed; past it hyper
/// refuses the request anyway, and the bytes are no longer followed.
const LONGEST_LINE: usize = 1 << 20;

/// Follows the requests in the bytes hyper reads, as HTTP/1.1 frames them
/// (a head, then a body of `Content-Length` bytes or of chunks), to find
/// the heads that have both `Content-Length` and `Transfer-Encoding`. It
/// stops following at the first such head (hyper closes the connection
/// after its answer) or at anything hyper itself refuses.
struct Framing {
    state: Frame,
    /// The head or line being read.
    line: Vec<u8>,
    heads: usize,
    found: Arc<FramedTwiceAt>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Frame {
    Head,
    /// Bytes to skip, then the next state.
    Skip(u64, Next),
    ChunkSize,
    Trailers,
    Stopped,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Next {
    Head,
    ChunkSize,
}

impl Framing {
    fn new(found: Arc<FramedTwiceAt>) -> Framing {
        Framing { state: Frame::Head, line: Vec::new(), heads: 0, found }
    }

    fn feed(&mut self, mut data: &[u8]) {
        while !data.is_empty() {
            match self.state {
                Frame::Stopped => return,
                Frame::Skip(n, next) => {
                    let take = (data.len() as u64).min(n);
                    data = &data[take as usize..];
                    self.state = if take == n {
                        match next {
                            Next::Head => Frame::Head,
                            Next::ChunkSize => Frame::ChunkSize,
                        }
                    } else {
                        Frame::Skip(n - take, next)
                    };
                }
                Frame::Head => {
                    // Empty lines before a request line are ignored, as hyper does.
                    if self.line.is_empty() && matches!(data[0], b'\r' | b'\n') {
                        data = &data[1..];
                        continue;
                    }
                    let (done, rest) = self.read_until(data, b"\r\n\r\n");
                    data = rest;
                    if done {
                        self.head();
                    }
                }
                Frame::ChunkSize => {
                    let (done, rest) = self.read_until(data, b"\r\n");
                    data = rest;
                    if done {
                        let line = String::from_utf8_lossy(&self.line).into_owned();
                        let size = line.trim_end().split(';').next().unwrap_or("").trim();
                        self.state = match u64::from_str_radix(size, 16) {
                            Ok(0) => Frame::Trailers,
                            Ok(n) => Frame::Skip(n.saturating_add(2), Next::ChunkSize),
                            Err(_) => Frame::Stopped,
                        };
                        self.line.clear();
                    }
                }
                Frame::Trailers => {
                    let (done, rest) = self.read_until(data, b"\r\n");
                    data = rest;
                    if done {
                        if self.line == b"\r\n" {
                            self.state = Frame::Head;
                        }
                        self.line.clear();
                    }
                }
            }
        }
    }

    /// Adds `data` to the line up to `end` (included); whether it is
    /// complete, and the bytes after it.
    fn read_until<'a>(&mut self, data: &'a [u8], end: &[u8]) -> (bool, &'a [u8]) {
        // Where the end may start: it can straddle two reads.
        let from = self.line.len().saturating_sub(end.len() - 1);
        let mut joined = self.line[from..].to_vec();
        joined.extend_from_slice(data);
        if let Some(at) = joined.windows(end.len()).position(|w| w == end) {
            let used = at + end.len() - (self.line.len() - from);
            self.line.extend_from_slice(&data[..used]);
            return (true, &data[used..]);
        }
        self.line.extend_from_slice(data);
        if self.line.len() > LONGEST_LINE {
            self.state = Frame::Stopped;
        }
        (false, &[])
    }

    /// A complete head: how its body is framed.
    fn head(&mut self) {
        let head = String::from_utf8_lossy(&self.line).into_owned();
        self.line.clear();
        let request = self.heads;
        self.heads += 1;
        let (mut length, mut chunked, mut encoded) = (None, false, false);
        for line in head.split("\r\n").skip(1) {
            let Some((name, value)) = line.split_once(':') else { continue };
            let name = name.trim();
            if name.eq_ignore_ascii_case("content-length") {
                length = Some(value.trim().parse::<u64>().ok());
            } else if name.eq_ignore_ascii_case("transfer-encoding") {
                encoded = true;
                chunked = value.rsplit(',').next().is_some_and(|v| v.trim().eq_ignore_ascii_case("chunked"));
            }
        }
        self.state = match (length, encoded) {
            (Some(_), true) => {
                self.found.mark(request);
                Frame::Stopped
            }
            (None, true) if chunked => Frame::ChunkSize,
            (None, true) => Frame::Stopped,
            (Some(Some(0)), false) | (None, false) => Frame::Head,
            (Some(Some(n)), false) => Frame::Skip(n, Next::Head),
            (Some(None), false) => Frame::Stopped,
        };
    }
}

/// A connection whose bytes read are followed by a [`Framing`].
struct Watched<S> {
    inner: S,
    framing: Framing,
}

impl<S: AsyncRead + Unpin> AsyncRead for Watched<S> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = polled
            && self.framing.state != Frame::Stopped
        {
            let this = &mut *self;
            this.framing.feed(&buf.filled()[before..]);
        }
        polled
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Watched<S> {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }
    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The requests marked in `bytes`, fed in pieces of `piece` bytes.
    fn marked(bytes: &[u8], piece: usize) -> Option<usize> {
        let found = Arc::new(FramedTwiceAt::default());
        let mut f = Framing::new(found.clone());
        for part in bytes.chunks(piece) {
            f.feed(part);
        }
        (0..8).find(|&n| found.is(n))
    }

    #[test]
    fn a_head_with_both_lengths_is_found_after_bodies_of_both_kinds() {
        let plain = "POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello";
        let chunked = "POST /b HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\n\
                       5;x=y\r\nhello\r\n3\r\nabc\r\n0\r\nTrailer: 1\r\n\r\n";
        // A body that looks like a head with both headers is skipped as a body.
        let inner = "GET / HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: x\r\n\r\n";
        let tricky = format!("POST /c HTTP/1.1\r\nContent-Length: {}\r\n\r\n{inner}", inner.len());
        let twice = "POST /d HTTP/1.1\r\nTransfer-Encoding: chunked\r\nCONTENT-LENGTH: 3\r\n\r\n0\r\n\r\n";
        let all = format!("\r\n{plain}{chunked}GET /e HTTP/1.1\r\n\r\n{tricky}{twice}");
        for piece in [1, 2, 3, 7, 64, all.len()] {
            assert_eq!(marked(all.as_bytes(), piece), Some(4), "pieces of {piece}");
        }
        assert_eq!(marked(format!("{plain}{chunked}{tricky}").as_bytes(), 5), None);
    }
}

//! The HTTP/1.1 transport of [`super::client::WalletClient`]: a pool of
//! keep-alive connections to the operator's wallet, each call driven in the
//! caller's own task.
//!
//! Why not reqwest, as the other crates use: through hyper-util's pool,
//! reqwest runs every connection in a task of its own, so each call hops
//! twice between the caller's task and the connection's (the request
//! handed over, the answer handed back), often between the runtime's two
//! threads, each hop a wake-up. Here the caller polls its connection itself
//! while it waits for the answer: a call costs the socket's own reads and
//! writes and nothing else. `bench/wallet-client.sh` (the example
//! `examples/wallet_calls.rs` against the reference operator) measured the
//! caller's CPU a call on this 2-core machine: 29 µs against 47 µs through
//! reqwest with 8 calls in flight, 92 µs against 100 µs with one
//! (BENCHMARKS.md, "The operator mode").
//!
//! A connection serves one call at a time (HTTP/1.1, no pipelining) and
//! goes back to the pool only once its whole answer was read; any error
//! or a timeout drops it. Plain `http://` only: TLS to the wallet is
//! terminated by a proxy beside the server (docs/operator-integration.md).

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::client::conn::http1::{self, Connection, SendRequest};
use hyper::header::{CONTENT_TYPE, HOST, HeaderMap, HeaderValue};
use hyper_util::rt::TokioIo;
use std::future::poll_fn;
use std::sync::Mutex;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};
use tokio::net::TcpStream;

/// An idle connection is dropped after this long unused (the wallet's
/// servers commonly close theirs after 60 s or more).
const IDLE_FOR: Duration = Duration::from_secs(30);
/// At most this many idle connections are kept.
const MAX_IDLE: usize = 64;
/// A wallet's answer is a few hundred bytes; anything past this is refused.
const MAX_ANSWER_BYTES: usize = 1 << 20;

type Conn = Connection<TokioIo<TcpStream>, Full<Bytes>>;

struct Idle {
    send: SendRequest<Full<Bytes>>,
    conn: Conn,
    since: Instant,
}

/// An answer, read whole.
pub struct Reply {
    pub status: u16,
    pub headers: HeaderMap,
    pub body: Bytes,
}

/// The connections to one wallet.
pub struct Transport {
    /// `host:port`, as connected to and sent in `Host`.
    authority: String,
    /// The base URL's path, without its last `/` (empty at the root).
    prefix: String,
    timeout: Duration,
    idle: Mutex<Vec<Idle>>,
}

impl Transport {
    /// The wallet at `base` (`http://host[:port][/prefix]`); each call gives
    /// up after `timeout`, its connection included.
    pub fn new(base: &str, timeout: Duration) -> anyhow::Result<Transport> {
        let uri: hyper::Uri = base.parse().map_err(|e| anyhow::anyhow!("the wallet URL {base:?}: {e}"))?;
        anyhow::ensure!(
            uri.scheme_str() == Some("http"),
            "the wallet URL {base:?} is not http://: TLS to the operator's wallet is terminated by a proxy beside \
             the server (docs/operator-integration.md, \"TLS to the wallet\")"
        );
        anyhow::ensure!(uri.query().is_none(), "the wallet URL {base:?} has a query");
        let host = uri.host().ok_or_else(|| anyhow::anyhow!("the wallet URL {base:?} has no host"))?;
        let authority = format!("{host}:{}", uri.port_u16().unwrap_or(80));
        let prefix = uri.path().trim_end_matches('/').to_string();
        Ok(Transport { authority, prefix, timeout, idle: Mutex::new(Vec::new()) })
    }

    /// The path a call to `path` is sent to (and signed with).
    pub fn path_of(&self, path: &str) -> String {
        format!("{}{path}", self.prefix)
    }

    /// POSTs `body` as JSON to `full_path` (from [`Transport::path_of`])
    /// with `headers`; the whole answer, or why there is none.
    pub async fn post(
        &self,
        full_path: &str,
        headers: &[(&'static str, String)],
        body: Bytes,
    ) -> Result<Reply, String> {
        let mut request = hyper::Request::post(full_path)
            .header(HOST, self.authority.as_str())
            .header(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        for (name, value) in headers {
            request = request.header(*name, value.as_str());
        }
        let request = request.body(Full::new(body)).map_err(|e| format!("no answer: bad request: {e}"))?;
        match tokio::time::timeout(self.timeout, self.exchange(request)).await {
            Ok(result) => result,
            Err(_) => Err(format!("no answer: timed out after {} ms", self.timeout.as_millis())),
        }
    }

    async fn exchange(&self, request: hyper::Request<Full<Bytes>>) -> Result<Reply, String> {
        let request = match self.checkout() {
            Some(idle) => match self.call_on(idle, request).await {
                // The wallet closed it while it was idle, before anything was
                // sent: once more, on a new connection.
                Err(Unsent::Back(request, _)) => *request,
                other => return other.map_err(Unsent::why),
            },
            None => request,
        };
        let idle = self.connect().await?;
        self.call_on(idle, request).await.map_err(Unsent::why)
    }

    /// Sends `request` on one connection and reads its whole answer, the
    /// connection polled in this task meanwhile; the connection goes back
    /// to the pool when it can serve another call.
    async fn call_on(&self, idle: Idle, request: hyper::Request<Full<Bytes>>) -> Result<Reply, Unsent> {
        let Idle { mut send, mut conn, .. } = idle;
        let mut closed = false;
        let outcome = {
            let call = async {
                if let Err(e) = poll_fn(|cx| send.poll_ready(cx)).await {
                    return Err(Unsent::Back(Box::new(request), e));
                }
                let answer = send.try_send_request(request).await.map_err(|mut e| match e.take_message() {
                    Some(request) => Unsent::Back(Box::new(request), e.into_error()),
                    None => Unsent::Failed(format!("no answer: {}", e.into_error())),
                })?;
                let (parts, body) = answer.into_parts();
                let status = parts.status.as_u16();
                let body = Limited::new(body, MAX_ANSWER_BYTES)
                    .collect()
                    .await
                    .map_err(|e| Unsent::Failed(format!("answer {status} cut short: {e}")))?
                    .to_bytes();
                Ok(Reply { status, headers: parts.headers, body })
            };
            tokio::pin!(call);
            loop {
                tokio::select! {
                    biased;
                    outcome = &mut call => break outcome,
                    // The connection's reads and writes, in this task; its
                    // end (closed, or an error) fails the call above.
                    _ = poll_fn(|cx| conn.poll_without_shutdown(cx)), if !closed => closed = true,
                }
            }
        };
        if let Ok(reply) = &outcome
            && !closed
            && keeps_alive(reply)
        {
            self.checkin(Idle { send, conn, since: Instant::now() });
        }
        outcome
    }

    /// The most recently used idle connection that is still open.
    fn checkout(&self) -> Option<Idle> {
        let mut idle = self.idle.lock().expect("the wallet's connections");
        while let Some(mut c) = idle.pop() {
            if c.since.elapsed() >= IDLE_FOR {
                // The rest are older still.
                idle.clear();
                return None;
            }
            // Closed by the wallet while idle: its end was already read.
            let mut cx = Context::from_waker(Waker::noop());
            if matches!(c.conn.poll_without_shutdown(&mut cx), Poll::Pending) && !c.send.is_closed() {
                return Some(c);
            }
        }
        None
    }

    fn checkin(&self, c: Idle) {
        let mut idle = self.idle.lock().expect("the wallet's connections");
        idle.push(c);
        // Oldest first: the stale and the surplus go from the front.
        let stale = idle.iter().take_while(|c| c.since.elapsed() >= IDLE_FOR).count();
        let surplus = idle.len().saturating_sub(MAX_IDLE);
        idle.drain(..stale.max(surplus));
    }

    async fn connect(&self) -> Result<Idle, String> {
        let stream = TcpStream::connect(&self.authority)
            .await
            .map_err(|e| format!("no answer: cannot connect to {}: {e}", self.authority))?;
        stream.set_nodelay(true).map_err(|e| format!("no answer: {e}"))?;
        let (send, conn) = http1::handshake(TokioIo::new(stream)).await.map_err(|e| format!("no answer: {e}"))?;
        Ok(Idle { send, conn, since: Instant::now() })
    }
}

/// Why a call failed.
enum Unsent {
    /// Given back unsent: the connection was closed before it was written.
    Back(Box<hyper::Request<Full<Bytes>>>, hyper::Error),
    /// Sent, or perhaps sent: there is no answer (the caller's message).
    Failed(String),
}

impl Unsent {
    fn why(self) -> String {
        match self {
            Unsent::Back(_, e) => format!("no answer: {e}"),
            Unsent::Failed(why) => why,
        }
    }
}

/// Whether the wallet keeps the connection open after this answer.
fn keeps_alive(reply: &Reply) -> bool {
    !reply.headers.get_all(hyper::header::CONNECTION).iter().any(|v| v.as_bytes().eq_ignore_ascii_case(b"close"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// A wallet stand-in speaking just enough HTTP/1.1: it answers each
    /// request `{"n":N}`, closes each connection after `per_connection`
    /// answers without saying so (as a server closing idle connections
    /// does), and never answers a request whose path is `/hang`. The count
    /// of connections it accepted.
    async fn wallet(per_connection: usize) -> (String, Arc<AtomicUsize>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/prefix/", listener.local_addr().unwrap());
        let accepted = Arc::new(AtomicUsize::new(0));
        let count = accepted.clone();
        tokio::spawn(async move {
            loop {
                let (mut socket, _) = listener.accept().await.unwrap();
                let n = count.fetch_add(1, Ordering::SeqCst) + 1;
                tokio::spawn(async move {
                    let mut buf = Vec::new();
                    for _ in 0..per_connection {
                        // One request: its head, then Content-Length bytes.
                        let head_end = loop {
                            if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                                break i + 4;
                            }
                            let mut chunk = [0u8; 4096];
                            match socket.read(&mut chunk).await {
                                Ok(0) | Err(_) => return,
                                Ok(k) => buf.extend_from_slice(&chunk[..k]),
                            }
                        };
                        let head = String::from_utf8_lossy(&buf[..head_end]).to_ascii_lowercase();
                        let length: usize = head
                            .lines()
                            .find_map(|l| l.strip_prefix("content-length:"))
                            .map(|v| v.trim().parse().unwrap())
                            .unwrap_or(0);
                        while buf.len() < head_end + length {
                            let mut chunk = [0u8; 4096];
                            match socket.read(&mut chunk).await {
                                Ok(0) | Err(_) => return,
                                Ok(k) => buf.extend_from_slice(&chunk[..k]),
                            }
                        }
                        assert!(head.starts_with("post /prefix/"), "{head}");
                        if head.starts_with("post /prefix/hang ") {
                            tokio::time::sleep(Duration::from_secs(60)).await;
                            return;
                        }
                        buf.drain(..head_end + length);
                        let body = format!("{{\"n\":{n}}}");
                        let answer = format!("HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n{body}", body.len());
                        socket.write_all(answer.as_bytes()).await.unwrap();
                    }
                    // Closed without a word, as an idle timeout does.
                });
            }
        });
        (url, accepted)
    }

    #[tokio::test]
    async fn calls_share_one_kept_alive_connection() {
        let (url, accepted) = wallet(usize::MAX).await;
        let t = Transport::new(&url, Duration::from_secs(5)).unwrap();
        assert_eq!(t.path_of("/wallet/debit"), "/prefix/wallet/debit");
        for _ in 0..5 {
            let reply =
                t.post(&t.path_of("/call"), &[("x-test", "1".into())], Bytes::from_static(b"{}")).await.unwrap();
            assert_eq!((reply.status, &reply.body[..]), (200, &b"{\"n\":1}"[..]));
        }
        assert_eq!(accepted.load(Ordering::SeqCst), 1);
    }

    /// A pooled connection the wallet closed while it was idle is not an
    /// unanswered call (which would leave a purchase unconfirmed): the
    /// request goes on a new connection.
    #[tokio::test]
    async fn a_connection_closed_while_idle_is_replaced_without_failing_the_call() {
        let (url, accepted) = wallet(1).await;
        let t = Transport::new(&url, Duration::from_secs(5)).unwrap();
        for i in 1..=4 {
            // Let the wallet's close reach us first, as between two purchases.
            tokio::time::sleep(Duration::from_millis(20)).await;
            let reply = t.post(&t.path_of("/call"), &[], Bytes::from_static(b"{}")).await.unwrap();
            assert_eq!(reply.body, format!("{{\"n\":{i}}}"));
        }
        assert_eq!(accepted.load(Ordering::SeqCst), 4);
    }

    #[tokio::test]
    async fn an_unanswered_call_times_out_and_its_connection_is_not_reused() {
        let (url, accepted) = wallet(usize::MAX).await;
        let t = Transport::new(&url, Duration::from_millis(200)).unwrap();
        let why = t.post(&t.path_of("/hang"), &[], Bytes::from_static(b"{}")).await.err().unwrap();
        assert!(why.contains("timed out after 200 ms"), "{why}");
        let reply = t.post(&t.path_of("/call"), &[], Bytes::from_static(b"{}")).await.unwrap();
        assert_eq!(reply.body, "{\"n\":2}");
        assert_eq!(accepted.load(Ordering::SeqCst), 2);
    }

    #[tokio::test]
    async fn no_wallet_listening_is_no_answer() {
        let port = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        let t = Transport::new(&format!("http://127.0.0.1:{port}"), Duration::from_secs(2)).unwrap();
        let why = t.post(&t.path_of("/call"), &[], Bytes::new()).await.err().unwrap();
        assert!(why.starts_with("no answer: cannot connect"), "{why}");
    }

    #[test]
    fn only_plain_http_urls_are_taken() {
        let tls = Transport::new("https://wallet.example/", Duration::from_secs(1)).err().unwrap();
        assert!(tls.to_string().contains("TLS"), "{tls}");
        assert!(Transport::new("http://wallet.example/?a=b", Duration::from_secs(1)).is_err());
        let t = Transport::new("http://wallet.example", Duration::from_secs(1)).unwrap();
        assert_eq!(
            (t.authority.as_str(), t.path_of("/wallet/credit").as_str()),
            ("wallet.example:80", "/wallet/credit")
        );
    }
}

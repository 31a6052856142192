//! A player's HTTP/1.1 connection to the server.

use super::shared::Shared;
use anyhow::Context;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::SendRequest;
use hyper::header::{AUTHORIZATION, CONTENT_TYPE, HOST};
use hyper_util::rt::TokioIo;
use std::time::Instant;

/// One player's HTTP/1.1 connection, kept alive from request to request,
/// opened again after an error.
pub(super) struct Conn {
    pub(super) sender: Option<SendRequest<Full<Bytes>>>,
}

impl Conn {
    async fn open(addr: &str) -> anyhow::Result<SendRequest<Full<Bytes>>> {
        let stream = tokio::net::TcpStream::connect(addr).await.with_context(|| format!("cannot connect to {addr}"))?;
        stream.set_nodelay(true)?;
        let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
        tokio::spawn(async move {
            // Ends when the sender is dropped or the server closes.
            let _ = conn.await;
        });
        Ok(sender)
    }

    /// Sends a request (a POST when `body` is given): the status and the
    /// answer's bytes, with latency counted from `t0`.
    pub(super) async fn send(
        &mut self,
        s: &Shared,
        path: &str,
        token: Option<&str>,
        key: Option<&str>,
        body: Option<String>,
        t0: Instant,
    ) -> anyhow::Result<(u16, Bytes, u32)> {
        let result = self.try_send(s, path, token, key, body).await;
        if result.is_err() {
            // A broken connection is not reused.
            self.sender = None;
        }
        let (status, bytes) = result.with_context(|| path.to_string())?;
        let us = t0.elapsed().as_micros().min(u128::from(u32::MAX)) as u32;
        Ok((status, bytes, us))
    }

    async fn try_send(
        &mut self,
        s: &Shared,
        path: &str,
        token: Option<&str>,
        key: Option<&str>,
        body: Option<String>,
    ) -> anyhow::Result<(u16, Bytes)> {
        let sender = match &mut self.sender {
            Some(sender) => sender,
            None => self.sender.insert(Conn::open(&s.addr).await?),
        };
        sender.ready().await?;
        let mut req = hyper::Request::builder().uri(path).header(HOST, s.addr.as_str());
        if let Some(t) = token {
            req = req.header(AUTHORIZATION, format!("Bearer {t}"));
        }
        if let Some(k) = key {
            req = req.header("idempotency-key", k);
        }
        let req = match body {
            Some(b) => req.method("POST").header(CONTENT_TYPE, "application/json").body(Full::new(Bytes::from(b)))?,
            None => req.method("GET").body(Full::new(Bytes::new()))?,
        };
        let resp = sender.send_request(req).await?;
        let status = resp.status().as_u16();
        let bytes = resp.into_body().collect().await?.to_bytes();
        Ok((status, bytes))
    }
}

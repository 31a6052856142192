//! A corpus of hostile requests, generated from categories, each written
//! byte for byte on its own TCP connection (so that requests no HTTP
//! library would send can be sent too: bad `Content-Length`, made-up
//! methods, invalid UTF-8 in paths, half-sent headers).
//!
//! Every request must be refused with a 4xx in the error shape
//! `{"error": "...", "message": "..."}` (`application/json`), and change
//! nothing: after each one, two players' balances and ticket lists, the
//! operator's figures (`GET /api/admin/emissions`) and the row counts of
//! the SQLite file (read-only, with `sqlite3` when it is installed) are
//! compared with the moment before. A few cases expect something else, and
//! say so: `HEAD` on a static file answers like `GET`; requests the HTTP
//! layer cannot parse (invalid bytes in the request line, oversized
//! headers) may be refused with a bare 4xx or a closed connection, since no
//! route is reached; a connection that stops half-way through its headers
//! must be closed by the server within a bounded time (the time is
//! reported); a made-up method must not become a metric label.
mod account;
mod auth;
mod bodies;
mod case;
mod corpus;
mod game;
mod headers;
mod json;
mod methods;
mod paths;
mod runner;
mod state;
mod text;
mod wire;

pub use runner::run;

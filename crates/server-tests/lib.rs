//! The server's API and browser suites (tests/ of crates/server), as a package of their own.

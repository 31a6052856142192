//! The reference operator's tests, one binary (one link on two cores):
//! the wallet's rules, signatures, the chaos switch, durability across a
//! kill, the admin side and the launch client, and Schemathesis over the
//! OpenAPI document.

mod admin;
mod chaos;
mod helpers;
mod restart;
mod schemathesis;
mod signatures;
mod wallet;

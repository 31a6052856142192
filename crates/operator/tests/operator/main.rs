//! The reference operator's tests, one binary (one link on two cores):
//! the wallet's rules, signatures, the chaos switch, durability across a
//! kill, the admin side and the launch client, the document's spellings
//! and methods, and Schemathesis over the OpenAPI document.

mod admin;
mod chaos;
mod document;
mod helpers;
mod restart;
mod schemathesis;
mod signatures;
mod wallet;

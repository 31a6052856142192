//! The math crate's integration tests, one binary (a module per subject):
//! `odds` (the exact odds by an independent walk through the engine),
//! `payout` (the payout figures and a block's risk against independent
//! computations) and `table` (the prize table's validation, art. 3.1).

mod odds;
mod payout;
mod table;

//! The engine's integration tests, one binary (a module per subject):
//! `rules` (the regulation's 3.2, article by article), `properties` (the
//! rules' invariants whatever the player and the draws do) and `sim` (the
//! simulator's paths against `Game::apply`).

mod properties;
mod rules;
mod sim;

//! `as-capone play [--seed S] [--table FILE]`: one ticket in the terminal.
//! Type a card to play it (7 8 9 10 J Q K A, or V D R), press Enter to click
//! the deck when a deck draw is due. The ticket draws from the same fair
//! stream as the server, and its seed is revealed at the end.

use clap::Args;
use engine::DrawSource;
use engine::{
    Action, DeckFor, Event, FairStream, FastSource, Game, Next, Outcome, Phase, PrizeSchedule, Rank, commitment,
};
use format::euros_plain;
use math::PrizeTable;
use sha2::{Digest, Sha256};
use std::io::{BufRead, Write};
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct PlayArgs {
    /// Seed of the ticket (any text): the same seed gives the same ticket
    /// and draws. Random when absent.
    #[arg(long)]
    pub seed: Option<String>,
    /// The prize table the ticket's schedule is drawn from (default: the example table).
    #[arg(long)]
    pub table: Option<PathBuf>,
    /// Your client seed, mixed into every draw (docs/contract.md, "Fairness").
    #[arg(long, default_value = "terminal")]
    pub client_seed: String,
}

pub fn run(args: PlayArgs) -> anyhow::Result<()> {
    let table = match &args.table {
        Some(p) => lab::load_table(p)?,
        None => PrizeTable::example(),
    };
    let server_seed: [u8; 32] = match &args.seed {
        Some(s) => Sha256::new().chain_update(b"as-capone play\0").chain_update(s.as_bytes()).finalize().into(),
        None => {
            use rand_core::{OsRng, TryRngCore};
            let mut b = [0u8; 32];
            OsRng.try_fill_bytes(&mut b).map_err(|e| anyhow::anyhow!("the OS random generator failed: {e}"))?;
            b
        }
    };
    let stdin = std::io::stdin();
    let stdout = std::io::stdout();
    session(&table, &server_seed, &args.client_seed, stdin.lock(), stdout.lock())
}

/// The ticket's schedule: a row of the table, weighted by its tickets per
/// block, drawn from a ChaCha stream keyed by the seed.
fn schedule_of(table: &PrizeTable, server_seed: &[u8; 32]) -> PrizeSchedule {
    let key: [u8; 32] = Sha256::new().chain_update(b"schedule\0").chain_update(server_seed).finalize().into();
    let mut pick = FastSource::new(key, 0).below(table.block_size);
    for row in &table.schedules {
        if pick < row.tickets {
            return row.prizes;
        }
        pick -= row.tickets;
    }
    unreachable!("the counts add up to the block size")
}

/// Plays one ticket reading `input` and writing to `out`.
pub fn session(
    table: &PrizeTable,
    server_seed: &[u8; 32],
    client_seed: &str,
    mut input: impl BufRead,
    mut out: impl Write,
) -> anyhow::Result<()> {
    let serial = format!("{}-PLAY-{}", table.code, &hex::encode(Sha256::digest(server_seed))[..8]);
    let prizes = schedule_of(table, server_seed);
    let mut source = FairStream::new(server_seed, client_seed, &serial);
    let mut game = Game::new(prizes);
    writeln!(out, "As Capone: ticket {serial}, {}", euros_plain(table.price_cents as i64))?;
    writeln!(out, "Commitment (SHA-256 of the server seed): {}", commitment(server_seed))?;
    writeln!(out, "Under the scratch zone, the prizes of this ticket:")?;
    writeln!(
        out,
        "  5 tricks: {}   6 tricks: {}   7 tricks: {}   8 tricks: {}",
        euros_plain(prizes.for_tricks(5) as i64),
        euros_plain(prizes.for_tricks(6) as i64),
        euros_plain(prizes.for_tricks(7) as i64),
        euros_plain(prizes.for_tricks(8) as i64)
    )?;
    writeln!(
        out,
        "Play your eight hearts against As Capone's eight spades. Type a card (7 8 9 10 J Q K A, or V D R), or quit.\n"
    )?;
    let mut line = String::new();
    while !game.is_finished() {
        match game.phase() {
            Phase::Play => {
                let hand: Vec<&str> = game.hand().iter().map(Rank::as_str).collect();
                write!(
                    out,
                    "Game {} | tricks won {} lost {} | As Capone: {} cards | your hand: {} > ",
                    game.game_number(),
                    game.tricks_won(),
                    game.tricks_lost(),
                    game.capone_cards_left(),
                    hand.join(" ")
                )?;
            }
            _ => write!(out, "Press Enter to click the deck > ")?,
        }
        out.flush()?;
        line.clear();
        if input.read_line(&mut line)? == 0 {
            anyhow::bail!("input ended before the ticket was finished (it can be replayed with the same --seed)");
        }
        let typed = line.trim();
        if typed.eq_ignore_ascii_case("quit") {
            writeln!(out, "\nYou left the ticket unfinished.")?;
            return Ok(());
        }
        let action = match game.phase() {
            Phase::Play if typed.is_empty() => {
                writeln!(out, "  type a card of your hand")?;
                continue;
            }
            Phase::Play => match Rank::parse_lenient(typed) {
                Ok(card) => Action::play(card),
                Err(e) => {
                    writeln!(out, "  {e}")?;
                    continue;
                }
            },
            _ => Action::Draw,
        };
        let mut events = Vec::new();
        if let Err(e) = game.apply(action, &mut source, &mut events) {
            writeln!(out, "  {e}")?;
            continue;
        }
        for e in events {
            writeln!(out, "  {}", describe(e))?;
        }
    }
    let result = game.result().expect("finished");
    writeln!(out)?;
    if result.prize_cents > 0 {
        writeln!(out, "You win {} with {} tricks!", euros_plain(result.prize_cents as i64), result.tricks)?;
    } else {
        writeln!(out, "Lost ticket ({} tricks in the deciding game).", result.tricks)?;
    }
    writeln!(out, "Server seed, revealed: {}", hex::encode(server_seed))?;
    writeln!(out, "Check: SHA-256 of the seed = {} = the commitment shown at the start.", commitment(server_seed))?;
    Ok(())
}

/// One line for an event.
pub fn describe(e: Event) -> String {
    let outcome = |o: Outcome| match o {
        Outcome::Won => "you win",
        Outcome::Lost => "As Capone wins",
        Outcome::Tie => "tie",
    };
    match e {
        Event::Trick { player, capone, outcome: o } => {
            let tail = if o == Outcome::Tie { ": click the deck to settle it" } else { "" };
            format!("You play {player}♥, As Capone plays {capone}♠: {}{tail}", outcome(o))
        }
        Event::Deck { player, capone, outcome: o, for_ } => {
            let what = match for_ {
                DeckFor::TieBreak => "Tie-break",
                DeckFor::Extra => "Extra duel",
            };
            let tail = if o == Outcome::Tie { ": a new tie, click the deck again" } else { "" };
            format!("{what}: you draw {player}, As Capone draws {capone}: {}{tail}", outcome(o))
        }
        Event::GameOver { tricks, next: Next::ExtraDraw } => {
            format!("Game over with {tricks} tricks: Extra duel! Win a deck draw to play an Extra game.")
        }
        Event::GameOver { tricks, next: Next::Finished } => format!("Game over with {tricks} tricks."),
        Event::ExtraGame { game } => format!("Extra game {}: eight new cards each, the same prizes.", game - 1),
        Event::Finished { tricks, prize_cents } => {
            format!("Ticket finished: {tricks} tricks, prize {}", euros_plain(prize_cents as i64))
        }
    }
}

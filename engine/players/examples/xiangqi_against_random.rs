//! Xiangqi's alpha-beta at one second a move against the random agent, 20 games with colours
//! alternating (about ten minutes):
//!
//! ```text
//! cargo run --release -p players --example xiangqi_against_random
//! ```
//!
//! It prints one line a game (alpha-beta's colour, the outcome, `None` for a game stopped at
//! 400 plies, the rule that ended it and the final position), then how many alpha-beta won. It
//! exits with status 1 unless alpha-beta won every game.

use std::time::Duration;

use games::xiangqi::Xiangqi;
use games::{Game, Outcome, Player, RandomAgent};
use players::alphabeta::xiangqi::{AlphaBetaAgent, SearchLimits};
use players::matchplay::play_game;

const GAMES: usize = 20;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let limits = SearchLimits::movetime(Duration::from_secs(1));
    let mut won = 0;
    for i in 0..GAMES {
        let mut ab = AlphaBetaAgent::new(limits, 16);
        let mut rnd = RandomAgent::new(i as u64);
        let ab_is_red = i % 2 == 0;
        let start = Xiangqi::start();
        let record = if ab_is_red {
            play_game(&start, &mut ab, &mut rnd, 400)?
        } else {
            play_game(&start, &mut rnd, &mut ab, 400)?
        };
        let mut end = start;
        for &m in &record.moves {
            end.play(m)?;
        }
        let outcome = (!record.capped).then_some(record.outcome);
        let ab_player = if ab_is_red {
            Player::First
        } else {
            Player::Second
        };
        if outcome == Some(Outcome::Win(ab_player)) {
            won += 1;
        }
        println!(
            "game {i}: alphabeta {} -> {outcome:?} ({}), final position {}",
            if ab_is_red { "Red" } else { "Black" },
            record.ending,
            end.to_text()
        );
    }
    println!("alpha-beta won {won} of {GAMES} games at one second a move");
    if won < GAMES {
        std::process::exit(1);
    }
    Ok(())
}

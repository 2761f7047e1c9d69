//! Games between agents: alpha-beta against the random agent and against Fairy-Stockfish
//! through the external-UCI agent. The generic `engine match` lives elsewhere; this is the
//! smallest loop that follows the `Agent` contract. Twenty games at one second a move are
//! `cargo run --release -p players --example xiangqi_against_random`.

use std::time::Duration;

use games::xiangqi::Xiangqi;
use games::{Agent, Game, Outcome, Player, RandomAgent};
use players::alphabeta::xiangqi::{AlphaBetaAgent, SearchLimits};
use players::fairy::find_fairy_stockfish;
use players::uci_client::{UciEngineAgent, UciEngineConfig};

/// Plays one game, Red = `red`. Returns the outcome, or `None` if `max_plies` ran out.
fn play_game(
    red: &mut dyn Agent<Xiangqi>,
    black: &mut dyn Agent<Xiangqi>,
    max_plies: usize,
) -> (Option<Outcome>, Xiangqi) {
    let mut g = Xiangqi::start();
    red.new_game(&g).unwrap();
    black.new_game(&g).unwrap();
    for _ in 0..max_plies {
        if g.outcome().is_some() {
            break;
        }
        let mover: &mut dyn Agent<Xiangqi> = if g.to_act() == Player::First {
            &mut *red
        } else {
            &mut *black
        };
        let m = mover
            .select_action(&g)
            .unwrap_or_else(|e| panic!("{e} in {}", g.to_text()));
        red.observe(&g, m).unwrap();
        black.observe(&g, m).unwrap();
        g.play(m)
            .unwrap_or_else(|e| panic!("agent played {m}: {e} in {}", g.to_text()));
    }
    (g.outcome(), g)
}

/// Alpha-beta plays both colours against random; it must win every game.
fn alphabeta_beats_random(games: usize, limits: SearchLimits) {
    for i in 0..games {
        let mut ab = AlphaBetaAgent::new(limits, 16);
        let mut rnd = RandomAgent::new(i as u64);
        let ab_is_red = i % 2 == 0;
        let (outcome, g) = if ab_is_red {
            play_game(&mut ab, &mut rnd, 400)
        } else {
            play_game(&mut rnd, &mut ab, 400)
        };
        let ab_player = if ab_is_red {
            Player::First
        } else {
            Player::Second
        };
        eprintln!(
            "game {i}: alphabeta {} -> {outcome:?} ({:?}), final position {}",
            if ab_is_red { "Red" } else { "Black" },
            g.end_rule(),
            g.to_text()
        );
        assert_eq!(
            outcome,
            Some(Outcome::Win(ab_player)),
            "game {i}: {}",
            g.to_text()
        );
    }
}

#[test]
fn alphabeta_at_depth_three_beats_random() {
    alphabeta_beats_random(4, SearchLimits::depth(3));
}

#[test]
fn short_match_against_fairy_stockfish() {
    let Some(path) = find_fairy_stockfish() else {
        if std::env::var_os("CI").is_some() {
            panic!("fairy-stockfish not found (apt-get install fairy-stockfish)");
        }
        eprintln!("SKIPPED: fairy-stockfish not found; apt-get install fairy-stockfish");
        return;
    };
    let mut results = Vec::new();
    for i in 0..2 {
        let mut fsf =
            UciEngineAgent::spawn(UciEngineConfig::fairy_stockfish(path.to_str().unwrap(), 20))
                .unwrap();
        let mut ab = AlphaBetaAgent::new(SearchLimits::movetime(Duration::from_millis(20)), 8);
        let (outcome, g) = if i == 0 {
            play_game(&mut ab, &mut fsf, 300)
        } else {
            play_game(&mut fsf, &mut ab, 300)
        };
        eprintln!("game {i}: {outcome:?} {:?} {}", g.end_rule(), g.to_text());
        results.push(outcome);
    }
    // Every move both sides sent was legal (play_game checks); the games reached an end or
    // the ply cap. The result itself is not asserted: Fairy-Stockfish is far stronger.
    assert_eq!(results.len(), 2);
}

#[test]
fn a_missing_engine_is_an_error_not_a_panic() {
    let config = UciEngineConfig::command_line("/nonexistent/engine --flag", "go depth 1", 0);
    let e = UciEngineAgent::spawn(config).err().expect("cannot start");
    assert!(e.to_string().contains("cannot start"), "{e}");
    let e = UciEngineAgent::spawn(UciEngineConfig::command_line("  ", "go depth 1", 0))
        .err()
        .expect("empty");
    assert!(e.to_string().contains("empty"), "{e}");
    // A program that is not a UCI engine: it exits without `uciok`.
    let e = UciEngineAgent::spawn(UciEngineConfig::command_line("true", "go depth 1", 0))
        .err()
        .expect("not uci");
    // Depending on timing the pipe is found closed on writing or on reading.
    let msg = e.to_string();
    assert!(
        msg.contains("exited") || msg.contains("cannot write"),
        "{msg}"
    );
}

/// Fairy-Stockfish's path, or `None` (the test then says so and passes, unless
/// `ENGINE_REQUIRE_ORACLES=1`).
fn fairy() -> Option<String> {
    testkit::fairy_stockfish("match against Fairy-Stockfish not played")
}

#[test]
fn a_uci_spec_sets_options_and_names_one_the_engine_refuses() {
    use players::xiangqi::agent_from_spec;
    let Some(path) = fairy() else { return };
    // Ranks 1–10 are Fairy-Stockfish's: found by its name, so every move reads back legal.
    let spec = format!("uci:cmd={path},option.UCI_Variant=xiangqi,option.Hash=8,go=depth 1");
    let mut fsf = agent_from_spec(&spec).unwrap();
    assert!(fsf.name().starts_with("Fairy-Stockfish"), "{}", fsf.name());
    let mut rnd = RandomAgent::new(4);
    let (_, g) = play_game(&mut *fsf, &mut rnd, 30);
    // Thirty plies: move 16 is next.
    assert!(
        g.to_text().ends_with(" 16") || g.outcome().is_some(),
        "{}",
        g.to_text()
    );
    let e = agent_from_spec(&format!("uci:cmd={path},option.Frobnicate=3"))
        .err()
        .expect("no such option")
        .to_string();
    assert!(
        e.contains("option Frobnicate: refused") && e.contains("No such option: Frobnicate"),
        "{e}"
    );
}

//! `engine gtp` plays whole 9×9 games against `gnugo --level 1`, both driven over pipes; every
//! move is checked against the rules, the two programs' boards are compared at the end, and the
//! game is written as SGF (under the target's tmp dir).
//!
//! When gnugo is missing the test says so and passes, unless `ENGINE_REQUIRE_ORACLES=1` (CI).

use std::path::Path;

use games::go::sgf::{game_record, SgfGame};
use games::go::{GoRules, GoState, Move, MoveCap, Point};
use games::record::write_file;
use games::{Game, Player};
use players::gtp_client::GtpClient;

fn gnugo() -> Option<String> {
    testkit::gnugo("game against GNU Go not played")
}

fn letter(who: Player) -> char {
    match who {
        Player::First => 'b',
        Player::Second => 'w',
    }
}

/// Plays one game, `engine` taking `engine_color`; returns the final state.
fn play_game(gnugo: &str, engine_color: Player, seed: u64) -> GoState {
    let engine_cmd = format!(
        "{} gtp --config {} --agent playout --seed {seed}",
        env!("CARGO_BIN_EXE_engine"),
        concat!(env!("CARGO_MANIFEST_DIR"), "/../../configs/go.yaml"),
    );
    let mut engine = GtpClient::spawn(&engine_cmd).expect("start engine gtp");
    let mut gg = GtpClient::spawn(&format!(
        "{gnugo} --mode gtp --level 1 --chinese-rules --positional-superko"
    ))
    .expect("start gnugo");
    for c in [&mut engine, &mut gg] {
        c.send("boardsize 9").unwrap();
        c.send("clear_board").unwrap();
        c.send("komi 7.5").unwrap();
    }
    let rules = GoRules {
        move_cap: MoveCap::Unlimited,
        ..GoRules::with_size(9)
    };
    let mut state = GoState::new(rules).unwrap();
    // Far more than any real 9×9 game: a safety net, not a rule.
    for ply in 0..1000 {
        if state.outcome().is_some() {
            break;
        }
        let who = state.to_act();
        let (mover, other) = if who == engine_color {
            (&mut engine, &mut gg)
        } else {
            (&mut gg, &mut engine)
        };
        let mv = mover
            .genmove(who, 9)
            .unwrap_or_else(|e| panic!("genmove at ply {ply}: {e}"))
            // A resignation ends the game like passes would: score it as it stands.
            .unwrap_or(Move::Pass);
        state.play(mv).unwrap_or_else(|e| {
            panic!(
                "ply {ply}: {} played illegal {}: {e}",
                letter(who),
                mv.to_gtp()
            )
        });
        other
            .send(&format!("play {} {}", letter(who), mv.to_gtp()))
            .unwrap_or_else(|e| panic!("ply {ply}: the other refused {}: {e}", mv.to_gtp()));
    }
    assert!(state.outcome().is_some(), "the game ended by two passes");
    // Both programs hold the same stones as the referee.
    for client in [&mut engine, &mut gg] {
        for who in [Player::First, Player::Second] {
            let color = if who == Player::First {
                "black"
            } else {
                "white"
            };
            if client.send("known_command list_stones").unwrap() == "true" {
                let listed: Vec<Point> = client
                    .send(&format!("list_stones {color}"))
                    .unwrap()
                    .split_whitespace()
                    .map(|v| match Move::parse_gtp(v, 9).unwrap() {
                        Move::Place(p) => p,
                        Move::Pass => panic!("pass listed as a stone"),
                    })
                    .collect();
                let mut listed = listed;
                listed.sort();
                assert_eq!(listed, state.stones_of(who), "{color} stones");
            }
        }
    }
    // Both programs read the finished game the same way: the same winner once dead stones
    // are removed (the margins may differ by a few points of judgement).
    let ours = engine.send("final_score").unwrap();
    let theirs = gg.send("final_score").unwrap();
    assert_eq!(
        ours.chars().next(),
        theirs.chars().next(),
        "winner by final_score: engine {ours}, gnugo {theirs}"
    );
    state
}

#[test]
fn full_9x9_games_against_gnugo_level_1() {
    let Some(gnugo) = gnugo() else { return };
    for (color, seed) in [(Player::First, 1), (Player::Second, 2)] {
        let state = play_game(&gnugo, color, seed);
        let (black, white) = match color {
            Player::First => ("engine (playout)", "GNU Go level 1"),
            Player::Second => ("GNU Go level 1", "engine (playout)"),
        };
        let sgf = game_record(&state, black, white, None);
        let path =
            Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("engine_vs_gnugo_{seed}.sgf"));
        write_file(&path, &sgf).unwrap();
        eprintln!(
            "{} moves, {}, written to {}",
            state.moves_played(),
            state.score_text(),
            path.display()
        );
        // The written record reads back to the same game.
        let text = std::fs::read_to_string(&path).unwrap();
        let replayed = SgfGame::parse(&text)
            .unwrap()
            .replay(&GoRules::with_size(9), None)
            .unwrap();
        assert_eq!(replayed.to_text(), state.to_text());
        assert!(state.moves_played() > 20, "a real game");
    }
}

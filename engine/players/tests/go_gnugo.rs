//! Agreement with GNU Go (Debian package `gnugo`), a program nobody here wrote: random games are
//! replayed in both programs over GTP and, before and after every move, the legal moves, the
//! stones on the board and the capture counts are compared. GNU Go runs with
//! `--positional-superko --chinese-rules` to match the default rules (suicide illegal).
//!
//! When gnugo is missing the tests say so and pass, unless `ENGINE_REQUIRE_ORACLES=1` (CI),
//! where they fail.

use std::collections::BTreeSet;

use games::go::{GoRules, GoState, KoRule, Move, MoveCap, Point};
use games::{Game, Player};
use players::gtp_client::GtpClient;
use rand::rngs::SmallRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};

/// The gnugo binary, or `None` (after saying why) when the test cannot run here.
fn gnugo() -> Option<String> {
    testkit::gnugo("GNU Go agreement not checked")
}

fn color(who: Player) -> &'static str {
    match who {
        Player::First => "black",
        Player::Second => "white",
    }
}

fn vertex_set(answer: &str, size: usize) -> BTreeSet<Point> {
    answer
        .split_whitespace()
        .map(|v| match Move::parse_gtp(v, size) {
            Ok(Move::Place(p)) => p,
            other => panic!("gnugo vertex {v:?}: {other:?}"),
        })
        .collect()
}

fn our_legal(state: &GoState) -> BTreeSet<Point> {
    let mut legal = Vec::new();
    state.legal_actions(&mut legal);
    legal
        .into_iter()
        .filter_map(|m| match m {
            Move::Place(p) => Some(p),
            Move::Pass => None,
        })
        .collect()
}

/// Compares everything GNU Go can tell about the position with ours.
fn compare(gg: &mut GtpClient, state: &GoState, captures: [usize; 2], context: &str) {
    let n = state.size();
    for who in [Player::First, Player::Second] {
        let theirs = vertex_set(&gg.send(&format!("list_stones {}", color(who))).unwrap(), n);
        let ours: BTreeSet<Point> = state.stones_of(who).into_iter().collect();
        assert_eq!(ours, theirs, "{} stones, {context}", color(who));
        let theirs: usize = gg
            .send(&format!("captures {}", color(who)))
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        assert_eq!(
            captures[who.index()],
            theirs,
            "stones captured by {}, {context}",
            color(who)
        );
    }
    // After two passes our rules list no moves while GNU Go would go on: compare before that.
    if state.outcome().is_none() {
        let who = state.to_act();
        let theirs = vertex_set(&gg.send(&format!("all_legal {}", color(who))).unwrap(), n);
        assert_eq!(our_legal(state), theirs, "legal moves, {context}");
    }
}

/// What one run compared.
#[derive(Default)]
struct Checked {
    moves: usize,
    /// Positions where positional superko forbade a move that simple ko allows.
    superko_positions: usize,
}

/// Plays `games` random games of at most `plies` moves on `size`, in step with GNU Go, under
/// positional superko (the default).
fn agree(gnugo: &str, size: usize, games: usize, plies: usize, seed: u64) -> Checked {
    agree_under(gnugo, KoRule::PositionalSuperko, size, games, plies, seed)
}

/// As [`agree`] under `ko`: GNU Go's own default is simple ko.
fn agree_under(
    gnugo: &str,
    ko: KoRule,
    size: usize,
    games: usize,
    plies: usize,
    seed: u64,
) -> Checked {
    let superko_flag = match ko {
        KoRule::PositionalSuperko => "--positional-superko",
        KoRule::Simple => "",
    };
    let mut gg = GtpClient::spawn(&format!(
        "{gnugo} --mode gtp {superko_flag} --chinese-rules"
    ))
    .expect("start gnugo");
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut checked = Checked::default();
    for game in 0..games {
        gg.send(&format!("boardsize {size}")).unwrap();
        gg.send("clear_board").unwrap();
        let rules = GoRules {
            move_cap: MoveCap::Unlimited,
            ko,
            ..GoRules::with_size(size)
        };
        let mut state = GoState::new(rules.clone()).unwrap();
        // The same game under simple ko, to count the positions where superko mattered.
        let mut simple = GoState::new(GoRules {
            ko: KoRule::Simple,
            ..rules
        })
        .unwrap();
        let mut captures = [0usize; 2];
        let mut record = Vec::new();
        for ply in 0..plies {
            let context = format!("{size}x{size} game {game} after {record:?}");
            compare(&mut gg, &state, captures, &context);
            if state.outcome().is_some() {
                break;
            }
            if our_legal(&simple) != our_legal(&state) {
                checked.superko_positions += 1;
            }
            // An illegal stone is refused by both, and changes nothing.
            let n = state.size();
            let illegal: Vec<Point> = (0..n * n)
                .map(|i| Point::new(i / n, i % n))
                .filter(|&p| !state.is_legal(Move::Place(p)))
                .collect();
            if let Some(&p) = illegal.choose(&mut rng) {
                let r = gg.send(&format!("play {} {}", color(state.to_act()), p.to_gtp()));
                assert!(
                    r.is_err(),
                    "gnugo accepted our illegal {}, {context}",
                    p.to_gtp()
                );
            }
            let mut legal = Vec::new();
            state.legal_actions(&mut legal);
            if legal.is_empty() {
                break;
            }
            // Passes are rare so that games reach captures, kos and cycles.
            let mv = if rng.gen_bool(0.02) {
                Move::Pass
            } else {
                *legal.choose(&mut rng).unwrap()
            };
            let who = state.to_act();
            let opp_before = state.stones_of(who.opponent()).len();
            gg.send(&format!("play {} {}", color(who), mv.to_gtp()))
                .unwrap_or_else(|e| panic!("gnugo refused our legal move {ply}: {e}, {context}"));
            state.play(mv).unwrap();
            simple.play(mv).unwrap();
            captures[who.index()] += opp_before - state.stones_of(who.opponent()).len();
            record.push(mv.to_gtp());
            checked.moves += 1;
        }
        compare(
            &mut gg,
            &state,
            captures,
            &format!("{size}x{size} end of game {game}"),
        );
    }
    checked
}

#[test]
fn random_games_agree_with_gnugo_on_small_boards() {
    let Some(gnugo) = gnugo() else { return };
    let (mut moves, mut superko) = (0, 0);
    for (size, games, plies, seed) in [
        (2, 300, 40, 1),
        (3, 300, 60, 2),
        (4, 150, 80, 3),
        (5, 60, 120, 4),
        (7, 20, 200, 5),
    ] {
        let c = agree(&gnugo, size, games, plies, seed);
        moves += c.moves;
        superko += c.superko_positions;
    }
    assert!(moves > 10_000, "{moves} moves compared");
    eprintln!("{moves} moves compared, superko mattered in {superko} positions");
    // The comparison reached positions where only superko forbids a move.
    assert!(superko > 20, "{superko} positions where superko mattered");
}

#[test]
fn random_games_agree_with_gnugo_under_simple_ko() {
    let Some(gnugo) = gnugo() else { return };
    let mut moves = 0;
    for (size, games, plies, seed) in [(2, 200, 40, 21), (3, 200, 60, 22), (5, 40, 120, 23)] {
        moves += agree_under(&gnugo, KoRule::Simple, size, games, plies, seed).moves;
    }
    assert!(moves > 5_000, "{moves} moves compared");
}

#[test]
fn random_games_agree_with_gnugo_on_9x9() {
    let Some(gnugo) = gnugo() else { return };
    let c = agree(&gnugo, 9, 12, 300, 9);
    assert!(c.moves > 1_000, "{} moves compared", c.moves);
}

#[test]
fn random_games_agree_with_gnugo_on_13x13_and_19x19() {
    let Some(gnugo) = gnugo() else { return };
    let moves = agree(&gnugo, 13, 2, 400, 13).moves + agree(&gnugo, 19, 2, 700, 19).moves;
    assert!(moves > 1_000, "{moves} moves compared");
}

/// Stones GNU Go holds for `who`, sorted as `stones_of` lists them.
fn gnugo_stones(gg: &mut GtpClient, who: Player, size: usize) -> Vec<Point> {
    let mut v: Vec<Point> = vertex_set(
        &gg.send(&format!("list_stones {}", color(who))).unwrap(),
        size,
    )
    .into_iter()
    .collect();
    v.sort();
    v
}

#[test]
fn gnugo_as_an_agent_plays_a_whole_game() {
    use games::Agent;
    use players::go::PlayoutAgent;
    use players::gtp_client::GtpAgent;
    let Some(gnugo) = gnugo() else { return };
    let mut gg = GtpAgent::spawn(&format!(
        "{gnugo} --mode gtp --level 1 --chinese-rules --positional-superko"
    ))
    .unwrap();
    assert!(gg.name().contains("GNU Go"), "{}", gg.name());
    let mut us = PlayoutAgent::new(3);
    let rules = GoRules {
        move_cap: MoveCap::Unlimited,
        ..GoRules::with_size(9)
    };
    // Start from a position with setup stones and a move already played: the agent must be
    // told both.
    let mut state = GoState::from_setup(
        rules,
        &[
            (Point::new(2, 2), Player::First),
            (Point::new(6, 6), Player::First),
        ],
        Player::Second,
    )
    .unwrap();
    state.play(Move::Place(Point::new(4, 4))).unwrap();
    gg.new_game(&state).unwrap();
    us.new_game(&state).unwrap();
    for who in [Player::First, Player::Second] {
        assert_eq!(gnugo_stones(gg.client(), who, 9), state.stones_of(who));
    }
    while state.outcome().is_none() {
        assert!(state.moves_played() < 1000, "game did not end");
        let mv = if state.to_act() == Player::First {
            us.select_action(&state).unwrap()
        } else {
            gg.select_action(&state).unwrap()
        };
        us.observe(&state, mv).unwrap();
        gg.observe(&state, mv).unwrap();
        state.play(mv).unwrap();
    }
    for who in [Player::First, Player::Second] {
        assert_eq!(gnugo_stones(gg.client(), who, 9), state.stones_of(who));
    }
}

/// The long version: hundreds of games on every size. Minutes; run with
/// `cargo test -p games --test go_gnugo -- --ignored`.
#[test]
#[ignore]
fn many_random_games_agree_with_gnugo() {
    let Some(gnugo) = gnugo() else { return };
    let mut superko = 0;
    for (size, games, plies, seed) in [
        (2, 2000, 40, 101),
        (3, 2000, 60, 102),
        (4, 1000, 100, 103),
        (5, 500, 150, 104),
        (6, 200, 200, 105),
        (9, 100, 400, 109),
        (13, 20, 500, 113),
        (19, 10, 800, 119),
    ] {
        superko += agree(&gnugo, size, games, plies, seed).superko_positions;
    }
    assert!(superko > 100, "{superko}");
}

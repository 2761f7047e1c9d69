//! Agreement with Fairy-Stockfish, an engine nobody here wrote: positions from random games are
//! compared divide by divide. Needs the Debian package `fairy-stockfish` (or $FAIRY_STOCKFISH):
//! without it the test says so and passes, except under CI (`CI` set), where it fails.

use std::collections::HashMap;

use games::xiangqi::{fen::parse_fen, perft_divide, Xiangqi};
use games::{random_action, Game};
use players::fairy::{find_fairy_stockfish, FairyStockfish};
use rand::SeedableRng;

fn oracle() -> Option<FairyStockfish> {
    match find_fairy_stockfish() {
        Some(path) => {
            Some(FairyStockfish::spawn(&path).unwrap_or_else(|e| {
                panic!("cannot start fairy-stockfish at {}: {e}", path.display())
            }))
        }
        None if std::env::var_os("CI").is_some() => {
            panic!("fairy-stockfish not found (apt-get install fairy-stockfish, or set FAIRY_STOCKFISH)")
        }
        None => {
            eprintln!(
                "SKIPPED: fairy-stockfish not found; install the Debian package fairy-stockfish \
                 or set FAIRY_STOCKFISH=/path/to/it to run the oracle comparison"
            );
            None
        }
    }
}

/// Positions from random games: every fifth ply of `games` games from the start, and every
/// position in check (evasions are where move generators go wrong).
fn random_positions(games: usize, seed: u64) -> Vec<String> {
    let mut rng = rand::rngs::SmallRng::seed_from_u64(seed);
    let mut out = Vec::new();
    for _ in 0..games {
        let mut g = Xiangqi::start();
        let mut ply = 0;
        while let Some(m) = random_action(&g, &mut rng) {
            g.play(m).unwrap();
            ply += 1;
            if ply % 5 == 0 || g.in_check() {
                out.push(g.to_text());
            }
            if ply > 150 {
                break;
            }
        }
    }
    out
}

fn compare(fsf: &mut FairyStockfish, fen: &str, depth: u32) {
    let (mut pos, _, _) = parse_fen(fen).unwrap();
    let ours: HashMap<_, _> = perft_divide(&mut pos, depth).into_iter().collect();
    let theirs = fsf.perft(fen, depth).unwrap();
    let theirs_map: HashMap<_, _> = theirs.divide.iter().copied().collect();
    for (m, n) in &ours {
        assert_eq!(
            theirs_map.get(m),
            Some(n),
            "{fen}: perft({depth}) below {m}: ours {n}, fairy-stockfish {:?}",
            theirs_map.get(m)
        );
    }
    for m in theirs_map.keys() {
        assert!(
            ours.contains_key(m),
            "{fen}: fairy-stockfish plays {m}, we do not"
        );
    }
    assert_eq!(ours.values().sum::<u64>(), theirs.total, "{fen} total");
}

#[test]
fn divides_agree_with_fairy_stockfish_on_random_games() {
    let Some(mut fsf) = oracle() else { return };
    let positions = random_positions(12, 2024);
    assert!(positions.len() > 100);
    let checks = positions
        .iter()
        .filter(|f| Xiangqi::from_fen(f).unwrap().in_check())
        .count();
    assert!(checks >= 10, "only {checks} positions in check");
    for (i, fen) in positions.iter().enumerate() {
        compare(&mut fsf, fen, if i % 2 == 0 { 3 } else { 2 });
    }
}

#[test]
fn divides_agree_with_fairy_stockfish_on_the_perft_file() {
    let Some(mut fsf) = oracle() else { return };
    for line in include_str!("../../games/tests/data/xiangqi_perft.epd").lines() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let fen = line.split(';').next().unwrap().trim();
        compare(&mut fsf, fen, 2);
    }
}

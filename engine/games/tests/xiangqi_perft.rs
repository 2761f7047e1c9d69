//! Perft against the reference counts in `data/xiangqi_perft.epd` (Fairy-Stockfish's counts),
//! and the generic trait-level perft against the fast one.

use games::xiangqi::{fen::parse_fen, perft, Xiangqi};
use games::Game;

struct Case {
    name: String,
    fen: String,
    counts: Vec<(u32, u64)>,
}

fn cases() -> Vec<Case> {
    let text = include_str!("data/xiangqi_perft.epd");
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let (body, name) = l.split_once('#').unwrap_or((l, ""));
            let mut fields = body.split(';').map(str::trim);
            let fen = fields.next().expect("a FEN").to_string();
            let counts = fields
                .filter(|f| !f.is_empty())
                .map(|f| {
                    let (d, n) = f.split_once(' ').expect("`Dn count`");
                    (
                        d.trim_start_matches('D').parse().expect("depth"),
                        n.parse().expect("count"),
                    )
                })
                .collect();
            Case {
                name: name.trim().to_string(),
                fen,
                counts,
            }
        })
        .collect()
}

fn check(max_count: u64, min_count: u64) -> usize {
    let mut checked = 0;
    for case in cases() {
        let (mut pos, _, _) = parse_fen(&case.fen).unwrap_or_else(|e| panic!("{}: {e}", case.name));
        for &(depth, expected) in &case.counts {
            if expected > max_count || expected < min_count {
                continue;
            }
            assert_eq!(
                perft(&mut pos, depth),
                expected,
                "perft({depth}) of {} ({})",
                case.name,
                case.fen
            );
            checked += 1;
        }
    }
    checked
}

#[test]
fn perft_matches_reference_counts() {
    let checked = check(5_000_000, 0);
    assert!(checked >= 60, "only {checked} counts checked");
}

/// The deep counts, start position depth 5 and 6 included (about two minutes in release):
/// `cargo test --release -p games --test xiangqi_perft -- --ignored`.
#[test]
#[ignore]
fn perft_matches_reference_counts_deep() {
    let checked = check(u64::MAX, 5_000_001);
    assert!(checked >= 6);
}

#[test]
fn trait_perft_agrees_with_fast_perft() {
    for case in cases().iter().take(16) {
        let game = Xiangqi::from_fen(&case.fen).unwrap();
        let (mut pos, _, _) = parse_fen(&case.fen).unwrap();
        for depth in 1..=3 {
            assert_eq!(
                games::perft(&game, depth),
                perft(&mut pos, depth),
                "depth {depth} of {}",
                case.name
            );
        }
    }
}

#[test]
fn divide_sums_to_perft_and_lists_each_legal_move_once() {
    let game = Xiangqi::start();
    let (mut pos, _, _) = parse_fen(&game.to_text()).unwrap();
    let divide = games::xiangqi::perft_divide(&mut pos, 3);
    assert_eq!(divide.len(), 44);
    assert_eq!(divide.iter().map(|&(_, n)| n).sum::<u64>(), 79_666);
    let mut moves: Vec<_> = divide.iter().map(|&(m, _)| m).collect();
    moves.sort_by_key(|m| format!("{m}"));
    moves.dedup();
    assert_eq!(moves.len(), 44);
}

//! The fast Go rules against the naive referee in `common/go_ref.rs`: move by move over random
//! games under every rules variant, and perft counts from `data/go_perft.txt`.

#[path = "common/go_ref.rs"]
mod go_ref;

use games::go::{GoRules, GoState, KoRule, Move, MoveCap, Point};
use games::{perft, Game, Player};
use go_ref::Naive;
use rand::rngs::SmallRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};

fn rules(size: usize, superko: bool, suicide: bool) -> GoRules {
    GoRules {
        ko: if superko {
            KoRule::PositionalSuperko
        } else {
            KoRule::Simple
        },
        allow_suicide: suicide,
        move_cap: MoveCap::Unlimited,
        ..GoRules::with_size(size)
    }
}

fn index(m: Move, size: usize) -> Option<usize> {
    match m {
        Move::Place(p) => Some(p.row as usize * size + p.col as usize),
        Move::Pass => None,
    }
}

fn same_board(s: &GoState, naive: &Naive) -> bool {
    let n = s.size();
    (0..n * n).all(|i| {
        let want = match naive.grid[i] {
            1 => Some(Player::First),
            2 => Some(Player::Second),
            _ => None,
        };
        s.stone_at(Point::new(i / n, i % n)) == want
    })
}

#[test]
fn random_games_agree_with_the_naive_referee() {
    let mut rng = SmallRng::seed_from_u64(11);
    for (size, games) in [(2, 200), (3, 200), (4, 100), (5, 60), (7, 20)] {
        for (superko, suicide) in [(true, false), (false, false), (true, true), (false, true)] {
            for _ in 0..games {
                let mut s = GoState::new(rules(size, superko, suicide)).unwrap();
                let mut naive = Naive::new(size, superko, suicide);
                for _ in 0..4 * size * size {
                    if s.outcome().is_some() {
                        break;
                    }
                    let mut legal = Vec::new();
                    s.legal_actions(&mut legal);
                    let mut points: Vec<usize> =
                        legal.iter().filter_map(|&m| index(m, size)).collect();
                    points.sort();
                    assert_eq!(points, naive.legal(), "legal moves in {}", s.to_text());
                    // Passes are rare, so games reach captures and cycles.
                    let m = if rng.gen_bool(0.05) {
                        Move::Pass
                    } else {
                        *legal.choose(&mut rng).unwrap()
                    };
                    s.play(m).unwrap();
                    naive.play(index(m, size));
                    assert!(same_board(&s, &naive), "board after {m:?}: {}", s.to_text());
                }
            }
        }
    }
}

#[test]
fn perft_counts_from_the_data_file() {
    let data = include_str!("data/go_perft.txt");
    let mut cases = 0;
    for (line_no, line) in data.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let f: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(f.len(), 5, "line {}: {line}", line_no + 1);
        let size: usize = f[0].parse().unwrap();
        let depth: u32 = f[1].parse().unwrap();
        let superko = f[2].starts_with("superko");
        let suicide = f[2].ends_with("+suicide");
        let expected: u64 = f[4].parse().unwrap();
        let mut s = GoState::new(rules(size, superko, suicide)).unwrap();
        let mut naive = Naive::new(size, superko, suicide);
        let mut passes = 0;
        if f[3] != "-" {
            for word in f[3].split(',') {
                let m = s.parse_action(word).unwrap();
                s.play(m).unwrap();
                naive.play(index(m, size));
                passes = if m == Move::Pass { passes + 1 } else { 0 };
            }
        }
        assert_eq!(perft(&s, depth), expected, "line {}: {line}", line_no + 1);
        if expected <= 1_000_000 && size <= 5 {
            assert_eq!(
                naive.perft(depth, passes),
                expected,
                "naive referee, line {}",
                line_no + 1
            );
        }
        cases += 1;
    }
    assert!(cases >= 10);
}

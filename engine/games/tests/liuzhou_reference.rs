//! The fast rules against the independent reference implementation in `common/liuzhou_ref.rs`,
//! position by position over random games, and perft counts from the data file.

#[path = "common/liuzhou_ref.rs"]
mod liuzhou_ref;

use games::liuzhou::{Liuzhou, Rules, START_LFEN};
use games::{Game, Outcome, Player};
use liuzhou_ref::RefState;
use rand::rngs::SmallRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};

fn sorted_legal(s: &Liuzhou) -> Vec<String> {
    let mut v = Vec::new();
    s.legal_actions(&mut v);
    let mut t: Vec<String> = v.iter().map(|&a| s.format_action(a)).collect();
    t.sort();
    t
}

fn result_char(o: Option<Outcome>) -> Option<char> {
    o.map(|o| match o {
        Outcome::Draw => 'd',
        Outcome::Win(Player::First) => 'b',
        Outcome::Win(Player::Second) => 'w',
    })
}

fn compare_random_games(lose_below: u8, games: usize, seed: u64) -> [usize; 6] {
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut phases_seen = [0usize; 6];
    for _ in 0..games {
        let mut fast = Liuzhou::new(Rules { lose_below });
        let mut slow = RefState::from_lfen(START_LFEN, lose_below as u32);
        loop {
            assert_eq!(fast.lfen(), slow.lfen());
            let mut ref_legal = slow.legal();
            ref_legal.sort();
            assert_eq!(
                sorted_legal(&fast),
                ref_legal,
                "legal actions in {}",
                fast.lfen()
            );
            assert_eq!(
                result_char(fast.outcome()),
                slow.result(),
                "outcome in {}",
                fast.lfen()
            );
            phases_seen[fast.phase() as usize] += 1;
            let Some(mv) = ref_legal.choose(&mut rng) else {
                break;
            };
            let a = fast.parse_action(mv).unwrap();
            fast.play(a).unwrap();
            slow.play(mv);
        }
    }
    phases_seen
}

#[test]
fn agrees_with_reference_on_random_games() {
    let seen = compare_random_games(1, 400, 1);
    // Every resting phase must have been exercised.
    assert!(seen.iter().all(|&n| n > 0), "phases seen: {seen:?}");
}

#[test]
fn agrees_with_reference_on_random_games_lose_below_4() {
    let seen = compare_random_games(4, 200, 2);
    assert!(seen.iter().all(|&n| n > 0), "phases seen: {seen:?}");
}

fn perft_cases() -> Vec<(String, u32, u8, u64)> {
    include_str!("data/liuzhou_perft.txt")
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let parts: Vec<&str> = l.split(';').map(str::trim).collect();
            (
                parts[0].to_string(),
                parts[1].parse().unwrap(),
                parts[2].parse().unwrap(),
                parts[3].parse().unwrap(),
            )
        })
        .collect()
}

#[test]
fn perft_matches_data_file() {
    let cases = perft_cases();
    assert!(cases.len() >= 20);
    for (lfen, depth, lose_below, expected) in cases {
        let s = Liuzhou::from_lfen(&lfen, Rules { lose_below }).unwrap();
        assert_eq!(games::perft(&s, depth), expected, "{lfen} depth {depth}");
    }
}

#[test]
fn perft_data_agrees_with_reference_at_low_depth() {
    for (lfen, depth, lose_below, _) in perft_cases() {
        let d = depth.min(2);
        let s = Liuzhou::from_lfen(&lfen, Rules { lose_below }).unwrap();
        let r = RefState::from_lfen(&lfen, lose_below as u32);
        assert_eq!(games::perft(&s, d), r.perft(d), "{lfen} depth {d}");
    }
}

#[test]
fn start_position_counts_by_hand() {
    // No shape can form before Black's fourth stone (ply 7): every ply is a placement on one of
    // the remaining empty points.
    let s = Liuzhou::default();
    let mut expected = 1u64;
    for d in 0..=5u32 {
        assert_eq!(games::perft(&s, d), expected, "depth {d}");
        expected *= 36 - d as u64;
    }
}

/// Regenerates the data file's counts with the reference implementation:
/// `cargo test -p games --test liuzhou_reference -- --ignored regenerate --nocapture`.
#[test]
#[ignore]
fn regenerate_perft_data() {
    let mut rng = SmallRng::seed_from_u64(2026);
    let mut lines = Vec::new();
    let names = ["place", "mark", "forced", "move", "capture", "counter"];
    for lose_below in [1u8, 4] {
        // Up to four positions per resting phase and variant.
        let mut counts = [0usize; 6];
        for _ in 0..3000 {
            let mut s = RefState::from_lfen(START_LFEN, lose_below as u32);
            loop {
                let legal = s.legal();
                let Some(mv) = legal.choose(&mut rng) else {
                    break;
                };
                s.play(mv);
                let i = names.iter().position(|p| *p == s.phase).unwrap();
                if !s.over && counts[i] < 4 && rng.gen_bool(0.05) {
                    counts[i] += 1;
                    let depth = if s.phase == "place" && s.move_count < 20 {
                        3
                    } else {
                        4
                    };
                    lines.push(format!(
                        "{}; {depth}; {lose_below}; {}",
                        s.lfen(),
                        s.perft(depth)
                    ));
                }
            }
        }
    }
    for l in &lines {
        println!("{l}");
    }
}

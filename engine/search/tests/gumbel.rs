//! The Gumbel root: sequential halving spends its budget exactly, by the schedule, in batches
//! and across moves; with a perfect value network the choice is optimal; the improved policy
//! is a distribution over every legal action; turns that continue are read from the right side.

mod common;

use std::collections::HashMap;

use common::{action_value, solve, BonusNim, Mnk, Oracle};
use eval::fake::FakeEvaluator;
use eval::Evaluator;
use games::liuzhou::{Liuzhou, Rules};
use games::{Game, Player};
use search::gumbel::Schedule;
use search::Playable;
use search::{LeafBatch, Limit, RunOptions, Search, SearchConfig, SearchKind};

fn gumbel(m: u32) -> SearchConfig {
    SearchConfig {
        search: SearchKind::Gumbel,
        gumbel_m: m,
        max_nodes: 1 << 20,
        ..SearchConfig::default()
    }
}

/// Each root child's visits, in the tree's order.
fn child_visits<G: Playable>(s: &Search<G>) -> Vec<u64> {
    s.root_children()
        .iter()
        .map(|c| u64::from(c.visits))
        .collect()
}

/// Checks that the visits a search added to the root's children (`after − before`) are the
/// schedule's for `simulations` among `m` actions, largest first.
fn follows_schedule(before: &[u64], after: &[u64], m: u32, simulations: u64, what: &str) {
    let mut added: Vec<u64> = after
        .iter()
        .zip(before.iter().chain(std::iter::repeat(&0)))
        .map(|(a, b)| a - b)
        .collect();
    added.sort_unstable_by(|a, b| b.cmp(a));
    let m = m.min(after.len() as u32);
    let mut expected = Schedule::new(m, simulations).visits_by_rank(simulations);
    expected.resize(after.len(), 0);
    assert_eq!(added, expected, "{what}");
}

/// Searches `visits` playouts the way self-play does: `gather` up to `per_call` leaves, apply,
/// repeat until the root has them.
fn gathered<G: Playable>(
    s: &mut Search<G>,
    evaluator: &dyn Evaluator<G>,
    visits: u64,
    per_call: usize,
) {
    s.begin_search(Some(visits));
    let target = u64::from(s.root_visits()) + visits;
    let stats = search::BatchStats::default();
    let mut batch = LeafBatch::new();
    let mut calls = 0;
    loop {
        let root = s.tree().stats(s.tree().root());
        let missing = target.saturating_sub(u64::from(root.visits + root.in_flight));
        if missing == 0 {
            break;
        }
        batch.clear();
        s.gather(&mut batch, 0, per_call.min(missing as usize));
        batch.evaluate(evaluator, &stats).unwrap();
        batch.apply(|_| &*s);
        calls += 1;
        assert!(calls < 10 * visits + 10, "the search made no progress");
    }
    assert_eq!(u64::from(s.root_visits()), target);
}

#[test]
fn sequential_halving_spends_exactly_the_budget() {
    let start = Liuzhou::default(); // 36 placements
    for (visits, leaves) in [(17, 1), (50, 8), (200, 1), (200, 16), (333, 64)] {
        for noise in [0.0, 1.0] {
            let fake = FakeEvaluator::new(64).seeded(visits);
            let mut s = Search::new(start.clone(), gumbel(16), visits);
            s.set_gumbel_noise(noise);
            let r = s
                .run(&fake, Limit::visits(visits), RunOptions::single(leaves))
                .unwrap();
            let what = format!("{visits} visits, {leaves} leaves per call, noise {noise}");
            assert_eq!(r.playouts, visits, "{what}");
            assert_eq!(u64::from(s.root_visits()), visits, "{what}");
            // The root's own evaluation was the first playout.
            assert_eq!(s.planned_simulations(), Some(visits - 1), "{what}");
            follows_schedule(&[], &child_visits(&s), 16, visits - 1, &what);
        }
    }
}

#[test]
fn halving_holds_in_batches_across_moves() {
    // Self-play's way: gather, evaluate, apply; the tree kept from move to move, so the
    // children start with visits that the schedule does not count.
    let fake = FakeEvaluator::new(64).seeded(5);
    let mut s = Search::new(Liuzhou::default(), gumbel(8), 5);
    s.set_gumbel_noise(1.0);
    let mut rng = <rand::rngs::SmallRng as rand::SeedableRng>::seed_from_u64(5);
    for (turn, per_call) in [(0, 1usize), (1, 4), (2, 16), (3, 64), (4, 7)] {
        let fresh = !s.tree().is_expanded(s.tree().root());
        let before = child_visits(&s);
        gathered(&mut s, &fake, 120, per_call);
        let simulations = if fresh { 119 } else { 120 };
        assert_eq!(s.planned_simulations(), Some(simulations), "turn {turn}");
        follows_schedule(
            &before,
            &child_visits(&s),
            8,
            simulations,
            &format!("turn {turn}, {per_call} leaves per call"),
        );
        let a = s.choose_action(1.0, &mut rng).unwrap();
        s.advance(a).unwrap();
    }
}

#[test]
fn every_action_is_visited_when_the_budget_allows() {
    // Nine actions, m = 16: a budget of the root's evaluation plus nine visits each of them.
    for visits in [10, 11, 30, 100] {
        let fake = FakeEvaluator::new(8).seeded(visits);
        let mut s = Search::new(Mnk::tic_tac_toe(), gumbel(16), visits);
        s.run(&fake, Limit::visits(visits), RunOptions::single(4))
            .unwrap();
        let v = child_visits(&s);
        assert_eq!(v.len(), 9);
        assert!(v.iter().all(|&n| n > 0), "{visits} visits: {v:?}");
    }
    // 36 placements, m = 64: all considered, all visited.
    let fake = FakeEvaluator::new(64).seeded(1);
    let mut s = Search::new(Liuzhou::default(), gumbel(64), 1);
    s.run(&fake, Limit::visits(37), RunOptions::single(64))
        .unwrap();
    assert_eq!(child_visits(&s), vec![1; 36]);
}

#[test]
fn a_perfect_value_network_leads_to_optimal_actions() {
    let mut memo = HashMap::new();
    let oracle = Oracle::new(16);
    let positions = [
        ("xx. oo. ...", Player::First),
        ("xo. .o. ..x", Player::First),
        ("x.. .o. ..x", Player::Second),
        ("x.. ... ...", Player::Second),
        ("xo. ... ...", Player::First),
        ("x.o ... ...", Player::First),
        ("xo. .x. ..o", Player::First),
    ];
    let mut checked = 0;
    for (k, (rows, side)) in positions.into_iter().enumerate() {
        let p = Mnk::from_rows(3, 3, 3, rows, side);
        let best = solve(&p, &mut memo);
        for (visits, noise) in [(12, 0.0), (32, 0.0), (32, 1.0), (100, 1.0)] {
            let mut s = Search::new(p.clone(), gumbel(16), k as u64);
            s.set_gumbel_noise(noise);
            s.run(&oracle, Limit::visits(visits), RunOptions::single(8))
                .unwrap();
            let chosen = s.best_action().unwrap();
            assert_eq!(
                action_value(&p, chosen, side, &mut memo),
                best,
                "{} ({visits} visits, noise {noise}): chose {chosen}",
                p.to_text()
            );
            checked += 1;
        }
    }
    // Take-away with bonus turns: taking two keeps the move.
    for pile in 2..=14 {
        let p = BonusNim {
            pile,
            to_act: Player::First,
        };
        let best = solve(&p, &mut memo);
        for visits in [4, 16] {
            let mut s = Search::new(p.clone(), gumbel(16), u64::from(pile));
            s.run(&oracle, Limit::visits(visits), RunOptions::single(1))
                .unwrap();
            let chosen = s.best_action().unwrap();
            assert_eq!(
                action_value(&p, chosen, Player::First, &mut memo),
                best,
                "pile {pile}, {visits} visits: chose take {chosen}"
            );
            checked += 1;
        }
    }
    assert_eq!(checked, 7 * 4 + 13 * 2);
}

#[test]
fn bonus_turns_are_read_by_each_nodes_player() {
    // No values at all: only the exact results of finished games steer the search, through
    // lines where a player takes two and moves again.
    let mut memo = HashMap::new();
    let mut checked = 0;
    for pile in 3..=13 {
        let p = BonusNim {
            pile,
            to_act: Player::First,
        };
        let mut actions = Vec::new();
        p.legal_actions(&mut actions);
        let values: Vec<i8> = actions
            .iter()
            .map(|&a| action_value(&p, a, Player::First, &mut memo))
            .collect();
        if !values.contains(&1) || values.iter().all(|&v| v == 1) {
            continue;
        }
        let fake = FakeEvaluator::new(1);
        let mut s = Search::new(p.clone(), gumbel(16), u64::from(pile));
        s.run(&fake, Limit::visits(3000), RunOptions::single(1))
            .unwrap();
        let chosen = s.best_action().unwrap();
        assert_eq!(
            action_value(&p, chosen, Player::First, &mut memo),
            1,
            "pile {pile}: chose take {chosen}; values per take {values:?}"
        );
        checked += 1;
    }
    assert!(checked >= 5, "{checked} piles checked");
}

#[test]
fn liuzhou_turns_that_continue_are_seen_through() {
    // Black owes two captures and White has two stones: both captures are Black's in a row.
    let state =
        Liuzhou::from_lfen("W1W3/6/6/6/6/BBBBBB b capture 2 61 0", Rules::default()).unwrap();
    let fake = FakeEvaluator::new(8);
    let mut s = Search::new(state, gumbel(16), 2);
    s.run(&fake, Limit::visits(200), RunOptions::single(4))
        .unwrap();
    assert_eq!(s.root_value(), 1.0, "proven won");
    let chosen = s.best_action().unwrap();
    let c = s
        .root_children()
        .into_iter()
        .find(|c| c.action == chosen)
        .unwrap();
    assert!(c.q > 0.95, "the chosen capture is valued {}", c.q);
    // A step that forms a line, then two captures: three Black actions end the game.
    let state = Liuzhou::from_lfen("W1W3/6/6/6/5B/BBBBB1 b move 0 60 3", Rules::default()).unwrap();
    let mut s = Search::new(state.clone(), gumbel(64), 1);
    s.run(&fake, Limit::visits(1500), RunOptions::single(4))
        .unwrap();
    assert_eq!(state.format_action(s.best_action().unwrap()), "f2-f1");
    assert!(s.root_value() > 0.9, "root value {}", s.root_value());
}

#[test]
fn the_improved_policy_covers_every_action_and_sums_to_one() {
    let fake = FakeEvaluator::new(16).seeded(11);
    let mut s = Search::new(Liuzhou::default(), gumbel(16), 11);
    assert!(
        s.improved_policy().is_empty(),
        "nothing before the root is expanded"
    );
    s.run(&fake, Limit::visits(100), RunOptions::single(16))
        .unwrap();
    let p = s.improved_policy();
    assert_eq!(p.len(), 36);
    let sum: f32 = p.iter().map(|&(_, x)| x).sum();
    assert!((sum - 1.0).abs() < 1e-5, "sum {sum}");
    assert!(p.iter().all(|&(_, x)| (0.0..=1.0).contains(&x)));
    // The greedy choice is the improved policy's favourite among the most visited.
    let most = s.root_children().iter().map(|c| c.visits).max().unwrap();
    let best = s.best_action().unwrap();
    let favourite = p
        .iter()
        .filter(|(a, _)| {
            s.root_children()
                .iter()
                .any(|c| c.action == *a && c.visits == most)
        })
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .unwrap()
        .0;
    assert_eq!(best, favourite);
    // Analysis lists the choice first.
    assert_eq!(s.candidates()[0].action, best);
}

#[test]
fn two_threads_share_a_gumbel_root() {
    let fake = FakeEvaluator::new(32).seeded(3);
    for threads in [2, 3] {
        let mut s = Search::new(Liuzhou::default(), gumbel(16), 3);
        let options = RunOptions {
            threads,
            leaves_per_thread: 8,
            combine: false,
            ..RunOptions::default()
        };
        let r = s.run(&fake, Limit::visits(600), options).unwrap();
        assert_eq!(r.playouts, 600);
        assert_eq!(s.root_visits(), 600);
        let children: u64 = child_visits(&s).iter().sum();
        assert_eq!(children, 599);
        let in_flight: u32 = (0..s.tree().len() as u32)
            .map(|i| s.tree().stats(i).in_flight)
            .sum();
        assert_eq!(in_flight, 0);
        assert!(s.best_action().is_some());
    }
}

#[test]
fn puct_stays_the_default() {
    assert_eq!(SearchConfig::default().search, SearchKind::Puct);
    let fake = FakeEvaluator::new(1).seeded(2);
    let mut s = Search::new(Liuzhou::default(), SearchConfig::default(), 2);
    s.run(&fake, Limit::visits(50), RunOptions::single(1))
        .unwrap();
    assert_eq!(s.planned_simulations(), None);
}

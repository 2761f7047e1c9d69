//! Deterministic single-thread search on small games, and the tree's bookkeeping.

mod common;

use std::collections::HashMap;
use std::time::Duration;

use common::{action_value, solve, BonusNim, Mnk};
use eval::fake::FakeEvaluator;
use games::{Game, Outcome, Player};
use search::Playable;
use search::{Limit, RunOptions, Search, SearchConfig, Tactics};

fn config() -> SearchConfig {
    SearchConfig {
        max_nodes: 1 << 20,
        ..SearchConfig::default()
    }
}

/// Runs `visits` single-thread playouts (one leaf at a time) and returns the search.
fn searched<G: Playable>(state: G, visits: u64, seed: u64) -> Search<G> {
    let fake = FakeEvaluator::new(1).seeded(seed);
    let mut s = Search::new(state, config(), seed);
    let r = s
        .run(&fake, Limit::visits(visits), RunOptions::single(1))
        .unwrap();
    assert_eq!(r.playouts, visits);
    s
}

#[test]
fn takes_an_immediate_win_and_blocks_a_threat() {
    // x to act wins at 2 (top row).
    let win = Mnk::from_rows(3, 3, 3, "xx. oo. ...", Player::First);
    assert_eq!(searched(win, 400, 1).best_action(), Some(2));
    // x to act must block o's column at 7 (o threatens 1-4-7); x has no threat of its own.
    let block = Mnk::from_rows(3, 3, 3, "xo. .o. ..x", Player::First);
    assert_eq!(searched(block, 2000, 2).best_action(), Some(7));
}

/// Runs `visits` single-thread playouts with one-move wins looked for at every expansion.
fn searched_decisive<G: Playable>(state: G, visits: u64) -> Search<G> {
    let fake = FakeEvaluator::new(1).seeded(5);
    let config = SearchConfig {
        decisive: true,
        ..config()
    };
    let mut s = Search::new(state, config, 5);
    s.run(&fake, Limit::visits(visits), RunOptions::single(1))
        .unwrap();
    s
}

#[test]
fn decisive_search_sees_one_move_wins_and_losses_at_once() {
    // The root's expansion proves it won: one playout finds the win, whatever the priors.
    let win = Mnk::from_rows(3, 3, 3, "xx. oo. ...", Player::First);
    let s = searched_decisive(win, 1);
    assert_eq!(s.best_action(), Some(2));
    assert_eq!(
        s.proven_result().map(|(o, _)| o),
        Some(Outcome::Win(Player::First))
    );
    // Each reply but the block at 7 lets o win at once: expanding it proves it lost, and no
    // visit goes to it again.
    let block = Mnk::from_rows(3, 3, 3, "xo. .o. ..x", Player::First);
    let s = searched_decisive(block, 40);
    assert_eq!(s.best_action(), Some(7));
    let lost: Vec<_> = s
        .candidates()
        .into_iter()
        .filter(|c| c.proven == Some(Outcome::Win(Player::Second)))
        .map(|c| c.action)
        .collect();
    assert_eq!(
        lost.len(),
        4,
        "every move but the block is proven lost: {lost:?}"
    );
}

#[test]
fn the_capture_prior_moves_prior_mass_to_captures_by_their_gain() {
    use games::xiangqi::Xiangqi;
    // Red's rook can take the pawn on a6 (one capture; the pawn shields the rook on a9).
    let state = Xiangqi::from_fen("r2k5/9/9/p8/9/9/9/9/9/R3K4 w - - 0 1").unwrap();
    let mut actions = Vec::new();
    state.legal_actions(&mut actions);
    let total: f32 = actions.iter().map(|&a| state.capture_gain(a)).sum();
    assert!(total > 0.0, "the position has a capture");
    let uniform = 1.0 / actions.len() as f32;
    let eps = 0.5;
    let config = SearchConfig {
        capture_prior: eps,
        ..config()
    };
    let mut s = Search::new(state.clone(), config, 1);
    s.run(
        &FakeEvaluator::new(1),
        Limit::visits(1),
        RunOptions::single(1),
    )
    .unwrap();
    let candidates = s.candidates();
    assert_eq!(candidates.len(), actions.len());
    let sum: f32 = candidates.iter().map(|c| c.prior).sum();
    assert!((sum - 1.0).abs() < 1e-4, "still a distribution: {sum}");
    for c in &candidates {
        let want = (1.0 - eps) * uniform + eps * state.capture_gain(c.action) / total;
        assert!(
            (c.prior - want).abs() < 1e-5,
            "{:?}: {} ≠ {want}",
            c.action,
            c.prior
        );
    }
}

#[test]
fn finds_forced_wins_in_tic_tac_toe() {
    // Positions where the player to act can force a win but not every action does: the
    // search's choice must be one of the winning actions.
    let mut memo = HashMap::new();
    let positions = [
        ("x.. .o. ..x", Player::Second),
        ("x.. ... ...", Player::Second),
        ("xo. ... ...", Player::First),
        ("x.o ... ...", Player::First),
        ("xo. .x. ..o", Player::First),
    ];
    let mut checked = 0;
    for (rows, side) in positions {
        let p = Mnk::from_rows(3, 3, 3, rows, side);
        let best = solve(&p, &mut memo);
        let s = searched(p.clone(), 20_000, 3);
        let chosen = s.best_action().unwrap();
        assert_eq!(
            action_value(&p, chosen, side, &mut memo),
            best,
            "{}: chose {chosen}, which is worse than the best value {best}",
            p.to_text()
        );
        checked += usize::from(best == 1);
    }
    assert!(
        checked >= 2,
        "at least two of the positions are forced wins"
    );
}

#[test]
fn double_actions_are_backed_up_by_each_nodes_player() {
    // In BonusNim taking 2 keeps the turn: a search that flipped the value every ply would
    // misjudge these lines. Every pile where some action wins but not all: the search must pick
    // a winning one.
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
        // A value-free evaluator: only the exact terminal values steer the search.
        let fake = FakeEvaluator::new(1);
        let mut s = Search::new(p.clone(), config(), u64::from(pile));
        s.run(&fake, Limit::visits(20_000), RunOptions::single(1))
            .unwrap();
        let chosen = s.best_action().unwrap();
        assert_eq!(
            action_value(&p, chosen, Player::First, &mut memo),
            1,
            "pile {pile}: chose take {chosen}; values per take {values:?}"
        );
        // The root value reflects the win.
        assert!(
            s.root_value() > 0.3,
            "pile {pile}: root value {}",
            s.root_value()
        );
        checked += 1;
    }
    assert!(
        checked >= 5,
        "only {checked} piles had a unique kind of winning move"
    );
}

#[test]
fn visit_counts_add_up() {
    let visits = 5000;
    let s = searched(Mnk::new(4, 3, 3), visits, 9);
    let t = s.tree();
    let root = t.root();
    assert_eq!(u64::from(s.root_visits()), visits);
    let children: u64 = t.children(root).map(|c| u64::from(t.stats(c).visits)).sum();
    // The first playout evaluated the root itself; each later one went through a child.
    assert_eq!(children, visits - 1);
    let dist = s.visit_distribution();
    let total: f32 = dist.iter().map(|(_, p)| p).sum();
    assert!((total - 1.0).abs() < 1e-5);
}

#[test]
fn a_single_legal_action_is_chosen_and_counted() {
    let p = Mnk::from_rows(3, 3, 3, "xox oxo ox.", Player::First);
    let mut actions = Vec::new();
    p.legal_actions(&mut actions);
    assert_eq!(actions, [8]);
    let s = searched(p, 50, 4);
    assert_eq!(s.best_action(), Some(8));
    let children = s.root_children();
    assert_eq!(children.len(), 1);
    assert_eq!(children[0].visits, 49);
    // Playing 8 wins for x (the diagonal 0-4-8): every visit after the first is an exact win.
    assert!((children[0].q - 1.0).abs() < 1e-9);
}

#[test]
fn the_search_is_reproducible() {
    let a = searched(Mnk::new(4, 4, 3), 3000, 11).root_children();
    let b = searched(Mnk::new(4, 4, 3), 3000, 11).root_children();
    assert_eq!(a, b);
}

#[test]
fn tree_reuse_keeps_the_chosen_subtree() {
    let mut s = searched(Mnk::new(4, 3, 3), 3000, 5);
    let best = s.best_action().unwrap();
    let kept = s
        .root_children()
        .iter()
        .find(|c| c.action == best)
        .unwrap()
        .visits;
    s.advance(best).unwrap();
    assert_eq!(s.root_visits(), kept);
    let t = s.tree();
    let children: u32 = t.children(t.root()).map(|c| t.stats(c).visits).sum();
    assert_eq!(children, kept - 1);
    // And the search continues from there.
    let fake = FakeEvaluator::new(1).seeded(5);
    s.run(&fake, Limit::visits(500), RunOptions::single(1))
        .unwrap();
    assert_eq!(s.root_visits(), kept + 500);
    // An action the tree never expanded starts a fresh tree from the right position.
    let mut fresh = Search::new(Mnk::new(4, 3, 3), config(), 1);
    fresh.advance(3).unwrap();
    assert_eq!(fresh.root_visits(), 0);
    assert_eq!(fresh.state().to_act(), Player::Second);
    assert!(fresh.advance(3).is_err(), "the point is taken");
}

#[test]
fn root_noise_changes_priors_but_keeps_a_distribution() {
    let fake = FakeEvaluator::new(1);
    let cfg = config().with_noise(0.3, 0.25);
    let mut s = Search::new(Mnk::new(4, 4, 3), cfg, 8);
    s.run(&fake, Limit::visits(100), RunOptions::single(1))
        .unwrap();
    let priors: Vec<f32> = s.root_children().iter().map(|c| c.prior).collect();
    let sum: f32 = priors.iter().sum();
    assert!((sum - 1.0).abs() < 1e-4);
    // Uniform priors plus noise are no longer uniform.
    assert!(priors.iter().any(|&p| (p - 1.0 / 16.0).abs() > 1e-3));
}

#[test]
fn root_noise_can_be_turned_off_for_the_roots_to_come() {
    let fake = FakeEvaluator::new(1);
    let uniform = |s: &Search<Mnk>| {
        let priors: Vec<f32> = s.root_children().iter().map(|c| c.prior).collect();
        let n = priors.len() as f32;
        priors.iter().all(|&p| (p - 1.0 / n).abs() < 1e-6)
    };
    let mut s = Search::new(Mnk::new(4, 4, 3), config().with_noise(0.3, 0.25), 8);
    // Off: a fresh root and a reused one keep the network's priors.
    s.set_root_noise(false);
    s.run(&fake, Limit::visits(400), RunOptions::single(1))
        .unwrap();
    assert!(uniform(&s));
    let a = s.best_action().unwrap();
    s.advance(a).unwrap();
    assert!(s.root_visits() > 0, "the subtree is reused");
    assert!(uniform(&s));
    // On again: the next reused root is noised.
    s.run(&fake, Limit::visits(400), RunOptions::single(1))
        .unwrap();
    s.set_root_noise(true);
    let a = s.best_action().unwrap();
    s.advance(a).unwrap();
    assert!(s.root_visits() > 0);
    assert!(!uniform(&s));
}

/// The network's prior at the root is the evaluator's (uniform for the fake) however the root
/// got its noise: at its expansion, or mixed into a reused subtree's root.
#[test]
fn the_root_network_prior_is_the_priors_before_noise() {
    let fake = FakeEvaluator::new(1);
    let uniform = |prior: &[(u8, f32)], n: usize| {
        prior.len() == n
            && prior
                .iter()
                .all(|&(_, p)| (p - 1.0 / n as f32).abs() < 1e-6)
    };
    let mut s = Search::new(Mnk::new(4, 4, 3), config().with_noise(0.3, 0.25), 8);
    s.run(&fake, Limit::visits(400), RunOptions::single(1))
        .unwrap();
    let noised: Vec<f32> = s.root_children().iter().map(|c| c.prior).collect();
    assert!(noised.iter().any(|&p| (p - 1.0 / 16.0).abs() > 1e-3));
    assert!(uniform(&s.root_network_prior(), 16));
    let a = s.best_action().unwrap();
    s.advance(a).unwrap();
    assert!(s.root_visits() > 0, "the subtree is reused");
    assert!(s
        .root_children()
        .iter()
        .any(|c| (c.prior - 1.0 / 15.0).abs() > 1e-3));
    assert!(uniform(&s.root_network_prior(), 15));
}

#[test]
fn temperature_samples_in_proportion_to_visits() {
    use rand::SeedableRng;
    let s = searched(Mnk::new(3, 3, 3), 2000, 6);
    let mut rng = rand::rngs::SmallRng::seed_from_u64(1);
    let children = s.root_children();
    let mut counts: HashMap<u8, u32> = HashMap::new();
    let draws = 20_000;
    for _ in 0..draws {
        *counts
            .entry(s.choose_action(1.0, &mut rng).unwrap())
            .or_default() += 1;
    }
    let total: u32 = children.iter().map(|c| c.visits).sum();
    for c in &children {
        let expected = f64::from(c.visits) / f64::from(total);
        let got = f64::from(counts.get(&c.action).copied().unwrap_or(0)) / f64::from(draws);
        assert!(
            (got - expected).abs() < 0.02,
            "action {}: {got} vs {expected}",
            c.action
        );
    }
    assert_eq!(s.choose_action(0.0, &mut rng), s.best_action());
}

#[test]
fn the_cache_answers_transpositions() {
    let fake = FakeEvaluator::new(1).seeded(3);
    let mut s = Search::new(Mnk::new(4, 3, 3), config(), 3);
    let r = s
        .run(&fake, Limit::visits(5000), RunOptions::single(1))
        .unwrap();
    // Move orders reach the same positions: some leaves come from the cache.
    assert!(r.cache_hits > 0);
    assert_eq!(r.playouts, 5000);
}

#[test]
fn a_finished_game_is_refused() {
    let over = Mnk::from_rows(3, 3, 3, "xxx oo. ...", Player::Second);
    let fake = FakeEvaluator::new(1);
    let mut s = Search::new(over, config(), 0);
    assert!(matches!(
        s.run(&fake, Limit::visits(10), RunOptions::single(1)),
        Err(search::SearchError::GameOver)
    ));
}

#[test]
fn many_trees_fill_one_batch() {
    use search::{batched_round, BatchStats, LeafBatch};
    // Sixteen games, one batch of 32 for all: as self-play runs.
    let fake = FakeEvaluator::new(32).seeded(2);
    let mut searches: Vec<Search<Mnk>> = (0..16u8)
        .map(|i| {
            let mut g = Mnk::new(4, 4, 4);
            g.play_unchecked(i);
            Search::new(g, config(), u64::from(i))
        })
        .collect();
    let mut batch = LeafBatch::new();
    let stats = BatchStats::default();
    let target = 400;
    loop {
        let active: Vec<&Search<Mnk>> = searches
            .iter()
            .filter(|s| s.root_visits() < target)
            .collect();
        if active.is_empty() {
            break;
        }
        batched_round(&active, &mut batch, &fake, 4, &stats).unwrap();
    }
    let report = stats.report();
    for s in &searches {
        let t = s.tree();
        let children: u32 = t.children(t.root()).map(|c| t.stats(c).visits).sum();
        assert!(s.root_visits() >= target);
        assert_eq!(children, s.root_visits() - 1);
        assert_eq!(t.stats(t.root()).in_flight, 0);
    }
    // Each batch mixes trees: most batches are full.
    assert!(report.fill() > 0.8, "fill {}", report.fill());
    assert_eq!(report.capacity, 32 * report.batches);
    // The games go on: the chosen child's subtree is kept.
    let s = &mut searches[0];
    let best = s.best_action().unwrap();
    s.advance(best).unwrap();
    assert!(s.root_visits() > 0);
}

/// Every node the solver marked proven, under `node` (whose state is `state`), has exactly
/// the result exhaustive search gives it. Returns how many were checked.
fn check_proofs<G: Playable>(
    t: &search::tree::Tree<G::Action>,
    node: u32,
    state: &G,
    memo: &mut HashMap<u64, i8>,
) -> usize {
    let mut checked = 0;
    if let Some(o) = t.proven(node) {
        assert_eq!(
            o.value_for(state.to_act()) as i8,
            solve(state, memo),
            "proof at {}",
            state.to_text()
        );
        checked += 1;
    }
    for c in t.children(node) {
        let mut next = state.clone();
        next.play_unchecked(t.action(c));
        checked += check_proofs(t, c, &next, memo);
    }
    checked
}

#[test]
fn every_proof_of_the_solver_is_exact_on_one_thread_and_two() {
    // (position, visits, whether the search should settle the root itself: a draw needs every
    // line of its proof tree expanded, more than these searches make for the full boards).
    let starts = [
        (Mnk::tic_tac_toe(), 100_000, false),
        (Mnk::new(4, 3, 3), 50_000, false),
        (
            Mnk::from_rows(3, 3, 3, "x.x .o. x.o", Player::Second),
            2_000,
            true,
        ),
        (
            Mnk::from_rows(3, 3, 3, "xo. .x. ..o", Player::First),
            5_000,
            true,
        ),
        (
            Mnk::from_rows(3, 3, 3, "x.. .o. ..x", Player::Second),
            20_000,
            true,
        ),
    ];
    for threads in [1, 2] {
        let run = RunOptions {
            threads,
            ..RunOptions::single(4)
        };
        for (start, visits, settled) in &starts {
            // One table per board: the hash does not tell board sizes apart.
            let mut memo = HashMap::new();
            let fake = FakeEvaluator::new(4).seeded(5);
            let mut s = Search::new(start.clone(), config(), 7);
            s.run(&fake, Limit::visits(*visits), run).unwrap();
            let t = s.tree();
            let checked = check_proofs(t, t.root(), start, &mut memo);
            assert!(checked > 0, "{}: nothing proven", start.to_text());
            if *settled {
                let exact = solve(start, &mut memo);
                assert_eq!(s.root_value(), f32::from(exact), "{}", start.to_text());
                let chosen = s.best_action().unwrap();
                assert_eq!(
                    action_value(start, chosen, start.to_act(), &mut memo),
                    exact
                );
            }
        }
    }
    // O is lost in two actions whatever it does: the proof's line is the longest defence,
    // and the principal variation follows it to the game's end.
    let lost = Mnk::from_rows(3, 3, 3, "x.x .o. x.o", Player::Second);
    let s = searched(lost.clone(), 2_000, 1);
    assert_eq!(s.proven_result(), Some((Outcome::Win(Player::First), 2)));
    let pv = s.principal_variation(s.best_action().unwrap());
    let mut end = lost;
    for &a in &pv {
        end.play(a).unwrap();
    }
    assert_eq!(
        (pv.len(), end.outcome()),
        (2, Some(Outcome::Win(Player::First)))
    );
    // Turns that span several actions: BonusNim's take-2 keeps the turn.
    let mut memo = HashMap::new();
    for pile in 3..=13 {
        let p = BonusNim {
            pile,
            to_act: Player::First,
        };
        let s = searched(p.clone(), 5_000, u64::from(pile));
        let t = s.tree();
        check_proofs(t, t.root(), &p, &mut memo);
        assert_eq!(
            s.root_value(),
            f32::from(solve(&p, &mut memo)),
            "pile {pile}"
        );
    }
}

#[test]
fn a_timed_search_ends_once_the_root_is_proven() {
    // X wins at once (the middle column or the diagonal): a proof in a few playouts.
    let start = Mnk::from_rows(3, 3, 3, "x.x .o. x.o", Player::First);
    let fake = FakeEvaluator::new(4).seeded(5);
    let mut s = Search::new(start.clone(), config(), 7);
    let report = s
        .run(
            &fake,
            Limit::time(Duration::from_secs(60)),
            RunOptions::single(4),
        )
        .unwrap();
    assert!(
        report.elapsed < Duration::from_secs(30),
        "{:?}",
        report.elapsed
    );
    assert_eq!(s.root_value(), 1.0);
    let mut next = start.clone();
    next.play_unchecked(s.best_action().unwrap());
    assert_eq!(next.outcome(), Some(Outcome::Win(Player::First)));
}

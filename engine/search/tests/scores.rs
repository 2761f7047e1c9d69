//! The network's score in the search: gathered at every leaf where the evaluator has a score
//! head, backed up per node beside the value, and used as a secondary utility when asked.

use eval::fake::FakeEvaluator;
use games::go::{GoRules, GoState, Move, Point};
use games::{Game, Player};
use search::{Limit, RunOptions, Search, SearchConfig};

fn go(size: usize) -> GoState {
    let mut s = GoState::new(GoRules::with_size(size)).unwrap();
    for m in [(2, 2), (3, 3)] {
        s.play(Move::Place(Point::new(m.0, m.1))).unwrap();
    }
    s
}

fn config(track_scores: bool, score_utility: f32) -> SearchConfig {
    SearchConfig {
        max_nodes: 1 << 16,
        track_scores,
        score_utility,
        ..SearchConfig::default()
    }
}

fn searched(fake: &FakeEvaluator, config: SearchConfig, options: RunOptions) -> Search<GoState> {
    let mut s = Search::new(go(7), config, 5);
    s.run(fake, Limit::visits(400), options).unwrap();
    s
}

/// (action, visits, value) of every root child.
fn counts(s: &Search<GoState>) -> Vec<(Move, u32, f64)> {
    s.root_children()
        .iter()
        .map(|c| (c.action, c.visits, c.q))
        .collect()
}

#[test]
fn gathering_scores_leaves_the_search_as_it_is() {
    let plain = FakeEvaluator::new(8).seeded(3);
    let heads = FakeEvaluator::new(8).seeded(3).with_aux();
    let one = RunOptions::single(8);
    let base = searched(&plain, config(false, 0.0), one);
    // No score head: nothing is gathered, though asked for.
    let asked = searched(&plain, config(true, 0.0), one);
    assert_eq!(counts(&asked), counts(&base));
    assert!(asked.candidates().iter().all(|c| c.score.is_none()));
    // A score head, not asked for: none either.
    let unasked = searched(&heads, config(false, 0.0), one);
    assert_eq!(counts(&unasked), counts(&base));
    assert!(!unasked.tree().tracks_scores());
    // A score head, asked for, weight 0: the same visits and values, and scores.
    let scored = searched(&heads, config(true, 0.0), one);
    assert_eq!(counts(&scored), counts(&base));
    assert!(scored.candidates().iter().any(|c| c.score.is_some()));
}

#[test]
fn every_playout_brings_a_score_seen_from_each_nodes_mover() {
    let heads = FakeEvaluator::new(8).seeded(3).with_aux();
    let combined = RunOptions {
        threads: 2,
        leaves_per_thread: 4,
        combine: true,
        ..RunOptions::single(4)
    };
    for options in [RunOptions::single(8), combined] {
        let s = searched(&heads, config(true, 0.0), options);
        let t = s.tree();
        let root = t.root();
        let root_score = t.score(root).unwrap();
        assert_eq!(root_score.count, s.root_visits(), "{options:?}");
        // The root's sum (its mover's view: the opponent of the player to act) is minus the
        // root's own evaluation and its children's sums (the player to act's view).
        let mut children = 0.0f64;
        for c in t.children(root) {
            let st = t.stats(c);
            match t.score(c) {
                Some(sc) => {
                    // Network leaves, cache hits and finished games all bring one.
                    assert_eq!(sc.count, st.visits, "{options:?}");
                    assert!(sc.stdev >= 0.0);
                    children += f64::from(sc.mean) * f64::from(sc.count);
                }
                None => assert_eq!(st.visits, 0),
            }
        }
        let own = f64::from(heads.score_of(s.state()));
        let sum = f64::from(root_score.mean) * f64::from(root_score.count);
        assert!(
            (sum + own + children).abs() < 0.05,
            "{options:?}: {sum} against {}",
            -(own + children)
        );
        // Candidates report their subtree's mean and spread.
        let best = &s.candidates()[0];
        let c = t
            .children(root)
            .find(|&c| t.action(c) == best.action)
            .unwrap();
        let sc = t.score(c).unwrap();
        assert_eq!(best.score, Some((sc.mean, sc.stdev)));
        assert_eq!(s.state().to_act(), Player::First);
    }
}

#[test]
fn tree_reuse_keeps_the_scores_of_the_chosen_subtree() {
    let heads = FakeEvaluator::new(8).seeded(3).with_aux();
    let mut s = searched(&heads, config(true, 0.0), RunOptions::single(8));
    let best = s.best_action().unwrap();
    let child = s
        .tree()
        .children(s.tree().root())
        .find(|&c| s.tree().action(c) == best)
        .unwrap();
    let before = s.tree().score(child).unwrap();
    s.advance(best).unwrap();
    assert_eq!(s.tree().score(s.tree().root()), Some(before));
}

#[test]
fn a_score_utility_turns_scores_on_and_moves_visits() {
    let heads = FakeEvaluator::new(8).seeded(3).with_aux();
    let one = RunOptions::single(8);
    let base = searched(&heads, config(true, 0.0), one);
    // A weight turns tracking on by itself, and moves visits towards larger leads.
    let weighted = searched(&heads, config(false, 0.5), one);
    assert!(weighted.tree().tracks_scores());
    assert_ne!(counts(&weighted), counts(&base));
}

#[test]
fn a_score_utility_out_of_range_is_refused_by_name() {
    for w in [-0.1, 1.5, f32::NAN] {
        let e = config(false, w).validate().unwrap_err();
        assert_eq!(e.key, "score_utility", "{w}");
    }
    assert!(config(false, 0.1).validate().is_ok());
}

#[test]
fn a_dynamic_score_utility_turns_scores_on_and_moves_visits() {
    let heads = FakeEvaluator::new(8).seeded(3).with_aux();
    let one = RunOptions::single(8);
    let base = searched(&heads, config(true, 0.0), one);
    let dynamic = SearchConfig {
        dynamic_score_utility: 0.5,
        ..config(false, 0.0)
    };
    let weighted = searched(&heads, dynamic, one);
    assert!(weighted.tree().tracks_scores());
    assert_ne!(counts(&weighted), counts(&base));
    for w in [-0.1, 1.5, f32::NAN] {
        let bad = SearchConfig {
            dynamic_score_utility: w,
            ..config(false, 0.0)
        };
        assert_eq!(
            bad.validate().unwrap_err().key,
            "dynamic_score_utility",
            "{w}"
        );
    }
}

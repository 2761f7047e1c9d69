//! Forced playouts at the root and the pruning of their visits from the policy target.

mod common;

use common::Mnk;
use eval::fake::FakeEvaluator;
use games::Player;
use search::{Limit, RunOptions, Search, SearchConfig};

/// An empty 4 × 4 board, four in a row: many root children, none of them decisive early.
fn board() -> Mnk {
    Mnk::from_rows(4, 4, 4, ".... .... .... ....", Player::First)
}

fn searched(forced: f32, visits: u64) -> Search<Mnk> {
    let config = SearchConfig {
        max_nodes: 1 << 20,
        forced_playouts: forced,
        ..SearchConfig::default()
    };
    let fake = FakeEvaluator::new(1).seeded(3);
    let mut s = Search::new(board(), config, 3);
    s.run(&fake, Limit::visits(visits), RunOptions::single(1))
        .unwrap();
    s
}

#[test]
fn every_root_child_gets_its_forced_share() {
    let k = 2.0;
    let s = searched(k, 2000);
    let children = s.root_children();
    let total: u32 = children.iter().map(|c| c.visits).sum();
    for c in &children {
        // At the last time the child was passed over it was at its share; the root has grown
        // since by at most the visits of the child chosen at that time, so allow one visit.
        let share = (k * c.prior * total as f32).sqrt();
        assert!(
            c.visits as f32 + 1.0 >= share.floor(),
            "child with prior {} has {} visits, its forced share {share}",
            c.prior,
            c.visits
        );
    }
    // Without forcing, the least likely children get fewer visits than that.
    let plain = searched(0.0, 2000);
    let least = |s: &Search<Mnk>| s.root_children().iter().map(|c| c.visits).min().unwrap();
    assert!(least(&s) >= least(&plain));
}

#[test]
fn pruning_takes_forced_visits_back_but_keeps_the_best() {
    let s = searched(2.0, 2000);
    let raw = s.visit_distribution();
    let pruned = s.pruned_visit_distribution();
    assert_eq!(raw.len(), pruned.len());
    let sum: f32 = pruned.iter().map(|(_, p)| p).sum();
    assert!((sum - 1.0).abs() < 1e-5, "pruned target sums to {sum}");
    // The most visited child keeps all its visits, so its share can only grow; every other
    // child keeps at most its visits, and some lose forced ones.
    let best = s.best_action().unwrap();
    let mut pruned_some = false;
    for ((a, p), (b, r)) in pruned.iter().zip(&raw) {
        assert_eq!(a, b);
        if *a == best {
            assert!(p >= r, "best child's share fell from {r} to {p}");
        } else {
            pruned_some |= p < r;
        }
    }
    assert!(pruned_some, "nothing pruned at k = 2 over 2 000 visits");
}

#[test]
fn without_forced_playouts_the_target_is_the_visit_distribution() {
    let s = searched(0.0, 500);
    assert_eq!(s.pruned_visit_distribution(), s.visit_distribution());
}

#[test]
fn the_setting_is_checked() {
    for bad in [-1.0, f32::NAN, f32::INFINITY, 1000.0] {
        let c = SearchConfig {
            forced_playouts: bad,
            ..SearchConfig::default()
        };
        let e = c.validate().unwrap_err();
        assert!(e.to_string().contains("forced_playouts"), "{e}");
    }
}

//! Many threads in one tree: no visit or value may be lost or counted twice.
//!
//! After a search, every node's statistics are recomputed from its children and from what the
//! (deterministic) fake evaluator told each leaf, and must match exactly: values are summed in
//! fixed point, so "exactly" means bit for bit.

mod common;

use common::Mnk;
use eval::fake::FakeEvaluator;
use games::{Game, Player};
use search::tree::{to_fixed, Tree};
use search::Playable;
use search::{Limit, RunOptions, Search, SearchConfig};

/// Checks the subtree under `node` (whose state is `state`) and returns nothing; panics with
/// the position on the first mismatch.
fn check_node<G: Playable>(t: &Tree<G::Action>, node: u32, state: &G, fake: &FakeEvaluator) {
    let s = t.stats(node);
    assert_eq!(
        s.in_flight,
        0,
        "visits left in flight at {}",
        state.to_text()
    );
    let sign = |p: Player| if p == Player::First { 1i64 } else { -1 };
    let w = t.value_sum_fixed(node);
    if let Some(outcome) = t.terminal(node) {
        let each = sign(t.mover(node)) * to_fixed(outcome.value_for(Player::First));
        assert_eq!(
            w,
            i64::from(s.visits) * each,
            "terminal {}",
            state.to_text()
        );
        return;
    }
    if !t.is_expanded(node) {
        assert_eq!(
            s.visits,
            0,
            "a visited leaf was not expanded: {}",
            state.to_text()
        );
        assert_eq!(w, 0);
        return;
    }
    // One playout evaluated this node and expanded it; every other one went to a child.
    let v = fake.value_of(state);
    let first_view = if state.to_act() == Player::First {
        v
    } else {
        -v
    };
    let mut visits = 1u64;
    let mut value = sign(t.mover(node)) * to_fixed(first_view);
    for c in t.children(node) {
        let cs = t.stats(c);
        visits += u64::from(cs.visits);
        // Child sums are from the child's mover's view; bring them to this node's mover's.
        value += sign(t.mover(node)) * sign(t.mover(c)) * t.value_sum_fixed(c);
        let mut next = state.clone();
        next.play_unchecked(t.action(c));
        check_node(t, c, &next, fake);
    }
    assert_eq!(u64::from(s.visits), visits, "visits at {}", state.to_text());
    assert_eq!(w, value, "value sum at {}", state.to_text());
}

/// Runs `searches` searches of `visits` playouts from 4×4 four-in-a-row positions
/// with `threads` threads and checks every tree exactly.
fn stress(threads: usize, searches: u64, visits: u64, combine: bool) {
    let fake = FakeEvaluator::new(8).seeded(17);
    let options = RunOptions {
        threads,
        leaves_per_thread: if combine { 4 } else { 8 },
        combine,
        batch_wait: std::time::Duration::from_micros(200),
    };
    let mut total = 0;
    let mut collisions = 0;
    for i in 0..searches {
        // A different opening each time, so that the trees differ.
        let mut start = Mnk::new(4, 4, 4);
        start.play_unchecked((i % 16) as u8);
        let config = SearchConfig {
            max_nodes: visits as usize * 16,
            cache_entries: 0,
            ..SearchConfig::default()
        };
        let mut s = Search::new(start.clone(), config, i);
        let r = s.run(&fake, Limit::visits(visits), options).unwrap();
        assert_eq!(r.playouts, visits);
        assert_eq!(u64::from(s.root_visits()), visits);
        assert_eq!(r.tree_full, 0);
        check_node(s.tree(), s.tree().root(), &start, &fake);
        total += r.playouts;
        collisions += r.collisions;
    }
    assert_eq!(total, searches * visits);
    // The threads really did meet in the tree.
    if threads > 1 {
        assert!(collisions > 0, "no collisions: the threads never raced");
    }
}

#[test]
fn two_threads_lose_no_visit_over_a_million_playouts() {
    stress(2, 4, 250_000, false);
}

#[test]
fn four_threads_on_two_cores_lose_no_visit() {
    stress(4, 4, 50_000, false);
}

#[test]
fn combined_batches_lose_no_visit() {
    stress(2, 2, 20_000, true);
}

/// The long version: `cargo test -p search --release --test stress -- --ignored`.
#[test]
#[ignore = "about a minute on two cores"]
fn many_threads_lose_no_visit_over_ten_million_playouts() {
    stress(2, 10, 1_000_000, false);
    stress(8, 4, 500_000, false);
}

//! A large arena must cost address space, not memory, until its nodes are used: agents make
//! trees of 2^22 nodes (128 MiB) and self-play makes one per game. Alone in its test binary
//! because it counts the whole process's page faults.

use eval::fake::FakeEvaluator;
use games::liuzhou::Liuzhou;
use search::{Limit, RunOptions, Search, SearchConfig};

/// Minor page faults of this process so far (Linux).
fn minor_faults() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // After the command name (in parentheses): minflt is field 10, the 8th after it.
    stat.rsplit_once(')')?
        .1
        .split_whitespace()
        .nth(7)?
        .parse()
        .ok()
}

#[test]
fn a_large_arena_is_mapped_lazily() {
    let config = SearchConfig {
        max_nodes: 1 << 22,
        cache_entries: 0,
        ..SearchConfig::default()
    };
    let Some(before) = minor_faults() else {
        eprintln!("no /proc/self/stat: nothing to measure here");
        return;
    };
    let mut search = std::hint::black_box(Search::new(Liuzhou::default(), config, 0));
    let after = minor_faults().expect("read once already");
    // Touching every page would fault 32768 times (4 KiB pages).
    assert!(
        after - before < 1000,
        "creating the arena faulted {} pages",
        after - before
    );
    // The tree works (and so the allocation above cannot have been optimised away).
    let r = search
        .run(
            &FakeEvaluator::new(8),
            Limit::visits(100),
            RunOptions::single(8),
        )
        .expect("search");
    assert_eq!(r.playouts, 100);
    assert_eq!(search.root_visits(), 100);
}

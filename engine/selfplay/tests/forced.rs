//! PUCT self-play with forced playouts: the stored policy targets are the pruned visit
//! distributions, and the setting is checked with the config.

use eval::fake::FakeEvaluator;
use games::go::GoState;
use search::SearchKind;
use selfplay::{run, SelfplayConfig, ShardSink};
use shards::Shard;

fn config(forced: f32) -> SelfplayConfig {
    SelfplayConfig {
        parallel_games: 2,
        search: SearchKind::Puct,
        full_visits: 64,
        cheap_visits: 8,
        full_fraction: 1.0,
        resign_threshold: -1.0,
        positions_per_shard: 100_000,
        forced_playouts: forced,
        ..SelfplayConfig::default()
    }
}

/// The policy targets of every sample of two 5 × 5 games, in the order stored.
fn targets(forced: f32) -> Vec<Vec<(u16, f32)>> {
    let dir = std::env::temp_dir().join(format!("selfplay-forced-{forced}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let sink = ShardSink {
        dir: &dir,
        tag: "t",
        model: "fake",
        config: "",
    };
    let evaluator = FakeEvaluator::new(8).seeded(4);
    let start = GoState::with_size(5);
    let summary = run(&start, &evaluator, &config(forced), 2, &sink, 4, |_| {}).unwrap();
    let mut out = Vec::new();
    for path in &summary.shards {
        for s in Shard::read(path).unwrap().samples {
            let sum: f32 = s.policy.iter().map(|(_, p)| p).sum();
            assert!((sum - 1.0).abs() < 1e-4, "a target sums to {sum}");
            out.push(s.policy);
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    out
}

#[test]
fn forced_playouts_reach_the_search_of_every_full_move() {
    // The same seed and network: the first position's search differs only by the forcing,
    // so its stored target differs too, and every target stays a distribution.
    let forced = targets(2.0);
    let plain = targets(0.0);
    assert!(!forced.is_empty() && !plain.is_empty());
    assert_ne!(forced[0], plain[0]);
}

#[test]
fn a_bad_setting_is_refused_by_name() {
    let e = config(-1.0).validate().unwrap_err();
    assert!(e.to_string().contains("forced_playouts"), "{e}");
}

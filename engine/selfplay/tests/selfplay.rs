//! Self-play with the fake evaluator: games finish, shards hold exactly the full-search
//! positions with proper targets, and the summary adds up.

use eval::fake::FakeEvaluator;
use games::liuzhou::Liuzhou;
use games::Encoding;
use search::SearchKind;
use selfplay::{run, SelfplayConfig, ShardSink};
use shards::{PolicyTarget, Shard};

fn tmpdir(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("selfplay-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Shards into `dir`, labelled as a test's.
fn sink(dir: &std::path::Path) -> ShardSink<'_> {
    ShardSink {
        dir,
        tag: "t",
        model: "fake",
        config: "",
    }
}

fn small_config() -> SelfplayConfig {
    SelfplayConfig {
        parallel_games: 6,
        full_visits: 24,
        cheap_visits: 8,
        full_fraction: 0.5,
        positions_per_shard: 150,
        ..SelfplayConfig::default()
    }
}

#[test]
fn games_become_consistent_shards() {
    let dir = tmpdir("consistent");
    let evaluator = FakeEvaluator::new(16).seeded(3);
    let sink = ShardSink {
        dir: &dir,
        tag: "test",
        model: "fake",
        config: "selfplay: {}\n",
    };
    let mut progress = 0;
    let summary = run(
        &Liuzhou::default(),
        &evaluator,
        &small_config(),
        10,
        &sink,
        7,
        |_| progress += 1,
    )
    .unwrap();
    assert_eq!(summary.games, 10);
    assert_eq!(progress, 10);
    assert_eq!(summary.results.iter().sum::<usize>(), 10);
    assert!(
        summary.positions >= 10 * 36,
        "a Liuzhou game has at least 36 placements"
    );
    assert!(summary.samples > 0 && summary.samples < summary.positions);
    assert!(summary.shards.len() >= 2, "{} shards", summary.shards.len());
    assert!(
        summary.batches.fill() > 0.3,
        "fill {}",
        summary.batches.fill()
    );

    let mut samples = 0u64;
    let mut games = 0;
    for path in &summary.shards {
        let shard = Shard::read(path).unwrap();
        assert_eq!(shard.meta.game, "liuzhou");
        assert_eq!(shard.meta.policy_target, PolicyTarget::Visits);
        assert_eq!(
            shard.meta.input_len(),
            Liuzhou::default().shape().input_len()
        );
        games += shard.meta.games;
        for s in &shard.samples {
            let total: f32 = s.policy.iter().map(|(_, p)| p).sum();
            assert!((total - 1.0).abs() < 1e-4, "policy sums to {total}");
            assert!([-1.0, 0.0, 1.0].contains(&s.value));
        }
        samples += shard.samples.len() as u64;
    }
    assert_eq!(samples, summary.samples);
    assert_eq!(games, 10);
    // Only finished shards are in the directory.
    let names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), summary.shards.len());
}

#[test]
fn bad_config_is_refused() {
    let dir = tmpdir("bad");
    let sink = sink(&dir);
    let config = SelfplayConfig {
        full_fraction: 1.5,
        ..small_config()
    };
    let err = run(
        &Liuzhou::default(),
        &FakeEvaluator::new(8),
        &config,
        1,
        &sink,
        1,
        |_| {},
    )
    .unwrap_err();
    assert!(err.to_string().contains("full_fraction"), "{err}");
}

#[test]
fn every_out_of_range_setting_names_its_key() {
    let d = small_config;
    let cases = [
        (
            SelfplayConfig {
                c_puct: f32::INFINITY,
                ..d()
            },
            "c_puct",
        ),
        (
            SelfplayConfig {
                c_puct: -3.0,
                ..d()
            },
            "c_puct",
        ),
        (
            SelfplayConfig {
                dirichlet_alpha: 0.0,
                ..d()
            },
            "dirichlet_alpha",
        ),
        (
            SelfplayConfig {
                dirichlet_alpha: -1.0,
                ..d()
            },
            "dirichlet_alpha",
        ),
        (
            SelfplayConfig {
                dirichlet_epsilon: 2.0,
                ..d()
            },
            "dirichlet_epsilon",
        ),
        (
            SelfplayConfig {
                resign_threshold: 5.0,
                ..d()
            },
            "resign_threshold",
        ),
        (
            SelfplayConfig {
                resign_threshold: f32::NAN,
                ..d()
            },
            "resign_threshold",
        ),
        (
            SelfplayConfig {
                temperature: f32::INFINITY,
                ..d()
            },
            "temperature",
        ),
        (
            SelfplayConfig {
                final_temperature: -1.0,
                ..d()
            },
            "final_temperature",
        ),
        (
            SelfplayConfig {
                max_nodes: usize::MAX,
                ..d()
            },
            "max_nodes",
        ),
        (SelfplayConfig { gumbel_m: 0, ..d() }, "gumbel_m"),
        (
            SelfplayConfig {
                gumbel_c_visit: f32::NAN,
                ..d()
            },
            "gumbel_c_visit",
        ),
        (
            SelfplayConfig {
                gumbel_c_scale: 0.0,
                ..d()
            },
            "gumbel_c_scale",
        ),
    ];
    for (config, key) in cases {
        let e = config.validate().unwrap_err();
        assert_eq!(e.key, key, "{e}");
        assert!(e.to_string().contains("allowed:"), "{e}");
    }
    assert_eq!(d().validate(), Ok(()));
    // -1 never resigns and is the lowest accepted value.
    let never = SelfplayConfig {
        resign_threshold: -1.0,
        ..d()
    };
    assert_eq!(never.validate(), Ok(()));
}

#[test]
fn an_unusable_shard_directory_fails_before_any_game() {
    let dir = tmpdir("outfile");
    let file = dir.join("f.txt");
    std::fs::write(&file, "x").unwrap();
    let sink = sink(&file);
    let mut games = 0;
    let err = run(
        &Liuzhou::default(),
        &FakeEvaluator::new(8),
        &small_config(),
        2,
        &sink,
        1,
        |_| games += 1,
    )
    .unwrap_err();
    assert_eq!(games, 0);
    let msg = err.to_string();
    assert!(
        msg.contains("f.txt") && msg.contains("not a directory"),
        "{msg}"
    );
}

#[test]
fn drawn_games_can_be_valued_by_the_tiebreak() {
    let dir = tmpdir("tiebreak");
    let evaluator = FakeEvaluator::new(16).seeded(5);
    let sink = sink(&dir);
    let config = SelfplayConfig {
        draw_tiebreak_weight: 0.5,
        ..small_config()
    };
    let summary = run(
        &Liuzhou::default(),
        &evaluator,
        &config,
        6,
        &sink,
        9,
        |_| {},
    )
    .unwrap();
    assert!(
        summary.results[2] > 0,
        "some game must be drawn: {:?}",
        summary.results
    );
    let mut fractional = 0;
    for path in &summary.shards {
        for s in Shard::read(path).unwrap().samples {
            assert!((-1.0..=1.0).contains(&s.value));
            if s.value.abs() < 1.0 {
                // A drawn game's target: half the stone balance, a multiple of 1/36.
                assert!(s.value.abs() <= 0.5 + 1e-6);
                assert!(
                    ((s.value * 36.0).round() - s.value * 36.0).abs() < 1e-3,
                    "{}",
                    s.value
                );
                fractional += usize::from(s.value != 0.0);
            }
        }
    }
    assert!(fractional > 0, "no drawn game ended with a stone balance");
}

/// `value_result_weight` blends each sample's result with its search's root value: the same
/// games (one seed) valued by the result alone, by the root value alone and half and half.
#[test]
fn value_targets_blend_the_result_with_the_root_value() {
    let values = |w: f32| {
        let dir = tmpdir(&format!("blend-{w}"));
        let evaluator = FakeEvaluator::new(16).seeded(4);
        let config = SelfplayConfig {
            value_result_weight: w,
            ..small_config()
        };
        let summary = run(
            &Liuzhou::default(),
            &evaluator,
            &config,
            4,
            &sink(&dir),
            11,
            |_| {},
        )
        .unwrap();
        let samples: Vec<_> = summary
            .shards
            .iter()
            .flat_map(|path| Shard::read(path).unwrap().samples)
            .collect();
        std::fs::remove_dir_all(&dir).unwrap();
        samples
    };
    let (result, root, half) = (values(1.0), values(0.0), values(0.5));
    assert!(!result.is_empty());
    assert_eq!((result.len(), half.len()), (root.len(), root.len()));
    for ((r, q), h) in result.iter().zip(&root).zip(&half) {
        assert_eq!(
            (&r.planes, &r.policy),
            (&q.planes, &q.policy),
            "not the same games"
        );
        assert!(
            r.value.abs() == 1.0 || r.value == 0.0,
            "a result: {}",
            r.value
        );
        assert!((h.value - 0.5 * (r.value + q.value)).abs() < 1e-5);
    }
    // Root values are a search's means, not results.
    assert!(root.iter().any(|q| q.value.abs() != 1.0 && q.value != 0.0));
    let e = SelfplayConfig {
        value_result_weight: 1.5,
        ..small_config()
    }
    .validate()
    .unwrap_err();
    assert!(e.to_string().contains("value_result_weight"), "{e}");
}

/// `value_horizon` replaces the root value beside the result by the short-term value target:
/// on the same games, with no weight on the result, λ = 1 gives the results, λ = 0.5 targets
/// that are neither the results nor the positions' own root values, and λ = 0 (off) the root
/// values.
#[test]
fn short_term_value_targets_run_from_the_root_values_to_the_result() {
    let values = |w: f32, lambda: f32| {
        let dir = tmpdir(&format!("horizon-{w}-{lambda}"));
        let evaluator = FakeEvaluator::new(16).seeded(4);
        let config = SelfplayConfig {
            value_result_weight: w,
            value_horizon: lambda,
            ..small_config()
        };
        let summary = run(
            &Liuzhou::default(),
            &evaluator,
            &config,
            3,
            &sink(&dir),
            11,
            |_| {},
        )
        .unwrap();
        let samples: Vec<_> = summary
            .shards
            .iter()
            .flat_map(|path| Shard::read(path).unwrap().samples)
            .collect();
        std::fs::remove_dir_all(&dir).unwrap();
        samples
    };
    let result = values(1.0, 0.0);
    let root = values(0.0, 0.0);
    let all_result = values(0.0, 1.0);
    let half = values(0.0, 0.5);
    assert!(!result.is_empty());
    for (((r, q), a), h) in result.iter().zip(&root).zip(&all_result).zip(&half) {
        assert_eq!(
            (&r.planes, &q.planes, &a.planes),
            (&h.planes, &h.planes, &h.planes),
            "not the same games"
        );
        assert_eq!(a.value, r.value);
        assert!((-1.0..=1.0).contains(&h.value));
    }
    let differs = |x: &[shards::Sample]| {
        half.iter()
            .zip(x)
            .filter(|(h, y)| (h.value - y.value).abs() > 1e-4)
            .count()
    };
    assert!(differs(&root) > half.len() / 2, "{}", differs(&root));
    assert!(differs(&result) > half.len() / 2, "{}", differs(&result));
    let e = SelfplayConfig {
        value_horizon: -0.1,
        ..small_config()
    }
    .validate()
    .unwrap_err();
    assert!(e.to_string().contains("value_horizon"), "{e}");
}

#[test]
fn searches_stop_at_their_visit_target() {
    // One game and a batch larger than its search: the gather passes of one batch must count
    // the leaves already in flight, or a search short of a few visits takes a whole batch.
    let dir = tmpdir("target");
    let evaluator = FakeEvaluator::new(16).seeded(2);
    let sink = sink(&dir);
    let visits = 6;
    let config = SelfplayConfig {
        parallel_games: 1,
        full_visits: visits,
        cheap_visits: visits,
        ..small_config()
    };
    let summary = run(
        &Liuzhou::default(),
        &evaluator,
        &config,
        2,
        &sink,
        4,
        |_| {},
    )
    .unwrap();
    // Each move's search adds at most `visits` (tree reuse may carry some over), and every
    // evaluated state is one of them.
    assert!(
        summary.batches.states <= summary.positions * u64::from(visits),
        "{} states for {} moves of {visits} visits",
        summary.batches.states,
        summary.positions
    );
}

#[test]
fn gumbel_games_write_improved_policy_targets() {
    let dir = tmpdir("gumbel");
    let evaluator = FakeEvaluator::new(16).seeded(4);
    let config = SelfplayConfig {
        search: SearchKind::Gumbel,
        ..small_config()
    };
    let summary = run(
        &Liuzhou::default(),
        &evaluator,
        &config,
        6,
        &sink(&dir),
        9,
        |_| {},
    )
    .unwrap();
    assert_eq!(summary.games, 6);
    assert!(summary.samples > 0);
    let start = Liuzhou::default();
    let mut start_planes = vec![0.0; start.shape().input_len()];
    start.encode(&mut start_planes);
    let (mut samples, mut at_start) = (0u64, 0);
    for path in &summary.shards {
        let shard = Shard::read(path).unwrap();
        assert_eq!(shard.meta.policy_target, PolicyTarget::Improved);
        for s in &shard.samples {
            let total: f32 = s.policy.iter().map(|(_, p)| p).sum();
            assert!((total - 1.0).abs() < 1e-4, "policy sums to {total}");
            assert!(s
                .policy
                .iter()
                .all(|&(i, p)| p > 0.0 && p <= 1.0 && usize::from(i) < shard.meta.policy_size));
            let mut indices: Vec<u16> = s.policy.iter().map(|&(i, _)| i).collect();
            indices.sort_unstable();
            indices.dedup();
            assert_eq!(indices.len(), s.policy.len(), "each action once");
            // At the start every placement has a share, not only the 23 visited at most.
            if s.planes == start_planes {
                assert_eq!(s.policy.len(), 36);
                at_start += 1;
            }
        }
        samples += shard.samples.len() as u64;
    }
    assert_eq!(samples, summary.samples);
    assert!(at_start > 0, "no game searched its first move fully");
}

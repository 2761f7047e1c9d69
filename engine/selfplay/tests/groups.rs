//! Self-play split into groups of games, each driven by a thread of its own: every game is
//! played and written once, a run is reproducible for its seed and number of groups, and a
//! failing evaluator stops every group with its error.

use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use eval::fake::FakeEvaluator;
use eval::{EvalError, Evaluator};
use games::liuzhou::Liuzhou;
use games::Encoding;
use selfplay::{run, SelfplayConfig, SelfplayError, ShardSink, Summary};
use shards::Shard;

fn tmpdir(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("selfplay-groups-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn sink(dir: &std::path::Path) -> ShardSink<'_> {
    ShardSink {
        dir,
        tag: "g",
        model: "fake",
        config: "",
    }
}

fn config(groups: usize) -> SelfplayConfig {
    SelfplayConfig {
        parallel_games: 6,
        pipeline_groups: groups,
        full_visits: 24,
        cheap_visits: 8,
        full_fraction: 0.5,
        positions_per_shard: 150,
        ..SelfplayConfig::default()
    }
}

/// Every sample of a run's shards as comparable bytes, sorted (the groups' games reach the
/// shards in the order they end, which depends on timing).
fn samples_of(summary: &Summary) -> Vec<Vec<u8>> {
    let mut all = Vec::new();
    for path in &summary.shards {
        for s in Shard::read(path).unwrap().samples {
            let mut bytes: Vec<u8> = s.planes.iter().flat_map(|x| x.to_le_bytes()).collect();
            for (i, p) in &s.policy {
                bytes.extend(i.to_le_bytes());
                bytes.extend(p.to_le_bytes());
            }
            bytes.extend(s.value.to_le_bytes());
            all.push(bytes);
        }
    }
    all.sort();
    all
}

fn play(groups: usize, games: usize, seed: u64, dir: &std::path::Path) -> Summary {
    let evaluator = FakeEvaluator::new(16).seeded(3);
    let mut progress = 0;
    let summary = run(
        &Liuzhou::default(),
        &evaluator,
        &config(groups),
        games,
        &sink(dir),
        seed,
        |_| progress += 1,
    )
    .unwrap();
    assert!(
        progress >= games,
        "{progress} progress calls for {games} games"
    );
    summary
}

#[test]
fn groups_play_every_game_once_into_whole_shards() {
    for groups in [1, 2, 3] {
        let dir = tmpdir(&format!("whole{groups}"));
        let summary = play(groups, 11, 5, &dir);
        assert_eq!(summary.groups, groups);
        assert_eq!(summary.games, 11);
        assert_eq!(summary.results.iter().sum::<usize>(), 11);
        assert!(
            summary.positions >= 11 * 36,
            "{} positions",
            summary.positions
        );
        let (mut games, mut samples) = (0, 0u64);
        for path in &summary.shards {
            let shard = Shard::read(path).unwrap();
            assert_eq!(shard.meta.game, "liuzhou");
            games += shard.meta.games;
            for s in &shard.samples {
                let total: f32 = s.policy.iter().map(|(_, p)| p).sum();
                assert!((total - 1.0).abs() < 1e-4, "policy sums to {total}");
                assert_eq!(s.planes.len(), Liuzhou::default().shape().input_len());
                assert!([-1.0, 0.0, 1.0].contains(&s.value));
            }
            samples += shard.samples.len() as u64;
        }
        assert_eq!(games, 11, "{groups} groups");
        assert_eq!(samples, summary.samples);
        // Only finished shards are in the directory, each under its own name.
        assert_eq!(
            std::fs::read_dir(&dir).unwrap().count(),
            summary.shards.len()
        );
        // The busy share counts overlapping calls once.
        let busy = summary.evaluator_time.as_secs_f64();
        assert!(
            busy <= summary.seconds + 1e-6,
            "{busy} s busy of {}",
            summary.seconds
        );
        assert!(busy <= summary.batches.eval_time.as_secs_f64() + 1e-3);
        assert!((0.0..=1.0).contains(&summary.evaluator_busy()));
    }
}

#[test]
fn a_seed_and_a_number_of_groups_give_the_same_games() {
    for groups in [1, 3] {
        let a = play(groups, 9, 21, &tmpdir(&format!("same{groups}a")));
        let b = play(groups, 9, 21, &tmpdir(&format!("same{groups}b")));
        assert_eq!(a.positions, b.positions, "{groups} groups");
        assert_eq!(a.results, b.results);
        assert_eq!(a.samples, b.samples);
        assert_eq!(a.batches.states, b.batches.states);
        assert_eq!(samples_of(&a), samples_of(&b), "{groups} groups");
    }
}

#[test]
fn a_group_count_out_of_range_is_refused() {
    for groups in [0, selfplay::MAX_PIPELINE_GROUPS + 1] {
        let e = config(groups).validate().unwrap_err();
        assert_eq!(e.key, "pipeline_groups");
        assert!(e.to_string().contains("allowed:"), "{e}");
        let dir = tmpdir("range");
        let err = run(
            &Liuzhou::default(),
            &FakeEvaluator::new(8),
            &config(groups),
            2,
            &sink(&dir),
            1,
            |_| {},
        )
        .unwrap_err();
        assert!(matches!(err, SelfplayError::Config(_)), "{err}");
        assert!(err.to_string().contains("pipeline_groups"), "{err}");
    }
    // More groups than games in flight is allowed: each group has at least one game.
    let dir = tmpdir("many");
    let many = SelfplayConfig {
        pipeline_groups: 8,
        ..config(1)
    };
    let summary = run(
        &Liuzhou::default(),
        &FakeEvaluator::new(8),
        &many,
        4,
        &sink(&dir),
        1,
        |_| {},
    )
    .unwrap();
    assert_eq!((summary.games, summary.groups), (4, 4));
}

#[test]
fn the_key_is_read_from_yaml() {
    let c: SelfplayConfig = serde_yaml::from_str("pipeline_groups: 3\n").unwrap();
    assert_eq!(c.pipeline_groups, 3);
    assert!(serde_yaml::from_str::<SelfplayConfig>("pipeline_groups: -1\n").is_err());
}

/// Answers `calls` calls, then fails.
struct Failing {
    inner: FakeEvaluator,
    calls: AtomicUsize,
}

impl<G: Encoding> Evaluator<G> for Failing {
    fn batch_size(&self) -> usize {
        Evaluator::<G>::batch_size(&self.inner)
    }

    fn evaluate(
        &self,
        states: &[&G],
        policy: &mut [f32],
        value: &mut [f32],
    ) -> Result<(), EvalError> {
        if self
            .calls
            .fetch_update(Relaxed, Relaxed, |c| c.checked_sub(1))
            .is_err()
        {
            return Err(EvalError::Backend("the network went away".into()));
        }
        self.inner.evaluate(states, policy, value)
    }

    fn describe(&self) -> String {
        "failing".into()
    }
}

#[test]
fn a_failing_evaluator_stops_every_group_and_writes_no_part_shard() {
    let dir = tmpdir("failing");
    let evaluator = Failing {
        inner: FakeEvaluator::new(16),
        calls: AtomicUsize::new(40),
    };
    let err = run(
        &Liuzhou::default(),
        &evaluator,
        &config(3),
        60,
        &sink(&dir),
        2,
        |_| {},
    )
    .unwrap_err();
    assert!(err.to_string().contains("went away"), "{err}");
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        Shard::read(&path).unwrap();
    }
}

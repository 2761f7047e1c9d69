//! Self-play with the fake evaluator fills each sample's auxiliary targets from its finished
//! game: the final ownership and score from the mover's side, and the opponent's next policy
//! target as the reply.

use eval::fake::FakeEvaluator;
use games::go::GoState;
use games::liuzhou::Liuzhou;
use selfplay::Trainable;
use selfplay::{run, SelfplayConfig, ShardSink};
use shards::{Sample, Shard};

fn tmpdir(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("selfplay-aux-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// One game, every position searched in full (so stored), no resignation: its samples in the
/// order played.
fn one_game<G: Trainable>(start: &G, name: &str, seed: u64) -> Vec<Sample> {
    let dir = tmpdir(name);
    let config = SelfplayConfig {
        parallel_games: 1,
        full_visits: 8,
        cheap_visits: 4,
        full_fraction: 1.0,
        resign_threshold: -1.0,
        positions_per_shard: 100_000,
        ..SelfplayConfig::default()
    };
    let sink = ShardSink {
        dir: &dir,
        tag: "t",
        model: "fake",
        config: "",
    };
    let evaluator = FakeEvaluator::new(8).seeded(seed);
    let summary = run(start, &evaluator, &config, 1, &sink, seed, |_| {}).unwrap();
    assert_eq!(summary.shards.len(), 1);
    assert_eq!(summary.samples, summary.positions, "every position stored");
    Shard::read(&summary.shards[0]).unwrap().samples
}

/// Every sample has the ownership of one final position: from the mover's side, so each
/// sample's is its opponent's negated. The reply of sample k is the policy of the first later
/// sample of the other player (found by its negated ownership), or none when the game ended
/// first.
fn check_game(samples: &[Sample], area: usize) -> usize {
    let own = |k: usize| samples[k].aux.ownership.as_ref().unwrap();
    let first = own(0);
    assert_eq!(first.len(), area);
    assert!(
        first.iter().any(|&o| o != 0.0),
        "someone owns something at the end"
    );
    let mut replies = 0;
    for k in 0..samples.len() {
        let mine = own(k);
        let negated: Vec<f32> = first.iter().map(|o| -o).collect();
        assert!(
            mine == first || *mine == negated,
            "sample {k}: another final position"
        );
        let next = (k + 1..samples.len()).find(|&j| *own(j) != *mine);
        let want = next.map(|j| samples[j].policy.clone());
        assert_eq!(samples[k].aux.reply, want, "reply of sample {k}");
        replies += usize::from(want.is_some());
    }
    // Every stored search has its policy surprise; an 8-visit search parts from the prior.
    assert!(samples
        .iter()
        .all(|s| s.aux.surprise.is_some_and(|x| x.is_finite() && x >= 0.0)));
    assert!(samples.iter().any(|s| s.aux.surprise > Some(0.01)));
    replies
}

#[test]
fn liuzhou_samples_carry_the_final_stones_and_the_opponents_reply() {
    let samples = one_game(&Liuzhou::default(), "liuzhou", 5);
    assert!(samples.len() >= 36, "{} samples", samples.len());
    let replies = check_game(&samples, 36);
    assert!(replies + 2 >= samples.len() / 2, "{replies} replies");
    for (k, s) in samples.iter().enumerate() {
        // The score is the stone difference: the sum of the ownership.
        let own: f32 = s.aux.ownership.as_ref().unwrap().iter().sum();
        assert_eq!(s.aux.score, Some(own), "sample {k}");
    }
}

#[test]
fn go_samples_carry_the_final_area_and_the_opponents_reply() {
    let start = GoState::with_size(5);
    let samples = one_game(&start, "go", 3);
    let replies = check_game(&samples, 25);
    // Players alternate in Go: every sample but the last has the next one's policy.
    assert_eq!(replies, samples.len() - 1);
    for (k, s) in samples.iter().enumerate() {
        if k + 1 < samples.len() {
            assert_eq!(s.aux.reply.as_ref(), Some(&samples[k + 1].policy));
        }
        // The score is the area margin with komi: the ownership's sum less komi for Black
        // (plane 16 all ones when Black moves), plus komi for White.
        let own: f32 = s.aux.ownership.as_ref().unwrap().iter().sum();
        let black = s.planes[16 * 25] == 1.0;
        let komi = start.komi();
        let want = if black { own - komi } else { own + komi };
        assert_eq!(s.aux.score, Some(want), "sample {k}");
    }
}

//! The auxiliary targets of imported records and bootstrap games: the final ownership and
//! score where the game ended by the rules with its result, and the opponent's next move (or
//! the teacher's policy there) as the reply.
//!
//! The GNU Go test needs the Debian package `gnugo`; without it it says so and passes, unless
//! `ENGINE_REQUIRE_ORACLES=1`.

use std::path::PathBuf;

use games::go::sgf::read_records;
use games::go::{GoRules, GoState};
use games::{Agent, GameRecord, Outcome, Player, RandomAgent};
use shards::{Sample, Shard};
use teach::bootstrap::{bootstrap, BootstrapConfig, BootstrapOptions};
use teach::gtp_teacher::GtpTeacher;
use teach::record_samples;
use teach::teacher::AgentTeacher;

fn out_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("teach-aux-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// 5 × 5, komi 0.5: Black fills file b, White file d, then both pass (unless `passes` is
/// false). File a is Black's, file e White's, file c dame: 10 points each, White by komi.
fn go_record(result: &str, passes: bool) -> GameRecord<GoState> {
    let mut moves = String::new();
    for row in ['a', 'b', 'c', 'd', 'e'] {
        moves.push_str(&format!(";B[b{row}];W[d{row}]"));
    }
    if passes {
        moves.push_str(";B[];W[]");
    }
    let sgf = format!("(;GM[1]FF[4]SZ[5]KM[0.5]RE[{result}]{moves})");
    let mut records = read_records(&sgf, &GoRules::default());
    assert_eq!(records.len(), 1);
    records.pop().unwrap().unwrap()
}

fn samples_of(record: &GameRecord<GoState>) -> Vec<Sample> {
    record_samples(record).unwrap()
}

#[test]
fn an_imported_go_game_ended_by_passes_carries_its_area_and_next_moves() {
    let record = go_record("W+0.5", true);
    assert_eq!(record.result, Some(Outcome::Win(Player::Second)));
    let samples = samples_of(&record);
    assert_eq!(samples.len(), 12);
    let row = [1.0, 1.0, 0.0, -1.0, -1.0];
    for (k, s) in samples.iter().enumerate() {
        // Black moves at even plies.
        let (sign, score) = if k % 2 == 0 { (1.0, -0.5) } else { (-1.0, 0.5) };
        let want: Vec<f32> = row.iter().map(|o| sign * o).collect::<Vec<_>>().repeat(5);
        assert_eq!(s.aux.ownership.as_ref(), Some(&want), "sample {k}");
        assert_eq!(s.aux.score, Some(score), "sample {k}");
        let next = samples.get(k + 1).map(|n| n.policy.clone());
        assert_eq!(s.aux.reply, next, "sample {k}");
    }
    assert_eq!(samples[11].aux.reply, None, "the game ended");
}

#[test]
fn an_imported_game_not_ended_by_the_rules_has_no_final_targets() {
    // Resigned: the last position is no end.
    let samples = samples_of(&go_record("B+R", false));
    assert_eq!(samples.len(), 10);
    assert!(samples
        .iter()
        .all(|s| s.aux.ownership.is_none() && s.aux.score.is_none()));
    assert!(samples[..9].iter().all(|s| s.aux.reply.is_some()));
    // A recorded result the board does not give (dead stones, another count): no ownership.
    let samples = samples_of(&go_record("B+3", true));
    assert!(samples
        .iter()
        .all(|s| s.aux.ownership.is_none() && s.aux.score.is_none()));
}

/// Each sample's ownership lies in [−1, 1] over the board and its score is finite; merged
/// repeats (the start) average theirs. A reply sums to 1.
fn check_aux(shards: &[Shard], area: usize) -> (usize, usize) {
    let (mut owned, mut replies) = (0, 0);
    for sample in shards.iter().flat_map(|s| &s.samples) {
        if let Some(o) = &sample.aux.ownership {
            assert_eq!(o.len(), area);
            assert!(o.iter().all(|x| (-1.0..=1.0).contains(x)));
            assert!(sample.aux.score.unwrap().is_finite());
            owned += 1;
        }
        if let Some(r) = &sample.aux.reply {
            let sum: f32 = r.iter().map(|e| e.1).sum();
            assert!((sum - 1.0).abs() < 1e-4, "reply sums to {sum}");
            replies += 1;
        }
    }
    (owned, replies)
}

#[test]
fn bootstrap_games_carry_their_final_area_and_the_teachers_replies() {
    // A random agent teaches itself on 5 × 5: it never resigns, so every game ends by the
    // rules and every sample has the ownership; every position is stored, so every sample
    // whose game goes on has a reply.
    let config = BootstrapConfig {
        games_per_shard: 2,
        ..BootstrapConfig::default()
    };
    let mut teacher = AgentTeacher::new(Box::new(RandomAgent::new(1)) as Box<dyn Agent<GoState>>);
    let out = out_dir("agent");
    let opts = BootstrapOptions {
        out: &out,
        games: 2,
        seed: 5,
        teacher: "random:seed=1",
        opponent: None,
        progress: false,
    };
    let summary = bootstrap(&GoState::with_size(5), &mut teacher, None, &config, &opts).unwrap();
    let shards: Vec<Shard> = summary
        .shards
        .iter()
        .map(|p| Shard::read(p).unwrap())
        .collect();
    let samples = shards.iter().map(|s| s.samples.len()).sum::<usize>();
    let (owned, replies) = check_aux(&shards, 25);
    assert_eq!(owned, samples);
    // At most one position per game ends it without a reply (a repeated one may have found
    // one in another game).
    assert!(replies + 2 >= samples, "{replies} replies of {samples}");
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn gnugo_bootstrap_games_carry_their_final_area() {
    let Some(gnugo) = testkit::gnugo("test not run") else {
        return;
    };
    let spec = format!(
        "gtp:cmd={gnugo} --mode gtp --level 0 --chinese-rules --positional-superko \
         --capture-all-dead"
    );
    let config = BootstrapConfig {
        games_per_shard: 2,
        opening_random_moves: 2,
        opening_sampled_moves: 4,
        levels: Some([0, 0]),
        ..BootstrapConfig::default()
    };
    let mut teacher = GtpTeacher::from_spec(&spec, &config).unwrap();
    let out = out_dir("gnugo");
    let opts = BootstrapOptions {
        out: &out,
        games: 2,
        seed: 7,
        teacher: &spec,
        opponent: None,
        progress: false,
    };
    let summary = bootstrap(&GoState::with_size(5), &mut teacher, None, &config, &opts).unwrap();
    let shards: Vec<Shard> = summary
        .shards
        .iter()
        .map(|p| Shard::read(p).unwrap())
        .collect();
    let samples = shards.iter().map(|s| s.samples.len()).sum::<usize>();
    let (owned, replies) = check_aux(&shards, 25);
    if summary.resigned == 0 {
        assert_eq!(owned, samples);
    }
    assert!(replies > 0);
    let _ = std::fs::remove_dir_all(&out);
}

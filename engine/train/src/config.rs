//! The `train` section of a game's config and its range checks.

use std::path::PathBuf;

use eval::InvalidSetting;
use infer::Precision;
use players::spec::AgentSpec;
use serde::{Deserialize, Serialize};

/// What a run's time limit counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ClockKind {
    /// Seconds on the wall clock.
    #[default]
    Wall,
    /// CPU seconds of the engine and of its child processes that have finished (the trainer's
    /// fits): runs compared at equal compute stay comparable on a machine that other work
    /// shares. Linux only.
    Cpu,
}

/// The `train` section of a game's config.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TrainConfig {
    pub run_dir: PathBuf,
    pub iterations: u32,
    pub time_limit_minutes: f64,
    /// What `time_limit_minutes` and the run's recorded seconds count.
    pub clock: ClockKind,
    pub games_per_iteration: usize,
    pub gate_games: u32,
    pub gate_visits: u64,
    pub gate_threshold: f64,
    pub gate_temperature: f32,
    pub eval_games: u32,
    pub eval_visits: u64,
    pub eval_mcts_playouts: u64,
    /// Fixed opponents of the rating ladder besides `random` and pure MCTS (agent specs).
    pub ladder_opponents: Vec<String>,
    /// Earlier best models each new best plays on the ladder (the most recent first).
    pub ladder_previous_bests: u32,
    pub match_parallel: u32,
    pub seed: u64,
    /// A checkpoint (`.safetensors`, its `.onnx` beside it) that becomes model 0000 instead of a
    /// fresh network: a network fitted elsewhere, on bootstrap or imported shards say.
    pub init_from: Option<PathBuf>,
    /// Shards of a teacher's games or of game records (`engine bootstrap`, `engine import`). A
    /// new run fits its fresh model 0000 on them (`bootstrap_fit_steps`) and keeps the newest
    /// of them, up to `bootstrap_samples`, in its replay window beside self-play, where they
    /// are the oldest data and leave the window as self-play fills it.
    pub bootstrap_shards: Option<PathBuf>,
    /// Training steps of model 0000 on `bootstrap_shards` (0: start from a fresh network).
    pub bootstrap_fit_steps: usize,
    /// Bootstrap samples kept in the replay window at the start (0: none).
    pub bootstrap_samples: usize,
    /// Root visits of a full self-play search by iteration, as [iteration, full_visits] pairs
    /// with the iterations increasing: the self-play of iteration i (0 the first) uses the
    /// full_visits of the last pair at or before i, and `selfplay.full_visits` before the first
    /// pair ([`TrainConfig::full_visits_at`]). Cheap searches at first, while the network knows
    /// little, and deeper ones as it improves. Empty: `selfplay.full_visits` always.
    pub visit_schedule: Vec<(u32, u32)>,
    /// The arithmetic of the loop's self-play: fp32, or auto (the best model's int8 file where
    /// `fit.int8` wrote one, fp32 where it has none: model 0000 unless `init_from` brings one
    /// or the bootstrap fit writes one). Gate and evaluation play fp32 whatever this says.
    pub selfplay_precision: Precision,
    /// Boards the self-play plays besides the configured one, for a game of several (Go), as
    /// [size, share] pairs: each iteration plays `share` of its games on a board of `size` (a
    /// network of any size learns them all; gate and ladder play the configured board). Empty:
    /// the configured board only.
    pub other_boards: Vec<(usize, f64)>,
}

impl Default for TrainConfig {
    fn default() -> Self {
        TrainConfig {
            run_dir: "runs/liuzhou".into(),
            iterations: 100,
            time_limit_minutes: 30.0,
            clock: ClockKind::Wall,
            games_per_iteration: 200,
            gate_games: 20,
            gate_visits: 100,
            gate_threshold: 0.55,
            gate_temperature: 0.3,
            eval_games: 10,
            eval_visits: 200,
            eval_mcts_playouts: 800,
            ladder_opponents: Vec::new(),
            ladder_previous_bests: 3,
            match_parallel: 0,
            seed: 1,
            init_from: None,
            bootstrap_shards: None,
            bootstrap_fit_steps: 0,
            bootstrap_samples: 0,
            visit_schedule: Vec::new(),
            selfplay_precision: Precision::Fp32,
            other_boards: Vec::new(),
        }
    }
}

impl TrainConfig {
    /// Range checks for the whole section, run at startup: the gate and the evaluation build
    /// their agents from these values only after a full self-play and fit.
    pub fn validate(&self) -> Result<(), InvalidSetting> {
        self.check_run()?;
        self.check_other_boards()?;
        self.check_matches()?;
        self.check_init()?;
        self.check_selfplay_precision()?;
        self.check_ladder()?;
        self.check_visit_schedule()?;
        self.check_bootstrap_shards()
    }

    /// Where the run lives and how long it lasts.
    fn check_run(&self) -> Result<(), InvalidSetting> {
        use InvalidSetting as I;
        let dir = self.run_dir.to_string_lossy();
        // The gate names models inside agent specs, whose fields are separated by commas.
        I::check(
            !dir.is_empty() && !dir.contains(','),
            "run_dir",
            format_args!("{dir:?}"),
            "a directory path without commas",
        )?;
        I::check(
            self.iterations >= 1,
            "iterations",
            self.iterations,
            "1 or more",
        )?;
        let m = self.time_limit_minutes;
        I::check(
            m.is_finite() && m > 0.0,
            "time_limit_minutes",
            m,
            "a finite number > 0",
        )?;
        I::check(
            self.clock == ClockKind::Wall || cfg!(target_os = "linux"),
            "clock",
            "cpu",
            "wall (the CPU clock is read on Linux only)",
        )
    }

    /// Each other board's share, and the configured board's rest.
    fn check_other_boards(&self) -> Result<(), InvalidSetting> {
        use InvalidSetting as I;
        for &(size, share) in &self.other_boards {
            I::check(
                share > 0.0 && share < 1.0,
                "other_boards",
                format_args!("[{size}, {share}]"),
                "[size, share] pairs with each share above 0 and below 1",
            )?;
        }
        let shares: f64 = self.other_boards.iter().map(|b| b.1).sum();
        I::check(
            shares < 1.0,
            "other_boards",
            format_args!("shares adding up to {shares}"),
            "shares adding up to less than 1 (the configured board plays the rest)",
        )
    }

    /// Game counts, visits and the gate's settings.
    fn check_matches(&self) -> Result<(), InvalidSetting> {
        use InvalidSetting as I;
        let counts = [
            ("games_per_iteration", self.games_per_iteration as u64),
            ("gate_games", u64::from(self.gate_games)),
            ("gate_visits", self.gate_visits),
            ("eval_visits", self.eval_visits),
            ("eval_mcts_playouts", self.eval_mcts_playouts),
        ];
        for (key, n) in counts {
            I::check(n >= 1, key, n, "1 or more")?;
        }
        I::check(
            (0.0..=1.0).contains(&self.gate_threshold),
            "gate_threshold",
            self.gate_threshold,
            "0 to 1",
        )?;
        I::check(
            self.match_parallel <= 64,
            "match_parallel",
            self.match_parallel,
            "0 (one per core) to 64",
        )?;
        let t = self.gate_temperature;
        I::check(
            t.is_finite() && t >= 0.0,
            "gate_temperature",
            t,
            "a finite number ≥ 0",
        )
    }

    /// Model 0000 comes from `init_from` or from a fit on the bootstrap shards, not both.
    fn check_init(&self) -> Result<(), InvalidSetting> {
        InvalidSetting::check(
            self.init_from.is_none() || self.bootstrap_fit_steps == 0,
            "bootstrap_fit_steps",
            self.bootstrap_fit_steps,
            "0 when init_from gives model 0000",
        )
    }

    /// Self-play in fp32, or in int8 where the best model has its file (auto): `int8` would
    /// stop a run whose model 0000 has none, and fp16 is a GPU's arithmetic.
    fn check_selfplay_precision(&self) -> Result<(), InvalidSetting> {
        InvalidSetting::check(
            matches!(self.selfplay_precision, Precision::Fp32 | Precision::Auto),
            "selfplay_precision",
            self.selfplay_precision.as_str(),
            "fp32 or auto (int8 where fit.int8 wrote the best model's int8 file)",
        )
    }

    /// Every fixed opponent parses as an agent spec, and none is a network.
    fn check_ladder(&self) -> Result<(), InvalidSetting> {
        for (k, spec) in self.ladder_opponents.iter().enumerate() {
            let parsed = AgentSpec::parse(spec);
            InvalidSetting::check(
                parsed.is_ok() && !matches!(parsed, Ok(AgentSpec::Net { .. })),
                "ladder_opponents",
                format_args!("{spec:?} (entry {})", k + 1),
                "an agent spec of `engine match` other than `net` (models join the ladder by themselves)",
            )?;
        }
        Ok(())
    }

    /// The schedule's iterations increase and each names at least one visit.
    fn check_visit_schedule(&self) -> Result<(), InvalidSetting> {
        for (k, pair) in self.visit_schedule.iter().enumerate() {
            let after_previous = k == 0 || self.visit_schedule[k - 1].0 < pair.0;
            InvalidSetting::check(
                after_previous && pair.1 >= 1,
                "visit_schedule",
                format_args!("[{}, {}] (entry {})", pair.0, pair.1, k + 1),
                "[iteration, full_visits] pairs, the iterations increasing, full_visits 1 or more",
            )?;
        }
        Ok(())
    }

    /// The bootstrap settings that read shards need a directory of them.
    fn check_bootstrap_shards(&self) -> Result<(), InvalidSetting> {
        let uses_shards = self.bootstrap_fit_steps > 0 || self.bootstrap_samples > 0;
        InvalidSetting::check(
            self.bootstrap_shards.is_some() || !uses_shards,
            "bootstrap_shards",
            "none",
            "a directory when bootstrap_fit_steps or bootstrap_samples is set",
        )
    }

    /// The full_visits of iteration `i`'s self-play by `visit_schedule`: that of its last pair
    /// at or before `i`, else `full_visits` (the `selfplay` section's).
    pub fn full_visits_at(&self, i: u32, full_visits: u32) -> u32 {
        self.visit_schedule
            .iter()
            .take_while(|&&(at, _)| at <= i)
            .last()
            .map_or(full_visits, |&(_, visits)| visits)
    }

    /// An iteration's games on each of `other_boards` ([size, games] pairs, in order, each its
    /// share of `games_per_iteration` rounded), and the configured board's: the rest.
    pub fn games_by_board(&self) -> (usize, Vec<(usize, usize)>) {
        let total = self.games_per_iteration;
        let others: Vec<(usize, usize)> = self
            .other_boards
            .iter()
            .map(|&(size, share)| (size, (share * total as f64).round() as usize))
            .collect();
        let main = total.saturating_sub(others.iter().map(|b| b.1).sum());
        (main, others)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn other_boards_take_their_shares_and_the_configured_board_the_rest() {
        let c = TrainConfig {
            games_per_iteration: 96,
            other_boards: vec![(13, 0.2), (7, 0.1)],
            ..TrainConfig::default()
        };
        assert!(c.validate().is_ok());
        assert_eq!(c.games_by_board(), (67, vec![(13, 19), (7, 10)]));
        assert_eq!(TrainConfig::default().games_by_board(), (200, vec![]));
        for bad in [vec![(13, 0.0)], vec![(13, 1.0)], vec![(13, 0.6), (7, 0.5)]] {
            let c = TrainConfig {
                other_boards: bad,
                ..TrainConfig::default()
            };
            assert_eq!(c.validate().unwrap_err().key, "other_boards");
        }
    }

    #[test]
    fn every_train_key_out_of_range_is_named() {
        let d = TrainConfig::default;
        assert_eq!(d().validate(), Ok(()));
        let cases = [
            (
                TrainConfig {
                    gate_visits: 0,
                    ..d()
                },
                "gate_visits",
            ),
            (
                TrainConfig {
                    eval_visits: 0,
                    ..d()
                },
                "eval_visits",
            ),
            (
                TrainConfig {
                    eval_mcts_playouts: 0,
                    ..d()
                },
                "eval_mcts_playouts",
            ),
            (
                TrainConfig {
                    match_parallel: 65,
                    ..d()
                },
                "match_parallel",
            ),
            (
                TrainConfig {
                    gate_temperature: f32::NAN,
                    ..d()
                },
                "gate_temperature",
            ),
            (
                TrainConfig {
                    selfplay_precision: Precision::Int8,
                    ..d()
                },
                "selfplay_precision",
            ),
            (
                TrainConfig {
                    time_limit_minutes: f64::INFINITY,
                    ..d()
                },
                "time_limit_minutes",
            ),
            (
                TrainConfig {
                    run_dir: "".into(),
                    ..d()
                },
                "run_dir",
            ),
            (
                TrainConfig {
                    run_dir: "runs/a,b".into(),
                    ..d()
                },
                "run_dir",
            ),
            (
                TrainConfig {
                    iterations: 0,
                    ..d()
                },
                "iterations",
            ),
        ];
        for (config, key) in cases {
            assert_eq!(config.validate().unwrap_err().key, key);
        }
    }

    #[test]
    fn the_visit_schedule_takes_the_last_pair_at_or_before_the_iteration() {
        let c: TrainConfig =
            serde_yaml::from_str("visit_schedule: [[2, 50], [5, 100], [9, 400]]\n").unwrap();
        assert_eq!(c.validate(), Ok(()));
        let visits: Vec<u32> = (0..12).map(|i| c.full_visits_at(i, 200)).collect();
        assert_eq!(
            visits,
            [200, 200, 50, 50, 50, 100, 100, 100, 100, 400, 400, 400]
        );
        // Empty: the selfplay section's always.
        assert!((0..5).all(|i| TrainConfig::default().full_visits_at(i, 64) == 64));
        for bad in [
            vec![(0, 50), (0, 100)],
            vec![(3, 50), (1, 100)],
            vec![(0, 0)],
        ] {
            let c = TrainConfig {
                visit_schedule: bad,
                ..TrainConfig::default()
            };
            assert_eq!(c.validate().unwrap_err().key, "visit_schedule");
        }
    }
}

//! `engine train`: the AlphaZero loop. Each iteration plays self-play games with the best model,
//! trains the next candidate with `trainer-bridge fit` (a child process), gates it against the
//! best, measures the best against fixed opponents, and saves its progress. Killed at any point
//! and started again, it continues from `state.yaml`: finished shards and models are kept, an
//! interrupted step is redone.

pub mod cluster;
pub mod ladder;
mod report;
pub use report::ladder_svg;
pub mod state;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{bail, Context};
use eval::InvalidSetting;
use games::{Agent, Game};
use infer::{OrtOptions, Precision};
use players::matchplay::{play_match_parallel, AgentPair, Colours, Openings};
use progress::Progress;
use selfplay::Backend;
use serde::{Deserialize, Serialize};
use state::{model_files, IterationRecord, TrainState};

use players::spec::{self as agents, AgentSpec, OwnPlayers};
use setup::models;

/// The `train` section of a game's config.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TrainConfig {
    pub run_dir: PathBuf,
    pub iterations: u32,
    pub time_limit_minutes: f64,
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
}

impl Default for TrainConfig {
    fn default() -> Self {
        TrainConfig {
            run_dir: "runs/liuzhou".into(),
            iterations: 100,
            time_limit_minutes: 30.0,
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
        }
    }
}

impl TrainConfig {
    /// Range checks for the whole section, run at startup: the gate and the evaluation build
    /// their agents from these values only after a full self-play and fit.
    pub fn validate(&self) -> Result<(), InvalidSetting> {
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
        )?;
        I::check(
            self.init_from.is_none() || self.bootstrap_fit_steps == 0,
            "bootstrap_fit_steps",
            self.bootstrap_fit_steps,
            "0 when init_from gives model 0000",
        )?;
        for (k, spec) in self.ladder_opponents.iter().enumerate() {
            let parsed = AgentSpec::parse(spec);
            I::check(
                parsed.is_ok() && !matches!(parsed, Ok(AgentSpec::Net { .. })),
                "ladder_opponents",
                format_args!("{spec:?} (entry {})", k + 1),
                "an agent spec of `engine match` other than `net` (models join the ladder by themselves)",
            )?;
        }
        let uses_shards = self.bootstrap_fit_steps > 0 || self.bootstrap_samples > 0;
        I::check(
            self.bootstrap_shards.is_some() || !uses_shards,
            "bootstrap_shards",
            "none",
            "a directory when bootstrap_fit_steps or bootstrap_samples is set",
        )
    }
}

/// What the loop needs besides the `train` section: where things are, and the other sections,
/// read and checked before anything is created.
pub struct Setup<'a> {
    pub config_path: &'a Path,
    pub doc: &'a serde_yaml::Value,
    pub trainer: PathBuf,
    pub selfplay: selfplay::SelfplayConfig,
    pub inference: OrtOptions,
    /// The `network` section as written (trainer-bridge owns its meaning).
    pub network: serde_yaml::Mapping,
}

/// Runs the loop for `start`'s game until the iteration count or the time limit is reached;
/// returns the closing line (iterations, best model, report).
pub fn run<G: OwnPlayers>(
    start: &G,
    train: &TrainConfig,
    setup: &Setup<'_>,
) -> anyhow::Result<String> {
    let run_dir = &train.run_dir;
    let models_dir = run_dir.join("models");
    let shards_dir = run_dir.join("shards");
    let sp = &setup.selfplay;
    let config_text = serde_yaml::to_string(setup.doc)?;
    let gate_batch = setup.inference.batch_size;

    // Everything that can be checked is checked before the run directory is touched.
    if sp.backend == Backend::Ray && sp.ray.games_per_iteration() != train.games_per_iteration {
        bail!(
            "config {}: section `selfplay`: backend ray plays ray.tasks_per_iteration ({}) × \
             ray.games_per_task ({}) = {} games an iteration, but train.games_per_iteration is \
             {}: make them equal",
            setup.config_path.display(),
            sp.ray.tasks_per_iteration,
            sp.ray.games_per_task,
            sp.ray.games_per_iteration(),
            train.games_per_iteration
        );
    }
    let mut state = TrainState::load(run_dir)?;
    if state.initialised {
        let best = state.best;
        let (_, best_onnx) = model_files(&models_dir, best);
        if state.iterations == 0 && best == 0 && !best_onnx.exists() {
            // An earlier version saved the state after an `init` that wrote nothing: start over.
            tracing::warn!(
                "{} says the run is initialised but {} is missing: initialising again",
                TrainState::path(run_dir).display(),
                best_onnx.display()
            );
            state.initialised = false;
        } else {
            check_resume(start, &state, run_dir, setup)?;
        }
    }
    let needs_trainer = !state.initialised || state.iterations < train.iterations;
    if needs_trainer && !is_program(&setup.trainer) {
        let place = if setup.trainer.components().count() > 1 {
            format!("at {:?}", setup.trainer)
        } else {
            format!("beside the engine or on the PATH (as {:?})", setup.trainer)
        };
        bail!(
            "trainer-bridge not found {place}: build it (`cargo build --release -p \
             trainer-bridge`) or give its path with --trainer"
        );
    }

    // The directories this call creates, outermost first, to be removed if `init` fails.
    let created: Vec<&Path> = [run_dir.as_path(), &models_dir, &shards_dir]
        .into_iter()
        .filter(|d| !d.exists())
        .collect();
    for dir in [&models_dir, &shards_dir] {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    // trainer-bridge reads the config as this loop does: the built-in one with the user's
    // file merged over it, written out whole.
    let trainer_config = run_dir.join(TRAINER_CONFIG);
    let tmp = trainer_config.with_extension("yaml.tmp");
    std::fs::write(&tmp, &config_text)
        .and_then(|()| std::fs::rename(&tmp, &trainer_config))
        .with_context(|| format!("writing {}", trainer_config.display()))?;
    let clock = Instant::now();
    let earlier = state.elapsed_seconds;
    let elapsed = |state_secs: f64| state_secs + clock.elapsed().as_secs_f64();
    let limit = train.time_limit_minutes * 60.0;
    tracing::info!(
        "training {} in {} (iteration {}, best model {:04}, {:.0} s used so far)",
        G::NAME,
        run_dir.display(),
        state.iterations,
        state.best,
        earlier
    );

    if !state.initialised {
        let init = || -> anyhow::Result<()> {
            let (ckpt, onnx) = model_files(&models_dir, 0);
            if !(ckpt.exists() && onnx.exists()) {
                first_model(train, setup, G::NAME, &models_dir, &trainer_config)?;
            }
            if let Some(dir) = &train.bootstrap_shards {
                keep_bootstrap_shards(dir, &shards_dir, train.bootstrap_samples)?;
            }
            // The state says "initialised" only once model 0 really is there and usable.
            check_model(start, &models_dir, 0, setup, "trainer-bridge init")
        };
        if let Err(e) = init() {
            // Leave no empty directories behind; `remove_dir` keeps any that were written to.
            if !created.is_empty() {
                let _ = std::fs::remove_file(&trainer_config);
            }
            for dir in created.iter().rev() {
                let _ = std::fs::remove_dir(dir);
            }
            return Err(e);
        }
        state.initialised = true;
        state.save(run_dir)?;
    }

    let matches = Matches::new(setup, train);
    // Started when the first iteration needs the cluster; kept for the run.
    let mut ray: Option<cluster::RayDriver> = None;
    while state.iterations < train.iterations && elapsed(earlier) < limit {
        let i = state.iterations;
        let candidate = i + 1;
        let (_, best_onnx) = model_files(&models_dir, state.best);

        // 1. Self-play with the best model, up to the iteration's game count (resumable: games
        //    already in this iteration's shards count).
        let tag = format!("i{i:04}");
        let sp_rate = match sp.backend {
            Backend::Local => local_selfplay(
                start,
                setup,
                train,
                i,
                &best_onnx,
                &shards_dir,
                &tag,
                &config_text,
            )?,
            Backend::Ray => ray_iteration(
                G::NAME,
                &mut ray,
                setup,
                train,
                i,
                &best_onnx,
                &shards_dir,
                &tag,
            )?,
        };

        // 2. Train the candidate from the latest weights (the previous candidate) on the newest
        //    shards.
        let (cand_ckpt, cand_onnx) = model_files(&models_dir, candidate);
        if !(cand_ckpt.exists() && cand_onnx.exists()) {
            let fit_started = Instant::now();
            let (from, _) = model_files(&models_dir, i);
            trainer(setup, &["fit"])
                .arg(&shards_dir)
                .arg("--model")
                .arg(&from)
                .arg("--out")
                .arg(&models_dir)
                .args(["--name", &format!("{candidate:04}")])
                .arg("--config")
                .arg(&trainer_config)
                .arg("--log")
                .arg(run_dir.join("losses.jsonl"))
                .status_ok("trainer-bridge fit")?;
            check_files(&models_dir, candidate, "trainer-bridge fit")?;
            tracing::info!(
                "iteration {i}: fit {candidate:04} in {:.0} s",
                fit_started.elapsed().as_secs_f64()
            );
        }

        // 3. Gate: the candidate against the best. Agents are built from the same specs
        //    `engine match` takes, so the loop's figures can be reproduced with it.
        let net_spec = |onnx: &Path, visits: u64, temperature: f32| {
            format!(
                "net:model={},visits={visits},temp={temperature}",
                onnx.display()
            )
        };
        // The gate gathers whole evaluator batches: it only compares two models under the same
        // search, and a few leaves per call would make it several times slower.
        let gate_spec = |onnx: &Path| {
            format!(
                "{},batch={}",
                net_spec(onnx, train.gate_visits, train.gate_temperature),
                gate_batch
            )
        };
        let gate_started = Instant::now();
        let gate = matches.play(
            start,
            (&gate_spec(&cand_onnx), train.seed.wrapping_add(11)),
            (&gate_spec(&best_onnx), train.seed.wrapping_add(12)),
            train.gate_games,
            &format!("iteration {i}: gate"),
        )?;
        let best_before = state.best;
        let promoted = gate >= train.gate_threshold;
        if promoted {
            state.best = candidate;
        }
        tracing::info!(
            "iteration {i}: candidate {candidate:04} scored {:.1}% against {best_before:04}: {} ({} games in {:.0} s)",
            100.0 * gate,
            if promoted {
                "promoted"
            } else {
                "kept the best"
            },
            train.gate_games,
            gate_started.elapsed().as_secs_f64()
        );

        // 4. The rating ladder: the best model against the fixed opponents and earlier bests,
        //    the fixed opponents among themselves, each pairing once per run (kept in the
        //    state); the agents' seeds are fixed, so a pairing played again would repeat itself.
        let (_, best_onnx) = model_files(&models_dir, state.best);
        let me_name = ladder::model_name(state.best);
        let earlier_bests = earlier_bests(&state, train.ladder_previous_bests);
        let mcts = format!("mcts:visits={}", train.eval_mcts_playouts);
        let me = net_spec(&best_onnx, train.eval_visits, 0.0);
        let mut rung = Rung {
            matches: &matches,
            start,
            games: train.eval_games,
            results: &mut state.ladder,
        };
        let score_vs = |results: &[ladder::LadderGames], other: &str| {
            results
                .iter()
                .find(|r| r.a == me_name && r.b == other)
                .map_or(f64::NAN, |r| r.score / f64::from(r.games.max(1)))
        };
        if train.eval_games > 0 {
            if ladder::played(rung.results, &me_name, ladder::ANCHOR)
                && ladder::played(rung.results, &me_name, &mcts)
            {
                tracing::info!(
                    "iteration {i}: best {:04} unchanged: its scores carried over",
                    state.best
                );
            }
            let seeds = train.seed.wrapping_add(13);
            rung.play(
                (&me_name, &me),
                (ladder::ANCHOR, ladder::ANCHOR),
                seeds,
                "  vs random",
            )?;
            rung.play((&me_name, &me), (&mcts, &mcts), seeds + 2, "  vs pure MCTS")?;
            let fixed: Vec<&str> = [ladder::ANCHOR, mcts.as_str()]
                .into_iter()
                .chain(train.ladder_opponents.iter().map(String::as_str))
                .collect();
            for (k, &o) in fixed.iter().enumerate().skip(2) {
                rung.play(
                    (&me_name, &me),
                    (o, o),
                    seeds + 2 * k as u64,
                    &format!("  vs {o}"),
                )?;
            }
            for (k, &x) in fixed.iter().enumerate() {
                for &y in &fixed[k + 1..] {
                    rung.play(
                        (x, x),
                        (y, y),
                        seeds + 100,
                        &format!("  ladder: {x} vs {y}"),
                    )?;
                }
            }
            for (k, &earlier) in earlier_bests.iter().enumerate() {
                let (_, onnx) = model_files(&models_dir, earlier);
                let spec = net_spec(&onnx, train.eval_visits, 0.0);
                let name = ladder::model_name(earlier);
                let what = format!("  vs {name}");
                rung.play(
                    (&me_name, &me),
                    (&name, &spec),
                    seeds + 200 + 2 * k as u64,
                    &what,
                )?;
            }
        }
        let (vs_random, vs_mcts) = (
            score_vs(&state.ladder, ladder::ANCHOR),
            score_vs(&state.ladder, &mcts),
        );
        let rating = ladder::rating_of(&state.ladder, &me_name);
        // With the ladder off there are no scores to tell.
        if train.eval_games > 0 {
            tracing::info!(
                "iteration {i}: best {:04} scores {:.0}% against random, {:.0}% against pure MCTS ({} playouts){}",
                state.best,
                100.0 * vs_random,
                100.0 * vs_mcts,
                train.eval_mcts_playouts,
                rating.map_or(String::new(), |(elo, half)| format!(
                    "; rated {elo:+.0} ± {half:.0} Elo (random = 0)"
                ))
            );
        }
        state.iterations += 1;
        state.elapsed_seconds = elapsed(earlier);
        state.history.push(IterationRecord {
            iteration: i,
            candidate,
            best_before,
            gate_score: gate,
            promoted,
            vs_random,
            vs_mcts,
            rating: rating.map(|r| r.0),
            rating_half_width: rating.map(|r| r.1),
            selfplay_games: train.games_per_iteration,
            selfplay_positions_per_second: sp_rate,
            elapsed_seconds: state.elapsed_seconds,
        });
        state.save(run_dir)?;
        report::write(run_dir, &state, train)?;
        // The shipped best model is also kept under a stable name.
        let (best_ckpt, best_onnx) = model_files(&models_dir, state.best);
        for (from, to) in [(&best_ckpt, "best.safetensors"), (&best_onnx, "best.onnx")] {
            std::fs::copy(from, run_dir.join(to))
                .with_context(|| format!("copying {} to {to}", from.display()))?;
        }
        // With its int8 model where `fit.int8` wrote one; one of an earlier best is stale.
        let (int8, kept) = (
            infer::precision::int8_path(&best_onnx),
            run_dir.join("best.int8.onnx"),
        );
        if int8.exists() {
            std::fs::copy(&int8, &kept)
                .with_context(|| format!("copying {} to best.int8.onnx", int8.display()))?;
        } else if kept.exists() {
            std::fs::remove_file(&kept).with_context(|| format!("removing {}", kept.display()))?;
        }
    }
    state.elapsed_seconds = elapsed(earlier);
    state.save(run_dir)?;
    Ok(format!(
        "{} iterations, best model {:04} ({}), report {}",
        state.iterations,
        state.best,
        run_dir.join("best.onnx").display(),
        run_dir.join("report.svg").display()
    ))
}

/// The loop plays its own models in fp32 whatever the config's precision: its models have no
/// int8 files unless `fit.int8` writes them, and a gate compares two models in one arithmetic.
const FP32: models::Overrides = models::Overrides {
    provider: None,
    precision: Some(Precision::Fp32),
    intra_threads: None,
};

/// The loop's matches (gate and evaluation): several games at once, agents built from
/// `engine match`'s specs.
struct Matches<'a> {
    setup: &'a Setup<'a>,
    /// Games played at once.
    parallel: u32,
    /// Each network's share of the cores (one side of a game thinks at a time).
    overrides: models::Overrides,
}

impl<'a> Matches<'a> {
    fn new(setup: &'a Setup<'a>, train: &TrainConfig) -> Self {
        let parallel = match train.match_parallel {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()) as u32,
            n => n,
        };
        Matches {
            setup,
            parallel,
            overrides: models::Overrides {
                precision: FP32.precision,
                ..models::Overrides::sharing_cores(parallel)
            },
        }
    }

    /// A's score against B over `games` games with colours alternating, each side given as
    /// (agent spec, seed). Pair k of agents gets seeds offset by 2k, so the result depends on
    /// the seeds and the number of games at once, not on the threads' timing.
    fn play<G: OwnPlayers>(
        &self,
        start: &G,
        (a, seed_a): (&str, u64),
        (b, seed_b): (&str, u64),
        games: u32,
        what: &str,
    ) -> anyhow::Result<f64> {
        let load_net = |model: Option<&Path>| {
            let model = model.context("the training loop names every model it plays")?;
            models::evaluator_with(
                start,
                &model.to_string_lossy(),
                self.setup.doc,
                self.setup.config_path,
                self.overrides,
            )
        };
        let agent = |spec: &str, seed: u64| -> anyhow::Result<Box<dyn Agent<G>>> {
            agents::build(&AgentSpec::parse(spec)?, spec, seed, &load_net)
        };
        let mut pairs: Vec<AgentPair<G>> = Vec::new();
        for k in 0..u64::from(self.parallel.min(games)) {
            pairs.push((
                agent(a, seed_a.wrapping_add(2 * k))?,
                agent(b, seed_b.wrapping_add(2 * k))?,
            ));
        }
        let bar = progress(u64::from(games), what);
        let result = play_match_parallel(
            start,
            &mut pairs,
            games,
            10_000,
            Colours::Alternate,
            Openings::default(),
            |_, _, _, _| bar.inc(1),
        )?;
        bar.finish();
        tracing::info!(
            what,
            wins = result.wins,
            draws = result.draws,
            losses = result.losses,
            endings = %result.endings_text(),
            "match played"
        );
        Ok(result.score())
    }
}

/// The run's ladder results and how to add to them.
struct Rung<'a, 'm, G> {
    matches: &'a Matches<'m>,
    start: &'a G,
    games: u32,
    results: &'a mut Vec<ladder::LadderGames>,
}

impl<G: OwnPlayers> Rung<'_, '_, G> {
    /// Plays `a` against `b` (each a ladder name and an agent spec) unless they have met.
    fn play(
        &mut self,
        (a, a_spec): (&str, &str),
        (b, b_spec): (&str, &str),
        seed: u64,
        what: &str,
    ) -> anyhow::Result<()> {
        if ladder::played(self.results, a, b) {
            return Ok(());
        }
        let score = self.matches.play(
            self.start,
            (a_spec, seed),
            (b_spec, seed.wrapping_add(1)),
            self.games,
            what,
        )?;
        self.results.push(ladder::LadderGames {
            a: a.to_string(),
            b: b.to_string(),
            games: self.games,
            score: score * f64::from(self.games),
        });
        Ok(())
    }
}

/// The best models before the current one, the most recent first, at most `n`.
fn earlier_bests(state: &TrainState, n: u32) -> Vec<u32> {
    let mut bests = vec![0];
    bests.extend(
        state
            .history
            .iter()
            .filter(|r| r.promoted)
            .map(|r| r.candidate),
    );
    bests.retain(|&b| b != state.best);
    bests.dedup();
    bests.into_iter().rev().take(n as usize).collect()
}

/// Plays what iteration `i` still lacks of its games in this process, with `best_onnx`;
/// returns the positions per second (0 when nothing was left to play).
#[allow(clippy::too_many_arguments)]
fn local_selfplay<G: OwnPlayers>(
    start: &G,
    setup: &Setup<'_>,
    train: &TrainConfig,
    i: u32,
    best_onnx: &Path,
    shards_dir: &Path,
    tag: &str,
    config_text: &str,
) -> anyhow::Result<f64> {
    let done = games_in_shards(shards_dir, tag)?;
    let todo = train.games_per_iteration.saturating_sub(done);
    if todo == 0 {
        return Ok(0.0);
    }
    let model = best_onnx.to_string_lossy();
    let evaluator = models::evaluator_with(start, &model, setup.doc, setup.config_path, FP32)?;
    let bar = progress(todo as u64, &format!("iteration {i}: self-play"));
    let sink = selfplay::ShardSink {
        dir: shards_dir,
        tag,
        model: &model,
        config: config_text,
    };
    let seed = train.seed ^ (u64::from(i) << 20) ^ done as u64;
    let summary = selfplay::run(
        start,
        evaluator.as_ref(),
        &setup.selfplay,
        todo,
        &sink,
        seed,
        |s| {
            bar.set_message(format!("{:.0} positions/s", s.positions_per_second()));
            bar.set_position(s.games as u64);
        },
    )?;
    bar.finish();
    tracing::info!("iteration {i}: self-play: {}", summary.line());
    Ok(summary.positions_per_second())
}

/// Plays the tasks of iteration `i` whose shards are missing on the cluster, starting the
/// driver in `ray` if it is not running; returns the positions per second (0 when nothing was
/// left to play).
#[allow(clippy::too_many_arguments)]
fn ray_iteration(
    game: &str,
    ray: &mut Option<cluster::RayDriver>,
    setup: &Setup<'_>,
    train: &TrainConfig,
    i: u32,
    best_onnx: &Path,
    shards_dir: &Path,
    tag: &str,
) -> anyhow::Result<f64> {
    let sp = &setup.selfplay;
    let model_name = best_onnx.to_string_lossy();
    let seed = train.seed ^ (u64::from(i) << 20);
    let stamp = cluster::batch_stamp(shards_dir, tag)?;
    let games = train.games_per_iteration;
    let tasks = cluster::plan(games, sp.ray.games_per_task, tag, stamp, seed);
    cluster::keep_current(shards_dir, &tasks, game, &model_name)?;
    let todo: Vec<cluster::Task> = tasks
        .into_iter()
        .filter(|t| !shards_dir.join(&t.file).exists())
        .collect();
    if todo.is_empty() {
        return Ok(0.0);
    }
    let driver = match ray {
        Some(d) => d,
        None => ray.insert(cluster::RayDriver::start(
            &sp.ray,
            &std::env::current_exe()?,
        )?),
    };
    let task_config = cluster::task_config(setup.doc, &sp.ray);
    let batch = cluster::Batch {
        game,
        model: best_onnx,
        model_name: &model_name,
        config: &task_config,
        out_dir: shards_dir,
        tasks: &todo,
    };
    let played = ray_selfplay(driver, &batch, &format!("iteration {i}"))?;
    Ok(played.positions_per_second())
}

/// Plays `batch` on the cluster with a progress bar of its games; `what` names it in the log.
pub fn ray_selfplay(
    driver: &mut cluster::RayDriver,
    batch: &cluster::Batch<'_>,
    what: &str,
) -> anyhow::Result<cluster::Played> {
    let games: usize = batch.tasks.iter().map(|t| t.games).sum();
    let bar = progress(games as u64, &format!("{what}: self-play on Ray"));
    let began = Instant::now();
    let mut positions = 0;
    let played = driver.selfplay(batch, |e| {
        if let cluster::Event::Shard {
            games,
            positions: p,
            ..
        } = e
        {
            positions += p;
            let rate = positions as f64 / began.elapsed().as_secs_f64().max(1e-9);
            bar.set_message(format!("{rate:.0} positions/s"));
            bar.inc(*games as u64);
        }
    })?;
    bar.finish();
    tracing::info!(
        "{what}: self-play on Ray: {} tasks, {} games, {} positions ({:.1}/s) in {:.1} s; {} \
         shards already there",
        played.written,
        played.games,
        played.positions,
        played.positions_per_second(),
        played.seconds,
        played.skipped
    );
    Ok(played)
}

fn progress(len: u64, what: &str) -> Progress {
    Progress::new(len, what, "games")
}

/// Games recorded in the shards tagged `tag` (the shards of one iteration).
fn games_in_shards(dir: &Path, tag: &str) -> anyhow::Result<usize> {
    let needle = format!("-{tag}-");
    let mut games = 0;
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name.contains(&needle) && name.ends_with(shards::EXTENSION) && !name.starts_with('.') {
            match shards::ShardMeta::read(&path) {
                Ok((meta, _)) => games += meta.games,
                Err(e) => tracing::warn!("ignoring {e}"),
            }
        }
    }
    Ok(games)
}

/// The config trainer-bridge reads, in the run directory: the loop's whole config.
pub const TRAINER_CONFIG: &str = "config.yaml";

/// A `trainer-bridge` command with its first arguments.
fn trainer(setup: &Setup<'_>, args: &[&str]) -> Command {
    let mut c = Command::new(&setup.trainer);
    c.args(args);
    die_with_this_thread(&mut c);
    c
}

/// Makes the child get SIGKILL when the thread that starts it ends (on Linux): a killed
/// `engine train` must not leave its `trainer-bridge fit` running, or the restarted loop would
/// fit the same candidate twice at once. The loop starts its children from the thread that runs
/// it for their whole life.
#[cfg(target_os = "linux")]
fn die_with_this_thread(c: &mut Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: only async-signal-safe calls (prctl, getppid) run between fork and exec.
    let parent = std::process::id();
    unsafe {
        c.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) == -1 {
                return Err(std::io::Error::last_os_error());
            }
            // The parent may have died before the request took effect.
            if libc::getppid() as u32 != parent {
                libc::_exit(1);
            }
            Ok(())
        });
    }
}

#[cfg(not(target_os = "linux"))]
fn die_with_this_thread(_: &mut Command) {}

trait StatusOk {
    fn status_ok(&mut self, what: &str) -> anyhow::Result<()>;
}

impl StatusOk for Command {
    fn status_ok(&mut self, what: &str) -> anyhow::Result<()> {
        tracing::info!("running {what}: {:?}", self);
        let status = self
            .status()
            .with_context(|| format!("starting {what} ({:?})", self.get_program()))?;
        if !status.success() {
            bail!("{what} failed ({status})");
        }
        Ok(())
    }
}

/// Model `n`'s checkpoint and ONNX file exist; `who` is the step that should have written them.
fn check_files(models_dir: &Path, n: u32, who: &str) -> anyhow::Result<()> {
    let (ckpt, onnx) = model_files(models_dir, n);
    for file in [&ckpt, &onnx] {
        if !file.is_file() {
            bail!(
                "{who} reported success but did not write {}",
                file.display()
            );
        }
    }
    Ok(())
}

/// Model `n` exists, loads, is for `start`'s game and has the config's network shape.
/// Writes model 0000: a copy of `init_from`, or a fresh network, fitted on the bootstrap
/// shards when asked. The fresh network is written under another name first, so that 0000
/// exists only once it is what the config asks for.
fn first_model(
    train: &TrainConfig,
    setup: &Setup<'_>,
    game: &str,
    models_dir: &Path,
    trainer_config: &Path,
) -> anyhow::Result<()> {
    let (ckpt, onnx) = model_files(models_dir, 0);
    if let Some(from) = &train.init_from {
        let from_onnx = from.with_extension("onnx");
        for (src, dst) in [(&from_onnx, &onnx), (from, &ckpt)] {
            let tmp = dst.with_extension("tmp");
            std::fs::copy(src, &tmp)
                .with_context(|| format!("train.init_from: copying {}", src.display()))?;
            std::fs::rename(&tmp, dst)?;
        }
        return Ok(());
    }
    let fresh = if train.bootstrap_fit_steps > 0 {
        "fresh"
    } else {
        "0000"
    };
    trainer(setup, &["init", "--game", game])
        .arg("--seed")
        .arg(train.seed.to_string())
        .arg("--config")
        .arg(trainer_config)
        .arg("--out")
        .arg(models_dir.join(fresh))
        .status_ok("trainer-bridge init")?;
    if let (Some(dir), true) = (&train.bootstrap_shards, train.bootstrap_fit_steps > 0) {
        let started = Instant::now();
        trainer(setup, &["fit"])
            .arg(dir)
            .arg("--model")
            .arg(models_dir.join("fresh.safetensors"))
            .arg("--out")
            .arg(models_dir)
            .args(["--name", "0000"])
            .args(["--steps", &train.bootstrap_fit_steps.to_string()])
            .arg("--config")
            .arg(trainer_config)
            .status_ok("trainer-bridge fit (model 0000 on the bootstrap shards)")?;
        tracing::info!(
            "model 0000: {} steps on {} in {:.0} s",
            train.bootstrap_fit_steps,
            dir.display(),
            started.elapsed().as_secs_f64()
        );
        for ext in ["safetensors", "onnx"] {
            let _ = std::fs::remove_file(models_dir.join(format!("fresh.{ext}")));
        }
    }
    Ok(())
}

/// Links (or copies) the newest shards of `from`, up to `samples` positions, into the run's
/// shard directory, where the fits read them beside self-play.
fn keep_bootstrap_shards(from: &Path, shards_dir: &Path, samples: usize) -> anyhow::Result<()> {
    let mut kept = 0;
    for path in shards::newest_first(from)? {
        if kept >= samples {
            break;
        }
        let (_, positions) = shards::ShardMeta::read(&path)?;
        let name = path.file_name().context("a shard has a file name")?;
        let dst = shards_dir.join(name);
        if !dst.exists() && std::fs::hard_link(&path, &dst).is_err() {
            let tmp = dst.with_extension("tmp");
            std::fs::copy(&path, &tmp)
                .with_context(|| format!("copying bootstrap shard {}", path.display()))?;
            std::fs::rename(&tmp, &dst)?;
        }
        kept += positions;
    }
    tracing::info!(
        "{kept} bootstrap positions from {} in the replay window",
        from.display()
    );
    Ok(())
}

fn check_model<G: Game>(
    start: &G,
    models_dir: &Path,
    n: u32,
    setup: &Setup<'_>,
    who: &str,
) -> anyhow::Result<()> {
    check_files(models_dir, n, who)?;
    let (_, onnx) = model_files(models_dir, n);
    // One state per call on the CPU: only the metadata and the interface are wanted here.
    let opts = OrtOptions {
        batch_size: 1,
        intra_threads: 1,
        provider: infer::Provider::Cpu,
        ..OrtOptions::default()
    };
    let model = infer::OrtEvaluator::load(&onnx, start, &opts)?;
    let stored = &model.model().info().network;
    if let Some(difference) = network_difference(&setup.network, stored)? {
        let config: serde_json::Value = serde_json::to_value(&setup.network)?;
        bail!(
            "config {}: section `network` {config} does not match the network the run's models \
             were made with, {stored} (in {}): {difference}. Resume with the run's network \
             section, or start a new run_dir",
            setup.config_path.display(),
            onnx.display()
        );
    }
    Ok(())
}

/// The first key of the config's `network` section whose value differs from the network a
/// model was made with (its metadata, as JSON), in words; `None` when they agree. Keys the
/// config leaves out take trainer-bridge's defaults and are not compared.
fn network_difference(
    config: &serde_yaml::Mapping,
    stored: &str,
) -> anyhow::Result<Option<String>> {
    let stored: serde_json::Map<String, serde_json::Value> = serde_json::from_str(stored)
        .with_context(|| format!("the model's `network` metadata {stored:?} is not a JSON map"))?;
    for (key, value) in config {
        let key = key.as_str().unwrap_or("?");
        let want = value.as_u64();
        let have = stored.get(key).and_then(|v| v.as_u64());
        if want != have {
            let have = have.map_or("absent".to_string(), |h| h.to_string());
            let want = want.map_or("?".to_string(), |w| w.to_string());
            return Ok(Some(format!(
                "`{key}` is {want} in the config but {have} in the run"
            )));
        }
    }
    Ok(None)
}

/// A resumed run has the models its state names, made with the config's network.
fn check_resume<G: Game>(
    start: &G,
    state: &TrainState,
    run_dir: &Path,
    setup: &Setup<'_>,
) -> anyhow::Result<()> {
    let models_dir = &run_dir.join("models");
    let damaged = |file: &Path| {
        anyhow::anyhow!(
            "{} says model {:04} is the best after {} iterations, but {} is missing: the run \
             directory is damaged (restore the file or start a new run_dir)",
            TrainState::path(run_dir).display(),
            state.best,
            state.iterations,
            file.display()
        )
    };
    // The best model plays; the newest one is where the next fit starts.
    let (best_ckpt, best_onnx) = model_files(models_dir, state.best);
    let (latest_ckpt, _) = model_files(models_dir, state.iterations);
    for file in [&best_onnx, &best_ckpt, &latest_ckpt] {
        if !file.is_file() {
            return Err(damaged(file));
        }
    }
    check_model(start, models_dir, state.best, setup, "an earlier run")
}

/// Whether `program` names a file, or (a bare name) a file on the PATH, as `Command` finds it.
fn is_program(program: &Path) -> bool {
    if program.components().count() > 1 {
        return program.is_file();
    }
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|d| d.join(program).is_file()))
}

/// The `trainer-bridge` binary: `--trainer`, else next to this executable, else on the PATH.
pub fn find_trainer(explicit: Option<PathBuf>) -> PathBuf {
    if let Some(p) = explicit {
        return p;
    }
    let beside = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|d| d.join("trainer-bridge")));
    match beside {
        Some(p) if p.exists() => p,
        _ => PathBuf::from("trainer-bridge"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn network_difference_names_the_first_differing_key() {
        let config: serde_yaml::Mapping =
            serde_yaml::from_str("blocks: 4\nchannels: 32\n").unwrap();
        let stored = r#"{"blocks":4,"channels":48,"value_hidden":64}"#;
        let d = network_difference(&config, stored).unwrap().unwrap();
        assert_eq!(d, "`channels` is 32 in the config but 48 in the run");
        let same: serde_yaml::Mapping = serde_yaml::from_str("blocks: 4\nchannels: 48\n").unwrap();
        assert_eq!(network_difference(&same, stored).unwrap(), None);
        let typo: serde_yaml::Mapping = serde_yaml::from_str("chanels: 48\n").unwrap();
        let d = network_difference(&typo, stored).unwrap().unwrap();
        assert!(
            d.contains("`chanels` is 48 in the config but absent"),
            "{d}"
        );
        assert!(network_difference(&same, "not json").is_err());
    }
}

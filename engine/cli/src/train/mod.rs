//! `engine train`: the AlphaZero loop. Each iteration plays self-play games with the best model,
//! trains the next candidate with `trainer-bridge fit` (a child process), gates it against the
//! best, measures the best against fixed opponents, and saves its progress. Killed at any point
//! and started again, it continues from `state.yaml`: finished shards and models are kept, an
//! interrupted step is redone.

mod report;
pub mod state;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{bail, Context};
use games::{Agent, Game};
use indicatif::{ProgressBar, ProgressStyle};
use serde::{Deserialize, Serialize};
use state::{model_files, IterationRecord, TrainState};

use crate::agents::{self, AgentSpec};
use crate::models;

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
    pub seed: u64,
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
            seed: 1,
        }
    }
}

impl TrainConfig {
    pub fn validate(&self) -> Result<(), String> {
        if self.games_per_iteration == 0 || self.gate_games == 0 {
            return Err("games_per_iteration and gate_games must be at least 1".into());
        }
        if !(0.0..=1.0).contains(&self.gate_threshold) {
            return Err("gate_threshold must lie in [0, 1]".into());
        }
        if self.time_limit_minutes <= 0.0 {
            return Err("time_limit_minutes must be positive".into());
        }
        Ok(())
    }
}

/// What the loop needs besides the config sections: where things are.
pub struct Setup<'a> {
    pub config_path: &'a Path,
    pub doc: &'a serde_yaml::Value,
    pub trainer: PathBuf,
}

/// Runs the loop for `start`'s game until the iteration count or the time limit is reached.
pub fn run<G: Game>(start: &G, train: &TrainConfig, setup: &Setup<'_>) -> anyhow::Result<()> {
    let run_dir = &train.run_dir;
    let models_dir = run_dir.join("models");
    let shards_dir = run_dir.join("shards");
    std::fs::create_dir_all(&models_dir)
        .with_context(|| format!("creating {}", models_dir.display()))?;
    std::fs::create_dir_all(&shards_dir)?;
    let sp: selfplay::SelfplayConfig =
        crate::config::section(setup.doc, "selfplay", setup.config_path)?;
    sp.validate()
        .map_err(anyhow::Error::msg)
        .context("config section `selfplay`")?;
    let config_text = serde_yaml::to_string(setup.doc)?;
    let inference: infer::onnx::OrtOptions =
        crate::config::section(setup.doc, "inference", setup.config_path)?;
    let gate_batch = inference.batch_size.max(1);

    let mut state = TrainState::load(run_dir)?;
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
        let (ckpt, onnx) = model_files(&models_dir, 0);
        if !(ckpt.exists() && onnx.exists()) {
            trainer(setup, &["init", "--game", G::NAME])
                .arg("--config")
                .arg(setup.config_path)
                .arg("--out")
                .arg(models_dir.join("0000"))
                .status_ok("trainer-bridge init")?;
        }
        state.initialised = true;
        state.save(run_dir)?;
    }

    while state.iterations < train.iterations && elapsed(earlier) < limit {
        let i = state.iterations;
        let candidate = i + 1;
        let (_, best_onnx) = model_files(&models_dir, state.best);

        // 1. Self-play with the best model, up to the iteration's game count (resumable: games
        //    already in this iteration's shards count).
        let tag = format!("i{i:04}");
        let done = games_in_shards(&shards_dir, &tag)?;
        let todo = train.games_per_iteration.saturating_sub(done);
        let mut sp_rate = 0.0;
        if todo > 0 {
            let evaluator = models::evaluator(
                start,
                &best_onnx.to_string_lossy(),
                setup.doc,
                setup.config_path,
            )?;
            let bar = progress(todo as u64, &format!("iteration {i}: self-play"));
            let sink = selfplay::ShardSink {
                dir: &shards_dir,
                tag: &tag,
                model: &best_onnx.to_string_lossy(),
                config: &config_text,
            };
            let seed = train.seed ^ (u64::from(i) << 20) ^ done as u64;
            let summary = selfplay::run(start, evaluator.as_ref(), &sp, todo, &sink, seed, |s| {
                bar.set_position(s.games as u64);
                bar.set_message(format!("{:.0} positions/s", s.positions_per_second()));
            })?;
            bar.finish_and_clear();
            sp_rate = summary.positions_per_second();
            tracing::info!("iteration {i}: self-play: {}", summary.line());
        }

        // 2. Train the candidate from the latest weights (the previous candidate) on the newest
        //    shards.
        let (cand_ckpt, cand_onnx) = model_files(&models_dir, candidate);
        if !(cand_ckpt.exists() && cand_onnx.exists()) {
            let (from, _) = model_files(&models_dir, i);
            trainer(setup, &["fit"])
                .arg(&shards_dir)
                .arg("--model")
                .arg(&from)
                .arg("--out")
                .arg(&models_dir)
                .args(["--name", &format!("{candidate:04}")])
                .arg("--config")
                .arg(setup.config_path)
                .arg("--log")
                .arg(run_dir.join("losses.jsonl"))
                .status_ok("trainer-bridge fit")?;
        }

        // 3. Gate: the candidate against the best. Agents are built from the same specs
        //    `engine match` takes, so the loop's figures can be reproduced with it.
        let agent = |spec: String, seed: u64| -> anyhow::Result<Box<dyn Agent<G>>> {
            let load_net = |model: &Path| {
                models::evaluator(
                    start,
                    &model.to_string_lossy(),
                    setup.doc,
                    setup.config_path,
                )
            };
            let no_game_agents = |kind: &str| -> anyhow::Result<Box<dyn Agent<G>>> {
                anyhow::bail!("the training loop has no agent {kind:?}")
            };
            let parsed = AgentSpec::parse(&spec)?;
            agents::build(&parsed, &spec, seed, &load_net, &no_game_agents)
        };
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
        let mut cand = agent(gate_spec(&cand_onnx), train.seed + 11)?;
        let mut best = agent(gate_spec(&best_onnx), train.seed + 12)?;
        let gate = play(
            start,
            &mut *cand,
            &mut *best,
            train.gate_games,
            &format!("iteration {i}: gate"),
        )?;
        let best_before = state.best;
        let promoted = gate >= train.gate_threshold;
        if promoted {
            state.best = candidate;
        }
        tracing::info!(
            "iteration {i}: candidate {candidate:04} scored {:.1}% against {best_before:04}: {}",
            100.0 * gate,
            if promoted {
                "promoted"
            } else {
                "kept the best"
            }
        );

        // 4. The best model against fixed opponents.
        let (_, best_onnx) = model_files(&models_dir, state.best);
        let (vs_random, vs_mcts) = if train.eval_games > 0 {
            let mut me = agent(
                net_spec(&best_onnx, train.eval_visits, 0.0),
                train.seed + 13,
            )?;
            let mut random = agent("random".into(), train.seed + 14)?;
            let r = play(
                start,
                &mut *me,
                &mut *random,
                train.eval_games,
                "  vs random",
            )?;
            let mut mcts = agent(
                format!("mcts:visits={}", train.eval_mcts_playouts),
                train.seed + 15,
            )?;
            let m = play(
                start,
                &mut *me,
                &mut *mcts,
                train.eval_games,
                "  vs pure MCTS",
            )?;
            (r, m)
        } else {
            (f64::NAN, f64::NAN)
        };
        tracing::info!(
            "iteration {i}: best {:04} scores {:.0}% against random, {:.0}% against pure MCTS ({} playouts)",
            state.best,
            100.0 * vs_random,
            100.0 * vs_mcts,
            train.eval_mcts_playouts
        );

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
            selfplay_games: train.games_per_iteration,
            selfplay_positions_per_second: sp_rate,
            elapsed_seconds: state.elapsed_seconds,
        });
        state.save(run_dir)?;
        report::write(run_dir, &state, train)?;
        // The shipped best model is also kept under a stable name.
        let (best_ckpt, best_onnx) = model_files(&models_dir, state.best);
        std::fs::copy(&best_ckpt, run_dir.join("best.safetensors"))?;
        std::fs::copy(&best_onnx, run_dir.join("best.onnx"))?;
    }
    state.elapsed_seconds = elapsed(earlier);
    state.save(run_dir)?;
    println!(
        "{} iterations, best model {:04} ({}), report {}",
        state.iterations,
        state.best,
        run_dir.join("best.onnx").display(),
        run_dir.join("report.svg").display()
    );
    Ok(())
}

/// `a`'s score against `b` over `games` games with colours alternating.
fn play<G: Game>(
    start: &G,
    a: &mut dyn Agent<G>,
    b: &mut dyn Agent<G>,
    games: u32,
    what: &str,
) -> anyhow::Result<f64> {
    let bar = progress(u64::from(games), what);
    let result = search::matchplay::play_match(start, a, b, games, 10_000, |g, _, _| {
        bar.set_position(u64::from(g) + 1)
    })?;
    bar.finish_and_clear();
    Ok(result.score())
}

fn progress(len: u64, what: &str) -> ProgressBar {
    ProgressBar::new(len)
        .with_style(
            ProgressStyle::with_template("{prefix} {bar:30} {pos}/{len} {msg} [{elapsed_precise}]")
                .expect("valid template"),
        )
        .with_prefix(what.to_string())
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

/// A `trainer-bridge` command with its first arguments.
fn trainer(setup: &Setup<'_>, args: &[&str]) -> Command {
    let mut c = Command::new(&setup.trainer);
    c.args(args);
    c
}

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

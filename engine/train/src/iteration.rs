//! One iteration of the loop as its steps: self-play with the best model, fit the candidate,
//! gate it against the best, promote it if it passed, measure the best against the fixed
//! opponents and on the ladder, then record, report and publish. Each step that writes a file
//! skips what an interrupted earlier run already wrote; the state is saved only at the end.

use std::path::Path;
use std::time::Instant;

use anyhow::Context;
use players::spec::OwnPlayers;
use selfplay::Trainable;

use crate::matches::{Matches, Rung};
use crate::run_dir::RunDir;
use crate::state::{IterationRecord, TrainState};
use crate::trainer::{self, StatusOk};
use crate::{ladder, report, self_play, Clock, Setup, TrainConfig};

/// What every iteration of one run shares.
pub(crate) struct Run<'a, G> {
    pub start: &'a G,
    /// The starts of `train.other_boards`, in order.
    pub other_boards: Vec<G>,
    pub train: &'a TrainConfig,
    pub setup: &'a Setup<'a>,
    pub dir: RunDir,
    pub matches: Matches<'a>,
    /// Where self-play runs (a Ray backend keeps its driver for the run).
    pub selfplay: cluster::Selfplay,
}

/// The iteration that turns `state.iterations` into one more.
pub(crate) struct Iteration<'r, 'a, G> {
    run: &'r mut Run<'a, G>,
    state: &'r mut TrainState,
    /// Its number; it trains model `i + 1`, the candidate.
    i: u32,
}

/// The gate's verdict on the candidate.
struct Gate {
    score: f64,
    best_before: u32,
    promoted: bool,
}

/// The best model's strength after the evaluation: scores against random and pure MCTS (NaN
/// with the ladder off) and its rating with the half-width of its 95 % interval.
struct Strength {
    vs_random: f64,
    vs_mcts: f64,
    rating: Option<(f64, f64)>,
}

/// An agent on the ladder: its ladder name and its agent spec.
type Player = (String, String);

impl<'r, 'a, G: OwnPlayers + Trainable> Iteration<'r, 'a, G> {
    pub fn new(run: &'r mut Run<'a, G>, state: &'r mut TrainState) -> Self {
        let i = state.iterations;
        Iteration { run, state, i }
    }

    /// Runs every step and saves the state.
    pub fn run(mut self, clock: &Clock) -> anyhow::Result<()> {
        let selfplay_rate = self.self_play()?;
        self.fit()?;
        let gate = self.gate()?;
        self.promote(&gate);
        if self.run.train.eval_games > 0 {
            self.evaluate()?;
            self.ladder()?;
        }
        let strength = self.strength();
        self.record(&gate, &strength, selfplay_rate, clock)?;
        report::write(&self.run.dir.root, self.state, self.run.train)?;
        self.publish_best()
    }

    fn candidate(&self) -> u32 {
        self.i + 1
    }

    fn best_onnx(&self) -> std::path::PathBuf {
        self.run.dir.model(self.state.best).1
    }

    /// Self-play with the best model up to the iteration's game count; returns the positions
    /// per second (0 when nothing was left to play).
    fn self_play(&mut self) -> anyhow::Result<f64> {
        let best_onnx = self.best_onnx();
        self_play::step(self.run, self.i, &best_onnx)
    }

    /// Trains the candidate from the latest weights (the previous candidate) on the newest
    /// shards, unless an earlier run already did.
    fn fit(&self) -> anyhow::Result<()> {
        let (i, candidate, dir) = (self.i, self.candidate(), &self.run.dir);
        let (cand_ckpt, cand_onnx) = dir.model(candidate);
        if cand_ckpt.exists() && cand_onnx.exists() {
            return Ok(());
        }
        let fit_started = Instant::now();
        let (from, _) = dir.model(i);
        trainer::command(&self.run.setup.trainer, &["fit"])
            .arg(&dir.shards)
            .arg("--model")
            .arg(&from)
            .arg("--out")
            .arg(&dir.models)
            .args(["--name", &format!("{candidate:04}")])
            .arg("--config")
            .arg(&dir.trainer_config)
            .arg("--log")
            .arg(dir.root.join("losses.jsonl"))
            .status_ok("trainer-bridge fit")?;
        dir.check_files(candidate, "trainer-bridge fit")?;
        tracing::info!(
            "iteration {i}: fit {candidate:04} in {:.0} s",
            fit_started.elapsed().as_secs_f64()
        );
        Ok(())
    }

    /// The candidate against the best. Agents are built from the same specs `engine match`
    /// takes, so the loop's figures can be reproduced with it.
    ///
    /// A fresh network is no yardstick: its self-play can be all draws (Liuzhou's move limit),
    /// the candidates that learn from it draw as well, and no gate is ever passed. So the first
    /// candidate replaces an untrained model 0000 without a gate.
    fn gate(&self) -> anyhow::Result<Gate> {
        let (i, candidate, train) = (self.i, self.candidate(), self.run.train);
        let best_before = self.state.best;
        if best_before == 0 && train.init_from.is_none() && train.bootstrap_fit_steps == 0 {
            tracing::info!(
                "iteration {i}: candidate {candidate:04} promoted without a gate: model 0000 is untrained"
            );
            return Ok(Gate {
                score: f64::NAN,
                best_before,
                promoted: true,
            });
        }
        // The gate gathers whole evaluator batches: it only compares two models under the same
        // search, and a few leaves per call would make it several times slower.
        let gate_spec = |onnx: &Path| {
            format!(
                "{},batch={}",
                net_spec(onnx, train.gate_visits, train.gate_temperature),
                self.run.setup.inference.batch_size
            )
        };
        let (cand_onnx, best_onnx) = (self.run.dir.model(candidate).1, self.best_onnx());
        let gate_started = Instant::now();
        let score = self.run.matches.play(
            self.run.start,
            (&gate_spec(&cand_onnx), train.seed.wrapping_add(11)),
            (&gate_spec(&best_onnx), train.seed.wrapping_add(12)),
            train.gate_games,
            &format!("iteration {i}: gate"),
        )?;
        let promoted = score >= train.gate_threshold;
        tracing::info!(
            "iteration {i}: candidate {candidate:04} scored {:.1}% against {best_before:04}: {} ({} games in {:.0} s)",
            100.0 * score,
            if promoted { "promoted" } else { "kept the best" },
            train.gate_games,
            gate_started.elapsed().as_secs_f64()
        );
        Ok(Gate {
            score,
            best_before,
            promoted,
        })
    }

    /// The candidate becomes the best if it passed the gate.
    fn promote(&mut self, gate: &Gate) {
        if gate.promoted {
            self.state.best = self.candidate();
        }
    }

    /// The best model on the ladder, as the evaluation plays it.
    fn best_player(&self) -> Player {
        let spec = net_spec(&self.best_onnx(), self.run.train.eval_visits, 0.0);
        (ladder::model_name(self.state.best), spec)
    }

    /// The fixed opponents: random, pure MCTS, then `ladder_opponents`.
    fn fixed_opponents(&self) -> Vec<String> {
        [ladder::ANCHOR.to_string(), self.mcts()]
            .into_iter()
            .chain(self.run.train.ladder_opponents.iter().cloned())
            .collect()
    }

    fn mcts(&self) -> String {
        format!("mcts:visits={}", self.run.train.eval_mcts_playouts)
    }

    /// The run's ladder results with how to add to them. Every pairing is played once per
    /// run (kept in the state): the agents' seeds are fixed, so a pairing played again would
    /// repeat itself.
    fn rung(&mut self) -> Rung<'_, 'a, G> {
        Rung {
            matches: &self.run.matches,
            start: self.run.start,
            games: self.run.train.eval_games,
            results: &mut self.state.ladder,
        }
    }

    /// The best model against each fixed opponent.
    fn evaluate(&mut self) -> anyhow::Result<()> {
        let (me, me_spec) = self.best_player();
        let mcts = self.mcts();
        let fixed = self.fixed_opponents();
        if ladder::played(&self.state.ladder, &me, ladder::ANCHOR)
            && ladder::played(&self.state.ladder, &me, &mcts)
        {
            tracing::info!(
                "iteration {}: best {:04} unchanged: its scores carried over",
                self.i,
                self.state.best
            );
        }
        let seeds = self.run.train.seed.wrapping_add(13);
        let mut rung = self.rung();
        for (k, o) in fixed.iter().enumerate() {
            let what = match k {
                0 => "  vs random".to_string(),
                1 => "  vs pure MCTS".to_string(),
                _ => format!("  vs {o}"),
            };
            rung.play((&me, &me_spec), (o, o), seeds + 2 * k as u64, &what)?;
        }
        Ok(())
    }

    /// The rest of the ladder: the fixed opponents among themselves, then the best model
    /// against earlier bests, which keep the ladder from saturating.
    fn ladder(&mut self) -> anyhow::Result<()> {
        let (me, me_spec) = self.best_player();
        let fixed = self.fixed_opponents();
        let earlier: Vec<Player> = earlier_bests(self.state, self.run.train.ladder_previous_bests)
            .into_iter()
            .map(|n| {
                let onnx = self.run.dir.model(n).1;
                let spec = net_spec(&onnx, self.run.train.eval_visits, 0.0);
                (ladder::model_name(n), spec)
            })
            .collect();
        let seeds = self.run.train.seed.wrapping_add(13);
        let mut rung = self.rung();
        for (k, x) in fixed.iter().enumerate() {
            for y in &fixed[k + 1..] {
                let what = format!("  ladder: {x} vs {y}");
                rung.play((x, x), (y, y), seeds + 100, &what)?;
            }
        }
        for (k, (name, spec)) in earlier.iter().enumerate() {
            let what = format!("  vs {name}");
            rung.play(
                (&me, &me_spec),
                (name, spec),
                seeds + 200 + 2 * k as u64,
                &what,
            )?;
        }
        Ok(())
    }

    /// The best model's scores and rating from the ladder, logged when there is one.
    fn strength(&self) -> Strength {
        let me = ladder::model_name(self.state.best);
        let score_vs = |other: &str| {
            self.state
                .ladder
                .iter()
                .find(|r| r.a == me && r.b == other)
                .map_or(f64::NAN, |r| r.score / f64::from(r.games.max(1)))
        };
        let strength = Strength {
            vs_random: score_vs(ladder::ANCHOR),
            vs_mcts: score_vs(&self.mcts()),
            rating: ladder::rating_of(&self.state.ladder, &me),
        };
        // With the ladder off there are no scores to tell.
        if self.run.train.eval_games > 0 {
            tracing::info!(
                "iteration {}: best {:04} scores {:.0}% against random, {:.0}% against pure MCTS ({} playouts){}",
                self.i,
                self.state.best,
                100.0 * strength.vs_random,
                100.0 * strength.vs_mcts,
                self.run.train.eval_mcts_playouts,
                strength.rating.map_or(String::new(), |(elo, half)| format!(
                    "; rated {elo:+.0} ± {half:.0} Elo (random = 0)"
                ))
            );
        }
        strength
    }

    /// Counts the iteration done and saves the state: from here a restart goes on with the
    /// next one.
    fn record(
        &mut self,
        gate: &Gate,
        strength: &Strength,
        selfplay_rate: f64,
        clock: &Clock,
    ) -> anyhow::Result<()> {
        let state = &mut *self.state;
        state.iterations += 1;
        state.elapsed_seconds = clock.seconds();
        state.history.push(IterationRecord {
            iteration: self.i,
            candidate: self.i + 1,
            best_before: gate.best_before,
            gate_score: gate.score,
            promoted: gate.promoted,
            vs_random: strength.vs_random,
            vs_mcts: strength.vs_mcts,
            rating: strength.rating.map(|r| r.0),
            rating_half_width: strength.rating.map(|r| r.1),
            selfplay_games: self.run.train.games_per_iteration,
            selfplay_positions_per_second: selfplay_rate,
            elapsed_seconds: state.elapsed_seconds,
        });
        state.save(&self.run.dir.root)
    }

    /// Copies the best model to a stable name in the run directory.
    fn publish_best(&self) -> anyhow::Result<()> {
        let root = &self.run.dir.root;
        let (best_ckpt, best_onnx) = self.run.dir.model(self.state.best);
        for (from, to) in [(&best_ckpt, "best.safetensors"), (&best_onnx, "best.onnx")] {
            std::fs::copy(from, root.join(to))
                .with_context(|| format!("copying {} to {to}", from.display()))?;
        }
        // With its int8 model where `fit.int8` wrote one; one of an earlier best is stale.
        let (int8, kept) = (
            infer::precision::int8_path(&best_onnx),
            root.join("best.int8.onnx"),
        );
        if int8.exists() {
            std::fs::copy(&int8, &kept)
                .with_context(|| format!("copying {} to best.int8.onnx", int8.display()))?;
        } else if kept.exists() {
            std::fs::remove_file(&kept).with_context(|| format!("removing {}", kept.display()))?;
        }
        Ok(())
    }
}

/// The agent spec of a model played by the network agent.
fn net_spec(onnx: &Path, visits: u64, temperature: f32) -> String {
    format!(
        "net:model={},visits={visits},temp={temperature}",
        onnx.display()
    )
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

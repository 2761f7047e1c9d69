//! The loop's progress on disk (`state.yaml` in the run directory): what a restarted
//! `engine train` reads to continue where it stopped.

use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::{Deserialize, Serialize};

/// One finished iteration of the loop.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct IterationRecord {
    pub iteration: u32,
    /// The candidate trained in this iteration (model number).
    pub candidate: u32,
    /// The best model before the gate.
    pub best_before: u32,
    /// Candidate's score against the best (win 1, draw ½); NaN where no gate was played (the
    /// first candidate over an untrained model 0000).
    pub gate_score: f64,
    pub promoted: bool,
    /// The best model's score after the gate against the fixed opponents.
    pub vs_random: f64,
    pub vs_mcts: f64,
    /// The best model's rating on the run's ladder (Elo, random = 0) and the half-width of
    /// its 95 % interval, when it has one.
    #[serde(default)]
    pub rating: Option<f64>,
    #[serde(default)]
    pub rating_half_width: Option<f64>,
    pub selfplay_games: usize,
    pub selfplay_positions_per_second: f64,
    /// Seconds since the run began when the iteration finished.
    pub elapsed_seconds: f64,
}

/// Everything the loop needs to resume.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct TrainState {
    /// Iterations completed.
    pub iterations: u32,
    /// The model number that plays self-play and defends at the gate.
    pub best: u32,
    /// Whether model 0 (the fresh network) exists.
    pub initialised: bool,
    /// Training seconds used by earlier runs (so a resumed run keeps one clock).
    pub elapsed_seconds: f64,
    pub history: Vec<IterationRecord>,
    /// Every pairing of the rating ladder played so far.
    #[serde(default)]
    pub ladder: Vec<crate::ladder::LadderGames>,
}

impl TrainState {
    pub fn path(run_dir: &Path) -> PathBuf {
        run_dir.join("state.yaml")
    }

    /// The saved state, or a fresh one for a new run directory.
    pub fn load(run_dir: &Path) -> anyhow::Result<TrainState> {
        let path = Self::path(run_dir);
        if !path.exists() {
            return Ok(TrainState::default());
        }
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("reading {}", path.display()))?;
        serde_yaml::from_str(&text)
            .with_context(|| format!("{} is not a valid training state", path.display()))
    }

    /// Written to a temporary file and renamed, so a kill never leaves half a state.
    pub fn save(&self, run_dir: &Path) -> anyhow::Result<()> {
        let text = serde_yaml::to_string(self)?;
        shards::write_atomically(&Self::path(run_dir), text.as_bytes())?;
        Ok(())
    }
}

/// Model files of model number `n` in `models_dir`: (checkpoint, ONNX model).
pub fn model_files(models_dir: &Path, n: u32) -> (PathBuf, PathBuf) {
    (
        models_dir.join(format!("{n:04}.safetensors")),
        models_dir.join(format!("{n:04}.onnx")),
    )
}

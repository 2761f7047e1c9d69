//! The networks `engine bench` measures: each game's default network, freshly initialised by
//! `trainer-bridge init` from the game's built-in config (speed depends on a network's size,
//! not its weights), and the int8 model `trainer-bridge quantize` makes of it.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use anyhow::Context;
use games::Encoding;

use crate::trainer;

/// Calibration positions of the int8 models ([`BenchModels::quantize`]).
pub const CALIBRATION_POSITIONS: usize = 256;

/// The games whose networks are made, with the arguments `init` takes for each.
const GAMES: [(&str, &[&str]); 3] = [
    ("liuzhou", &[]),
    ("xiangqi", &[]),
    ("go", &["--board-size", "9"]),
];

/// Each game's default network in a temporary directory of its own, removed on drop.
pub struct BenchModels {
    dir: PathBuf,
    trainer: PathBuf,
    skipped: Vec<&'static str>,
}

impl BenchModels {
    /// Initialises the three networks with the `trainer-bridge` beside the engine (else on the
    /// PATH). A network that cannot be made is listed in [`BenchModels::skipped`], not an error.
    pub fn init() -> anyhow::Result<BenchModels> {
        let dir = std::env::temp_dir().join(format!("engine-bench-models-{}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        let trainer = trainer::find_trainer(None);
        let mut skipped = Vec::new();
        for (game, extra) in GAMES {
            let config = dir.join(format!("{game}.yaml"));
            std::fs::write(&config, setup::config::built_in(game).unwrap_or_default())?;
            let status = trainer::command(&trainer, &["init", "--game", game, "--config"])
                .arg(&config)
                .arg("--out")
                .arg(dir.join(game))
                .args(extra)
                .stdout(Stdio::null())
                .status();
            if !matches!(status, Ok(s) if s.success()) {
                skipped.push(game);
            }
        }
        Ok(BenchModels {
            dir,
            trainer,
            skipped,
        })
    }

    /// The games whose network could not be made.
    pub fn skipped(&self) -> &[&'static str] {
        &self.skipped
    }

    /// The `trainer-bridge` that made them.
    pub fn trainer(&self) -> &Path {
        &self.trainer
    }

    /// The network of `game` (a file only where it was made).
    pub fn path(&self, game: &str) -> PathBuf {
        self.dir.join(format!("{game}.onnx"))
    }

    /// Writes the int8 model beside `model` (`trainer-bridge quantize`), calibrated on
    /// [`CALIBRATION_POSITIONS`] positions of random play from `start`, written as a shard.
    pub fn quantize<G: Encoding>(&self, start: &G, model: &Path) -> anyhow::Result<()> {
        let dir = model.with_extension("positions");
        std::fs::create_dir_all(&dir)?;
        let shape = start.shape();
        let samples = infer::bench::sample_states(start, CALIBRATION_POSITIONS, 7)
            .iter()
            .map(|state| {
                let mut planes = vec![0.0; shape.input_len()];
                state.encode(&mut planes);
                shards::Sample {
                    planes,
                    policy: vec![(0, 1.0)],
                    value: 0.0,
                    aux: Default::default(),
                }
            })
            .collect();
        let shard = shards::Shard {
            meta: shards::ShardMeta {
                game: G::NAME.into(),
                planes: shape.planes,
                height: shape.height,
                width: shape.width,
                policy_size: shape.policy_size,
                model: "random play".into(),
                config: String::new(),
                created_unix: 0,
                games: 0,
                policy_target: shards::PolicyTarget::Visits,
            },
            samples,
            symmetries: shards::symmetry_maps(start),
        };
        shard.write(&dir.join("positions.safetensors"))?;
        let status = trainer::command(&self.trainer, &["quantize", "--model"])
            .arg(model)
            .arg("--shards")
            .arg(&dir)
            .args(["--samples", &CALIBRATION_POSITIONS.to_string()])
            .stdout(Stdio::null())
            .status()
            .with_context(|| format!("running {}", self.trainer.display()))?;
        anyhow::ensure!(
            status.success(),
            "{} quantize --model {}: {status}",
            self.trainer.display(),
            model.display()
        );
        Ok(())
    }
}

impl Drop for BenchModels {
    /// The networks, their int8 models and calibration positions are the bench's own.
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

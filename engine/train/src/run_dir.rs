//! The run directory: its layout, model 0000 and the bootstrap shards that make a new run, and
//! the checks a resumed run passes before it plays.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context};
use games::Encoding;
use infer::OrtOptions;

use crate::state::{model_files, TrainState};
use crate::trainer::{self, StatusOk, TRAINER_CONFIG};
use crate::{Setup, TrainConfig};

/// Where a run keeps its models, shards and trainer-bridge's config.
pub(crate) struct RunDir {
    pub root: PathBuf,
    pub models: PathBuf,
    pub shards: PathBuf,
    /// The config trainer-bridge reads (`TRAINER_CONFIG`).
    pub trainer_config: PathBuf,
}

impl RunDir {
    pub fn new(root: &Path) -> Self {
        RunDir {
            root: root.to_path_buf(),
            models: root.join("models"),
            shards: root.join("shards"),
            trainer_config: root.join(TRAINER_CONFIG),
        }
    }

    /// Model `n`'s files: (checkpoint, ONNX model).
    pub fn model(&self, n: u32) -> (PathBuf, PathBuf) {
        model_files(&self.models, n)
    }

    /// Model `n`'s checkpoint and ONNX file exist; `who` is the step that should have written
    /// them.
    pub fn check_files(&self, n: u32, who: &str) -> anyhow::Result<()> {
        let (ckpt, onnx) = self.model(n);
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

    /// Creates the directories that are missing and writes trainer-bridge's config
    /// (`config_text`); returns the directories this call created, outermost first, to be
    /// removed if `initialise` fails.
    pub fn prepare(&self, config_text: &str) -> anyhow::Result<Vec<PathBuf>> {
        let created: Vec<PathBuf> = [&self.root, &self.models, &self.shards]
            .into_iter()
            .filter(|d| !d.exists())
            .cloned()
            .collect();
        for dir in [&self.models, &self.shards] {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        // trainer-bridge reads the config as this loop does: the built-in one with the user's
        // file merged over it, written out whole.
        let tmp = self.trainer_config.with_extension("yaml.tmp");
        std::fs::write(&tmp, config_text)
            .and_then(|()| std::fs::rename(&tmp, &self.trainer_config))
            .with_context(|| format!("writing {}", self.trainer_config.display()))?;
        Ok(created)
    }
}

/// The run's saved state (a fresh one for a new directory), checked against what the
/// directory holds.
pub(crate) fn load_state<G: Encoding>(
    start: &G,
    dir: &RunDir,
    setup: &Setup<'_>,
) -> anyhow::Result<TrainState> {
    let mut state = TrainState::load(&dir.root)?;
    if !state.initialised {
        return Ok(state);
    }
    let (_, best_onnx) = dir.model(state.best);
    if state.iterations == 0 && state.best == 0 && !best_onnx.exists() {
        // A state that says initialised with no model 0000 (an `init` that wrote nothing):
        // start over.
        tracing::warn!(
            "{} says the run is initialised but {} is missing: initialising again",
            TrainState::path(&dir.root).display(),
            best_onnx.display()
        );
        state.initialised = false;
    } else {
        check_resume(start, &state, dir, setup)?;
    }
    Ok(state)
}

/// Makes model 0000 (unless it is there) and keeps the bootstrap shards. On failure it leaves
/// no empty directories behind: it removes those of `created` that nothing was written to.
pub(crate) fn initialise<G: Encoding>(
    start: &G,
    train: &TrainConfig,
    setup: &Setup<'_>,
    dir: &RunDir,
    created: &[PathBuf],
) -> anyhow::Result<()> {
    let init = || -> anyhow::Result<()> {
        let (ckpt, onnx) = dir.model(0);
        if !(ckpt.exists() && onnx.exists()) {
            first_model(train, setup, G::NAME, dir)?;
        }
        if let Some(from) = &train.bootstrap_shards {
            keep_bootstrap_shards(from, &dir.shards, train.bootstrap_samples)?;
        }
        // The state says "initialised" only once model 0 really is there and usable.
        check_model(start, dir, 0, setup, "trainer-bridge init")
    };
    let result = init();
    if result.is_err() {
        if !created.is_empty() {
            let _ = std::fs::remove_file(&dir.trainer_config);
        }
        // `remove_dir` keeps any directory that was written to.
        for d in created.iter().rev() {
            let _ = std::fs::remove_dir(d);
        }
    }
    result
}

/// Writes model 0000: a copy of `init_from`, or a fresh network, fitted on the bootstrap
/// shards when asked. The fresh network is written under another name first, so that 0000
/// exists only once it is what the config asks for.
fn first_model(
    train: &TrainConfig,
    setup: &Setup<'_>,
    game: &str,
    dir: &RunDir,
) -> anyhow::Result<()> {
    if let Some(from) = &train.init_from {
        return copy_init_from(from, dir);
    }
    let fresh = if train.bootstrap_fit_steps > 0 {
        "fresh"
    } else {
        "0000"
    };
    trainer::command(&setup.trainer, &["init", "--game", game])
        .arg("--seed")
        .arg(train.seed.to_string())
        .arg("--config")
        .arg(&dir.trainer_config)
        .arg("--out")
        .arg(dir.models.join(fresh))
        .status_ok("trainer-bridge init")?;
    if let (Some(shards), true) = (&train.bootstrap_shards, train.bootstrap_fit_steps > 0) {
        fit_on_bootstrap(train, setup, shards, dir)?;
    }
    Ok(())
}

/// Model 0000 as a copy of `from` (a checkpoint with its ONNX model beside it, and the int8
/// model where there is one, for `selfplay_precision: auto`).
fn copy_init_from(from: &Path, dir: &RunDir) -> anyhow::Result<()> {
    let (ckpt, onnx) = dir.model(0);
    let from_onnx = from.with_extension("onnx");
    let from_int8 = infer::precision::int8_path(&from_onnx);
    let mut copies = vec![(from_onnx, onnx.clone()), (from.to_path_buf(), ckpt)];
    if from_int8.exists() {
        copies.insert(0, (from_int8, infer::precision::int8_path(&onnx)));
    }
    // The checkpoint last: model 0000 counts as there once both of its files are.
    for (src, dst) in &copies {
        let tmp = dst.with_extension("tmp");
        std::fs::copy(src, &tmp)
            .with_context(|| format!("train.init_from: copying {}", src.display()))?;
        std::fs::rename(&tmp, dst)?;
    }
    Ok(())
}

/// Fits the fresh network on the bootstrap `shards` into model 0000.
fn fit_on_bootstrap(
    train: &TrainConfig,
    setup: &Setup<'_>,
    shards: &Path,
    dir: &RunDir,
) -> anyhow::Result<()> {
    let started = Instant::now();
    trainer::command(&setup.trainer, &["fit"])
        .arg(shards)
        .arg("--model")
        .arg(dir.models.join("fresh.safetensors"))
        .arg("--out")
        .arg(&dir.models)
        .args(["--name", "0000"])
        .args(["--steps", &train.bootstrap_fit_steps.to_string()])
        .arg("--config")
        .arg(&dir.trainer_config)
        .status_ok("trainer-bridge fit (model 0000 on the bootstrap shards)")?;
    tracing::info!(
        "model 0000: {} steps on {} in {:.0} s",
        train.bootstrap_fit_steps,
        shards.display(),
        started.elapsed().as_secs_f64()
    );
    for ext in ["safetensors", "onnx"] {
        let _ = std::fs::remove_file(dir.models.join(format!("fresh.{ext}")));
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

/// A resumed run has the models its state names, made with the config's network.
fn check_resume<G: Encoding>(
    start: &G,
    state: &TrainState,
    dir: &RunDir,
    setup: &Setup<'_>,
) -> anyhow::Result<()> {
    let damaged = |file: &Path| {
        anyhow::anyhow!(
            "{} says model {:04} is the best after {} iterations, but {} is missing: the run \
             directory is damaged (restore the file or start a new run_dir)",
            TrainState::path(&dir.root).display(),
            state.best,
            state.iterations,
            file.display()
        )
    };
    // The best model plays; the newest one is where the next fit starts.
    let (best_ckpt, best_onnx) = dir.model(state.best);
    let (latest_ckpt, _) = dir.model(state.iterations);
    for file in [&best_onnx, &best_ckpt, &latest_ckpt] {
        if !file.is_file() {
            return Err(damaged(file));
        }
    }
    check_model(start, dir, state.best, setup, "an earlier run")
}

/// Model `n` exists, loads, is for `start`'s game and has the config's network shape; `who`
/// is the step that should have written it.
fn check_model<G: Encoding>(
    start: &G,
    dir: &RunDir,
    n: u32,
    setup: &Setup<'_>,
    who: &str,
) -> anyhow::Result<()> {
    dir.check_files(n, who)?;
    let (_, onnx) = dir.model(n);
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

#[cfg(test)]
mod tests {
    use super::network_difference;

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

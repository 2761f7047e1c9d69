//! `engine train`: the whole AlphaZero loop (see the `train` crate).

use std::path::{Path, PathBuf};

use clap::Args as ClapArgs;
use setup::config;
use train::{find_trainer, Setup, TrainConfig};

use super::{config_reads, ForGame, GameArgs, GameType, Loaded};

/// Run the self-play → fit → gate loop; resumes from the run directory's state.
#[derive(ClapArgs)]
#[command(mut_arg(
    "config",
    config_reads("its `game`, `network`, `selfplay`, `fit`, `inference` and `train` sections")
))]
pub struct Args {
    #[command(flatten)]
    game: GameArgs,
    /// Run directory (overrides `train.run_dir`): models, shards, state and report go here.
    #[arg(long)]
    run_dir: Option<PathBuf>,
    /// Stop after this many minutes of training in total (overrides `train.time_limit_minutes`).
    #[arg(long)]
    minutes: Option<f64>,
    /// Stop after this many iterations in total (overrides `train.iterations`).
    #[arg(long)]
    iterations: Option<u32>,
    /// The trainer-bridge binary (default: next to this executable, else on the PATH).
    #[arg(long)]
    trainer: Option<PathBuf>,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let done = args.game.dispatch(&args)?;
    outln!("{done}")
}

impl ForGame for &Args {
    type Output = String;

    fn run<G: GameType>(self, start: G, c: &Loaded) -> anyhow::Result<String> {
        let train = train_section(self, &c.doc, &c.path)?;
        let inference = config::inference(&c.doc, &c.path)?;
        anyhow::ensure!(
            matches!(
                inference.precision,
                infer::Precision::Fp32 | infer::Precision::Auto
            ),
            "config {}: section `inference`: `precision` is {}; engine train plays its own \
             models in fp32 (model 0000 has no int8 version): set it to fp32 or auto, and \
             `fit.int8: true` to have each new model's int8 version written beside it",
            c.path.display(),
            inference.precision
        );
        // Every section the loop uses is read and checked here, before anything is created.
        let setup = Setup {
            config_path: &c.path,
            doc: &c.doc,
            trainer: find_trainer(self.trainer.clone()),
            selfplay: config::selfplay(&c.doc, &c.path)?,
            inference,
            network: config::network(&c.doc, &c.path)?,
        };
        train::run(&start, &train, &setup)
    }
}

/// The `train` section with the command line's overrides, checked; an error names the flag
/// when the value came from one.
fn train_section(
    args: &Args,
    doc: &serde_yaml::Value,
    config_path: &Path,
) -> anyhow::Result<TrainConfig> {
    let mut train: TrainConfig = config::section(doc, "train", config_path)?;
    let mut flags = Vec::new();
    if let Some(d) = &args.run_dir {
        train.run_dir = d.clone();
        flags.push(("run_dir", "--run-dir"));
    }
    if let Some(m) = args.minutes {
        train.time_limit_minutes = m;
        flags.push(("time_limit_minutes", "--minutes"));
    }
    if let Some(i) = args.iterations {
        train.iterations = i;
        flags.push(("iterations", "--iterations"));
    }
    if let Err(e) = train.validate() {
        return Err(match flags.iter().find(|(key, _)| *key == e.key) {
            Some((_, flag)) => anyhow::anyhow!("{flag}: {e}"),
            None => config::invalid(config_path, "train", e).into(),
        });
    }
    Ok(train)
}

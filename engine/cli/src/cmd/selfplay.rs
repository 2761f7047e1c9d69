//! `engine selfplay`: plays games against itself and writes training shards.

use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::Args as ClapArgs;
use cluster::{Request, Selfplay};
use selfplay::SelfplayConfig;
use setup::{config, models};

use super::{config_reads, ForGame, GameArgs, GameType, Loaded};

/// Play games against itself and write their positions as training shards.
#[derive(ClapArgs)]
#[command(mut_arg(
    "config",
    config_reads("its `game`, `selfplay` and `inference` sections")
))]
pub struct Args {
    #[command(flatten)]
    game: GameArgs,
    /// The model that plays: an ONNX file, `uniform` (no network: uniform priors, value 0), or
    /// `built-in` (Liuzhou's network compiled into the engine) [default: the game's default
    /// network (`engine models list`), else uniform].
    #[arg(long)]
    model: Option<String>,
    /// Directory the shards are written to (created if missing).
    #[arg(long)]
    out: PathBuf,
    /// Number of games.
    #[arg(long, default_value_t = 64)]
    games: usize,
    /// Execution provider for an ONNX model: cpu, cuda or tensorrt (overrides the config's
    /// `inference.provider`). What really runs is logged.
    #[arg(long)]
    provider: Option<infer::Provider>,
    /// fp32; int8 for the quantised model beside --model (x.onnx → x.int8.onnx); auto for
    /// that one where it is there (overrides the config's `inference.precision`).
    #[arg(long)]
    precision: Option<infer::Precision>,
    /// Seed for noise, temperature and playout caps.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// The model as the shards record it (their metadata key `model`) [default: --model as
    /// given]. A cluster's tasks play a copy of the model and record the original's name.
    #[arg(long)]
    model_name: Option<String>,
    /// Play on the Ray cluster at ADDRESS (`HOST:PORT`, `auto` or `ray://…`), as tasks of the
    /// config's `selfplay.ray.games_per_task` games, each written to --out as one shard
    /// (docs/cluster.md). --model must then be a file.
    #[arg(long, value_name = "ADDRESS")]
    ray: Option<String>,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    anyhow::ensure!(args.games >= 1, "--games must be at least 1");
    let line = args.game.dispatch(&args)?;
    outln!("{line}")
}

impl ForGame for &Args {
    type Output = String;

    fn run<G: GameType>(self, start: G, c: &Loaded) -> anyhow::Result<String> {
        let sp: SelfplayConfig = config::selfplay(&c.doc, &c.path)?;
        config::inference(&c.doc, &c.path)?;
        let model = match &self.model {
            Some(m) => m.clone(),
            None => models::default_network_for(&start, "uniform priors (--model uniform)")
                .map_or_else(|| models::UNIFORM.to_owned(), |p| p.model()),
        };
        let (mut backend, label) = match &self.ray {
            Some(address) => (on_ray(&model, address, &sp)?, "--ray: self-play"),
            None => (Selfplay::Local, "self-play"),
        };
        let request = Request {
            start: &start,
            model: &model,
            model_name: self.model_name.as_deref().unwrap_or(&model),
            doc: &c.doc,
            config_path: &c.path,
            config: &sp,
            overrides: models::Overrides {
                provider: self.provider,
                precision: self.precision,
                ..Default::default()
            },
            games: self.games,
            out: &self.out,
            tag: "selfplay",
            seed: self.seed,
            resume: false,
            label,
        };
        // A bad --out fails here, not after a shard's worth of games.
        request.prepare_out().context("--out")?;
        Ok(backend.run(&request)?.line)
    }
}

/// `--ray`: the games as tasks on the cluster at `address`, `model` sent to the workers.
fn on_ray(model: &str, address: &str, sp: &SelfplayConfig) -> anyhow::Result<Selfplay> {
    anyhow::ensure!(
        Path::new(model).is_file(),
        "--ray: --model must be an ONNX file to send to the workers, not {model:?}"
    );
    let ray = selfplay::RayConfig {
        address: address.to_owned(),
        ..sp.ray.clone()
    };
    ray.validate().map_err(|e| anyhow::anyhow!("--ray: {e}"))?;
    Ok(Selfplay::on_ray(ray))
}

//! `engine selfplay`: plays games against itself and writes training shards.

use std::path::PathBuf;

use anyhow::Context;
use clap::Args as ClapArgs;
use progress::Progress;
use selfplay::{SelfplayConfig, ShardSink};
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
        let config_text = serde_yaml::to_string(&c.doc).unwrap_or_default();
        let model = match &self.model {
            Some(m) => m.clone(),
            None => models::default_network_for(&start, "uniform priors (--model uniform)")
                .map_or_else(|| models::UNIFORM.to_owned(), |p| p.model()),
        };
        if let Some(address) = &self.ray {
            return on_ray(self, G::NAME, &c.doc, sp, address, &model);
        }
        let sink = ShardSink {
            dir: &self.out,
            tag: "selfplay",
            model: self.model_name.as_deref().unwrap_or(&model),
            config: &config_text,
        };
        // A bad --out fails here, not after a shard's worth of games.
        sink.prepare().context("--out")?;
        let overrides = models::Overrides {
            provider: self.provider,
            precision: self.precision,
            ..Default::default()
        };
        let evaluator = models::evaluator_with(&start, &model, &c.doc, &c.path, overrides)?;
        tracing::info!("self-play with {}", evaluator.describe());
        let bar = Progress::new(self.games as u64, "self-play", "games");
        let summary = selfplay::run(
            &start,
            evaluator.as_ref(),
            &sp,
            self.games,
            &sink,
            self.seed,
            |s| {
                bar.set_message(format!("{:.1} positions/s", s.positions_per_second()));
                bar.set_position(s.games as u64);
            },
        )?;
        bar.finish();
        Ok(summary.line())
    }
}

/// `--ray`: the games as tasks on the cluster, through the same driver as `engine train`.
fn on_ray(
    args: &Args,
    game: &str,
    doc: &serde_yaml::Value,
    sp: SelfplayConfig,
    address: &str,
    model: &str,
) -> anyhow::Result<String> {
    let model_path = PathBuf::from(model);
    anyhow::ensure!(
        model_path.is_file(),
        "--ray: --model must be an ONNX file to send to the workers, not {model:?}"
    );
    let ray = selfplay::RayConfig {
        address: address.to_owned(),
        ..sp.ray
    };
    ray.validate().map_err(|e| anyhow::anyhow!("--ray: {e}"))?;
    std::fs::create_dir_all(&args.out).context("--out")?;
    let stamp = train::cluster::now_stamp();
    let tasks = train::cluster::plan(args.games, ray.games_per_task, "selfplay", stamp, args.seed);
    let config = train::cluster::task_config(doc, &ray);
    let mut driver = train::cluster::RayDriver::start(&ray, &std::env::current_exe()?)?;
    let batch = train::cluster::Batch {
        game,
        model: &model_path,
        model_name: args.model_name.as_deref().unwrap_or(model),
        config: &config,
        out_dir: &args.out,
        tasks: &tasks,
    };
    let played = train::ray_selfplay(&mut driver, &batch, "--ray")?;
    Ok(format!(
        "{} games, {} positions ({:.1}/s), {} shards, on Ray at {address} in {} tasks",
        played.games,
        played.positions,
        played.positions_per_second(),
        played.written,
        tasks.len()
    ))
}

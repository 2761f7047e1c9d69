//! `trainer-bridge`: the learner half of the loop.

use std::path::{Path, PathBuf};

use anyhow::Context;
use candle_core::Device;
use clap::{Args, Parser, Subcommand};
use trainer_bridge::{export_onnx, ModelMeta, Net, NetConfig};

#[derive(Parser)]
#[command(
    name = "trainer-bridge",
    version,
    about = "Trains the policy/value network from shards and writes ONNX"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Writes generation 0: a randomly initialised network as <out>.safetensors and <out>.onnx.
    Init(InitArgs),
}

#[derive(Args)]
struct InitArgs {
    /// The game the network is for (liuzhou, xiangqi, go).
    #[arg(long)]
    game: String,
    /// YAML config whose `network:` section sizes the network (configs/<game>.yaml).
    #[arg(long)]
    config: PathBuf,
    /// Output path without extension, e.g. models/liuzhou/0000 (an extension given is
    /// replaced). Missing directories are created.
    #[arg(long)]
    out: PathBuf,
    /// Board size, for games played on several (Go).
    #[arg(long)]
    board_size: Option<usize>,
}

fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    match Cli::parse().command {
        Command::Init(args) => init(&args),
    }
}

fn init(args: &InitArgs) -> anyhow::Result<()> {
    let shape = games::shape_of(&args.game, args.board_size).with_context(|| {
        format!(
            "unknown game {:?} (or board size {:?} not supported)",
            args.game, args.board_size
        )
    })?;
    let network = NetConfig::from_yaml_file(&args.config)?;
    let (varmap, _net) = Net::fresh(&network, shape, &Device::Cpu)?;
    let stem = args.out.with_extension("");
    if let Some(dir) = stem.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let weights = with_ext(&stem, "safetensors");
    let model = with_ext(&stem, "onnx");
    Net::save(&varmap, &weights)?;
    let meta = ModelMeta {
        game: args.game.clone(),
        shape,
        network,
        generation: 0,
    };
    export_onnx(&varmap, &meta, &model)?;
    println!("{}\n{}", weights.display(), model.display());
    Ok(())
}

fn with_ext(stem: &Path, ext: &str) -> PathBuf {
    let mut s = stem.as_os_str().to_owned();
    s.push(".");
    s.push(ext);
    PathBuf::from(s)
}

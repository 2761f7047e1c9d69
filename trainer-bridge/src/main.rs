//! `trainer-bridge`: the learner half of the loop.

use std::path::{Path, PathBuf};

use anyhow::Context;
use candle_core::Device;
use clap::{Args, Parser, Subcommand};
use trainer_bridge::{write_model, Checkpoint, ModelMeta, Net, NetConfig};

/// Training allocates and frees tensors of a few hundred KiB many times a step; glibc's malloc
/// maps and unmaps each one (page faults, TLB shootdowns), mimalloc keeps and reuses them.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

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
    /// Writes generation 0: a randomly initialised network (seeded) as <out>.safetensors and
    /// <out>.onnx.
    Init(InitArgs),
    /// Trains from a checkpoint on the newest shards; writes the next checkpoint and its ONNX.
    Fit(FitArgs),
    /// Training throughput on synthetic samples, against the arithmetic it does and against
    /// the same network's forward pass through ONNX Runtime.
    Bench(BenchArgs),
    /// Writes the int8 model of an fp32 one beside it (x.onnx → x.int8.onnx), its activation
    /// ranges calibrated on positions from shards.
    Quantize(QuantizeArgs),
    /// Carries a checkpoint over to its game's encoding where the game has added input
    /// planes, and grows its network to a config's (wider heads, more blocks): writes
    /// <out>.safetensors and <out>.onnx, which play exactly as before (the new planes,
    /// channels and blocks weigh nothing until the next fit). Quantise it again for int8.
    Upgrade(UpgradeArgs),
    /// Writes the mean of checkpoints of one network, tensor by tensor (stochastic weight
    /// averaging), as <out>.safetensors and <out>.onnx. Quantise it again for int8.
    Average(AverageArgs),
    /// Takes residual blocks out of a checkpoint's tower (the rest kept in order): a smaller
    /// network that costs less a position, written as <out>.safetensors and <out>.onnx, to be
    /// fitted further with the full network as its teacher (`fit --teacher`).
    Shrink(ShrinkArgs),
}

#[derive(Args)]
struct ShrinkArgs {
    /// The checkpoint (.safetensors) to take blocks from.
    #[arg(long)]
    model: PathBuf,
    /// The blocks to take out, numbered from 0 at the stem, comma-separated (e.g. 2,4).
    #[arg(long, required = true, value_delimiter = ',', value_name = "BLOCK")]
    drop_blocks: Vec<usize>,
    /// Output path without extension, e.g. runs/xiangqi/s4 (an extension given is replaced).
    /// Missing directories are created.
    #[arg(long)]
    out: PathBuf,
}

#[derive(Args)]
struct AverageArgs {
    /// Two or more checkpoints (.safetensors) of the same game and network, e.g. successive
    /// fits of one run.
    #[arg(required = true, num_args = 2.., value_name = "CHECKPOINT")]
    models: Vec<PathBuf>,
    /// Output path without extension, e.g. runs/liuzhou/0150 (an extension given is replaced).
    /// Missing directories are created.
    #[arg(long)]
    out: PathBuf,
}

#[derive(Args)]
struct UpgradeArgs {
    /// The checkpoint (.safetensors) written for the game's earlier encoding.
    #[arg(long)]
    model: PathBuf,
    /// Output path without extension, e.g. models/liuzhou/0130 (an extension given is
    /// replaced). Missing directories are created.
    #[arg(long)]
    out: PathBuf,
    /// YAML config whose `network` section has wider heads (`policy_channels`,
    /// `value_channels`) or more residual `blocks` than the checkpoint; its other network keys
    /// must be the checkpoint's. Without it only input planes are added.
    #[arg(long)]
    config: Option<PathBuf>,
    /// Seed of the new convolution weights (widened heads, added blocks).
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

#[derive(Args)]
struct QuantizeArgs {
    /// The fp32 model (.onnx) or checkpoint (.safetensors) to quantise.
    #[arg(long)]
    model: PathBuf,
    /// Directory of shards of the model's game (e.g. from `engine selfplay`): the calibration
    /// positions are read from the newest.
    #[arg(long)]
    shards: PathBuf,
    /// Calibration positions, spread over the newest shards.
    #[arg(long, default_value_t = trainer_bridge::quantize::DEFAULT_SAMPLES)]
    samples: usize,
    /// Where to write the int8 model; default beside the model (x.int8.onnx), where the
    /// engine looks for it.
    #[arg(long)]
    out: Option<PathBuf>,
}

#[derive(Args)]
struct BenchArgs {
    /// YAML config: its `game` section names the game (the input shape), its `network`
    /// section sizes the network.
    #[arg(long, default_value = "configs/liuzhou.yaml")]
    config: PathBuf,
    /// Samples per training step and per forward pass.
    #[arg(long, default_value_t = 128)]
    batch: usize,
    /// Seconds of measurement (at least one timed call of each kind is made).
    #[arg(long, default_value_t = 10.0)]
    seconds: f64,
}

#[derive(Args)]
struct FitArgs {
    /// Directory of self-play shards (the newest are used, up to `fit.window_samples`).
    shards: PathBuf,
    /// The checkpoint to start from (a .safetensors written by `init` or `fit`).
    #[arg(long)]
    model: PathBuf,
    /// Directory the new model is written to.
    #[arg(long)]
    out: PathBuf,
    /// Name of the new model: a plain file stem (no path separators, not starting with '.');
    /// default: the input's number plus one (0003 → 0004).
    #[arg(long)]
    name: Option<String>,
    /// YAML config: its `network` section must match the checkpoint, its `fit` section sets
    /// the training (defaults apply where absent).
    #[arg(long)]
    config: PathBuf,
    /// Append per-step losses to this JSONL file.
    #[arg(long)]
    log: Option<PathBuf>,
    /// Override `fit.steps`.
    #[arg(long)]
    steps: Option<usize>,
    /// A checkpoint of the same game, of any network size, whose outputs take
    /// `fit.anchor_weight` of every target in place of the starting checkpoint's: a small
    /// network learns a larger one's play (distillation).
    #[arg(long)]
    teacher: Option<PathBuf>,
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
    /// Seed of the random weights: the same seed writes the same network.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

fn main() -> std::process::ExitCode {
    // candle spreads an elementwise operation over its own pool of threads, which spin at a
    // barrier until every one has finished; beside rayon's threads (the convolutions and batch
    // norms of `kernels`) they fight for the cores, and what is left of candle's elementwise work
    // in a training step (gradient sums, heads, AdamW) is small. One thread: those operations run
    // on the calling thread (a 4 × 48 step: backward 38–42 ms against 50–61 ms with the pool).
    // Set before any candle operation: the pool reads it once, when it starts.
    if std::env::var_os("CANDLE_NUM_THREADS").is_none() {
        std::env::set_var("CANDLE_NUM_THREADS", "1");
    }
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        .with_writer(std::io::stderr)
        // A log redirected to a file gets plain text, no colour codes.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    // The first model run through ONNX Runtime fetches its library if none is found.
    provision::install();
    let result = match Cli::parse().command {
        Command::Init(args) => init(&args),
        Command::Fit(args) => fit(&args),
        Command::Bench(args) => bench(&args),
        Command::Quantize(args) => quantize(&args),
        Command::Upgrade(args) => upgrade(&args),
        Command::Average(args) => average(&args),
        Command::Shrink(args) => shrink(&args),
    };
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            // The chain of causes on one line; no backtrace: these are user errors.
            eprintln!("error: {e:#}");
            std::process::ExitCode::from(2)
        }
    }
}

fn shrink(args: &ShrinkArgs) -> anyhow::Result<()> {
    let checkpoint = Checkpoint::read(&args.model, &Device::Cpu)?;
    let had = checkpoint.meta.as_ref().map_or(0, |m| m.network.blocks);
    let shrunk = checkpoint.without_blocks(&args.drop_blocks)?;
    let meta = shrunk
        .meta
        .clone()
        .expect("a shrunk checkpoint records its network");
    let (varmap, _) = Net::from_checkpoint(&shrunk, &meta.network, meta.shape, &Device::Cpu)?;
    let (weights, model) = write_model(&varmap, &meta, &args.out.with_extension(""))?;
    println!(
        "{}: {} generation {}, {} of its {had} blocks kept\n{}\n{}",
        args.model.display(),
        meta.game,
        meta.generation,
        meta.network.blocks,
        weights.display(),
        model.display()
    );
    Ok(())
}

fn init(args: &InitArgs) -> anyhow::Result<()> {
    let shape = game_shape(&args.game, args.board_size)?;
    let network = NetConfig::from_yaml_file(&args.config)?;
    let (varmap, _net) = Net::seeded(&network, shape, &Device::Cpu, args.seed)?;
    let meta = ModelMeta {
        game: args.game.clone(),
        shape,
        network,
        generation: 0,
    };
    let (weights, model) = write_model(&varmap, &meta, &args.out.with_extension(""))?;
    println!("{}\n{}", weights.display(), model.display());
    Ok(())
}

fn upgrade(args: &UpgradeArgs) -> anyhow::Result<()> {
    let checkpoint = Checkpoint::read(&args.model, &Device::Cpu)?;
    let Some(meta) = checkpoint.meta.clone() else {
        anyhow::bail!(
            "--model {}: the checkpoint records no game: it cannot be carried over",
            args.model.display()
        );
    };
    let board =
        (meta.game == <games::go::GoState as games::Game>::NAME).then_some(meta.shape.height);
    let shape = game_shape(&meta.game, board)?;
    anyhow::ensure!(
        (shape.height, shape.width, shape.policy_size)
            == (meta.shape.height, meta.shape.width, meta.shape.policy_size),
        "--model {}: {} now takes {}; only added input planes can be carried over, \
         not the checkpoint's {}",
        args.model.display(),
        meta.game,
        trainer_bridge::describe(shape),
        trainer_bridge::describe(meta.shape)
    );
    // Without a config the planes must grow (its error says there is nothing to add); with
    // one, either may.
    let mut checkpoint = if args.config.is_none() || shape.planes > meta.shape.planes {
        checkpoint.with_planes(shape.planes)?
    } else {
        checkpoint
    };
    let network = match &args.config {
        Some(path) => {
            let network = NetConfig::from_yaml_file(path)?;
            anyhow::ensure!(
                network != meta.network || shape.planes > meta.shape.planes,
                "--config {}: its network is the checkpoint's and {} takes no more input \
                 planes: nothing to carry over",
                path.display(),
                meta.game
            );
            checkpoint = checkpoint.grown_to(&network, args.seed)?;
            network
        }
        None => meta.network.clone(),
    };
    let (varmap, _) = Net::from_checkpoint(&checkpoint, &network, shape, &Device::Cpu)?;
    let meta = ModelMeta {
        shape,
        network,
        ..meta
    };
    let (weights, model) = write_model(&varmap, &meta, &args.out.with_extension(""))?;
    println!(
        "{}: {} generation {} carried over to {}, {} blocks of {} channels, heads of {} policy and \
         {} value channels\n{}\n{}",
        args.model.display(),
        meta.game,
        meta.generation,
        trainer_bridge::describe(shape),
        meta.network.blocks,
        meta.network.channels,
        meta.network.policy_channels,
        meta.network.value_channels,
        weights.display(),
        model.display()
    );
    Ok(())
}

fn average(args: &AverageArgs) -> anyhow::Result<()> {
    let mut checkpoints = Vec::with_capacity(args.models.len());
    for path in &args.models {
        checkpoints.push(Checkpoint::read(path, &Device::Cpu)?);
    }
    let mean = Checkpoint::average(&checkpoints)?;
    let meta = mean.meta.clone().expect("an average records its network");
    let (varmap, _) = Net::from_checkpoint(&mean, &meta.network, meta.shape, &Device::Cpu)?;
    let (weights, model) = write_model(&varmap, &meta, &args.out.with_extension(""))?;
    println!(
        "the mean of {} {} checkpoints (generation {})\n{}\n{}",
        checkpoints.len(),
        meta.game,
        meta.generation,
        weights.display(),
        model.display()
    );
    Ok(())
}

fn bench(args: &BenchArgs) -> anyhow::Result<()> {
    anyhow::ensure!(
        args.seconds.is_finite() && args.seconds >= 0.0,
        "--seconds {}: give a number of seconds, 0 or more",
        args.seconds
    );
    let (game, shape) = trainer_bridge::bench::config_shape(&args.config)?;
    let options = trainer_bridge::bench::BenchOptions {
        game,
        shape,
        network: NetConfig::from_yaml_file(&args.config)?,
        batch: args.batch,
        duration: std::time::Duration::from_secs_f64(args.seconds),
    };
    println!(
        "trainer-bridge bench --config {} --batch {} --seconds {}",
        args.config.display(),
        args.batch,
        args.seconds
    );
    let report = trainer_bridge::bench::run(&options)?;
    // The last line is the summary: `fit S samples/s, G GFLOP/s; forward E evals/s, ...`.
    println!("{report}");
    Ok(())
}

fn quantize(args: &QuantizeArgs) -> anyhow::Result<()> {
    use trainer_bridge::quantize as q;
    let model = q::Fp32Model::read(&args.model)?;
    let inputs = q::calibration_inputs(&args.shards, &model.meta, args.samples)?;
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| q::int8_path(&args.model));
    let made = q::quantize(&model, &inputs)?;
    let agree = q::agreement(&model.bytes, &made.bytes, model.meta.shape, &inputs)?;
    shards::write_atomically(&out, &made.bytes)
        .with_context(|| format!("writing {}", out.display()))?;
    println!(
        "{}: int8 model of {} ({} generation {}), {} activations calibrated on {} positions \
         from {} in {:.1} s\non those positions against fp32: policy mean |Δ| {:.2e} (total \
         variation {:.4}), value mean |Δ| {:.4} (largest {:.4}), same top action {:.1} %\n{}",
        out.display(),
        args.model.display(),
        model.meta.game,
        model.meta.generation,
        made.ranges.len(),
        made.positions,
        args.shards.display(),
        made.seconds,
        agree.policy_mean,
        agree.policy_tv_mean,
        agree.value_mean,
        agree.value_max,
        100.0 * agree.top1,
        out.display()
    );
    Ok(())
}

/// The network interface of `game`, with `--board-size` checked: only Go takes one, within
/// its range.
fn game_shape(game: &str, board_size: Option<usize>) -> anyhow::Result<games::TensorShape> {
    use games::go::{GoState, MAX_SIZE, MIN_SIZE};
    use games::Game;
    let known = [
        games::liuzhou::Liuzhou::NAME,
        games::xiangqi::Xiangqi::NAME,
        GoState::NAME,
    ];
    anyhow::ensure!(
        known.contains(&game),
        "--game {game:?}: unknown game (known: {})",
        known.join(", ")
    );
    match board_size {
        Some(n) if game != GoState::NAME => {
            anyhow::bail!("--board-size {n}: {game} has one board size; only go takes --board-size")
        }
        Some(n) if !(MIN_SIZE..=MAX_SIZE).contains(&n) => {
            anyhow::bail!("--board-size {n}: out of range for go ({MIN_SIZE}..={MAX_SIZE})")
        }
        _ => games::shape_of(game, board_size)
            .with_context(|| format!("--game {game}: no network shape")),
    }
}

fn fit(args: &FitArgs) -> anyhow::Result<()> {
    let network = NetConfig::from_yaml_file(&args.config)?;
    let mut config = fit_config(&args.config)?;
    if let Some(steps) = args.steps {
        config.steps = steps;
    }
    if let Some(name) = &args.name {
        check_name(name)?;
    }
    // The checkpoint first: a damaged one is reported as such, not as a name to give.
    let checkpoint = Checkpoint::read(&args.model, &Device::Cpu)?;
    let teacher = match &args.teacher {
        Some(path) => {
            anyhow::ensure!(
                config.anchor_weight > 0.0,
                "--teacher {}: fit.anchor_weight is 0 in {}, so the teacher would take no \
                 share of the targets; set it above 0",
                path.display(),
                args.config.display()
            );
            Some(Checkpoint::read(path, &Device::Cpu)?)
        }
        None => None,
    };
    anyhow::ensure!(
        !args.out.exists() || args.out.is_dir(),
        "--out {}: not a directory",
        args.out.display()
    );
    let name = match &args.name {
        Some(n) => n.clone(),
        None => next_name(&args.model)?,
    };
    let generation: u64 = name.trim_start_matches('0').parse().unwrap_or(0);
    let out = args.out.join(&name);
    let bar = progress::Progress::new(config.steps as u64, "fit", "steps");
    let report = trainer_bridge::fit::fit(trainer_bridge::fit::FitJob {
        shards_dir: &args.shards,
        checkpoint: &checkpoint,
        teacher: teacher.as_ref(),
        network: &network,
        config: &config,
        out: &out,
        generation,
        log: args.log.as_deref(),
        on_step: &mut |step, _| bar.set_position(step as u64),
    })?;
    bar.finish();
    if let Some(h) = &report.holdout {
        println!(
            "held out: {} samples of {} shards; policy loss {:.3} -> {:.3}, value loss {:.3} -> {:.3}",
            h.samples, h.shards, h.before.0, h.after.0, h.before.1, h.after.1
        );
    }
    println!(
        "{}: {} steps on {} samples from {} shards, {:.0} samples/s; policy loss {:.3} -> {:.3}, value loss {:.3} -> {:.3}\n{}\n{}",
        report.game,
        report.steps,
        report.window,
        report.shards,
        report.samples_per_second,
        report.first_loss.0,
        report.last_loss.0,
        report.first_loss.1,
        report.last_loss.1,
        report.checkpoint.display(),
        report.onnx.display()
    );
    if let Some(int8) = &report.int8 {
        println!("{}", int8.display());
    }
    Ok(())
}

/// The `fit` section of the config file (defaults where absent).
fn fit_config(path: &Path) -> anyhow::Result<trainer_bridge::fit::FitConfig> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let doc: serde_yaml::Value =
        serde_yaml::from_str(&text).with_context(|| format!("parsing {}", path.display()))?;
    match doc.get("fit") {
        None | Some(serde_yaml::Value::Null) => Ok(Default::default()),
        Some(v) => serde_yaml::from_value(v.clone())
            .with_context(|| format!("config {}: section `fit`", path.display())),
    }
}

/// `--name` is a file stem inside `--out`: not empty, no path separators (`../x` would write
/// outside `--out`), not hidden (a leading '.' is how unfinished writes are named).
fn check_name(name: &str) -> anyhow::Result<()> {
    let reason = if name.is_empty() {
        "is empty"
    } else if name.contains(['/', '\\']) {
        "contains a path separator"
    } else if name.starts_with('.') {
        "starts with '.'"
    } else {
        return Ok(());
    };
    anyhow::bail!("--name {name:?}: {reason}; give a plain file stem such as 0004")
}

/// `0003.safetensors` → `0004`.
fn next_name(model: &Path) -> anyhow::Result<String> {
    let stem = model.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    let n: u64 = stem.parse().with_context(|| {
        format!(
            "--model {}: give --name, the stem is not a number",
            model.display()
        )
    })?;
    Ok(format!("{:04}", n + 1))
}

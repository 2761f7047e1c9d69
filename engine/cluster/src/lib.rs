//! Where self-play runs. [`Selfplay::run`] is the one entry that `engine selfplay` (with or
//! without `--ray`) and `engine train`'s self-play step call: it plays a [`Request`]'s games
//! in this process ([`Selfplay::Local`]) or as tasks on a Ray cluster ([`Selfplay::Ray`],
//! `docs/cluster.md`), and writes them as shards either way.
//!
//! The crate sits above `setup` (a local batch loads its network through it, so this crate
//! links ONNX Runtime, which `selfplay` never does) and below `train` and the binary. The Ray
//! backend starts the Python driver as a child process ([`child`]).

pub mod child;
mod local;
pub mod ray;

use std::path::Path;

use selfplay::Trainable;
use selfplay::{Backend, RayConfig, SelfplayConfig, ShardSink};
use setup::models::Overrides;

pub use child::die_with_this_thread;
pub use ray::{ClusterError, OnRay, RayDriver};

/// One batch of self-play games, the same for every backend.
pub struct Request<'a, G> {
    /// The position every game starts from (its game and board).
    pub start: &'a G,
    /// The model that plays: an ONNX file, or `uniform` or `built-in` (this process only).
    pub model: &'a str,
    /// The model as the shards record it (their metadata key `model`).
    pub model_name: &'a str,
    /// The whole config, as the shards record it and a Ray task's `engine selfplay` reads it.
    pub doc: &'a serde_yaml::Value,
    /// Where `doc` came from, for errors.
    pub config_path: &'a Path,
    /// The `selfplay` section as this batch plays it (a Ray task reads its `full_visits`).
    pub config: &'a SelfplayConfig,
    /// The command line's inference settings: all of them in this process; on Ray, the
    /// precision (the workers get the int8 file itself where it comes to int8).
    pub overrides: Overrides,
    pub games: usize,
    /// The shard directory.
    pub out: &'a Path,
    /// Part of every shard's name (after the time stamp): `selfplay`, or an iteration's `i0003`.
    pub tag: &'a str,
    pub seed: u64,
    /// Whether shards tagged `tag` already in `out` count towards `games` (a resumed
    /// iteration), or the batch plays all its games (names stamped with the time now).
    pub resume: bool,
    /// Names the batch in the progress bar and the log, such as `iteration 3: self-play`.
    pub label: &'a str,
}

impl<G> Request<'_, G> {
    /// Creates the shard directory if missing and proves a file can be written in it, so that
    /// a bad directory fails before a game is played.
    pub fn prepare_out(&self) -> Result<(), selfplay::SelfplayError> {
        ShardSink {
            dir: self.out,
            tag: self.tag,
            model: self.model_name,
            config: "",
        }
        .prepare()
    }
}

/// What a batch played.
#[derive(Clone, Debug, Default)]
pub struct Played {
    /// Games in the shards this batch wrote.
    pub games: usize,
    pub positions: u64,
    /// Shards written.
    pub written: usize,
    /// Shards already there, not written again (Ray tasks only).
    pub skipped: usize,
    pub seconds: f64,
    /// The batch in one line, as `engine selfplay` prints it (empty when nothing was played).
    pub line: String,
}

impl Played {
    pub fn positions_per_second(&self) -> f64 {
        self.positions as f64 / self.seconds.max(1e-9)
    }
}

/// Where a batch is played.
pub enum Selfplay {
    /// In this process, on this machine.
    Local,
    /// As tasks on a Ray cluster; the driver starts with the first batch and serves the rest.
    Ray(Box<OnRay>),
}

impl Selfplay {
    /// The backend `selfplay.backend` names, with its `selfplay.ray` settings.
    pub fn configured(config: &SelfplayConfig) -> Selfplay {
        match config.backend {
            Backend::Local => Selfplay::Local,
            Backend::Ray => Selfplay::on_ray(config.ray.clone()),
        }
    }

    /// The Ray cluster `ray` names (`engine selfplay --ray` replaces its address).
    pub fn on_ray(ray: RayConfig) -> Selfplay {
        Selfplay::Ray(Box::new(OnRay::new(ray)))
    }

    /// Plays `request`'s games (those its shards lack when it resumes) and writes their shards.
    pub fn run<G: Trainable>(&mut self, request: &Request<'_, G>) -> anyhow::Result<Played> {
        request.prepare_out()?;
        match self {
            Selfplay::Local => local::run(request),
            Selfplay::Ray(ray) => ray.run(request),
        }
    }
}

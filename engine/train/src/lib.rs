//! `engine train`: the AlphaZero loop. Each iteration plays self-play games with the best model,
//! trains the next candidate with `trainer-bridge fit` (a child process), gates it against the
//! best, measures the best against fixed opponents, and saves its progress. Killed at any point
//! and started again, it continues from `state.yaml`: finished shards and models are kept, an
//! interrupted step is redone.

pub mod cluster;
mod config;
mod iteration;
pub mod ladder;
mod matches;
mod report;
mod run_dir;
mod self_play;
pub mod state;
mod trainer;

pub use config::TrainConfig;
pub use report::ladder_svg;
pub use self_play::ray_selfplay;
pub use trainer::{find_trainer, TRAINER_CONFIG};

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::bail;
use infer::OrtOptions;
use players::spec::OwnPlayers;
use progress::Progress;
use selfplay::Backend;

use iteration::{Iteration, Run};
use matches::Matches;
use run_dir::RunDir;

/// What the loop needs besides the `train` section: where things are, and the other sections,
/// read and checked before anything is created.
pub struct Setup<'a> {
    pub config_path: &'a Path,
    pub doc: &'a serde_yaml::Value,
    pub trainer: PathBuf,
    pub selfplay: selfplay::SelfplayConfig,
    pub inference: OrtOptions,
    /// The `network` section as written (trainer-bridge owns its meaning).
    pub network: serde_yaml::Mapping,
}

/// Runs the loop for `start`'s game until the iteration count or the time limit is reached;
/// returns the closing line (iterations, best model, report).
pub fn run<G: OwnPlayers>(
    start: &G,
    train: &TrainConfig,
    setup: &Setup<'_>,
) -> anyhow::Result<String> {
    let dir = RunDir::new(&train.run_dir);
    let config_text = serde_yaml::to_string(setup.doc)?;
    // Everything that can be checked is checked before the run directory is touched.
    check_selfplay_games(train, setup)?;
    let mut state = run_dir::load_state(start, &dir, setup)?;
    if !state.initialised || state.iterations < train.iterations {
        trainer::check_found(&setup.trainer)?;
    }
    let created = dir.prepare(&config_text)?;
    let clock = Clock {
        started: Instant::now(),
        earlier: state.elapsed_seconds,
    };
    tracing::info!(
        "training {} in {} (iteration {}, best model {:04}, {:.0} s used so far)",
        G::NAME,
        dir.root.display(),
        state.iterations,
        state.best,
        clock.earlier
    );
    if !state.initialised {
        run_dir::initialise(start, train, setup, &dir, &created)?;
        state.initialised = true;
        state.save(&dir.root)?;
    }
    let mut run = Run {
        start,
        train,
        setup,
        dir,
        config_text,
        matches: Matches::new(setup, train),
        ray: None,
    };
    let limit = train.time_limit_minutes * 60.0;
    while state.iterations < train.iterations && clock.seconds() < limit {
        Iteration::new(&mut run, &mut state).run(&clock)?;
    }
    state.elapsed_seconds = clock.seconds();
    state.save(&run.dir.root)?;
    Ok(format!(
        "{} iterations, best model {:04} ({}), report {}",
        state.iterations,
        state.best,
        run.dir.root.join("best.onnx").display(),
        run.dir.root.join("report.svg").display()
    ))
}

/// On a Ray cluster an iteration plays whole tasks: their games must add up to the
/// iteration's.
fn check_selfplay_games(train: &TrainConfig, setup: &Setup<'_>) -> anyhow::Result<()> {
    let sp = &setup.selfplay;
    if sp.backend == Backend::Ray && sp.ray.games_per_iteration() != train.games_per_iteration {
        bail!(
            "config {}: section `selfplay`: backend ray plays ray.tasks_per_iteration ({}) × \
             ray.games_per_task ({}) = {} games an iteration, but train.games_per_iteration is \
             {}: make them equal",
            setup.config_path.display(),
            sp.ray.tasks_per_iteration,
            sp.ray.games_per_task,
            sp.ray.games_per_iteration(),
            train.games_per_iteration
        );
    }
    Ok(())
}

/// The run's one clock: the seconds earlier runs used (from the state) plus this one's.
pub(crate) struct Clock {
    started: Instant,
    earlier: f64,
}

impl Clock {
    pub fn seconds(&self) -> f64 {
        self.earlier + self.started.elapsed().as_secs_f64()
    }
}

fn progress(len: u64, what: &str) -> Progress {
    Progress::new(len, what, "games")
}

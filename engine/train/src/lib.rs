//! `engine train`: the AlphaZero loop. Each iteration plays self-play games with the best model,
//! trains the next candidate with `trainer-bridge fit` (a child process), gates it against the
//! best, measures the best against fixed opponents, and saves its progress. Killed at any point
//! and started again, it continues from `state.yaml`: finished shards and models are kept, an
//! interrupted step is redone.

pub mod bench;
mod config;
mod iteration;
pub mod ladder;
mod matches;
mod report;
mod run_dir;
mod self_play;
pub mod state;
mod trainer;

pub use config::{ClockKind, TrainConfig};
pub use report::ladder_svg;
pub use trainer::{find_trainer, TRAINER_CONFIG};

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::bail;
use infer::{OrtOptions, Precision};
use players::spec::OwnPlayers;
use progress::Progress;
use selfplay::Backend;
use selfplay::Trainable;

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
pub fn run<G: OwnPlayers + Trainable>(
    start: &G,
    train: &TrainConfig,
    setup: &Setup<'_>,
) -> anyhow::Result<String> {
    let dir = RunDir::new(&train.run_dir);
    let config_text = serde_yaml::to_string(setup.doc)?;
    // Everything that can be checked is checked before the run directory is touched.
    check_selfplay_games(train, setup)?;
    let other_boards = other_boards(start, train, setup)?;
    let mut state = run_dir::load_state(start, &dir, setup)?;
    if !state.initialised || state.iterations < train.iterations {
        trainer::check_found(&setup.trainer)?;
    }
    let created = dir.prepare(&config_text)?;
    let clock = Clock::start(train.clock, state.elapsed_seconds);
    tracing::info!(
        "training {} in {} (iteration {}, best model {:04}, {:.0} s used so far, {:?} clock)",
        G::NAME,
        dir.root.display(),
        state.iterations,
        state.best,
        clock.earlier,
        train.clock
    );
    if !state.initialised {
        run_dir::initialise(start, train, setup, &dir, &created)?;
        state.initialised = true;
        state.save(&dir.root)?;
    }
    let mut run = Run {
        start,
        other_boards,
        train,
        setup,
        dir,
        matches: Matches::new(setup, train),
        selfplay: cluster::Selfplay::configured(&setup.selfplay),
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

/// The start positions of `train.other_boards`, which only a network of any size can learn.
fn other_boards<G: OwnPlayers>(
    start: &G,
    train: &TrainConfig,
    setup: &Setup<'_>,
) -> anyhow::Result<Vec<G>> {
    let boards = train
        .other_boards
        .iter()
        .map(|&(size, _)| {
            start.on_board(size).ok_or_else(|| {
                anyhow::anyhow!(
                    "config {}: train.other_boards: {} has no {size}x{size} board",
                    setup.config_path.display(),
                    G::NAME
                )
            })
        })
        .collect::<anyhow::Result<Vec<G>>>()?;
    let on = |key: &str| {
        setup
            .network
            .get(key)
            .is_some_and(|v| v.as_u64() == Some(1) || v.as_bool() == Some(true))
    };
    let any_size = on("policy_pool") && on("value_pool");
    if !boards.is_empty() && !any_size {
        bail!(
            "config {}: train.other_boards: only a network of any size learns other boards: \
             set network.policy_pool: 1 and network.value_pool: 1",
            setup.config_path.display()
        );
    }
    Ok(boards)
}

/// On a Ray cluster an iteration plays whole tasks: their games must add up to the
/// iteration's.
fn check_selfplay_games(train: &TrainConfig, setup: &Setup<'_>) -> anyhow::Result<()> {
    let sp = &setup.selfplay;
    if sp.backend == Backend::Ray && train.clock == ClockKind::Cpu {
        bail!(
            "config {}: train.clock cpu counts this machine's CPU only, but selfplay.backend ray \
             plays on the cluster's: use clock wall",
            setup.config_path.display()
        );
    }
    if sp.backend == Backend::Ray && !train.other_boards.is_empty() {
        bail!(
            "config {}: train.other_boards plays in this process: use selfplay.backend local",
            setup.config_path.display()
        );
    }
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
    // Auto plays the int8 files the fits write; without them it would play fp32 unasked.
    let int8_fits = setup.doc["fit"]["int8"].as_bool() == Some(true);
    if train.selfplay_precision == Precision::Auto && !int8_fits {
        bail!(
            "config {}: train.selfplay_precision auto plays the int8 files that fit.int8 writes: \
             set fit.int8: true (or selfplay_precision: fp32)",
            setup.config_path.display()
        );
    }
    Ok(())
}

/// The run's one clock: the seconds earlier runs used (from the state) plus this one's, on
/// the wall or the CPU clock (`train.clock`).
pub(crate) struct Clock {
    kind: ClockKind,
    started: Instant,
    cpu_started: f64,
    earlier: f64,
}

impl Clock {
    fn start(kind: ClockKind, earlier: f64) -> Clock {
        Clock {
            kind,
            started: Instant::now(),
            cpu_started: cpu_seconds(),
            earlier,
        }
    }

    pub fn seconds(&self) -> f64 {
        let this_run = match self.kind {
            ClockKind::Wall => self.started.elapsed().as_secs_f64(),
            ClockKind::Cpu => cpu_seconds() - self.cpu_started,
        };
        self.earlier + this_run
    }
}

/// User and system CPU seconds of this process and of its children that have been waited for.
#[cfg(target_os = "linux")]
fn cpu_seconds() -> f64 {
    fn usage(who: libc::c_int) -> f64 {
        // SAFETY: getrusage writes into the zeroed struct it is given and reads nothing else.
        let mut u: libc::rusage = unsafe { std::mem::zeroed() };
        if unsafe { libc::getrusage(who, &mut u) } != 0 {
            return 0.0;
        }
        let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
        secs(u.ru_utime) + secs(u.ru_stime)
    }
    usage(libc::RUSAGE_SELF) + usage(libc::RUSAGE_CHILDREN)
}

/// Elsewhere the config check refuses the CPU clock.
#[cfg(not(target_os = "linux"))]
fn cpu_seconds() -> f64 {
    0.0
}

fn progress(len: u64, what: &str) -> Progress {
    Progress::new(len, what, "games")
}

#[cfg(all(test, target_os = "linux"))]
mod clock_tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn the_cpu_clock_counts_work_and_not_sleep() {
        let clock = Clock::start(ClockKind::Cpu, 100.0);
        std::thread::sleep(Duration::from_millis(300));
        let slept = clock.seconds() - 100.0;
        assert!(slept < 0.1, "{slept} CPU seconds while sleeping");
        // Spin until the clock has counted a tenth of a second (on a busy machine this takes
        // longer on the wall).
        let wall = Instant::now();
        let mut x = 0u64;
        while clock.seconds() - 100.0 < slept + 0.1 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
            assert!(wall.elapsed() < Duration::from_secs(60), "{x}");
        }
    }

    #[test]
    fn the_wall_clock_counts_sleep() {
        let clock = Clock::start(ClockKind::Wall, 7.0);
        std::thread::sleep(Duration::from_millis(50));
        assert!(clock.seconds() >= 7.05);
    }
}

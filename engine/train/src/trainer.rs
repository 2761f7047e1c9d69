//! `trainer-bridge` as a child process: finding it, starting it so that it dies with the loop
//! (`cluster::die_with_this_thread`, as the Ray driver is), and reading its exit status.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context};

/// The config trainer-bridge reads, in the run directory: the loop's whole config.
pub const TRAINER_CONFIG: &str = "config.yaml";

/// The `trainer-bridge` binary: `--trainer`, else next to this executable, else on the PATH.
pub fn find_trainer(explicit: Option<PathBuf>) -> PathBuf {
    if let Some(p) = explicit {
        return p;
    }
    let beside = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|d| d.join("trainer-bridge")));
    match beside {
        Some(p) if p.exists() => p,
        _ => PathBuf::from("trainer-bridge"),
    }
}

/// Fails, saying how to get one, unless `program` is there to be started.
pub(crate) fn check_found(program: &Path) -> anyhow::Result<()> {
    if is_program(program) {
        return Ok(());
    }
    let place = if program.components().count() > 1 {
        format!("at {program:?}")
    } else {
        format!("beside the engine or on the PATH (as {program:?})")
    };
    bail!(
        "trainer-bridge not found {place}: build it (`cargo build --release -p \
         trainer-bridge`) or give its path with --trainer"
    )
}

/// Whether `program` names a file, or (a bare name) a file on the PATH, as `Command` finds it.
fn is_program(program: &Path) -> bool {
    if program.components().count() > 1 {
        return program.is_file();
    }
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|d| d.join(program).is_file()))
}

/// A `trainer-bridge` command (`program`) with its first arguments.
pub(crate) fn command(program: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(program);
    c.args(args);
    cluster::die_with_this_thread(&mut c);
    c
}

/// Runs a command to its end; an error unless it exits with success.
pub(crate) trait StatusOk {
    fn status_ok(&mut self, what: &str) -> anyhow::Result<()>;
}

impl StatusOk for Command {
    fn status_ok(&mut self, what: &str) -> anyhow::Result<()> {
        tracing::info!("running {what}: {:?}", self);
        let status = self
            .status()
            .with_context(|| format!("starting {what} ({:?})", self.get_program()))?;
        if !status.success() {
            bail!("{what} failed ({status})");
        }
        Ok(())
    }
}

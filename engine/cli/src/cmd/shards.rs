//! `engine shards`: tools for the training data (`shards::verify`, `shards::upgrade`).

use std::path::PathBuf;

use clap::{Args as ClapArgs, Subcommand};

/// Tools for training shards.
#[derive(ClapArgs)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Check shards, and checkpoints, against the checksums they record: one line per bad file
    /// (the file, the tensor and why), then `N shards checked, B bad`. Exit code 1 when any is
    /// bad, 2 when a path cannot be read. Run it after copying data between machines.
    Verify(VerifyArgs),
    /// Carry shards written for a game's earlier encoding over to its current one, in place
    /// (each through a temporary file): Xiangqi shards of 16 input planes get the attack
    /// planes, worked out from their pieces. One line per shard carried over or refused, then
    /// `N shards carried over, C current, B refused`. Exit code 1 when any is refused.
    Upgrade(UpgradeArgs),
}

#[derive(ClapArgs)]
struct UpgradeArgs {
    /// Shard files, or directories searched (at any depth) for `.safetensors` files.
    #[arg(required = true)]
    paths: Vec<PathBuf>,
}

#[derive(ClapArgs)]
struct VerifyArgs {
    /// Shard or checkpoint files, or directories searched (at any depth) for `.safetensors`
    /// files.
    #[arg(required = true)]
    paths: Vec<PathBuf>,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    match args.command {
        Command::Verify(args) => verify(&args),
        Command::Upgrade(args) => upgrade(&args),
    }
}

fn verify(args: &VerifyArgs) -> anyhow::Result<()> {
    let summary = ::shards::verify::verify_paths(&args.paths, |check| match &check.result {
        Err(e) => outln!("{e}"),
        Ok(_) => Ok(()),
    })?;
    outln!("{summary}")?;
    if summary.bad > 0 {
        // Lines are flushed as written (stdout is line-buffered): nothing is lost here.
        std::process::exit(1);
    }
    Ok(())
}

fn upgrade(args: &UpgradeArgs) -> anyhow::Result<()> {
    use ::shards::upgrade::{upgrade_file, Upgrade};
    let (mut carried, mut current, mut refused) = (0, 0, 0);
    for path in ::shards::verify::files(&args.paths)? {
        match upgrade_file(&path) {
            Ok(Upgrade::Current) => current += 1,
            Ok(Upgrade::CarriedOver { from, to }) => {
                carried += 1;
                outln!("{}: {from} -> {to} planes", path.display())?;
            }
            Err(e) => {
                refused += 1;
                outln!("{e}")?;
            }
        }
    }
    outln!("{carried} shards carried over, {current} current, {refused} refused")?;
    if refused > 0 {
        std::process::exit(1);
    }
    Ok(())
}

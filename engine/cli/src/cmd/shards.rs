//! `engine shards`: tools for the training data (`shards::verify`).

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

//! `engine`: one subcommand per file under `cmd/`.

mod agents;
mod cmd;
mod config;
mod models;
mod session;
mod thinkers;
mod train;
mod web;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    match cmd::Cli::parse().run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // The whole chain of causes on one line; no backtrace: these are user errors.
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}

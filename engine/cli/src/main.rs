//! `engine`: one subcommand per file under `cmd/`.

// First, so its macros (`outln!`, `out!`) are seen by the modules below.
#[macro_use]
mod out;

mod cmd;
mod session;
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
        // The reader of our output has gone (`| head`): it wanted no more, so no error either.
        Err(e) if out::is_closed(&e) => ExitCode::SUCCESS,
        Err(e) => {
            // The whole chain of causes on one line; no backtrace: these are user errors.
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}

//! `engine`: one subcommand per file under `cmd/`.

// The faces' `outln!` and `out!`: `println!` and `print!` that end quietly on a closed pipe.
#[macro_use]
extern crate faces;

mod cmd;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        .with_writer(std::io::stderr)
        // A log redirected to a file gets plain text, no colour codes.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    // The first model loaded fetches ONNX Runtime's library if none is found.
    provision::install();
    match cmd::Cli::parse().run() {
        Ok(()) => ExitCode::SUCCESS,
        // The reader of our output has gone (`| head`): it wanted no more, so no error either.
        Err(e) if faces::out::is_closed(&e) => ExitCode::SUCCESS,
        Err(e) => {
            // The whole chain of causes on one line; no backtrace: these are user errors.
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}

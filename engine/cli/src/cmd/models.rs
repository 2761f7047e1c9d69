//! `engine models`: which default network each game plays and where it was found (`list`), and
//! copying the shipped networks into the user's data directory (`install`).

use std::path::PathBuf;

use anyhow::Context;
use clap::{Args as ClapArgs, Subcommand};
use setup::models::{self, Installed};

/// List the default networks found, or install the shipped ones for use from any directory.
#[derive(ClapArgs)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// For each game, every place its default network is looked for, in order, which hold
    /// one, and which is used.
    List,
    /// Copy the shipped networks into the user's data directory
    /// ($XDG_DATA_HOME/liuzhou-engine/models), where every command finds them from any
    /// directory once the checkout is gone.
    Install(InstallArgs),
}

#[derive(ClapArgs)]
struct InstallArgs {
    /// A directory holding `<game>/best.onnx` to copy from [default: the `models/` of the
    /// checkout the engine was built from; Liuzhou's built-in network where that has none].
    #[arg(long)]
    from: Option<PathBuf>,
    /// The directory to install into [default: the user's data directory's `models/`].
    #[arg(long)]
    to: Option<PathBuf>,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    match args.command {
        Command::List => out!("{}", list_text()),
        Command::Install(a) => install(a),
    }
}

/// `engine models list`'s text.
fn list_text() -> String {
    let mut s = String::new();
    for game in models::GAMES {
        s += &format!("{game}\n");
        let places = models::places(game);
        let used = places.iter().position(|p| p.found);
        for (i, p) in places.iter().enumerate() {
            let state = match (p.found, Some(i) == used, &p.file) {
                (true, true, _) => " (found, used)",
                (true, false, _) => " (found)",
                (false, _, Some(_)) => " (missing)",
                // Nothing to look at: the location says why.
                (false, _, None) => "",
            };
            let location = match p.source {
                models::Source::BuiltIn if !p.found => "none for this game".to_owned(),
                _ => p.location(),
            };
            s += &format!("  {}. {:<13} {location}{state}\n", i + 1, p.source.name(),);
        }
        if used.is_none() {
            s += "  no network: selfplay plays uniform priors; play, analyse and `net` agents the \
                  tree search with random playouts; uci alpha-beta\n";
        }
    }
    s
}

fn install(args: InstallArgs) -> anyhow::Result<()> {
    let to = match args.to {
        Some(t) => t,
        None => models::user_models_dir()
            .context("no home directory for the user's data: give --to DIR")?,
    };
    let from = args.from.or(models::Roots::current().checkout);
    if let Some(f) = &from {
        anyhow::ensure!(f.is_dir(), "--from {}: not a directory", f.display());
    }
    for (game, done) in models::install(from.as_deref(), &to)? {
        match done {
            Installed::Copied { from, to } => {
                outln!("{game}: {} -> {}", from.display(), to.display())?
            }
            Installed::BuiltIn { to } => outln!("{game}: built-in network -> {}", to.display())?,
            Installed::Nothing => outln!("{game}: no network to install")?,
        }
    }
    Ok(())
}

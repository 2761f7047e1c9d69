//! `engine import`: game records (SGF for Go, PGN for Xiangqi) into training shards
//! (`teach::import_files`).

use std::path::PathBuf;

use clap::Args as ClapArgs;
use teach::{import_files, ImportOptions};

use super::{config_reads, ForGame, GameArgs, GameType, Loaded};

/// Read game records into training shards: the move played is the policy target, the recorded
/// result the value target. Bad games are reported (file, game, move) and skipped; the last
/// line reads `imported G games, P positions; skipped S games`.
#[derive(ClapArgs)]
#[command(mut_arg(
    "config",
    config_reads("its `game` section and its `selfplay` section's `positions_per_shard`")
))]
pub struct Args {
    #[command(flatten)]
    game: GameArgs,
    /// Record files, or directories searched for them (`.sgf` for Go, `.pgn` for Xiangqi).
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Directory the shards are written to (created if missing).
    #[arg(long)]
    out: PathBuf,
    /// First print one line per game: `FILE#K moves=N result=R final=POSITION`.
    #[arg(long)]
    list: bool,
    /// Stop at the first bad file or game (exit code 2) and write nothing.
    #[arg(long)]
    strict: bool,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    args.game.dispatch(&args)
}

impl ForGame for &Args {
    type Output = ();

    fn run<G: GameType>(self, start: G, c: &Loaded) -> anyhow::Result<()> {
        let Some(extension) = G::RECORD_EXTENSION else {
            anyhow::bail!("{} has no game-record format to import", G::NAME);
        };
        let selfplay = setup::config::selfplay(&c.doc, &c.path)?;
        let mut opts = ImportOptions::new(&self.out, extension);
        opts.list = self.list;
        opts.strict = self.strict;
        opts.positions_per_shard = selfplay.positions_per_shard;
        opts.config = serde_yaml::to_string(&c.doc).unwrap_or_default();
        opts.legacy_text = G::legacy_text();
        let read = |text: &str| G::read_records(&start, text);
        let mut out = std::io::stdout().lock();
        import_files(&self.files, read, &start, &opts, &mut out)?;
        Ok(())
    }
}

//! `engine levels`: calibrates a game's strength levels (`players::levels`) with
//! `players::calibration` and prints the measured table, which can be written back to the
//! levels file. Finished pairings are kept in `--dir`, so a stopped run resumes where it was.

use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::Args as ClapArgs;
use players::calibration::{Calibration, CalibrationError, KeptPairings, Panel};
use players::ladder::PairingPlan;
use players::levels::{self, GameLevels, Rating, Table};
use progress::Progress;

use super::{config_reads, net_loader, ForGame, GameArgs, GameType, Loaded};

/// Calibrate a game's strength levels in Elo: the anchors (random play, the pure tree search,
/// alpha-beta and other programs at fixed depths or levels) play a round robin, every level
/// plays every anchor and the next level, `--games` games a pairing with colours alternating;
/// Elo by maximum likelihood with random play at 0.
#[derive(ClapArgs)]
#[command(mut_arg(
    "config",
    config_reads(
        "its `game` section (the variant rules) and, for `net` agents, its `inference` section"
    )
))]
pub struct Args {
    #[command(flatten)]
    game: GameArgs,
    /// Games of every pairing (even: each side takes each colour equally often).
    #[arg(long, default_value_t = 10)]
    games: u32,
    /// The levels file: its rows for the game name the levels and anchors played (the built-in
    /// table when FILE does not exist), and the game's rows are rewritten there with the
    /// measured figures; the other games' rows are kept. Without it the table is only printed.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Folder that keeps every finished pairing (`pairings.tsv`): a run stopped midway and
    /// started again with the same settings plays only what is missing.
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
    /// Play only these levels (keys, as `beginner`) [default: all]; the others keep their
    /// figures in `--out`.
    #[arg(long, num_args = 1.., value_name = "KEY")]
    levels: Vec<String>,
    /// Play only these anchors (keys, as `random`; random play is always one) [default: all].
    #[arg(long, num_args = 1.., value_name = "KEY")]
    anchors: Vec<String>,
    /// Start each pair of games from a position N uniformly random actions in (see `engine
    /// match --openings`), so that players that choose deterministically still meet in
    /// different games; every pairing plays the same openings.
    #[arg(long, value_name = "N", default_value_t = 2)]
    openings: usize,
    /// Virtual drawn games added between every two players that met (see `engine ladder
    /// --prior-draws`).
    #[arg(long, default_value_t = 1.0)]
    prior_draws: f64,
    /// Seed of the openings and of players whose spec gives none.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// A game still running after this many actions is scored a draw.
    #[arg(long, default_value_t = 100_000)]
    max_actions: usize,
    /// Games of a pairing played at once (see `engine match --parallel`).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=64))]
    parallel: u32,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    anyhow::ensure!(
        args.games >= 2 && args.games.is_multiple_of(2),
        "--games must be even and at least 2 (colours alternate)"
    );
    anyhow::ensure!(
        args.prior_draws >= 0.0 && args.prior_draws.is_finite(),
        "--prior-draws must be 0 or more"
    );
    // Refused before the games, not after them.
    if let Some(dir) = args.out.as_deref().and_then(Path::parent) {
        anyhow::ensure!(
            dir.as_os_str().is_empty() || dir.is_dir(),
            "--out: the directory {} does not exist",
            dir.display()
        );
    }
    args.game.dispatch(&args)
}

impl ForGame for &Args {
    type Output = ();

    fn run<G: GameType>(self, start: G, c: &Loaded) -> anyhow::Result<()> {
        let table = match &self.out {
            Some(path) if path.exists() => {
                let text = std::fs::read_to_string(path)
                    .with_context(|| format!("reading {}", path.display()))?;
                Table::parse(&text).with_context(|| format!("--out {}", path.display()))?
            }
            _ => levels::table().clone(),
        };
        let rows = table
            .game(G::NAME)
            .with_context(|| format!("the levels table has no rows for {}", G::NAME))?
            .clone();
        let panel = Panel::new(&rows, &self.anchors, &self.levels).map_err(|e| {
            let flag = match e {
                CalibrationError::NoAnchor { .. } => Some("--anchors"),
                CalibrationError::NoLevel { .. } => Some("--levels"),
                _ => None,
            };
            let e = anyhow::Error::from(e);
            match flag {
                Some(flag) => e.context(flag),
                None => e,
            }
        })?;
        let pairings = panel.schedule().len();
        outln!(
            "{}: {} anchors, {} levels, {pairings} pairings of {} games, colours alternating",
            G::NAME,
            panel.anchors(),
            panel.entrants.len() - panel.anchors(),
            self.games
        )?;
        let kept = KeptPairings::open(self.dir.as_deref())?;
        let load = net_loader(&start, &c.doc, &c.path, self.parallel, None);
        let bar = Progress::new(pairings as u64 * u64::from(self.games), "levels", "games");
        let plan = PairingPlan {
            workers: self.parallel.min(self.games),
            games: self.games,
            max_actions: self.max_actions,
            openings: self.openings,
            seed: self.seed,
        };
        let mut run = Calibration::new(&start, &load, &panel, plan, kept);
        for round in 0..pairings {
            let (a, b) = run.schedule()[round];
            let (a, b) = (&panel.entrants[a].key, &panel.entrants[b].key);
            let kept = run.is_kept(round);
            if kept {
                bar.inc(u64::from(self.games));
            } else {
                bar.set_message(format!("{a} vs {b}"));
            }
            let (games, score) = run.play(round, || bar.inc(1))?;
            let how = if kept { " (kept)" } else { "" };
            bar.suspend(|| {
                outln!(
                    "{a} vs {b}: {score:.1}/{games}  score {:.3}{how}",
                    score / f64::from(games.max(1))
                )
            })?;
        }
        let ratings = run.ratings(self.prior_draws)?;
        bar.finish();
        let measured = panel.measured(rows, &ratings);
        print_table(&measured)?;
        let order: Vec<f64> = measured.levels.iter().map(|l| l.rating.elo).collect();
        if order.windows(2).any(|w| w[0] >= w[1]) {
            outln!(
                "note: the levels' Elo is not increasing in the table's order; \
                 players::levels expects it to be (change a level's spec and run again)"
            )?;
        }
        if let Some(path) = &self.out {
            let text = table.with_game(measured).to_text();
            shards::write_atomically(path, text.as_bytes())
                .with_context(|| format!("writing {}", path.display()))?;
            outln!("wrote {}", path.display())?;
        }
        Ok(())
    }
}

/// The measured rows: who, Elo with its interval, games, what it plays.
fn print_table(rows: &GameLevels) -> anyhow::Result<()> {
    outln!(
        "{:<8}  {:<14}  {:>6}  {:>6}  {:>6}  spec",
        "role",
        "player",
        "Elo",
        "95 %",
        "games"
    )?;
    let row = |role: &str, name: &str, r: &Rating, spec: &str| {
        outln!(
            "{role:<8}  {name:<14}  {:>+6.0}  {:>6}  {:>6}  {spec}",
            r.elo,
            if r.half_width95 > 0.0 {
                format!("±{:.0}", r.half_width95)
            } else {
                "anchor".into()
            },
            r.games
        )
    };
    for a in &rows.anchors {
        row("anchor", &a.key, &a.rating, &a.spec)?;
    }
    for l in &rows.levels {
        row(
            "level",
            &format!("{} {}", l.key, l.chinese),
            &l.rating,
            &l.spec,
        )?;
    }
    Ok(())
}

//! `engine levels`: calibrates a game's strength levels (`players::levels`). The anchors play a
//! round robin, every level plays every anchor and the next level, and the ratings are fitted by maximum
//! likelihood (`players::ladder::rate`) with random play at 0; the measured table can be
//! written back to the levels file. Finished pairings are kept in `--dir`, so a stopped run
//! resumes where it was.

use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::Args as ClapArgs;
use players::ladder::{self, Pairing};
use players::levels::{self, GameLevels, Rating, Table};
use players::spec::AgentSpec;
use progress::Progress;

use super::ladder::{play_pairing, PairingPlan};
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

/// One player of the ladder: an anchor or a level.
struct Player {
    key: String,
    spec: AgentSpec,
    text: String,
    level: bool,
}

/// A finished pairing as `pairings.tsv` keeps it: the two players' keys and specs and the
/// settings that shaped the games, then the first player's wins, draws and losses.
#[derive(Clone, Debug, PartialEq)]
struct Kept {
    a: String,
    b: String,
    spec_a: String,
    spec_b: String,
    games: u32,
    openings: usize,
    seed: u64,
    wdl: [u32; 3],
}

impl Kept {
    fn line(&self) -> String {
        let [w, d, l] = self.wdl;
        format!(
            "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{w}\t{d}\t{l}\n",
            self.a, self.b, self.spec_a, self.spec_b, self.games, self.openings, self.seed
        )
    }

    fn parse(line: &str) -> Option<Kept> {
        let f: Vec<&str> = line.split('\t').collect();
        let [a, b, spec_a, spec_b, games, openings, seed, w, d, l] = f[..] else {
            return None;
        };
        Some(Kept {
            a: a.into(),
            b: b.into(),
            spec_a: spec_a.into(),
            spec_b: spec_b.into(),
            games: games.parse().ok()?,
            openings: openings.parse().ok()?,
            seed: seed.parse().ok()?,
            wdl: [w.parse().ok()?, d.parse().ok()?, l.parse().ok()?],
        })
    }

    fn same_pairing(&self, other: &Kept) -> bool {
        let settings = |k: &Kept| (k.games, k.openings, k.seed);
        settings(self) == settings(other)
            && ((self.spec_a == other.spec_a && self.spec_b == other.spec_b)
                || (self.spec_a == other.spec_b && self.spec_b == other.spec_a))
    }

    /// The result from `a`'s side when `a` is this pairing's `spec_a`, else swapped.
    fn score_for(&self, spec_a: &str) -> (u32, f64) {
        let [w, d, l] = if self.spec_a == spec_a {
            self.wdl
        } else {
            [self.wdl[2], self.wdl[1], self.wdl[0]]
        };
        (w + d + l, f64::from(w) + f64::from(d) / 2.0)
    }
}

/// The pairings kept in `dir` (none without one, or before the first).
fn read_kept(dir: Option<&Path>) -> anyhow::Result<Vec<Kept>> {
    let Some(path) = dir.map(|d| d.join(PAIRINGS)) else {
        return Ok(Vec::new());
    };
    if !path.exists() {
        return Ok(Vec::new());
    }
    let text =
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|(i, l)| {
            Kept::parse(l).with_context(|| {
                format!(
                    "{}, line {}: not a kept pairing (10 tab-separated fields)",
                    path.display(),
                    i + 1
                )
            })
        })
        .collect()
}

const PAIRINGS: &str = "pairings.tsv";
const PAIRINGS_HEADER: &str =
    "# engine levels: finished pairings (a b spec_a spec_b games openings seed wins draws losses)\n";

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
        let players = self.players(&rows)?;
        let n = players.len();
        let anchors: Vec<usize> = (0..n).filter(|&i| !players[i].level).collect();
        let mut schedule = Vec::new();
        for (k, &a) in anchors.iter().enumerate() {
            for &b in &anchors[k + 1..] {
                schedule.push((a, b));
            }
        }
        let levels: Vec<usize> = (0..n).filter(|&i| players[i].level).collect();
        for &i in &levels {
            for &a in &anchors {
                schedule.push((i, a));
            }
        }
        // Neighbours meet too: levels above every anchor are told apart only by each other.
        for w in levels.windows(2) {
            schedule.push((w[1], w[0]));
        }
        outln!(
            "{}: {} anchors, {} levels, {} pairings of {} games, colours alternating",
            G::NAME,
            anchors.len(),
            n - anchors.len(),
            schedule.len(),
            self.games
        )?;

        if let Some(dir) = &self.dir {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        let mut kept = read_kept(self.dir.as_deref())?;
        let load = net_loader(&start, &c.doc, &c.path, self.parallel, None);
        let bar = Progress::new(
            schedule.len() as u64 * u64::from(self.games),
            "levels",
            "games",
        );
        let workers = self.parallel.min(self.games);
        let mut pairings = Vec::new();
        for (round, &(a, b)) in schedule.iter().enumerate() {
            let (pa, pb) = (&players[a], &players[b]);
            let wanted = Kept {
                a: pa.key.clone(),
                b: pb.key.clone(),
                spec_a: pa.text.clone(),
                spec_b: pb.text.clone(),
                games: self.games,
                openings: self.openings,
                seed: self.seed,
                wdl: [0; 3],
            };
            let (games, score, how) = match kept.iter().find(|k| k.same_pairing(&wanted)) {
                Some(k) => {
                    bar.inc(u64::from(self.games));
                    let (g, s) = k.score_for(&pa.text);
                    (g, s, " (kept)")
                }
                None => {
                    bar.set_message(format!("{} vs {}", pa.key, pb.key));
                    let plan = PairingPlan {
                        workers,
                        games: self.games,
                        max_actions: self.max_actions,
                        openings: self.openings,
                        seed: self.seed,
                    };
                    let r = play_pairing(
                        &start,
                        &load,
                        [
                            (&pa.spec, &pa.key, &format!("{} ({})", pa.key, pa.text)),
                            (&pb.spec, &pb.key, &format!("{} ({})", pb.key, pb.text)),
                        ],
                        round,
                        &plan,
                        || bar.inc(1),
                    )?;
                    let done = Kept {
                        wdl: [r.wins, r.draws, r.losses],
                        ..wanted
                    };
                    if let Some(dir) = &self.dir {
                        kept.push(done.clone());
                        let text: String = std::iter::once(PAIRINGS_HEADER.to_string())
                            .chain(kept.iter().map(Kept::line))
                            .collect();
                        let path = dir.join(PAIRINGS);
                        shards::write_atomically(&path, text.as_bytes())
                            .with_context(|| format!("writing {}", path.display()))?;
                    }
                    let (g, s) = done.score_for(&pa.text);
                    (g, s, "")
                }
            };
            bar.suspend(|| {
                outln!(
                    "{} vs {}: {:.1}/{games}  score {:.3}{how}",
                    pa.key,
                    pb.key,
                    score,
                    score / f64::from(games.max(1))
                )
            })?;
            pairings.push(Pairing {
                a,
                b,
                games: f64::from(games),
                score,
            });
        }
        bar.finish();

        // Players[0] is random play, the zero of the scale.
        let ratings = ladder::rate(n, &pairings, 0, self.prior_draws)?;
        let rating = |i: usize| {
            let games = pairings
                .iter()
                .filter(|p| p.a == i || p.b == i)
                .map(|p| p.games)
                .sum::<f64>();
            Rating {
                elo: ratings.elo[i],
                half_width95: ratings.half_width95[i],
                games: games as u32,
            }
        };
        let measured = self.measured(rows, &players, rating);
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

impl Args {
    /// The anchors then the levels this run plays, random play first.
    fn players(&self, rows: &GameLevels) -> anyhow::Result<Vec<Player>> {
        for key in &self.anchors {
            anyhow::ensure!(
                rows.anchors.iter().any(|a| &a.key == key),
                "--anchors: {} has no anchor {key:?} (anchors: {})",
                rows.game,
                rows.anchors
                    .iter()
                    .map(|a| a.key.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
        for key in &self.levels {
            anyhow::ensure!(
                rows.levels.iter().any(|l| &l.key == key),
                "--levels: {} has no level {key:?} (levels: {})",
                rows.game,
                rows.levels
                    .iter()
                    .map(|l| l.key.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
        anyhow::ensure!(
            rows.anchors.first().is_some_and(|a| a.spec == "random"),
            "the first anchor of {} must be random play, the zero of the scale",
            rows.game
        );
        let chosen = |list: &[String], key: &str, first: bool| {
            first || list.is_empty() || list.iter().any(|k| k == key)
        };
        let mut players = Vec::new();
        let anchors = rows.anchors.iter().enumerate();
        for (i, a) in anchors.filter(|(i, a)| chosen(&self.anchors, &a.key, *i == 0)) {
            players.push(Player {
                key: a.key.clone(),
                spec: AgentSpec::parse(&a.spec).with_context(|| format!("anchor {}", i + 1))?,
                text: a.spec.clone(),
                level: false,
            });
        }
        for l in rows
            .levels
            .iter()
            .filter(|l| chosen(&self.levels, &l.key, false))
        {
            players.push(Player {
                key: l.key.clone(),
                spec: AgentSpec::parse(&l.spec).with_context(|| format!("level {}", l.key))?,
                text: l.spec.clone(),
                level: true,
            });
        }
        Ok(players)
    }

    /// `rows` with the figures of the players this run rated; the others keep theirs.
    fn measured(
        &self,
        mut rows: GameLevels,
        players: &[Player],
        rating: impl Fn(usize) -> Rating,
    ) -> GameLevels {
        let of = |key: &str, level: bool| {
            players
                .iter()
                .position(|p| p.key == key && p.level == level)
                .map(&rating)
        };
        for a in &mut rows.anchors {
            if let Some(r) = of(&a.key, false) {
                a.rating = r;
            }
        }
        for l in &mut rows.levels {
            if let Some(r) = of(&l.key, true) {
                l.rating = r;
            }
        }
        rows
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kept_pairing_reads_back_and_counts_from_either_side() {
        let k = Kept {
            a: "novice".into(),
            b: "random".into(),
            spec_a: "net:visits=1".into(),
            spec_b: "random".into(),
            games: 10,
            openings: 2,
            seed: 1,
            wdl: [7, 2, 1],
        };
        let back = Kept::parse(k.line().trim_end()).unwrap();
        assert_eq!(back, k);
        assert_eq!(k.score_for("net:visits=1"), (10, 8.0));
        assert_eq!(k.score_for("random"), (10, 2.0));
        let swapped = Kept {
            spec_a: "random".into(),
            spec_b: "net:visits=1".into(),
            ..k.clone()
        };
        assert!(k.same_pairing(&swapped));
        assert!(!k.same_pairing(&Kept {
            games: 12,
            ..k.clone()
        }));
        assert!(!k.same_pairing(&Kept {
            spec_a: "net:visits=2".into(),
            ..k.clone()
        }));
        assert!(Kept::parse("a\tb\tc").is_none());
    }
}

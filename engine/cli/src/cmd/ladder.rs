//! `engine ladder`: a panel of agents plays a round robin; prints each pairing's result and
//! the ratings fitted by maximum likelihood (`players::ladder`), the first agent at 0.

use anyhow::Context;
use clap::Args as ClapArgs;
use players::ladder::{self, play_pairing, Pairing, PairingPlan};
use players::matchplay::agent_label;
use players::spec::AgentSpec;
use progress::Progress;

use super::{config_reads, net_loader, ForGame, GameArgs, GameType, Loaded};

/// Rate a panel of agents: every two play `--games` games with colours alternating; ratings
/// in Elo by maximum likelihood (Bradley–Terry, a draw half a win), the first agent at 0.
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
    /// The panel, each agent a spec as for `engine match` (quote a spec that has spaces):
    /// `--agents random mcts:visits=800 net:model=m.onnx,visits=200`. The first is the anchor,
    /// rated 0 (put `random` first for ratings above random play).
    #[arg(long, num_args = 2.., required = true, value_name = "AGENT")]
    agents: Vec<AgentSpec>,
    /// Games of every pairing (even: each agent takes each colour equally often).
    #[arg(long, default_value_t = 20)]
    games: u32,
    /// Virtual drawn games added between every two agents that met, so that an agent that won
    /// or lost every game still gets a finite rating (BayesElo's prior; 0 for none).
    #[arg(long, default_value_t = 1.0)]
    prior_draws: f64,
    /// Seed for agents whose spec gives none.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// A game still running after this many actions is scored a draw.
    #[arg(long, default_value_t = 100_000)]
    max_actions: usize,
    /// Start each pair of games from a position N uniformly random actions in (see `engine
    /// match --openings`); every pairing plays the same openings. 0 plays from the start.
    #[arg(long, value_name = "N", default_value_t = 0)]
    openings: usize,
    /// Also draw the ratings with their 95 % intervals as an SVG to FILE, the agents in the
    /// panel's order (a lineage of models reads left to right).
    #[arg(long, value_name = "FILE")]
    plot: Option<std::path::PathBuf>,
    /// Games of a pairing played at once (see `engine match --parallel`).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=64))]
    parallel: u32,
    /// The arithmetic of `net` agents' networks (see `engine match --precision`).
    #[arg(long)]
    precision: Option<infer::Precision>,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    anyhow::ensure!(args.games > 0, "--games must be at least 1");
    anyhow::ensure!(
        args.prior_draws >= 0.0 && args.prior_draws.is_finite(),
        "--prior-draws must be 0 or more"
    );
    // Refused before the games, not after them.
    if let Some(dir) = args.plot.as_deref().and_then(std::path::Path::parent) {
        anyhow::ensure!(
            dir.as_os_str().is_empty() || dir.is_dir(),
            "--plot: the directory {} does not exist",
            dir.display()
        );
    }
    args.game.dispatch(&args)
}

impl ForGame for &Args {
    type Output = ();

    fn run<G: GameType>(self, start: G, c: &Loaded) -> anyhow::Result<()> {
        let load = net_loader(&start, &c.doc, &c.path, self.parallel, self.precision);
        let names: Vec<String> = (0..self.agents.len())
            .map(|i| agent_label(&self.agents[i], &format!("{}", i + 1)))
            .collect();
        let n = names.len();
        let rounds = n * (n - 1) / 2;
        outln!(
            "{}: {n} agents, {rounds} pairings of {} games, colours alternating",
            G::NAME,
            self.games
        )?;
        let bar = Progress::new(rounds as u64 * u64::from(self.games), "ladder", "games");
        let workers = self.parallel.min(self.games);
        let mut pairings = Vec::new();
        for a in 0..n {
            for b in a + 1..n {
                bar.set_message(format!("{} vs {}", names[a], names[b]));
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
                        (&self.agents[a], &names[a], &format!("agent {}", a + 1)),
                        (&self.agents[b], &names[b], &format!("agent {}", b + 1)),
                    ],
                    pairings.len(),
                    &plan,
                    || bar.inc(1),
                )?;
                bar.suspend(|| {
                    outln!(
                        "{} vs {}: +{} ={} -{}  score {:.3}",
                        names[a],
                        names[b],
                        r.wins,
                        r.draws,
                        r.losses,
                        r.score()
                    )
                })?;
                pairings.push(Pairing {
                    a,
                    b,
                    games: f64::from(r.games()),
                    score: r.score() * f64::from(r.games()),
                });
            }
        }
        bar.finish();
        let ratings = ladder::rate(n, &pairings, 0, self.prior_draws)?;
        if let Some(path) = &self.plot {
            let svg = train::ladder_svg(&names, &ratings.elo, &ratings.half_width95)?;
            shards::write_atomically(path, svg.as_bytes())
                .with_context(|| format!("writing {}", path.display()))?;
        }
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by(|&x, &y| ratings.elo[y].total_cmp(&ratings.elo[x]));
        let width = names.iter().map(|s| s.chars().count()).max().unwrap_or(5);
        outln!(
            "{:>4}  {:<width$}  {:>6}  {:>8}  {:>6}  {:>6}",
            "rank",
            "agent",
            "Elo",
            "95 %",
            "games",
            "score"
        )?;
        for (rank, &i) in order.iter().enumerate() {
            let (games, score) = ladder::totals(&pairings, i);
            outln!(
                "{:>4}  {:<width$}  {:>+6.0}  {:>8}  {:>6}  {:>6.3}",
                rank + 1,
                names[i],
                ratings.elo[i],
                if i == 0 {
                    "anchor".to_string()
                } else {
                    format!("±{:.0}", ratings.half_width95[i])
                },
                games,
                score / games.max(1.0)
            )?;
        }
        Ok(())
    }
}

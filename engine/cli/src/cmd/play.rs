//! `engine play`: a game in the terminal, a person against an agent or two agents watched.

use std::path::PathBuf;

use anyhow::Context;
use clap::Args as ClapArgs;
use faces::terminal::{play_game, play_game_with};
use faces::web::view::{build_level, Choice};
use setup::models;

use super::{config_reads, ForGame, GameArgs, GameType, Loaded};

/// Play a game in the terminal: type actions in the game's notation, or `help`.
#[derive(ClapArgs)]
#[command(mut_arg(
    "config",
    config_reads(
        "its `game` section (the variant rules) and, for `--model`, its `inference` section"
    )
))]
pub struct Args {
    #[command(flatten)]
    game: GameArgs,
    /// The side a person plays: `first`/`second`, the side's name (`black`, `white`; `red` in
    /// Xiangqi), or `none` to watch the engine play itself.
    #[arg(long, default_value = "none")]
    human: String,
    /// The engine's agent: `mcts` (tree search with random playouts), `net` (tree search with the
    /// network of `--model`), `random`, or the game's own (`alphabeta` for Liuzhou and Xiangqi)
    /// [default: `net` when there is a network, else the game's own, else `mcts`].
    #[arg(long)]
    agent: Option<String>,
    /// The ONNX model the `net` agent plays with (its `inference` settings come from
    /// `--config`), or `built-in` [default: the game's default network (`engine models
    /// list`), if it has one].
    #[arg(long)]
    model: Option<PathBuf>,
    /// Visits per decision for a searching agent.
    #[arg(long, default_value_t = 400)]
    visits: u64,
    /// Seed of the agent's random choices.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// A named strength level in place of `--agent` and `--visits`: its key or its English or
    /// Chinese name (the levels of each game and their Elo: docs/web.md, "Levels").
    #[arg(long, conflicts_with_all = ["agent", "visits", "elo"])]
    level: Option<String>,
    /// The strength level whose Elo (random play at 0) is nearest this one.
    #[arg(long, conflicts_with_all = ["agent", "visits"])]
    elo: Option<f64>,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    // The name is settled per game in `play_game` when `--agent` is not given.
    let spec = Choice {
        name: args.agent.clone().unwrap_or_default(),
        visits: args.visits,
        seed: args.seed,
    };
    spec.validate(u64::MAX).context("--agent/--visits")?;
    args.game.dispatch(Play { args: &args, spec })
}

/// The game of `--game` with the agent of `--agent`, `--visits` and `--seed`.
struct Play<'a> {
    args: &'a Args,
    spec: Choice,
}

impl ForGame for Play<'_> {
    type Output = ();

    fn run<G: GameType>(self, start: G, c: &Loaded) -> anyhow::Result<()> {
        let args = self.args;
        // The network of `--model`, else the default one when the agent may be `net`.
        let fallback = "its own agent, or the tree search with random playouts";
        let model = models::given_or_default(
            args.model.as_deref(),
            args.agent.as_deref(),
            &start,
            fallback,
        );
        let net = model
            .map(|m| models::evaluator(&start, &m, &c.doc, &c.path))
            .transpose()
            .context("--model")?;
        let level = match (&args.level, args.elo) {
            (Some(name), _) => Some(name.clone()),
            (None, Some(elo)) if !elo.is_finite() => {
                anyhow::bail!("--elo: {elo} is not a number of Elo")
            }
            (None, Some(elo)) => Some(
                players::levels::for_elo(G::NAME, elo)
                    .with_context(|| format!("--elo: {} has no strength levels", G::NAME))?
                    .key
                    .clone(),
            ),
            (None, None) => None,
        };
        match level {
            Some(name) => {
                let (agent, level, ..) = build_level::<G>(&name, args.seed, net.as_ref()).context(
                    if args.level.is_some() {
                        "--level"
                    } else {
                        "--elo"
                    },
                )?;
                tracing::info!(
                    "{}: level {} ({}), about {:.0} Elo",
                    G::NAME,
                    level.english,
                    level.key,
                    level.rating.elo
                );
                play_game_with(start, &args.human, agent)
            }
            None => play_game(start, &args.human, &self.spec, net.as_ref()),
        }
    }
}

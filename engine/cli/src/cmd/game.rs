//! `--game` and `--config`: the one place that turns `--game` into a type ([`GameArgs::dispatch`]),
//! and the flag helpers every game shares (`--position`, `--moves`, network agents' models).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;
use clap::{Arg, ValueEnum};
use eval::Evaluator;
use faces::web::view::WebGame;
use games::{Encoding, Game};
use players::spec::AgentSpec;
use setup::{config, models};

/// The games the engine plays; every subcommand that takes `--game` uses this list.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum GameKind {
    /// 六洲棋 Liuzhou chess, 6 × 6.
    Liuzhou,
    /// 象棋 Xiangqi (Chinese chess).
    Xiangqi,
    /// 围棋 Go, 2 × 2 to 19 × 19.
    Go,
}

impl GameKind {
    pub const ALL: [GameKind; 3] = [GameKind::Liuzhou, GameKind::Xiangqi, GameKind::Go];

    /// The game's name, as in `--game`, configs and models.
    pub fn name(self) -> &'static str {
        match self {
            GameKind::Liuzhou => "liuzhou",
            GameKind::Xiangqi => "xiangqi",
            GameKind::Go => "go",
        }
    }
}

/// `--game` and `--config`, spelled the same in every subcommand that plays a game. A
/// subcommand names the sections it reads with [`config_reads`].
#[derive(clap::Args, Clone, Debug)]
pub struct GameArgs {
    /// The game [default: the one `--config` names in `game.name`, else liuzhou].
    #[arg(long, value_enum)]
    pub game: Option<GameKind>,
    /// Config file: the game's variant rules (its `game` section) and the sections the
    /// subcommand reads, merged over the built-in configs/<game>.yaml.
    #[arg(long)]
    pub config: Option<PathBuf>,
}

/// The help of `--config` for a subcommand that reads `sections`, for
/// `#[command(mut_arg("config", config_reads("…")))]` beside a flattened [`GameArgs`].
pub fn config_reads(sections: &'static str) -> impl FnOnce(Arg) -> Arg {
    move |arg| {
        arg.help(format!(
            "Config file: {sections}; the keys it names replace those of the built-in \
             configs/<game>.yaml (`engine config show --game G` prints it)"
        ))
    }
}

/// A config as a subcommand reads it: the built-in config of the game with `--config` merged
/// over it, and the path errors name (`--config`'s file, else the built-in one).
pub struct Loaded {
    pub doc: serde_yaml::Value,
    pub path: PathBuf,
}

/// Everything a subcommand may ask of a game: the faces, its own players, learning from others,
/// self-play.
pub trait GameType: WebGame + teach::Learnable + selfplay::Trainable {}

impl<G: WebGame + teach::Learnable + selfplay::Trainable> GameType for G {}

/// A subcommand's work for whichever game `--game` names, run once with the configured start
/// position (see [`GameArgs::dispatch`]).
pub trait ForGame {
    type Output;
    fn run<G: GameType>(self, start: G, config: &Loaded) -> anyhow::Result<Self::Output>;
}

impl GameArgs {
    /// The game and its config: `--game`, else the game the `--config` file names, else
    /// Liuzhou; the built-in config of that game with the file merged over it.
    pub fn load(&self) -> anyhow::Result<(GameKind, Loaded)> {
        let file = match &self.config {
            Some(path) => Some((config::load(path)?, path.as_path())),
            None => None,
        };
        let named = file
            .as_ref()
            .and_then(|(doc, _)| config::named_game(doc))
            .and_then(|n| GameKind::from_str(n, true).ok());
        let game = self.game.or(named).unwrap_or(GameKind::Liuzhou);
        let (doc, path) = config::effective(game.name(), file)?;
        Ok((game, Loaded { doc, path }))
    }

    /// Reads the config and runs `work` for the game: the one place that turns `--game` into a
    /// type.
    pub fn dispatch<W: ForGame>(&self, work: W) -> anyhow::Result<W::Output> {
        let (game, c) = self.load()?;
        match game {
            GameKind::Liuzhou => work.run(config::liuzhou_start(&c.doc, &c.path)?, &c),
            GameKind::Xiangqi => work.run(config::xiangqi_start(&c.doc, &c.path)?, &c),
            GameKind::Go => work.run(config::go_start(&c.doc, &c.path)?, &c),
        }
    }
}

/// Loads `net` agents' models the way every subcommand does (`setup::models`). With games
/// played `parallel` at a time, each network gets an equal share of the cores for its
/// intra-op threads (one side of a game thinks at a time): two games at once, each network
/// on all cores, took 190 s for 20 games where a share each took 101 s. `precision` (a
/// `--precision` flag) replaces the config's. Specs pass through [`with_default_network`]
/// first, so a model is always named here.
pub fn net_loader<'a, G: Encoding>(
    start: &'a G,
    doc: &'a serde_yaml::Value,
    config: &'a Path,
    parallel: u32,
    precision: Option<infer::Precision>,
) -> impl Fn(Option<&Path>) -> anyhow::Result<Arc<dyn Evaluator<G>>> + 'a {
    let overrides = models::Overrides {
        precision,
        ..models::Overrides::sharing_cores(parallel)
    };
    move |model: Option<&Path>| {
        let model = match model {
            Some(m) => m.to_path_buf(),
            None => models::default_network_for(start, NO_NET)
                .map(|p| PathBuf::from(p.model()))
                .with_context(|| {
                    format!("no network for {}: name one with net:model=PATH", G::NAME)
                })?,
        };
        let text = model
            .to_str()
            .with_context(|| format!("net:model={}: not a UTF-8 path", model.display()))?;
        models::evaluator_with(start, text, doc, config, overrides)
            .with_context(|| format!("net:model={}", model.display()))
    }
}

/// What a `net` agent without a model plays where its game has no network.
const NO_NET: &str = "random-playout MCTS for `net` agents that name no model";

/// `spec`, with a `net` agent that names no model given the game's default network; where the
/// game has none, that agent becomes the tree search with random playouts (`mcts` with the
/// same settings), and one log line says so.
pub fn with_default_network<G: Encoding>(spec: &AgentSpec, start: &G) -> AgentSpec {
    match spec {
        AgentSpec::Net { model: None, mcts } => match models::default_network_for(start, NO_NET) {
            Some(place) => AgentSpec::Net {
                model: Some(PathBuf::from(place.model())),
                mcts: mcts.clone(),
            },
            None => AgentSpec::Mcts(mcts.clone()),
        },
        other => other.clone(),
    }
}

/// `start`, or the position `text` (`--position`) read with `start`'s variant rules, then
/// `moves` (`--moves`) played.
pub fn position<G: Game>(start: G, text: Option<&str>, moves: &str) -> anyhow::Result<G> {
    let mut state = match text {
        Some(t) => start
            .parse_position(t)
            .with_context(|| format!("--position '{t}'"))?,
        None => start,
    };
    play_moves(&mut state, moves)?;
    Ok(state)
}

/// Plays `moves` (actions in the game's notation, separated by spaces or commas) on `state`,
/// for the `--moves` flags; an action that cannot be read or is illegal is an error naming its
/// place in the list.
pub fn play_moves<G: Game>(state: &mut G, moves: &str) -> anyhow::Result<()> {
    for (i, word) in moves
        .split([' ', ','])
        .filter(|w| !w.is_empty())
        .enumerate()
    {
        let action = state
            .parse_action(word)
            .with_context(|| format!("--moves: action {} ({word})", i + 1))?;
        state
            .play(action)
            .with_context(|| format!("--moves: action {} ({word})", i + 1))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use games::liuzhou::Liuzhou;

    #[test]
    fn reads_the_position_then_the_moves() {
        let mut expected = Liuzhou::default();
        for a in ["c3", "d4", "e5"] {
            expected.play(expected.parse_action(a).unwrap()).unwrap();
        }
        let s = position(Liuzhou::default(), None, "c3, d4 e5").unwrap();
        assert_eq!(s.to_text(), expected.to_text());
        let from_text = position(Liuzhou::default(), Some(&s.to_text()), "").unwrap();
        assert_eq!(from_text.to_text(), expected.to_text());
    }
}

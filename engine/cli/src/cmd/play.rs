//! `engine play`: a game in the terminal, a person against an agent or two agents watched.

use std::io::{self, BufRead, Write};
use std::path::PathBuf;

use anyhow::{bail, Context};
use clap::Args as ClapArgs;
use games::go::PlayoutAgent;
use games::liuzhou::{Liuzhou, Rules};
use games::{Agent, Game, Outcome, Player, RandomAgent};

use super::GameKind;
use crate::config;

/// Play a game in the terminal: type actions in the game's notation.
#[derive(ClapArgs)]
pub struct Args {
    /// The game.
    #[arg(long, value_enum, default_value = "liuzhou")]
    game: GameKind,
    /// Config file with the game's variant settings (its `game` section); default
    /// `configs/<game>.yaml`.
    #[arg(long)]
    config: Option<PathBuf>,
    /// The side a person plays (`black`, `white`), or `none` to watch two agents.
    #[arg(long, default_value = "none")]
    human: String,
    /// Seed for the random agent.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let human = match args.human.as_str() {
        "black" | "b" | "first" => Some(Player::First),
        "white" | "w" | "second" => Some(Player::Second),
        "none" => None,
        other => bail!("--human: {other:?} is not black, white or none"),
    };
    let config_path = args
        .config
        .clone()
        .unwrap_or_else(|| args.game.default_config());
    match args.game {
        GameKind::Liuzhou => {
            let doc = config::load(&config_path)?;
            let rules: Rules = config::section(&doc, "game", &config_path)?;
            rules
                .validate()
                .map_err(anyhow::Error::msg)
                .context("game.lose_below")?;
            let mut agent = RandomAgent::new(args.seed);
            play_game(Liuzhou::new(rules), human, &mut agent)
        }
        GameKind::Xiangqi => {
            // The alpha-beta searcher at a second per move: a sparring partner with no model.
            let mut agent = games::xiangqi::agent_from_spec("alphabeta:movetime=1000")?;
            play_game(games::xiangqi::Xiangqi::default(), human, agent.as_mut())
        }
        GameKind::Go => {
            let doc = config::load(&config_path)?;
            let state = config::go_start(&doc, &config_path)?;
            let mut agent = PlayoutAgent::new(args.seed);
            play_game(state, human, &mut agent)
        }
    }
}

fn play_game<G: Game>(
    mut state: G,
    human: Option<Player>,
    agent: &mut dyn Agent<G>,
) -> anyhow::Result<()> {
    let stdin = io::stdin();
    let mut lines = stdin.lock().lines();
    agent.new_game(&state)?;
    while state.outcome().is_none() {
        println!("{}", state.render());
        let action = if Some(state.to_act()) == human {
            loop {
                print!("your action> ");
                io::stdout().flush()?;
                let Some(line) = lines.next() else {
                    bail!("input closed")
                };
                let line = line?;
                match state.parse_action(line.trim()) {
                    Ok(a) if state.is_legal(a) => break a,
                    Ok(_) => println!("illegal here; legal: {}", legal_list(&state)),
                    Err(e) => println!("{e}"),
                }
            }
        } else {
            let a = agent.select_action(&state)?;
            println!("{} plays {}", agent.name(), state.format_action(a));
            a
        };
        agent.observe(&state, action)?;
        state.play(action)?;
    }
    println!("{}", state.render());
    let result = match state.outcome() {
        Some(Outcome::Win(Player::First)) => "first player (Black) wins",
        Some(Outcome::Win(Player::Second)) => "second player (White) wins",
        _ => "draw",
    };
    println!("result: {result}");
    Ok(())
}

fn legal_list<G: Game>(state: &G) -> String {
    let mut v = Vec::new();
    state.legal_actions(&mut v);
    v.iter()
        .map(|&a| state.format_action(a))
        .collect::<Vec<_>>()
        .join(" ")
}

//! A game in the terminal: the board as text, the person's actions typed in the game's
//! notation, and `legal`, `hint`, `undo`, `resign`, `help`, `quit`.

use std::io::{self, BufRead};
use std::sync::Arc;

use anyhow::{bail, Context};
use eval::Evaluator;
use games::{Agent, Game, Player};

use crate::session::{parse_side, result_tag, Evaluation, Match, MatchError};
use crate::web::view::{default_agent, Choice, WebGame};

/// Upper bound on actions in one terminal game: far beyond any game's own limit.
const MAX_ACTIONS: usize = 100_000;

const HELP: &str = "\
Type an action in the game's notation, or one of:
  legal   list the legal actions
  hint    what the engine would play in your place
  undo    take back your last action and the engine's replies
  resign  give the game up
  help    this text
  quit    stop the game";

/// Plays one game on stdin/stdout: the person on `human` (a side in the game's words, or
/// `none`), the engine `spec` (its name settled here when empty), `net` its network if any.
pub fn play_game<G: WebGame>(
    start: G,
    human: &str,
    spec: &Choice,
    net: Option<&Arc<dyn Evaluator<G>>>,
) -> anyhow::Result<()> {
    let human = parse_side(human, G::SIDES)
        .map_err(anyhow::Error::msg)
        .context("--human")?;
    let mut spec = spec.clone();
    if spec.name.is_empty() {
        let configured = if net.is_some() { "net" } else { "mcts" };
        spec.name = default_agent::<G>(configured, net.is_some());
    }
    let agent = spec.build::<G>(net).context("--agent")?;
    play_against(start, human, agent)
}

/// [`play_game`] with a player already built (a named level, say); `human` is the person's
/// side as `play_game` reads it.
pub fn play_game_with<G: WebGame>(
    start: G,
    human: &str,
    agent: Box<dyn Agent<G>>,
) -> anyhow::Result<()> {
    let human = parse_side(human, G::SIDES)
        .map_err(anyhow::Error::msg)
        .context("--human")?;
    play_against(start, human, agent)
}

fn play_against<G: WebGame>(
    start: G,
    human: Option<Player>,
    agent: Box<dyn Agent<G>>,
) -> anyhow::Result<()> {
    let mut game = Match::new(start, human, agent, MAX_ACTIONS)?;
    let mut stdin = io::stdin().lock();
    let mut raw = Vec::new();
    let mut line_number = 0;
    outln!(
        "{} — {} against {}",
        G::TITLE,
        side_text::<G>(human),
        game.engine_name()
    )?;
    if human.is_some() {
        outln!("Type `help` for commands.")?;
    }
    let mut show_board = true;
    while game.outcome().is_none() {
        let state = game.state();
        if show_board {
            outln!("\n{}", state.render())?;
        }
        show_board = true;
        let side = G::SIDES[state.to_act().index()];
        if game.engine_to_act() {
            let played = game.engine_move()?;
            outln!("{side} (engine) plays {}", played.text)?;
            if let Some(e) = game.evaluation() {
                let figures = figures::<G>(e);
                if !figures.is_empty() {
                    outln!(" {figures}")?;
                }
            }
            continue;
        }
        out!("{side}> ")?;
        raw.clear();
        if stdin.read_until(b'\n', &mut raw).context("reading stdin")? == 0 {
            bail!("input closed before the game ended")
        }
        line_number += 1;
        // A line of stray bytes is a typing accident, not the end of the game.
        let Ok(line) = std::str::from_utf8(&raw) else {
            outln!("input line {line_number} is not UTF-8: ignored")?;
            show_board = false;
            continue;
        };
        match line.trim() {
            "" => show_board = false,
            "help" | "?" => {
                outln!("{HELP}")?;
                show_board = false;
            }
            "quit" | "exit" => {
                outln!("stopped; record so far: {}", record_line(&game))?;
                return Ok(());
            }
            "legal" => {
                outln!("{}", legal_list(game.state()))?;
                show_board = false;
            }
            "hint" => {
                match game.hint() {
                    Ok(h) => outln!("hint: {}{}", h.text, figures::<G>(&h.evaluation))?,
                    Err(e) => outln!("{e}")?,
                }
                show_board = false;
            }
            "resign" => {
                if let Err(e) = game.resign() {
                    outln!("{e}")?;
                    show_board = false;
                }
            }
            "undo" => match game.undo() {
                Ok(n) => outln!("took back {n} action(s)")?,
                Err(e) => {
                    outln!("{e}")?;
                    show_board = false;
                }
            },
            text => match game.play_text(text) {
                Ok(()) => {}
                Err(e @ (MatchError::Parse { .. } | MatchError::Illegal(_))) => {
                    outln!("{e}\nlegal: {}", legal_list(game.state()))?;
                    show_board = false;
                }
                Err(e) => return Err(e.into()),
            },
        }
    }
    outln!("\n{}", game.state().render())?;
    let outcome = game.outcome();
    let result = match outcome {
        Some(games::Outcome::Win(p)) => format!("{} wins", G::SIDES[p.index()]),
        _ => "draw".into(),
    };
    let reason = game.end_reason(G::SIDES).unwrap_or_default();
    outln!("result: {result} ({}): {reason}", result_tag(outcome))?;
    outln!("actions: {}", record_line(&game))
}

/// A decision's figures in brackets (visits or nodes, value, line), or nothing.
fn figures<G: WebGame>(e: &Evaluation) -> String {
    let mut line = Vec::new();
    if let Some(v) = e.visits {
        line.push(format!("{v} visits"));
    }
    if let Some(n) = e.nodes {
        line.push(format!("{n} nodes"));
    }
    if let Some(v) = e.value_first {
        line.push(format!("{} {:+.2}", G::SIDES[0], v));
    }
    if e.pv.len() > 1 {
        line.push(format!("pv {}", e.pv.join(" ")));
    }
    if line.is_empty() {
        String::new()
    } else {
        format!(" ({})", line.join(", "))
    }
}

fn side_text<G: WebGame>(human: Option<Player>) -> String {
    match human {
        Some(p) => format!("you play {}", G::SIDES[p.index()]),
        None => "the engine plays itself".into(),
    }
}

fn record_line<G: Game>(game: &Match<G>) -> String {
    game.history()
        .iter()
        .map(|p| p.text.as_str())
        .collect::<Vec<_>>()
        .join(" ")
}

fn legal_list<G: Game>(state: &G) -> String {
    let mut v = Vec::new();
    state.legal_actions(&mut v);
    v.iter()
        .map(|&a| state.format_action(a))
        .collect::<Vec<_>>()
        .join(" ")
}

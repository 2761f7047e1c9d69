//! `engine analyse`: searches one position and lists the candidate actions the search weighed,
//! each with its visits, value, prior and expected line: what a player asks of an engine
//! between games.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context};
use clap::Args as ClapArgs;
use eval::Evaluator;
use games::{Agent, Game};
use search::Limit;
use serde::Serialize;

use super::GameKind;
use faces::session::line_text;
use faces::web::view::WebGame;
use players::spec::{preloaded, AgentSpec, MAX_THREADS, MAX_VISITS};
use setup::{config, models};

/// Search a position and list the candidate actions with their visits, values and lines.
#[derive(ClapArgs)]
pub struct Args {
    /// The game.
    #[arg(long, value_enum, default_value = "liuzhou")]
    game: GameKind,
    /// Config file with the game's variant settings (its `game` section) and, for `--model`,
    /// its `inference` section; default `configs/<game>.yaml`.
    #[arg(long)]
    config: Option<PathBuf>,
    /// The position in the game's text format (Liuzhou: LFEN; Xiangqi: FEN; Go: see
    /// docs/go.md); the start position if absent.
    #[arg(long, visible_alias = "fen")]
    position: Option<String>,
    /// Actions played from the position before the search, in the game's notation, separated
    /// by spaces or commas: `c3 d4 xc3` (Liuzhou), `h2e2 h9g7` (Xiangqi), `C3 D4 pass` (Go).
    #[arg(long, default_value = "")]
    moves: String,
    /// The search: `mcts` (random playouts) or `net` (guided by `--model`) [default: `net`
    /// when there is a model, else `mcts`].
    #[arg(long)]
    agent: Option<String>,
    /// The ONNX model that guides the `net` search [default: the shipped
    /// models/<game>/best.onnx, if there is one].
    #[arg(long)]
    model: Option<PathBuf>,
    /// Playouts to search [default: 1600, or no limit when `--seconds` is given].
    #[arg(long)]
    visits: Option<u64>,
    /// Seconds to search, alone or with `--visits` (whichever ends first).
    #[arg(long)]
    seconds: Option<f64>,
    /// Threads searching the one tree.
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// Candidates to list, most visited first (0: all).
    #[arg(long, default_value_t = 10)]
    top: usize,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    json: bool,
    /// Seed of the search's random choices (random playouts, ties).
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

/// Visits when neither `--visits` nor `--seconds` is given.
const DEFAULT_VISITS: u64 = 1600;

/// Actions on one line of the table.
const LINE_SHOWN: usize = 12;

pub fn run(args: Args) -> anyhow::Result<()> {
    let config_path = args
        .config
        .clone()
        .unwrap_or_else(|| args.game.default_config());
    let doc = config::load(&config_path)?;
    match args.game {
        GameKind::Liuzhou => {
            let start = config::liuzhou_start(&doc, &config_path)?;
            analyse_game(start, &args, &doc, &config_path)
        }
        GameKind::Xiangqi => {
            let start = config::xiangqi_start(&doc, &config_path)?;
            analyse_game(start, &args, &doc, &config_path)
        }
        GameKind::Go => {
            let start = config::go_start(&doc, &config_path)?;
            analyse_game(start, &args, &doc, &config_path)
        }
    }
}

/// One action the search weighed.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Candidate {
    /// In the game's notation.
    pub action: String,
    pub visits: u32,
    /// Of all the root's children's visits.
    pub share: f64,
    /// Expected result for the player to act, −1..=1: exact when proven, else the mean of the
    /// visits; `None` when unvisited.
    pub value: Option<f64>,
    /// The network's prior (uniform for random playouts).
    pub prior: f32,
    /// `won`, `lost` or `drawn` for the player to act, when the game ends there or the search
    /// proved the result with best play.
    pub proven: Option<&'static str>,
    /// Actions from this one (included) to the game's end along the proof of a win or loss.
    pub proof_length: Option<u32>,
    /// The line the search expects, starting with `action`.
    pub line: Vec<String>,
}

/// What `engine analyse` found.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Analysis {
    pub game: &'static str,
    /// The position searched, in the game's text format.
    pub position: String,
    pub to_act: &'static str,
    /// The search and, for `net`, its model.
    pub agent: String,
    pub playouts: u64,
    pub seconds: f64,
    /// The root's value for the player to act, −1..=1 (exact when proven).
    pub value: f32,
    /// Legal actions in the position.
    pub legal: usize,
    /// Proven wins first, proven losses last, else most visited first; ties by prior.
    pub candidates: Vec<Candidate>,
}

/// The first `top` candidates of an analysis (0: all) in the game's notation, each line played
/// from `state`.
pub fn candidates<G: Game>(
    state: &G,
    analysis: &games::Analysis<G::Action>,
    top: usize,
) -> Vec<Candidate> {
    let to_act = state.to_act();
    let total: u64 = analysis
        .candidates
        .iter()
        .map(|c| u64::from(c.visits))
        .sum();
    let shown = if top == 0 {
        analysis.candidates.len()
    } else {
        top
    };
    analysis
        .candidates
        .iter()
        .take(shown)
        .map(|c| Candidate {
            action: state.format_action(c.action),
            visits: c.visits,
            share: if total == 0 {
                0.0
            } else {
                f64::from(c.visits) / total as f64
            },
            value: c.value.map(f64::from),
            prior: c.prior,
            proven: c.proven.map(|o| match o.value_for(to_act) {
                v if v > 0.0 => "won",
                v if v < 0.0 => "lost",
                _ => "drawn",
            }),
            proof_length: c.proof_length,
            line: line_text(state, &c.pv),
        })
        .collect()
}

fn analyse_game<G: WebGame>(
    start: G,
    args: &Args,
    doc: &serde_yaml::Value,
    config_path: &Path,
) -> anyhow::Result<()> {
    let state = position(start, args.position.as_deref(), &args.moves)?;
    if let Some(reason) = state.end_reason() {
        bail!("analyse: the game is over in this position ({reason})");
    }
    if args.threads == 0 || args.threads > MAX_THREADS {
        bail!("--threads {}: must be 1 to {MAX_THREADS}", args.threads);
    }
    let limit = limit(args.visits, args.seconds)?;
    let model = models::given_or_shipped(args.model.as_deref(), args.agent.as_deref(), G::NAME);
    let agent_name = args
        .agent
        .clone()
        .unwrap_or_else(|| if model.is_some() { "net" } else { "mcts" }.into());
    let (network, label): (Option<Arc<dyn Evaluator<G>>>, String) = match agent_name.as_str() {
        "mcts" => (None, "mcts (random playouts)".into()),
        "net" => {
            let Some(model) = &model else {
                bail!("--agent net needs --model: no model ships for {}", G::NAME);
            };
            let net = models::evaluator(&state, &model.to_string_lossy(), doc, config_path)
                .context("--model")?;
            (Some(net), format!("net ({})", model.display()))
        }
        other => bail!("--agent {other:?}: must be mcts or net"),
    };
    // A time limit alone gets the unbounded arena a protocol's clock gets.
    let visits = limit.visits.unwrap_or(MAX_VISITS);
    let spec = AgentSpec::tree(network.is_some(), visits, args.threads, args.seed);
    let mut agent = players::spec::build_mcts(&spec, &label, args.seed, &preloaded(network))?;
    agent.set_limit(limit);
    agent.new_game(&state)?;
    let Some(found) = agent.analyse(&state, None)? else {
        bail!("the {agent_name} agent gives no analysis");
    };
    let report = agent.last_report().context("the search made no report")?;
    let analysis = Analysis {
        game: G::NAME,
        position: state.to_text(),
        to_act: G::SIDES[state.to_act().index()],
        agent: label,
        playouts: found.playouts,
        seconds: report.elapsed.as_secs_f64(),
        value: found.value,
        legal: found.candidates.len(),
        candidates: candidates(&state, &found, args.top),
    };
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&analysis)?)
    } else {
        outln!("{}\n{}", G::TITLE, state.render())?;
        out!("{}", table(&analysis))
    }
}

/// The search's limit from the flags: visits, seconds or both.
fn limit(visits: Option<u64>, seconds: Option<f64>) -> anyhow::Result<Limit> {
    if let Some(v) = visits {
        if v == 0 || v > MAX_VISITS {
            bail!("--visits {v}: must be 1 to {MAX_VISITS}");
        }
    }
    let time = match seconds {
        None => None,
        Some(s) if s.is_finite() && s > 0.0 && s <= 86_400.0 => Some(Duration::from_secs_f64(s)),
        Some(s) => bail!("--seconds {s}: must be more than 0 and at most 86400"),
    };
    Ok(Limit {
        visits: visits.or(if time.is_none() {
            Some(DEFAULT_VISITS)
        } else {
            None
        }),
        time,
    })
}

/// `start`, or the position `text` read with `start`'s variant rules, then `moves` played.
pub fn position<G: Game>(start: G, text: Option<&str>, moves: &str) -> anyhow::Result<G> {
    let mut state = match text {
        Some(t) => start
            .parse_position(t)
            .with_context(|| format!("--position '{t}'"))?,
        None => start,
    };
    super::play_moves(&mut state, moves)?;
    Ok(state)
}

/// The analysis as text: a header, then one row per candidate.
pub fn table(a: &Analysis) -> String {
    let mut out = format!(
        "position: {}\n{} to act; {}: {} playouts in {:.2} s; value {:+.3} for {}\n",
        a.position, a.to_act, a.agent, a.playouts, a.seconds, a.value, a.to_act
    );
    let width = a
        .candidates
        .iter()
        .map(|c| c.action.chars().count())
        .max()
        .unwrap_or(0)
        .max("action".len());
    out += &format!(
        "{:<width$}  {:>8}  {:>6}  {:>7}  {:>6}  line\n",
        "action", "visits", "share", "value", "prior"
    );
    for c in &a.candidates {
        let value = match (c.proven, c.value) {
            (Some(p), _) => match c.proof_length {
                Some(n) => format!("{p} {n}"),
                None => p.to_string(),
            },
            (None, Some(v)) => format!("{v:+.3}"),
            (None, None) => "-".into(),
        };
        let mut line = c
            .line
            .iter()
            .take(LINE_SHOWN)
            .cloned()
            .collect::<Vec<_>>()
            .join(" ");
        if c.line.len() > LINE_SHOWN {
            line += " …";
        }
        out += &format!(
            "{:<width$}  {:>8}  {:>5.1}%  {:>7}  {:>6.3}  {line}\n",
            c.action,
            c.visits,
            100.0 * c.share,
            value,
            c.prior
        );
    }
    if a.candidates.len() < a.legal {
        out += &format!(
            "({} of {} legal actions shown; --top 0 lists all)\n",
            a.candidates.len(),
            a.legal
        );
    }
    out
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

//! What a search found in one position, as a table or JSON: the candidate actions it weighed,
//! each with its visits, value, prior and expected line ([`Analysis`]), and the one search
//! that finds it ([`search`]), an MCTS built by `players::spec` like every face's.

use std::sync::Arc;

use anyhow::{bail, Context};
use eval::Evaluator;
use games::{Agent, Game};
use players::spec::{build_mcts, preloaded, AgentSpec, MAX_VISITS};
use search::{Limit, SearchKind};
use serde::Serialize;

use crate::session::line_text;
use crate::web::view::WebGame;

/// Actions of one candidate's line shown in the table (JSON keeps them all).
const LINE_SHOWN: usize = 12;

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

/// What a search found in one position; its JSON form is `engine analyse --json`'s output.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Analysis {
    pub game: &'static str,
    /// The position searched, in the game's text format.
    pub position: String,
    pub to_act: &'static str,
    /// The search and, for a network's, its model.
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

/// How [`search`] searches: its limit, the threads on the one tree, the seed of its random
/// choices, and the candidates kept, most visited first (0: all).
#[derive(Clone, Copy, Debug)]
pub struct Settings {
    pub limit: Limit,
    /// PUCT or Gumbel at the root.
    pub search: SearchKind,
    pub threads: usize,
    pub seed: u64,
    pub top: usize,
}

/// Searches `state` with MCTS, guided by `network` or else by random playouts, and says what it
/// found. `agent` names the search in the analysis. A time limit alone gets the unbounded arena
/// a protocol's clock gets.
pub fn search<G: WebGame>(
    state: &G,
    network: Option<Arc<dyn Evaluator<G>>>,
    agent: String,
    settings: &Settings,
) -> anyhow::Result<Analysis> {
    let visits = settings.limit.visits.unwrap_or(MAX_VISITS);
    let spec = AgentSpec::tree(network.is_some(), visits, settings.threads, settings.seed)
        .searching(settings.search);
    let mut mcts = build_mcts(&spec, &agent, settings.seed, &preloaded(network))?;
    mcts.set_limit(settings.limit);
    mcts.new_game(state)?;
    let Some(found) = mcts.analyse(state, None)? else {
        bail!("the {agent} search gives no analysis");
    };
    let report = mcts.last_report().context("the search made no report")?;
    Ok(Analysis {
        game: G::NAME,
        position: state.to_text(),
        to_act: G::SIDES[state.to_act().index()],
        agent,
        playouts: found.playouts,
        seconds: report.elapsed.as_secs_f64(),
        value: found.value,
        legal: found.candidates.len(),
        candidates: candidates(state, &found, settings.top),
    })
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

impl Analysis {
    /// The analysis as one pretty-printed JSON object.
    pub fn json(&self) -> String {
        serde_json::to_string_pretty(self).expect("an analysis is plain data")
    }

    /// The analysis as text: a header, then one row per candidate.
    pub fn table(&self) -> String {
        let a = self;
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
            out += &format!(
                "{:<width$}  {:>8}  {:>5.1}%  {:>7}  {:>6.3}  {}\n",
                c.action,
                c.visits,
                100.0 * c.share,
                c.value_text(),
                c.prior,
                c.line_text()
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
}

impl Candidate {
    /// `won N`/`lost N`/`drawn` when proven, else the value, else `-` (unvisited).
    fn value_text(&self) -> String {
        match (self.proven, self.value) {
            (Some(p), _) => match self.proof_length {
                Some(n) => format!("{p} {n}"),
                None => p.to_string(),
            },
            (None, Some(v)) => format!("{v:+.3}"),
            (None, None) => "-".into(),
        }
    }

    /// The first actions of the line, and `…` when there are more.
    fn line_text(&self) -> String {
        let mut line = self.line[..self.line.len().min(LINE_SHOWN)].join(" ");
        if self.line.len() > LINE_SHOWN {
            line += " …";
        }
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn candidate(action: &str, visits: u32, share: f64, value: Option<f64>) -> Candidate {
        Candidate {
            action: action.into(),
            visits,
            share,
            value,
            prior: 0.25,
            proven: None,
            proof_length: None,
            line: vec![action.into()],
        }
    }

    fn analysis() -> Analysis {
        let mut won = candidate("a7d7", 30, 0.75, Some(1.0));
        won.proven = Some("won");
        won.proof_length = Some(1);
        won.line = (0..14).map(|i| format!("m{i}")).collect();
        Analysis {
            game: "xiangqi",
            position: "3k5/4R4/R8/9/9/9/9/9/9/4K4 w - - 0 1".into(),
            to_act: "Red",
            agent: "mcts (random playouts)".into(),
            playouts: 40,
            seconds: 0.5,
            value: 1.0,
            legal: 5,
            candidates: vec![
                won,
                candidate("e8e7", 10, 0.25, Some(-0.5)),
                candidate("x", 0, 0.0, None),
            ],
        }
    }

    #[test]
    fn the_table_shows_proofs_shares_and_cut_lines() {
        let text = analysis().table();
        let rows: Vec<&str> = text.lines().collect();
        assert_eq!(
            rows[1],
            "Red to act; mcts (random playouts): 40 playouts in 0.50 s; value +1.000 for Red"
        );
        assert!(
            rows[2].starts_with("action  ") && rows[2].ends_with("line"),
            "{text}"
        );
        assert!(
            rows[3].contains("75.0%") && rows[3].contains("won 1"),
            "{text}"
        );
        assert!(rows[3].ends_with("m10 m11 …"), "{text}");
        assert!(rows[4].contains("-0.500"), "{text}");
        assert!(rows[5].contains("      -  "), "{text}");
        assert_eq!(rows[6], "(3 of 5 legal actions shown; --top 0 lists all)");
    }

    #[test]
    fn the_json_keeps_every_field_and_the_whole_line() {
        let v: serde_json::Value = serde_json::from_str(&analysis().json()).unwrap();
        assert_eq!(v["candidates"][0]["proven"], "won");
        assert_eq!(v["candidates"][0]["line"].as_array().unwrap().len(), 14);
        assert_eq!(v["candidates"][2]["value"], serde_json::Value::Null);
        assert_eq!(v["legal"], 5);
    }
}

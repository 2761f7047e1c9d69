//! Liuzhou's own players by name. A spec is `KIND[:KEY=VALUE[,KEY=VALUE…]]`:
//!
//! - `alphabeta[:depth=N][,movetime=MS][,nodes=N][,hash=MiB]`: the searcher of
//!   [`crate::alphabeta::liuzhou`], stopping at the first limit reached (default: movetime=1000;
//!   hash 16 MiB, at most 4096). The keys are Xiangqi's `alphabeta` keys.
//! - `gtp:cmd=COMMAND LINE[,setup=COMMAND;COMMAND…][,timeout=S]`: another Liuzhou program
//!   speaking the GTP dialect of `engine gtp --game liuzhou` ([`crate::gtp_client::liuzhou`]), with
//!   the options of Go's `gtp` agents (`engine gtp --game liuzhou` itself, for one).
//!
//! A `net` or `mcts` spec with `handoff=K` hands the game to alpha-beta once the placement has
//! `K` or fewer empty points left ([`late_in_placement`], [`crate::handoff`]).

use std::time::Duration;

use games::agent::split_spec;
use games::liuzhou::{Liuzhou, Phase, POINTS};
use games::Player;
use games::{Agent, AgentError};

use crate::alphabeta::liuzhou::{LiuzhouAlphaBeta, LiuzhouAlphaBetaAgent, SearchLimits};
use crate::gtp_client::liuzhou::LiuzhouGtpAgent;
use crate::gtp_client::GtpSpec;
use crate::guard::{GuardSpec, Guarded};
use crate::handoff::Handoff;

/// Builds the agent a spec names (see the module docs).
pub fn agent_from_spec(spec: &str) -> Result<Box<dyn Agent<Liuzhou>>, AgentError> {
    let (kind, params) = split_spec(spec)?;
    match kind.trim() {
        "alphabeta" => {
            let (limits, hash) = alphabeta_options(spec, &params)?;
            let agent = LiuzhouAlphaBetaAgent::try_new(limits, hash)
                .map_err(|e| AgentError::new(spec, e.to_string()))?;
            Ok(Box::new(agent))
        }
        "gtp" => {
            let gtp = GtpSpec::parse(spec, &params)?;
            let agent =
                LiuzhouGtpAgent::start(&gtp).map_err(|e| AgentError::new(spec, e.to_string()))?;
            Ok(Box::new(agent))
        }
        other => Err(AgentError::new(
            spec,
            format!(
                "unknown agent kind {other:?} for liuzhou (expected random, mcts, net, alphabeta or gtp)"
            ),
        )),
    }
}

/// The limits and table size (MiB) an `alphabeta` spec asks for.
pub fn alphabeta_options(
    spec: &str,
    params: &[(&str, &str)],
) -> Result<(SearchLimits, usize), AgentError> {
    let mut limits = SearchLimits::default();
    let mut hash = crate::alphabeta::core::DEFAULT_HASH_MB;
    for &(k, v) in params {
        let n: u64 = v
            .parse()
            .map_err(|_| AgentError::new(spec, format!("{k} '{v}' is not a number")))?;
        match k {
            "depth" => {
                if n == 0 {
                    return Err(AgentError::new(spec, "depth must be at least 1"));
                }
                limits.depth = Some(n.min(100) as u32);
            }
            "movetime" => limits.movetime = Some(Duration::from_millis(n)),
            "nodes" => limits.nodes = Some(n),
            "hash" => hash = usize::try_from(n).unwrap_or(usize::MAX),
            _ => {
                return Err(AgentError::new(
                    spec,
                    format!("unknown parameter '{k}' for alphabeta (depth, movetime, nodes, hash)"),
                ))
            }
        }
    }
    if limits == SearchLimits::default() {
        limits.movetime = Some(Duration::from_secs(1));
    }
    Ok((limits, hash))
}

/// Alpha-beta's part of a game for `handoff=K`: the placement once `K` or fewer points are
/// empty (its marks included), and everything after it.
pub fn late_in_placement(state: &Liuzhou, points: u32) -> bool {
    match state.phase() {
        Phase::Place | Phase::Mark => {
            let filled = state.stone_count(Player::First) + state.stone_count(Player::Second);
            POINTS as u32 - filled <= points
        }
        _ => true,
    }
}

impl crate::spec::OwnPlayers for Liuzhou {
    const OWN_KINDS: &'static [&'static str] = &["alphabeta", "gtp"];

    fn own_agent(spec: &str) -> Result<Box<dyn Agent<Liuzhou>>, AgentError> {
        agent_from_spec(spec)
    }

    fn guarded(
        agent: Box<dyn Agent<Liuzhou>>,
        time: Duration,
        guard: GuardSpec,
    ) -> Result<Box<dyn Agent<Liuzhou>>, AgentError> {
        Ok(Box::new(Guarded::<LiuzhouAlphaBeta>::new(
            agent, time, guard,
        )))
    }

    fn handed_off(
        agent: Box<dyn Agent<Liuzhou>>,
        time: Duration,
        points: u32,
    ) -> Result<Box<dyn Agent<Liuzhou>>, AgentError> {
        Ok(Box::new(Handoff::<LiuzhouAlphaBeta>::new(
            agent,
            time,
            points,
            late_in_placement,
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_build_agents_or_say_why_not() {
        assert_eq!(
            agent_from_spec("alphabeta:depth=4").unwrap().name(),
            "alphabeta-d4"
        );
        assert_eq!(
            agent_from_spec("alphabeta").unwrap().name(),
            "alphabeta-1000ms"
        );
        assert_eq!(
            agent_from_spec("alphabeta:nodes=5000,hash=1")
                .unwrap()
                .name(),
            "alphabeta-5000n"
        );
        for (spec, needle) in [
            ("minimax", "unknown agent kind"),
            ("alphabeta:depth", "KEY=VALUE"),
            ("alphabeta:depth=x", "not a number"),
            ("alphabeta:depth=0", "at least 1"),
            ("alphabeta:width=3", "unknown parameter"),
            ("alphabeta:hash=65536", "outside 1..=4096"),
            ("alphabeta:hash=0", "outside 1..=4096"),
        ] {
            let e = agent_from_spec(spec).err().expect(spec).to_string();
            assert!(e.contains(needle), "{spec}: {e}");
        }
    }
}

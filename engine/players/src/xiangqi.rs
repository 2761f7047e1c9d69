//! Xiangqi agents by name, for `engine match` and other faces that take agents on the command
//! line. A spec is `KIND[:KEY=VALUE[,KEY=VALUE…]]`:
//!
//! - `random[:seed=N]`
//! - `alphabeta[:depth=N][,movetime=MS][,nodes=N][,hash=MiB]` (default: movetime=1000; hash
//!   16, at most 4096)
//! - `fairy-stockfish[:movetime=MS][,path=PATH]` (default: 100 ms, the Debian binary)
//! - `uci:cmd=COMMAND LINE[,option.NAME=VALUE…][,go=LIMIT][,rankbase=0|1][,timeout=S]`: any
//!   UCI Xiangqi engine. Each option is sent as `setoption name NAME value VALUE` after `uci`
//!   and checked (an engine that refuses one fails to start, naming it). `go` is the search
//!   limit of every move: `depth N`, `movetime MS` or `nodes N` (default `movetime 1000`).
//!   `rankbase` 1 counts ranks 1–10, 0 as ICCS; by default 1 for Fairy-Stockfish (by its
//!   name), else 0. `timeout` (seconds, default 60) bounds every answer. A program named
//!   without a path is looked for on the `PATH`, then in `/usr/games`.
//!
//! MCTS with a model is added by its own crate, which knows the evaluator.

use std::time::Duration;

use games::agent::{parse_timeout, split_spec};
use games::xiangqi::Xiangqi;
use games::{Agent, AgentError, RandomAgent};

use crate::alphabeta::xiangqi::{AlphaBeta, AlphaBetaAgent, SearchLimits};
use crate::fairy::find_fairy_stockfish;
use crate::guard::Guarded;
use crate::uci_client::{go_line, UciEngineAgent, UciEngineConfig};

/// The limits and table size (MiB) an `alphabeta` spec names (see the module docs).
pub fn alphabeta_settings(spec: &str) -> Result<(SearchLimits, usize), AgentError> {
    let (kind, params) = split_spec(spec)?;
    let number = |key: &str, v: &str| -> Result<u64, AgentError> {
        v.parse()
            .map_err(|_| AgentError::new(spec, format!("{key} '{v}' is not a number")))
    };
    let mut limits = SearchLimits::default();
    let mut hash = crate::alphabeta::core::DEFAULT_HASH_MB;
    for (k, v) in params {
        match k {
            "depth" => limits.depth = Some(number(k, v)?.min(100) as u32),
            "movetime" => limits.movetime = Some(Duration::from_millis(number(k, v)?)),
            "nodes" => limits.nodes = Some(number(k, v)?),
            "hash" => hash = usize::try_from(number(k, v)?).unwrap_or(usize::MAX),
            _ => {
                return Err(AgentError::new(
                    spec,
                    format!("unknown parameter '{k}' for {kind}"),
                ))
            }
        }
    }
    if limits == SearchLimits::default() {
        limits.movetime = Some(Duration::from_secs(1));
    }
    Ok((limits, hash))
}

/// Builds the agent a spec names (see the module docs).
pub fn agent_from_spec(spec: &str) -> Result<Box<dyn Agent<Xiangqi>>, AgentError> {
    let (kind, params) = split_spec(spec)?;
    let number = |key: &str, v: &str| -> Result<u64, AgentError> {
        v.parse()
            .map_err(|_| AgentError::new(spec, format!("{key} '{v}' is not a number")))
    };
    let unknown = |key: &str| {
        Err(AgentError::new(
            spec,
            format!("unknown parameter '{key}' for {kind}"),
        ))
    };
    match kind {
        "random" => {
            let mut seed = 0;
            for (k, v) in params {
                match k {
                    "seed" => seed = number(k, v)?,
                    _ => return unknown(k),
                }
            }
            Ok(Box::new(RandomAgent::new(seed)))
        }
        "alphabeta" => {
            let (limits, hash) = alphabeta_settings(spec)?;
            let agent = AlphaBetaAgent::try_new(limits, hash)
                .map_err(|e| AgentError::new(spec, e.to_string()))?;
            Ok(Box::new(agent))
        }
        "fairy-stockfish" => {
            let mut movetime = 100;
            let mut path = None;
            for (k, v) in params {
                match k {
                    "movetime" => movetime = number(k, v)?,
                    "path" => path = Some(v.to_string()),
                    _ => return unknown(k),
                }
            }
            let path = match path {
                Some(p) => p,
                None => find_fairy_stockfish()
                    .ok_or_else(|| {
                        AgentError::new(
                            spec,
                            "fairy-stockfish not found (apt-get install fairy-stockfish)",
                        )
                    })?
                    .to_string_lossy()
                    .into_owned(),
            };
            Ok(Box::new(UciEngineAgent::spawn(
                UciEngineConfig::fairy_stockfish(&path, movetime),
            )?))
        }
        "uci" => {
            let mut config = UciEngineConfig::command_line("", "go movetime 1000", 0);
            config.rank_base = None;
            for (k, v) in params {
                match k {
                    "cmd" if !v.is_empty() => {
                        config.command = v.split_whitespace().map(String::from).collect()
                    }
                    "cmd" => return Err(AgentError::new(spec, "cmd is empty")),
                    "go" => config.go = go_line(v).map_err(|e| AgentError::new(spec, e))?,
                    "rankbase" => {
                        config.rank_base = Some(match v {
                            "0" => 0,
                            "1" => 1,
                            _ => return Err(AgentError::new(spec, "rankbase is 0 or 1")),
                        })
                    }
                    "timeout" => {
                        config.timeout = parse_timeout(v).map_err(|e| AgentError::new(spec, e))?
                    }
                    _ => match k.strip_prefix("option.") {
                        Some(name) if !name.trim().is_empty() => config
                            .options
                            .push((name.trim().to_string(), v.to_string())),
                        _ => return unknown(k),
                    },
                }
            }
            if config.command.is_empty() {
                return Err(AgentError::new(spec, "uci needs cmd=COMMAND"));
            }
            Ok(Box::new(UciEngineAgent::spawn(config)?))
        }
        other => Err(AgentError::new(
            spec,
            format!("unknown agent '{other}' (random, alphabeta, fairy-stockfish, uci)"),
        )),
    }
}

impl crate::spec::OwnPlayers for Xiangqi {
    const OWN_KINDS: &'static [&'static str] = &["alphabeta", "fairy-stockfish", "uci"];

    fn own_agent(spec: &str) -> Result<Box<dyn Agent<Xiangqi>>, AgentError> {
        agent_from_spec(spec)
    }

    fn guarded(
        agent: Box<dyn Agent<Xiangqi>>,
        time: Duration,
        guard: crate::guard::GuardSpec,
    ) -> Result<Box<dyn Agent<Xiangqi>>, AgentError> {
        Ok(Box::new(Guarded::<AlphaBeta>::new(agent, time, guard)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_build_agents_or_say_why_not() {
        assert_eq!(agent_from_spec("random:seed=3").unwrap().name(), "random");
        assert_eq!(
            agent_from_spec("alphabeta:depth=4").unwrap().name(),
            "alphabeta-d4"
        );
        assert_eq!(
            agent_from_spec("alphabeta").unwrap().name(),
            "alphabeta-1000ms"
        );
        for (spec, needle) in [
            ("minimax", "unknown agent"),
            ("random:seed", "KEY=VALUE"),
            ("random:seed=x", "not a number"),
            ("alphabeta:width=3", "unknown parameter"),
            ("alphabeta:hash=65536", "outside 1..=4096"),
            ("alphabeta:hash=0", "outside 1..=4096"),
            ("uci", "needs cmd"),
            ("uci:cmd=", "cmd is empty"),
            ("uci:cmd=x,rankbase=2", "rankbase"),
            ("uci:cmd=x,go=depth", "go 'depth' is not depth N"),
            ("uci:cmd=x,go=ponder 3", "go 'ponder 3'"),
            ("uci:cmd=x,option.=3", "unknown parameter 'option.'"),
            ("uci:cmd=x,timeout=0", "timeout '0'"),
            ("uci:cmd=/nonexistent/engine", "cannot start"),
        ] {
            let e = agent_from_spec(spec).err().expect(spec).to_string();
            assert!(e.contains(needle), "{spec}: {e}");
        }
    }
}

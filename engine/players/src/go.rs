//! Go agents by name, for `engine match` and other faces that take agents on the command line.
//! A spec is `KIND[:KEY=VALUE[,KEY=VALUE…]]`:
//!
//! - `playout[:seed=N]`: random moves that never fill their own eyes (instant).
//! - `gtp:cmd=COMMAND LINE[,setup=COMMAND;COMMAND…][,timeout=S]`: any GTP engine as a child
//!   process (`gtp:cmd=gnugo --mode gtp,setup=level 1`; a program named without a path is looked
//!   for on the `PATH`, then in `/usr/games`). The `setup` commands are sent once it has
//!   started, and a `?` answer to one is an error naming it. It is killed when an answer takes
//!   more than `timeout` seconds (default 60) and when the match ends. Each game starts with
//!   `boardsize`, `clear_board`, the handicap (`set_free_handicap`) and `komi`.
//!
//! Random, MCTS and network agents are built by the engine, which knows the evaluators.

use games::agent::split_spec;
use games::go::playout::playout_move;
use games::go::{handicap, GoState, Move};
use games::{Agent, AgentError, Game};
use rand::rngs::SmallRng;
use rand::SeedableRng;

use crate::gtp_client::{GtpAgent, GtpSpec};

/// Builds the agent a spec names (see the module docs).
pub fn agent_from_spec(spec: &str) -> Result<Box<dyn Agent<GoState>>, AgentError> {
    let (kind, params) = split_spec(spec)?;
    match kind.trim() {
        "gtp" => {
            let gtp = GtpSpec::parse(spec, &params)?;
            let agent = GtpAgent::spawn_with_setup(gtp.cmd, gtp.timeout, &gtp.setup)
                .map_err(|e| AgentError::new(spec, e.to_string()))?;
            Ok(Box::new(agent))
        }
        "playout" => {
            let mut seed = 1;
            for (k, v) in params {
                match k {
                    "seed" => {
                        seed = v.parse().map_err(|_| {
                            AgentError::new(spec, format!("seed '{v}' is not an unsigned integer"))
                        })?
                    }
                    _ => {
                        return Err(AgentError::new(
                            spec,
                            format!("unknown parameter '{k}' for playout"),
                        ))
                    }
                }
            }
            Ok(Box::new(PlayoutAgent::new(seed)))
        }
        other => Err(AgentError::new(
            spec,
            format!("unknown agent kind '{other}' for go (gtp, playout)"),
        )),
    }
}

/// Plays [`playout_move`]: random, but never fills its own eyes.
pub struct PlayoutAgent {
    rng: SmallRng,
}

impl PlayoutAgent {
    pub fn new(seed: u64) -> Self {
        PlayoutAgent {
            rng: SmallRng::seed_from_u64(seed),
        }
    }
}

impl Agent<GoState> for PlayoutAgent {
    fn name(&self) -> String {
        "playout".into()
    }

    fn is_instant(&self) -> bool {
        true
    }

    fn select_action(&mut self, state: &GoState) -> Result<Move, AgentError> {
        if state.outcome().is_some() {
            return Err(AgentError {
                agent: "playout".into(),
                reason: "the game is over".into(),
            });
        }
        Ok(playout_move(state, &mut self.rng))
    }
}

impl crate::spec::OwnPlayers for GoState {
    const OWN_KINDS: &'static [&'static str] = &["gtp", "playout"];

    fn handicap_start(&self, stones: usize) -> anyhow::Result<GoState> {
        let points = handicap::fixed_handicap(self.size(), stones)
            .map_err(|e| anyhow::anyhow!("handicap {stones}: {e}"))?;
        GoState::with_handicap(self.rules().clone(), &points)
            .map_err(|e| anyhow::anyhow!("handicap {stones}: {e}"))
    }

    fn own_agent(spec: &str) -> Result<Box<dyn Agent<GoState>>, AgentError> {
        agent_from_spec(spec)
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    /// A GTP engine in a few lines of shell: answers everything with an empty success but
    /// `frob` (an error), and `genmove` with `pass`, with `resign`, or (`hang`) not at all.
    fn fake_engine(name: &str) -> String {
        // A file per call: tests run side by side, and rewriting a script another test's
        // shell is reading would leave that shell an empty file.
        static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let path =
            std::env::temp_dir().join(format!("fake_gtp_{}_{call}_{name}.sh", std::process::id()));
        let genmove = match name {
            // exec: the process that hangs is the one killed, no orphan is left.
            "hang" => "exec sleep 30".to_string(),
            answer => format!("printf '= {answer}\\n\\n'"),
        };
        let script = format!(
            "while IFS= read -r line; do case \"$line\" in \
             name) printf '= fake\\n\\n' ;; \
             genmove*) {genmove} ;; \
             frob*) printf '? no frob\\n\\n' ;; \
             quit) printf '=\\n\\n'; exit 0 ;; \
             *) printf '=\\n\\n' ;; esac; done\n"
        );
        std::fs::write(&path, script).unwrap();
        format!("sh {}", path.display())
    }

    #[test]
    fn a_gtp_engine_plays_and_a_hung_one_times_out() {
        let state = GoState::with_size(5);
        let mut ok = agent_from_spec(&format!("gtp:cmd={}", fake_engine("pass"))).unwrap();
        assert_eq!(ok.name(), "fake");
        ok.new_game(&state).unwrap();
        assert_eq!(ok.select_action(&state).unwrap(), games::go::Move::Pass);

        // A resignation ends the game for matches; callers that cannot end one get a pass.
        let mut quitter = agent_from_spec(&format!("gtp:cmd={}", fake_engine("resign"))).unwrap();
        quitter.new_game(&state).unwrap();
        assert_eq!(quitter.decide(&state).unwrap(), games::Decision::Resign);
        assert_eq!(
            quitter.select_action(&state).unwrap(),
            games::go::Move::Pass
        );

        let cmd = fake_engine("hang");
        let mut hung = agent_from_spec(&format!("gtp:cmd={cmd},timeout=0.3")).unwrap();
        hung.new_game(&state).unwrap();
        let asked = Instant::now();
        let e = hung.select_action(&state).unwrap_err().to_string();
        assert!(
            asked.elapsed() < Duration::from_secs(10),
            "{:?}",
            asked.elapsed()
        );
        assert!(e.contains("no answer to `genmove B` within 300ms"), "{e}");
        // The engine was stopped: later requests fail at once instead of waiting again.
        let e = hung.new_game(&state).unwrap_err().to_string();
        assert!(e.contains("closed its output") || e.contains("pipe"), "{e}");
    }

    #[test]
    fn setup_commands_are_sent_and_a_refused_one_is_named() {
        let engine = fake_engine("pass");
        let mut ok = agent_from_spec(&format!("gtp:cmd={engine},setup=level 1; komi 6.5")).unwrap();
        ok.new_game(&GoState::with_size(5)).unwrap();
        let e = agent_from_spec(&format!("gtp:cmd={engine},setup=level 1;frob 3"))
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains("answered `frob 3` with an error: no frob"),
            "{e}"
        );
        let e = agent_from_spec(&format!("gtp:cmd={engine},setup= ; "))
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("setup holds no command"), "{e}");
    }

    #[test]
    fn bad_specs_say_why() {
        for (spec, needle) in [
            ("gtp", "needs cmd"),
            ("gtp:cmd=", "cmd is empty"),
            ("gtp:cmd", "KEY=VALUE"),
            ("gtp:cmd=x,timeout=-1", "timeout '-1'"),
            ("gtp:cmd=x,timeout=inf", "timeout 'inf'"),
            ("gtp:cmd=x,depth=3", "unknown parameter 'depth'"),
            ("gtp:cmd=/nonexistent/engine", "cannot start"),
            ("katago", "unknown agent kind 'katago'"),
        ] {
            let e = agent_from_spec(spec).err().expect(spec).to_string();
            assert!(e.contains(needle), "{spec}: {e}");
        }
    }
}

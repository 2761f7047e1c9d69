//! An external UCI Xiangqi engine (Fairy-Stockfish, Pikafish, this engine's own `engine uci`)
//! as an [`Agent`], so matches can pit anything against it.
//!
//! The agent follows the game through `new_game`/`observe` and sends `position fen START moves
//! …`, so the engine sees the repetition history too. Engines differ in how they number ranks:
//! ICCS (and Pikafish) count 0–9, Fairy-Stockfish 1–10; [`UciEngineConfig::rank_base`] says which,
//! or leaves it to the engine's name. Options are set after `uci` and each is checked: an
//! engine that refuses one stops the start with an error naming it.

use std::time::Duration;

use games::xiangqi::fen::{format_move_with_base, parse_move_with_base};
use games::xiangqi::{Move, Xiangqi};
use games::{Agent, AgentError, Game};

use crate::process::{ChildProcess, ProcessError};

/// How to start and drive an external engine.
#[derive(Clone, Debug)]
pub struct UciEngineConfig {
    /// Program and arguments.
    pub command: Vec<String>,
    /// `setoption name N value V` sent after `uci`, each followed by `isready`: an engine that
    /// answers one with a complaint (`No such option: N`) fails to start, naming it.
    pub options: Vec<(String, String)>,
    /// The `go` line for every move, such as `go movetime 100` or `go depth 8`.
    pub go: String,
    /// 0 for ICCS ranks 0–9, 1 for ranks 1–10; `None`: 1 for Fairy-Stockfish (known by its
    /// `id name`), else 0.
    pub rank_base: Option<u32>,
    /// How long to wait for any answer before declaring the engine dead.
    pub timeout: Duration,
}

impl UciEngineConfig {
    /// An engine started by a command line (program and arguments separated by spaces), with
    /// the `go` line sent for every move and ranks counted from `rank_base`.
    pub fn command_line(line: &str, go: &str, rank_base: u32) -> Self {
        UciEngineConfig {
            command: line.split_whitespace().map(str::to_string).collect(),
            options: Vec::new(),
            go: go.to_string(),
            rank_base: Some(rank_base),
            timeout: Duration::from_secs(60),
        }
    }

    /// Fairy-Stockfish at `path` in its xiangqi variant, thinking `movetime_ms` per move.
    pub fn fairy_stockfish(path: &str, movetime_ms: u64) -> Self {
        UciEngineConfig {
            command: vec![path.to_string()],
            options: vec![("UCI_Variant".into(), "xiangqi".into())],
            go: format!("go movetime {movetime_ms}"),
            rank_base: Some(1),
            timeout: Duration::from_millis(movetime_ms * 10 + 10_000),
        }
    }
}

/// The `go` line for a search limit written `depth 6`, `movetime 300` or `nodes 5000` (several
/// together, and a leading `go`, are allowed); else why not.
pub fn go_line(limit: &str) -> Result<String, String> {
    let words: Vec<&str> = limit.split_whitespace().collect();
    let words = match words.split_first() {
        Some((&"go", rest)) => rest,
        _ => &words[..],
    };
    let usage = || format!("go '{limit}' is not depth N, movetime MS or nodes N");
    if words.is_empty() || words.len() % 2 != 0 {
        return Err(usage());
    }
    for pair in words.chunks(2) {
        let known = matches!(pair[0], "depth" | "movetime" | "nodes");
        if !known || pair[1].parse::<u64>().is_err() {
            return Err(usage());
        }
    }
    Ok(format!("go {}", words.join(" ")))
}

/// Whether an engine's line says it refused a `setoption`: the Stockfish family writes `No
/// such option: NAME`, this engine's UCI face `info string error: setoption: …`.
fn refuses_option(line: &str) -> bool {
    line.starts_with("No such option")
        || (line.starts_with("info string") && line.contains("error"))
}

/// A running external engine.
pub struct UciEngineAgent {
    config: UciEngineConfig,
    name: String,
    process: ChildProcess,
    /// Ranks counted from 0 (ICCS) or 1 (Fairy-Stockfish).
    rank_base: u32,
    start_fen: String,
    moves: Vec<String>,
    /// The game as followed through `observe`, to detect callers that skip it.
    followed: Option<Xiangqi>,
}

impl UciEngineAgent {
    /// Starts the engine, completes the `uci` handshake, sets and checks the options, and
    /// waits for `readyok`.
    pub fn spawn(config: UciEngineConfig) -> Result<Self, AgentError> {
        let program = config.command.first().cloned().unwrap_or_default();
        let err = |reason: String| AgentError {
            agent: program.clone(),
            reason,
        };
        if program.is_empty() {
            return Err(err("empty command line".into()));
        }
        let process =
            ChildProcess::spawn(&config.command).map_err(|e| err(format!("cannot start: {e}")))?;
        let mut agent = UciEngineAgent {
            name: program.clone(),
            rank_base: config.rank_base.unwrap_or(0),
            config,
            process,
            start_fen: Xiangqi::start().to_text(),
            moves: Vec::new(),
            followed: None,
        };
        agent.send("uci")?;
        let id = agent.wait_for(|l| l == "uciok" || l.starts_with("id name "))?;
        if let Some(name) = id.strip_prefix("id name ") {
            agent.name = name.trim().to_string();
            agent.wait_for(|l| l == "uciok")?;
        }
        if agent.config.rank_base.is_none() && agent.name.starts_with("Fairy-Stockfish") {
            agent.rank_base = 1;
        }
        for (n, v) in agent.config.options.clone() {
            agent.send(&format!("setoption name {n} value {v}"))?;
            agent.send("isready")?;
            let lines = agent.read_until(|l| l == "readyok")?;
            if let Some(complaint) = lines.iter().find(|l| refuses_option(l.trim())) {
                return Err(agent.error(format!(
                    "option {n}: refused (the engine said \"{}\")",
                    complaint.trim()
                )));
            }
        }
        agent.ready()?;
        Ok(agent)
    }

    fn error(&self, reason: impl Into<String>) -> AgentError {
        AgentError {
            agent: self.name.clone(),
            reason: reason.into(),
        }
    }

    fn send(&mut self, line: &str) -> Result<(), AgentError> {
        let sent = self.process.send(line);
        sent.map_err(|e| self.error(format!("cannot write '{line}': {e}")))
    }

    /// Reads lines until one satisfies `done`; returns them all, that one last.
    fn read_until(&mut self, done: impl Fn(&str) -> bool) -> Result<Vec<String>, AgentError> {
        let read = self.process.read_until(self.config.timeout, done);
        match read {
            Ok(lines) => Ok(lines),
            Err(ProcessError::Closed { .. }) => Err(self.error("the engine exited")),
            Err(e) => Err(self.error(e.to_string())),
        }
    }

    /// Reads lines until one satisfies `done`, which it returns.
    fn wait_for(&mut self, done: impl Fn(&str) -> bool) -> Result<String, AgentError> {
        let mut lines = self.read_until(done)?;
        Ok(lines.pop().unwrap_or_default().trim().to_string())
    }

    fn ready(&mut self) -> Result<(), AgentError> {
        self.send("isready")?;
        self.wait_for(|l| l == "readyok").map(|_| ())
    }
}

impl Agent<Xiangqi> for UciEngineAgent {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn new_game(&mut self, start: &Xiangqi) -> Result<(), AgentError> {
        self.start_fen = start.to_text();
        self.moves.clear();
        self.followed = Some(start.clone());
        self.send("ucinewgame")?;
        self.ready()
    }

    fn observe(&mut self, before: &Xiangqi, action: Move) -> Result<(), AgentError> {
        match &mut self.followed {
            Some(g) if g.to_text() == before.to_text() => {
                g.play_unchecked(action);
                self.moves
                    .push(format_move_with_base(action, self.rank_base));
            }
            _ => self.followed = None,
        }
        Ok(())
    }

    fn select_action(&mut self, state: &Xiangqi) -> Result<Move, AgentError> {
        let position = match &self.followed {
            Some(g) if g.to_text() == state.to_text() && !self.moves.is_empty() => {
                format!(
                    "position fen {} moves {}",
                    self.start_fen,
                    self.moves.join(" ")
                )
            }
            _ => format!("position fen {}", state.to_text()),
        };
        self.send(&position)?;
        let go = self.config.go.clone();
        self.send(&go)?;
        let line = self.wait_for(|l| l.starts_with("bestmove"))?;
        let text = line.split_whitespace().nth(1).unwrap_or("");
        let m = parse_move_with_base(text, self.rank_base)
            .map_err(|e| self.error(format!("bad bestmove '{line}': {e}")))?;
        if !state.is_legal(m) {
            return Err(self.error(format!("illegal bestmove {text} in {}", state.to_text())));
        }
        Ok(m)
    }
}

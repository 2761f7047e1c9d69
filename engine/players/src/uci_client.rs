//! An external UCI Xiangqi engine (Fairy-Stockfish, Pikafish, this engine's own `engine uci`)
//! as an [`Agent`], so matches can pit anything against it.
//!
//! The agent follows the game through `new_game`/`observe` and sends `position fen START moves
//! …`, so the engine sees the repetition history too. Engines differ in how they number ranks:
//! ICCS (and Pikafish) count 0–9, Fairy-Stockfish 1–10; [`UciEngineConfig::rank_base`] says which.

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
    /// `setoption name N value V` sent after `uci`.
    pub options: Vec<(String, String)>,
    /// The `go` line for every move, such as `go movetime 100` or `go depth 8`.
    pub go: String,
    /// 0 for ICCS ranks 0–9, 1 for ranks 1–10 (Fairy-Stockfish).
    pub rank_base: u32,
    /// How long to wait for any answer before declaring the engine dead.
    pub timeout: Duration,
}

impl UciEngineConfig {
    /// An engine started by a command line (program and arguments separated by spaces), with
    /// the `go` line sent for every move and ICCS ranks (`rank_base` 0) unless told otherwise.
    pub fn command_line(line: &str, go: &str, rank_base: u32) -> Self {
        UciEngineConfig {
            command: line.split_whitespace().map(str::to_string).collect(),
            options: Vec::new(),
            go: go.to_string(),
            rank_base,
            timeout: Duration::from_secs(60),
        }
    }

    /// Fairy-Stockfish at `path` in its xiangqi variant, thinking `movetime_ms` per move.
    pub fn fairy_stockfish(path: &str, movetime_ms: u64) -> Self {
        UciEngineConfig {
            command: vec![path.to_string()],
            options: vec![("UCI_Variant".into(), "xiangqi".into())],
            go: format!("go movetime {movetime_ms}"),
            rank_base: 1,
            timeout: Duration::from_millis(movetime_ms * 10 + 10_000),
        }
    }
}

/// A running external engine.
pub struct UciEngineAgent {
    config: UciEngineConfig,
    name: String,
    process: ChildProcess,
    start_fen: String,
    moves: Vec<String>,
    /// The game as followed through `observe`, to detect callers that skip it.
    followed: Option<Xiangqi>,
}

impl UciEngineAgent {
    /// Starts the engine and completes the `uci` / `isready` handshake.
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
        for (n, v) in agent.config.options.clone() {
            agent.send(&format!("setoption name {n} value {v}"))?;
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

    /// Reads lines until one satisfies `done`, which it returns.
    fn wait_for(&mut self, done: impl Fn(&str) -> bool) -> Result<String, AgentError> {
        let read = self.process.read_until(self.config.timeout, done);
        match read {
            Ok(mut lines) => Ok(lines.pop().unwrap_or_default().trim().to_string()),
            Err(ProcessError::Closed { .. }) => Err(self.error("the engine exited")),
            Err(e) => Err(self.error(e.to_string())),
        }
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
                    .push(format_move_with_base(action, self.config.rank_base));
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
        let m = parse_move_with_base(text, self.config.rank_base)
            .map_err(|e| self.error(format!("bad bestmove '{line}': {e}")))?;
        if !state.is_legal(m) {
            return Err(self.error(format!("illegal bestmove {text} in {}", state.to_text())));
        }
        Ok(m)
    }
}

//! An external UCI Xiangqi engine (Fairy-Stockfish, Pikafish, this engine's own `engine uci`)
//! as an [`Agent`], so matches can pit anything against it.
//!
//! The agent follows the game through `new_game`/`observe` and sends `position fen START moves
//! …`, so the engine sees the repetition history too. Engines differ in how they number ranks:
//! ICCS (and Pikafish) count 0–9, Fairy-Stockfish 1–10; [`UciEngineConfig::rank_base`] says which.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use super::fen::{format_move_with_base, parse_move_with_base};
use super::{Move, Xiangqi};
use crate::{Agent, AgentError, Game};

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
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
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
        let mut child = Command::new(&program)
            .args(&config.command[1.min(config.command.len())..])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| err(format!("cannot start: {e}")))?;
        let stdin = child.stdin.take().ok_or_else(|| err("no stdin".into()))?;
        let stdout = child.stdout.take().ok_or_else(|| err("no stdout".into()))?;
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut agent = UciEngineAgent {
            name: program.clone(),
            config,
            child,
            stdin,
            lines: rx,
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
        writeln!(self.stdin, "{line}")
            .and_then(|_| self.stdin.flush())
            .map_err(|e| self.error(format!("cannot write '{line}': {e}")))
    }

    /// Reads lines until one satisfies `done`, which it returns.
    fn wait_for(&mut self, done: impl Fn(&str) -> bool) -> Result<String, AgentError> {
        let deadline = Instant::now() + self.config.timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    let line = line.trim().to_string();
                    if done(&line) {
                        return Ok(line);
                    }
                }
                Err(RecvTimeoutError::Timeout) => {
                    return Err(self.error(format!("no answer within {:?}", self.config.timeout)))
                }
                Err(RecvTimeoutError::Disconnected) => return Err(self.error("the engine exited")),
            }
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

impl Drop for UciEngineAgent {
    fn drop(&mut self) {
        let _ = writeln!(self.stdin, "quit");
        let _ = self.stdin.flush();
        // Give it a moment to exit on its own, then make sure.
        let until = Instant::now() + Duration::from_millis(500);
        while Instant::now() < until {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

//! Another Go program driven over GTP as a child process (`gnugo --mode gtp --level 1`), and an
//! [`Agent`] on top of it so it can be a match opponent.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use super::{color_letter, GoState, Move};
use crate::{Agent, AgentError, Decision, Game, Player};

/// A failure talking to the external program.
#[derive(Debug, thiserror::Error)]
pub enum GtpClientError {
    #[error("empty command line")]
    EmptyCommand,
    #[error("cannot start `{command}`: {source}")]
    Spawn {
        command: String,
        source: std::io::Error,
    },
    #[error("`{command}`: pipe error: {source}")]
    Io {
        command: String,
        source: std::io::Error,
    },
    #[error("`{command}` closed its output")]
    Closed { command: String },
    #[error("`{command}` gave no answer to `{request}` within {after:?} (stopped)")]
    Timeout {
        command: String,
        request: String,
        after: Duration,
    },
    #[error("`{command}` answered `{request}` with an error: {message}")]
    Refused {
        command: String,
        request: String,
        message: String,
    },
    #[error("`{command}` gave a malformed answer to `{request}`: {answer:?}")]
    Malformed {
        command: String,
        request: String,
        answer: String,
    },
}

/// A GTP engine in a child process: one request at a time, answers read to the blank line.
pub struct GtpClient {
    command: String,
    child: Child,
    stdin: ChildStdin,
    /// The child's output lines, read by a thread of their own so a wait can time out.
    lines: Receiver<std::io::Result<String>>,
    /// How long any one answer may take.
    timeout: Duration,
}

/// How long an answer may take unless told otherwise: generous for a slow genmove, finite so
/// a hung engine cannot stall a match for ever.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

impl GtpClient {
    /// Starts `command_line` (split on whitespace: program then arguments; no shell quoting),
    /// waiting up to [`DEFAULT_TIMEOUT`] for each answer.
    pub fn spawn(command_line: &str) -> Result<GtpClient, GtpClientError> {
        GtpClient::spawn_with_timeout(command_line, DEFAULT_TIMEOUT)
    }

    /// As [`GtpClient::spawn`], waiting up to `timeout` for each answer; an engine that takes
    /// longer is killed and every later request fails.
    pub fn spawn_with_timeout(
        command_line: &str,
        timeout: Duration,
    ) -> Result<GtpClient, GtpClientError> {
        let mut parts = command_line.split_whitespace();
        let program = parts.next().ok_or(GtpClientError::EmptyCommand)?;
        let mut child = Command::new(program)
            .args(parts)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|source| GtpClientError::Spawn {
                command: command_line.into(),
                source,
            })?;
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = BufReader::new(child.stdout.take().expect("piped stdout"));
        let (tx, lines) = mpsc::channel();
        // Ends at the child's end of output, or when the client is gone.
        std::thread::spawn(move || {
            for line in byte_lines(stdout) {
                let end = line.is_err();
                if tx.send(line).is_err() || end {
                    break;
                }
            }
        });
        Ok(GtpClient {
            command: command_line.into(),
            child,
            stdin,
            lines,
            timeout,
        })
    }

    /// The command line it was started with.
    pub fn command(&self) -> &str {
        &self.command
    }

    /// Sends one request and returns the answer's text (after `=`), or the refusal.
    pub fn send(&mut self, request: &str) -> Result<String, GtpClientError> {
        let io = |source| GtpClientError::Io {
            command: self.command.clone(),
            source,
        };
        writeln!(self.stdin, "{request}").map_err(io)?;
        self.stdin.flush().map_err(io)?;
        let deadline = Instant::now() + self.timeout;
        let mut answer = String::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = match self.lines.recv_timeout(left) {
                Ok(Ok(line)) => line,
                Ok(Err(source)) => {
                    return Err(GtpClientError::Io {
                        command: self.command.clone(),
                        source,
                    })
                }
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(GtpClientError::Closed {
                        command: self.command.clone(),
                    })
                }
                Err(RecvTimeoutError::Timeout) => {
                    // A late answer would be taken for the next request's: end the engine.
                    let _ = self.child.kill();
                    return Err(GtpClientError::Timeout {
                        command: self.command.clone(),
                        request: request.into(),
                        after: self.timeout,
                    });
                }
            };
            let line = line.trim_end_matches('\r');
            if line.is_empty() {
                if answer.is_empty() {
                    // Blank lines before an answer are not part of it.
                    continue;
                }
                break;
            }
            if !answer.is_empty() {
                answer.push('\n');
            }
            answer.push_str(line);
        }
        let (ok, rest) = if let Some(rest) = answer.strip_prefix('=') {
            (true, rest)
        } else if let Some(rest) = answer.strip_prefix('?') {
            (false, rest)
        } else {
            return Err(GtpClientError::Malformed {
                command: self.command.clone(),
                request: request.into(),
                answer,
            });
        };
        // Skip the echoed id, if any.
        let body = rest.trim_start_matches(|c: char| c.is_ascii_digit());
        let body = body.strip_prefix(' ').unwrap_or(body).to_string();
        if ok {
            Ok(body)
        } else {
            Err(GtpClientError::Refused {
                command: self.command.clone(),
                request: request.into(),
                message: body,
            })
        }
    }

    /// `genmove` for `who`: the engine's move (`resign` is returned as `None`).
    pub fn genmove(&mut self, who: Player, size: usize) -> Result<Option<Move>, GtpClientError> {
        let request = format!("genmove {}", color_letter(who));
        let answer = self.send(&request)?;
        let answer = answer.trim();
        if answer.eq_ignore_ascii_case("resign") {
            return Ok(None);
        }
        Move::parse_gtp(answer, size)
            .map(Some)
            .map_err(|_| GtpClientError::Malformed {
                command: self.command.clone(),
                request,
                answer: answer.into(),
            })
    }
}

/// The lines of `reader` without their `\n`, bytes that are not UTF-8 replaced: an engine's
/// stray byte must not hide its answer.
fn byte_lines(mut reader: impl BufRead) -> impl Iterator<Item = std::io::Result<String>> {
    let mut buf = Vec::new();
    std::iter::from_fn(move || {
        buf.clear();
        match reader.read_until(b'\n', &mut buf) {
            Ok(0) => None,
            Ok(_) => {
                if buf.last() == Some(&b'\n') {
                    buf.pop();
                }
                Some(Ok(String::from_utf8_lossy(&buf).into_owned()))
            }
            Err(e) => Some(Err(e)),
        }
    })
}

impl Drop for GtpClient {
    fn drop(&mut self) {
        // Ask politely, then make sure the child does not outlive us.
        let _ = writeln!(self.stdin, "quit");
        let _ = self.stdin.flush();
        for _ in 0..50 {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An external GTP engine as an [`Agent`]: it is told every move (`play`) and asked for its own
/// (`genmove`). A `resign` answer is a resignation ([`Agent::decide`]).
pub struct GtpAgent {
    client: GtpClient,
    name: String,
    /// The move our last `genmove` returned: the engine has already played it.
    own_move: Option<(Player, Move)>,
}

impl GtpAgent {
    /// Starts the engine; its name is taken from GTP `name` (and `version`).
    pub fn spawn(command_line: &str) -> Result<GtpAgent, GtpClientError> {
        GtpAgent::spawn_with_timeout(command_line, DEFAULT_TIMEOUT)
    }

    /// As [`GtpAgent::spawn`], with at most `timeout` for any one answer.
    pub fn spawn_with_timeout(
        command_line: &str,
        timeout: Duration,
    ) -> Result<GtpAgent, GtpClientError> {
        let mut client = GtpClient::spawn_with_timeout(command_line, timeout)?;
        let name = client.send("name")?;
        let version = client.send("version").unwrap_or_default();
        let name = match format!("{} {}", name.trim(), version.trim()).trim() {
            "" => command_line.to_string(),
            both => both.to_string(),
        };
        Ok(GtpAgent {
            client,
            name,
            own_move: None,
        })
    }

    pub fn client(&mut self) -> &mut GtpClient {
        &mut self.client
    }

    fn error(&self, e: impl std::fmt::Display) -> AgentError {
        AgentError {
            agent: self.name.clone(),
            reason: e.to_string(),
        }
    }
}

impl Agent<GoState> for GtpAgent {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn new_game(&mut self, start: &GoState) -> Result<(), AgentError> {
        let setup = start.start_stones();
        let n = start.size();
        let requests = [
            format!("boardsize {n}"),
            "clear_board".to_string(),
            format!("komi {}", start.komi()),
        ];
        for r in requests {
            self.client.send(&r).map_err(|e| self.error(e))?;
        }
        // Setup stones are sent as moves: they capture nothing, so the boards agree.
        for (p, who) in setup {
            let r = format!("play {} {}", color_letter(who), p.to_gtp());
            self.client.send(&r).map_err(|e| self.error(e))?;
        }
        for (who, mv) in start.moves_since_start() {
            let r = format!("play {} {}", color_letter(who), mv.to_gtp());
            self.client.send(&r).map_err(|e| self.error(e))?;
        }
        self.own_move = None;
        Ok(())
    }

    /// For callers that cannot end a game early, a resignation is played as a pass (which the
    /// engine is then told, since it did not play it).
    fn select_action(&mut self, state: &GoState) -> Result<Move, AgentError> {
        match self.decide(state)? {
            Decision::Play(mv) => Ok(mv),
            Decision::Resign => Ok(Move::Pass),
        }
    }

    fn decide(&mut self, state: &GoState) -> Result<Decision<Move>, AgentError> {
        let who = state.to_act();
        self.own_move = None;
        let Some(mv) = self
            .client
            .genmove(who, state.size())
            .map_err(|e| self.error(e))?
        else {
            return Ok(Decision::Resign);
        };
        if !state.is_legal(mv) {
            return Err(self.error(format!(
                "answered genmove with {}, illegal here",
                mv.to_gtp()
            )));
        }
        self.own_move = Some((who, mv));
        Ok(Decision::Play(mv))
    }

    fn observe(&mut self, before: &GoState, action: Move) -> Result<(), AgentError> {
        let who = before.to_act();
        if self.own_move.take() == Some((who, action)) {
            return Ok(());
        }
        let r = format!("play {} {}", color_letter(who), action.to_gtp());
        self.client.send(&r).map_err(|e| self.error(e))?;
        Ok(())
    }
}

//! Another program driven over GTP as a child process (`gnugo --mode gtp --level 1`, or
//! `engine gtp --game liuzhou`): the client every game's GTP agent talks through, the `gtp:`
//! spec's options they share ([`GtpSpec`]), what each agent keeps beside it ([`GtpPeer`]), and
//! Go's [`Agent`] on top of it so that a Go program can be a match opponent (Liuzhou's is
//! [`liuzhou`]).

use std::time::{Duration, Instant};

use games::agent::parse_timeout;
use games::go::{color_letter, GoState, Move, Point};
use games::{Agent, AgentError, Decision, Game, Player};

use crate::process::{ChildProcess, ProcessError};

pub mod liuzhou;

/// A failure talking to the external program.
#[derive(Debug, thiserror::Error)]
pub enum GtpClientError {
    #[error(transparent)]
    Process(#[from] ProcessError),
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
    process: ChildProcess,
    /// How long any one answer may take.
    timeout: Duration,
}

/// How long an answer may take unless told otherwise: generous for a slow genmove, finite so
/// a hung engine cannot stall a match for ever.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// The options of a `gtp:cmd=COMMAND LINE[,setup=COMMAND;COMMAND…][,timeout=S]` spec, the
/// same for every game.
#[derive(Clone, Debug, PartialEq)]
pub struct GtpSpec<'a> {
    /// The command line (program then arguments, split on whitespace).
    pub cmd: &'a str,
    /// How long any one answer may take.
    pub timeout: Duration,
    /// Commands sent once it has started.
    pub setup: Vec<String>,
}

impl<'a> GtpSpec<'a> {
    /// Reads the pairs of `spec` (split by [`games::agent::split_spec`]); errors name `spec`.
    pub fn parse(spec: &str, params: &[(&'a str, &'a str)]) -> Result<GtpSpec<'a>, AgentError> {
        let (mut cmd, mut timeout, mut setup) = (None, DEFAULT_TIMEOUT, Vec::new());
        for &(k, v) in params {
            match k {
                "cmd" if !v.is_empty() => cmd = Some(v),
                "cmd" => return Err(AgentError::new(spec, "cmd is empty")),
                "timeout" => {
                    timeout = parse_timeout(v).map_err(|e| AgentError::new(spec, e))?;
                }
                "setup" => {
                    setup = v
                        .split(';')
                        .map(str::trim)
                        .filter(|c| !c.is_empty())
                        .map(String::from)
                        .collect();
                    if setup.is_empty() {
                        return Err(AgentError::new(spec, "setup holds no command"));
                    }
                }
                _ => {
                    return Err(AgentError::new(
                        spec,
                        format!("unknown parameter '{k}' for gtp"),
                    ))
                }
            }
        }
        let cmd = cmd.ok_or_else(|| AgentError::new(spec, "gtp needs cmd=COMMAND"))?;
        Ok(GtpSpec {
            cmd,
            timeout,
            setup,
        })
    }

    /// Starts the program, sends the setup commands (a refusal is an error naming the
    /// command) and asks its `name` and `version`: the client and the name for tables
    /// (the command line when it gives none).
    pub fn start(&self) -> Result<(GtpClient, String), GtpClientError> {
        let mut client = GtpClient::spawn_with_timeout(self.cmd, self.timeout)?;
        for command in &self.setup {
            client.send(command)?;
        }
        let name = client.send("name")?;
        let version = client.send("version").unwrap_or_default();
        let name = match format!("{} {}", name.trim(), version.trim()).trim() {
            "" => self.cmd.to_string(),
            both => both.to_string(),
        };
        Ok((client, name))
    }
}

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
        let process = ChildProcess::spawn_line(command_line).map_err(GtpClientError::from)?;
        Ok(GtpClient { process, timeout })
    }

    /// The command line it was started with.
    pub fn command(&self) -> &str {
        self.process.command()
    }

    /// Sends one request and returns the answer's text (after `=`), or the refusal.
    pub fn send(&mut self, request: &str) -> Result<String, GtpClientError> {
        let command = self.process.command().to_string();
        let after = self.timeout;
        let timed_out = |e: ProcessError| match e {
            ProcessError::Timeout { .. } => GtpClientError::Timeout {
                command: command.clone(),
                request: request.into(),
                after,
            },
            e => GtpClientError::from(e),
        };
        self.process.send(request).map_err(timed_out)?;
        let deadline = Instant::now() + self.timeout;
        let mut answer = String::new();
        loop {
            let line = self.process.read_line(deadline).map_err(timed_out)?;
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
            answer.push_str(&line);
        }
        let (ok, rest) = if let Some(rest) = answer.strip_prefix('=') {
            (true, rest)
        } else if let Some(rest) = answer.strip_prefix('?') {
            (false, rest)
        } else {
            return Err(GtpClientError::Malformed {
                command: self.process.command().to_string(),
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
                command: self.process.command().to_string(),
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
                command: self.process.command().to_string(),
                request,
                answer: answer.into(),
            })
    }
}

/// What every game's GTP agent keeps beside its client: the program's name, the action its
/// last `genmove` returned (the program has played it already, so it is not sent back with
/// `play`), and the reason of the last forfeit.
pub struct GtpPeer<A> {
    client: GtpClient,
    name: String,
    own_move: Option<(Player, A)>,
    /// The reason of the last `decide` error when it was a forfeit.
    forfeit: Option<String>,
}

impl<A: Copy + PartialEq> GtpPeer<A> {
    /// Starts the program of `spec`; its name is taken from GTP `name` (and `version`).
    pub fn start(spec: &GtpSpec<'_>) -> Result<GtpPeer<A>, GtpClientError> {
        let (client, name) = spec.start()?;
        Ok(GtpPeer {
            client,
            name,
            own_move: None,
            forfeit: None,
        })
    }

    pub fn name(&self) -> String {
        self.name.clone()
    }

    pub fn client(&mut self) -> &mut GtpClient {
        &mut self.client
    }

    /// An error of this program that is not a forfeit: the match stops.
    pub fn error(&self, e: impl std::fmt::Display) -> AgentError {
        AgentError {
            agent: self.name.clone(),
            reason: e.to_string(),
        }
    }

    /// Sends one request; a failure is a [`GtpPeer::error`].
    pub fn send(&mut self, request: &str) -> Result<String, AgentError> {
        self.client.send(request).map_err(|e| self.error(e))
    }

    /// Forgets the last decision: a new game, or a new `genmove`.
    pub fn forget(&mut self) {
        self.own_move = None;
        self.forfeit = None;
    }

    /// A forfeit: the error `decide` returns, remembered so that [`GtpPeer::forfeits`] knows it.
    pub fn forfeit(&mut self, reason: String) -> AgentError {
        let e = self.error(&reason);
        self.forfeit = Some(e.reason.clone());
        e
    }

    /// The error for a `genmove` that failed: a refused or unreadable answer is a forfeit
    /// (`unreadable` says what the answer is not), anything else an error.
    pub fn genmove_failed(&mut self, e: GtpClientError, unreadable: &str) -> AgentError {
        match e {
            GtpClientError::Refused {
                request, message, ..
            } => self.forfeit(format!("answered `{request}` with an error: {message}")),
            GtpClientError::Malformed {
                request, answer, ..
            } => self.forfeit(format!(
                "answered `{request}` with {answer:?}, {unreadable}"
            )),
            e => self.error(e),
        }
    }

    /// Whether `error` is the forfeit of the last `decide`.
    pub fn forfeits(&self, error: &AgentError) -> bool {
        self.forfeit.as_deref() == Some(error.reason.as_str())
    }

    /// Records that the program played `action` for `who` in answer to `genmove`.
    pub fn played(&mut self, who: Player, action: A) {
        self.own_move = Some((who, action));
    }

    /// Tells the program that `who` played `action` (the `play` request made by `play`),
    /// unless it was the program's own answer.
    pub fn observe(
        &mut self,
        who: Player,
        action: A,
        play: impl FnOnce() -> String,
    ) -> Result<(), AgentError> {
        if self.own_move.take() == Some((who, action)) {
            return Ok(());
        }
        self.send(&play())?;
        Ok(())
    }
}

/// An external GTP engine as an [`Agent`]: it is told every move (`play`) and asked for its own
/// (`genmove`). A `resign` answer is a resignation ([`Agent::decide`]). An answer to `genmove`
/// that is not a legal move here (an error answer, text that is no vertex, a move the rules
/// refuse) is a forfeit ([`Agent::forfeits`]): a match scores the game as lost by the engine
/// and says why. An engine that dies or does not answer in time stops the match.
pub struct GtpAgent {
    peer: GtpPeer<Move>,
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
        GtpAgent::spawn_with_setup(command_line, timeout, &[])
    }

    /// As [`GtpAgent::spawn_with_timeout`], then sends each of `setup` (`level 1`, `komi 7.5`):
    /// a refusal is an error naming the command.
    pub fn spawn_with_setup(
        command_line: &str,
        timeout: Duration,
        setup: &[String],
    ) -> Result<GtpAgent, GtpClientError> {
        let spec = GtpSpec {
            cmd: command_line,
            timeout,
            setup: setup.to_vec(),
        };
        Ok(GtpAgent {
            peer: GtpPeer::start(&spec)?,
        })
    }

    pub fn client(&mut self) -> &mut GtpClient {
        self.peer.client()
    }
}

impl Agent<GoState> for GtpAgent {
    fn name(&self) -> String {
        self.peer.name()
    }

    fn new_game(&mut self, start: &GoState) -> Result<(), AgentError> {
        let n = start.size();
        self.peer.forget();
        self.peer.send(&format!("boardsize {n}"))?;
        self.peer.send("clear_board")?;
        let handicap = start.handicap_stones();
        let mut plays: Vec<(Player, Point)> = Vec::new();
        if handicap.is_empty() {
            plays = start
                .start_stones()
                .into_iter()
                .map(|(p, who)| (who, p))
                .collect();
        } else {
            // Handicap stones as such, so that the engine knows White moves first; an engine
            // without the command gets them as Black's moves.
            let list: Vec<String> = handicap.iter().map(|p| p.to_gtp()).collect();
            let r = format!("set_free_handicap {}", list.join(" "));
            match self.peer.client().send(&r) {
                Ok(_) => {}
                Err(GtpClientError::Refused { message, .. })
                    if message.contains("unknown command") =>
                {
                    plays = handicap.iter().map(|&p| (Player::First, p)).collect();
                }
                Err(e) => return Err(self.peer.error(e)),
            }
        }
        // Setup stones are sent as moves: they capture nothing, so the boards agree.
        for (who, p) in plays {
            self.peer
                .send(&format!("play {} {}", color_letter(who), p.to_gtp()))?;
        }
        // Komi last: the game's, whatever a handicap command may have made of it.
        self.peer.send(&format!("komi {}", start.komi()))?;
        for (who, mv) in start.moves_since_start() {
            self.peer
                .send(&format!("play {} {}", color_letter(who), mv.to_gtp()))?;
        }
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
        self.peer.forget();
        let mv = match self.peer.client().genmove(who, state.size()) {
            Ok(Some(mv)) => mv,
            Ok(None) => return Ok(Decision::Resign),
            Err(e) => return Err(self.peer.genmove_failed(e, "not a move on this board")),
        };
        if !state.is_legal(mv) {
            return Err(self.peer.forfeit(format!(
                "answered genmove with {}, illegal here",
                mv.to_gtp()
            )));
        }
        self.peer.played(who, mv);
        Ok(Decision::Play(mv))
    }

    fn forfeits(&self, error: &AgentError) -> bool {
        self.peer.forfeits(error)
    }

    fn observe(&mut self, before: &GoState, action: Move) -> Result<(), AgentError> {
        let who = before.to_act();
        self.peer.observe(who, action, || {
            format!("play {} {}", color_letter(who), action.to_gtp())
        })
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use crate::matchplay::{play_game, FORFEIT};
    use games::go::GoRules;
    use games::{Outcome, RandomAgent};

    /// A Go GTP engine in a few lines of shell that answers `genmove` with `answer` and
    /// everything else with an empty success.
    fn fake(name: &str, answer: &str) -> GtpAgent {
        let path =
            std::env::temp_dir().join(format!("fake_go_gtp_{}_{name}.sh", std::process::id()));
        let genmove = match answer {
            "?" => "printf '? cannot\\n\\n'".to_string(),
            answer => format!("printf '= {answer}\\n\\n'"),
        };
        let script = format!(
            "while IFS= read -r line; do case \"$line\" in \
             name) printf '= fake\\n\\n' ;; \
             genmove*) {genmove} ;; \
             quit) printf '=\\n\\n'; exit 0 ;; \
             *) printf '=\\n\\n' ;; esac; done\n"
        );
        std::fs::write(&path, script).unwrap();
        GtpAgent::spawn_with_timeout(&format!("sh {}", path.display()), Duration::from_secs(5))
            .unwrap()
    }

    #[test]
    fn refused_unreadable_and_illegal_answers_are_forfeits() {
        let mut start = GoState::new(GoRules {
            size: 9,
            ..GoRules::default()
        })
        .unwrap();
        start.play(Move::parse_gtp("E5", 9).unwrap()).unwrap();
        for (name, answer, why) in [
            (
                "z99",
                "Z99",
                "answered `genmove W` with \"Z99\", not a move",
            ),
            ("occupied", "E5", "answered genmove with E5, illegal here"),
            ("refuse", "?", "answered `genmove W` with an error: cannot"),
        ] {
            let mut a = fake(name, answer);
            a.new_game(&start).unwrap();
            let e = a.decide(&start).unwrap_err();
            assert!(e.reason.contains(why), "{name}: {e}");
            assert!(a.forfeits(&e), "{name}");
            // The engine (White, to move) loses the game, and the record says why.
            let mut a = fake(name, answer);
            let mut b = RandomAgent::new(1);
            let record = play_game(&start, &mut b, &mut a, 100).unwrap();
            assert_eq!(record.outcome, Outcome::Win(Player::First), "{name}");
            assert_eq!(record.ending, FORFEIT);
            let f = record.forfeit.unwrap();
            assert_eq!((f.player, f.agent.as_str()), (Player::Second, "fake"));
        }
    }

    #[test]
    fn a_legal_answer_is_played_and_no_error_is_a_forfeit() {
        let start = GoState::new(GoRules::default()).unwrap();
        let mut a = fake("e5", "E5");
        a.new_game(&start).unwrap();
        let d = a.decide(&start).unwrap();
        assert_eq!(
            d,
            Decision::Play(Move::parse_gtp("E5", start.size()).unwrap())
        );
        let e = a.peer.error("no answer");
        assert!(!a.forfeits(&e));
    }
}

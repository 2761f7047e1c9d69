//! Go over the Go Text Protocol, version 2, for GUIs (Sabaki, GoGui), match drivers and other
//! engines: one [`Session`] per conversation, driven line by line ([`Session::handle`]) or on
//! stdin/stdout ([`serve_stdio`]). Moves come from the agent the `gtp` section names
//! ([`GtpConfig`], a spec built by `players::spec`): the engine's tree search by default
//! (`mcts`, or `net` with a model), under the controller's clock when it sends
//! `time_settings`.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use eval::Evaluator;

use games::go::playout::{cleanup_move, estimate_score, playout_move, ScoreEstimate};
use games::go::sgf::SgfGame;
use games::go::{handicap, GoRules, GoState, Move, MoveCap, Point, MAX_SIZE, MIN_SIZE};
use games::{Agent, Analysis, Decision, Game, Player};
use players::spec::AgentSpec;

use super::clock::{GameClock, TimeSystem};
use super::frame::{
    answer, arity, common_command, parse_colour, parse_count, read_request, Conversation,
};
use super::{build_agent_and_network, GtpConfig};

/// The agent the `gtp` section names (see [`GtpConfig::spec`]), with the board size it is
/// limited to (a network's). `start` gives the rules a network must fit; `doc` and `path` the
/// config its inference settings come from. A `net` agent needs its model named: the command
/// line finds the default network.
pub fn make_agent(
    config: &GtpConfig,
    start: &GoState,
    doc: &serde_yaml::Value,
    path: &Path,
) -> anyhow::Result<(Box<dyn Agent<GoState>>, Option<usize>)> {
    make_agent_and_network(config, start, doc, path).map(|(agent, size, _)| (agent, size))
}

/// The agent and board size of [`make_agent`], and the network it loaded, if any: a session
/// given it ([`Session::set_network`]) reports the network's ownership and score in
/// `kata-analyze`.
pub type AgentAndNetwork = (
    Box<dyn Agent<GoState>>,
    Option<usize>,
    Option<Arc<dyn Evaluator<GoState>>>,
);

/// [`make_agent`], keeping the network loaded.
pub fn make_agent_and_network(
    config: &GtpConfig,
    start: &GoState,
    doc: &serde_yaml::Value,
    path: &Path,
) -> anyhow::Result<AgentAndNetwork> {
    let spec = config.spec()?;
    let only_size = match &spec {
        AgentSpec::Net { model: None, .. } => {
            anyhow::bail!("agent net needs a model (gtp.model in the config, or --model)")
        }
        // The network's input planes are one board size.
        AgentSpec::Net { .. } => Some(start.size()),
        _ => None,
    };
    let (agent, network) = build_agent_and_network(&spec, config, start, doc, path)?;
    // A network with open board dims plays every size.
    let every_size = network.as_ref().is_some_and(|n| {
        (MIN_SIZE..=MAX_SIZE)
            .all(|size| games::shape_of("go", Some(size)).is_some_and(|shape| n.fits(shape)))
    });
    let only_size = only_size.filter(|_| !every_size);
    Ok((agent, only_size, network))
}

pub use super::frame::serve_stdio;

/// Every command this engine knows, as `list_commands` prints them.
pub const COMMANDS: &[&str] = &[
    "protocol_version",
    "name",
    "version",
    "known_command",
    "list_commands",
    "quit",
    "boardsize",
    "clear_board",
    "komi",
    "play",
    "genmove",
    "undo",
    "showboard",
    "final_score",
    "final_status_list",
    "loadsgf",
    "time_settings",
    "time_left",
    "kgs-time_settings",
    "fixed_handicap",
    "place_free_handicap",
    "set_free_handicap",
    "kgs-genmove_cleanup",
    "printsgf",
    "lz-analyze",
    "kata-analyze",
    "kata-genmove_analyze",
];

/// `lz-analyze` and `kata-analyze` without an interval report once a second.
const ANALYSIS_INTERVAL: Duration = Duration::from_secs(1);

/// Random continuations that decide which stones `final_score` counts as dead.
const SCORE_PLAYOUTS: usize = 200;

/// Random continuations that estimate `kata-analyze`'s ownership where the network has no
/// ownership head.
const OWNERSHIP_PLAYOUTS: usize = 32;

/// Why a command failed: the text after `?`.
type Failure = String;

/// One GTP conversation: the game, its undo stack and the agent.
pub struct Session {
    /// Rules for new games; `boardsize` and `komi` change them.
    rules: GoRules,
    state: GoState,
    /// States before each move, for `undo`.
    undo: Vec<GoState>,
    agent: Box<dyn Agent<GoState>>,
    /// The one board size the agent plays (a network's), if it is bound to one.
    pub only_size: Option<usize>,
    /// Both colours' time under `time_settings` or `kgs-time_settings` (no limit until one
    /// comes). Counted down by our own moves, since a controller need not send `time_left`;
    /// `time_left` corrects it.
    clock: GameClock,
    /// Set by `quit`.
    pub quit: bool,
    /// An `lz-analyze` or `kata-analyze` under way: the session's driver reports its search
    /// until the next command arrives, then sets this back to `None`.
    pub analysing: Option<Analysing>,
    /// A `kata-genmove_analyze` under way: its move is searched in slices, one report each,
    /// and the last report plays the move and ends the answer.
    moving: Option<MoveSearch>,
    /// The agent's network, whose auxiliary heads (ownership, score) `kata-analyze` reports.
    network: Option<Arc<dyn Evaluator<GoState>>>,
    /// Who plays the sizes `only_size` excludes, so that a GUI can open any board: swapped
    /// with `agent` while the board is of another size ([`Session::set_other_sizes`]).
    other_sizes: Option<OtherSizes>,
}

/// A move searched in slices of one analysis interval (`kata-genmove_analyze`).
struct MoveSearch {
    who: Player,
    how: Analysing,
    /// The position searched: the game's, `who` to move.
    before: GoState,
    started: std::time::Instant,
    /// The playouts the slices spent so far, and the most the move may spend (the agent's
    /// visits).
    playouts: u64,
    limit: Option<u64>,
    /// The move's share of the clock, if one runs.
    time: Option<Duration>,
}

/// The player for board sizes the network does not play, and whether it is the one playing.
struct OtherSizes {
    agent: Box<dyn Agent<GoState>>,
    /// What plays instead, for the note on stderr.
    name: String,
    playing: bool,
}

/// How an analysis reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Analysing {
    /// Search time between two reports.
    pub interval: Duration,
    /// Most candidate moves per report (`maxmoves`).
    pub max_moves: Option<usize>,
    /// Leela Zero's lines or KataGo's.
    pub dialect: Dialect,
}

/// The two analysis formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    /// `lz-analyze`: win rates and priors in hundredths of a percent.
    Lz,
    /// `kata-analyze`: fractions, scores, and with `ownership true` every point's owner.
    Kata { ownership: bool },
}

impl Session {
    /// A session on an empty board. The move cap is lifted: under GTP the controller decides
    /// when a game ends.
    pub fn new(rules: GoRules, agent: Box<dyn Agent<GoState>>) -> anyhow::Result<Session> {
        let rules = GoRules {
            move_cap: MoveCap::Unlimited,
            ..rules
        };
        let state = GoState::new(rules.clone())?;
        let mut s = Session {
            rules,
            state,
            undo: Vec::new(),
            agent,
            only_size: None,
            clock: GameClock::default(),
            quit: false,
            analysing: None,
            moving: None,
            network: None,
            other_sizes: None,
        };
        s.new_game()?;
        Ok(s)
    }

    /// Gives the session a player for the board sizes `only_size` excludes (`name` says what
    /// it is): `boardsize` then accepts every size, and says on stderr who plays the others.
    pub fn set_other_sizes(&mut self, agent: Box<dyn Agent<GoState>>, name: &str) {
        self.other_sizes = Some(OtherSizes {
            agent,
            name: name.to_string(),
            playing: false,
        });
    }

    /// Puts the player for a board of `size` in place: the network's agent at its size, the
    /// other sizes' player elsewhere. False when nobody here plays that size.
    fn seat_player_for(&mut self, size: usize) -> bool {
        let Some(only) = self.only_size else {
            return true;
        };
        let Some(other) = &mut self.other_sizes else {
            return only == size;
        };
        if (only != size) != other.playing {
            std::mem::swap(&mut self.agent, &mut other.agent);
            other.playing = !other.playing;
        }
        if other.playing {
            tracing::warn!(
                "go at {size}x{size}: the network plays {only}x{only} only; {} plays this board",
                other.name
            );
        }
        true
    }

    /// The network whose heads describe the game: none while another size's player plays.
    fn playing_network(&self) -> Option<&Arc<dyn Evaluator<GoState>>> {
        if self.other_sizes.as_ref().is_some_and(|o| o.playing) {
            return None;
        }
        self.network.as_ref()
    }

    /// Gives `kata-analyze` the agent's network (see [`make_agent_and_network`]); without one,
    /// or where it has no ownership or score head, those are reported as described at
    /// [`Session::analysis_report`].
    pub fn set_network(&mut self, network: Option<Arc<dyn Evaluator<GoState>>>) {
        self.network = network;
    }

    fn new_game(&mut self) -> anyhow::Result<()> {
        self.state = GoState::new(self.rules.clone())?;
        self.undo.clear();
        self.agent.new_game(&self.state)?;
        self.clock.reset();
        Ok(())
    }

    /// Answers one input line, or `None` for a line with no command (empty or a comment). A
    /// `kata-genmove_analyze` is answered whole, its reports and its move.
    pub fn handle(&mut self, raw: &str) -> Option<String> {
        let mut reply = self.answer(raw)?;
        while self.moving.is_some() {
            reply += &self.move_report();
        }
        Some(reply)
    }

    /// [`Session::handle`], but a `kata-genmove_analyze` that searches in slices answers only
    /// its first line: its driver writes [`Conversation::report`]s until the move is played.
    fn answer(&mut self, raw: &str) -> Option<String> {
        let request = match read_request(raw)? {
            Ok(r) => r,
            Err(reply) => return Some(reply),
        };
        let (id, command, args) = (&request.id, request.command.as_str(), request.arg_strs());
        // The one command whose answer goes on: the first line now, reports until the next
        // command (see `analysis_report`), and the blank line then.
        if command == "lz-analyze" || command == "kata-analyze" {
            return Some(match self.start_analysis(command, &args) {
                Ok(()) => format!("={id}\n"),
                Err(e) => format!("?{id} {e}\n\n"),
            });
        }
        // Analysis lines while the move is searched, then the move on a line of its own.
        if command == "kata-genmove_analyze" {
            return Some(match self.genmove_analyze(&args) {
                Ok(Some(body)) => format!("={id}\n{body}\n"),
                Ok(None) => format!("={id}\n"),
                Err(e) => format!("?{id} {e}\n\n"),
            });
        }
        Some(answer(id, self.execute(command, &args)))
    }

    fn execute(&mut self, command: &str, args: &[&str]) -> Result<String, Failure> {
        if let Some(answer) = common_command(command, args, COMMANDS, &mut self.quit) {
            return answer;
        }
        let arity = |n: usize| arity(command, args, n);
        match command {
            "boardsize" => {
                arity(1)?;
                let n: usize = args[0]
                    .parse()
                    .map_err(|_| "syntax error: boardsize takes an integer".to_string())?;
                if !(MIN_SIZE..=MAX_SIZE).contains(&n) || !self.seat_player_for(n) {
                    return Err("unacceptable size".into());
                }
                self.rules.size = n;
                self.new_game().map_err(|e| e.to_string())?;
                Ok(String::new())
            }
            "clear_board" => {
                arity(0)?;
                self.new_game().map_err(|e| e.to_string())?;
                Ok(String::new())
            }
            "komi" => {
                arity(1)?;
                let komi: f32 = args[0]
                    .parse()
                    .ok()
                    .filter(|k: &f32| k.is_finite() && k.abs() <= 1000.0)
                    .ok_or_else(|| "syntax error: komi takes a number".to_string())?;
                self.set_komi(komi)?;
                Ok(String::new())
            }
            "play" => {
                arity(2)?;
                let who = parse_color(args[0])?;
                let mv = Move::parse_gtp(args[1], self.state.size())
                    .map_err(|_| "invalid color or coordinate".to_string())?;
                let mut before = self.state.clone();
                before.set_to_act(who);
                self.state
                    .play_as(who, mv)
                    .map_err(|_| "illegal move".to_string())?;
                self.undo.push(before.clone());
                self.agent.observe(&before, mv).map_err(|e| e.to_string())?;
                Ok(String::new())
            }
            "genmove" | "kgs-genmove_cleanup" => {
                arity(1)?;
                let who = parse_color(args[0])?;
                self.generate(who, command == "kgs-genmove_cleanup")
            }
            "undo" => {
                arity(0)?;
                let previous = self.undo.pop().ok_or("cannot undo")?;
                self.state = previous;
                self.resync_agent()?;
                Ok(String::new())
            }
            "showboard" => arity(0).map(|_| format!("\n{}", self.state.render())),
            "final_score" => {
                arity(0)?;
                Ok(self.score_estimate().text())
            }
            "final_status_list" => {
                arity(1)?;
                let dead = self.score_estimate().dead;
                let listed: Vec<Point> = match args[0] {
                    "dead" => dead,
                    "alive" => [Player::First, Player::Second]
                        .into_iter()
                        .flat_map(|who| self.state.stones_of(who))
                        .filter(|p| !dead.contains(p))
                        .collect(),
                    // Seki is not told apart from life.
                    "seki" => Vec::new(),
                    _ => return Err("syntax error: final_status_list alive|dead|seki".into()),
                };
                Ok(listed
                    .iter()
                    .map(|p| p.to_gtp())
                    .collect::<Vec<_>>()
                    .join(" "))
            }
            "loadsgf" => {
                if args.is_empty() || args.len() > 2 {
                    return Err("syntax error: loadsgf FILE [MOVE_NUMBER]".into());
                }
                let limit = match args.get(1) {
                    None => None,
                    Some(t) => match t.parse::<usize>() {
                        Ok(n) if n >= 1 => Some(n - 1),
                        Ok(_) => return Err("syntax error: move number must be 1 or more".into()),
                        Err(_) => {
                            return Err(format!("syntax error: move number {t:?} is not a number"))
                        }
                    },
                };
                self.load_sgf(Path::new(args[0]), limit)
            }
            // The searching agents take their share of the clock (see `GameClock::move_time`).
            "time_settings" => {
                arity(3)?;
                let main = parse_count("main time", args[0])?;
                let byo = parse_count("byo-yomi time", args[1])?;
                let stones = parse_count("byo-yomi stones", args[2])?;
                self.clock
                    .set(Some(TimeSystem::Canadian { main, byo, stones }));
                Ok(String::new())
            }
            "kgs-time_settings" => {
                let system = parse_kgs_time(args)?;
                self.clock.set(system);
                Ok(String::new())
            }
            "time_left" => {
                arity(3)?;
                let who = parse_color(args[0]).map_err(|_| {
                    format!(
                        "syntax error: invalid color {:?} (b, w, black, white)",
                        args[0]
                    )
                })?;
                let secs = parse_count("time", args[1])?;
                let stones = parse_count("stones", args[2])?;
                self.clock.set_left(who, secs, stones);
                Ok(String::new())
            }
            "fixed_handicap" | "place_free_handicap" => {
                arity(1)?;
                let n: usize = args[0]
                    .parse()
                    .map_err(|_| format!("syntax error: {command} takes a number of stones"))?;
                self.board_empty()?;
                let size = self.state.size();
                let stones = if command == "fixed_handicap" {
                    handicap::fixed_handicap(size, n)
                } else {
                    handicap::free_handicap(size, n)
                }
                .map_err(|e| format!("invalid handicap: {e}"))?;
                self.set_handicap(&stones)?;
                Ok(stones
                    .iter()
                    .map(|p| p.to_gtp())
                    .collect::<Vec<_>>()
                    .join(" "))
            }
            "set_free_handicap" => {
                let size = self.state.size();
                let stones = args
                    .iter()
                    .map(|v| {
                        Point::parse_gtp(v, size)
                            .map_err(|_| format!("syntax error: invalid vertex {v:?}"))
                    })
                    .collect::<Result<Vec<Point>, Failure>>()?;
                self.board_empty()?;
                handicap::check_placement(size, &stones)
                    .map_err(|e| format!("bad vertex list: {e}"))?;
                self.set_handicap(&stones)?;
                Ok(String::new())
            }
            "printsgf" => match args {
                [] => Ok(self.sgf().trim_end().to_string()),
                [path] => games::record::write_file(Path::new(path), &self.sgf())
                    .map(|()| String::new())
                    .map_err(|e| format!("cannot write {path}: {e}")),
                _ => Err("syntax error: printsgf [FILE]".into()),
            },
            _ => Err("unknown command".into()),
        }
    }

    /// `genmove` (and with `cleanup`, `kgs-genmove_cleanup`): the agent's move for `who`,
    /// played. In a cleanup the game goes on until dead stones are captured: where the agent
    /// would pass or resign, or two passes have ended the game, the move is
    /// [`cleanup_move`]'s, and a pass only when nothing else is left.
    fn generate(&mut self, who: Player, cleanup: bool) -> Result<String, Failure> {
        self.generate_reporting(who, cleanup, None)
            .map(|(mv, _)| mv)
    }

    /// `kata-genmove_analyze [COLOR] [INTERVAL] [KEY VALUE …]`: `genmove` for COLOR (the
    /// player to move when left out) that reports as KataGo's does. Where the move's search has
    /// an end the face can count (the agent's visits, or the clock's share), the answer goes
    /// on: `None`, and [`Session::move_report`] searches it one interval at a time, each
    /// followed by a `kata-analyze` line, until the visits are spent or the time is up, then
    /// plays the move (`play MOVE`). Otherwise the move is searched at once and answered with
    /// one line of its search, then `play MOVE`.
    fn genmove_analyze(&mut self, args: &[&str]) -> Result<Option<String>, Failure> {
        let (colour, how) = parse_analysis("kata-genmove_analyze", args)?;
        let who = colour.unwrap_or(self.state.to_act());
        let mut before = self.state.clone();
        before.set_to_act(who);
        let limit = self.agent.visit_limit();
        let time = self.clock.move_time(who);
        if before.outcome().is_none() && (limit.is_some() || time.is_some()) {
            self.moving = Some(MoveSearch {
                who,
                how,
                before,
                started: std::time::Instant::now(),
                playouts: 0,
                limit,
                time,
            });
            return Ok(None);
        }
        let (mv, line) = self.generate_reporting(who, false, Some(how))?;
        Ok(Some(format!("{line}play {mv}\n")))
    }

    /// Searches one more interval of the `kata-genmove_analyze` under way and reports it; the
    /// last report also chooses the move from the tree (no search of its own), plays it and
    /// ends the answer: `play MOVE` and the blank line.
    fn move_report(&mut self) -> String {
        let Some(mut m) = self.moving.take() else {
            return String::new();
        };
        let left = m.time.map(|t| t.saturating_sub(m.started.elapsed()));
        let slice = left.map_or(m.how.interval, |l| l.min(m.how.interval));
        let mut line = String::new();
        let mut searching = !slice.is_zero() && m.limit.is_none_or(|n| m.playouts < n);
        if searching {
            match self.agent.analyse(&m.before, Some(slice)) {
                Ok(Some(found)) => {
                    m.playouts += found.playouts;
                    line = self.report_line(&m.before, &found, &m.how);
                    // A slice that adds nothing (a proven root) would add nothing again.
                    searching = found.playouts > 0;
                }
                // An agent that does not search decides at once.
                Ok(None) | Err(_) => searching = false,
            }
        }
        let spent = m.limit.is_some_and(|n| m.playouts >= n)
            || m.time.is_some_and(|t| m.started.elapsed() >= t);
        if searching && !spent {
            self.moving = Some(m);
            return line;
        }
        // The tree is searched: the move is chosen from it as it stands.
        self.agent.set_move_time(Some(Duration::ZERO));
        let decision = self.agent.decide(&m.before);
        self.agent.set_move_time(self.clock.move_time(m.who));
        self.clock.account(m.who, m.started.elapsed());
        let played = decision
            .map_err(|e| e.to_string())
            .and_then(|d| self.play_decision(m.before, m.who, d, false));
        match played {
            Ok(mv) => format!("{line}play {mv}\n\n"),
            // The answer began with `=`: the reason goes to stderr, the answer ends.
            Err(e) => {
                tracing::warn!("kata-genmove_analyze: {e}");
                format!("{line}\n")
            }
        }
    }

    /// [`Session::generate`]; with `report`, also the analysis line of the move's search
    /// (empty for agents that do not search).
    fn generate_reporting(
        &mut self,
        who: Player,
        cleanup: bool,
        report: Option<Analysing>,
    ) -> Result<(String, String), Failure> {
        let mut before = self.state.clone();
        before.set_to_act(who);
        let decision = if before.outcome().is_some() {
            // After two passes the game is over for the rules; GTP may still ask.
            Decision::Play(Move::Pass)
        } else {
            self.agent.set_move_time(self.clock.move_time(who));
            let t0 = std::time::Instant::now();
            let decision = self.agent.decide(&before).map_err(|e| e.to_string())?;
            self.clock.account(who, t0.elapsed());
            decision
        };
        // The tree the move was chosen from, looked at a moment more.
        let line = match report {
            Some(how) if before.outcome().is_none() => {
                match self.agent.analyse(&before, Some(Duration::from_millis(1))) {
                    Ok(Some(found)) => self.report_line(&before, &found, &how),
                    _ => String::new(),
                }
            }
            _ => String::new(),
        };
        let mv = self.play_decision(before, who, decision, cleanup)?;
        Ok((mv, line))
    }

    /// Plays `decision` (of `who`, in `before`) on the board and answers it as `genmove`
    /// does: with `cleanup`, a pass or resignation becomes [`cleanup_move`]'s move while dead
    /// stones can be taken; a resignation leaves the board as it is.
    fn play_decision(
        &mut self,
        before: GoState,
        who: Player,
        decision: Decision<Move>,
        cleanup: bool,
    ) -> Result<String, Failure> {
        let mv = match decision {
            Decision::Play(Move::Place(p)) => Move::Place(p),
            Decision::Play(Move::Pass) | Decision::Resign if cleanup => {
                let dead = estimate_score(&before, SCORE_PLAYOUTS, 0).dead;
                cleanup_move(&before, &dead).unwrap_or(Move::Pass)
            }
            Decision::Play(Move::Pass) => Move::Pass,
            // The board stays as it is: the controller ends the game.
            Decision::Resign => return Ok("resign".into()),
        };
        self.state
            .play_as(who, mv)
            .map_err(|e| format!("agent chose an illegal move: {e}"))?;
        self.undo.push(before.clone());
        self.agent.observe(&before, mv).map_err(|e| e.to_string())?;
        Ok(mv.to_gtp())
    }

    /// The dead stones and the area score that `final_score` and `final_status_list` report:
    /// by the network's ownership where it has that head (a stone is dead where the network
    /// gives its point to the opponent, ownership −0.5 or less from the stone's side), else by
    /// [`SCORE_PLAYOUTS`] random continuations (dead: the opponent's in 3/4 of them); the
    /// stones left are counted by area.
    fn score_estimate(&self) -> ScoreEstimate {
        self.network_estimate()
            .unwrap_or_else(|| estimate_score(&self.state, SCORE_PLAYOUTS, 0))
    }

    /// [`Session::score_estimate`] by the network's ownership; `None` without an ownership head
    /// (or where its call fails).
    fn network_estimate(&self) -> Option<ScoreEstimate> {
        let net = self
            .playing_network()
            .map(|n| n.as_ref())
            .filter(|n| n.heads().ownership)?;
        let own = search::root_aux(net, &self.state, &[]).ok()??.ownership?;
        let n = self.state.size();
        // The ownership is for the player to move; +1 here: Black's.
        let black = if self.state.to_act() == Player::First {
            1.0
        } else {
            -1.0
        };
        let mut dead = Vec::new();
        let mut alive = Vec::new();
        for who in [Player::First, Player::Second] {
            let side = if who == Player::First { black } else { -black };
            for p in self.state.stones_of(who) {
                if side * own[p.row as usize * n + p.col as usize] <= -0.5 {
                    dead.push(p);
                } else {
                    alive.push((p, who));
                }
            }
        }
        let rules = GoRules {
            move_cap: MoveCap::Unlimited,
            ..self.state.rules().clone()
        };
        // Removing stones only adds liberties: the setup left is valid.
        let cleaned = GoState::from_setup(rules, &alive, self.state.to_act()).ok()?;
        Some(ScoreEstimate {
            dead,
            score: cleaned.score(),
        })
    }

    /// Handicap commands need an empty board.
    fn board_empty(&self) -> Result<(), Failure> {
        let stones = [Player::First, Player::Second]
            .iter()
            .any(|&who| !self.state.stones_of(who).is_empty());
        if stones {
            Err("board not empty".into())
        } else {
            Ok(())
        }
    }

    /// Starts the game again from Black's handicap `stones`, White to move. They are not
    /// moves: `undo` does not take them back.
    fn set_handicap(&mut self, stones: &[Point]) -> Result<(), Failure> {
        self.state = GoState::with_handicap(self.rules.clone(), stones)
            .map_err(|e| format!("invalid handicap: {e}"))?;
        self.undo.clear();
        self.agent.new_game(&self.state).map_err(|e| e.to_string())
    }

    /// The game so far as an SGF record (handicap, setup and moves; the result once over).
    fn sgf(&self) -> String {
        SgfGame::from_state(&self.state).to_sgf()
    }

    /// `lz-analyze [COLOR] [INTERVAL] [KEY VALUE …]` (Leela Zero's extension, which Sabaki
    /// and Lizzie speak) and `kata-analyze` (KataGo's, for GUIs that read KataGo's analysis),
    /// read by [`parse_analysis`]. The colour, when given, must be the player to move: an
    /// analysis never changes the game.
    fn start_analysis(&mut self, command: &str, args: &[&str]) -> Result<(), Failure> {
        if self.state.outcome().is_some() {
            return Err("the game is over".into());
        }
        let (colour, how) = parse_analysis(command, args)?;
        if let Some(colour) = colour.filter(|&c| c != self.state.to_act()) {
            let name = if colour == Player::First { "b" } else { "w" };
            return Err(format!(
                "{command}: {name} is not to move (an analysis never changes the game)"
            ));
        }
        // A searching agent answers; the others say at once that they cannot.
        match self
            .agent
            .analyse(&self.state, Some(Duration::from_millis(1)))
        {
            Ok(Some(_)) => {}
            Ok(None) => {
                return Err(format!(
                    "the {} agent does not analyse (mcts and net do)",
                    self.agent.name()
                ))
            }
            Err(e) => return Err(e.to_string()),
        }
        self.analysing = Some(how);
        Ok(())
    }

    /// Searches one more interval of the analysis under way and reports every visited move on
    /// one line. As Leela Zero does: `info move D4 visits 120 winrate 5230 prior 410 order 0 pv
    /// D4 C3 …`, win rates and priors in hundredths of a percent for the player to move. As
    /// KataGo does: `info move D4 visits 120 utility 0.046 winrate 0.523 scoreMean 1.5
    /// scoreStdev 0 scoreLead 1.5 prior 0.041 lcb 0.43 order 0 pv D4 C3 …`, then with
    /// `ownership true` ` ownership` and one value per point from the top left across and
    /// down, all for the player to move (see [`Session::kata_line`]).
    pub fn analysis_report(&mut self) -> String {
        let Some(how) = self.analysing else {
            return String::new();
        };
        let found = match self.agent.analyse(&self.state, Some(how.interval)) {
            Ok(Some(found)) => found,
            // Not expected after the start checked it; ends the analysis cleanly.
            Ok(None) | Err(_) => {
                self.analysing = None;
                return "\n".into();
            }
        };
        let state = self.state.clone();
        self.report_line(&state, &found, &how)
    }

    /// One analysis line of `found` (a search of `state`) in `how`'s dialect, ending in a
    /// newline; empty while no move has a visit.
    fn report_line(&self, state: &GoState, found: &Analysis<Move>, how: &Analysing) -> String {
        match how.dialect {
            Dialect::Lz => lz_line(state, found, how),
            Dialect::Kata { ownership } => self.kata_line(state, found, how, ownership),
        }
    }

    /// KataGo's line. Where the network has a score head, a move's `scoreMean` and
    /// `scoreLead` are the mean of the scores the search backed up through the move's subtree
    /// (the network's final margin at each leaf, a finished game's own margin, for the player
    /// to move) and `scoreStdev` their standard deviation; without one they are 0. The
    /// ownership is the network's where it has that head, mixed over the root and its visited
    /// children by [`search::root_aux`], else the mean area owner at the end of
    /// [`OWNERSHIP_PLAYOUTS`] random continuations (those `final_score` plays). `utility` is
    /// the move's value (−1..1); `lcb` is the win rate less 0.98/√visits (a 95 % bound of a
    /// result with the largest variance).
    fn kata_line(
        &self,
        state: &GoState,
        found: &Analysis<Move>,
        how: &Analysing,
        with_ownership: bool,
    ) -> String {
        // Without a score head the search's scores would be finished games' alone.
        let scored = self.playing_network().is_some_and(|n| n.heads().score);
        let mut line = String::new();
        for (order, c) in found
            .candidates
            .iter()
            .filter(|c| c.visits > 0)
            .take(how.max_moves.unwrap_or(usize::MAX))
            .enumerate()
        {
            let value = c.value.unwrap_or(0.0);
            let winrate = ((value + 1.0) / 2.0).clamp(0.0, 1.0);
            let lcb = winrate - 0.98 / (c.visits as f32).sqrt();
            let (score, stdev) = c.score.filter(|_| scored).unwrap_or((0.0, 0.0));
            let pv = crate::session::line_text(state, &c.pv).join(" ");
            line += &format!(
                "{}info move {} visits {} utility {} winrate {} scoreMean {} scoreStdev {} \
                 scoreLead {} prior {} lcb {} order {order} pv {pv}",
                if order == 0 { "" } else { " " },
                state.format_action(c.action),
                c.visits,
                num(value),
                num(winrate),
                num(score),
                num(stdev),
                num(score),
                num(c.prior),
                num(lcb),
            );
        }
        if line.is_empty() {
            return line;
        }
        if with_ownership {
            let n = state.size();
            let children: Vec<(Move, u32)> = found
                .candidates
                .iter()
                .map(|c| (c.action, c.visits))
                .collect();
            // A failed call only loses the network's ownership: the playouts' stands in.
            let own = self
                .playing_network()
                .and_then(|net| {
                    search::root_aux(net.as_ref(), state, &children)
                        .ok()
                        .flatten()
                })
                .and_then(|a| a.ownership)
                .unwrap_or_else(|| playout_ownership(state));
            line += " ownership";
            // Point `row · n + col`, row 0 the bottom line: KataGo starts at the top left.
            for row in (0..n).rev() {
                for col in 0..n {
                    line.push(' ');
                    line += &num(own[row * n + col]);
                }
            }
        }
        line.push('\n');
        line
    }
    fn set_komi(&mut self, komi: f32) -> Result<(), Failure> {
        self.rules.komi = komi;
        for s in self.undo.iter_mut().chain([&mut self.state]) {
            s.set_komi(komi).map_err(|e| e.to_string())?;
        }
        Ok(())
    }

    /// Tells the agent the whole game again after the position jumped (undo, loadsgf).
    fn resync_agent(&mut self) -> Result<(), Failure> {
        let start = self.state.start();
        self.agent.new_game(&start).map_err(|e| e.to_string())?;
        let mut s = start;
        for (who, mv) in self.state.moves_since_start() {
            s.set_to_act(who);
            self.agent.observe(&s, mv).map_err(|e| e.to_string())?;
            s.play_as(who, mv).map_err(|e| e.to_string())?;
        }
        Ok(())
    }

    /// `loadsgf`: the record's position before move `limit + 1`; answers the colour to move.
    fn load_sgf(&mut self, path: &Path, limit: Option<usize>) -> Result<String, Failure> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot load file: {}: {e}", path.display()))?;
        let game = SgfGame::parse(&text).map_err(|e| format!("cannot load file: {e}"))?;
        if !self.seat_player_for(game.size) {
            let n = self.only_size.unwrap_or(game.size);
            return Err(format!(
                "cannot load file: a {0}×{0} record, and this agent plays {n}×{n} only",
                game.size
            ));
        }
        // A record without KM keeps the session's komi, as other GTP engines do.
        let komi = game.komi.unwrap_or(self.rules.komi);
        let rules = GoRules {
            size: game.size,
            komi,
            ..self.rules.clone()
        };
        let mut state = game
            .start(&rules)
            .map_err(|e| format!("cannot load file: {e}"))?;
        let n = limit.unwrap_or(usize::MAX).min(game.moves.len());
        let mut undo = Vec::with_capacity(n);
        for (i, &(who, mv)) in game.moves[..n].iter().enumerate() {
            let mut before = state.clone();
            before.set_to_act(who);
            state
                .play_as(who, mv)
                .map_err(|e| format!("cannot load file: move {} ({}): {e}", i + 1, mv.to_gtp()))?;
            undo.push(before);
        }
        // The next move: the record's next mover, else the opponent of the last one.
        let next = match game.moves.get(n) {
            Some(&(who, _)) => who,
            None => game
                .moves
                .get(n.wrapping_sub(1))
                .map_or(state.to_act(), |&(who, _)| who.opponent()),
        };
        state.set_to_act(next);
        self.rules.size = game.size;
        self.rules.komi = komi;
        self.state = state;
        self.undo = undo;
        self.resync_agent()?;
        Ok(match next {
            Player::First => "black".into(),
            Player::Second => "white".into(),
        })
    }
}

impl Conversation for Session {
    fn handle(&mut self, line: &str) -> Option<String> {
        self.answer(line)
    }

    fn quit(&self) -> bool {
        self.quit
    }

    fn ongoing(&self) -> bool {
        self.analysing.is_some() || self.moving.is_some()
    }

    fn report(&mut self) -> String {
        if self.moving.is_some() {
            self.move_report()
        } else {
            self.analysis_report()
        }
    }

    fn end_ongoing(&mut self) {
        self.analysing = None;
    }

    /// A `kata-genmove_analyze` runs to its move, as KataGo's does; an analysis ends at the
    /// next line.
    fn interruptible(&self) -> bool {
        self.moving.is_none()
    }
}

/// `kgs-time_settings none | absolute MAIN | byoyomi MAIN PERIOD PERIODS | canadian MAIN
/// BYO STONES` (KGS's extension of `time_settings`); `None`: no limit.
fn parse_kgs_time(args: &[&str]) -> Result<Option<TimeSystem>, Failure> {
    let usage = "syntax error: kgs-time_settings none | absolute MAIN | byoyomi MAIN PERIOD \
                 PERIODS | canadian MAIN BYO STONES";
    Ok(match args {
        ["none"] => None,
        ["absolute", main] => Some(TimeSystem::Canadian {
            main: parse_count("main time", main)?,
            byo: 0,
            stones: 0,
        }),
        ["byoyomi", main, period, periods] => Some(TimeSystem::Byoyomi {
            main: parse_count("main time", main)?,
            period: parse_count("period time", period)?,
            periods: parse_count("periods", periods)?,
        }),
        ["canadian", main, byo, stones] => Some(TimeSystem::Canadian {
            main: parse_count("main time", main)?,
            byo: parse_count("byo-yomi time", byo)?,
            stones: parse_count("byo-yomi stones", stones)?,
        }),
        _ => return Err(usage.into()),
    })
}

/// Leela Zero's line of `found` (a search of `state`).
fn lz_line(state: &GoState, found: &Analysis<Move>, how: &Analysing) -> String {
    let per_10k = |x: f32| (x.clamp(0.0, 1.0) * 10_000.0).round() as u32;
    let mut line = String::new();
    for (order, c) in found
        .candidates
        .iter()
        .filter(|c| c.visits > 0)
        .take(how.max_moves.unwrap_or(usize::MAX))
        .enumerate()
    {
        let winrate = per_10k((c.value.unwrap_or(0.0) + 1.0) / 2.0);
        let pv = crate::session::line_text(state, &c.pv).join(" ");
        line += &format!(
            "{}info move {} visits {} winrate {winrate} prior {} order {order} pv {pv}",
            if order == 0 { "" } else { " " },
            state.format_action(c.action),
            c.visits,
            per_10k(c.prior),
        );
    }
    // A report with no visited move yet would read as the blank line that ends the answer.
    if !line.is_empty() {
        line.push('\n');
    }
    line
}

/// Each point's mean owner (`row · N + col`) at the end of [`OWNERSHIP_PLAYOUTS`] random
/// continuations of `state` (of at most 3·N² moves each, with a fixed seed), for its player to
/// move.
fn playout_ownership(state: &GoState) -> Vec<f32> {
    use rand::SeedableRng;
    let n = state.size();
    let mut rng = rand::rngs::SmallRng::seed_from_u64(0);
    let mut owned = vec![0i32; n * n];
    for _ in 0..OWNERSHIP_PLAYOUTS {
        let mut s = state.clone();
        for _ in 0..3 * n * n {
            if s.outcome().is_some() {
                break;
            }
            let mv = playout_move(&s, &mut rng);
            s.play_unchecked(mv);
        }
        for (sum, owner) in owned.iter_mut().zip(s.ownership()) {
            *sum += i32::from(owner);
        }
    }
    let sign = if state.to_act() == Player::First {
        1.0
    } else {
        -1.0
    };
    owned
        .into_iter()
        .map(|o| sign * o as f32 / OWNERSHIP_PLAYOUTS as f32)
        .collect()
}

/// A number as KataGo writes them: up to 6 decimals, no trailing zeros, no `-0`.
fn num(x: f32) -> String {
    let text = format!("{x:.6}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    match text {
        "-0" | "" => "0".into(),
        t => t.into(),
    }
}

/// Reads an analysis command's arguments: `[COLOR] [INTERVAL] [KEY VALUE …]`, INTERVAL in
/// centiseconds, keys in any order: `interval N`, `maxmoves N`, `minmoves N` (read and
/// ignored), and for the `kata-` commands `ownership true|false` and KataGo's other switches
/// (`ownershipStdev`, `movesOwnership`, `movesOwnershipStdev`, `pvVisits`, `pvEdgeVisits`,
/// `rootInfo`: read and ignored). Returns the colour, when given, and how to report.
fn parse_analysis(command: &str, args: &[&str]) -> Result<(Option<Player>, Analysing), Failure> {
    let kata = command.starts_with("kata-");
    let mut ownership = false;
    let mut how = Analysing {
        interval: ANALYSIS_INTERVAL,
        max_moves: None,
        dialect: Dialect::Lz,
    };
    let centiseconds = |cs: u32| Duration::from_millis(u64::from(cs) * 10);
    let mut colour = None;
    let mut rest = args;
    if let Some((first, tail)) = rest.split_first() {
        if let Ok(c) = parse_color(first) {
            colour = Some(c);
            rest = tail;
        }
    }
    if let Some((first, tail)) = rest.split_first() {
        if let Ok(cs) = first.parse::<u32>() {
            if cs > 0 {
                how.interval = centiseconds(cs);
            }
            rest = tail;
        }
    }
    while let Some((key, tail)) = rest.split_first() {
        let Some((value, tail)) = tail.split_first() else {
            return Err(format!("syntax error: {command}: {key} needs a value"));
        };
        let flag = || match *value {
            "true" => Ok(true),
            "false" => Ok(false),
            other => Err(format!(
                "syntax error: {command}: {key} is true or false, not {other:?}"
            )),
        };
        match *key {
            "maxmoves" => {
                let n = parse_count(key, value)? as usize;
                how.max_moves = (n > 0).then_some(n);
            }
            "minmoves" => {
                parse_count(key, value)?;
            }
            "interval" => {
                let cs = parse_count(key, value)?;
                if cs > 0 {
                    how.interval = centiseconds(cs);
                }
            }
            "ownership" if kata => ownership = flag()?,
            "ownershipStdev"
            | "movesOwnership"
            | "movesOwnershipStdev"
            | "pvVisits"
            | "pvEdgeVisits"
            | "rootInfo"
                if kata =>
            {
                flag()?;
            }
            other => return Err(format!("syntax error: {command}: unknown option {other:?}")),
        }
        rest = tail;
    }
    if kata {
        how.dialect = Dialect::Kata { ownership };
    }
    Ok((colour, how))
}

/// For the fuzz target: an analysis command's arguments give a plan or a `syntax error`,
/// never a panic.
pub(crate) fn check_analysis_args(command: &str, args: &[String]) {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    if let Err(e) = parse_analysis(command, &args) {
        assert!(e.starts_with("syntax error: "), "{command} {args:?}: {e}");
    }
}

fn parse_color(text: &str) -> Result<Player, Failure> {
    parse_colour(text).ok_or_else(|| "invalid color or coordinate".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    pub(super) fn session(size: usize) -> Session {
        Session::new(
            GoRules::with_size(size),
            players::spec::build_text::<GoState>("playout:seed=1", 1).unwrap(),
        )
        .unwrap()
    }

    #[test]
    fn ids_comments_and_errors_follow_the_protocol() {
        let mut s = session(9);
        assert_eq!(s.handle("").as_deref(), None);
        assert_eq!(s.handle("   # only a comment").as_deref(), None);
        assert_eq!(s.handle("7 protocol_version").as_deref(), Some("=7 2\n\n"));
        assert_eq!(
            s.handle("name # trailing comment").as_deref(),
            Some("= engine\n\n")
        );
        assert_eq!(
            s.handle("12 frobnicate").as_deref(),
            Some("?12 unknown command\n\n")
        );
        assert_eq!(
            s.handle("known_command\tplay").as_deref(),
            Some("= true\n\n")
        );
        assert_eq!(
            s.handle("known_command frobnicate").as_deref(),
            Some("= false\n\n")
        );
        assert!(s.handle("play").unwrap().starts_with("? syntax error"));
        assert!(s
            .handle("boardsize x")
            .unwrap()
            .starts_with("? syntax error"));
        assert_eq!(
            s.handle("boardsize 25").as_deref(),
            Some("? unacceptable size\n\n")
        );
        assert_eq!(
            s.handle("play red D4").as_deref(),
            Some("? invalid color or coordinate\n\n")
        );
        assert_eq!(
            s.handle("play b Z99").as_deref(),
            Some("? invalid color or coordinate\n\n")
        );
        assert_eq!(s.handle("undo").as_deref(), Some("? cannot undo\n\n"));
    }

    #[test]
    fn illegal_plays_are_refused_and_undo_restores() {
        let mut s = session(5);
        assert_eq!(s.handle("play b C3").as_deref(), Some("=\n\n"));
        assert_eq!(s.handle("play w C3").as_deref(), Some("? illegal move\n\n"));
        // The same colour may move twice under GTP.
        assert_eq!(s.handle("play w A1").as_deref(), Some("=\n\n"));
        assert_eq!(s.handle("play w B2").as_deref(), Some("=\n\n"));
        // White A1 is left with A2 once Black takes B1.
        assert_eq!(s.handle("play b B1").as_deref(), Some("=\n\n"));
        assert_eq!(
            s.handle("play b A2").as_deref(),
            Some("=\n\n"),
            "captures A1"
        );
        assert_eq!(s.state.stone_at(games::go::Point::new(0, 0)), None);
        assert_eq!(s.handle("undo").as_deref(), Some("=\n\n"));
        assert_eq!(
            s.state.stone_at(games::go::Point::new(0, 0)),
            Some(Player::Second)
        );
        assert_eq!(s.handle("clear_board").as_deref(), Some("=\n\n"));
        // An empty board: komi decides.
        assert_eq!(s.handle("final_score").as_deref(), Some("= W+7.5\n\n"));
        assert_eq!(s.handle("komi -0.5").as_deref(), Some("=\n\n"));
        assert_eq!(s.handle("final_score").as_deref(), Some("= B+0.5\n\n"));
        assert!(s.handle("komi lots").unwrap().starts_with("? syntax error"));
    }

    #[test]
    fn time_commands_check_their_arguments() {
        let mut s = session(5);
        assert_eq!(s.handle("time_settings 300 30 5").as_deref(), Some("=\n\n"));
        assert_eq!(s.handle("time_left w 120 0").as_deref(), Some("=\n\n"));
        for (line, why) in [
            (
                "time_settings a b c",
                "main time \"a\" is not a whole number",
            ),
            ("time_settings 300 -1 5", "byo-yomi time \"-1\""),
            ("time_settings 300 30", "takes 3 argument(s)"),
            ("time_left b x 1", "time \"x\" is not a whole number"),
            ("time_left b 1 1.5", "stones \"1.5\""),
            ("time_left red 1 1", "invalid color \"red\""),
        ] {
            let reply = s.handle(line).unwrap();
            assert!(
                reply.starts_with("? syntax error") && reply.contains(why),
                "{line}: {reply:?}"
            );
        }
    }

    #[test]
    fn loadsgf_keeps_the_session_komi_unless_the_record_has_one() {
        let dir = std::env::temp_dir().join(format!("gtp_komi_{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (bare, with_km) = (dir.join("bare.sgf"), dir.join("km.sgf"));
        std::fs::write(&bare, "(;FF[4]GM[1]SZ[5];B[cc])").unwrap();
        std::fs::write(&with_km, "(;FF[4]GM[1]SZ[5]KM[0.5];B[cc])").unwrap();
        let mut s = session(9);
        assert_eq!(s.handle("komi 6.5").as_deref(), Some("=\n\n"));
        let load = |s: &mut Session, p: &Path| s.handle(&format!("loadsgf {}", p.display()));
        assert_eq!(load(&mut s, &bare).as_deref(), Some("= white\n\n"));
        assert_eq!(s.state.komi(), 6.5);
        assert_eq!(load(&mut s, &with_km).as_deref(), Some("= white\n\n"));
        assert_eq!(s.state.komi(), 0.5);
        // The komi stays with the session, as if set by `komi`.
        assert_eq!(s.handle("clear_board").as_deref(), Some("=\n\n"));
        assert_eq!(s.state.komi(), 0.5);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn loadsgf_names_a_point_set_up_twice() {
        let dir = std::env::temp_dir().join(format!("gtp_twice_{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("twice.sgf");
        std::fs::write(&path, "(;FF[4]GM[1]SZ[9]AB[ee]AW[ee])").unwrap();
        let reply = session(9)
            .handle(&format!("loadsgf {}", path.display()))
            .unwrap();
        assert!(
            reply.starts_with("? cannot load file") && reply.contains("ee (E5)"),
            "{reply}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn move_cap_reads_in_every_documented_form() {
        let read = |text: &str| serde_yaml::from_str::<GoRules>(text).map(|r| r.move_cap);
        assert_eq!(read("move_cap: auto").unwrap(), MoveCap::Auto);
        assert_eq!(read("move_cap: unlimited").unwrap(), MoveCap::Unlimited);
        assert_eq!(read("move_cap: {moves: 40}").unwrap(), MoveCap::Moves(40));
        assert_eq!(read("move_cap: !moves 40").unwrap(), MoveCap::Moves(40));
        let value: serde_yaml::Value = serde_yaml::from_str("move_cap: {moves: 40}").unwrap();
        assert_eq!(
            serde_yaml::from_value::<GoRules>(value).unwrap().move_cap,
            MoveCap::Moves(40)
        );
        // What the engine writes reads back.
        let rules = GoRules {
            move_cap: MoveCap::Moves(7),
            ..GoRules::default()
        };
        let text = serde_yaml::to_string(&rules).unwrap();
        assert_eq!(serde_yaml::from_str::<GoRules>(&text).unwrap(), rules);
        for bad in ["move_cap: {moves: 0}", "move_cap: !moves 0"] {
            let e = read(bad).unwrap_err().to_string();
            assert!(e.contains("moves must be at least 1"), "{bad}: {e}");
        }
        for bad in [
            "move_cap: never",
            "move_cap: {moves: 3, turns: 2}",
            "move_cap: {turns: 2}",
        ] {
            assert!(read(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn genmove_plays_for_either_colour() {
        let mut s = session(5);
        let reply = s.handle("genmove w").unwrap();
        assert!(reply.starts_with("= "), "{reply}");
        let mv = reply[2..].trim();
        assert!(Move::parse_gtp(mv, 5).is_ok(), "{mv}");
        assert_eq!(s.state.to_act(), Player::First);
        s.handle("play b pass");
        s.handle("play w pass");
        // Both passed: the game is over by the rules, genmove still answers.
        assert_eq!(s.handle("genmove b").as_deref(), Some("= pass\n\n"));
    }

    /// A session whose genmove is answered by a searching agent on a `size` board.
    fn searching(agent: &str, model: Option<&str>, size: usize, visits: u64) -> Session {
        let spec = GtpConfig {
            agent: agent.into(),
            visits,
            model: model.map(String::from),
            ..GtpConfig::default()
        };
        let rules = GoRules::with_size(size);
        let start = GoState::new(rules.clone()).unwrap();
        let none = PathBuf::from("(defaults)");
        let (agent, only) = make_agent(&spec, &start, &serde_yaml::Value::Null, &none).unwrap();
        let mut s = Session::new(rules, agent).unwrap();
        s.only_size = only;
        s
    }

    #[test]
    fn genmove_analyze_of_a_proven_root_ends_with_its_move() {
        // Black passed on an empty board: White's pass ends the game won by komi, which the
        // solver proves at once; timed slices of a proven root add no playouts, so the move
        // is played though its visits are far from spent.
        let mut s = searching("mcts", None, 5, 1_000_000);
        s.handle("play b pass");
        let reply = s.handle("kata-genmove_analyze w 1").unwrap();
        assert!(reply.starts_with("=\n"), "{reply}");
        assert!(
            reply.ends_with("play PASS\n\n") || reply.ends_with("play pass\n\n"),
            "{reply}"
        );
    }

    #[test]
    fn a_hopeless_search_resigns_unless_told_never_to() {
        // White walls on the second and fourth lines of a 5 × 5 board: Black cannot live.
        let walls: Vec<String> = ["2", "4"]
            .iter()
            .flat_map(|row| ["A", "B", "C", "D", "E"].map(|col| format!("play w {col}{row}")))
            .collect();
        let mut s = searching("mcts", None, 5, 400);
        for cmd in &walls {
            assert_eq!(s.handle(cmd).as_deref(), Some("=\n\n"), "{cmd}");
        }
        assert_eq!(s.handle("genmove b").as_deref(), Some("= resign\n\n"));
        // Resigning changes nothing on the board: the controller ends the game.
        assert_eq!(s.state.moves_since_start().len(), 10);
        let never = GtpConfig {
            agent: "mcts".into(),
            resign_threshold: -1.0,
            ..GtpConfig::default()
        };
        let start = GoState::new(GoRules::with_size(5)).unwrap();
        let none = PathBuf::from("(defaults)");
        let (agent, _) = make_agent(&never, &start, &serde_yaml::Value::Null, &none).unwrap();
        let mut s = Session::new(GoRules::with_size(5), agent).unwrap();
        for cmd in &walls {
            s.handle(cmd);
        }
        let reply = s.handle("genmove b").unwrap();
        assert!(Move::parse_gtp(reply[2..].trim(), 5).is_ok(), "{reply}");
        // Out of range: refused with the key's name.
        let bad = GtpConfig {
            resign_threshold: 1.0,
            ..GtpConfig::default()
        };
        let e = make_agent(&bad, &start, &serde_yaml::Value::Null, &none)
            .err()
            .unwrap();
        assert!(e.to_string().contains("gtp.resign_threshold"), "{e}");
    }

    #[test]
    fn the_tree_search_answers_genmove_and_follows_the_game() {
        for (kind, model) in [("mcts", None), ("net", Some("uniform"))] {
            let mut s = searching(kind, model, 5, 200);
            for cmd in ["genmove b", "play w C3", "genmove b", "undo", "genmove b"] {
                let reply = s.handle(cmd).unwrap();
                assert!(reply.starts_with('='), "{kind:?} {cmd}: {reply}");
            }
            assert_eq!(s.state.moves_since_start().len(), 3, "{kind:?}");
        }
        // A network plays the board size it was made for, and refuses others.
        let mut s = searching("net", Some("uniform"), 5, 200);
        assert_eq!(
            s.handle("boardsize 9").as_deref(),
            Some("? unacceptable size\n\n")
        );
        assert_eq!(s.handle("boardsize 5").as_deref(), Some("=\n\n"));
        // Nor a record of another size.
        let dir = std::env::temp_dir().join(format!("gtp-net-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let sgf = dir.join("nine.sgf");
        std::fs::write(&sgf, "(;GM[1]FF[4]SZ[9];B[ee])").unwrap();
        let reply = s.handle(&format!("loadsgf {}", sgf.display())).unwrap();
        assert!(reply.contains("plays 5×5 only"), "{reply}");
        std::fs::remove_dir_all(&dir).unwrap();
        // Without a model there is no network agent.
        let spec = GtpConfig {
            agent: "net".into(),
            ..GtpConfig::default()
        };
        let start = GoState::with_size(9);
        let e = make_agent(&spec, &start, &serde_yaml::Value::Null, Path::new("x"))
            .err()
            .unwrap();
        assert!(e.to_string().contains("needs a model"), "{e}");
    }

    #[test]
    fn another_size_is_played_by_the_other_sizes_player_and_the_network_comes_back() {
        let mut s = searching("net", Some("uniform"), 5, 50);
        let mcts = GtpConfig {
            agent: "mcts".into(),
            visits: 50,
            ..GtpConfig::default()
        };
        let start = GoState::with_size(9);
        let none = PathBuf::from("(defaults)");
        let (other, only) = make_agent(&mcts, &start, &serde_yaml::Value::Null, &none).unwrap();
        assert_eq!(only, None, "the tree search with playouts plays every size");
        s.set_other_sizes(other, "mcts");
        for size in [9, 13, 5, 19, 5] {
            let reply = s.handle(&format!("boardsize {size}")).unwrap();
            assert_eq!(reply, "=\n\n", "boardsize {size}");
            s.handle("clear_board");
            let playing = s.other_sizes.as_ref().unwrap().playing;
            assert_eq!(playing, size != 5, "at {size}");
            let reply = s.handle("genmove b").unwrap();
            assert!(reply.starts_with("= "), "{size}: {reply}");
        }
        // Out of the rules' range stays unacceptable.
        assert_eq!(
            s.handle("boardsize 30").as_deref(),
            Some("? unacceptable size\n\n")
        );
    }

    #[test]
    fn the_tree_search_plays_white_first_after_a_handicap() {
        for (kind, model) in [("mcts", None), ("net", Some("uniform"))] {
            let mut s = searching(kind, model, 9, 100);
            s.handle("komi 0.5");
            assert!(s.handle("fixed_handicap 4").unwrap().starts_with("= "));
            for cmd in ["genmove w", "genmove b", "genmove w"] {
                let reply = s.handle(cmd).unwrap();
                assert!(reply.starts_with("= "), "{kind:?} {cmd}: {reply}");
            }
            let moves = s.state.moves_since_start();
            let colours: Vec<Player> = moves.iter().map(|m| m.0).collect();
            assert_eq!(colours, [Player::Second, Player::First, Player::Second]);
            assert!(s.state.stones_of(Player::First).len() >= 4);
            assert_eq!(s.state.komi(), 0.5, "komi as given");
        }
    }

    #[test]
    fn the_clock_gives_each_move_a_share() {
        let share = |s: &Session, who| s.clock.move_time(who).map(|t| t.as_secs_f64());
        let close = |a: Option<f64>, b: f64| a.is_some_and(|a| (a - b).abs() < 1e-9);
        let mut s = session(5);
        assert_eq!(
            s.clock.move_time(Player::First),
            None,
            "no time settings: no limit"
        );
        s.handle("time_settings 600 0 0");
        // Sudden death, ten minutes: a fortieth, four fifths of it, less the pipe's margin.
        assert!(close(share(&s, Player::First), 600.0 / 40.0 * 0.8 - 0.1));
        // Our own moves count down the clock when the controller sends no time_left.
        s.clock.account(Player::First, Duration::from_secs(200));
        assert!(close(share(&s, Player::First), 400.0 / 40.0 * 0.8 - 0.1));
        assert!(close(share(&s, Player::Second), 600.0 / 40.0 * 0.8 - 0.1));
        // A new game starts the clocks again.
        s.handle("clear_board");
        assert!(close(share(&s, Player::First), 600.0 / 40.0 * 0.8 - 0.1));
        // In byo-yomi, the period shared by the stones left.
        s.handle("time_settings 0 30 5");
        s.handle("time_left w 20 4");
        assert!(close(share(&s, Player::Second), 20.0 / 4.0 * 0.8 - 0.1));
        // Late in main time, a byo-yomi stone's share (the period follows).
        s.handle("time_settings 60 30 5");
        s.handle("time_left b 2 0");
        assert!(close(share(&s, Player::First), 30.0 / 5.0 * 0.8 - 0.1));
        // Main time running out goes on into byo-yomi; a period's last stone starts a new one.
        s.clock.account(Player::First, Duration::from_secs(3));
        assert_eq!(s.clock.left[0], Some((29.0, 4)));
        for _ in 0..4 {
            s.clock.account(Player::First, Duration::from_secs(1));
        }
        assert_eq!(s.clock.left[0], Some((30.0, 5)));
        // Byo-yomi time without stones means no limit, as GTP says.
        s.handle("time_settings 0 1 0");
        assert_eq!(s.clock.move_time(Player::First), None);
        // Nearly out of time: still a little.
        s.handle("time_settings 1 0 0");
        s.handle("time_left b 1 0");
        assert_eq!(
            s.clock.move_time(Player::First),
            Some(Duration::from_millis(50))
        );
    }

    #[test]
    fn a_timed_genmove_keeps_to_its_share() {
        let mut s = searching("mcts", None, 9, 100_000_000);
        // Ten seconds sudden death: about 0.1 s a move, where the visits would take minutes.
        s.handle("time_settings 10 0 0");
        let t0 = std::time::Instant::now();
        assert!(s.handle("genmove b").unwrap().starts_with("= "));
        assert!(t0.elapsed() < Duration::from_secs(5), "{:?}", t0.elapsed());
        let (left, stones) = s.clock.left[0].unwrap();
        assert!(
            left < 10.0 && stones == 0,
            "the move's time came off the clock"
        );
    }

    /// The moves of one `lz-analyze` report: (move, visits, winrate, prior, order, pv).
    fn report_moves(report: &str) -> Vec<(String, u32, u32, u32, usize, Vec<String>)> {
        report
            .trim_end()
            .split("info ")
            .filter(|m| !m.is_empty())
            .map(|m| {
                let w: Vec<&str> = m.split_whitespace().collect();
                assert_eq!(
                    (w[0], w[2], w[4], w[6], w[8], w[10]),
                    ("move", "visits", "winrate", "prior", "order", "pv"),
                    "{m}"
                );
                let n = |i: usize| w[i].parse::<u32>().unwrap();
                (
                    w[1].to_string(),
                    n(3),
                    n(5),
                    n(7),
                    n(9) as usize,
                    w[11..].iter().map(|s| s.to_string()).collect(),
                )
            })
            .collect()
    }

    #[test]
    fn lz_analyze_reports_the_search_as_it_grows() {
        let mut s = searching("mcts", None, 5, 100);
        s.handle("play b C3");
        assert_eq!(s.handle("7 lz-analyze w 2").as_deref(), Some("=7\n"));
        assert_eq!(
            s.analysing,
            Some(Analysing {
                interval: Duration::from_millis(20),
                max_moves: None,
                dialect: Dialect::Lz,
            })
        );
        let mut total = 0;
        for _ in 0..3 {
            let report = s.analysis_report();
            assert!(
                report.starts_with("info move ") && report.ends_with('\n'),
                "{report}"
            );
            let moves = report_moves(&report);
            for (k, (mv, visits, winrate, prior, order, pv)) in moves.iter().enumerate() {
                assert!(s.state.is_legal(s.state.parse_action(mv).unwrap()), "{mv}");
                assert!(*visits > 0 && *winrate <= 10_000 && *prior <= 10_000);
                assert_eq!(*order, k);
                assert_eq!(&pv[0], mv);
            }
            // The tree is kept: each report counts more visits than the last.
            let sum: u32 = moves.iter().map(|m| m.1).sum();
            assert!(sum > total, "{sum} after {total}");
            total = sum;
        }
        // Its driver ends it when a command arrives; the game is unchanged and goes on.
        s.analysing = None;
        assert_eq!(s.state.moves_since_start().len(), 1);
        assert!(s.handle("genmove w").unwrap().starts_with("= "));

        assert_eq!(s.handle("lz-analyze 5 maxmoves 1").as_deref(), Some("=\n"));
        assert_eq!(report_moves(&s.analysis_report()).len(), 1);
        s.analysing = None;
        for (cmd, why) in [
            ("lz-analyze w", "not to move"),
            ("lz-analyze b 10 frob 3", "unknown option \"frob\""),
            ("lz-analyze b 10 maxmoves", "maxmoves needs a value"),
        ] {
            let reply = s.handle(cmd).unwrap();
            assert!(
                reply.starts_with("? ") && reply.contains(why),
                "{cmd}: {reply}"
            );
            assert!(s.analysing.is_none());
        }
        // An agent that searches no tree says so; a finished game has nothing to analyse.
        let mut plain = Session::new(
            GoRules::with_size(5),
            players::spec::build_text::<GoState>("playout:seed=1", 1).unwrap(),
        )
        .unwrap();
        let reply = plain.handle("lz-analyze").unwrap();
        assert!(reply.contains("does not analyse"), "{reply}");
        s.handle("play b pass");
        s.handle("play w pass");
        assert!(s.handle("lz-analyze").unwrap().contains("the game is over"));
    }
}

#[cfg(test)]
mod handicap_tests {
    use super::tests::session;
    use super::*;

    fn sorted(reply: &str) -> Vec<String> {
        let body = reply.strip_prefix("= ").expect(reply).trim();
        let mut v: Vec<String> = body.split_whitespace().map(String::from).collect();
        v.sort();
        v
    }

    #[test]
    fn fixed_handicap_places_the_stones_and_white_moves_first() {
        let mut s = session(9);
        let reply = s.handle("fixed_handicap 3").unwrap();
        assert_eq!(sorted(&reply), ["C3", "C7", "G7"]);
        assert_eq!(s.state.to_act(), Player::Second);
        assert_eq!(s.state.handicap_stones().len(), 3);
        assert_eq!(s.state.komi(), 7.5, "komi as given");
        // Not on a board with stones; the stones are not moves to undo.
        assert_eq!(
            s.handle("fixed_handicap 2").as_deref(),
            Some("? board not empty\n\n")
        );
        assert_eq!(s.handle("undo").as_deref(), Some("? cannot undo\n\n"));
        assert!(s.handle("genmove w").unwrap().starts_with("= "));
        assert_eq!(s.handle("undo").as_deref(), Some("=\n\n"));
        assert_eq!(s.state.handicap_stones().len(), 3);
        for (cmd, why) in [
            ("fixed_handicap 1", "at least 2"),
            ("fixed_handicap 10", "no fixed placement of 10"),
            ("fixed_handicap x", "syntax error"),
            ("fixed_handicap", "syntax error"),
        ] {
            s.handle("clear_board");
            let reply = s.handle(cmd).unwrap();
            assert!(
                reply.starts_with("? ") && reply.contains(why),
                "{cmd}: {reply}"
            );
            assert!(s.state.stones_of(Player::First).is_empty(), "{cmd}");
        }
        let mut small = session(7);
        assert!(small.handle("fixed_handicap 5").unwrap().starts_with("? "));
        assert_eq!(sorted(&small.handle("fixed_handicap 4").unwrap()).len(), 4);
    }

    #[test]
    fn free_handicap_is_placed_or_checked() {
        let mut s = session(9);
        assert_eq!(
            sorted(&s.handle("place_free_handicap 12").unwrap()).len(),
            9
        );
        s.handle("clear_board");
        assert!(s.handle("place_free_handicap 1").unwrap().starts_with("? "));
        let mut tiny = session(5);
        assert!(tiny
            .handle("place_free_handicap 2")
            .unwrap()
            .starts_with("? "));

        for (cmd, why) in [
            ("set_free_handicap A1", "at least 2"),
            ("set_free_handicap A1 A1", "A1 is given twice"),
            ("set_free_handicap A1 Z9", "invalid vertex"),
            ("set_free_handicap A1 pass", "invalid vertex"),
        ] {
            let reply = s.handle(cmd).unwrap();
            assert!(
                reply.starts_with("? ") && reply.contains(why),
                "{cmd}: {reply}"
            );
            // A refused list leaves the board empty.
            assert!(s.state.stones_of(Player::First).is_empty(), "{cmd}");
        }
        assert_eq!(
            s.handle("set_free_handicap A1 B2 J9").as_deref(),
            Some("=\n\n")
        );
        assert_eq!(s.state.to_act(), Player::Second);
        assert_eq!(
            s.handle("set_free_handicap C3 D4").as_deref(),
            Some("? board not empty\n\n")
        );
    }

    #[test]
    fn printsgf_writes_the_handicap_and_loadsgf_reads_it_back() {
        let mut s = session(9);
        s.handle("komi 0.5");
        s.handle("fixed_handicap 4");
        s.handle("play w E5");
        s.handle("play b D4");
        let reply = s.handle("printsgf").unwrap();
        assert!(
            reply.starts_with("= (;") && reply.ends_with(")\n\n"),
            "{reply}"
        );
        assert!(!reply[..reply.len() - 2].contains("\n\n"), "{reply}");
        for part in [
            "HA[4]",
            "KM[0.5]",
            "AB[",
            "[cc]",
            "[cg]",
            "[gc]",
            "[gg]",
            ";W[ee];B[df]",
        ] {
            assert!(reply.contains(part), "{part}: {reply}");
        }
        let dir = std::env::temp_dir().join(format!("gtp_printsgf_{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("game.sgf");
        let cmd = format!("printsgf {}", file.display());
        assert_eq!(s.handle(&cmd).as_deref(), Some("=\n\n"));
        let mut other = session(9);
        assert_eq!(
            other
                .handle(&format!("loadsgf {}", file.display()))
                .as_deref(),
            Some("= white\n\n")
        );
        assert_eq!(other.state.handicap_stones().len(), 4);
        assert_eq!(other.state.to_text(), s.state.to_text());
        assert_eq!(other.state.komi(), 0.5);
        // Before the first move: White to move on the handicap stones.
        let reply = other.handle(&format!("loadsgf {} 1", file.display()));
        assert_eq!(reply.as_deref(), Some("= white\n\n"));
        assert_eq!(other.state.moves_since_start().len(), 0);
        assert_eq!(other.state.handicap_stones().len(), 4);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn cleanup_never_passes_while_dead_stones_can_be_taken() {
        // A search that would pass at once: the cleanup plays on where it would not.
        struct Passer;
        impl Agent<GoState> for Passer {
            fn name(&self) -> String {
                "passer".into()
            }
            fn select_action(&mut self, _: &GoState) -> Result<Move, games::AgentError> {
                Ok(Move::Pass)
            }
        }
        let mut s = Session::new(GoRules::with_size(5), Box::new(Passer)).unwrap();
        // White lives on the left with a dead black stone inside; Black owns the right.
        for v in ["B1", "B2", "B3", "B4", "B5", "A3"] {
            s.handle(&format!("play w {v}"));
        }
        for v in ["C1", "C2", "C3", "C4", "C5", "A1"] {
            s.handle(&format!("play b {v}"));
        }
        assert_eq!(s.handle("genmove w").as_deref(), Some("= pass\n\n"));
        assert_eq!(s.handle("play b pass").as_deref(), Some("=\n\n"));
        // Two passes ended the game; cleanup goes on and takes A1.
        let reply = s.handle("kgs-genmove_cleanup w").unwrap();
        assert_eq!(reply, "= A2\n\n", "captures the dead stone");
        assert_eq!(s.state.stone_at(Point::new(0, 0)), None);
        // Black's side still has points that are neither eyes nor self-atari: no pass yet.
        let reply = s.handle("kgs-genmove_cleanup w").unwrap();
        assert_ne!(reply, "= pass\n\n");
        // Plain genmove is the agent's alone.
        assert_eq!(s.handle("genmove w").as_deref(), Some("= pass\n\n"));
    }

    #[test]
    fn kgs_time_settings_sets_the_clock() {
        let mut s = session(5);
        for cmd in [
            "kgs-time_settings none",
            "kgs-time_settings absolute 600",
            "kgs-time_settings canadian 600 30 5",
            "kgs-time_settings byoyomi 0 10 3",
        ] {
            assert_eq!(s.handle(cmd).as_deref(), Some("=\n\n"), "{cmd}");
        }
        // Byo-yomi: each move may take most of a period.
        let t = s.clock.move_time(Player::First).unwrap().as_secs_f64();
        assert!((t - 7.9).abs() < 1e-9, "{t}");
        s.handle("kgs-time_settings none");
        assert_eq!(s.clock.move_time(Player::First), None);
        for bad in [
            "kgs-time_settings",
            "kgs-time_settings fischer 600 10",
            "kgs-time_settings byoyomi 600 30",
            "kgs-time_settings absolute x",
        ] {
            assert!(
                s.handle(bad).unwrap().starts_with("? syntax error"),
                "{bad}"
            );
        }
    }

    #[test]
    fn every_command_is_known() {
        let mut s = session(9);
        let listed = s.handle("list_commands").unwrap();
        for cmd in [
            "fixed_handicap",
            "place_free_handicap",
            "set_free_handicap",
            "kgs-genmove_cleanup",
            "kgs-time_settings",
            "printsgf",
        ] {
            assert!(
                listed.lines().any(|l| l.trim_start_matches("= ") == cmd),
                "{cmd}"
            );
            let known = s.handle(&format!("known_command {cmd}"));
            assert_eq!(known.as_deref(), Some("= true\n\n"), "{cmd}");
        }
    }
}

#[cfg(test)]
mod status_tests {
    use super::*;

    #[test]
    fn final_status_lists_dead_stones() {
        let mut s = Session::new(
            GoRules::with_size(5),
            players::spec::build_text::<GoState>("playout:seed=1", 1).unwrap(),
        )
        .unwrap();
        // White's two-eyed wall around a lone black stone at C2.
        for v in [
            "A1", "B1", "C1", "D1", "E1", "A2", "E2", "A3", "B3", "C3", "D3", "E3", "A4", "C4",
            "E4", "A5", "B5", "C5", "D5", "E5",
        ] {
            assert_eq!(
                s.handle(&format!("play w {v}")).as_deref(),
                Some("=\n\n"),
                "{v}"
            );
        }
        assert_eq!(s.handle("play b C2").as_deref(), Some("=\n\n"));
        assert_eq!(
            s.handle("final_status_list dead").as_deref(),
            Some("= C2\n\n")
        );
        assert_eq!(s.handle("final_score").as_deref(), Some("= W+32.5\n\n"));
        let alive = s.handle("final_status_list alive").unwrap();
        assert_eq!(
            alive.split_whitespace().count(),
            21,
            "= and 20 stones: {alive}"
        );
        assert!(s
            .handle("final_status_list maybe")
            .unwrap()
            .starts_with("? syntax error"));
    }
}

#[cfg(test)]
mod random_input_tests {
    use super::*;
    use rand::rngs::SmallRng;
    use rand::seq::SliceRandom;
    use rand::{Rng, SeedableRng};

    /// Two thousand random lines built from real commands, plausible and absurd arguments:
    /// every answer is one well-formed response and the session keeps a consistent game.
    #[test]
    fn random_command_lines_always_get_a_well_formed_answer() {
        let mut rng = SmallRng::seed_from_u64(3);
        let mut s = Session::new(
            GoRules::with_size(5),
            players::spec::build_text::<GoState>("playout:seed=1", 1).unwrap(),
        )
        .unwrap();
        let words: Vec<&str> = COMMANDS
            .iter()
            .copied()
            .chain(["frob", "", "#", "play", "genmove", "undo"])
            .collect();
        let args = [
            "b",
            "w",
            "black",
            "WHITE",
            "x",
            "A1",
            "c3",
            "E5",
            "J9",
            "T19",
            "I1",
            "pass",
            "PASS",
            "resign",
            "0",
            "1",
            "2",
            "5",
            "19",
            "20",
            "-3",
            "7.5",
            "nan",
            "1e9",
            "dead",
            "alive",
            "seki",
            "/nonexistent",
            "\u{1F600}",
            "A",
            "99999999999999999999",
        ];
        for _ in 0..2_000 {
            let mut line = String::new();
            if rng.gen_bool(0.3) {
                line.push_str(&format!("{} ", rng.gen_range(0..1000)));
            }
            let word = words.choose(&mut rng).unwrap();
            line.push_str(word);
            // `printsgf FILE` would write files wherever the test runs.
            let most = if *word == "printsgf" { 1 } else { 4 };
            for _ in 0..rng.gen_range(0..most) {
                line.push(' ');
                line.push_str(args.choose(&mut rng).unwrap());
            }
            if let Some(reply) = s.handle(&line) {
                // An analysis that started answers its first line; its driver ends it.
                if s.analysing.take().is_some() {
                    assert!(reply.starts_with('=') && reply.ends_with('\n'), "{reply:?}");
                    continue;
                }
                assert!(
                    (reply.starts_with('=') || reply.starts_with('?')) && reply.ends_with("\n\n"),
                    "{line:?} -> {reply:?}"
                );
                assert!(!reply[..reply.len() - 2].contains("\n\n"), "{reply:?}");
            }
            if s.quit {
                s.quit = false;
            }
            // The game the session holds is always one the rules can read back.
            let text = s.state.to_text();
            assert_eq!(s.state.parse_position(&text).unwrap().to_text(), text);
        }
    }
}

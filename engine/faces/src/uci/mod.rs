//! `engine uci`: the UCI face for Xiangqi, so GUIs and other engines can play this engine.
//!
//! Moves are ICCS with ranks **0–9** (rank 0 = Red's back rank; the central cannon is `h2e2`),
//! as Pikafish and UCCI GUIs write them. Fairy-Stockfish counts ranks 1–10 instead; set
//! `setoption name UCI_RankBase value 1` to talk its dialect. FEN as in `games::xiangqi::fen`.
//!
//! Commands: `uci`, `isready`, `ucinewgame`, `position startpos|fen FEN [moves M…]`,
//! `go [depth N] [movetime MS] [nodes N] [wtime MS btime MS winc MS binc MS movestogo N]
//! [infinite] [ponder]`, `ponderhit`, `stop`, `quit`, `setoption name N [value V]` with options
//! `Agent` (`alphabeta`; `mcts`, the engine's tree search with random playouts; `net`, the tree
//! search guided by `Model`), `Model` (an ONNX file, or `uniform`), `Visits` and `Threads` (of
//! the tree search), `Guard` (percent of a timed move, 0 to 90, in which alpha-beta checks the
//! tree search's move: `players::guard`; 80 by default, 0 turns it off) and `GuardMargin`
//! (centipawns, 30 by default), `Hash` (MiB, 1 to 4096, alpha-beta's table), `Clear Hash` (a
//! button: alpha-beta's table emptied, the tree search's tree let go), `MultiPV` (lines per
//! report, 1 to 128: `info … multipv k …`), `UCI_ShowWDL` (`wdl W D L` per mille after each
//! score: [`wdl`]), `Ponder` (`bestmove M ponder R` where the line names a reply), `Repetition
//! Rule` (Asian or Simple: `games::xiangqi::RepetitionRule`), `UCI_LimitStrength`, `UCI_Elo`
//! and `Skill Level` (a named level of `players::levels` plays: `strength`), `UCI_Variant`
//! (xiangqi), `UCI_RankBase` (0 or 1). docs/xiangqi.md has the table. A bad line (a line that
//! is not UTF-8 too) or a refused option value is answered with `info string error: …` naming
//! the command or option and why, and ignored: a GUI session survives it.
//!
//! `go ponder` searches the position the GUI sent (its expected reply played) without end;
//! `ponderhit` turns it into the move's own search, timed by the `go`'s clock from that moment
//! (the search starts again with what pondering left in alpha-beta's table or the tree), and
//! `stop` ends it with a `bestmove` the GUI ignores.
//!
//! The same session speaks UCCI, the Chinese engine protocol, when the GUI opens with `ucci`
//! instead of `uci`: options are listed and set without `name`/`value` (`setoption hashsize
//! 64`, `setoption multipv 3`, `setoption clearhash`, plus `usemillisec`; check options take
//! `on`/`off` as well as `true`/`false`), `go` takes `time`/`increment`/`movestogo` for the
//! side to move (seconds unless `usemillisec` is on; `opptime`, `oppincrement`, `oppmovestogo`
//! and `draw` are read and ignored), `banmoves` forbids moves in the next search, scores are
//! bare numbers (a mate in n plies is ±(10000 − n), as UCCI engines write it), `multipv k`
//! appears only with more than one line, a position with no move answers `nobestmove`, and
//! `quit` is answered with `bye`.
//!
//! Lines are read into commands in `command`; the options that choose the searcher become a
//! spec of the one grammar in `options` ([`SearchOptions`]), built by
//! `players::spec::build_driven`; the session here only parses and answers: the searches and
//! their lines are `players::driven`'s, the time a clock gives a move `players::timing`'s.

use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use eval::Evaluator;
use games::xiangqi::fen::{format_move_with_base, parse_move_with_base};
use games::xiangqi::{Move, RepetitionRule, Xiangqi};
use games::Game;
use players::alphabeta::xiangqi::MATE;
use players::alphabeta::{MAX_HASH_MB, MAX_PLY};
use players::driven::{DrivenSearch, Line};
use players::spec::{build_driven, preloaded, MAX_THREADS, MAX_VISITS};

use setup::models;

mod command;
mod options;
mod strength;
pub mod wdl;

use command::err;
pub use command::{parse_command, GoParams, UciCommand, UciError};
pub use options::{SearchOptions, DEFAULT_VISITS};
use options::{
    DEFAULT_GUARD_MARGIN, DEFAULT_GUARD_PERCENT, MAX_GUARD_MARGIN, MAX_GUARD_PERCENT, MAX_MULTI_PV,
};
use strength::{LevelSearch, Strength, FULL_SKILL};

type Out = Arc<Mutex<Box<dyn Write + Send>>>;

fn say(out: &Out, line: &str) {
    let mut o = out.lock().unwrap_or_else(|p| p.into_inner());
    // A closed stdout means the GUI is gone; the next read of stdin ends the session.
    let _ = writeln!(o, "{line}");
    let _ = o.flush();
}

/// One UCI session over any input and output.
pub struct Session {
    out: Out,
    game: Xiangqi,
    /// The searcher, or `None` while a search thread holds it.
    searcher: Option<Box<dyn DrivenSearch>>,
    search: Option<JoinHandle<Box<dyn DrivenSearch>>>,
    stop: Arc<AtomicBool>,
    agent: String,
    hash_mb: usize,
    rank_base: u32,
    /// The tree search's settings: its network (`net`; the `Model` option, loaded once),
    /// visits and threads.
    net: Option<(String, Arc<dyn Evaluator<Xiangqi>>)>,
    visits: u64,
    threads: usize,
    /// The `Guard` option (percent of a timed move given to alpha-beta's check; 0: none) and
    /// the `GuardMargin` option (centipawns).
    guard_percent: u64,
    guard_margin: u64,
    /// The config whose `inference` section loads a model, and its path for messages.
    config: (serde_yaml::Value, PathBuf),
    /// The protocol the GUI opened with.
    dialect: Dialect,
    /// UCCI's `usemillisec`: clock times in milliseconds rather than seconds.
    millisec: bool,
    /// UCCI's `banmoves` for the current position.
    banned: Vec<Move>,
    /// The `MultiPV` option: lines per report.
    multipv: usize,
    /// The `UCI_ShowWDL` option: `wdl W D L` in each line.
    show_wdl: bool,
    /// The `Ponder` option: `bestmove` names the expected reply (`ponder M`).
    ponder: bool,
    /// The parameters of the running `go ponder`, kept for its `ponderhit`.
    pondering: Option<GoParams>,
    /// Set while a ponder search is stopped by `ponderhit`: its `bestmove` goes unsaid.
    quiet: Arc<AtomicBool>,
    /// The strength options: a level of `players::levels` plays in place of the searcher.
    strength: Strength,
    /// The `Repetition Rule` option: the rules that judge repeated positions in the game the
    /// GUI sets up, in the searches too.
    rule: RepetitionRule,
}

/// UCI, or UCCI (see the module's notes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Dialect {
    Uci,
    Ucci,
}

/// One option as the handshake lists it.
struct OptionLine {
    uci: &'static str,
    ucci: &'static str,
    kind: &'static str,
    default: String,
    range: Option<(u64, u64)>,
    vars: &'static [&'static str],
}

impl OptionLine {
    fn text(&self, dialect: Dialect) -> String {
        let range = self
            .range
            .map(|(lo, hi)| format!(" min {lo} max {hi}"))
            .unwrap_or_default();
        let vars: String = self.vars.iter().map(|v| format!(" var {v}")).collect();
        // A button has no value, so no default.
        if self.kind == "button" {
            return match dialect {
                Dialect::Uci => format!("option name {} type button", self.uci),
                Dialect::Ucci => format!("option {} type button", self.ucci),
            };
        }
        match dialect {
            Dialect::Uci => format!(
                "option name {} type {} default {}{range}{vars}",
                self.uci, self.kind, self.default
            ),
            Dialect::Ucci => format!(
                "option {} type {}{range}{vars} default {}",
                self.ucci, self.kind, self.default
            ),
        }
    }
}

/// How a session starts: the options' first values (the command line's flags).
pub struct Start {
    pub hash_mb: usize,
    pub agent: String,
    pub model: Option<String>,
    pub visits: u64,
    /// The config whose `inference` section loads a model, and its path.
    pub config: (serde_yaml::Value, PathBuf),
}

impl Session {
    /// A session as `start` says, building only the searcher its agent needs. Errors name the
    /// option at fault (`Model`, `Agent`, `Hash`).
    pub fn open(out: Box<dyn Write + Send>, start: Start) -> Result<Session, UciError> {
        let mut s = Session {
            out: Arc::new(Mutex::new(out)),
            game: Xiangqi::start(),
            searcher: None,
            search: None,
            stop: Arc::new(AtomicBool::new(false)),
            agent: start.agent,
            hash_mb: start.hash_mb,
            rank_base: 0,
            net: None,
            visits: start.visits,
            threads: 1,
            guard_percent: DEFAULT_GUARD_PERCENT,
            guard_margin: DEFAULT_GUARD_MARGIN,
            config: start.config,
            dialect: Dialect::Uci,
            millisec: false,
            banned: Vec::new(),
            multipv: 1,
            show_wdl: false,
            ponder: false,
            pondering: None,
            quiet: Arc::new(AtomicBool::new(false)),
            strength: Strength::default(),
            rule: RepetitionRule::default(),
        };
        if !(1..=MAX_VISITS).contains(&s.visits) {
            return Err(err(
                "setoption",
                format!("Visits {} is not 1..{MAX_VISITS}", s.visits),
            ));
        }
        if let Some(model) = start.model {
            s.load_model(&model)?;
        }
        s.searcher = s.make_searcher(&s.agent)?;
        Ok(s)
    }

    /// Loads the network of the `Model` option (kept for every tree search built after).
    fn load_model(&mut self, model: &str) -> Result<(), UciError> {
        let (doc, path) = &self.config;
        let net = models::evaluator(&Xiangqi::start(), model, doc, path)
            .map_err(|e| err("setoption", format!("Model {model}: {e:#}")))?;
        self.net = Some((model.to_string(), net));
        Ok(())
    }

    /// The searcher options, `agent` for the `Agent` option.
    fn options(&self, agent: &str) -> SearchOptions {
        SearchOptions {
            agent: agent.to_string(),
            visits: self.visits,
            threads: self.threads,
            guard_percent: self.guard_percent,
            guard_margin: self.guard_margin,
            hash_mb: self.hash_mb,
        }
    }

    /// Builds the searcher an `Agent` option names, through its spec ([`SearchOptions::spec`])
    /// and the one builder: alpha-beta with this session's table size, or the tree search with
    /// its network, visits, threads and guard. `None` for `net` until the `Model` option is
    /// set (GUIs send options in any order).
    fn make_searcher(&self, agent: &str) -> Result<Option<Box<dyn DrivenSearch>>, UciError> {
        let spec = self.options(agent).spec()?;
        if let Some(level) = self.strength.level() {
            let net = self.net.as_ref().map(|(_, n)| Arc::clone(n));
            return Ok(Some(Box::new(LevelSearch::build(level, net)?)));
        }
        let net = match agent {
            "net" => match &self.net {
                Some((_, net)) => Some(Arc::clone(net)),
                None => return Ok(None),
            },
            _ => None,
        };
        build_driven(&spec, agent, 1, &preloaded(net))
            .map(|mut searcher| {
                searcher.set_lines(self.multipv);
                Some(searcher)
            })
            .map_err(|e| match agent {
                "alphabeta" => err("setoption", format!("Hash {}: {e:#}", self.hash_mb)),
                _ => err("setoption", format!("Agent {agent}: {e:#}")),
            })
    }

    /// Reads commands until `quit` or the end of input.
    /// Whether a searcher is ready (`net` waits for its `Model` option).
    pub fn has_searcher(&self) -> bool {
        self.searcher.is_some()
    }

    pub fn run(&mut self, mut input: impl BufRead) -> anyhow::Result<()> {
        let mut raw = Vec::new();
        for number in 1.. {
            raw.clear();
            if input.read_until(b'\n', &mut raw)? == 0 {
                break;
            }
            // Stray bytes from a GUI must not end its session: say so and read on.
            let Ok(line) = std::str::from_utf8(&raw) else {
                say(
                    &self.out,
                    &format!("info string error: line {number} is not UTF-8: ignored"),
                );
                continue;
            };
            match parse_command(line) {
                Ok(UciCommand::Quit) => {
                    self.finish_search(true);
                    if self.dialect == Dialect::Ucci {
                        say(&self.out, "bye");
                    }
                    return Ok(());
                }
                Ok(cmd) => {
                    if let Err(e) = self.handle(cmd) {
                        say(&self.out, &format!("info string error: {e}"));
                    }
                }
                Err(e) => say(&self.out, &format!("info string error: {e}")),
            }
        }
        self.finish_search(true);
        Ok(())
    }

    /// Waits for a running search (stopping it first if `stop`) and takes the searcher back.
    fn finish_search(&mut self, stop: bool) {
        self.pondering = None;
        if let Some(handle) = self.search.take() {
            if stop {
                self.stop.store(true, Ordering::Relaxed);
            }
            match handle.join() {
                Ok(s) => self.searcher = Some(s),
                Err(_) => {
                    say(&self.out, "info string error: the search thread failed");
                    self.searcher = self.make_searcher(&self.agent).ok().flatten();
                }
            }
        }
    }

    fn handle(&mut self, cmd: UciCommand) -> Result<(), UciError> {
        match cmd {
            UciCommand::Uci => self.handshake(Dialect::Uci),
            UciCommand::Ucci => self.handshake(Dialect::Ucci),
            UciCommand::BanMoves(moves) => {
                self.finish_search(true);
                let mut banned = Vec::with_capacity(moves.len());
                for (i, text) in moves.iter().enumerate() {
                    let m = parse_move_with_base(text, self.rank_base)
                        .ok()
                        .filter(|&m| self.game.is_legal(m))
                        .ok_or_else(|| {
                            err(
                                "banmoves",
                                format!("move {} '{text}' is not legal here", i + 1),
                            )
                        })?;
                    banned.push(m);
                }
                self.banned = banned;
            }
            UciCommand::IsReady => say(&self.out, "readyok"),
            UciCommand::NewGame => {
                self.finish_search(true);
                if let Some(s) = self.searcher.as_mut() {
                    s.new_game();
                }
                self.game = Xiangqi::start();
                self.game.set_repetition_rule(self.rule);
                self.banned.clear();
            }
            UciCommand::Position { fen, moves } => {
                self.finish_search(true);
                let (start, played, game) = self.build_position(&fen, &moves)?;
                if let Some(s) = self.searcher.as_mut() {
                    s.follow(&start, &played);
                }
                self.game = game;
                // Bans hold for the position they were sent in.
                self.banned.clear();
            }
            UciCommand::Go(params) => {
                self.finish_search(true);
                self.go(params);
            }
            UciCommand::Stop => self.finish_search(true),
            UciCommand::PonderHit => {
                let Some(params) = self.pondering else {
                    return Err(err("ponderhit", "no go ponder is running"));
                };
                // The pondered move was played: the ponder search ends unsaid and the move's
                // own search starts at once, its time counted from here. It goes on from what
                // pondering found (alpha-beta's table, the tree kept for this position).
                self.quiet.store(true, Ordering::Relaxed);
                self.finish_search(true);
                self.quiet.store(false, Ordering::Relaxed);
                self.go(GoParams {
                    ponder: false,
                    ..params
                });
            }
            UciCommand::SetOption { name, value } => {
                self.finish_search(true);
                self.set_option(&name, &value)?;
            }
            UciCommand::Quit => {}
            UciCommand::Ignored(line) => {
                if !line.is_empty() {
                    return Err(err(&line, "unknown command"));
                }
            }
        }
        Ok(())
    }

    /// Speaks `dialect` from now on: names the engine and lists its options.
    fn handshake(&mut self, dialect: Dialect) {
        self.dialect = dialect;
        say(
            &self.out,
            &format!("id name xiangqi-engine ({})", self.agent),
        );
        say(&self.out, "id author the engine authors");
        let mut options = vec![
            OptionLine {
                uci: "Agent",
                ucci: "agent",
                kind: "combo",
                default: self.agent.clone(),
                range: None,
                vars: &["alphabeta", "mcts", "net"],
            },
            OptionLine {
                uci: "Model",
                ucci: "model",
                kind: "string",
                default: self
                    .net
                    .as_ref()
                    .map_or("<empty>".into(), |(m, _)| m.clone()),
                range: None,
                vars: &[],
            },
            OptionLine {
                uci: "Visits",
                ucci: "visits",
                kind: "spin",
                default: self.visits.to_string(),
                range: Some((1, MAX_VISITS)),
                vars: &[],
            },
            OptionLine {
                uci: "Threads",
                ucci: "threads",
                kind: "spin",
                default: self.threads.to_string(),
                range: Some((1, MAX_THREADS as u64)),
                vars: &[],
            },
            OptionLine {
                uci: "Guard",
                ucci: "guard",
                kind: "spin",
                default: self.guard_percent.to_string(),
                range: Some((0, MAX_GUARD_PERCENT)),
                vars: &[],
            },
            OptionLine {
                uci: "GuardMargin",
                ucci: "guardmargin",
                kind: "spin",
                default: self.guard_margin.to_string(),
                range: Some((0, MAX_GUARD_MARGIN)),
                vars: &[],
            },
            OptionLine {
                uci: "Hash",
                ucci: "hashsize",
                kind: "spin",
                default: self.hash_mb.to_string(),
                range: Some((1, MAX_HASH_MB as u64)),
                vars: &[],
            },
            OptionLine {
                uci: "Clear Hash",
                ucci: "clearhash",
                kind: "button",
                default: String::new(),
                range: None,
                vars: &[],
            },
            OptionLine {
                uci: "MultiPV",
                ucci: "multipv",
                kind: "spin",
                default: self.multipv.to_string(),
                range: Some((1, MAX_MULTI_PV as u64)),
                vars: &[],
            },
            OptionLine {
                uci: "Ponder",
                ucci: "ponder",
                kind: "check",
                default: self.ponder.to_string(),
                range: None,
                vars: &[],
            },
            OptionLine {
                uci: "Repetition Rule",
                ucci: "repetitionrule",
                kind: "combo",
                default: self.rule.name().to_string(),
                range: None,
                vars: &["Asian", "Simple"],
            },
        ];
        match self.dialect {
            Dialect::Uci => {
                let (elo_lo, elo_hi) = strength::elo_range();
                options.push(OptionLine {
                    uci: "UCI_LimitStrength",
                    ucci: "",
                    kind: "check",
                    default: self.strength.limit.to_string(),
                    range: None,
                    vars: &[],
                });
                options.push(OptionLine {
                    uci: "UCI_Elo",
                    ucci: "",
                    kind: "spin",
                    default: self.strength.elo.to_string(),
                    range: Some((elo_lo as u64, elo_hi as u64)),
                    vars: &[],
                });
                options.push(OptionLine {
                    uci: "Skill Level",
                    ucci: "",
                    kind: "spin",
                    default: self.strength.skill.to_string(),
                    range: Some((0, FULL_SKILL as u64)),
                    vars: &[],
                });
                options.push(OptionLine {
                    uci: "UCI_ShowWDL",
                    ucci: "",
                    kind: "check",
                    default: self.show_wdl.to_string(),
                    range: None,
                    vars: &[],
                });
                options.push(OptionLine {
                    uci: "UCI_Variant",
                    ucci: "",
                    kind: "combo",
                    default: "xiangqi".into(),
                    range: None,
                    vars: &["xiangqi"],
                });
                options.push(OptionLine {
                    uci: "UCI_RankBase",
                    ucci: "",
                    kind: "spin",
                    default: "0".into(),
                    range: Some((0, 1)),
                    vars: &[],
                });
            }
            Dialect::Ucci => options.push(OptionLine {
                uci: "",
                ucci: "usemillisec",
                kind: "check",
                default: self.millisec.to_string(),
                range: None,
                vars: &[],
            }),
        }
        for o in &options {
            say(&self.out, &o.text(self.dialect));
        }
        say(
            &self.out,
            match self.dialect {
                Dialect::Uci => "uciok",
                Dialect::Ucci => "ucciok",
            },
        );
    }

    /// The start position, the moves played from it, and the position they lead to.
    fn build_position(
        &self,
        fen: &str,
        moves: &[String],
    ) -> Result<(Xiangqi, Vec<Move>, Xiangqi), UciError> {
        let mut start = Xiangqi::from_fen(fen).map_err(|e| err("position", e.to_string()))?;
        start.set_repetition_rule(self.rule);
        let mut game = start.clone();
        let mut played = Vec::with_capacity(moves.len());
        for (i, text) in moves.iter().enumerate() {
            let m = parse_move_with_base(text, self.rank_base)
                .map_err(|e| err("position", format!("move {}: {e}", i + 1)))?;
            game.play(m).map_err(|e| {
                err(
                    "position",
                    format!("move {} '{text}': {e} in {}", i + 1, game.to_text()),
                )
            })?;
            played.push(m);
        }
        Ok((start, played, game))
    }

    fn set_option(&mut self, name: &str, value: &str) -> Result<(), UciError> {
        match name.to_ascii_lowercase().as_str() {
            "agent" => {
                if value == self.agent && self.searcher.is_some() {
                    return Ok(());
                }
                self.searcher = self.make_searcher(value)?;
                self.agent = value.to_string();
                if self.searcher.is_none() {
                    say(
                        &self.out,
                        "info string Agent net waits for the Model option",
                    );
                }
            }
            "model" => {
                if self.net.as_ref().is_some_and(|(m, _)| m == value) {
                    return Ok(());
                }
                // Loaded now, so that a bad file is reported at once and the old model stays.
                self.load_model(value)?;
                if self.agent == "net" {
                    self.searcher = self.make_searcher("net")?;
                }
            }
            key @ ("visits" | "threads") => {
                let max = if key == "visits" {
                    MAX_VISITS
                } else {
                    MAX_THREADS as u64
                };
                let n = value
                    .parse::<u64>()
                    .ok()
                    .filter(|n| (1..=max).contains(n))
                    .ok_or_else(|| err("setoption", format!("{name} '{value}' is not 1..{max}")))?;
                if key == "visits" {
                    self.visits = n;
                } else {
                    self.threads = n as usize;
                }
                if self.agent != "alphabeta" {
                    self.searcher = self.make_searcher(&self.agent)?;
                }
            }
            key @ ("guard" | "guardmargin") => {
                let max = if key == "guard" {
                    MAX_GUARD_PERCENT
                } else {
                    MAX_GUARD_MARGIN
                };
                let n = value
                    .parse::<u64>()
                    .ok()
                    .filter(|&n| n <= max)
                    .ok_or_else(|| err("setoption", format!("{name} '{value}' is not 0..{max}")))?;
                if key == "guard" {
                    self.guard_percent = n;
                } else {
                    self.guard_margin = n;
                }
                if self.agent != "alphabeta" {
                    self.searcher = self.make_searcher(&self.agent)?;
                }
            }
            "usemillisec" => self.millisec = check(name, value)?,
            "uci_showwdl" => self.show_wdl = check(name, value)?,
            "ponder" => self.ponder = check(name, value)?,
            "multipv" => {
                let n = value
                    .parse::<usize>()
                    .ok()
                    .filter(|n| (1..=MAX_MULTI_PV).contains(n))
                    .ok_or_else(|| {
                        err(
                            "setoption",
                            format!("{name} '{value}' is not 1..{MAX_MULTI_PV}"),
                        )
                    })?;
                self.multipv = n;
                if let Some(s) = self.searcher.as_mut() {
                    s.set_lines(n);
                }
            }
            key @ ("uci_limitstrength" | "uci_elo" | "skill level") => {
                let mut want = self.strength;
                match key {
                    "uci_limitstrength" => want.limit = check(name, value)?,
                    "uci_elo" => {
                        let (lo, hi) = strength::elo_range();
                        want.elo = value
                            .parse::<u32>()
                            .ok()
                            .filter(|e| (lo..=hi).contains(e))
                            .ok_or_else(|| {
                                err("setoption", format!("{name} '{value}' is not {lo}..{hi}"))
                            })?;
                    }
                    _ => {
                        want.skill = value
                            .parse::<u32>()
                            .ok()
                            .filter(|s| *s <= FULL_SKILL)
                            .ok_or_else(|| {
                                err(
                                    "setoption",
                                    format!("{name} '{value}' is not 0..{FULL_SKILL}"),
                                )
                            })?;
                    }
                }
                // The searcher is built before the options change, so that a level that cannot
                // play (the network's, with no Model) changes nothing.
                let old = std::mem::replace(&mut self.strength, want);
                match self.make_searcher(&self.agent) {
                    Ok(searcher) => self.searcher = searcher,
                    Err(e) => {
                        self.strength = old;
                        return Err(e);
                    }
                }
                if let (true, Some(level)) = (old.level() != want.level(), want.level()) {
                    say(
                        &self.out,
                        &format!(
                            "info string plays the level {} ({}, Elo {:.0}: {})",
                            level.key, level.chinese, level.rating.elo, level.spec
                        ),
                    );
                }
            }
            "repetition rule" | "repetitionrule" => {
                self.rule = value
                    .parse()
                    .map_err(|e: games::xiangqi::UnknownRepetitionRule| {
                        err("setoption", format!("{name}: {e}"))
                    })?;
                self.game.set_repetition_rule(self.rule);
            }
            "clear hash" | "clearhash" => {
                // A button: any value is ignored. Alpha-beta empties its table, the tree
                // search lets its tree go (the guard's table with it).
                if let Some(s) = self.searcher.as_mut() {
                    s.new_game();
                }
            }
            "hash" | "hashsize" => {
                let mb: usize = value
                    .parse()
                    .ok()
                    .filter(|&v| (1..=MAX_HASH_MB).contains(&v))
                    .ok_or_else(|| {
                        err(
                            "setoption",
                            format!("Hash '{value}' is not 1..{MAX_HASH_MB}"),
                        )
                    })?;
                // Only alpha-beta has a table. Built before the old one goes, so a size that
                // cannot be had changes nothing.
                let old = std::mem::replace(&mut self.hash_mb, mb);
                if self.agent == "alphabeta" {
                    match self.make_searcher("alphabeta") {
                        Ok(searcher) => self.searcher = searcher,
                        Err(e) => {
                            self.hash_mb = old;
                            return Err(err(
                                "setoption",
                                format!("{}; the table stays {old} MiB", e.reason),
                            ));
                        }
                    }
                }
            }
            "uci_variant" => {
                if value != "xiangqi" {
                    return Err(err(
                        "setoption",
                        format!("UCI_Variant '{value}': only xiangqi"),
                    ));
                }
            }
            "uci_rankbase" => {
                self.rank_base = match value {
                    "0" => 0,
                    "1" => 1,
                    _ => return Err(err("setoption", "UCI_RankBase is 0 or 1")),
                };
            }
            _ => return Err(err("setoption", format!("unknown option '{name}'"))),
        }
        Ok(())
    }

    fn go(&mut self, params: GoParams) {
        let Some(mut searcher) = self.searcher.take() else {
            // A GUI waits for `bestmove` after every `go`.
            say(
                &self.out,
                &format!(
                    "info string error: Agent {} has no searcher: set the Model option",
                    self.agent
                ),
            );
            say(
                &self.out,
                match self.dialect {
                    Dialect::Uci => "bestmove (none)",
                    Dialect::Ucci => "nobestmove",
                },
            );
            return;
        };
        let game = self.game.clone();
        let out = Arc::clone(&self.out);
        let stop = Arc::clone(&self.stop);
        stop.store(false, Ordering::Relaxed);
        let quiet = Arc::clone(&self.quiet);
        let side = game.to_act().index();
        let unit_ms = if self.millisec { 1 } else { 1000 };
        let limits = params.with_own_clock(side, unit_ms).limits(side);
        // Analysis and pondering run until the GUI says otherwise.
        let open_ended = params.infinite || params.ponder;
        if params.ponder {
            self.pondering = Some(params);
        }
        let banned = self.banned.clone();
        let style = InfoStyle {
            dialect: self.dialect,
            rank_base: self.rank_base,
            show_wdl: self.show_wdl && self.dialect == Dialect::Uci,
            numbered: self.dialect == Dialect::Uci || self.multipv > 1,
        };
        let name_reply = self.ponder;
        self.search = Some(std::thread::spawn(move || {
            // The best line of the last report: its second move is the reply to ponder on.
            let mut best_line = Vec::new();
            let mut info = |lines: &[Line]| {
                for (k, line) in lines.iter().enumerate() {
                    say(&out, &style.info_line(k + 1, line));
                }
                if let Some(first) = lines.first() {
                    best_line.clone_from(&first.info.pv);
                }
            };
            let result = searcher.search(&game, limits, open_ended, &banned, &stop, &mut info);
            // `go infinite` and `go ponder` must not answer before `stop` (or `ponderhit`).
            while open_ended && !stop.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(5));
            }
            if quiet.load(Ordering::Relaxed) {
                return searcher;
            }
            let base = style.rank_base;
            let line = match (result.best, style.dialect) {
                (Some(m), _) => {
                    let mut line = format!("bestmove {}", format_move_with_base(m, base));
                    if let (true, [first, reply, ..]) = (name_reply, &best_line[..]) {
                        if *first == m {
                            line += &format!(" ponder {}", format_move_with_base(*reply, base));
                        }
                    }
                    line
                }
                (None, Dialect::Uci) => "bestmove (none)".into(),
                (None, Dialect::Ucci) => "nobestmove".into(),
            };
            say(&out, &line);
            searcher
        }));
    }
}

/// How a search's `info` lines are written.
#[derive(Clone, Copy)]
struct InfoStyle {
    dialect: Dialect,
    rank_base: u32,
    /// `wdl W D L` after the score (the `UCI_ShowWDL` option).
    show_wdl: bool,
    /// `multipv k` before the score: always in UCI, in UCCI with more than one line.
    numbered: bool,
}

impl InfoStyle {
    /// Line `k` (1: the best) of a report.
    fn info_line(&self, k: usize, line: &Line) -> String {
        let i = &line.info;
        let score = match (self.dialect, i.mate_in()) {
            (Dialect::Uci, Some(m)) => format!("mate {m}"),
            (Dialect::Uci, None) => format!("cp {}", i.score),
            (Dialect::Ucci, _) => ucci_score(i.score).to_string(),
        };
        let multipv = if self.numbered {
            format!(" multipv {k}")
        } else {
            String::new()
        };
        let wdl = if self.show_wdl {
            let [w, d, l] = line
                .wdl
                .map_or_else(|| wdl::from_score(i.score), wdl::per_mille);
            format!(" wdl {w} {d} {l}")
        } else {
            String::new()
        };
        let ms = i.time.as_millis().max(1);
        let pv: Vec<String> =
            i.pv.iter()
                .map(|&m| format_move_with_base(m, self.rank_base))
                .collect();
        format!(
            "info depth {}{multipv} score {score}{wdl} nodes {} nps {} time {ms} pv {}",
            i.depth,
            i.nodes,
            i.nodes as u128 * 1000 / ms,
            pv.join(" ")
        )
    }
}

/// A check option's value: `true` or `false` (UCI), `on` or `off` (UCCI), in any case.
fn check(name: &str, value: &str) -> Result<bool, UciError> {
    match value.to_ascii_lowercase().as_str() {
        "true" | "on" => Ok(true),
        "false" | "off" => Ok(false),
        _ => Err(err(
            "setoption",
            format!("{name} '{value}' is not true or false"),
        )),
    }
}

/// A score as UCCI engines write it: a mate in n plies is ±(10000 − n); anything else is
/// kept inside ±9000, below every mate.
fn ucci_score(score: i32) -> i32 {
    if score.abs() >= MATE - MAX_PLY as i32 {
        score.signum() * (10_000 - (MATE - score.abs()))
    } else {
        score.clamp(-9_000, 9_000)
    }
}

#[cfg(test)]
mod session_tests;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_position_with_fen_and_moves() {
        let c = parse_command("position fen 4k4/9/9/9/9/9/9/9/9/3K5 w - - 0 1 moves d0d1").unwrap();
        assert_eq!(
            c,
            UciCommand::Position {
                fen: "4k4/9/9/9/9/9/9/9/9/3K5 w - - 0 1".into(),
                moves: vec!["d0d1".into()]
            }
        );
        let c = parse_command("position startpos").unwrap();
        assert!(matches!(c, UciCommand::Position { moves, .. } if moves.is_empty()));
    }

    #[test]
    fn bad_commands_are_typed_errors() {
        for (line, command) in [
            ("position", "position"),
            ("position start", "position"),
            ("position fen", "position"),
            ("go depth", "go"),
            ("go depth x", "go"),
            ("go sideways 3", "go"),
            ("setoption value 3", "setoption"),
        ] {
            let e = parse_command(line).expect_err(line);
            assert_eq!(e.command, command, "{line}");
        }
        assert_eq!(
            parse_command("xyzzy").unwrap(),
            UciCommand::Ignored("xyzzy".into())
        );
    }

    #[test]
    fn clock_gives_a_share_never_more_than_half() {
        let go = match parse_command("go wtime 60000 btime 1000 winc 0 binc 0").unwrap() {
            UciCommand::Go(g) => g,
            _ => unreachable!(),
        };
        let red = go.limits(0).movetime.unwrap();
        let black = go.limits(1).movetime.unwrap();
        assert_eq!(red, Duration::from_millis(60000 / 30 - 30));
        assert!(black <= Duration::from_millis(500));
        assert_eq!(
            parse_command("go depth 5").map(|c| match c {
                UciCommand::Go(g) => g.limits(0).depth,
                _ => None,
            }),
            Ok(Some(5))
        );
    }

    #[test]
    fn reads_the_ucci_dialect() {
        assert_eq!(parse_command("ucci").unwrap(), UciCommand::Ucci);
        assert_eq!(parse_command("uccinewgame").unwrap(), UciCommand::NewGame);
        assert_eq!(
            parse_command("setoption usemillisec true").unwrap(),
            UciCommand::SetOption {
                name: "usemillisec".into(),
                value: "true".into()
            }
        );
        assert_eq!(
            parse_command("banmoves h2e2 b0c2").unwrap(),
            UciCommand::BanMoves(vec!["h2e2".into(), "b0c2".into()])
        );
        let UciCommand::Go(go) =
            parse_command("go draw time 300 increment 5 opptime 200 oppincrement 5").unwrap()
        else {
            unreachable!()
        };
        assert_eq!((go.own_time, go.own_inc), (Some(300), 5));
        // Seconds by default: 300 s with 5 s a move gives Black 10 s plus most of 5 s.
        let limits = go.with_own_clock(1, 1000).limits(1);
        assert_eq!(
            limits.movetime,
            Some(Duration::from_millis(300_000 / 30 + 3750 - 30))
        );
        assert!(parse_command("go time").is_err());
        // Mates in plies as UCCI writes them; other scores stay below every mate.
        assert_eq!(ucci_score(MATE - 3), 9997);
        assert_eq!(ucci_score(-(MATE - 4)), -9996);
        assert_eq!(ucci_score(25_000), 9000);
        assert_eq!(ucci_score(-120), -120);
    }

    #[test]
    fn setoption_reads_names_with_spaces() {
        assert_eq!(
            parse_command("setoption name Clear Hash").unwrap(),
            UciCommand::SetOption {
                name: "Clear Hash".into(),
                value: String::new()
            }
        );
    }
}

//! A UCI Xiangqi engine (Fairy-Stockfish, Pikafish) as a teacher.
//!
//! - Policy: with `MultiPV` K the engine reports its K best lines; the last `info … multipv i
//!   … score cp X | score mate N … pv MOVE …` line of each i (the deepest) gives a move and a
//!   score, and a softmax of `cp / cp_temperature` over those legal under the engine's rules
//!   makes the policy. Mates count as ±[`MATE_CP`] less [`MATE_STEP`] per move, so a shorter
//!   mate is better and a mate outweighs any material. Lines marked `lowerbound` or
//!   `upperbound` are ignored: their scores are only bounds.
//! - Value: the best line's score as an expected result, `1 / (1 + 10^(−cp / cp_scale))`,
//!   mapped to [−1, 1].
//! - Decision: the best line's move.
//!
//! Fairy-Stockfish writes ranks 1–10 where ICCS writes 0–9 (`rank_base` 1).

use std::time::Duration;

use games::agent::{parse_timeout, split_spec};
use games::xiangqi::fen::{format_move_with_base, parse_move_with_base};
use games::xiangqi::{Move, Xiangqi};
use games::{Decision, Game};
use players::fairy::find_fairy_stockfish;
use players::process::ChildProcess;

use crate::bootstrap::BootstrapConfig;
use crate::teacher::{softmax, Advice, TeachError, Teacher};

/// Centipawns of a mate in 0 (the side to move is mated) or just delivered, before
/// [`MATE_STEP`] per move.
pub const MATE_CP: f32 = 100_000.0;
/// Centipawns a mate loses per move it takes.
pub const MATE_STEP: f32 = 1_000.0;

/// An engine's score for one line, from the side to move's point of view.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum UciScore {
    Cp(i32),
    /// Mate in this many moves: positive when the side to move mates, else is mated.
    Mate(i32),
}

impl UciScore {
    /// The score in centipawns, mates as ±([`MATE_CP`] − [`MATE_STEP`]·moves).
    pub fn centipawns(self) -> f32 {
        match self {
            UciScore::Cp(cp) => cp as f32,
            UciScore::Mate(n) => {
                let size = MATE_CP - MATE_STEP * n.unsigned_abs().min(99) as f32;
                // `mate 0` and `mate -N`: the side to move is (being) mated.
                if n > 0 {
                    size
                } else {
                    -size
                }
            }
        }
    }
}

/// What one `info` line says about one line of play.
#[derive(Clone, Debug, PartialEq)]
pub struct UciLine {
    pub depth: u32,
    /// 1 for the best line (also when the engine writes no `multipv`).
    pub multipv: u32,
    pub score: UciScore,
    /// The line's first move, as the engine wrote it.
    pub first_move: String,
}

/// Reads an `info` line. `Ok(None)` for lines that say nothing usable about a line of play:
/// other output, `info string`, lines without a score or a `pv`, and bound scores.
pub fn parse_info_line(line: &str) -> Result<Option<UciLine>, String> {
    let tokens: Vec<&str> = line.split_whitespace().collect();
    if tokens.first() != Some(&"info") || tokens.get(1) == Some(&"string") {
        return Ok(None);
    }
    let (mut depth, mut multipv, mut score, mut first_move) = (0, 1, None, None);
    let number = |key: &str, text: Option<&&str>| -> Result<i64, String> {
        text.and_then(|t| t.parse::<i64>().ok())
            .ok_or_else(|| format!("`{key}` is followed by {text:?}, not a number"))
    };
    let mut i = 1;
    while i < tokens.len() {
        match tokens[i] {
            "depth" => {
                depth = u32::try_from(number("depth", tokens.get(i + 1))?)
                    .map_err(|_| "negative depth".to_string())?;
                i += 1;
            }
            "multipv" => {
                multipv = u32::try_from(number("multipv", tokens.get(i + 1))?)
                    .ok()
                    .filter(|&m| m >= 1)
                    .ok_or_else(|| "multipv below 1".to_string())?;
                i += 1;
            }
            "score" => {
                let kind = tokens.get(i + 1).copied();
                let n = number("score", tokens.get(i + 2))?;
                let n = i32::try_from(n).map_err(|_| format!("score {n} out of range"))?;
                score = Some(match kind {
                    Some("cp") => UciScore::Cp(n),
                    Some("mate") => UciScore::Mate(n),
                    other => return Err(format!("score of kind {other:?}")),
                });
                i += 2;
            }
            "lowerbound" | "upperbound" => return Ok(None),
            "pv" => {
                first_move = tokens.get(i + 1).map(|m| m.to_string());
                break;
            }
            _ => {}
        }
        i += 1;
    }
    Ok(match (score, first_move) {
        (Some(score), Some(first_move)) => Some(UciLine {
            depth,
            multipv,
            score,
            first_move,
        }),
        _ => None,
    })
}

/// The lines an engine reported for one search, the deepest of each `multipv` index, best
/// first. Only lines of the final depth's kind are kept: a deeper report of an index replaces
/// a shallower one.
pub fn final_lines(lines: impl IntoIterator<Item = UciLine>) -> Vec<UciLine> {
    let mut best: Vec<UciLine> = Vec::new();
    for line in lines {
        match best.iter_mut().find(|l| l.multipv == line.multipv) {
            Some(old) if line.depth >= old.depth => *old = line,
            Some(_) => {}
            None => best.push(line),
        }
    }
    best.sort_by_key(|l| l.multipv);
    best
}

/// How a UCI teacher is started.
#[derive(Clone, Debug)]
pub struct UciTeacherSpec {
    pub command: Vec<String>,
    /// `setoption` pairs sent after `uci` (Fairy-Stockfish: `UCI_Variant xiangqi`).
    pub options: Vec<(String, String)>,
    /// 0 for ICCS ranks 0–9, 1 for ranks 1–10 (Fairy-Stockfish).
    pub rank_base: u32,
    pub timeout: Duration,
    /// Search limits named in the spec; when any is named they replace the config's three.
    pub depth: Option<u32>,
    pub movetime_ms: Option<u64>,
    pub nodes: Option<u64>,
    /// Lines per position named in the spec, in place of the config's `multipv`.
    pub multipv: Option<u32>,
}

impl UciTeacherSpec {
    /// `fairy-stockfish[:path=PATH]` (the Debian binary by default) or
    /// `uci:cmd=COMMAND LINE[,rankbase=0|1][,variant=NAME]`; both take `timeout=S` (seconds
    /// any one answer may take, default 60) and the search settings `depth=N`, `movetime=MS`,
    /// `nodes=N` and `multipv=K`, which override the config's. `None` for specs of other kinds.
    pub fn parse(spec: &str) -> Result<Option<UciTeacherSpec>, TeachError> {
        let bad = |reason: String| TeachError::Spec {
            spec: spec.to_string(),
            reason,
        };
        let (kind, params) = split_spec(spec).map_err(|e| bad(e.reason))?;
        let kind = kind.trim();
        if kind != "fairy-stockfish" && kind != "uci" {
            return Ok(None);
        }
        let fairy = kind == "fairy-stockfish";
        let (mut path, mut cmd, mut variant) = (None, None, None);
        let mut rank_base = if fairy { 1 } else { 0 };
        let mut timeout = Duration::from_secs(60);
        let (mut depth, mut movetime_ms, mut nodes, mut multipv) = (None, None, None, None);
        let positive = |key: &str, v: &str, max: u64| match v.parse::<u64>() {
            Ok(n) if (1..=max).contains(&n) => Ok(n),
            _ => Err(bad(format!("{key} '{v}': a whole number from 1 to {max}"))),
        };
        for (k, v) in params {
            match (k, fairy) {
                ("depth", _) => depth = Some(positive(k, v, 255)? as u32),
                ("movetime", _) => movetime_ms = Some(positive(k, v, u64::from(u32::MAX))?),
                ("nodes", _) => nodes = Some(positive(k, v, u64::MAX)?),
                ("multipv", _) => multipv = Some(positive(k, v, 500)? as u32),
                ("path", true) => path = Some(v.to_string()),
                ("cmd", false) if !v.is_empty() => cmd = Some(v.to_string()),
                ("variant", false) => variant = Some(v.to_string()),
                ("rankbase", false) => {
                    rank_base = match v {
                        "0" => 0,
                        "1" => 1,
                        _ => return Err(bad("rankbase is 0 or 1".into())),
                    }
                }
                ("timeout", _) => timeout = parse_timeout(v).map_err(bad)?,
                _ => return Err(bad(format!("unknown or empty parameter '{k}' for {kind}"))),
            }
        }
        let (command, options) = if fairy {
            let path = match path {
                Some(p) => p,
                None => find_fairy_stockfish()
                    .ok_or_else(|| {
                        bad("fairy-stockfish not found (apt-get install fairy-stockfish)".into())
                    })?
                    .to_string_lossy()
                    .into_owned(),
            };
            (vec![path], vec![("UCI_Variant".into(), "xiangqi".into())])
        } else {
            let cmd = cmd.ok_or_else(|| bad("uci needs cmd=COMMAND".into()))?;
            let options = variant
                .map(|v| vec![("UCI_Variant".to_string(), v)])
                .unwrap_or_default();
            (
                cmd.split_whitespace().map(str::to_string).collect(),
                options,
            )
        };
        Ok(Some(UciTeacherSpec {
            command,
            options,
            rank_base,
            timeout,
            depth,
            movetime_ms,
            nodes,
            multipv,
        }))
    }
}

/// A UCI Xiangqi engine searching every position with MultiPV.
pub struct UciTeacher {
    process: ChildProcess,
    name: String,
    spec: UciTeacherSpec,
    /// The `go` line for every position.
    go: String,
    temperature: f32,
    cp_scale: f32,
    start_fen: String,
    moves: Vec<String>,
}

impl UciTeacher {
    /// Starts the engine, completes the handshake and sets `MultiPV` from `config`.
    pub fn spawn(spec: UciTeacherSpec, config: &BootstrapConfig) -> Result<UciTeacher, TeachError> {
        let program = spec.command.join(" ");
        let process = ChildProcess::spawn(&spec.command).map_err(|e| TeachError::Engine {
            engine: program.clone(),
            reason: e.to_string(),
        })?;
        let (depth, nodes, movetime) =
            if spec.depth.is_some() || spec.nodes.is_some() || spec.movetime_ms.is_some() {
                (spec.depth, spec.nodes, spec.movetime_ms)
            } else {
                (config.depth, config.nodes, config.movetime_ms)
            };
        let mut go = "go".to_string();
        if let Some(d) = depth {
            go += &format!(" depth {d}");
        }
        if let Some(n) = nodes {
            go += &format!(" nodes {n}");
        }
        if let Some(t) = movetime {
            go += &format!(" movetime {t}");
        }
        let multipv = spec.multipv.unwrap_or(config.multipv);
        let mut teacher = UciTeacher {
            process,
            name: program,
            spec,
            go,
            temperature: config.cp_temperature,
            cp_scale: config.cp_scale,
            start_fen: Xiangqi::start().to_text(),
            moves: Vec::new(),
        };
        teacher.send("uci")?;
        let lines = teacher.read_until(|l| l == "uciok")?;
        if let Some(name) = lines.iter().find_map(|l| l.trim().strip_prefix("id name ")) {
            teacher.name = name.trim().to_string();
        }
        let mut options = teacher.spec.options.clone();
        options.push(("MultiPV".into(), multipv.to_string()));
        for (n, v) in options {
            teacher.send(&format!("setoption name {n} value {v}"))?;
        }
        teacher.ready()?;
        Ok(teacher)
    }

    /// The teacher a `fairy-stockfish:…` or `uci:…` spec names; `None` for other kinds.
    pub fn from_spec(
        spec: &str,
        config: &BootstrapConfig,
    ) -> Result<Option<UciTeacher>, TeachError> {
        UciTeacherSpec::parse(spec)?
            .map(|s| UciTeacher::spawn(s, config))
            .transpose()
    }

    fn send(&mut self, line: &str) -> Result<(), TeachError> {
        let sent = self.process.send(line);
        sent.map_err(|e| TeachError::Engine {
            engine: self.name.clone(),
            reason: e.to_string(),
        })
    }

    fn read_until(&mut self, done: impl Fn(&str) -> bool) -> Result<Vec<String>, TeachError> {
        let read = self.process.read_until(self.spec.timeout, done);
        read.map_err(|e| TeachError::Engine {
            engine: self.name.clone(),
            reason: e.to_string(),
        })
    }

    fn ready(&mut self) -> Result<(), TeachError> {
        self.send("isready")?;
        self.read_until(|l| l == "readyok").map(|_| ())
    }

    /// Searches the current position (restricted to `only`, when given) and returns the
    /// final lines with their moves, best first, and the `bestmove` answer.
    fn search(
        &mut self,
        only: Option<&[Move]>,
    ) -> Result<(Vec<(Move, UciLine)>, String), TeachError> {
        let position = if self.moves.is_empty() {
            format!("position fen {}", self.start_fen)
        } else {
            format!(
                "position fen {} moves {}",
                self.start_fen,
                self.moves.join(" ")
            )
        };
        self.send(&position)?;
        let mut go = self.go.clone();
        if let Some(only) = only {
            go += " searchmoves";
            for &m in only {
                go += " ";
                go += &format_move_with_base(m, self.spec.rank_base);
            }
        }
        self.send(&go)?;
        let lines = self.read_until(|l| l.starts_with("bestmove"))?;
        let mut parsed = Vec::new();
        for line in &lines {
            match parse_info_line(line) {
                Ok(Some(l)) => parsed.push(l),
                Ok(None) => {}
                Err(reason) => return Err(self.garbage(&go, line, reason)),
            }
        }
        let mut out = Vec::new();
        for l in final_lines(parsed) {
            let mv = parse_move_with_base(&l.first_move, self.spec.rank_base)
                .map_err(|e| self.garbage(&go, &l.first_move, e.to_string()))?;
            out.push((mv, l));
        }
        let bestmove = lines.last().cloned().unwrap_or_default();
        Ok((out, bestmove))
    }

    fn garbage(&self, request: &str, line: &str, reason: String) -> TeachError {
        TeachError::Garbage {
            engine: self.name.clone(),
            request: request.to_string(),
            line: line.to_string(),
            reason,
        }
    }
}

impl Teacher<Xiangqi> for UciTeacher {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn new_game(&mut self, start: &Xiangqi, _seed: u64) -> Result<(), TeachError> {
        self.start_fen = start.to_text();
        self.moves.clear();
        self.send("ucinewgame")?;
        self.ready()
    }

    fn advise(&mut self, state: &Xiangqi) -> Result<Advice<Move>, TeachError> {
        let (mut lines, _) = self.search(None)?;
        lines.retain(|(m, _)| state.is_legal(*m));
        if lines.is_empty() {
            // The teacher's rules differ from the engine's here (repetitions, most likely):
            // search again among the moves legal under the engine's rules.
            let mut legal = Vec::new();
            state.legal_actions(&mut legal);
            let bestmove;
            (lines, bestmove) = self.search(Some(&legal))?;
            lines.retain(|(m, _)| state.is_legal(*m));
            if lines.is_empty() {
                return Err(self.garbage(
                    &self.go.clone(),
                    &bestmove,
                    format!("no legal move reported in {}", state.to_text()),
                ));
            }
        }
        let scores: Vec<f32> = lines.iter().map(|(_, l)| l.score.centipawns()).collect();
        let probs = softmax(&scores, self.temperature);
        let best_cp = scores[0];
        let expected = 1.0 / (1.0 + 10f32.powf(-best_cp / self.cp_scale));
        Ok(Advice {
            decision: Decision::Play(lines[0].0),
            policy: lines.into_iter().map(|(m, _)| m).zip(probs).collect(),
            value: Some((2.0 * expected - 1.0).clamp(-1.0, 1.0)),
        })
    }

    fn observe(&mut self, _before: &Xiangqi, action: Move) -> Result<(), TeachError> {
        self.moves
            .push(format_move_with_base(action, self.spec.rank_base));
        Ok(())
    }
}

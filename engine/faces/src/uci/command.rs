//! The UCI and UCCI commands as text: one input line read into a [`UciCommand`], or a typed
//! error ([`UciError`]) naming the command at fault.

use std::time::Duration;

use games::xiangqi::START_FEN;
use players::alphabeta::SearchLimits;
use players::timing::clock_move_time;

/// A malformed or impossible UCI command: which command and why.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("{command}: {reason}")]
pub struct UciError {
    pub command: String,
    pub reason: String,
}

pub(super) fn err(command: &str, reason: impl Into<String>) -> UciError {
    UciError {
        command: command.to_string(),
        reason: reason.into(),
    }
}

/// What `go` asked for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GoParams {
    pub depth: Option<u32>,
    pub movetime: Option<u64>,
    pub nodes: Option<u64>,
    /// Remaining time and increment per side (Red, Black), milliseconds.
    pub time: [Option<u64>; 2],
    pub inc: [u64; 2],
    pub movestogo: Option<u64>,
    pub infinite: bool,
    /// `go ponder`: search the position (the predicted reply played) until `ponderhit` or
    /// `stop`; the clock's parameters serve the move once `ponderhit` comes.
    pub ponder: bool,
    /// UCCI: the side to move's time left and increment, in the session's unit (seconds, or
    /// milliseconds with `usemillisec`).
    pub own_time: Option<u64>,
    pub own_inc: u64,
}

/// One parsed input line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UciCommand {
    Uci,
    /// The UCCI handshake: the session speaks UCCI from here on.
    Ucci,
    /// UCCI: moves the next search must not play (as text, checked when applied).
    BanMoves(Vec<String>),
    IsReady,
    NewGame,
    /// A start FEN and the moves after it (as text, checked when applied).
    Position {
        fen: String,
        moves: Vec<String>,
    },
    Go(GoParams),
    /// The opponent played the move the engine pondered on.
    PonderHit,
    Stop,
    Quit,
    SetOption {
        name: String,
        value: String,
    },
    /// A blank line or an unknown command: ignored, as UCI requires.
    Ignored(String),
}

/// Reads one line of the protocol.
pub fn parse_command(line: &str) -> Result<UciCommand, UciError> {
    let tokens: Vec<&str> = line.split_whitespace().collect();
    let Some(&head) = tokens.first() else {
        return Ok(UciCommand::Ignored(String::new()));
    };
    let rest = &tokens[1..];
    Ok(match head {
        "uci" => UciCommand::Uci,
        "ucci" => UciCommand::Ucci,
        "banmoves" => UciCommand::BanMoves(rest.iter().map(|m| m.to_string()).collect()),
        "isready" => UciCommand::IsReady,
        "ucinewgame" | "uccinewgame" => UciCommand::NewGame,
        "stop" => UciCommand::Stop,
        "ponderhit" => UciCommand::PonderHit,
        "quit" => UciCommand::Quit,
        "position" => parse_position(rest)?,
        "go" => UciCommand::Go(parse_go(rest)?),
        "setoption" => parse_setoption(rest)?,
        _ => UciCommand::Ignored(line.trim().to_string()),
    })
}

fn parse_position(rest: &[&str]) -> Result<UciCommand, UciError> {
    let moves_at = rest.iter().position(|&t| t == "moves");
    let (head, moves) = match moves_at {
        Some(i) => (&rest[..i], &rest[i + 1..]),
        None => (rest, &[][..]),
    };
    let fen = match head.first() {
        Some(&"startpos") if head.len() == 1 => START_FEN.to_string(),
        Some(&"startpos") => return Err(err("position", "text after startpos")),
        Some(&"fen") if head.len() > 1 => head[1..].join(" "),
        Some(&"fen") => return Err(err("position", "fen without a FEN")),
        Some(other) => {
            return Err(err(
                "position",
                format!("expected startpos or fen, got '{other}'"),
            ))
        }
        None => return Err(err("position", "expected startpos or fen")),
    };
    Ok(UciCommand::Position {
        fen,
        moves: moves.iter().map(|s| s.to_string()).collect(),
    })
}

fn parse_go(rest: &[&str]) -> Result<GoParams, UciError> {
    let mut go = GoParams::default();
    let mut it = rest.iter();
    while let Some(&key) = it.next() {
        match key {
            "infinite" => {
                go.infinite = true;
                continue;
            }
            "ponder" => {
                go.ponder = true;
                continue;
            }
            // UCCI's `draw` (the opponent offers one) is declined by playing on.
            "draw" => continue,
            "depth" | "movetime" | "nodes" | "wtime" | "btime" | "winc" | "binc" | "movestogo"
            | "mate" | "time" | "increment" | "opptime" | "oppincrement" | "oppmovestogo" => {}
            // Before reading a value: an unknown word is not a parameter short of one.
            _ => return Err(err("go", format!("unknown parameter '{key}'"))),
        }
        let value = it
            .next()
            .ok_or_else(|| err("go", format!("{key} without a value")))?;
        let n: u64 = value
            .parse()
            .map_err(|_| err("go", format!("{key} '{value}' is not a number")))?;
        match key {
            "depth" => go.depth = Some(n.min(u32::MAX as u64) as u32),
            "movetime" => go.movetime = Some(n),
            "nodes" => go.nodes = Some(n),
            "wtime" => go.time[0] = Some(n),
            "btime" => go.time[1] = Some(n),
            "winc" => go.inc[0] = n,
            "binc" => go.inc[1] = n,
            "movestogo" => go.movestogo = Some(n),
            // `mate N` is read as a depth bound of 2N plies.
            "mate" => go.depth = Some(n.saturating_mul(2).min(u32::MAX as u64) as u32),
            "time" => go.own_time = Some(n),
            "increment" => go.own_inc = n,
            // The opponent's clock does not change how long this move may take.
            "opptime" | "oppincrement" | "oppmovestogo" => {}
            _ => unreachable!("checked above"),
        }
    }
    Ok(go)
}

fn parse_setoption(rest: &[&str]) -> Result<UciCommand, UciError> {
    match rest.first() {
        Some(&"name") => {}
        None | Some(&"value") => return Err(err("setoption", "expected 'name'")),
        // UCCI: `setoption NAME [VALUE…]`.
        Some(&name) => {
            return Ok(UciCommand::SetOption {
                name: name.to_string(),
                value: rest[1..].join(" "),
            })
        }
    }
    let value_at = rest.iter().position(|&t| t == "value");
    let name = rest[1..value_at.unwrap_or(rest.len())].join(" ");
    if name.is_empty() {
        return Err(err("setoption", "empty option name"));
    }
    let value = value_at
        .map(|i| rest[i + 1..].join(" "))
        .unwrap_or_default();
    Ok(UciCommand::SetOption { name, value })
}

impl GoParams {
    /// These parameters with UCCI's clock for the side to move (`side_index`) written as UCI's,
    /// its unit being `unit_ms` milliseconds.
    pub(super) fn with_own_clock(mut self, side_index: usize, unit_ms: u64) -> GoParams {
        if let Some(t) = self.own_time {
            self.time[side_index] = Some(t.saturating_mul(unit_ms));
            self.inc[side_index] = self.own_inc.saturating_mul(unit_ms);
        }
        self
    }

    /// The search limits for the side to move. A clock gives the move the time
    /// `players::timing::clock_move_time` says; `infinite` and `ponder` keep only a depth.
    pub fn limits(&self, side_index: usize) -> SearchLimits {
        let mut limits = SearchLimits {
            depth: self.depth,
            nodes: self.nodes,
            movetime: self.movetime.map(Duration::from_millis),
        };
        if self.infinite || self.ponder {
            return SearchLimits {
                depth: self.depth,
                ..Default::default()
            };
        }
        if let (None, Some(left)) = (self.movetime, self.time[side_index]) {
            let inc = Duration::from_millis(self.inc[side_index]);
            limits.movetime = Some(clock_move_time(
                Duration::from_millis(left),
                inc,
                self.movestogo,
            ));
        }
        limits
    }
}

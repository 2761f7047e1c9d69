//! LFEN positions and action notation: the only code that reads or writes Liuzhou text.

use super::{Action, ActionKind, Liuzhou, Phase, Rules, STONES_PER_PLAYER};
use crate::{ParseError, Player};

/// The start position.
pub const START_LFEN: &str = "6/6/6/6/6/6 b place 0 0 0";

const FIELDS: [&str; 6] = [
    "board",
    "to_move",
    "phase",
    "pending",
    "move_count",
    "moves_since_capture",
];

fn lfen_err(field: impl Into<String>, reason: impl Into<String>) -> ParseError {
    ParseError::new("LFEN", field, reason)
}

pub fn point_name(p: u8) -> String {
    format!("{}{}", (b'a' + p % 6) as char, p / 6 + 1)
}

fn parse_point(text: &str) -> Result<u8, ParseError> {
    let err = |reason: &str| ParseError::new("action", format!("point {text:?}"), reason);
    let b = text.as_bytes();
    if b.len() != 2 {
        return Err(err("a point is a file a–f and a rank 1–6, like c3"));
    }
    if !(b'a'..=b'f').contains(&b[0]) {
        return Err(err("the file must be a–f"));
    }
    if !(b'1'..=b'6').contains(&b[1]) {
        return Err(err("the rank must be 1–6"));
    }
    Ok((b[1] - b'1') * 6 + (b[0] - b'a'))
}

pub fn parse_action(text: &str) -> Result<Action, ParseError> {
    let text = text.trim();
    if text.is_empty() {
        return Err(ParseError::new("action", "text", "empty"));
    }
    if let Some(point) = text.strip_prefix('x') {
        return Ok(Action::select(parse_point(point)?));
    }
    if let Some((from, to)) = text.split_once('-') {
        let (from, to) = (parse_point(from)?, parse_point(to)?);
        return Action::step(from, to).ok_or_else(|| {
            ParseError::new(
                "action",
                format!("step {text:?}"),
                "not one step up, down, left or right",
            )
        });
    }
    Ok(Action::place(parse_point(text)?))
}

pub fn format_action(action: Action) -> String {
    match action.kind() {
        ActionKind::Place(p) => point_name(p),
        ActionKind::Select(p) => format!("x{}", point_name(p)),
        ActionKind::Step { from, to } => format!("{}-{}", point_name(from), point_name(to)),
    }
}

pub fn write_lfen(s: &Liuzhou) -> String {
    let mut board = String::new();
    for rank in (0..6).rev() {
        let mut empty = 0;
        for file in 0..6 {
            let bit = 1u64 << (rank * 6 + file);
            let c = if s.stones[0] & bit != 0 {
                if s.marked & bit != 0 {
                    'b'
                } else {
                    'B'
                }
            } else if s.stones[1] & bit != 0 {
                if s.marked & bit != 0 {
                    'w'
                } else {
                    'W'
                }
            } else {
                empty += 1;
                continue;
            };
            if empty > 0 {
                board.push(char::from(b'0' + empty));
                empty = 0;
            }
            board.push(c);
        }
        if empty > 0 {
            board.push(char::from(b'0' + empty));
        }
        if rank > 0 {
            board.push('/');
        }
    }
    let side = if s.to_act == Player::First { 'b' } else { 'w' };
    format!(
        "{board} {side} {} {} {} {}",
        s.phase.name(),
        s.pending,
        s.move_count,
        s.moves_since_capture
    )
}

pub fn parse_lfen(text: &str, rules: Rules) -> Result<Liuzhou, ParseError> {
    rules.validate().map_err(|e| lfen_err("rules", e))?;
    let fields: Vec<&str> = text.split_whitespace().collect();
    if fields.len() != 6 {
        return Err(lfen_err(
            "position",
            format!(
                "expected 6 fields ({}), found {}",
                FIELDS.join(" "),
                fields.len()
            ),
        ));
    }
    let mut s = Liuzhou::new(rules);

    let ranks: Vec<&str> = fields[0].split('/').collect();
    if ranks.len() != 6 {
        return Err(lfen_err(
            "board",
            format!("expected 6 ranks separated by '/', found {}", ranks.len()),
        ));
    }
    for (i, rank_text) in ranks.iter().enumerate() {
        let rank = 5 - i;
        let field = format!("board rank {}", rank + 1);
        let mut file = 0usize;
        for c in rank_text.chars() {
            if let Some(d) = c.to_digit(10) {
                if !(1..=6).contains(&d) {
                    return Err(lfen_err(field, format!("empty-point count {d} is not 1–6")));
                }
                file += d as usize;
            } else {
                let (player, marked) = match c {
                    'B' => (0, false),
                    'b' => (0, true),
                    'W' => (1, false),
                    'w' => (1, true),
                    _ => return Err(lfen_err(field, format!("unexpected character {c:?}"))),
                };
                if file < 6 {
                    let bit = 1u64 << (rank * 6 + file);
                    s.stones[player] |= bit;
                    if marked {
                        s.marked |= bit;
                    }
                }
                file += 1;
            }
            if file > 6 {
                return Err(lfen_err(field, "more than 6 points"));
            }
        }
        if file != 6 {
            return Err(lfen_err(field, format!("describes {file} points, not 6")));
        }
    }

    s.to_act = match fields[1] {
        "b" => Player::First,
        "w" => Player::Second,
        other => return Err(lfen_err("to_move", format!("{other:?} is neither b nor w"))),
    };
    s.phase = match fields[2] {
        "place" => Phase::Place,
        "mark" => Phase::Mark,
        "forced" => Phase::Forced,
        "move" => Phase::Move,
        "capture" => Phase::Capture,
        "counter" => Phase::Counter,
        other => {
            return Err(lfen_err(
                "phase",
                format!("{other:?} is not one of place, mark, forced, move, capture, counter"),
            ))
        }
    };
    let number = |i: usize, max: u16| -> Result<u16, ParseError> {
        let t = fields[i];
        if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
            return Err(lfen_err(FIELDS[i], format!("{t:?} is not a whole number")));
        }
        // Digits that overflow are a count too large, not something other than a count.
        match t.parse::<u16>() {
            Ok(n) if n <= max => Ok(n),
            _ => Err(lfen_err(FIELDS[i], format!("{t} exceeds {max}"))),
        }
    };
    s.pending = number(3, 2)? as u8;
    s.move_count = number(4, super::MOVE_LIMIT)?;
    s.moves_since_capture = number(5, super::MOVE_LIMIT)?;

    for (player, name) in [(0, "black"), (1, "white")] {
        if s.stones[player].count_ones() > STONES_PER_PLAYER {
            return Err(lfen_err("board", format!("{name} has more than 18 stones")));
        }
    }
    let selecting = matches!(s.phase, Phase::Mark | Phase::Capture);
    if selecting && s.pending == 0 {
        return Err(lfen_err(
            "pending",
            "mark and capture phases owe at least one selection",
        ));
    }
    if !selecting && s.pending != 0 {
        return Err(lfen_err(
            "pending",
            "must be 0 outside the mark and capture phases",
        ));
    }
    let full = s.stones[0] | s.stones[1] == super::bits::BOARD;
    if s.phase == Phase::Place && full {
        return Err(lfen_err(
            "phase",
            "placement on a full board (REMOVAL has run)",
        ));
    }
    if s.phase.after_placement() && s.marked != 0 {
        return Err(lfen_err(
            "board",
            "marked stones after placement (REMOVAL removes them)",
        ));
    }
    s.settle();
    Ok(s)
}

/// The board as text for a terminal: rank 6 at the top, `●`/`○` for Black/White, `x` over a
/// marked stone.
pub fn render(s: &Liuzhou) -> String {
    let mut out = String::new();
    for rank in (0..6).rev() {
        out.push_str(&format!("{} ", rank + 1));
        for file in 0..6 {
            let bit = 1u64 << (rank * 6 + file);
            let marked = s.marked & bit != 0;
            let c = if s.stones[0] & bit != 0 {
                if marked {
                    "b"
                } else {
                    "B"
                }
            } else if s.stones[1] & bit != 0 {
                if marked {
                    "w"
                } else {
                    "W"
                }
            } else {
                "."
            };
            out.push(' ');
            out.push_str(c);
        }
        out.push('\n');
    }
    out.push_str("   a b c d e f\n");
    let side = if s.to_act == Player::First {
        "Black"
    } else {
        "White"
    };
    out.push_str(&format!(
        "{side} to act, phase {}, pending {}, move {}, since capture {}",
        s.phase.name(),
        s.pending,
        s.move_count,
        s.moves_since_capture
    ));
    if let Some(o) = s.outcome {
        out.push_str(&format!(", game over: {o:?}"));
    }
    out.push('\n');
    out
}

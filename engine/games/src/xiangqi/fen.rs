//! FEN and ICCS move text.
//!
//! FEN as the UCI Xiangqi engines write it: ranks 9 (Black's back rank) down to 0, uppercase
//! Red, letters `K A B N R C P` (`E` and `H` read as bishop and knight), side `w` (Red; `r` is
//! also read) or `b`, then `- - halfmove fullmove` (the two dashes and both numbers may be
//! omitted on input). Moves are ICCS: file `a`–`i` from Red's left, rank `0`–`9` from Red's
//! back rank, from-square then to-square (`h2e2`).

use super::board::*;
use super::{Move, Side};
use crate::ParseError;

const FORMAT: &str = "FEN";

/// The standard start position.
pub const START_FEN: &str = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1";

fn piece_from_char(c: char) -> Option<u8> {
    let kind = match c.to_ascii_uppercase() {
        'K' => KING,
        'A' => ADVISOR,
        'B' | 'E' => BISHOP,
        'N' | 'H' => KNIGHT,
        'R' => ROOK,
        'C' => CANNON,
        'P' => PAWN,
        _ => return None,
    };
    Some(
        kind | if c.is_ascii_uppercase() {
            RED_BIT
        } else {
            BLACK_BIT
        },
    )
}

/// The FEN letter of a piece code.
pub fn piece_char(piece: u8) -> char {
    let c = b".KABNRCP"[kind_of(piece) as usize] as char;
    if piece & BLACK_BIT != 0 {
        c.to_ascii_lowercase()
    } else {
        c
    }
}

/// Whether a piece of `kind` and `side` may stand on `(rank, file)` in a reachable position.
/// Advisors and bishops have fixed points; the general stays in the palace; a soldier never
/// stands behind its starting rank.
fn placement_ok(kind: u8, side: Side, rank: usize, file: usize) -> bool {
    // Work in the side's own frame: rank 0 = its back rank.
    let r = if side == Side::Red { rank } else { 9 - rank };
    match kind {
        KING => r <= 2 && (3..=5).contains(&file),
        ADVISOR => matches!((r, file), (0 | 2, 3 | 5) | (1, 4)),
        BISHOP => matches!((r, file), (0 | 4, 2 | 6) | (2, 0 | 4 | 8)),
        PAWN => r >= 3,
        _ => true,
    }
}

/// Reads a FEN: the position, plies since the last capture, and the full-move number.
pub fn parse_fen(text: &str) -> Result<(Position, u32, u32), ParseError> {
    let mut fields = text.split_whitespace();
    let placement = fields
        .next()
        .ok_or_else(|| ParseError::new(FORMAT, "placement", "empty text"))?;
    let mut pos = Position::empty();
    let mut counts = [[0usize; 8]; 2];
    let mut next_slot = [1usize; 2];
    let rows: Vec<&str> = placement.split('/').collect();
    if rows.len() != 10 {
        return Err(ParseError::new(
            FORMAT,
            "placement",
            format!("{} ranks, expected 10", rows.len()),
        ));
    }
    for (i, row) in rows.iter().enumerate() {
        let rank = 9 - i;
        let mut file = 0usize;
        for c in row.chars() {
            if let Some(d) = c.to_digit(10) {
                if d == 0 {
                    return Err(ParseError::new(
                        FORMAT,
                        format!("rank {rank}"),
                        "empty-square count 0",
                    ));
                }
                file += d as usize;
                continue;
            }
            let piece = piece_from_char(c).ok_or_else(|| {
                ParseError::new(
                    FORMAT,
                    format!("rank {rank}"),
                    format!("unknown piece '{c}'"),
                )
            })?;
            if file >= 9 {
                return Err(ParseError::new(
                    FORMAT,
                    format!("rank {rank}"),
                    "more than 9 files",
                ));
            }
            let side = if piece & RED_BIT != 0 {
                Side::Red
            } else {
                Side::Black
            };
            let kind = kind_of(piece);
            let at = format!("rank {rank}, file {}", (b'a' + file as u8) as char);
            if !placement_ok(kind, side, rank, file) {
                return Err(ParseError::new(
                    FORMAT,
                    at,
                    format!("'{c}' cannot stand on this point"),
                ));
            }
            counts[side as usize][kind as usize] += 1;
            if counts[side as usize][kind as usize] > MAX_OF_KIND[kind as usize] {
                return Err(ParseError::new(
                    FORMAT,
                    at,
                    format!("too many '{c}' (at most {})", MAX_OF_KIND[kind as usize]),
                ));
            }
            let slot = if kind == KING {
                0
            } else {
                let s = next_slot[side as usize];
                next_slot[side as usize] += 1;
                s
            };
            pos.put(piece, square(rank, file), slot);
            file += 1;
        }
        if file != 9 {
            return Err(ParseError::new(
                FORMAT,
                format!("rank {rank}"),
                format!("{file} files, expected 9"),
            ));
        }
    }
    for (side, name) in [(Side::Red, "Red"), (Side::Black, "Black")] {
        if counts[side as usize][KING as usize] != 1 {
            return Err(ParseError::new(
                FORMAT,
                "placement",
                format!("{name} has no general"),
            ));
        }
    }
    let side = match fields.next() {
        None => Side::Red,
        Some("w" | "r" | "W" | "R") => Side::Red,
        Some("b" | "B") => Side::Black,
        Some(other) => {
            return Err(ParseError::new(
                FORMAT,
                "side to move",
                format!("'{other}' is not w or b"),
            ))
        }
    };
    pos.set_side(side);
    // Castling and en-passant fields do not exist in Xiangqi: accept only dashes.
    let mut rest: Vec<&str> = fields.collect();
    while rest.first() == Some(&"-") {
        rest.remove(0);
    }
    let number = |i: usize, name: &str, default: u32| -> Result<u32, ParseError> {
        match rest.get(i) {
            None => Ok(default),
            Some(t) => t.parse::<u32>().map_err(|e| {
                let why = match e.kind() {
                    std::num::IntErrorKind::PosOverflow => {
                        format!("'{t}' is out of range (at most {})", u32::MAX)
                    }
                    _ => format!("'{t}' is not a number"),
                };
                ParseError::new(FORMAT, name.to_string(), why)
            }),
        }
    };
    let halfmove = number(0, "halfmove clock", 0)?;
    let fullmove = number(1, "fullmove number", 1)?.max(1);
    if rest.len() > 2 {
        return Err(ParseError::new(
            FORMAT,
            "trailing text",
            format!("unexpected '{}'", rest[2..].join(" ")),
        ));
    }
    if pos.in_check(side.opponent()) {
        return Err(ParseError::new(
            FORMAT,
            "placement",
            "the side not to move is in check (or the generals face each other)",
        ));
    }
    Ok((pos, halfmove, fullmove))
}

/// Writes a FEN.
pub fn to_fen(pos: &Position, halfmove: u32, fullmove: u32) -> String {
    let mut s = String::with_capacity(96);
    for rank in (0..10).rev() {
        let mut empty = 0;
        for file in 0..9 {
            let p = pos.piece_at(square(rank, file));
            if p == EMPTY {
                empty += 1;
            } else {
                if empty > 0 {
                    s.push((b'0' + empty) as char);
                    empty = 0;
                }
                s.push(piece_char(p));
            }
        }
        if empty > 0 {
            s.push((b'0' + empty) as char);
        }
        if rank > 0 {
            s.push('/');
        }
    }
    let side = if pos.side() == Side::Red { 'w' } else { 'b' };
    s.push_str(&format!(" {side} - - {halfmove} {fullmove}"));
    s
}

/// Reads a square `a0`..`i9`; `rank_base` is 0 for ICCS, 1 for engines that count ranks 1–10.
fn parse_square(t: &str, rank_base: u32) -> Option<u8> {
    let mut cs = t.chars();
    let f = cs.next()?;
    if !('a'..='i').contains(&f) {
        return None;
    }
    let r: u32 = cs.as_str().parse().ok()?;
    let r = r.checked_sub(rank_base)?;
    if r > 9 || cs.as_str().starts_with('+') {
        return None;
    }
    Some(square(r as usize, (f as u8 - b'a') as usize))
}

/// Reads a move in ICCS (`h2e2`), or with `rank_base = 1` in the 1–10 rank convention of
/// Fairy-Stockfish (`h3e3`). Legal or not: only the squares are checked.
pub fn parse_move_with_base(text: &str, rank_base: u32) -> Result<Move, ParseError> {
    let err = |reason: &str| ParseError::new("ICCS move", format!("'{text}'"), reason);
    let t = text.trim();
    if !t.is_ascii() || t.len() < 4 || t.len() > 6 {
        return Err(err("expected from- and to-square such as h2e2"));
    }
    // The to-square starts at the second letter.
    let split = t[1..]
        .find(|c: char| c.is_ascii_alphabetic())
        .map(|i| i + 1)
        .ok_or_else(|| err("no to-square"))?;
    let from = parse_square(&t[..split], rank_base).ok_or_else(|| err("bad from-square"))?;
    let to = parse_square(&t[split..], rank_base).ok_or_else(|| err("bad to-square"))?;
    Ok(Move::new(from, to))
}

/// Reads an ICCS move (`h2e2`).
pub fn parse_move(text: &str) -> Result<Move, ParseError> {
    parse_move_with_base(text, 0)
}

/// Writes a move with ranks counted from `rank_base` (0 = ICCS).
pub fn format_move_with_base(m: Move, rank_base: u32) -> String {
    let sq = |s: u8| {
        format!(
            "{}{}",
            (b'a' + file_of(s) as u8) as char,
            rank_of(s) as u32 + rank_base
        )
    };
    format!("{}{}", sq(m.from()), sq(m.to()))
}

/// Writes an ICCS move (`h2e2`).
pub fn format_move(m: Move) -> String {
    format_move_with_base(m, 0)
}

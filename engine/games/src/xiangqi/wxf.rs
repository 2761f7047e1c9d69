//! WXF move notation (`C2.5`, `H8+7`, `R+.3`): the Asian/World Xiangqi Federation's letters
//! for the Chinese notation.
//!
//! A move is a piece letter (`K A E H R C P`; `G`, `B`, `N` are read too), the file it stands on
//! (1–9 from the mover's right, both sides), an operator (`+` forward, `-` back, `.` sideways)
//! and a number: ranks moved for a general, rook, cannon or soldier going forward or back,
//! otherwise the destination file.
//!
//! Like pieces on one file (the federation's "tandem" rules, which this writer follows):
//! - two or three: the file digit becomes `+` (front) or `-` (rear), `R+.3`, `C--1`; the middle
//!   one of three soldiers keeps its file, `P3.4`;
//! - four or five soldiers: `++` (foremost, no letter), `P+`, (`P3` the middle of five), `P-`,
//!   `--` (rearmost);
//! - soldiers in tandem on two files: the letter becomes the file digit, then `+`, `-`, or the
//!   file digit again for the middle one: `3+.4`, `33.4`, `3-.4`.
//!
//! Advisors and bishops keep their file (the direction tells two on one file apart).
//!
//! Read as well: `=` or nothing for sideways (`C2=5`, `C25`), lower case, and the marker before
//! the letter (`+C-1`, `-C.5`). Text is resolved against the legal moves as Chinese text is:
//! by these conventions first, then loosely; more than one fitting move is ambiguous.

use super::board::*;
use super::relative::{self, Direction, Spec, Tag};
use super::Move;
use crate::xiangqi::pgn::MoveTextError;

const LETTERS: [char; 8] = ['?', 'K', 'A', 'E', 'H', 'R', 'C', 'P'];

/// The move `m` (legal in `pos`) in WXF notation.
pub fn wxf_notation(pos: &Position, m: Move) -> String {
    let f = relative::facts(pos, m);
    let letter = LETTERS[f.kind as usize];
    let digit = |n: u8| char::from(b'0' + n);
    let (i, n) = (f.index, f.count);
    let mut out = String::new();
    if f.kind == PAWN && f.tandem_files >= 2 && n >= 2 {
        out.push(digit(f.file));
        out.push(if i == 0 {
            '+'
        } else if i + 1 == n {
            '-'
        } else {
            digit(f.file)
        });
    } else if n >= 2 && f.kind != ADVISOR && f.kind != BISHOP {
        match (n, i) {
            (4.., 0) => out.push_str("++"),
            (4.., i) if i + 1 == n => out.push_str("--"),
            (2 | 3, 0) | (4.., 1) => out.extend([letter, '+']),
            (2 | 3, i) if i + 1 == n => out.extend([letter, '-']),
            (4.., i) if i + 2 == n => out.extend([letter, '-']),
            _ => out.extend([letter, digit(f.file)]),
        }
    } else {
        out.extend([letter, digit(f.file)]);
    }
    out.push(match f.dir {
        Direction::Forward => '+',
        Direction::Back => '-',
        Direction::Sideways => '.',
    });
    out.push(digit(f.number));
    out
}

fn letter_kind(c: char) -> Option<u8> {
    Some(match c.to_ascii_uppercase() {
        'K' | 'G' => KING,
        'A' => ADVISOR,
        'E' | 'B' => BISHOP,
        'H' | 'N' => KNIGHT,
        'R' => ROOK,
        'C' => CANNON,
        'P' => PAWN,
        _ => return None,
    })
}

fn digit(c: char) -> Option<u8> {
    c.to_digit(10).filter(|&d| d >= 1).map(|d| d as u8)
}

/// The piece, file and tag of a WXF move's head (what precedes the operator).
fn parse_head(head: &[char]) -> Option<(Option<u8>, Option<u8>, Option<Tag>)> {
    let sign = |c: char| match c {
        '+' => Some(Tag::WxfFront),
        '-' => Some(Tag::WxfRear),
        _ => None,
    };
    Some(match *head {
        ['+', '+'] => (None, None, Some(Tag::Front)),
        ['-', '-'] => (None, None, Some(Tag::Rear)),
        [l, d] if letter_kind(l).is_some() && digit(d).is_some() => {
            (letter_kind(l), digit(d), None)
        }
        [l, s] if letter_kind(l).is_some() && sign(s).is_some() => (letter_kind(l), None, sign(s)),
        [s, l] if sign(s).is_some() && letter_kind(l).is_some() => (letter_kind(l), None, sign(s)),
        [d, s] if digit(d).is_some() && sign(s).is_some() => (None, digit(d), sign(s)),
        [d, e] if digit(d).is_some() && d == e => (None, digit(d), None),
        _ => return None,
    })
}

/// The description in WXF move text, if it is one.
pub(crate) fn parse_spec(text: &str) -> Option<Spec> {
    let cs: Vec<char> = text.trim().chars().collect();
    let (&last, rest) = cs.split_last()?;
    let number = digit(last)?;
    let with_operator = rest.split_last().and_then(|(&op, head)| {
        let dir = match op {
            '+' => Direction::Forward,
            '-' => Direction::Back,
            '.' | '=' => Direction::Sideways,
            _ => return None,
        };
        Some((dir, parse_head(head)?))
    });
    // Without an operator the move is sideways (`C25`).
    let (dir, (kind, file, tag)) =
        with_operator.or_else(|| Some((Direction::Sideways, parse_head(rest)?)))?;
    Some(Spec {
        kind,
        file,
        tag,
        dir,
        number,
    })
}

/// Reads a move in WXF notation and finds it among the legal moves of `pos`.
pub fn parse_wxf(pos: &Position, text: &str) -> Result<Move, MoveTextError> {
    relative::parse_text(pos, text, parse_spec)
}

/// [`parse_wxf`] against a given list of legal moves of `pos`.
pub(crate) fn resolve_wxf(
    pos: &Position,
    legal: &[Move],
    text: &str,
) -> Result<Move, MoveTextError> {
    relative::resolve_text(pos, legal, text, parse_spec)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::xiangqi::fen::{parse_fen, parse_move, START_FEN};

    fn wxf(fen: &str, m: &str) -> String {
        let (pos, _, _) = parse_fen(fen).unwrap();
        wxf_notation(&pos, parse_move(m).unwrap())
    }

    #[test]
    fn opening_moves() {
        assert_eq!(wxf(START_FEN, "h2e2"), "C2.5");
        assert_eq!(wxf(START_FEN, "b0c2"), "H8+7");
        assert_eq!(wxf(START_FEN, "i0i1"), "R1+1");
        assert_eq!(wxf(START_FEN, "c0e2"), "E7+5");
        assert_eq!(wxf(START_FEN, "f0e1"), "A4+5");
        let black = START_FEN.replace(" w ", " b ");
        assert_eq!(wxf(&black, "h7e7"), "C8.5");
        assert_eq!(wxf(&black, "b9c7"), "H2+3");
    }

    #[test]
    fn tandem_pieces() {
        let fen = "5k3/9/9/9/4R4/9/4R4/9/9/3K5 w - - 0 1";
        assert_eq!(wxf(fen, "e5e4"), "R+-1");
        assert_eq!(wxf(fen, "e3d3"), "R-.6");
    }
}

//! What Chinese and WXF move text have in common: a move told by the moving piece, the file it
//! stands on (counted from the mover's right, 1–9), a direction (forward, back, sideways) and a
//! number (ranks moved for a straight forward or backward move of a general, rook, cannon or
//! soldier; otherwise the destination file). Like pieces on one file are told apart by their
//! place on it, front (most advanced) first; soldiers in tandem on two files by a number counted
//! over both files, the mover's right file first, front to rear within a file.
//!
//! Reading resolves a description against the legal moves of the position: first by the
//! conventions exactly, then, if nothing fits, loosely (a file number where a front/rear marker
//! was due, a marker where none was needed). More than one fitting move is ambiguous.

use super::board::*;
use super::{Move, Side};
use crate::xiangqi::pgn::MoveTextError;

/// Which way a move goes, seen by the mover.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Direction {
    Forward,
    Back,
    Sideways,
}

/// A legal move as relative notation sees it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Facts {
    pub kind: u8,
    /// From-file, 1–9 from the mover's right.
    pub file: u8,
    pub dir: Direction,
    /// Ranks moved, or the destination file (see the module docs).
    pub number: u8,
    /// Place among the mover's like pieces on the from-file, 0 = front.
    pub index: usize,
    /// How many like pieces stand on the from-file.
    pub count: usize,
    /// For a soldier: how many files hold two or more of the mover's soldiers.
    pub tandem_files: usize,
    /// For a soldier on such a file: its number (1-based) over all those files, the mover's
    /// right file first, front to rear; 0 otherwise.
    pub ordinal: u8,
}

/// `sq`'s file counted from `side`'s right, 1–9.
pub(crate) fn file_number(side: Side, sq: u8) -> u8 {
    (if side == Side::Red {
        9 - file_of(sq)
    } else {
        file_of(sq) + 1
    }) as u8
}

/// `sq`'s rank counted from `side`'s back rank.
fn forward_rank(side: Side, sq: u8) -> usize {
    if side == Side::Red {
        rank_of(sq)
    } else {
        9 - rank_of(sq)
    }
}

/// The facts of `m`, a move of the piece on its from-square (legal in `pos`).
pub(crate) fn facts(pos: &Position, m: Move) -> Facts {
    let piece = pos.piece_at(m.from());
    let kind = kind_of(piece);
    let side = if piece & RED_BIT != 0 {
        Side::Red
    } else {
        Side::Black
    };
    let mut same: Vec<u8> = pos
        .pieces(side)
        .filter(|&s| pos.piece_at(s) == piece && file_of(s) == file_of(m.from()))
        .collect();
    same.sort_by_key(|&s| std::cmp::Reverse(forward_rank(side, s)));
    let index = same.iter().position(|&s| s == m.from()).unwrap_or(0);
    let (from_r, to_r) = (forward_rank(side, m.from()), forward_rank(side, m.to()));
    let dir = match to_r.cmp(&from_r) {
        std::cmp::Ordering::Greater => Direction::Forward,
        std::cmp::Ordering::Less => Direction::Back,
        std::cmp::Ordering::Equal => Direction::Sideways,
    };
    let straight = matches!(kind, KING | ROOK | CANNON | PAWN);
    let number = if dir != Direction::Sideways && straight {
        from_r.abs_diff(to_r) as u8
    } else {
        file_number(side, m.to())
    };
    let (mut tandem_files, mut ordinal) = (0, 0);
    if kind == PAWN {
        let mut per_file = [0usize; 9];
        let pawns: Vec<u8> = pos
            .pieces(side)
            .filter(|&s| pos.piece_at(s) == piece)
            .collect();
        for &s in &pawns {
            per_file[file_of(s)] += 1;
        }
        tandem_files = per_file.iter().filter(|&&n| n >= 2).count();
        let mut tandem: Vec<u8> = pawns
            .into_iter()
            .filter(|&s| per_file[file_of(s)] >= 2)
            .collect();
        tandem.sort_by_key(|&s| {
            (
                file_number(side, s),
                std::cmp::Reverse(forward_rank(side, s)),
            )
        });
        ordinal = tandem
            .iter()
            .position(|&s| s == m.from())
            .map_or(0, |i| i as u8 + 1);
    }
    Facts {
        kind,
        file: file_number(side, m.from()),
        dir,
        number,
        index,
        count: same.len(),
        tandem_files,
        ordinal,
    }
}

/// How a piece is picked out among like pieces on its file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Tag {
    /// 前, WXF `++`: the front piece.
    Front,
    /// 中: the middle one of an odd number.
    Middle,
    /// 后, WXF `--`: the rear piece.
    Rear,
    /// 一..五 before a soldier: the k-th soldier front to rear (over both files when two
    /// files hold tandem soldiers and no file is given).
    Ordinal(u8),
    /// WXF `+`: the front of two or three, the second of four or five.
    WxfFront,
    /// WXF `-`: the rear of two or three, the second-to-last of four or five.
    WxfRear,
}

/// A move as relative text describes it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Spec {
    /// `None`: a soldier, named by its place alone (WXF `++.4`, `3+.4`; 前三进一).
    pub kind: Option<u8>,
    pub file: Option<u8>,
    pub tag: Option<Tag>,
    pub dir: Direction,
    pub number: u8,
}

fn tag_fits(spec: &Spec, f: &Facts, strict: bool) -> bool {
    let (i, n) = (f.index, f.count);
    match spec.tag {
        // A file alone names the only piece there, or the middle one of an odd number (WXF);
        // advisors and bishops are never tagged (the direction tells them apart).
        None => !strict || matches!(f.kind, ADVISOR | BISHOP) || (n % 2 == 1 && i == n / 2),
        Some(Tag::Front) => i == 0 && (n >= 2 || !strict),
        Some(Tag::Rear) => i + 1 == n && (n >= 2 || !strict),
        Some(Tag::Middle) => n % 2 == 1 && i == n / 2 && (n >= 3 || !strict),
        Some(Tag::Ordinal(k)) => {
            let k = k as usize;
            let across = f.tandem_files >= 2 && spec.file.is_none();
            if strict {
                if across {
                    f.ordinal as usize == k
                } else {
                    n >= 2 && i + 1 == k
                }
            } else {
                i + 1 == k || f.ordinal as usize == k
            }
        }
        Some(Tag::WxfFront) => match n {
            4.. => i == 1 || (!strict && i == 0),
            _ => i == 0 && (n >= 2 || !strict),
        },
        Some(Tag::WxfRear) => match n {
            4.. => i + 2 == n || (!strict && i + 1 == n),
            _ => i + 1 == n && (n >= 2 || !strict),
        },
    }
}

fn fits(spec: &Spec, f: &Facts, strict: bool) -> bool {
    spec.kind.unwrap_or(PAWN) == f.kind
        && spec.file.is_none_or(|file| file == f.file)
        && spec.dir == f.dir
        && spec.number == f.number
        && tag_fits(spec, f, strict)
}

/// Why relative text named no single move.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Unresolved {
    NoMove,
    Ambiguous(Vec<Move>),
}

/// The one move among `legal` (the legal moves of `pos`) that `spec` describes.
pub(crate) fn resolve(pos: &Position, legal: &[Move], spec: &Spec) -> Result<Move, Unresolved> {
    let kind = spec.kind.unwrap_or(PAWN);
    let facts: Vec<(Move, Facts)> = legal
        .iter()
        .filter(|m| kind_of(pos.piece_at(m.from())) == kind)
        .map(|&m| (m, facts(pos, m)))
        .collect();
    for strict in [true, false] {
        let found: Vec<Move> = facts
            .iter()
            .filter(|(_, f)| fits(spec, f, strict))
            .map(|&(m, _)| m)
            .collect();
        match found.len() {
            0 => continue,
            1 => return Ok(found[0]),
            _ => return Err(Unresolved::Ambiguous(found)),
        }
    }
    Err(Unresolved::NoMove)
}

/// The move `text` names in `pos` (one of `legal`), read by a notation's `parse` into a spec:
/// what WXF and Chinese notation share once their words are read.
pub(crate) fn resolve_text(
    pos: &Position,
    legal: &[Move],
    text: &str,
    parse: fn(&str) -> Option<Spec>,
) -> Result<Move, MoveTextError> {
    let spec = parse(text).ok_or_else(|| MoveTextError::Unreadable(text.to_string()))?;
    resolve(pos, legal, &spec).map_err(|e| match e {
        Unresolved::NoMove => MoveTextError::Illegal(text.to_string()),
        Unresolved::Ambiguous(moves) => MoveTextError::Ambiguous(text.to_string(), moves),
    })
}

/// [`resolve_text`] against every legal move of `pos`.
pub(crate) fn parse_text(
    pos: &Position,
    text: &str,
    parse: fn(&str) -> Option<Spec>,
) -> Result<Move, MoveTextError> {
    let mut legal = MoveList::new();
    pos.clone().gen_legal(&mut legal);
    resolve_text(pos, legal.as_slice(), text, parse)
}

//! Chinese move notation (炮二平五): piece, file, action, target; written for display and read
//! from game records.
//!
//! Red counts files from its right with Chinese numerals (file `i` = 一), Black from its right
//! with full-width digits (file `a` = １). Actions: 进 forward, 退 back, 平 sideways. Rooks,
//! cannons, generals and soldiers moving forward or back give the number of ranks; knights,
//! bishops and advisors give the destination file. With two like pieces on one file the file is
//! replaced by 前/后 (front/rear); three soldiers on one file are 前/中/后, four or five are
//! numbered front to rear 一二三四五. When two files each hold two or more soldiers, those
//! soldiers are numbered 一二三四五 over both files, the mover's right file first, front to rear
//! (the convention of the ICCS notation note that Chinese GUIs follow; sources differ on this
//! rare case). Advisors and bishops are never tagged: the direction tells two on one file apart.
//!
//! Reading ([`parse_chinese`]) takes simplified and traditional characters (車 馬 傌 俥 砲 包 帥
//! 將 後 進), for either side any numerals (一..九, full-width or ASCII digits), and the looser
//! forms found in files: 前兵三进一 or 前三进一 (tag with the file), 车前进一. Text is matched
//! against the legal moves by these conventions first, then loosely (a file where 前/后 was due,
//! a tag where none was needed); more than one fitting move is ambiguous.

use super::board::*;
use super::relative::{self, Direction, Spec, Tag};
use super::{Move, Side};
use crate::xiangqi::pgn::MoveTextError;

const RED: [char; 8] = ['?', '帅', '仕', '相', '马', '车', '炮', '兵'];
const BLACK: [char; 8] = ['?', '将', '士', '象', '马', '车', '炮', '卒'];
const RED_NUM: [char; 10] = ['〇', '一', '二', '三', '四', '五', '六', '七', '八', '九'];
const BLACK_NUM: [char; 10] = ['０', '１', '２', '３', '４', '５', '６', '７', '８', '９'];

/// The move `m` (legal in `pos`) in Chinese notation.
pub fn chinese_notation(pos: &Position, m: Move) -> String {
    let piece = pos.piece_at(m.from());
    let side = if piece & RED_BIT != 0 {
        Side::Red
    } else {
        Side::Black
    };
    let num = |n: u8| {
        if side == Side::Red {
            RED_NUM[n as usize]
        } else {
            BLACK_NUM[n as usize]
        }
    };
    let f = relative::facts(pos, m);
    let name = if side == Side::Red { RED } else { BLACK }[f.kind as usize];
    let mut out = String::new();
    if f.kind == PAWN && f.tandem_files >= 2 && f.ordinal > 0 {
        out.push(RED_NUM[f.ordinal as usize]);
        out.push(name);
    } else if f.count >= 2 && f.kind != ADVISOR && f.kind != BISHOP {
        let label = match (f.count, f.index) {
            (2, 0) | (3, 0) => '前',
            (2, _) => '后',
            (3, 1) => '中',
            (3, _) => '后',
            (_, i) => RED_NUM[i + 1],
        };
        out.push(label);
        out.push(name);
    } else {
        out.push(name);
        out.push(num(f.file));
    }
    out.push(match f.dir {
        Direction::Forward => '进',
        Direction::Back => '退',
        Direction::Sideways => '平',
    });
    out.push(num(f.number));
    out
}

fn piece_kind(c: char) -> Option<u8> {
    Some(match c {
        '帅' | '帥' | '将' | '將' => KING,
        '仕' | '士' => ADVISOR,
        '相' | '象' => BISHOP,
        '马' | '馬' | '傌' => KNIGHT,
        '车' | '車' | '俥' => ROOK,
        '炮' | '砲' | '包' => CANNON,
        '兵' | '卒' => PAWN,
        _ => return None,
    })
}

/// 1–9 written as a Chinese numeral, a full-width digit or an ASCII digit.
fn numeral(c: char) -> Option<u8> {
    let n = match c {
        '一' => 1,
        '二' => 2,
        '三' => 3,
        '四' => 4,
        '五' => 5,
        '六' => 6,
        '七' => 7,
        '八' => 8,
        '九' => 9,
        '１'..='９' => c as u32 - '０' as u32,
        '1'..='9' => c as u32 - '0' as u32,
        _ => return None,
    };
    Some(n as u8)
}

/// 前/中/后, or 一..五 numbering soldiers.
fn tag(c: char) -> Option<Tag> {
    match c {
        '前' => Some(Tag::Front),
        '中' => Some(Tag::Middle),
        '后' | '後' => Some(Tag::Rear),
        _ => numeral(c).filter(|&n| n <= 5).map(Tag::Ordinal),
    }
}

/// The description in Chinese move text, if it is one.
pub(crate) fn parse_spec(text: &str) -> Option<Spec> {
    let cs: Vec<char> = text.chars().filter(|c| !c.is_whitespace()).collect();
    let n = cs.len();
    if !(4..=5).contains(&n) {
        return None;
    }
    let number = numeral(cs[n - 1])?;
    let dir = match cs[n - 2] {
        '进' | '進' => Direction::Forward,
        '退' => Direction::Back,
        '平' => Direction::Sideways,
        _ => return None,
    };
    let (kind, file, tag) = match cs[..n - 2] {
        [p, f] if piece_kind(p).is_some() && numeral(f).is_some() => {
            (piece_kind(p), numeral(f), None)
        }
        [t, p] if tag(t).is_some() && piece_kind(p).is_some() => (piece_kind(p), None, tag(t)),
        [p, t] if piece_kind(p).is_some() && matches!(t, '前' | '中' | '后' | '後') => {
            (piece_kind(p), None, tag(t))
        }
        [t, f] if matches!(t, '前' | '中' | '后' | '後') && numeral(f).is_some() => {
            (None, numeral(f), tag(t))
        }
        [t, p, f] if tag(t).is_some() && piece_kind(p).is_some() && numeral(f).is_some() => {
            (piece_kind(p), numeral(f), tag(t))
        }
        _ => return None,
    };
    Some(Spec {
        kind,
        file,
        tag,
        dir,
        number,
    })
}

/// Reads a move in Chinese notation and finds it among the legal moves of `pos`.
pub fn parse_chinese(pos: &Position, text: &str) -> Result<Move, MoveTextError> {
    relative::parse_text(pos, text, parse_spec)
}

/// [`parse_chinese`] against a given list of legal moves of `pos`.
pub(crate) fn resolve_chinese(
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

    fn notation(fen: &str, m: &str) -> String {
        let (pos, _, _) = parse_fen(fen).unwrap();
        chinese_notation(&pos, parse_move(m).unwrap())
    }

    #[test]
    fn opening_moves() {
        assert_eq!(notation(START_FEN, "h2e2"), "炮二平五");
        assert_eq!(notation(START_FEN, "b0c2"), "马八进七");
        assert_eq!(notation(START_FEN, "i0i1"), "车一进一");
        assert_eq!(notation(START_FEN, "c0e2"), "相七进五");
        assert_eq!(notation(START_FEN, "f0e1"), "仕四进五");
        assert_eq!(notation(START_FEN, "g3g4"), "兵三进一");
        let black = START_FEN.replace(" w ", " b ");
        assert_eq!(notation(&black, "h7e7"), "炮８平５");
        assert_eq!(notation(&black, "b9c7"), "马２进３");
        assert_eq!(notation(&black, "e9e8"), "将５进１");
    }

    #[test]
    fn front_and_rear() {
        // Two red rooks on file e: the front one retreats.
        let fen = "5k3/9/9/9/4R4/9/4R4/9/9/3K5 w - - 0 1";
        assert_eq!(notation(fen, "e5e4"), "前车退一");
        assert_eq!(notation(fen, "e3d3"), "后车平六");
    }
}

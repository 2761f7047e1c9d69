//! Chinese move notation for display (炮二平五): piece, file, action, target.
//!
//! Red counts files from its right with Chinese numerals (file `i` = 一), Black from its right
//! with full-width digits (file `a` = １). Actions: 进 forward, 退 back, 平 sideways. Rooks,
//! cannons, generals and soldiers moving forward or back give the number of ranks; knights,
//! bishops and advisors give the destination file. With two like pieces on one file the file is
//! replaced by 前/后 (front/rear); three or more soldiers on one file are told apart by
//! 前/中/后 or, front to rear, 一二三四五. (The rarer case of two files each holding several
//! soldiers is written the same way and may need the file to be unambiguous.)

use super::board::*;
use super::{Move, Side};

const RED: [char; 8] = ['?', '帅', '仕', '相', '马', '车', '炮', '兵'];
const BLACK: [char; 8] = ['?', '将', '士', '象', '马', '车', '炮', '卒'];
const RED_NUM: [char; 10] = ['〇', '一', '二', '三', '四', '五', '六', '七', '八', '九'];
const BLACK_NUM: [char; 10] = ['０', '１', '２', '３', '４', '５', '６', '７', '８', '９'];

/// The move `m` (legal in `pos`) in Chinese notation.
pub fn chinese_notation(pos: &Position, m: Move) -> String {
    let piece = pos.piece_at(m.from());
    let kind = kind_of(piece);
    let side = if piece & RED_BIT != 0 {
        Side::Red
    } else {
        Side::Black
    };
    let num = |n: usize| {
        if side == Side::Red {
            RED_NUM[n]
        } else {
            BLACK_NUM[n]
        }
    };
    // Files numbered from the mover's right: 1..=9.
    let file_no = |sq: u8| {
        if side == Side::Red {
            9 - file_of(sq)
        } else {
            file_of(sq) + 1
        }
    };
    // Ranks counted forward for the mover.
    let fwd_rank = |sq: u8| {
        if side == Side::Red {
            rank_of(sq)
        } else {
            9 - rank_of(sq)
        }
    };
    let name = if side == Side::Red { RED } else { BLACK }[kind as usize];

    // Like pieces on the same file, front (most advanced) first.
    let mut same: Vec<u8> = pos
        .pieces(side)
        .filter(|&s| pos.piece_at(s) == piece && file_of(s) == file_of(m.from()))
        .collect();
    same.sort_by_key(|&s| std::cmp::Reverse(fwd_rank(s)));
    let mut out = String::new();
    if same.len() >= 2 && kind != ADVISOR && kind != BISHOP {
        let i = same.iter().position(|&s| s == m.from()).unwrap_or(0);
        let label = match (same.len(), i) {
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
        out.push(num(file_no(m.from())));
    }
    let (from_r, to_r) = (fwd_rank(m.from()), fwd_rank(m.to()));
    let action = if to_r > from_r {
        '进'
    } else if to_r < from_r {
        '退'
    } else {
        '平'
    };
    out.push(action);
    let straight = matches!(kind, KING | ROOK | CANNON | PAWN);
    let target = if action != '平' && straight {
        from_r.abs_diff(to_r)
    } else {
        file_no(m.to())
    };
    out.push(num(target));
    out
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

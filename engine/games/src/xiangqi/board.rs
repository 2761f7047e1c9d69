//! The position: a padded mailbox, piece lists, Zobrist key, make/unmake, move generation and
//! the legality test. Everything here is the hot path of perft and the alpha-beta search: no
//! allocation, no bounds that the padding does not already guarantee.
//!
//! Squares are indices into a 16 × 16 array: `(rank + 3) * 16 + (file + 3)`. The three (or four)
//! rows and columns of padding around the 10 × 9 board hold [`OFF`], so knight jumps and slides
//! stop without coordinate tests.

use super::{Move, Side};

/// Piece kinds, stored in the low three bits of a square.
pub const KING: u8 = 1;
pub const ADVISOR: u8 = 2;
pub const BISHOP: u8 = 3;
pub const KNIGHT: u8 = 4;
pub const ROOK: u8 = 5;
pub const CANNON: u8 = 6;
pub const PAWN: u8 = 7;

/// Colour bits: a piece is `colour_bit(side) | kind`.
pub const RED_BIT: u8 = 0x08;
pub const BLACK_BIT: u8 = 0x10;
pub const EMPTY: u8 = 0;
/// The padding around the board: neither empty nor of either colour.
pub const OFF: u8 = 0x80;

/// The most pieces one side may have (1 K, 2 A, 2 B, 2 N, 2 R, 2 C, 5 P).
pub const MAX_PER_SIDE: usize = 16;
/// Per kind (index = kind), the most pieces of that kind one side may have.
pub const MAX_OF_KIND: [usize; 8] = [0, 1, 2, 2, 2, 2, 2, 5];

const N: i32 = 16;
const S: i32 = -16;
const E: i32 = 1;
const W: i32 = -1;
const ORTH: [i32; 4] = [N, S, E, W];
const DIAG: [i32; 4] = [N + E, N + W, S + E, S + W];

#[inline]
pub const fn colour_bit(side: Side) -> u8 {
    RED_BIT << side as u8
}

#[inline]
pub const fn kind_of(piece: u8) -> u8 {
    piece & 7
}

/// The square of `(rank, file)`, rank 0 = Red's back rank, file 0 = file `a`.
#[inline]
pub const fn square(rank: usize, file: usize) -> u8 {
    (((rank + 3) << 4) | (file + 3)) as u8
}

#[inline]
pub const fn rank_of(sq: u8) -> usize {
    (sq >> 4) as usize - 3
}

#[inline]
pub const fn file_of(sq: u8) -> usize {
    (sq & 15) as usize - 3
}

/// 0..90 index of a board square: `rank * 9 + file`.
#[inline]
pub const fn index90(sq: u8) -> usize {
    rank_of(sq) * 9 + file_of(sq)
}

#[inline]
pub const fn from_index90(i: usize) -> u8 {
    square(i / 9, i % 9)
}

const fn on_board_table() -> [bool; 256] {
    let mut t = [false; 256];
    let mut r = 0;
    while r < 10 {
        let mut f = 0;
        while f < 9 {
            t[square(r, f) as usize] = true;
            f += 1;
        }
        r += 1;
    }
    t
}

const fn palace_table() -> [[bool; 256]; 2] {
    let mut t = [[false; 256]; 2];
    let mut r = 0;
    while r < 3 {
        let mut f = 3;
        while f < 6 {
            t[0][square(r, f) as usize] = true;
            t[1][square(9 - r, f) as usize] = true;
            f += 1;
        }
        r += 1;
    }
    t
}

const fn own_half_table() -> [[bool; 256]; 2] {
    let mut t = [[false; 256]; 2];
    let mut r = 0;
    while r < 5 {
        let mut f = 0;
        while f < 9 {
            t[0][square(r, f) as usize] = true;
            t[1][square(9 - r, f) as usize] = true;
            f += 1;
        }
        r += 1;
    }
    t
}

pub static ON_BOARD: [bool; 256] = on_board_table();
pub static IN_PALACE: [[bool; 256]; 2] = palace_table();
pub static OWN_HALF: [[bool; 256]; 2] = own_half_table();

/// SplitMix64, evaluated at compile time for the Zobrist keys (fixed, so hashes are stable
/// across runs and builds).
const fn splitmix(state: u64) -> u64 {
    let mut z = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

const fn zobrist_table() -> [[u64; 90]; 24] {
    let mut t = [[0u64; 90]; 24];
    let mut p = 0;
    while p < 24 {
        let mut s = 0;
        while s < 90 {
            t[p][s] = splitmix(0x5851_F42D_4C95_7F2D ^ ((p as u64) << 8 | s as u64));
            s += 1;
        }
        p += 1;
    }
    t
}

/// Zobrist keys indexed by piece code and 0..90 square.
static ZOBRIST: [[u64; 90]; 24] = zobrist_table();
/// XORed in when Black is to move.
pub const ZOBRIST_BLACK: u64 = 0x2545_F491_4F6C_DD1D;

#[inline]
pub fn zobrist(piece: u8, sq: u8) -> u64 {
    ZOBRIST[piece as usize][index90(sq)]
}

/// What [`Position::make`] needs to undo a move.
#[derive(Clone, Copy, Debug)]
pub struct Undo {
    captured: u8,
    captured_slot: u8,
    key: u64,
}

impl Undo {
    /// The piece the move captured ([`EMPTY`] if none).
    #[inline]
    pub fn captured(&self) -> u8 {
        self.captured
    }
}

/// A fixed-capacity move buffer on the stack: move generation never allocates.
#[derive(Clone)]
pub struct MoveList {
    moves: [Move; 160],
    len: usize,
}

impl Default for MoveList {
    fn default() -> Self {
        Self::new()
    }
}

impl MoveList {
    #[inline]
    pub fn new() -> Self {
        MoveList {
            moves: [Move(0); 160],
            len: 0,
        }
    }
    #[inline]
    fn push(&mut self, m: Move) {
        // 160 exceeds the pseudo-legal moves of any position the FEN reader accepts (the
        // most any side can have is well under 150); the check keeps it memory safe anyway.
        if self.len < self.moves.len() {
            self.moves[self.len] = m;
            self.len += 1;
        }
    }
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    #[inline]
    pub fn as_slice(&self) -> &[Move] {
        &self.moves[..self.len]
    }
    #[inline]
    pub fn as_mut_slice(&mut self) -> &mut [Move] {
        &mut self.moves[..self.len]
    }
    #[inline]
    pub fn clear(&mut self) {
        self.len = 0;
    }
    #[inline]
    pub fn retain(&mut self, mut keep: impl FnMut(Move) -> bool) {
        let mut j = 0;
        for i in 0..self.len {
            let m = self.moves[i];
            if keep(m) {
                self.moves[j] = m;
                j += 1;
            }
        }
        self.len = j;
    }
}

/// A Xiangqi position: board, side to move, piece lists and Zobrist key. No history: the game
/// state ([`super::Xiangqi`]) keeps that.
#[derive(Clone)]
pub struct Position {
    pub(crate) board: [u8; 256],
    /// Squares of each side's pieces; slot 0 is always the king; 0 marks a captured piece.
    pub(crate) slots: [[u8; MAX_PER_SIDE]; 2],
    /// For an occupied square, its piece's slot in `slots`.
    slot_of: [u8; 256],
    pub(crate) side: Side,
    key: u64,
}

impl std::fmt::Debug for Position {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&super::fen::to_fen(self, 0, 1))
    }
}

impl Position {
    /// An empty board with Red to move (the FEN reader fills it).
    pub(crate) fn empty() -> Self {
        let mut board = [OFF; 256];
        for (sq, b) in board.iter_mut().enumerate() {
            if ON_BOARD[sq] {
                *b = EMPTY;
            }
        }
        Position {
            board,
            slots: [[0; MAX_PER_SIDE]; 2],
            slot_of: [0; 256],
            side: Side::Red,
            key: 0,
        }
    }

    /// Puts `piece` on the empty square `sq` in slot `slot` (the FEN reader's builder).
    pub(crate) fn put(&mut self, piece: u8, sq: u8, slot: usize) {
        let side = if piece & RED_BIT != 0 {
            Side::Red
        } else {
            Side::Black
        };
        self.board[sq as usize] = piece;
        self.slots[side as usize][slot] = sq;
        self.slot_of[sq as usize] = slot as u8;
        self.key ^= zobrist(piece, sq);
    }

    pub(crate) fn set_side(&mut self, side: Side) {
        if side != self.side {
            self.key ^= ZOBRIST_BLACK;
        }
        self.side = side;
    }

    /// The side to move.
    #[inline]
    pub fn side(&self) -> Side {
        self.side
    }

    /// The piece on a square (`EMPTY`, or colour bit | kind).
    #[inline]
    pub fn piece_at(&self, sq: u8) -> u8 {
        self.board[sq as usize]
    }

    /// The slot (`0..16`, fixed for a piece's life) of the piece on the occupied square `sq`.
    #[inline]
    pub(crate) fn slot_at(&self, sq: u8) -> u8 {
        self.slot_of[sq as usize]
    }

    /// The Zobrist key of board and side to move.
    #[inline]
    pub fn key(&self) -> u64 {
        self.key
    }

    /// The Zobrist key of this position mirrored left-right (files a ↔ i), computed afresh.
    pub fn mirrored_key(&self) -> u64 {
        let mut k = if self.side == Side::Black {
            ZOBRIST_BLACK
        } else {
            0
        };
        for side in 0..2 {
            for &sq in &self.slots[side] {
                if sq != 0 {
                    let m = square(rank_of(sq), 8 - file_of(sq));
                    k ^= zobrist(self.board[sq as usize], m);
                }
            }
        }
        k
    }

    /// The square of `side`'s king.
    #[inline]
    pub fn king(&self, side: Side) -> u8 {
        self.slots[side as usize][0]
    }

    /// Occupied squares of `side`'s pieces (king first).
    pub fn pieces(&self, side: Side) -> impl Iterator<Item = u8> + '_ {
        self.slots[side as usize]
            .iter()
            .copied()
            .filter(|&s| s != 0)
    }

    /// Plays a move produced by this position's generator. Returns what `unmake` needs.
    #[inline]
    pub fn make(&mut self, m: Move) -> Undo {
        let (from, to) = (m.from(), m.to());
        let us = self.side as usize;
        let piece = self.board[from as usize];
        let captured = self.board[to as usize];
        let undo = Undo {
            captured,
            captured_slot: self.slot_of[to as usize],
            key: self.key,
        };
        self.key ^= zobrist(piece, from) ^ zobrist(piece, to) ^ ZOBRIST_BLACK;
        if captured != EMPTY {
            self.key ^= zobrist(captured, to);
            self.slots[us ^ 1][undo.captured_slot as usize] = 0;
        }
        self.board[to as usize] = piece;
        self.board[from as usize] = EMPTY;
        let slot = self.slot_of[from as usize];
        self.slot_of[to as usize] = slot;
        self.slots[us][slot as usize] = to;
        self.side = self.side.opponent();
        undo
    }

    /// Takes back `m`, which must be the last move made, with its `undo`.
    #[inline]
    pub fn unmake(&mut self, m: Move, undo: Undo) {
        let (from, to) = (m.from(), m.to());
        self.side = self.side.opponent();
        let us = self.side as usize;
        self.board[from as usize] = self.board[to as usize];
        self.board[to as usize] = undo.captured;
        let slot = self.slot_of[to as usize];
        self.slot_of[from as usize] = slot;
        self.slots[us][slot as usize] = from;
        if undo.captured != EMPTY {
            self.slot_of[to as usize] = undo.captured_slot;
            self.slots[us ^ 1][undo.captured_slot as usize] = to;
        }
        self.key = undo.key;
    }

    /// Takes back `m`, the last move made, when it captured nothing (so no [`Undo`] is needed).
    pub(crate) fn unmake_quiet(&mut self, m: Move) {
        let piece = self.board[m.to() as usize];
        let key = self.key ^ zobrist(piece, m.from()) ^ zobrist(piece, m.to()) ^ ZOBRIST_BLACK;
        let undo = Undo {
            captured: EMPTY,
            captured_slot: 0,
            key,
        };
        self.unmake(m, undo);
    }

    /// Passes the move (null move, for the search's null-move pruning).
    #[inline]
    pub fn make_null(&mut self) {
        self.side = self.side.opponent();
        self.key ^= ZOBRIST_BLACK;
    }

    #[inline]
    pub fn unmake_null(&mut self) {
        self.make_null();
    }

    /// How many of `side`'s pieces attack each square (index `rank * 9 + file`): the squares
    /// where each piece could capture an enemy piece standing there, its own pieces' squares
    /// included (a defended piece counts as attacked by its defenders). Pins are ignored; a
    /// general attacks the other general across an open file.
    pub fn attack_counts(&self, side: Side) -> [u8; 90] {
        let mut counts = [0u8; 90];
        let b = &self.board;
        let at = |s: i32| b[s as usize];
        let mut hit = |s: i32| counts[index90(s as u8)] += 1;
        let us = side as usize;
        for &from in &self.slots[us] {
            if from == 0 {
                continue;
            }
            let f = from as i32;
            match kind_of(b[from as usize]) {
                KING => {
                    for d in ORTH {
                        if IN_PALACE[us][(f + d) as usize] {
                            hit(f + d);
                        }
                    }
                    let d = if side == Side::Red { N } else { S };
                    let mut s = f + d;
                    while at(s) == EMPTY {
                        s += d;
                    }
                    if at(s) != OFF && kind_of(at(s)) == KING {
                        hit(s);
                    }
                }
                ADVISOR => {
                    for d in DIAG {
                        if IN_PALACE[us][(f + d) as usize] {
                            hit(f + d);
                        }
                    }
                }
                BISHOP => {
                    for d in DIAG {
                        let t = f + 2 * d;
                        if at(f + d) == EMPTY && OWN_HALF[us][t as usize] {
                            hit(t);
                        }
                    }
                }
                KNIGHT => {
                    for d in ORTH {
                        if at(f + d) != EMPTY {
                            continue;
                        }
                        let side_steps = if d == N || d == S { [E, W] } else { [N, S] };
                        for p in side_steps {
                            if at(f + 2 * d + p) != OFF {
                                hit(f + 2 * d + p);
                            }
                        }
                    }
                }
                ROOK => {
                    for d in ORTH {
                        let mut t = f + d;
                        while at(t) == EMPTY {
                            hit(t);
                            t += d;
                        }
                        if at(t) != OFF {
                            hit(t);
                        }
                    }
                }
                CANNON => {
                    // Beyond the first piece (the screen): every empty square up to and
                    // including the next piece.
                    for d in ORTH {
                        let mut t = f + d;
                        while at(t) == EMPTY {
                            t += d;
                        }
                        if at(t) == OFF {
                            continue;
                        }
                        t += d;
                        while at(t) == EMPTY {
                            hit(t);
                            t += d;
                        }
                        if at(t) != OFF {
                            hit(t);
                        }
                    }
                }
                _ => {
                    let fwd = if side == Side::Red { N } else { S };
                    if at(f + fwd) != OFF {
                        hit(f + fwd);
                    }
                    if !OWN_HALF[us][from as usize] {
                        for d in [E, W] {
                            if at(f + d) != OFF {
                                hit(f + d);
                            }
                        }
                    }
                }
            }
        }
        counts
    }

    /// Whether `side`'s king is attacked (including by the opposing general on an open file).
    #[inline]
    pub fn in_check(&self, side: Side) -> bool {
        self.attacked(self.king(side), side)
    }

    /// Whether the king of `us` standing on `k` is attacked by the other side.
    #[inline]
    fn attacked(&self, k: u8, us: Side) -> bool {
        let b = &self.board;
        let k = k as i32;
        let them = colour_bit(us.opponent());
        let at = |s: i32| b[s as usize];
        // Knights: the leg of a knight attacking k is always the diagonal neighbour of k on
        // the knight's side, so one empty test serves two knight squares.
        let knight = them | KNIGHT;
        for d in DIAG {
            if at(k + d) == EMPTY {
                let (dr, df) = (if d > 8 { N } else { S }, d - if d > 8 { N } else { S });
                if at(k + d + dr) == knight || at(k + d + df) == knight {
                    return true;
                }
            }
        }
        // Soldiers: an enemy soldier beside the palace has always crossed the river.
        let pawn = them | PAWN;
        let fwd = if us == Side::Red { N } else { S };
        if at(k + fwd) == pawn || at(k + E) == pawn || at(k + W) == pawn {
            return true;
        }
        // Rays: rook or (vertically) the enemy king as first piece, cannon as second.
        for d in ORTH {
            let mut s = k + d;
            while at(s) == EMPTY {
                s += d;
            }
            let p = at(s);
            if p == OFF {
                continue;
            }
            if p == them | ROOK || p == them | KING {
                return true;
            }
            s += d;
            while at(s) == EMPTY {
                s += d;
            }
            if at(s) == them | CANNON {
                return true;
            }
        }
        false
    }

    /// Appends every pseudo-legal move of the side to move (own-king safety not checked).
    pub fn gen_pseudo(&self, out: &mut MoveList) {
        self.gen(out, false);
    }

    /// Appends the pseudo-legal captures of the side to move.
    pub fn gen_captures(&self, out: &mut MoveList) {
        self.gen(out, true);
    }

    #[inline]
    fn gen(&self, out: &mut MoveList, captures_only: bool) {
        let us = self.side;
        let them = colour_bit(us.opponent());
        let b = &self.board;
        let at = |s: i32| b[s as usize];
        // A target is fine if empty (unless only captures are wanted) or an enemy piece.
        let ok = |p: u8| (p == EMPTY && !captures_only) || p & them != 0;
        for &from in &self.slots[us as usize] {
            if from == 0 {
                continue;
            }
            let f = from as i32;
            match kind_of(b[from as usize]) {
                KING => {
                    for d in ORTH {
                        let t = f + d;
                        if IN_PALACE[us as usize][t as usize] && ok(at(t)) {
                            out.push(Move::new(from, t as u8));
                        }
                    }
                }
                ADVISOR => {
                    for d in DIAG {
                        let t = f + d;
                        if IN_PALACE[us as usize][t as usize] && ok(at(t)) {
                            out.push(Move::new(from, t as u8));
                        }
                    }
                }
                BISHOP => {
                    for d in DIAG {
                        let t = f + 2 * d;
                        if at(f + d) == EMPTY && OWN_HALF[us as usize][t as usize] && ok(at(t)) {
                            out.push(Move::new(from, t as u8));
                        }
                    }
                }
                KNIGHT => {
                    for d in ORTH {
                        if at(f + d) != EMPTY {
                            continue;
                        }
                        let side_steps = if d == N || d == S { [E, W] } else { [N, S] };
                        for p in side_steps {
                            let t = f + 2 * d + p;
                            if ok(at(t)) {
                                out.push(Move::new(from, t as u8));
                            }
                        }
                    }
                }
                ROOK => {
                    for d in ORTH {
                        let mut t = f + d;
                        while at(t) == EMPTY {
                            if !captures_only {
                                out.push(Move::new(from, t as u8));
                            }
                            t += d;
                        }
                        if at(t) & them != 0 {
                            out.push(Move::new(from, t as u8));
                        }
                    }
                }
                CANNON => {
                    for d in ORTH {
                        let mut t = f + d;
                        while at(t) == EMPTY {
                            if !captures_only {
                                out.push(Move::new(from, t as u8));
                            }
                            t += d;
                        }
                        if at(t) == OFF {
                            continue;
                        }
                        t += d;
                        while at(t) == EMPTY {
                            t += d;
                        }
                        if at(t) & them != 0 {
                            out.push(Move::new(from, t as u8));
                        }
                    }
                }
                _ => {
                    // Soldier: forward; sideways once across the river.
                    let fwd = if us == Side::Red { N } else { S };
                    let t = f + fwd;
                    if ok(at(t)) {
                        out.push(Move::new(from, t as u8));
                    }
                    if !OWN_HALF[us as usize][from as usize] {
                        for d in [E, W] {
                            let t = f + d;
                            if ok(at(t)) {
                                out.push(Move::new(from, t as u8));
                            }
                        }
                    }
                }
            }
        }
    }

    /// Whether the pseudo-legal move `m` leaves the mover's king safe. `checked` must be
    /// whether the mover is in check now.
    ///
    /// Out of check, a move by a piece other than the king can only expose its own king if it
    /// leaves the king's rank or file (a rook, cannon or general behind it), leaves a knight's
    /// leg next to the king, or lands on the king's rank or file (becoming a cannon's screen).
    /// All other moves are legal without making them: most moves of most positions.
    #[inline]
    pub fn is_safe(&mut self, m: Move, checked: bool) -> bool {
        let (from, to) = (m.from(), m.to());
        let us = self.side;
        let k = self.king(us);
        if from == k {
            let cap = self.board[to as usize];
            self.board[to as usize] = self.board[from as usize];
            self.board[from as usize] = EMPTY;
            let safe = !self.attacked(to, us);
            self.board[from as usize] = self.board[to as usize];
            self.board[to as usize] = cap;
            return safe;
        }
        if !checked {
            let (kr, kf) = (k >> 4, k & 15);
            let diff = (from as i32 - k as i32).abs();
            if from >> 4 != kr
                && from & 15 != kf
                && diff != 15
                && diff != 17
                && to >> 4 != kr
                && to & 15 != kf
            {
                return true;
            }
        }
        let cap = self.board[to as usize];
        self.board[to as usize] = self.board[from as usize];
        self.board[from as usize] = EMPTY;
        let safe = !self.attacked(k, us);
        self.board[from as usize] = self.board[to as usize];
        self.board[to as usize] = cap;
        safe
    }

    /// Appends the legal moves of the side to move.
    pub fn gen_legal(&mut self, out: &mut MoveList) {
        let start = out.len();
        self.gen_pseudo(out);
        let checked = self.in_check(self.side);
        let mut j = start;
        for i in start..out.len {
            let m = out.moves[i];
            if self.is_safe(m, checked) {
                out.moves[j] = m;
                j += 1;
            }
        }
        out.len = j;
    }

    /// The number of legal moves (perft's bulk count at depth 1).
    #[inline]
    pub fn count_legal(&mut self) -> u64 {
        let mut list = MoveList::new();
        self.gen_pseudo(&mut list);
        let checked = self.in_check(self.side);
        let mut n = 0;
        for i in 0..list.len {
            n += self.is_safe(list.moves[i], checked) as u64;
        }
        n
    }

    /// Whether the side to move has at least one legal move.
    pub fn has_legal_move(&mut self) -> bool {
        let mut list = MoveList::new();
        self.gen_pseudo(&mut list);
        let checked = self.in_check(self.side);
        (0..list.len).any(|i| self.is_safe(list.moves[i], checked))
    }

    /// Whether `m` is a legal move here (any `Move` value is accepted and judged).
    pub fn is_legal(&mut self, m: Move) -> bool {
        let (from, to) = (m.from(), m.to());
        if !ON_BOARD[from as usize] || !ON_BOARD[to as usize] {
            return false;
        }
        if self.board[from as usize] & colour_bit(self.side) == 0 {
            return false;
        }
        let mut list = MoveList::new();
        self.gen_pseudo(&mut list);
        if !list.as_slice().contains(&m) {
            return false;
        }
        let checked = self.in_check(self.side);
        self.is_safe(m, checked)
    }

    /// Whether the move would capture.
    #[inline]
    pub fn is_capture(&self, m: Move) -> bool {
        self.board[m.to() as usize] != EMPTY
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::xiangqi::fen::{parse_fen, START_FEN};
    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};

    /// Positions along random games from the start.
    fn random_walk(seed: u64, plies: usize, mut visit: impl FnMut(&mut Position)) {
        let mut rng = SmallRng::seed_from_u64(seed);
        let (mut pos, _, _) = parse_fen(START_FEN).unwrap();
        for _ in 0..plies {
            visit(&mut pos);
            let mut list = MoveList::new();
            pos.gen_legal(&mut list);
            if list.is_empty() {
                break;
            }
            let m = list.as_slice()[rng.gen_range(0..list.len())];
            pos.make(m);
        }
    }

    #[test]
    fn the_shortcut_legality_test_agrees_with_making_the_move() {
        let mut checked_moves = 0;
        for seed in 0..40 {
            random_walk(seed, 150, |pos| {
                let mut list = MoveList::new();
                pos.gen_pseudo(&mut list);
                let checked = pos.in_check(pos.side());
                for &m in list.as_slice() {
                    let us = pos.side();
                    let fast = pos.is_safe(m, checked);
                    let undo = pos.make(m);
                    let slow = !pos.in_check(us);
                    pos.unmake(m, undo);
                    assert_eq!(fast, slow, "{m} in {pos:?}");
                    checked_moves += 1;
                }
            });
        }
        assert!(checked_moves > 100_000, "{checked_moves}");
    }

    #[test]
    fn unmake_restores_everything_and_keys_are_incremental() {
        random_walk(99, 300, |pos| {
            let before = pos.clone();
            let mut list = MoveList::new();
            pos.gen_legal(&mut list);
            for &m in list.as_slice() {
                let undo = pos.make(m);
                // The incremental key equals the key of the position read afresh.
                let fen = crate::xiangqi::fen::to_fen(pos, 0, 1);
                assert_eq!(pos.key(), parse_fen(&fen).unwrap().0.key(), "{m}");
                pos.unmake(m, undo);
                assert_eq!(pos.board, before.board);
                assert_eq!(pos.slots, before.slots);
                assert_eq!(pos.key(), before.key());
                assert_eq!(pos.side(), before.side());
            }
        });
    }

    #[test]
    fn captures_are_exactly_the_capturing_pseudo_moves() {
        random_walk(5, 200, |pos| {
            let (mut all, mut caps) = (MoveList::new(), MoveList::new());
            pos.gen_pseudo(&mut all);
            pos.gen_captures(&mut caps);
            let mut expected: Vec<Move> = all
                .as_slice()
                .iter()
                .copied()
                .filter(|&m| pos.is_capture(m))
                .collect();
            let mut got = caps.as_slice().to_vec();
            expected.sort_by_key(|m| m.0);
            got.sort_by_key(|m| m.0);
            assert_eq!(got, expected, "{pos:?}");
        });
    }

    /// Attack counts against the move generator: a square is attacked by a piece exactly when
    /// that piece could capture an enemy piece put there (own pieces swapped for an enemy one),
    /// plus the generals' face-off, which the generator leaves to the legality test.
    #[test]
    fn attack_counts_are_the_captures_onto_each_square() {
        let mut attacked = 0;
        for seed in 0..30 {
            random_walk(1000 + seed, 160, |pos| {
                for side in [Side::Red, Side::Black] {
                    let counts = pos.attack_counts(side);
                    let enemy = colour_bit(side.opponent());
                    for (i, &count) in counts.iter().enumerate() {
                        let t = from_index90(i);
                        let mut probe = pos.clone();
                        probe.side = side;
                        if probe.board[t as usize] & enemy == 0 {
                            probe.board[t as usize] = enemy | PAWN;
                        }
                        let mut list = MoveList::new();
                        probe.gen_captures(&mut list);
                        let mut want = list.as_slice().iter().filter(|m| m.to() == t).count();
                        let (ours, theirs) = (pos.king(side), pos.king(side.opponent()));
                        if t == theirs && file_of(ours) == file_of(theirs) {
                            let (lo, hi) = (ours.min(theirs), ours.max(theirs));
                            if (lo + 16..hi)
                                .step_by(16)
                                .all(|s| pos.board[s as usize] == EMPTY)
                            {
                                want += 1;
                            }
                        }
                        assert_eq!(count as usize, want, "{side:?} on {i} in {pos:?}");
                        attacked += want.min(1);
                    }
                }
            });
        }
        assert!(attacked > 50_000, "{attacked}");
    }
}

//! The stones on the board and the groups they form, kept incrementally so that a legality check
//! and a move cost a few dozen memory touches, not a flood fill.
//!
//! Points are indices into a padded `(n + 2)²` array whose outer ring is `EDGE`, so the four
//! neighbours of any point on the board exist. Each group is a circular list of its stones
//! (`next`), every stone names its group's `head`, and the head holds the group's size and its
//! *pseudo-liberties*: the number of (stone, empty neighbour) pairs, with the sum and the sum of
//! squares of those neighbours' indices. A group is in atari (exactly one distinct liberty)
//! exactly when `libs · sq = sum²`, which needs no liberty set.

/// Largest supported side; bitsets and key tables are sized for it.
pub const MAX_SIZE: usize = 19;
/// Smallest supported side.
pub const MIN_SIZE: usize = 2;

const MAX_STRIDE: usize = MAX_SIZE + 2;
const MAX_CELLS: usize = MAX_STRIDE * MAX_STRIDE;
/// Words of a bitset over padded point indices.
pub(crate) const WORDS: usize = MAX_CELLS.div_ceil(64);

pub(crate) const EMPTY: u8 = 0;
pub(crate) const BLACK: u8 = 1;
pub(crate) const WHITE: u8 = 2;
pub(crate) const EDGE: u8 = 3;

/// One bitset per colour (black, white) over padded indices.
pub(crate) type Stones = [[u64; WORDS]; 2];

/// Zobrist keys per colour and padded point, fixed at compile time so hashes are reproducible
/// across runs (a shard or a cache can rely on them).
static KEYS: [[u64; MAX_CELLS]; 2] = make_keys();

const fn splitmix(state: u64) -> (u64, u64) {
    let s = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = s;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (s, z ^ (z >> 31))
}

const fn make_keys() -> [[u64; MAX_CELLS]; 2] {
    let mut keys = [[0u64; MAX_CELLS]; 2];
    let mut state = 0x5EED_0F60_u64;
    let mut c = 0;
    while c < 2 {
        let mut p = 0;
        while p < MAX_CELLS {
            let (s, k) = splitmix(state);
            state = s;
            keys[c][p] = k;
            p += 1;
        }
        c += 1;
    }
    keys
}

/// A 64-bit mix used to fold extra state into hashes.
pub(crate) fn mix(x: u64) -> u64 {
    splitmix(x).1
}

#[inline]
fn key(color: u8, p: usize) -> u64 {
    KEYS[(color - 1) as usize][p]
}

#[derive(Clone, Copy, Debug, Default)]
struct Cell {
    color: u8,
    head: u16,
    next: u16,
    /// The fields below are meaningful at a group's head only.
    size: u16,
    libs: u16,
    lib_sum: u32,
    lib_sq: u32,
}

/// What placing a stone did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Placed {
    /// Opposing stones removed.
    pub captured: u32,
    /// The point of the last stone captured (meaningful when `captured == 1`).
    pub capture_point: usize,
    /// Own stones removed by a suicide (only when suicide is allowed).
    pub suicided: u32,
}

/// The stones of one board side `n` and their groups.
#[derive(Clone, Debug)]
pub(crate) struct Board {
    n: usize,
    stride: usize,
    cells: Vec<Cell>,
    hash: u64,
    bits: Stones,
    count: [u32; 2],
}

impl Board {
    pub fn new(n: usize) -> Board {
        assert!((MIN_SIZE..=MAX_SIZE).contains(&n), "board side {n}");
        let stride = n + 2;
        let mut cells = vec![
            Cell {
                color: EDGE,
                ..Cell::default()
            };
            stride * stride
        ];
        for r in 0..n {
            for c in 0..n {
                cells[(r + 1) * stride + c + 1].color = EMPTY;
            }
        }
        Board {
            n,
            stride,
            cells,
            hash: 0,
            bits: [[0; WORDS]; 2],
            count: [0; 2],
        }
    }

    #[inline]
    pub fn size(&self) -> usize {
        self.n
    }

    /// Padded index of `(row, col)`, row 0 at the bottom.
    #[inline]
    pub fn point(&self, row: usize, col: usize) -> usize {
        (row + 1) * self.stride + col + 1
    }

    /// `(row, col)` of a padded index on the board.
    #[inline]
    pub fn coords(&self, p: usize) -> (usize, usize) {
        (p / self.stride - 1, p % self.stride - 1)
    }

    #[inline]
    pub fn color(&self, p: usize) -> u8 {
        self.cells[p].color
    }

    /// Hash of the stones alone (positional superko compares these).
    #[inline]
    pub fn hash(&self) -> u64 {
        self.hash
    }

    #[inline]
    pub fn stones(&self) -> &Stones {
        &self.bits
    }

    /// Stones on the board, both colours.
    #[inline]
    pub fn stone_count(&self) -> u32 {
        self.count[0] + self.count[1]
    }

    #[inline]
    fn neighbours(&self, p: usize) -> [usize; 4] {
        [p - self.stride, p - 1, p + 1, p + self.stride]
    }

    /// Every padded index on the board, bottom row first.
    pub fn points(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.n).flat_map(move |r| (0..self.n).map(move |c| self.point(r, c)))
    }

    #[inline]
    fn head(&self, p: usize) -> usize {
        self.cells[p].head as usize
    }

    /// Whether the group with head `h` has exactly one liberty.
    #[inline]
    fn in_atari(&self, h: usize) -> bool {
        let g = &self.cells[h];
        let sum = g.lib_sum as u64;
        g.libs > 0 && g.libs as u64 * g.lib_sq as u64 == sum * sum
    }

    #[inline]
    fn add_lib(&mut self, h: usize, lib: usize) {
        let g = &mut self.cells[h];
        g.libs += 1;
        g.lib_sum += lib as u32;
        g.lib_sq += (lib * lib) as u32;
    }

    #[inline]
    fn remove_lib(&mut self, h: usize, lib: usize) {
        let g = &mut self.cells[h];
        g.libs -= 1;
        g.lib_sum -= lib as u32;
        g.lib_sq -= (lib * lib) as u32;
    }

    #[inline]
    fn set_stone(&mut self, p: usize, color: u8) {
        self.cells[p].color = color;
        self.hash ^= key(color, p);
        self.bits[(color - 1) as usize][p / 64] |= 1 << (p % 64);
        self.count[(color - 1) as usize] += 1;
    }

    #[inline]
    fn clear_stone(&mut self, p: usize) {
        let color = self.cells[p].color;
        self.cells[p].color = EMPTY;
        self.hash ^= key(color, p);
        self.bits[(color - 1) as usize][p / 64] &= !(1 << (p % 64));
        self.count[(color - 1) as usize] -= 1;
    }

    /// What placing `color` at the empty point `p` would give, without placing it: `None` if it
    /// is suicide and `allow_suicide` is off, else the hash of the resulting stones and the
    /// change in the number of stones. Ko and superko are the caller's business.
    #[inline]
    pub fn try_place(&self, p: usize, color: u8, allow_suicide: bool) -> Option<(u64, i32)> {
        debug_assert_eq!(self.cells[p].color, EMPTY);
        let opp = 3 - color;
        let mut breathes = false;
        let mut captures = [usize::MAX; 4];
        let mut n_captures = 0;
        for q in self.neighbours(p) {
            let c = self.cells[q].color;
            if c == EMPTY {
                breathes = true;
            } else if c == color {
                // An own group in atari has `p` as its last liberty and dies with the stone,
                // unless something is captured.
                if !self.in_atari(self.head(q)) {
                    breathes = true;
                }
            } else if c == opp {
                let h = self.head(q);
                if self.in_atari(h) && !captures[..n_captures].contains(&h) {
                    captures[n_captures] = h;
                    n_captures += 1;
                }
            }
        }
        if n_captures > 0 {
            let mut hash = self.hash ^ key(color, p);
            let mut delta = 1;
            for &h in &captures[..n_captures] {
                for s in self.group_stones(h) {
                    hash ^= key(opp, s);
                    delta -= 1;
                }
            }
            return Some((hash, delta));
        }
        if breathes {
            return Some((self.hash ^ key(color, p), 1));
        }
        if !allow_suicide {
            return None;
        }
        // Suicide: the stone and every own group it joins leave the board.
        let mut hash = self.hash;
        let mut delta = 0;
        let mut seen = [usize::MAX; 4];
        for (i, q) in self.neighbours(p).into_iter().enumerate() {
            if self.cells[q].color == color {
                let h = self.head(q);
                if !seen.contains(&h) {
                    seen[i] = h;
                    for s in self.group_stones(h) {
                        hash ^= key(color, s);
                        delta -= 1;
                    }
                }
            }
        }
        Some((hash, delta))
    }

    /// The stones of the group whose head is `h`.
    fn group_stones(&self, h: usize) -> GroupIter<'_> {
        GroupIter {
            board: self,
            head: h,
            next: Some(h),
        }
    }

    /// Places `color` at the empty point `p`: captures opposing groups left without liberties,
    /// then removes the own group if it has none (a suicide the caller has allowed).
    pub fn place(&mut self, p: usize, color: u8) -> Placed {
        debug_assert_eq!(self.cells[p].color, EMPTY);
        let opp = 3 - color;
        self.set_stone(p, color);
        {
            let cell = &mut self.cells[p];
            cell.head = p as u16;
            cell.next = p as u16;
            cell.size = 1;
            cell.libs = 0;
            cell.lib_sum = 0;
            cell.lib_sq = 0;
        }
        let nbrs = self.neighbours(p);
        for q in nbrs {
            match self.cells[q].color {
                EMPTY => self.add_lib(p, q),
                EDGE => {}
                _ => {
                    let h = self.head(q);
                    self.remove_lib(h, p);
                }
            }
        }
        for q in nbrs {
            if self.cells[q].color == color {
                let (a, b) = (self.head(p), self.head(q));
                if a != b {
                    self.merge(a, b);
                }
            }
        }
        let mut placed = Placed::default();
        for q in nbrs {
            if self.cells[q].color == opp {
                let h = self.head(q);
                if self.cells[h].libs == 0 {
                    placed.captured += self.remove_group(h);
                    placed.capture_point = q;
                }
            }
        }
        let h = self.head(p);
        if self.cells[h].libs == 0 {
            placed.suicided = self.remove_group(h);
        }
        placed
    }

    /// Whether the stone at `p` is alone in its group with exactly one liberty (the shape that
    /// makes a single-stone capture a ko).
    pub fn is_lone_stone_in_atari(&self, p: usize) -> bool {
        let h = self.head(p);
        self.cells[h].size == 1 && self.in_atari(h)
    }

    /// Joins the groups with heads `a` and `b`, the smaller relabelled.
    fn merge(&mut self, a: usize, b: usize) {
        let (big, small) = if self.cells[a].size >= self.cells[b].size {
            (a, b)
        } else {
            (b, a)
        };
        let mut s = small;
        loop {
            self.cells[s].head = big as u16;
            s = self.cells[s].next as usize;
            if s == small {
                break;
            }
        }
        // Splice the two circular lists.
        let big_next = self.cells[big].next;
        self.cells[big].next = self.cells[small].next;
        self.cells[small].next = big_next;
        let (size, libs, sum, sq) = {
            let g = &self.cells[small];
            (g.size, g.libs, g.lib_sum, g.lib_sq)
        };
        let g = &mut self.cells[big];
        g.size += size;
        g.libs += libs;
        g.lib_sum += sum;
        g.lib_sq += sq;
    }

    /// Removes the group with head `h`; its neighbours gain the freed points as liberties.
    /// Returns the number of stones removed.
    fn remove_group(&mut self, h: usize) -> u32 {
        let mut removed = 0;
        let mut s = h;
        loop {
            let next = self.cells[s].next as usize;
            self.clear_stone(s);
            removed += 1;
            for q in self.neighbours(s) {
                let c = self.cells[q].color;
                // Stones of the dying group still on the board credit its own (dead) head,
                // which is harmless.
                if c == BLACK || c == WHITE {
                    let hq = self.head(q);
                    self.add_lib(hq, s);
                }
            }
            s = next;
            if s == h {
                break;
            }
        }
        removed
    }

    /// Stones without captures or checks: for setting up a position. The caller ensures the
    /// result has no group without liberties.
    pub fn setup_stone(&mut self, p: usize, color: u8) {
        let placed = self.place(p, color);
        debug_assert_eq!(placed, Placed::default(), "setup stone captured");
    }

    /// Owner of every point (`row · n + col`) by the area rule: +1 Black, −1 White, 0 dame.
    pub fn ownership(&self) -> Vec<i8> {
        let n = self.n;
        let mut owner = vec![0i8; n * n];
        let mut seen = vec![false; self.cells.len()];
        let mut stack = Vec::new();
        let mut region = Vec::new();
        for p in self.points() {
            let (r, c) = self.coords(p);
            match self.cells[p].color {
                BLACK => owner[r * n + c] = 1,
                WHITE => owner[r * n + c] = -1,
                _ if !seen[p] => {
                    let mut touches = 0u8;
                    seen[p] = true;
                    stack.push(p);
                    region.clear();
                    while let Some(s) = stack.pop() {
                        region.push(s);
                        for q in self.neighbours(s) {
                            match self.cells[q].color {
                                EMPTY if !seen[q] => {
                                    seen[q] = true;
                                    stack.push(q);
                                }
                                BLACK => touches |= 1,
                                WHITE => touches |= 2,
                                _ => {}
                            }
                        }
                    }
                    let o = match touches {
                        1 => 1,
                        2 => -1,
                        _ => 0,
                    };
                    for &s in &region {
                        let (r, c) = self.coords(s);
                        owner[r * n + c] = o;
                    }
                }
                _ => {}
            }
        }
        owner
    }

    /// Area score (stones plus empty regions bordered by one colour only): `(black, white)`.
    pub fn area(&self) -> (u32, u32) {
        self.ownership().iter().fold((0, 0), |(b, w), &o| match o {
            1 => (b + 1, w),
            -1 => (b, w + 1),
            _ => (b, w),
        })
    }

    /// Whether `p` is an empty point whose every neighbour is `color` or the edge, and that
    /// placing there would not leave any of those groups in atari: a true eye for playouts.
    pub fn is_own_eye(&self, p: usize, color: u8) -> bool {
        for q in self.neighbours(p) {
            let c = self.cells[q].color;
            if c == EDGE {
                continue;
            }
            if c != color || self.in_atari(self.head(q)) {
                return false;
            }
        }
        true
    }

    /// Checks every incremental field against a recomputation; for tests.
    #[cfg(test)]
    pub fn validate(&self) {
        use std::collections::{HashMap, HashSet};
        let mut hash = 0;
        let mut groups: HashMap<usize, Vec<usize>> = HashMap::new();
        for p in self.points() {
            let c = self.cells[p].color;
            if c == BLACK || c == WHITE {
                hash ^= key(c, p);
                groups.entry(self.head(p)).or_default().push(p);
                assert!(self.bits[(c - 1) as usize][p / 64] & (1 << (p % 64)) != 0);
            }
        }
        assert_eq!(hash, self.hash, "hash");
        for (&h, stones) in &groups {
            let c = self.cells[h].color;
            assert_eq!(self.head(h), h, "head of head");
            let listed: HashSet<usize> = self.group_stones(h).collect();
            let expected: HashSet<usize> = stones.iter().copied().collect();
            assert_eq!(listed, expected, "group list");
            assert_eq!(self.cells[h].size as usize, stones.len(), "size");
            let (mut libs, mut sum, mut sq, mut distinct) = (0, 0, 0, HashSet::new());
            for &s in stones {
                for q in self.neighbours(s) {
                    let qc = self.cells[q].color;
                    if qc == EMPTY {
                        libs += 1;
                        sum += q as u32;
                        sq += (q * q) as u32;
                        distinct.insert(q);
                    } else if qc == c {
                        assert_eq!(self.head(q), h, "adjacent stones in one group");
                    }
                }
            }
            assert!(libs > 0, "group without liberties on the board");
            let g = &self.cells[h];
            assert_eq!(
                (g.libs, g.lib_sum, g.lib_sq),
                (libs, sum, sq),
                "pseudo-liberties"
            );
            assert_eq!(self.in_atari(h), distinct.len() == 1, "atari test");
        }
    }
}

struct GroupIter<'a> {
    board: &'a Board,
    head: usize,
    next: Option<usize>,
}

impl Iterator for GroupIter<'_> {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        let s = self.next?;
        let n = self.board.cells[s].next as usize;
        self.next = (n != self.head).then_some(n);
        Some(s)
    }
}

//! The symmetries of a rectangular board: the dihedral group of the square (8 elements) on a
//! square board, identity and the left-right mirror on any board.
//!
//! One element is three bits applied in this order: transpose (square boards only), then mirror
//! the files (left-right), then mirror the ranks (top-bottom). Trainer-bridge applies the same
//! convention to input planes, so shards never need to store transformed copies.

/// An element of the dihedral group acting on board coordinates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Symmetry(u8);

impl Symmetry {
    pub const IDENTITY: Symmetry = Symmetry(0);
    /// Files mirrored: a ↔ last file.
    pub const MIRROR_FILES: Symmetry = Symmetry(1);
    pub const MIRROR_RANKS: Symmetry = Symmetry(2);
    pub const TRANSPOSE: Symmetry = Symmetry(4);

    /// All eight elements, identity first.
    pub const ALL: [Symmetry; 8] = [
        Symmetry(0),
        Symmetry(1),
        Symmetry(2),
        Symmetry(3),
        Symmetry(4),
        Symmetry(5),
        Symmetry(6),
        Symmetry(7),
    ];

    /// Identity and the left-right mirror: the symmetries of a non-square board whose sides
    /// face each other across the ranks (Xiangqi).
    pub const MIRROR_ONLY: [Symmetry; 2] = [Symmetry(0), Symmetry(1)];

    pub fn from_bits(bits: u8) -> Option<Symmetry> {
        (bits < 8).then_some(Symmetry(bits))
    }

    pub fn bits(self) -> u8 {
        self.0
    }

    pub fn transposes(self) -> bool {
        self.0 & 4 != 0
    }

    /// Maps `(rank, file)` on a `height × width` board (rank 0 at the bottom). A transposing
    /// element needs a square board.
    #[inline]
    pub fn map(self, rank: usize, file: usize, height: usize, width: usize) -> (usize, usize) {
        let (mut r, mut f) = (rank, file);
        if self.transposes() {
            debug_assert_eq!(height, width, "transpose needs a square board");
            std::mem::swap(&mut r, &mut f);
        }
        if self.0 & 1 != 0 {
            f = width - 1 - f;
        }
        if self.0 & 2 != 0 {
            r = height - 1 - r;
        }
        (r, f)
    }

    /// The element that undoes this one.
    pub fn inverse(self) -> Symmetry {
        if self.transposes() {
            // T then Mf then Mr, undone by Mr⁻¹, Mf⁻¹, T: swapping the two mirrors across T.
            let f = self.0 & 1;
            let r = (self.0 >> 1) & 1;
            Symmetry(4 | (f << 1) | r)
        } else {
            self
        }
    }

    /// For each point index `rank * width + file`, the index it maps to.
    pub fn point_table(self, height: usize, width: usize) -> Vec<usize> {
        (0..height * width)
            .map(|p| {
                let (r, f) = self.map(p / width, p % width, height, width);
                r * width + f
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inverse_undoes_every_element() {
        for s in Symmetry::ALL {
            for p in 0..36 {
                let (r, f) = s.map(p / 6, p % 6, 6, 6);
                let (r2, f2) = s.inverse().map(r, f, 6, 6);
                assert_eq!((r2, f2), (p / 6, p % 6), "{s:?}");
            }
        }
    }

    #[test]
    fn elements_are_distinct_permutations() {
        let tables: Vec<_> = Symmetry::ALL.iter().map(|s| s.point_table(5, 5)).collect();
        for (i, t) in tables.iter().enumerate() {
            let mut sorted = t.clone();
            sorted.sort();
            assert_eq!(sorted, (0..25).collect::<Vec<_>>());
            for u in &tables[..i] {
                assert_ne!(t, u);
            }
        }
    }
}

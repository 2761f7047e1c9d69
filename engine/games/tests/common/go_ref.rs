//! A naive Go referee written for clarity, not speed: whole-board copies, flood fills for
//! groups and liberties, and the list of earlier boards for superko. The fast board in
//! `games::go` must agree with it move for move.

use std::collections::HashSet;

#[derive(Clone)]
pub struct Naive {
    pub n: usize,
    /// `row · n + col`: 0 empty, 1 black, 2 white.
    pub grid: Vec<u8>,
    pub to_act: u8,
    history: Vec<Vec<u8>>,
    ko: Option<usize>,
    superko: bool,
    suicide: bool,
}

impl Naive {
    pub fn new(n: usize, superko: bool, suicide: bool) -> Naive {
        Naive {
            n,
            grid: vec![0; n * n],
            to_act: 1,
            history: vec![vec![0; n * n]],
            ko: None,
            superko,
            suicide,
        }
    }

    fn nbrs(&self, p: usize) -> Vec<usize> {
        let (r, c, n) = (p / self.n, p % self.n, self.n);
        let mut v = Vec::new();
        if r > 0 {
            v.push(p - n);
        }
        if r + 1 < n {
            v.push(p + n);
        }
        if c > 0 {
            v.push(p - 1);
        }
        if c + 1 < n {
            v.push(p + 1);
        }
        v
    }

    /// The group at `p` on `g` and its number of liberties.
    fn group(&self, g: &[u8], p: usize) -> (Vec<usize>, usize) {
        let mut stones = vec![p];
        let mut libs = HashSet::new();
        let mut i = 0;
        while i < stones.len() {
            for q in self.nbrs(stones[i]) {
                if g[q] == 0 {
                    libs.insert(q);
                } else if g[q] == g[p] && !stones.contains(&q) {
                    stones.push(q);
                }
            }
            i += 1;
        }
        (stones, libs.len())
    }

    /// The board after the mover plays `p` and the new simple-ko point, or `None` if illegal.
    fn try_play(&self, p: usize) -> Option<(Vec<u8>, Option<usize>)> {
        if self.grid[p] != 0 {
            return None;
        }
        let (me, opp) = (self.to_act, 3 - self.to_act);
        let mut g = self.grid.clone();
        g[p] = me;
        let mut captured = Vec::new();
        for q in self.nbrs(p) {
            if g[q] == opp {
                let (stones, libs) = self.group(&g, q);
                if libs == 0 {
                    for s in stones {
                        g[s] = 0;
                        captured.push(s);
                    }
                }
            }
        }
        let (own, libs) = self.group(&g, p);
        if libs == 0 {
            if !self.suicide {
                return None;
            }
            for s in &own {
                g[*s] = 0;
            }
        }
        if self.superko {
            if self.history.contains(&g) {
                return None;
            }
        } else if self.ko == Some(p) {
            return None;
        }
        let ko = (captured.len() == 1 && own.len() == 1 && libs == 1).then(|| captured[0]);
        Some((g, ko))
    }

    /// The points where the mover may play, in index order.
    pub fn legal(&self) -> Vec<usize> {
        (0..self.n * self.n)
            .filter(|&p| self.try_play(p).is_some())
            .collect()
    }

    /// Plays a stone at `Some(p)` (which must be legal) or a pass.
    pub fn play(&mut self, p: Option<usize>) {
        match p {
            None => self.ko = None,
            Some(p) => {
                let (g, ko) = self.try_play(p).expect("legal");
                self.grid = g;
                self.ko = ko;
                self.history.push(self.grid.clone());
            }
        }
        self.to_act = 3 - self.to_act;
    }

    /// Leaves at exactly `depth` plies, as `games::perft` counts them: a game ended by two
    /// passes has no actions.
    pub fn perft(&self, depth: u32, passes: u32) -> u64 {
        if depth == 0 {
            return 1;
        }
        if passes >= 2 {
            return 0;
        }
        let mut total = 0;
        for p in self.legal() {
            let mut t = self.clone();
            t.play(Some(p));
            total += t.perft(depth - 1, 0);
        }
        let mut t = self.clone();
        t.play(None);
        total + t.perft(depth - 1, passes + 1)
    }
}

//! A second Liuzhou implementation, written straight from the rules (`docs/rules/liuzhou.md`)
//! for tests only: one cell per point, moves as text, no bitboards and nothing shared with
//! `games::liuzhou`. Slow on purpose; it exists so that the fast rules can be checked against
//! something written differently.

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Cell {
    Empty,
    Stone { owner: u8, marked: bool },
}

#[derive(Clone, Debug)]
pub struct RefState {
    pub cells: [Cell; 36],
    /// 0 Black, 1 White.
    pub to_move: u8,
    pub phase: String,
    pub pending: u32,
    pub move_count: u32,
    pub since_capture: u32,
    pub lose_below: u32,
    /// Set once an end-of-game check fires: no further actions.
    pub over: bool,
}

fn name(p: usize) -> String {
    format!("{}{}", (b'a' + (p % 6) as u8) as char, p / 6 + 1)
}

impl RefState {
    pub fn from_lfen(lfen: &str, lose_below: u32) -> RefState {
        let f: Vec<&str> = lfen.split(' ').collect();
        let mut cells = [Cell::Empty; 36];
        for (i, row) in f[0].split('/').enumerate() {
            let rank = 5 - i;
            let mut file = 0;
            for c in row.chars() {
                if let Some(d) = c.to_digit(10) {
                    file += d as usize;
                } else {
                    let owner = if c.eq_ignore_ascii_case(&'b') { 0 } else { 1 };
                    cells[rank * 6 + file] = Cell::Stone {
                        owner,
                        marked: c.is_lowercase(),
                    };
                    file += 1;
                }
            }
        }
        let mut s = RefState {
            cells,
            to_move: if f[1] == "b" { 0 } else { 1 },
            phase: f[2].to_string(),
            pending: f[3].parse().unwrap(),
            move_count: f[4].parse().unwrap(),
            since_capture: f[5].parse().unwrap(),
            lose_below,
            over: false,
        };
        s.check_end();
        s
    }

    pub fn lfen(&self) -> String {
        let mut rows = Vec::new();
        for rank in (0..6).rev() {
            let mut row = String::new();
            let mut gap = 0;
            for file in 0..6 {
                match self.cells[rank * 6 + file] {
                    Cell::Empty => gap += 1,
                    Cell::Stone { owner, marked } => {
                        if gap > 0 {
                            row += &gap.to_string();
                            gap = 0;
                        }
                        let c = match (owner, marked) {
                            (0, false) => 'B',
                            (0, true) => 'b',
                            (_, false) => 'W',
                            (_, true) => 'w',
                        };
                        row.push(c);
                    }
                }
            }
            if gap > 0 {
                row += &gap.to_string();
            }
            rows.push(row);
        }
        format!(
            "{} {} {} {} {} {}",
            rows.join("/"),
            if self.to_move == 0 { "b" } else { "w" },
            self.phase,
            self.pending,
            self.move_count,
            self.since_capture
        )
    }

    fn owner(&self, p: usize) -> Option<u8> {
        match self.cells[p] {
            Cell::Stone { owner, .. } => Some(owner),
            Cell::Empty => None,
        }
    }

    fn plain(&self, p: usize, owner: u8) -> bool {
        self.cells[p]
            == Cell::Stone {
                owner,
                marked: false,
            }
    }

    fn row_full(&self, rank: usize, owner: u8) -> bool {
        (0..6).all(|f| self.plain(rank * 6 + f, owner))
    }

    fn col_full(&self, file: usize, owner: u8) -> bool {
        (0..6).all(|r| self.plain(r * 6 + file, owner))
    }

    /// Whether any complete 2×2 square of `owner` contains point p.
    fn square_at(&self, p: usize, owner: u8) -> bool {
        let (file, rank) = (p % 6, p / 6);
        for f0 in file.saturating_sub(1)..=file.min(4) {
            for r0 in rank.saturating_sub(1)..=rank.min(4) {
                let pts = [
                    r0 * 6 + f0,
                    r0 * 6 + f0 + 1,
                    (r0 + 1) * 6 + f0,
                    (r0 + 1) * 6 + f0 + 1,
                ];
                if pts.iter().all(|&q| self.plain(q, owner)) {
                    return true;
                }
            }
        }
        false
    }

    fn in_shape(&self, p: usize) -> bool {
        match self.cells[p] {
            Cell::Stone {
                owner,
                marked: false,
            } => {
                self.row_full(p / 6, owner)
                    || self.col_full(p % 6, owner)
                    || self.square_at(p, owner)
            }
            _ => false,
        }
    }

    fn reward(&self, p: usize, owner: u8) -> u32 {
        if self.row_full(p / 6, owner) || self.col_full(p % 6, owner) {
            2
        } else if self.square_at(p, owner) {
            1
        } else {
            0
        }
    }

    fn targets(&self, victim: u8, marking: bool) -> Vec<usize> {
        let cands: Vec<usize> = (0..36)
            .filter(|&p| match self.cells[p] {
                Cell::Stone { owner, marked } => owner == victim && !(marking && marked),
                Cell::Empty => false,
            })
            .collect();
        let free: Vec<usize> = cands
            .iter()
            .copied()
            .filter(|&p| !self.in_shape(p))
            .collect();
        if free.is_empty() {
            cands
        } else {
            free
        }
    }

    fn steps(&self) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        for p in 0..36 {
            if self.owner(p) != Some(self.to_move) {
                continue;
            }
            let (f, r) = ((p % 6) as i32, (p / 6) as i32);
            for (df, dr) in [(0, 1), (0, -1), (-1, 0), (1, 0)] {
                let (nf, nr) = (f + df, r + dr);
                if (0..6).contains(&nf) && (0..6).contains(&nr) {
                    let q = (nr * 6 + nf) as usize;
                    if self.cells[q] == Cell::Empty {
                        out.push((p, q));
                    }
                }
            }
        }
        out
    }

    pub fn legal(&self) -> Vec<String> {
        if self.over {
            return Vec::new();
        }
        let opp = 1 - self.to_move;
        let sel = |v: Vec<usize>| v.into_iter().map(|p| format!("x{}", name(p))).collect();
        match self.phase.as_str() {
            "place" => (0..36)
                .filter(|&p| self.cells[p] == Cell::Empty)
                .map(name)
                .collect(),
            "mark" => sel(self.targets(opp, true)),
            "forced" | "capture" | "counter" => sel(self.targets(opp, false)),
            "move" => {
                let steps = self.steps();
                if steps.is_empty() {
                    sel(self.targets(opp, false))
                } else {
                    steps
                        .into_iter()
                        .map(|(a, b)| format!("{}-{}", name(a), name(b)))
                        .collect()
                }
            }
            other => panic!("phase {other}"),
        }
    }

    fn stones_of(&self, owner: u8) -> u32 {
        (0..36).filter(|&p| self.owner(p) == Some(owner)).count() as u32
    }

    fn board_full(&self) -> bool {
        self.cells.iter().all(|c| *c != Cell::Empty)
    }

    /// After a placement and its marks: opponent places, or REMOVAL.
    fn next_after_placement(&mut self) {
        if !self.board_full() {
            self.phase = "place".into();
            self.to_move = 1 - self.to_move;
            return;
        }
        let any_marked = self
            .cells
            .iter()
            .any(|c| matches!(c, Cell::Stone { marked: true, .. }));
        if any_marked {
            for c in self.cells.iter_mut() {
                if matches!(c, Cell::Stone { marked: true, .. }) {
                    *c = Cell::Empty;
                }
            }
            self.phase = "move".into();
        } else {
            self.phase = "forced".into();
        }
        self.to_move = 1;
    }

    pub fn play(&mut self, mv: &str) {
        assert!(
            self.legal().iter().any(|m| m == mv),
            "reference: {mv} illegal in {}",
            self.lfen()
        );
        let me = self.to_move;
        let opp = 1 - me;
        let pt = |t: &str| {
            let b = t.as_bytes();
            ((b[1] - b'1') * 6 + (b[0] - b'a')) as usize
        };
        let phase_before = self.phase.clone();
        self.move_count += 1;
        let before = self.stones_of(0) + self.stones_of(1);
        if let Some(t) = mv.strip_prefix('x') {
            let p = pt(t);
            match self.phase.as_str() {
                "mark" => {
                    self.cells[p] = Cell::Stone {
                        owner: opp,
                        marked: true,
                    };
                    self.pending -= 1;
                    if self.pending == 0 || self.targets(opp, true).is_empty() {
                        self.pending = 0;
                        self.next_after_placement();
                    }
                }
                "capture" => {
                    self.cells[p] = Cell::Empty;
                    self.pending -= 1;
                    if self.pending == 0 || self.targets(opp, false).is_empty() {
                        self.pending = 0;
                        self.phase = "move".into();
                        self.to_move = opp;
                    }
                }
                "forced" => {
                    self.cells[p] = Cell::Empty;
                    if me == 1 {
                        self.to_move = 0;
                    } else {
                        self.phase = "move".into();
                        self.to_move = 1;
                    }
                }
                "move" => {
                    self.cells[p] = Cell::Empty;
                    self.phase = "counter".into();
                    self.to_move = opp;
                }
                "counter" => {
                    self.cells[p] = Cell::Empty;
                    self.phase = "move".into();
                    self.to_move = opp;
                }
                _ => unreachable!(),
            }
        } else if let Some((a, b)) = mv.split_once('-') {
            let (a, b) = (pt(a), pt(b));
            self.cells[b] = self.cells[a];
            self.cells[a] = Cell::Empty;
            let k = self.reward(b, me);
            if k > 0 && !self.targets(opp, false).is_empty() {
                self.phase = "capture".into();
                self.pending = k;
            } else {
                self.to_move = opp;
            }
        } else {
            let p = pt(mv);
            self.cells[p] = Cell::Stone {
                owner: me,
                marked: false,
            };
            let k = self.reward(p, me);
            if k > 0 && !self.targets(opp, true).is_empty() {
                self.phase = "mark".into();
                self.pending = k;
            } else {
                self.next_after_placement();
            }
        }
        let after = self.stones_of(0) + self.stones_of(1);
        let placement = !mv.starts_with('x') && !mv.contains('-');
        if placement || phase_before == "mark" || after < before {
            self.since_capture = 0;
        } else {
            self.since_capture += 1;
        }
        self.check_end();
    }

    fn check_end(&mut self) {
        let placement_over = !matches!(self.phase.as_str(), "place" | "mark");
        if placement_over {
            let b = self.stones_of(0) < self.lose_below;
            let w = self.stones_of(1) < self.lose_below;
            if b || w {
                self.over = true;
                return;
            }
        }
        if self.move_count >= 144 || self.since_capture >= 36 {
            self.over = true;
            return;
        }
        self.over = false;
        if self.legal().is_empty() {
            self.over = true;
        }
    }

    /// The winner as 'b', 'w' or 'd' (draw), if over.
    pub fn result(&self) -> Option<char> {
        if !self.over {
            return None;
        }
        let placement_over = !matches!(self.phase.as_str(), "place" | "mark");
        if placement_over {
            let b = self.stones_of(0) < self.lose_below;
            let w = self.stones_of(1) < self.lose_below;
            match (b, w) {
                (true, true) => return Some('d'),
                (true, false) => return Some('w'),
                (false, true) => return Some('b'),
                _ => {}
            }
        }
        if self.move_count >= 144 || self.since_capture >= 36 {
            return Some('d');
        }
        Some(if self.to_move == 0 { 'w' } else { 'b' })
    }

    pub fn perft(&self, depth: u32) -> u64 {
        if depth == 0 {
            return 1;
        }
        self.legal()
            .iter()
            .map(|m| {
                let mut n = self.clone();
                n.play(m);
                n.perft(depth - 1)
            })
            .sum()
    }
}

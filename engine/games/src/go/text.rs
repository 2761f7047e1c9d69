//! The position text (`to_text` / `parse_position`) and the board for people (`render`). The
//! format is described in the module docs of `go`.

use std::fmt::Write as _;
use std::sync::Arc;

use super::board::{BLACK, MAX_SIZE, MIN_SIZE, WHITE};
use super::{GoRules, GoState, Point, Root, COLUMNS};
use crate::{ParseError, Player};

/// The position as text.
pub(super) fn write(state: &GoState) -> String {
    let n = state.size();
    let mut s = String::new();
    for row in (0..n).rev() {
        let mut empty = 0;
        for col in 0..n {
            match state.board.color(state.board.point(row, col)) {
                BLACK | WHITE => {
                    if empty > 0 {
                        write!(s, "{empty}").unwrap();
                        empty = 0;
                    }
                    let black = state.board.color(state.board.point(row, col)) == BLACK;
                    s.push(if black { 'X' } else { 'O' });
                }
                _ => empty += 1,
            }
        }
        if empty > 0 {
            write!(s, "{empty}").unwrap();
        }
        if row > 0 {
            s.push('/');
        }
    }
    let side = if state.to_act == Player::First {
        'b'
    } else {
        'w'
    };
    let ko = if state.ko == 0 {
        "-".to_string()
    } else {
        let (r, c) = state.board.coords(state.ko);
        Point::new(r, c).to_gtp()
    };
    write!(s, " {side} {} {ko} {}", state.passes, state.moves).unwrap();
    s
}

/// Reads a position in `like`'s variant (rules kept for what the text does not say).
pub(super) fn read(like: &GoState, text: &str) -> Result<GoState, ParseError> {
    const F: &str = "Go position";
    let fields: Vec<&str> = text.split_whitespace().collect();
    if fields.len() < 2 || fields.len() > 5 {
        return Err(ParseError::new(
            F,
            "text",
            "expected `rows side [passes] [ko] [moves]`",
        ));
    }
    let rows: Vec<&str> = fields[0].split('/').collect();
    let n = rows.len();
    if !(MIN_SIZE..=MAX_SIZE).contains(&n) {
        return Err(ParseError::new(
            F,
            "rows",
            format!("{n} rows; the board side must be {MIN_SIZE} to {MAX_SIZE}"),
        ));
    }
    let mut grid = vec![None; n * n];
    for (i, row_text) in rows.iter().enumerate() {
        let row = n - 1 - i;
        let field = || format!("row {}", row + 1);
        let mut col = 0;
        let mut digits = String::new();
        let flush = |digits: &mut String, col: &mut usize| -> Result<(), ParseError> {
            if !digits.is_empty() {
                let k: usize = digits
                    .parse()
                    .map_err(|_| ParseError::new(F, field(), "bad run length"))?;
                if k == 0 {
                    return Err(ParseError::new(F, field(), "run length 0"));
                }
                *col += k;
                digits.clear();
            }
            Ok(())
        };
        for ch in row_text.chars() {
            if ch.is_ascii_digit() {
                if digits.len() >= 2 {
                    return Err(ParseError::new(F, field(), "run length too long"));
                }
                digits.push(ch);
                continue;
            }
            flush(&mut digits, &mut col)?;
            if ch == '.' {
                // Diagrams may spell empty points out.
                col += 1;
                continue;
            }
            let who = match ch {
                'X' | 'x' => Player::First,
                'O' | 'o' => Player::Second,
                _ => {
                    return Err(ParseError::new(
                        F,
                        field(),
                        format!("unexpected character {ch:?}"),
                    ))
                }
            };
            if col >= n {
                return Err(ParseError::new(F, field(), "row longer than the board"));
            }
            grid[row * n + col] = Some(who);
            col += 1;
        }
        flush(&mut digits, &mut col)?;
        if col != n {
            return Err(ParseError::new(
                F,
                field(),
                format!("row covers {col} points, expected {n}"),
            ));
        }
    }
    let to_act = match fields[1] {
        "b" | "B" => Player::First,
        "w" | "W" => Player::Second,
        other => {
            return Err(ParseError::new(
                F,
                "side",
                format!("expected b or w, found {other:?}"),
            ))
        }
    };
    let passes = match fields.get(2) {
        None => 0,
        Some(t) => t
            .parse::<u8>()
            .ok()
            .filter(|&p| p <= 2)
            .ok_or_else(|| ParseError::new(F, "passes", "expected 0, 1 or 2"))?,
    };
    let ko = match fields.get(3) {
        None | Some(&"-") => None,
        Some(t) => {
            Some(Point::parse_gtp(t, n).map_err(|e| ParseError::new(F, "ko", e.to_string()))?)
        }
    };
    let moves = match fields.get(4) {
        None => 0,
        Some(t) => t
            .parse::<u32>()
            .map_err(|_| ParseError::new(F, "moves", "expected a move count"))?,
    };
    let root = root_from_grid(n, &grid, to_act, passes, ko, moves, F)?;
    let rules = if n == like.size() {
        like.rules.clone()
    } else {
        Arc::new(GoRules {
            size: n,
            ..(*like.rules).clone()
        })
    };
    Ok(GoState::from_root(rules, Arc::new(root)))
}

/// The board as rows of `X`, `O` and `.`, with coordinates.
pub(super) fn render(state: &GoState) -> String {
    let n = state.size();
    let letters: String = COLUMNS[..n]
        .iter()
        .flat_map(|&c| [' ', c as char])
        .collect();
    let mut s = format!("   {letters}\n");
    for row in (0..n).rev() {
        write!(s, "{:>2} ", row + 1).unwrap();
        for col in 0..n {
            let p = state.board.point(row, col);
            let ch = match state.board.color(p) {
                BLACK => 'X',
                WHITE => 'O',
                _ if p == state.ko => '*',
                _ => '.',
            };
            write!(s, " {ch}").unwrap();
        }
        writeln!(s, " {}", row + 1).unwrap();
    }
    writeln!(s, "   {letters}").unwrap();
    let (b, w) = state.area();
    write!(
        s,
        "{} to move, move {}, komi {}, area B {b} W {w}",
        if state.to_act == Player::First {
            "Black"
        } else {
            "White"
        },
        state.moves,
        state.rules.komi
    )
    .unwrap();
    s
}

/// Whether `k` can be the simple-ko point: a single stone was just captured there, so it is
/// empty, walled in by one colour, and one of those walls is a lone stone whose last liberty
/// it is (the capturer). A pass clears the ko point. Which side is to move is not checked:
/// GTP and SGF may hand the turn to the capturer again.
pub(super) fn check_ko_point(
    n: usize,
    grid: &[Option<Player>],
    k: Point,
    passes: u8,
) -> Result<(), &'static str> {
    let at = |r: usize, c: usize| grid[r * n + c];
    let nbrs = |r: usize, c: usize| {
        [
            (r > 0).then(|| (r - 1, c)),
            (r + 1 < n).then(|| (r + 1, c)),
            (c > 0).then(|| (r, c - 1)),
            (c + 1 < n).then(|| (r, c + 1)),
        ]
        .into_iter()
        .flatten()
    };
    let (kr, kc) = (k.row as usize, k.col as usize);
    if at(kr, kc).is_some() {
        return Err("occupied");
    }
    if passes > 0 {
        return Err("a pass clears the ko point");
    }
    let mut walls = nbrs(kr, kc).map(|(r, c)| at(r, c));
    let colour = walls.next().flatten().ok_or("not surrounded by stones")?;
    if !walls.all(|w| w == Some(colour)) {
        return Err("not surrounded by stones of one colour");
    }
    let capturer = nbrs(kr, kc).any(|(r, c)| {
        nbrs(r, c).all(|(qr, qc)| (qr, qc) == (kr, kc) || at(qr, qc) == Some(colour.opponent()))
    });
    if !capturer {
        return Err("no lone stone beside it has it as its last liberty");
    }
    Ok(())
}

/// Builds a root from a grid of `n²` cells (`row · n + col`), refusing groups without liberties.
pub(super) fn root_from_grid(
    n: usize,
    grid: &[Option<Player>],
    to_act: Player,
    passes: u8,
    ko: Option<Point>,
    moves: u32,
    format: &'static str,
) -> Result<Root, ParseError> {
    // Every group needs a liberty: flood from each stone.
    let mut seen = vec![false; n * n];
    for start in 0..n * n {
        let Some(who) = grid[start] else { continue };
        if seen[start] {
            continue;
        }
        let mut stack = vec![start];
        seen[start] = true;
        let mut free = false;
        while let Some(s) = stack.pop() {
            let (r, c) = (s / n, s % n);
            let nbrs = [
                (r > 0).then(|| s - n),
                (r + 1 < n).then(|| s + n),
                (c > 0).then(|| s - 1),
                (c + 1 < n).then(|| s + 1),
            ];
            for q in nbrs.into_iter().flatten() {
                match grid[q] {
                    None => free = true,
                    Some(o) if o == who && !seen[q] => {
                        seen[q] = true;
                        stack.push(q);
                    }
                    _ => {}
                }
            }
        }
        if !free {
            let p = Point::new(start / n, start % n);
            return Err(ParseError::new(
                format,
                p.to_gtp(),
                "group without liberties",
            ));
        }
    }
    if let Some(k) = ko {
        check_ko_point(n, grid, k, passes).map_err(|reason| {
            ParseError::new(format, "ko", format!("ko point {}: {reason}", k.to_gtp()))
        })?;
    }
    let stones = (0..n * n)
        .filter_map(|i| grid[i].map(|who| ((i / n) as u8, (i % n) as u8, who)))
        .collect();
    Ok(Root {
        stones,
        to_act,
        passes,
        ko,
        moves,
        handicap: false,
    })
}

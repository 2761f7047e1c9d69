//! Handicap stones: Black's stones set on the empty board before White's first move.
//!
//! The fixed layout is GTP's `fixed_handicap` (the points GNU Go gives): the corner star points
//! on the third line up to 11 × 11 and on the fourth from 12 × 12, then the side points and the
//! centre. Odd boards from 9 × 9 take up to 9 stones, other boards from 7 × 7 up to 4, smaller
//! boards none. A free placement is any set of at least two distinct points that leaves one
//! point empty.

use super::{Point, RulesError};

/// Why handicap stones cannot be placed.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum HandicapError {
    #[error(transparent)]
    Rules(#[from] RulesError),
    #[error("a handicap is at least 2 stones, not {0}")]
    TooFew(usize),
    #[error("{stones} stones leave no empty point on a {size}×{size} board")]
    TooMany { size: usize, stones: usize },
    #[error(
        "a {size}×{size} board has no fixed placement of {stones} stones{}",
        if *max >= 2 { format!(" (at most {max})") } else { String::new() }
    )]
    NoFixedPlacement {
        size: usize,
        stones: usize,
        max: usize,
    },
    #[error("{0} is given twice")]
    Repeated(String),
    #[error("{0} is outside the board")]
    Outside(String),
}

/// The most stones the fixed layout has on a `size` board (0 below 7 × 7).
pub fn max_fixed_handicap(size: usize) -> usize {
    if size % 2 == 1 && size >= 9 {
        9
    } else if size >= 7 {
        4
    } else {
        0
    }
}

/// The fixed placement of `stones` handicap stones on a `size` board (GTP `fixed_handicap`).
pub fn fixed_handicap(size: usize, stones: usize) -> Result<Vec<Point>, HandicapError> {
    let max = max_fixed_handicap(size);
    if stones < 2 {
        return Err(HandicapError::TooFew(stones));
    }
    if stones > max {
        return Err(HandicapError::NoFixedPlacement { size, stones, max });
    }
    // Distance of the star points from the edge: the third line, the fourth from 12 × 12.
    let low = if size >= 12 { 3 } else { 2 };
    let (high, mid) = (size - 1 - low, size / 2);
    let p = Point::new;
    // Two opposite corners, a third, the fourth; then the sides on the middle row, the sides on
    // the middle column; the centre goes with every odd count from 5.
    let corners = [p(low, low), p(high, high), p(high, low), p(low, high)];
    let mut out: Vec<Point> = corners[..stones.min(4)].to_vec();
    if stones >= 6 {
        out.extend([p(mid, low), p(mid, high)]);
    }
    if stones >= 8 {
        out.extend([p(low, mid), p(high, mid)]);
    }
    if stones >= 5 && stones % 2 == 1 {
        out.push(p(mid, mid));
    }
    Ok(out)
}

/// The engine's own choice for GTP `place_free_handicap`: the fixed layout, with as many of
/// its stones as the board has when more are asked for (GTP lets an engine place fewer when
/// more would not help). Boards below 7 × 7 have no handicap points.
pub fn free_handicap(size: usize, stones: usize) -> Result<Vec<Point>, HandicapError> {
    if stones < 2 {
        return Err(HandicapError::TooFew(stones));
    }
    if stones >= size * size {
        return Err(HandicapError::TooMany { size, stones });
    }
    fixed_handicap(size, stones.min(max_fixed_handicap(size)).max(2)).map_err(|_| {
        HandicapError::NoFixedPlacement {
            size,
            stones,
            max: 0,
        }
    })
}

/// Checks a free placement on a `size` board: at least two stones, each on the board, none
/// twice, one point left empty.
pub fn check_placement(size: usize, stones: &[Point]) -> Result<(), HandicapError> {
    if stones.len() < 2 {
        return Err(HandicapError::TooFew(stones.len()));
    }
    if stones.len() >= size * size {
        return Err(HandicapError::TooMany {
            size,
            stones: stones.len(),
        });
    }
    for (i, p) in stones.iter().enumerate() {
        if p.row as usize >= size || p.col as usize >= size {
            return Err(HandicapError::Outside(format!("({}, {})", p.row, p.col)));
        }
        if stones[..i].contains(p) {
            return Err(HandicapError::Repeated(p.to_gtp()));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(points: &[Point]) -> Vec<String> {
        let mut v: Vec<String> = points.iter().map(|p| p.to_gtp()).collect();
        v.sort();
        v
    }

    #[test]
    fn the_fixed_layout_on_the_usual_boards() {
        assert_eq!(names(&fixed_handicap(19, 2).unwrap()), ["D4", "Q16"]);
        assert_eq!(
            names(&fixed_handicap(19, 9).unwrap()),
            ["D10", "D16", "D4", "K10", "K16", "K4", "Q10", "Q16", "Q4"]
        );
        assert_eq!(
            names(&fixed_handicap(13, 5).unwrap()),
            ["D10", "D4", "G7", "K10", "K4"]
        );
        assert_eq!(
            names(&fixed_handicap(9, 6).unwrap()),
            ["C3", "C5", "C7", "G3", "G5", "G7"]
        );
        // Twelve is the first board with the fourth line; seven takes four stones.
        assert_eq!(names(&fixed_handicap(12, 2).unwrap()), ["D4", "J9"]);
        assert_eq!(
            names(&fixed_handicap(7, 4).unwrap()),
            ["C3", "C5", "E3", "E5"]
        );
        for size in 2..=19 {
            for n in 2..=max_fixed_handicap(size) {
                let stones = fixed_handicap(size, n).unwrap();
                assert_eq!(stones.len(), n, "{size} {n}");
                check_placement(size, &stones).unwrap();
            }
        }
    }

    #[test]
    fn refusals_name_the_reason() {
        assert_eq!(fixed_handicap(19, 1), Err(HandicapError::TooFew(1)));
        let e = fixed_handicap(19, 10).unwrap_err();
        assert_eq!(
            e.to_string(),
            "a 19×19 board has no fixed placement of 10 stones (at most 9)"
        );
        assert!(fixed_handicap(8, 5).is_err());
        let e = fixed_handicap(5, 2).unwrap_err();
        assert_eq!(
            e.to_string(),
            "a 5×5 board has no fixed placement of 2 stones"
        );
        // The engine's own choice places fewer where more would not help.
        assert_eq!(free_handicap(9, 12).unwrap().len(), 9);
        assert_eq!(free_handicap(8, 6).unwrap().len(), 4);
        assert!(free_handicap(5, 2).is_err());
        assert!(free_handicap(9, 81).is_err());
        let p = Point::new;
        assert_eq!(
            check_placement(9, &[p(0, 0), p(0, 0)]),
            Err(HandicapError::Repeated("A1".into()))
        );
        assert!(check_placement(9, &[p(0, 0), p(9, 0)]).is_err());
        assert!(check_placement(9, &[p(0, 0)]).is_err());
        let all_but_one: Vec<Point> = (1..9).map(|i| p(i / 3, i % 3)).collect();
        check_placement(3, &all_but_one).unwrap();
    }
}

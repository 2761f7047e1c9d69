//! The network's view of Go: policy indices (a point row by row, then pass) and the input
//! planes (described in the module docs of `go`).

use super::{GoState, Move, Point, PAST, PLANES};
use crate::{Encoding, Player, TensorShape};

/// Writes `state`'s planes into `out` (`PLANES × N × N` floats).
pub(super) fn planes(state: &GoState, out: &mut [f32]) {
    let n = state.size();
    let area = n * n;
    assert_eq!(out.len(), PLANES * area, "encode buffer length");
    out.fill(0.0);
    let me = state.to_act.index();
    let them = 1 - me;
    for t in 0..=PAST {
        let stones = if t == 0 {
            Some(state.board.stones())
        } else {
            state.past_stones(t)
        };
        let Some(stones) = stones else { break };
        for (i, p) in state.board.points().enumerate() {
            let bit = 1u64 << (p % 64);
            if stones[me][p / 64] & bit != 0 {
                out[2 * t * area + i] = 1.0;
            } else if stones[them][p / 64] & bit != 0 {
                out[(2 * t + 1) * area + i] = 1.0;
            }
        }
    }
    if state.to_act == Player::First {
        out[2 * (PAST + 1) * area..].fill(1.0);
    }
}

impl Encoding for GoState {
    fn shape(&self) -> TensorShape {
        let n = self.size();
        TensorShape {
            planes: PLANES,
            height: n,
            width: n,
            policy_size: n * n + 1,
        }
    }

    #[inline]
    fn action_index(&self, action: Move) -> usize {
        let n = self.size();
        match action {
            Move::Place(p) => p.row as usize * n + p.col as usize,
            Move::Pass => n * n,
        }
    }

    fn index_action(&self, index: usize) -> Option<Move> {
        let n = self.size();
        match index.cmp(&(n * n)) {
            std::cmp::Ordering::Less => Some(Move::Place(Point::new(index / n, index % n))),
            std::cmp::Ordering::Equal => Some(Move::Pass),
            std::cmp::Ordering::Greater => None,
        }
    }

    fn encode(&self, out: &mut [f32]) {
        planes(self, out)
    }
}

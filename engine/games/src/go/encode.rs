//! The network's input planes (described in the module docs of `go`).

use super::{GoState, PAST, PLANES};
use crate::Player;

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

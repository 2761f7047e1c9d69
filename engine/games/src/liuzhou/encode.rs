//! The network's view of Liuzhou: the policy index of an action ([`Action::index`]) and the
//! input planes, from the acting player's point of view.

use super::bits::{completing_points, shape_members, BOARD};
use super::{Action, Liuzhou, Phase, MOVE_LIMIT, NO_CAPTURE_LIMIT, PLANES, POLICY_SIZE};
use crate::{Encoding, TensorShape};

impl Encoding for Liuzhou {
    fn shape(&self) -> TensorShape {
        TensorShape {
            planes: PLANES,
            height: 6,
            width: 6,
            policy_size: POLICY_SIZE,
        }
    }

    #[inline]
    fn action_index(&self, action: Action) -> usize {
        action.index()
    }

    fn index_action(&self, index: usize) -> Option<Action> {
        Action::from_index(index)
    }

    /// Planes, each 6 × 6, from the acting player's point of view:
    /// 0–1 own / opponent unmarked stones, 2–3 own / opponent marked stones, 4 empty points,
    /// 5–10 the phase (one-hot, constant planes), 11 pending ÷ 2, 12 move_count ÷ 144,
    /// 13 moves_since_capture ÷ 36, 14 the `lose_below = 4` variant;
    /// 15–16 the empty points where own / the opponent's next placement (before the board
    /// fills) or step completes a shape, 17–18 own / opponent stones in a shape (safe from
    /// selection). The last four the network could find for itself, but the movement's
    /// tactics turn on them (a stone stepping out of a shape and back captures every other
    /// move), and a small network learns them late.
    fn encode(&self, out: &mut [f32]) {
        let out = &mut out[..PLANES * 36];
        out.fill(0.0);
        let me = self.to_act.index();
        let own = self.stones[me] & !self.marked;
        let opp = self.stones[1 - me] & !self.marked;
        let empty = !(self.stones[0] | self.stones[1]) & BOARD;
        let placing = !self.phase.after_placement();
        let boards = [
            (0, own),
            (1, opp),
            (2, self.stones[me] & self.marked),
            (3, self.stones[1 - me] & self.marked),
            (4, empty),
            (15, completing_points(own, empty, placing)),
            (16, completing_points(opp, empty, placing)),
            (17, shape_members(own)),
            (18, shape_members(opp)),
        ];
        for (plane, board) in boards {
            let mut b = board;
            while b != 0 {
                out[plane * 36 + b.trailing_zeros() as usize] = 1.0;
                b &= b - 1;
            }
        }
        let phase = Phase::ALL
            .iter()
            .position(|&p| p == self.phase)
            .unwrap_or(0);
        let constants = [
            (5 + phase, 1.0),
            (11, self.pending as f32 / 2.0),
            (12, self.move_count as f32 / MOVE_LIMIT as f32),
            (
                13,
                self.moves_since_capture as f32 / NO_CAPTURE_LIMIT as f32,
            ),
            (14, if self.rules.lose_below == 4 { 1.0 } else { 0.0 }),
        ];
        for (plane, value) in constants {
            out[plane * 36..(plane + 1) * 36].fill(value);
        }
    }
}

//! The network's view of a game, apart from its rules: the shape of the tensors, the input
//! planes of a state and the policy index of each action.
//!
//! [`Encoding`] is a trait of its own so that [`Game`] holds the rules only, as lc0 keeps its
//! encoder apart from the position and shakmaty's `Position` knows no network. It stays in this
//! crate, beside the rules, because each game's encoding reads the game's private state (bit
//! boards, repetition counts) and because nearly every crate above (inference, search,
//! self-play, shards) needs it: a crate of its own would only have to re-export the games. Each
//! game implements it in its own `encode` module.

use crate::go::{GoRules, GoState};
use crate::liuzhou::Liuzhou;
use crate::xiangqi::Xiangqi;
use crate::{Game, Symmetry};

/// How a game is shown to the network: the tensors' shape, the input planes and the policy
/// index of each action.
///
/// Contracts every implementation keeps (checked by [`crate::conformance`]):
/// - `action_index` maps the legal actions of a state injectively into `0..shape().policy_size`,
///   and `index_action` inverts it for that state;
/// - `encode` writes `shape().input_len()` floats from the point of view of `to_act`, in the same
///   frame as `action_index`, and a symmetry of the state moves its planes point by point.
pub trait Encoding: Game {
    /// The network interface for this state's variant (Go's depends on the board size).
    fn shape(&self) -> TensorShape;

    /// The action's index in the policy vector (`0..shape().policy_size`).
    fn action_index(&self, action: Self::Action) -> usize;

    /// The action at policy `index` in this state, if the index names one.
    fn index_action(&self, index: usize) -> Option<Self::Action>;

    /// Writes the network input for this state into `out` (`shape().input_len()` floats,
    /// planes × height × width), from the point of view of `to_act`.
    fn encode(&self, out: &mut [f32]);
}

/// The shape of the network input and output a game needs. Trainer-bridge reads the same
/// numbers from shard and model metadata, so it never needs the rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TensorShape {
    pub planes: usize,
    pub height: usize,
    pub width: usize,
    pub policy_size: usize,
}

impl TensorShape {
    /// Number of `f32`s in one encoded state.
    pub fn input_len(&self) -> usize {
        self.planes * self.height * self.width
    }
}

/// The network interface of the game called `name` (Go's depends on `board_size`), for tools
/// such as trainer-bridge that know games only by name.
pub fn shape_of(name: &str, board_size: Option<usize>) -> Option<TensorShape> {
    match name {
        Liuzhou::NAME => Some(Liuzhou::default().shape()),
        Xiangqi::NAME => Some(Xiangqi::default().shape()),
        GoState::NAME => {
            let rules = GoRules::with_size(board_size.unwrap_or(GoRules::default().size));
            GoState::new(rules).ok().map(|s| s.shape())
        }
        _ => None,
    }
}

/// A policy index that a symmetry sends to no action.
pub const NO_INDEX: u16 = u16::MAX;

/// For each symmetry of `state` (the identity first), where it sends each policy index: entry
/// `i` is the index, in the transformed state, of the transformed action of index `i`
/// ([`NO_INDEX`] where `i` names no action). The maps depend only on the variant's shape, so
/// one state's maps serve every state of its variant.
pub fn symmetry_maps<G: Encoding>(state: &G) -> Vec<(Symmetry, Vec<u16>)> {
    let size = state.shape().policy_size;
    state
        .symmetries()
        .iter()
        .map(|&sym| {
            let map = (0..size)
                .map(|i| match state.index_action(i) {
                    Some(a) => state.action_index(state.transform_action(sym, a)) as u16,
                    None => NO_INDEX,
                })
                .collect();
            (sym, map)
        })
        .collect()
}

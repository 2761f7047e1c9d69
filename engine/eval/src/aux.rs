//! The outputs some networks have beside policy and value (ONNX outputs `ownership`, `score`,
//! `wdl`): read for analysis only, never by the search's hot path.

/// Which auxiliary heads an evaluator answers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Heads {
    /// Each point's expected final owner.
    pub ownership: bool,
    /// The expected final margin.
    pub score: bool,
    /// Win, draw and loss logits.
    pub wdl: bool,
}

impl Heads {
    /// Whether there is any.
    pub fn any(self) -> bool {
        self.ownership || self.score || self.wdl
    }
}

/// The auxiliary outputs of one batch of states, all from the point of view of each state's
/// player to act; `None` where the evaluator has no such head.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AuxOutputs {
    /// `states × cells` values in −1..=1 (1: the player to act owns the point), cells in the
    /// order of the input planes (Go: `row · N + col`, row 0 the first line).
    pub ownership: Option<Vec<f32>>,
    /// One final margin per state, in points.
    pub score: Option<Vec<f32>>,
    /// `states × 3` logits: win, draw, loss.
    pub wdl: Option<Vec<f32>>,
}

impl AuxOutputs {
    /// State `i`'s ownership, `cells` values, if there is any.
    pub fn ownership_of(&self, i: usize, cells: usize) -> Option<&[f32]> {
        self.ownership
            .as_deref()
            .and_then(|o| o.get(i * cells..(i + 1) * cells))
    }

    /// State `i`'s score, if there is any.
    pub fn score_of(&self, i: usize) -> Option<f32> {
        self.score.as_deref().and_then(|s| s.get(i).copied())
    }

    /// State `i`'s win, draw and loss logits, if there are any.
    pub fn wdl_of(&self, i: usize) -> Option<[f32; 3]> {
        let w = self.wdl.as_deref()?.get(i * 3..i * 3 + 3)?;
        Some([w[0], w[1], w[2]])
    }
}

//! What a network with auxiliary heads (ownership, score, win/draw/loss) says about a searched
//! position: the root's own evaluation mixed with its visited children's, weighted by their
//! visits. Read for analysis only, in one evaluator call of its own at report time (the tree
//! keeps no ownership, and the cache of network results is not consulted or filled).

use crate::Playable;
use eval::{EvalError, Evaluator};

use crate::Search;

/// Most positions [`root_aux`] evaluates (the root and its most visited children): one small
/// call per report, cheap beside an analysis interval even on a CPU.
pub const MIXED_MAX: usize = 16;

/// The auxiliary outputs at a root, from the point of view of its player to act.
#[derive(Clone, Debug, PartialEq)]
pub struct RootAux<A> {
    /// Each cell's expected owner, −1..=1 (1: the player to act), cells in the input planes'
    /// order; `None` where the network has no ownership head.
    pub ownership: Option<Vec<f32>>,
    /// The expected final margin in points; `None` without a score head.
    pub score: Option<f32>,
    /// Probabilities of a win, a draw and a loss; `None` without a wdl head.
    pub wdl: Option<[f32; 3]>,
    /// The network's score of each child mixed in (the position after the action), from the
    /// root's player's view; empty without a score head.
    pub child_scores: Vec<(A, f32)>,
    /// Positions evaluated: the root and the children mixed in.
    pub positions: usize,
}

/// The network's auxiliary outputs for `root`, mixed with those of its children: the root's
/// evaluation weighs 1, each child's its visits (`children`: action and visits; the most
/// visited, up to one batch and [`MIXED_MAX`] positions in all, are evaluated; unvisited and
/// finished ones are left out). A child's outputs are turned to the root's player's view.
/// `None`, with no call made, where the evaluator has no auxiliary head.
pub fn root_aux<G: Playable>(
    evaluator: &dyn Evaluator<G>,
    root: &G,
    children: &[(G::Action, u32)],
) -> Result<Option<RootAux<G::Action>>, EvalError> {
    if !evaluator.heads().any() {
        return Ok(None);
    }
    let mut visited: Vec<(G::Action, u32)> =
        children.iter().copied().filter(|&(_, n)| n > 0).collect();
    visited.sort_by_key(|&(_, n)| std::cmp::Reverse(n));
    let mut states = vec![root.clone()];
    let mut actions = Vec::new();
    // Weight and sign (+1 where the child's player to act is the root's) of each state.
    let mut weights = vec![(1.0f32, 1.0f32)];
    for (action, visits) in visited {
        if states.len() >= evaluator.batch_size().clamp(1, MIXED_MAX) {
            break;
        }
        let mut child = root.clone();
        child.play_unchecked(action);
        if child.outcome().is_some() {
            continue;
        }
        let sign = if child.to_act() == root.to_act() {
            1.0
        } else {
            -1.0
        };
        weights.push((visits as f32, sign));
        actions.push(action);
        states.push(child);
    }
    let refs: Vec<&G> = states.iter().collect();
    let policy_size = root.shape().policy_size;
    let mut policy = vec![0.0; refs.len() * policy_size];
    let mut value = vec![0.0; refs.len()];
    let aux = evaluator.evaluate_aux(&refs, &mut policy, &mut value)?;
    let shape = root.shape();
    let cells = shape.height * shape.width;
    let total: f32 = weights.iter().map(|w| w.0).sum();
    let mut out = RootAux {
        ownership: None,
        score: None,
        wdl: None,
        child_scores: Vec::new(),
        positions: states.len(),
    };
    if aux.ownership.is_some() {
        let mut own = vec![0.0f32; cells];
        for (i, &(w, sign)) in weights.iter().enumerate() {
            if let Some(o) = aux.ownership_of(i, cells) {
                for (m, &x) in own.iter_mut().zip(o) {
                    *m += w * sign * x;
                }
            }
        }
        own.iter_mut().for_each(|m| *m /= total);
        out.ownership = Some(own);
    }
    if aux.score.is_some() {
        let s: f32 = (0..states.len())
            .map(|i| weights[i].0 * weights[i].1 * aux.score_of(i).unwrap_or(0.0))
            .sum();
        out.score = Some(s / total);
        out.child_scores = actions
            .iter()
            .enumerate()
            .map(|(k, &a)| (a, weights[k + 1].1 * aux.score_of(k + 1).unwrap_or(0.0)))
            .collect();
    }
    if aux.wdl.is_some() {
        let mut mean = [0.0f32; 3];
        for (i, &(w, sign)) in weights.iter().enumerate() {
            let Some(logits) = aux.wdl_of(i) else {
                continue;
            };
            let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            let e = logits.map(|l| (l - max).exp());
            let sum: f32 = e.iter().sum();
            // A child's win is the root player's loss where the turn passed.
            let p = if sign > 0.0 {
                [e[0] / sum, e[1] / sum, e[2] / sum]
            } else {
                [e[2] / sum, e[1] / sum, e[0] / sum]
            };
            for (m, x) in mean.iter_mut().zip(p) {
                *m += w * x;
            }
        }
        out.wdl = Some(mean.map(|m| m / total));
    }
    Ok(Some(out))
}

impl<G: Playable> Search<G> {
    /// [`root_aux`] of this search's root and its children's visits so far.
    pub fn root_aux(
        &self,
        evaluator: &dyn Evaluator<G>,
    ) -> Result<Option<RootAux<G::Action>>, EvalError> {
        let children: Vec<(G::Action, u32)> = self
            .candidates()
            .iter()
            .map(|c| (c.action, c.visits))
            .collect();
        root_aux(evaluator, self.state(), &children)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use eval::fake::FakeEvaluator;
    use games::go::{GoRules, GoState, Move, Point};
    use games::Game;

    fn go(size: usize) -> GoState {
        GoState::new(GoRules {
            size,
            ..GoRules::default()
        })
        .unwrap()
    }

    #[test]
    fn no_heads_no_call() {
        let root = go(5);
        assert_eq!(root_aux(&FakeEvaluator::new(4), &root, &[]).unwrap(), None);
    }

    #[test]
    fn children_are_weighed_by_visits_from_the_roots_view() {
        let root = go(5);
        let fake = FakeEvaluator::new(4).seeded(7).with_aux();
        let a = Move::Place(Point::new(0, 0));
        let b = Move::Place(Point::new(2, 2));
        let c = Move::Place(Point::new(4, 4));
        let got = root_aux(&fake, &root, &[(a, 3), (b, 0), (c, 1)])
            .unwrap()
            .unwrap();
        assert_eq!(got.positions, 3, "the root and two visited children");
        let child = |m| {
            let mut s = root.clone();
            s.play(m).unwrap();
            s
        };
        let (ca, cc) = (child(a), child(c));
        let want_score =
            (fake.score_of(&root) - 3.0 * fake.score_of(&ca) - fake.score_of(&cc)) / 5.0;
        assert!((got.score.unwrap() - want_score).abs() < 1e-5);
        assert_eq!(got.child_scores.len(), 2);
        assert_eq!(got.child_scores[0].0, a, "most visited first");
        assert!((got.child_scores[0].1 + fake.score_of(&ca)).abs() < 1e-6);
        let own = got.ownership.unwrap();
        assert_eq!(own.len(), 25);
        let (r, oa, oc) = (
            fake.ownership_of(&root),
            fake.ownership_of(&ca),
            fake.ownership_of(&cc),
        );
        for i in 0..25 {
            let want = (r[i] - 3.0 * oa[i] - oc[i]) / 5.0;
            assert!((own[i] - want).abs() < 1e-5, "cell {i}");
        }
        let wdl = got.wdl.unwrap();
        assert!((wdl.iter().sum::<f32>() - 1.0).abs() < 1e-4);
    }

    #[test]
    fn a_search_reports_its_roots_outputs() {
        let fake = FakeEvaluator::new(8).with_aux();
        let mut search = Search::new(go(5), crate::SearchConfig::default(), 1);
        search
            .run(
                &fake,
                crate::Limit::visits(64),
                crate::RunOptions::default(),
            )
            .unwrap();
        let got = search.root_aux(&fake).unwrap().unwrap();
        assert_eq!(got.positions, 8, "the root and the 7 most visited children");
        assert_eq!(got.child_scores.len(), 7);
        assert_eq!(got.ownership.unwrap().len(), 25);
        assert_eq!(search.root_aux(&FakeEvaluator::new(8)).unwrap(), None);
    }

    #[test]
    fn at_most_one_batch_is_evaluated() {
        let root = go(5);
        let fake = FakeEvaluator::new(2).with_aux();
        let kids: Vec<_> = (0..5)
            .map(|c| (Move::Place(Point::new(1, c)), 1 + c as u32))
            .collect();
        let got = root_aux(&fake, &root, &kids).unwrap().unwrap();
        assert_eq!(got.positions, 2);
        // The uniform fake's ownership is one ramp for Black whoever is to act.
        let ramp = fake.ownership_of(&root);
        for (x, want) in got.ownership.unwrap().iter().zip(&ramp) {
            assert!((x - want).abs() < 1e-5);
        }
        assert!((got.score.unwrap() - 2.5).abs() < 1e-5);
    }
}

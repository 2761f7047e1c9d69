//! A network averaged over board symmetries. Each state is evaluated as several of its
//! symmetric images and the answers are brought back to the state's own board and averaged.
//! A network trained on symmetric copies of its data still errs differently on each image, so
//! the mean judges better, at one evaluation per image.

use std::sync::{Arc, Mutex};

use games::{Game, Symmetry, TensorShape, NO_INDEX};

use crate::{AuxOutputs, EvalError, Evaluator, Heads};

/// Wraps an evaluator so that each state is evaluated as `views` images: the state as given and
/// `views − 1` of its other symmetries, chosen by the state's hash (all of them when `views`
/// reaches the game's count). Policies are averaged as probabilities, values as numbers.
pub struct Symmetric<G: Game> {
    inner: Arc<dyn Evaluator<G>>,
    views: usize,
    /// The maps of each board shape seen (they depend only on the variant; a network of any
    /// size sees several).
    maps: Mutex<Vec<(TensorShape, Arc<Maps>)>>,
}

type Maps = Vec<(Symmetry, Vec<u16>)>;

impl<G: Game> Symmetric<G> {
    /// `views` of at least 1; more than the game has mean all of them.
    pub fn new(inner: Arc<dyn Evaluator<G>>, views: usize) -> Self {
        Symmetric {
            inner,
            views: views.max(1),
            maps: Mutex::new(Vec::new()),
        }
    }

    /// The symmetry maps of `state`'s board, made on first sight.
    fn maps_of(&self, state: &G) -> Arc<Maps> {
        let shape = state.shape();
        let mut known = self.maps.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((_, maps)) = known.iter().find(|(s, _)| *s == shape) {
            return maps.clone();
        }
        let maps = Arc::new(games::symmetry_maps(state));
        known.push((shape, maps.clone()));
        maps
    }

    /// The `n` symmetries (indices into the game's `count`) `state` is evaluated under, identity
    /// first.
    fn chosen(state: &G, count: usize, n: usize) -> impl Iterator<Item = usize> {
        // The others in a ring, entered at a point the hash picks: a fixed but well-spread
        // choice, so that a position gets the same answer every time it is evaluated.
        let others = count - 1;
        let first = if others == 0 {
            0
        } else {
            (state.hash() % others as u64) as usize
        };
        std::iter::once(0).chain((0..n - 1).map(move |j| 1 + (first + j) % others))
    }
}

impl<G: Game> Evaluator<G> for Symmetric<G> {
    fn batch_size(&self) -> usize {
        self.inner.batch_size()
    }

    fn evaluate(
        &self,
        states: &[&G],
        policy: &mut [f32],
        value: &mut [f32],
    ) -> Result<(), EvalError> {
        let Some(first) = states.first() else {
            return Ok(());
        };
        let shape = first.shape();
        let same = states.iter().take_while(|s| s.shape() == shape).count();
        if same < states.len() {
            // Boards of several sizes: each stretch of one size on its own.
            let (p, v) = (same * shape.policy_size, same);
            if policy.len() < p || value.len() < v {
                return Err(EvalError::Backend(format!(
                    "output buffers hold {} logits and {} values, too few for {} states",
                    policy.len(),
                    value.len(),
                    states.len()
                )));
            }
            self.evaluate(&states[..same], &mut policy[..p], &mut value[..v])?;
            return self.evaluate(&states[same..], &mut policy[p..], &mut value[v..]);
        }
        let maps = self.maps_of(first);
        let size = shape.policy_size;
        // Every state gets `n` images, in order: image `i` is state `i / n`'s.
        let n = self.views.min(maps.len());
        let mut images = Vec::with_capacity(states.len() * n);
        for state in states {
            for m in Self::chosen(state, maps.len(), n) {
                images.push((m, state.transform(maps[m].0)));
            }
        }
        // The inner evaluator takes at most its batch a call; on the CPU a call costs what it
        // holds, so several calls cost what one large one would.
        let mut logits = vec![0.0f32; images.len() * size];
        let mut values = vec![0.0f32; images.len()];
        let chunk = self.inner.batch_size().max(1);
        for (c, part) in images.chunks(chunk).enumerate() {
            let refs: Vec<&G> = part.iter().map(|(_, s)| s).collect();
            let at = c * chunk;
            self.inner.evaluate(
                &refs,
                &mut logits[at * size..(at + part.len()) * size],
                &mut values[at..at + part.len()],
            )?;
        }
        policy[..states.len() * size].fill(0.0);
        value[..states.len()].fill(0.0);
        for (i, (m, _)) in images.iter().enumerate() {
            let k = i / n;
            let view = &logits[i * size..(i + 1) * size];
            let max = view.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            let total: f32 = view.iter().map(|&x| (x - max).exp()).sum();
            let out = &mut policy[k * size..(k + 1) * size];
            for (p, &j) in out.iter_mut().zip(&maps[*m].1) {
                if j != NO_INDEX {
                    *p += (view[j as usize] - max).exp() / total;
                }
            }
            value[k] += values[i];
        }
        for p in &mut policy[..states.len() * size] {
            // Back to logits: the search takes a softmax over the legal actions.
            *p = (*p / n as f32).max(f32::MIN_POSITIVE).ln();
        }
        for v in &mut value[..states.len()] {
            *v /= n as f32;
        }
        Ok(())
    }

    fn heads(&self) -> Heads {
        self.inner.heads()
    }

    /// Policy and value averaged over the views; the auxiliary outputs of the state as given
    /// (analysis asks for them, and one view is enough to show a territory).
    fn evaluate_aux(
        &self,
        states: &[&G],
        policy: &mut [f32],
        value: &mut [f32],
    ) -> Result<AuxOutputs, EvalError> {
        let aux = self.inner.evaluate_aux(states, policy, value)?;
        self.evaluate(states, policy, value)?;
        Ok(aux)
    }

    fn fits(&self, shape: TensorShape) -> bool {
        self.inner.fits(shape)
    }

    fn describe(&self) -> String {
        // Once a state has been seen, the game's own count bounds the views.
        let known = self.maps.lock().unwrap_or_else(|p| p.into_inner());
        let views = known
            .first()
            .map_or(self.views, |(_, m)| self.views.min(m.len()));
        format!("{}, {views} symmetric views", self.inner.describe())
    }

    fn calls_cost_whole_batch(&self) -> bool {
        self.inner.calls_cost_whole_batch()
    }
}

//! A network averaged over board symmetries. Each state is evaluated as several of its
//! symmetric images and the answers are brought back to the state's own board and averaged.
//! A network trained on symmetric copies of its data still errs differently on each image, so
//! the mean judges better, at one evaluation per image.

use std::sync::{Arc, Mutex};

use games::{Encoding, Symmetry, TensorShape, NO_INDEX};

use crate::{AuxOutputs, EvalError, Evaluator, Heads};

/// Wraps an evaluator so that each state is evaluated as `views` images: the state as given and
/// `views − 1` of its other symmetries, chosen by the state's hash (all of them when `views`
/// reaches the game's count). Policies are averaged as probabilities, values as numbers.
pub struct Symmetric<G: Encoding> {
    inner: Arc<dyn Evaluator<G>>,
    views: usize,
    /// The maps of each board shape seen (they depend only on the variant; a network of any
    /// size sees several).
    maps: Mutex<Vec<(TensorShape, Arc<Maps>)>>,
}

type Maps = Vec<(Symmetry, Vec<u16>)>;

impl<G: Encoding> Symmetric<G> {
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

    /// Policy and value averaged over the views; with `aux`, the auxiliary outputs too, from
    /// the same network calls: ownership and win/draw/loss of the state as given (one view is
    /// enough to show a territory), the score averaged over the views as the value is.
    fn views(
        &self,
        states: &[&G],
        policy: &mut [f32],
        value: &mut [f32],
        aux: bool,
    ) -> Result<AuxOutputs, EvalError> {
        let Some(first) = states.first() else {
            return Ok(AuxOutputs::default());
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
            let head = self.views(&states[..same], &mut policy[..p], &mut value[..v], aux)?;
            let tail = self.views(&states[same..], &mut policy[p..], &mut value[v..], aux)?;
            return Ok(concat(head, tail));
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
        let mut found = AuxOutputs::default();
        for (c, part) in images.chunks(chunk).enumerate() {
            let refs: Vec<&G> = part.iter().map(|(_, s)| s).collect();
            let at = c * chunk;
            let (l, v) = (
                &mut logits[at * size..(at + part.len()) * size],
                &mut values[at..at + part.len()],
            );
            if aux {
                found = concat(found, self.inner.evaluate_aux(&refs, l, v)?);
            } else {
                self.inner.evaluate(&refs, l, v)?;
            }
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
        Ok(identity_views(found, states.len(), n))
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

impl<G: Encoding> Evaluator<G> for Symmetric<G> {
    fn batch_size(&self) -> usize {
        self.inner.batch_size()
    }

    fn evaluate(
        &self,
        states: &[&G],
        policy: &mut [f32],
        value: &mut [f32],
    ) -> Result<(), EvalError> {
        self.views(states, policy, value, false).map(|_| ())
    }

    fn heads(&self) -> Heads {
        self.inner.heads()
    }

    /// Policy and value averaged over the views, and the auxiliary outputs from the same calls
    /// (see [`Symmetric::views`]).
    fn evaluate_aux(
        &self,
        states: &[&G],
        policy: &mut [f32],
        value: &mut [f32],
    ) -> Result<AuxOutputs, EvalError> {
        self.views(states, policy, value, true)
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

/// `a`'s outputs followed by `b`'s (those of later states).
fn concat(a: AuxOutputs, b: AuxOutputs) -> AuxOutputs {
    let join = |x: Option<Vec<f32>>, y: Option<Vec<f32>>| match (x, y) {
        (Some(mut x), Some(y)) => {
            x.extend(y);
            Some(x)
        }
        (x, None) => x,
        (None, y) => y,
    };
    AuxOutputs {
        ownership: join(a.ownership, b.ownership),
        score: join(a.score, b.score),
        wdl: join(a.wdl, b.wdl),
    }
}

/// The outputs of `states` from those of their `n` images each (image `k · n` the state as
/// given): ownership and win/draw/loss of the state as given, the score the images' mean.
fn identity_views(images: AuxOutputs, states: usize, n: usize) -> AuxOutputs {
    let rows = |x: Option<Vec<f32>>| {
        x.map(|x| {
            let width = x.len() / (states * n).max(1);
            (0..states)
                .flat_map(|k| x[k * n * width..(k * n + 1) * width].to_vec())
                .collect()
        })
    };
    let score = images.score.map(|s| {
        s.chunks(n)
            .map(|views| views.iter().sum::<f32>() / n as f32)
            .collect()
    });
    AuxOutputs {
        ownership: rows(images.ownership),
        score,
        wdl: rows(images.wdl),
    }
}

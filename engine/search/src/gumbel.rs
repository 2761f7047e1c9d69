//! Gumbel AlphaZero (Danihelka et al., "Policy improvement by planning with Gumbel", ICLR
//! 2022), the search's alternative to PUCT ([`crate::SearchKind::Gumbel`]).
//!
//! - **At the root**, a search samples m actions without replacement by Gumbel-Top-k (the m
//!   largest g(a) + logit(a), g drawn from Gumbel(0, 1) and scaled by the move's temperature),
//!   then spends its visit budget by sequential halving ([`Schedule`]): each phase gives every
//!   action still considered the same number of visits, then keeps the better half by
//!   g + logit + σ(q̂). The action played is the best of the most visited by that same score.
//! - **Below the root** a descent takes the child maximising π'(a) − N(a) / (1 + Σ_b N(b)),
//!   where π' = softmax(logit + σ(completed Q)) is the improved policy: the visit counts are
//!   steered towards π'.
//! - **Completed Q**: a visited child's mean value; an unvisited child's is the node's mixed
//!   value v_mix = (v̂ + ΣN · Σ_visited π(a) q(a) / Σ_visited π(a)) / (1 + ΣN), v̂ the network's
//!   value of the node. σ(q̂) = (c_visit + max_b N(b)) · c_scale · q̂, with q̂ = (q + 1) / 2
//!   mapping the value range [−1, 1] onto [0, 1].
//! - **The policy target** is the root's improved policy ([`crate::Search::improved_policy`]).
//!
//! Values and signs: a child's statistics are kept from the view of its mover, who is the
//! player to act at the parent, so a child's mean is already its value for the player choosing
//! it, whoever acts next (a Liuzhou turn may continue). The node's own network value v̂ is not
//! stored: it is what the node's sums hold beyond its children's, `(W − Σ W(c)) / (N − Σ N(c))`,
//! with W read from the chooser's side (negated when the node was entered by the other player).
//!
//! Logits are the logarithms of the stored priors (the tree keeps softmaxed priors: the two
//! differ by a constant per node, which neither softmax nor argmax sees).

use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};
use std::sync::atomic::{AtomicU8, AtomicUsize};

use games::{Outcome, Player};
use parking_lot::Mutex;
use rand::Rng;

use crate::tree::Tree;

/// Gumbel settings, copied out of the search configuration.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Gumbel {
    pub m: u32,
    pub c_visit: f32,
    pub c_scale: f32,
}

/// Visits a Gumbel search without a visit limit plans its halving for; past them it goes on
/// halving between its last two actions (see [`Schedule`]).
pub const OPEN_BUDGET: u64 = 1000;

/// The sequential-halving plan of one search: phases, each with the number of actions it
/// considers. A phase gives each of its actions the same number of visits, in rounds; the next
/// phase keeps the better half (never fewer than two). Each phase gets about
/// `budget / (⌈log2 m⌉ · considered)` rounds, so the budget is spread evenly over the phases;
/// the last phase takes what is left, and a search that goes on past the budget stays in it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Schedule {
    /// (first simulation, actions considered), by start.
    phases: Vec<(u64, u32)>,
}

impl Schedule {
    /// The plan for `simulations` visits among `m` actions (already capped at the number of
    /// legal actions).
    pub fn new(m: u32, simulations: u64) -> Schedule {
        let m = m.max(1);
        if m == 1 {
            return Schedule {
                phases: vec![(0, 1)],
            };
        }
        let log2m = u64::from(32 - (m - 1).leading_zeros()); // ⌈log2 m⌉ for m ≥ 2
        let mut phases: Vec<(u64, u32)> = Vec::new();
        let (mut start, mut k) = (0u64, m);
        loop {
            if phases.last().map(|p| p.1) != Some(k) {
                phases.push((start, k));
            }
            if start >= simulations {
                break;
            }
            let rounds = (simulations / (log2m * u64::from(k))).max(1);
            start += rounds * u64::from(k);
            k = (k / 2).max(2);
        }
        Schedule { phases }
    }

    /// The phase simulation `i` (0-based) belongs to.
    pub fn phase_of(&self, i: u64) -> usize {
        self.phases.partition_point(|&(start, _)| start <= i) - 1
    }

    /// Actions considered in phase `p`.
    pub fn considered(&self, p: usize) -> u32 {
        self.phases[p].1
    }

    pub fn phases(&self) -> usize {
        self.phases.len()
    }

    /// The visits each of the m actions gets from `simulations` visits, by rank (the action
    /// kept longest first), when every phase keeps the actions ranked best.
    pub fn visits_by_rank(&self, simulations: u64) -> Vec<u64> {
        let mut visits = vec![0u64; self.phases[0].1 as usize];
        for i in 0..simulations {
            let (start, k) = self.phases[self.phase_of(i)];
            visits[((i - start) % u64::from(k)) as usize] += 1;
        }
        visits
    }
}

/// One child as the Gumbel rules read it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct ChildView {
    pub prior: f32,
    /// Completed visits.
    pub visits: u32,
    pub in_flight: u32,
    /// Mean value for the player choosing among the children (exact when proven); meaningful
    /// when visited.
    pub q: f64,
    /// Proven lost for the player choosing it.
    pub lost: bool,
}

/// The logit of a stored prior (floored, so that a prior that underflowed stays finite).
#[inline]
fn logit(prior: f32) -> f64 {
    f64::from(prior.max(f32::MIN_POSITIVE)).ln()
}

/// The mixed value v_mix of a node whose own network value is `raw`.
pub(crate) fn mixed_value(raw: f64, children: &[ChildView]) -> f64 {
    let (mut n, mut p_sum, mut pq) = (0u64, 0.0f64, 0.0f64);
    for c in children.iter().filter(|c| c.visits > 0) {
        let p = f64::from(c.prior.max(f32::MIN_POSITIVE));
        n += u64::from(c.visits);
        p_sum += p;
        pq += p * c.q;
    }
    if n == 0 {
        return raw;
    }
    (raw + n as f64 * pq / p_sum) / (n as f64 + 1.0)
}

/// σ(q̂) of every child into `out`: completed Q (the child's mean when visited, else the mixed
/// value) mapped onto [0, 1], times (c_visit + max_b N(b)) · c_scale.
pub(crate) fn sigma(children: &[ChildView], raw: f64, g: &Gumbel, out: &mut Vec<f64>) {
    let v_mix = mixed_value(raw, children);
    let max_n = children.iter().map(|c| c.visits).max().unwrap_or(0);
    let scale = (f64::from(g.c_visit) + f64::from(max_n)) * f64::from(g.c_scale);
    out.clear();
    out.extend(children.iter().map(|c| {
        let q = if c.visits > 0 { c.q } else { v_mix };
        scale * (q + 1.0) * 0.5
    }));
}

/// The improved policy softmax(logit + σ(completed Q)) into `out`; it sums to 1.
pub(crate) fn improved_policy(children: &[ChildView], raw: f64, g: &Gumbel, out: &mut Vec<f64>) {
    sigma(children, raw, g, out);
    for (o, c) in out.iter_mut().zip(children) {
        *o += logit(c.prior);
    }
    let max = out.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let mut sum = 0.0;
    for o in out.iter_mut() {
        *o = (*o - max).exp();
        sum += *o;
    }
    for o in out.iter_mut() {
        *o /= sum;
    }
}

/// Reads the children of expanded node `node` for `chooser` (the player to act there, who is
/// the mover of every child) into `out`. Returns the first child's index and the node's own
/// network value for `chooser` (see the module's notes on signs).
pub(crate) fn read_node<A: Copy>(
    tree: &Tree<A>,
    node: u32,
    chooser: Player,
    out: &mut Vec<ChildView>,
) -> (u32, f64) {
    out.clear();
    let range = tree.children(node);
    let first = range.start;
    let (mut w, mut n) = (0.0f64, 0u64);
    for c in range {
        let s = tree.stats(c);
        let proven = tree.proven(c);
        w += s.value_sum;
        n += u64::from(s.visits);
        out.push(ChildView {
            prior: s.prior,
            visits: s.visits,
            in_flight: s.in_flight,
            q: proven.map_or(s.q(), |o| f64::from(o.value_for(chooser))),
            lost: matches!(proven, Some(Outcome::Win(p)) if p != chooser),
        });
    }
    let s = tree.stats(node);
    let own = if tree.mover(node) == chooser {
        s.value_sum
    } else {
        -s.value_sum
    };
    let visits = u64::from(s.visits);
    // Concurrent backups may be half way along their path: the estimate is clamped.
    let raw = if visits > n {
        (own - w) / (visits - n) as f64
    } else if visits > 0 {
        own / visits as f64
    } else {
        0.0
    };
    (first, raw.clamp(-1.0, 1.0))
}

/// Below the root: the child maximising π'(a) − N(a) / (1 + Σ_b N(b)), visits in flight
/// counted in N so that concurrent descents spread out. A child proven lost for `chooser` is
/// taken only when every child is.
pub(crate) fn select_interior<A: Copy>(
    tree: &Tree<A>,
    node: u32,
    chooser: Player,
    g: &Gumbel,
    views: &mut Vec<ChildView>,
    work: &mut Vec<f64>,
) -> u32 {
    let (first, raw) = read_node(tree, node, chooser, views);
    improved_policy(views, raw, g, work);
    let total: u64 = views
        .iter()
        .map(|c| u64::from(c.visits + c.in_flight))
        .sum();
    let inv = 1.0 / (1 + total) as f64;
    let mut best = (0usize, true, f64::NEG_INFINITY);
    for (k, (c, p)) in views.iter().zip(work.iter()).enumerate() {
        let score = p - f64::from(c.visits + c.in_flight) * inv;
        // Not lost beats lost; then the higher score.
        if (best.1 && !c.lost) || (best.1 == c.lost && score > best.2) {
            best = (k, c.lost, score);
        }
    }
    first + best.0 as u32
}

/// The root's plan for one search: the Gumbel noise, the visits each child had when the search
/// began, the halving schedule, and which children each phase considers.
pub(crate) struct RootPlan {
    /// The root's first child when planned (a plan belongs to one expansion of one root).
    first: u32,
    /// g(a), scaled by the move's temperature (0 when greedy).
    noise: Vec<f64>,
    /// Each child's completed visits when the search began: the schedule counts the visits
    /// beyond them (visits kept from an earlier search are in Q, not in the halving).
    base: Vec<u32>,
    schedule: Schedule,
    simulations: u64,
    /// A child is considered in phase p while `level > p`. Written only under `deciding`, for
    /// phases not yet published through `decided`.
    level: Vec<AtomicU8>,
    /// Phases whose considered children are chosen. Only grows, under `deciding`; stored with
    /// Release after their `level`s, read with Acquire before them.
    decided: AtomicUsize,
    deciding: Mutex<()>,
}

impl RootPlan {
    /// Plans `simulations` visits from expanded root `root`: draws the noise (times `scale`)
    /// and chooses the first phase's actions, the m best by g + logit + σ(q̂) (with no visits
    /// yet, that is Gumbel-Top-k over the prior). `None` when the root has no children.
    pub(crate) fn new<A: Copy, R: Rng + ?Sized>(
        tree: &Tree<A>,
        root: u32,
        chooser: Player,
        g: &Gumbel,
        simulations: u64,
        scale: f32,
        rng: &mut R,
    ) -> Option<RootPlan> {
        let mut views = Vec::new();
        let (first, raw) = read_node(tree, root, chooser, &mut views);
        if views.is_empty() {
            return None;
        }
        let noise = views
            .iter()
            .map(|_| {
                if scale > 0.0 {
                    f64::from(scale) * sample_gumbel(rng)
                } else {
                    0.0
                }
            })
            .collect();
        let m = g.m.min(views.len() as u32);
        let plan = RootPlan {
            first,
            noise,
            base: views.iter().map(|c| c.visits + c.in_flight).collect(),
            schedule: Schedule::new(m, simulations),
            simulations,
            level: views.iter().map(|_| AtomicU8::new(0)).collect(),
            decided: AtomicUsize::new(0),
            deciding: Mutex::new(()),
        };
        let mut work = Vec::new();
        sigma(&views, raw, g, &mut work);
        plan.decide(0, &views, &work);
        plan.decided.store(1, Release);
        Some(plan)
    }

    pub(crate) fn simulations(&self) -> u64 {
        self.simulations
    }

    /// g + logit + σ(q̂) of child `k`, `sigma` from [`sigma`].
    fn score(&self, k: usize, views: &[ChildView], sigma: &[f64]) -> f64 {
        self.noise[k] + logit(views[k].prior) + sigma[k]
    }

    /// This search's visits of child `k` (in flight included).
    fn new_visits(&self, k: usize, views: &[ChildView]) -> u64 {
        u64::from((views[k].visits + views[k].in_flight).saturating_sub(self.base[k]))
    }

    /// Chooses phase `p`'s children: the best of phase p − 1's by score (proven losses last).
    /// Under `deciding`, or before the plan is shared.
    fn decide(&self, p: usize, views: &[ChildView], sigma: &[f64]) {
        let mut members: Vec<usize> = (0..views.len())
            .filter(|&k| usize::from(self.level[k].load(Relaxed)) >= p)
            .collect();
        members.sort_by(|&a, &b| {
            views[a].lost.cmp(&views[b].lost).then(
                self.score(b, views, sigma)
                    .total_cmp(&self.score(a, views, sigma)),
            )
        });
        let keep = self.schedule.considered(p) as usize;
        for &k in members.iter().take(keep) {
            self.level[k].store((p + 1).min(usize::from(u8::MAX)) as u8, Relaxed);
        }
    }

    /// The root child the next simulation visits, or `None` when it must wait: a new phase
    /// begins, and which children it keeps is decided only once every visit in flight is back.
    /// Within a phase the least visited of its children goes first (ties by score), so visits
    /// given back by collided descents are made up before the phase ends.
    pub(crate) fn select<A: Copy>(
        &self,
        tree: &Tree<A>,
        root: u32,
        chooser: Player,
        g: &Gumbel,
        views: &mut Vec<ChildView>,
        work: &mut Vec<f64>,
    ) -> Option<u32> {
        let (first, raw) = read_node(tree, root, chooser, views);
        if first != self.first || views.len() != self.base.len() {
            debug_assert!(false, "a root plan used with another root");
            return Some(select_interior(tree, root, chooser, g, views, work));
        }
        let issued: u64 = (0..views.len()).map(|k| self.new_visits(k, views)).sum();
        let phase = self.schedule.phase_of(issued);
        sigma(views, raw, g, work);
        if phase >= self.decided.load(Acquire) {
            if views.iter().any(|c| c.in_flight > 0) {
                return None;
            }
            let _guard = self.deciding.lock();
            let mut p = self.decided.load(Relaxed);
            while p <= phase {
                self.decide(p, views, work);
                p += 1;
                self.decided.store(p, Release);
            }
        }
        // A child proven lost gets no more visits while another is left: they go to the rest.
        let mut best: Option<(usize, bool, u64, f64)> = None;
        for k in (0..views.len()).filter(|&k| self.considered(k, phase)) {
            let c = &views[k];
            let (n, s) = (self.new_visits(k, views), self.score(k, views, work));
            let better = |&(_, bl, bn, bs): &(usize, bool, u64, f64)| {
                (bl && !c.lost) || (bl == c.lost && (n < bn || (n == bn && s > bs)))
            };
            if best.as_ref().is_none_or(better) {
                best = Some((k, c.lost, n, s));
            }
        }
        Some(match best {
            Some((k, ..)) => first + k as u32,
            None => select_interior(tree, root, chooser, g, views, work),
        })
    }

    /// Whether child `k` takes part in phase `phase`.
    fn considered(&self, k: usize, phase: usize) -> bool {
        usize::from(self.level[k].load(Relaxed)) > phase
    }

    /// The children still considered when the search stopped: those of the last phase it
    /// reached whose children were chosen.
    fn finalists(&self, views: &[ChildView]) -> Vec<bool> {
        let issued: u64 = (0..views.len()).map(|k| self.new_visits(k, views)).sum();
        let decided = self.decided.load(Acquire).max(1);
        let phase = self.schedule.phase_of(issued).min(decided - 1);
        (0..views.len())
            .map(|k| self.considered(k, phase))
            .collect()
    }
}

/// A draw from Gumbel(0, 1).
fn sample_gumbel<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    let u: f64 = rng.gen::<f64>().clamp(1e-300, 1.0 - 1e-16);
    -(-u.ln()).ln()
}

/// The action a Gumbel search recommends among the root's children `views`: of the actions
/// its sequential halving still considered when it stopped (with no plan: the most visited),
/// the best by g + logit + σ(q̂); a proven loss only when nothing else is left. Returns its
/// index.
///
/// (mctx takes the best of the most visited, which is the same set when every visit lands
/// where the schedule put it; here a descent that collided gives its visit back, so the last
/// phase's actions may end a visit apart, and membership is what counts.)
pub(crate) fn choose(
    views: &[ChildView],
    raw: f64,
    g: &Gumbel,
    plan: Option<&RootPlan>,
) -> Option<usize> {
    let mut sig = Vec::new();
    sigma(views, raw, g, &mut sig);
    let most = views.iter().map(|c| c.visits).max().unwrap_or(0);
    let finalists = match plan {
        Some(p) => p.finalists(views),
        None => views.iter().map(|c| c.visits == most).collect(),
    };
    let key = |k: usize| {
        let c = &views[k];
        let noise = plan.map_or(0.0, |p| p.noise[k]);
        (!c.lost, finalists[k], noise + logit(c.prior) + sig[k])
    };
    (0..views.len()).max_by(|&a, &b| {
        let (ka, kb) = (key(a), key(b));
        ka.0.cmp(&kb.0)
            .then(ka.1.cmp(&kb.1))
            .then(ka.2.total_cmp(&kb.2))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tree::Cursor;

    const G: Gumbel = Gumbel {
        m: 16,
        c_visit: 50.0,
        c_scale: 0.1,
    };

    /// One completed playout along `path` with `value_first` (First's view).
    fn visit(t: &Tree<u8>, path: &[u32], value_first: f32) {
        path.iter().for_each(|&i| t.add_in_flight(i));
        t.backup(path, value_first);
    }

    fn view(prior: f32, visits: u32, q: f64) -> ChildView {
        ChildView {
            prior,
            visits,
            q,
            ..ChildView::default()
        }
    }

    #[test]
    fn schedules_spend_exactly_the_budget() {
        // 16 actions, 200 visits: phases of 16, 8, 4 and 2 actions with 3, 6, 12 and the rest
        // (28) rounds: 2·49 + 2·21 + 4·9 + 8·3 = 200.
        let s = Schedule::new(16, 200);
        assert_eq!(s.phases, [(0, 16), (48, 8), (96, 4), (144, 2)]);
        let v = s.visits_by_rank(200);
        assert_eq!(v, [49, 49, 21, 21, 9, 9, 9, 9, 3, 3, 3, 3, 3, 3, 3, 3]);
        // Four actions, ten visits: one round of four, then the better two alternate.
        assert_eq!(Schedule::new(4, 10).visits_by_rank(10), [4, 4, 1, 1]);
        for m in 1..=40u32 {
            for budget in [0u64, 1, 2, 3, 7, 16, 31, 50, 200, 1000] {
                let s = Schedule::new(m, budget);
                let v = s.visits_by_rank(budget);
                assert_eq!(v.iter().sum::<u64>(), budget, "m {m}, budget {budget}");
                assert!(v.windows(2).all(|w| w[0] >= w[1]), "{m} {budget}: {v:?}");
                // With a budget of at least m, every action is visited.
                if budget >= u64::from(m) {
                    assert!(v.iter().all(|&n| n > 0), "m {m}, budget {budget}: {v:?}");
                }
            }
        }
        // One action takes everything.
        assert_eq!(Schedule::new(1, 5).visits_by_rank(5), [5]);
    }

    #[test]
    fn improved_policy_matches_a_hand_computed_example() {
        // Priors 0.5, 0.3, 0.2; visits 3, 1, 0; means 0.2, −0.6; the node's network value 0.1.
        // Visited priors sum to 0.8: Σ π q / Σ π = (0.5·0.2 − 0.3·0.6) / 0.8 = −0.1, and
        // v_mix = (0.1 + 4·(−0.1)) / 5 = −0.06 completes the third child. q̂ = (q + 1) / 2 =
        // 0.6, 0.2, 0.47; σ = (50 + 3)·0.1·q̂ = 3.18, 1.06, 2.491. π' ∝ π·e^σ:
        // 0.5·e^3.18, 0.3·e^1.06, 0.2·e^2.491 = 12.0234, 0.8659, 2.4147 → 0.785638, 0.056581,
        // 0.157781 (to 1e-6).
        let children = [view(0.5, 3, 0.2), view(0.3, 1, -0.6), view(0.2, 0, 0.0)];
        // (Priors are f32: 0.3 is 0.30000001.)
        assert!((mixed_value(0.1, &children) + 0.06).abs() < 1e-7);
        let mut s = Vec::new();
        sigma(&children, 0.1, &G, &mut s);
        for (a, b) in s.iter().zip([3.18, 1.06, 2.491]) {
            assert!((a - b).abs() < 1e-6, "{s:?}");
        }
        let mut p = Vec::new();
        improved_policy(&children, 0.1, &G, &mut p);
        assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        for (a, b) in p.iter().zip([0.785638, 0.056581, 0.157781]) {
            assert!((a - b).abs() < 1e-6, "{p:?}");
        }
        // Nothing visited: the mixed value is the network's, and π' is the prior.
        let fresh = [view(0.7, 0, 0.0), view(0.3, 0, 0.0)];
        improved_policy(&fresh, -0.4, &G, &mut p);
        assert!((p[0] - 0.7).abs() < 1e-7 && (p[1] - 0.3).abs() < 1e-7);
    }

    #[test]
    fn the_interior_rule_follows_the_improved_policy() {
        // Equal priors and no values: visits go round the children in turn.
        let t = Tree::<u8>::new(64, Player::Second);
        assert!(t.try_claim(0).is_ok());
        let mut cur = Cursor::default();
        assert!(t.expand(0, Player::First, &[0, 1, 2], &[1.0 / 3.0; 3], &mut cur));
        visit(&t, &[0], 0.0);
        let (mut v, mut w) = (Vec::new(), Vec::new());
        let mut seen = Vec::new();
        for _ in 0..3 {
            let c = select_interior(&t, 0, Player::First, &G, &mut v, &mut w);
            t.add_in_flight(0);
            t.add_in_flight(c);
            seen.push(t.action(c));
        }
        seen.sort();
        assert_eq!(seen, [0, 1, 2], "in-flight visits spread the descents");
    }

    #[test]
    fn values_are_read_from_the_choosers_side_when_a_turn_continues() {
        // The root was entered by First, and First acts again (a Liuzhou capture after a
        // line): the root's statistics and its children's are both on First's side.
        let t = Tree::<u8>::new(64, Player::First);
        assert!(t.try_claim(0).is_ok());
        let mut cur = Cursor::default();
        assert!(t.expand(0, Player::First, &[0, 1], &[0.5, 0.5], &mut cur));
        // The root's own evaluation: 0.4 for First. Then one visit to each child: 0.8 and −0.2
        // for First.
        visit(&t, &[0], 0.4);
        visit(&t, &[0, 1], 0.8);
        visit(&t, &[0, 2], -0.2);
        let mut v = Vec::new();
        let (_, raw) = read_node(&t, 0, Player::First, &mut v);
        assert!((raw - 0.4).abs() < 1e-6, "raw {raw}");
        assert!((v[0].q - 0.8).abs() < 1e-6 && (v[1].q + 0.2).abs() < 1e-6);
        // The same numbers when Second entered the root and First acts: the root's sum is kept
        // for Second, and read back negated.
        let t = Tree::<u8>::new(64, Player::Second);
        assert!(t.try_claim(0).is_ok());
        assert!(t.expand(
            0,
            Player::First,
            &[0, 1],
            &[0.5, 0.5],
            &mut Cursor::default()
        ));
        visit(&t, &[0], 0.4);
        visit(&t, &[0, 1], 0.8);
        visit(&t, &[0, 2], -0.2);
        assert!((t.stats(0).value_sum + 1.0).abs() < 1e-6, "kept for Second");
        let (_, raw) = read_node(&t, 0, Player::First, &mut v);
        assert!((raw - 0.4).abs() < 1e-6, "raw {raw}");
        assert!((v[0].q - 0.8).abs() < 1e-6 && (v[1].q + 0.2).abs() < 1e-6);
    }

    #[test]
    fn the_choice_is_the_best_of_the_most_visited() {
        // The second child has the best value but fewer visits: of the two most visited, the
        // third wins on logit + σ: ln 0.2 + 5.5·0.8 = 2.791 against ln 0.5 + 5.5·0.55 = 2.332.
        let views = [view(0.5, 5, 0.1), view(0.3, 4, 0.9), view(0.2, 5, 0.6)];
        assert_eq!(choose(&views, 0.0, &G, None), Some(2));
        // A proven loss is played only when nothing else is left.
        let mut lost = views;
        lost[2].lost = true;
        assert_eq!(choose(&lost, 0.0, &G, None), Some(0));
    }
}

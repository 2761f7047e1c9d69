//! A cache of network results keyed by position hash, shared by all search threads.
//!
//! Sharded: each shard is a small direct-mapped table behind its own mutex, held only to copy
//! an entry in or out, so threads rarely meet. A colliding insert replaces the old entry.

use parking_lot::Mutex;

const SHARDS: usize = 64;

#[derive(Clone, Default)]
struct Entry {
    /// 0 marks an empty slot; a real hash of 0 is stored as 1 (a harmless false alias).
    key: u64,
    value: f32,
    /// The network's score for the player to act; NaN where none was given.
    score: f32,
    /// Priors over the legal actions in `legal_actions` order.
    priors: Vec<f32>,
}

/// What the network said about positions: the value (and the score, when the search gathers
/// scores) for the player to act and the priors over the legal actions (in the game's
/// `legal_actions` order).
pub struct EvalCache {
    shards: Box<[Mutex<Vec<Entry>>]>,
    slots_per_shard: usize,
}

impl EvalCache {
    /// A cache of about `entries` positions (at least one per shard).
    pub fn new(entries: usize) -> Self {
        let slots_per_shard = entries.div_ceil(SHARDS).max(1);
        EvalCache {
            shards: (0..SHARDS)
                .map(|_| Mutex::new(vec![Entry::default(); slots_per_shard]))
                .collect(),
            slots_per_shard,
        }
    }

    #[inline]
    fn place(&self, hash: u64) -> (u64, usize, usize) {
        let key = hash.max(1);
        let shard = (key as usize) % SHARDS;
        let slot = ((key >> 6) as usize) % self.slots_per_shard;
        (key, shard, slot)
    }

    /// Copies the cached priors into `priors` (cleared first) and returns the value and the
    /// score (if one was stored), if `hash` is cached with `n_actions` priors.
    pub fn get(
        &self,
        hash: u64,
        n_actions: usize,
        priors: &mut Vec<f32>,
    ) -> Option<(f32, Option<f32>)> {
        let (key, shard, slot) = self.place(hash);
        let table = self.shards[shard].lock();
        let e = &table[slot];
        if e.key != key || e.priors.len() != n_actions {
            return None;
        }
        priors.clear();
        priors.extend_from_slice(&e.priors);
        Some((e.value, (!e.score.is_nan()).then_some(e.score)))
    }

    /// Stores a result, replacing whatever shared its slot.
    pub fn insert(&self, hash: u64, value: f32, score: Option<f32>, priors: &[f32]) {
        let (key, shard, slot) = self.place(hash);
        let mut table = self.shards[shard].lock();
        let e = &mut table[slot];
        e.key = key;
        e.value = value;
        e.score = score.unwrap_or(f32::NAN);
        e.priors.clear();
        e.priors.extend_from_slice(priors);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stores_and_replaces() {
        let c = EvalCache::new(1);
        let mut p = Vec::new();
        assert_eq!(c.get(42, 2, &mut p), None);
        c.insert(42, 0.5, None, &[0.25, 0.75]);
        assert_eq!(c.get(42, 2, &mut p), Some((0.5, None)));
        assert_eq!(p, [0.25, 0.75]);
        assert_eq!(
            c.get(42, 3, &mut p),
            None,
            "a different action count is a miss"
        );
        // One slot per shard: a key in the same shard and slot replaces it.
        c.insert(42 + 64, -0.5, Some(3.5), &[1.0, 0.0]);
        assert_eq!(c.get(42, 2, &mut p), None);
        assert_eq!(c.get(42 + 64, 2, &mut p), Some((-0.5, Some(3.5))));
    }
}

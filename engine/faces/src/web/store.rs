//! The live sessions: bounded in number; idle ones expire, and when the store is full the least
//! recently used session that is not thinking makes room.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::view::WebSession;

/// One session behind an async mutex: a handler that cannot take it at once answers "busy"
/// rather than wait, so a long think never queues other requests behind it.
pub type Shared = Arc<tokio::sync::Mutex<Box<dyn WebSession>>>;

struct Slot {
    session: Shared,
    last_used: Instant,
}

/// Why a session could not be stored.
#[derive(Debug, thiserror::Error)]
#[error("all {0} sessions are busy thinking; try again shortly")]
pub struct Full(pub usize);

pub struct Store {
    // A std mutex: held only for map operations, never across an await.
    slots: Mutex<HashMap<String, Slot>>,
    max: usize,
    idle: Duration,
}

impl Store {
    pub fn new(max: usize, idle: Duration) -> Store {
        Store {
            slots: Mutex::new(HashMap::new()),
            max: max.max(1),
            idle,
        }
    }

    /// A fresh unguessable id (128 random bits).
    pub fn new_id() -> String {
        format!("{:032x}", rand::random::<u128>())
    }

    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Stores `session` under `id`, dropping expired sessions and, if still full, the least
    /// recently used one that is not busy.
    pub fn insert(&self, id: String, session: Box<dyn WebSession>) -> Result<(), Full> {
        let mut slots = self.lock();
        let now = Instant::now();
        slots.retain(|_, s| {
            now.duration_since(s.last_used) < self.idle || s.session.try_lock().is_err()
        });
        if slots.len() >= self.max {
            let victim = slots
                .iter()
                .filter(|(_, s)| s.session.try_lock().is_ok())
                .min_by_key(|(_, s)| s.last_used)
                .map(|(k, _)| k.clone());
            match victim {
                Some(k) => {
                    tracing::info!(session = %k, "store full: dropping the least recently used session");
                    slots.remove(&k);
                }
                None => return Err(Full(self.max)),
            }
        }
        slots.insert(
            id,
            Slot {
                session: Arc::new(tokio::sync::Mutex::new(session)),
                last_used: now,
            },
        );
        Ok(())
    }

    /// The session `id`, marked as used now.
    pub fn get(&self, id: &str) -> Option<Shared> {
        let mut slots = self.lock();
        let slot = slots.get_mut(id)?;
        if slot.last_used.elapsed() >= self.idle && slot.session.try_lock().is_ok() {
            slots.remove(id);
            return None;
        }
        slot.last_used = Instant::now();
        Some(slot.session.clone())
    }

    /// Marks `id` as used now: at the end of a long request (a think), so that idleness counts
    /// from when the session was last busy, not from when the request began.
    pub fn touch(&self, id: &str) {
        if let Some(slot) = self.lock().get_mut(id) {
            slot.last_used = Instant::now();
        }
    }

    /// Gives back the engine memory (search trees) of sessions unused for `after`, skipping
    /// busy ones. Returns how many gave some back. Blocking (it frees memory): call it off the
    /// async workers. The store's lock is held only to list the sessions.
    pub fn release_idle(&self, after: Duration) -> usize {
        let idle: Vec<Shared> = self
            .lock()
            .values()
            .filter(|s| s.last_used.elapsed() >= after)
            .map(|s| s.session.clone())
            .collect();
        idle.iter()
            .filter_map(|s| s.try_lock().ok())
            .map(|mut session| usize::from(session.release_memory()))
            .sum()
    }

    pub fn remove(&self, id: &str) -> bool {
        self.lock().remove(id).is_some()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Slot>> {
        // A panic while holding this lock cannot leave the map half-changed (each operation is
        // one map call), so a poisoned lock is still sound to use.
        self.slots.lock().unwrap_or_else(|e| e.into_inner())
    }
}

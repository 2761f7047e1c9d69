//! Shards written for a game's earlier encoding, carried over to its current one where the
//! newer input planes follow from the older ones (Xiangqi's attack planes follow from its
//! piece planes). The targets are unchanged: only the network input grows.

use std::path::Path;

use crate::{Shard, ShardError};

/// What [`upgrade`] did to a shard.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Upgrade {
    /// Already in the game's current encoding: left as it is.
    Current,
    /// Its samples were given the planes of the current encoding.
    CarriedOver { from: usize, to: usize },
}

/// Gives `shard`'s samples the input planes of its game's current encoding. An error (naming
/// `path` and, for a bad sample, its index) where the shard's encoding cannot be carried over.
pub fn upgrade(shard: &mut Shard, path: &Path) -> Result<Upgrade, ShardError> {
    let invalid = |reason: String| ShardError::Invalid {
        path: path.into(),
        reason,
    };
    let (game, planes) = (shard.meta.game.as_str(), shard.meta.planes);
    let now = games::shape_of(game, Some(shard.meta.height))
        .ok_or_else(|| invalid(format!("no game is called `{game}`")))?;
    if planes == now.planes {
        return Ok(Upgrade::Current);
    }
    let rebuild: fn(&[f32]) -> Result<Vec<f32>, String> = match (game, planes) {
        ("xiangqi", games::xiangqi::encode::BASE_PLANES) => {
            games::xiangqi::encode::with_attack_planes
        }
        _ => {
            return Err(invalid(format!(
                "a {game} shard of {planes} planes: only Xiangqi's {} planes can be carried \
                 over (to {} planes)",
                games::xiangqi::encode::BASE_PLANES,
                games::xiangqi::encode::PLANES
            )))
        }
    };
    for (i, sample) in shard.samples.iter_mut().enumerate() {
        sample.planes = rebuild(&sample.planes).map_err(|e| invalid(format!("sample {i}: {e}")))?;
    }
    shard.meta.planes = now.planes;
    Ok(Upgrade::CarriedOver {
        from: planes,
        to: now.planes,
    })
}

/// Reads the shard at `path`, carries it over and writes it back in its place (through a
/// temporary file: a stopped run leaves the old shard or the new one, never half of one).
pub fn upgrade_file(path: &Path) -> Result<Upgrade, ShardError> {
    let mut shard = Shard::read(path)?;
    let done = upgrade(&mut shard, path)?;
    if done != Upgrade::Current {
        shard.write(path)?;
    }
    Ok(done)
}

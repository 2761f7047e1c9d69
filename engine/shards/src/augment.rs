//! Symmetry augmentation at training time: a stored sample seen through one of the shard's
//! symmetries, without any game rules.

use crate::{Sample, ShardMeta, NO_INDEX};
use games::Symmetry;

/// Writes `sample` seen through `sym` (with its policy map `map`) as dense planes into
/// `planes_out` (input_len floats) and a dense policy target into `policy_out` (policy_size).
/// The auxiliary targets move with [`transform_ownership`] and [`transform_policy`].
pub fn transform_sample(
    meta: &ShardMeta,
    sample: &Sample,
    sym: Symmetry,
    map: &[u16],
    planes_out: &mut [f32],
    policy_out: &mut [f32],
) {
    transform(
        meta,
        &sample.planes,
        &sample.policy,
        sym,
        map,
        planes_out,
        policy_out,
    );
}

/// As [`transform_sample`], for a sample held as its parts: `planes` (input_len floats) and
/// the sparse `policy`.
pub fn transform(
    meta: &ShardMeta,
    planes: &[f32],
    policy: &[(u16, f32)],
    sym: Symmetry,
    map: &[u16],
    planes_out: &mut [f32],
    policy_out: &mut [f32],
) {
    let area = meta.height * meta.width;
    for plane in 0..meta.planes {
        transform_ownership(
            meta,
            &planes[plane * area..(plane + 1) * area],
            sym,
            &mut planes_out[plane * area..(plane + 1) * area],
        );
    }
    transform_policy(meta, policy, map, policy_out);
}

/// One board of `height × width` points (a plane, or an ownership target) seen through `sym`,
/// into `out`: the point at (rank, file) goes where `sym` sends it.
pub fn transform_ownership(meta: &ShardMeta, board: &[f32], sym: Symmetry, out: &mut [f32]) {
    let (h, w) = (meta.height, meta.width);
    for r in 0..h {
        for f in 0..w {
            let (r2, f2) = sym.map(r, f, h, w);
            out[r2 * w + f2] = board[r * w + f];
        }
    }
}

/// A sparse distribution over policy indices (a policy or a reply target) seen through the
/// symmetry whose policy map is `map`, as a dense one into `policy_out` (policy_size floats);
/// shares of indices the symmetry sends nowhere are dropped.
pub fn transform_policy(
    meta: &ShardMeta,
    policy: &[(u16, f32)],
    map: &[u16],
    policy_out: &mut [f32],
) {
    policy_out[..meta.policy_size].fill(0.0);
    for &(i, p) in policy {
        let j = map[i as usize];
        if j != NO_INDEX {
            policy_out[j as usize] += p;
        }
    }
}

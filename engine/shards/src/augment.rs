//! Symmetry augmentation at training time: a stored sample seen through one of the shard's
//! symmetries, without any game rules.

use crate::{Sample, ShardMeta, NO_INDEX};
use games::Symmetry;

/// Writes `sample` seen through `sym` (with its policy map `map`) as dense planes into
/// `planes_out` (input_len floats) and a dense policy target into `policy_out` (policy_size).
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
    let (h, w) = (meta.height, meta.width);
    let area = h * w;
    for plane in 0..meta.planes {
        let src = &planes[plane * area..(plane + 1) * area];
        let dst = &mut planes_out[plane * area..(plane + 1) * area];
        for r in 0..h {
            for f in 0..w {
                let (r2, f2) = sym.map(r, f, h, w);
                dst[r2 * w + f2] = src[r * w + f];
            }
        }
    }
    policy_out[..meta.policy_size].fill(0.0);
    for &(i, p) in policy {
        let j = map[i as usize];
        if j != NO_INDEX {
            policy_out[j as usize] += p;
        }
    }
}

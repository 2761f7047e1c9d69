//! The auxiliary targets of version 3 and the surprise of version 4 (`Aux`): every combination round-trips, bad numbers are
//! refused by writer and reader naming the tensor and element, and symmetries move the
//! ownership like a plane and the reply like the policy.

use std::fs;
use std::path::{Path, PathBuf};

use games::go::GoState;
use games::liuzhou::Liuzhou;
use games::{Encoding, Symmetry};
use rand::rngs::SmallRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use shards::{
    symmetry_maps, transform, transform_ownership, transform_policy, Aux, PolicyTarget, Sample,
    Shard, ShardError, ShardMeta,
};

fn tmpdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("shards-aux-{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&d);
    fs::create_dir_all(&d).unwrap();
    d
}

/// A 2 × 3 board (not square, so rows and columns cannot be confused) of one plane and seven
/// policy indices, with each combination of present and absent targets in turn.
fn board_2x3() -> Shard {
    let meta = ShardMeta {
        game: "test".into(),
        planes: 1,
        height: 2,
        width: 3,
        policy_size: 7,
        model: "random".into(),
        config: String::new(),
        created_unix: 1_700_000_000,
        games: 2,
        policy_target: PolicyTarget::Visits,
    };
    let samples = (0..8)
        .map(|i| {
            let k = i as f32;
            Sample {
                planes: (0..6).map(|j| (j as f32 + k) / 10.0).collect(),
                policy: vec![(i % 7, 1.0)],
                value: [-1.0, 0.0, 1.0][i as usize % 3],
                aux: Aux {
                    ownership: (i & 1 != 0).then(|| vec![1.0, -1.0, 0.0, 0.25, -0.5, k / 8.0]),
                    score: (i & 2 != 0).then_some(k * 1.5 - 6.5),
                    reply: (i & 4 != 0).then(|| vec![(6, 0.75), (i % 6, 0.25)]),
                    surprise: (i % 3 != 0).then_some(k * 0.25),
                },
            }
        })
        .collect();
    Shard {
        meta,
        samples,
        symmetries: vec![
            (Symmetry::IDENTITY, (0..7).collect()),
            (Symmetry::MIRROR_FILES, vec![2, 1, 0, 5, 4, 3, 6]),
        ],
    }
}

#[test]
fn every_combination_of_targets_round_trips() {
    let dir = tmpdir("round");
    let shard = board_2x3();
    let path = dir.join("aux.safetensors");
    shard.write(&path).unwrap();
    let (back, integrity) = Shard::read_checked(&path).unwrap();
    assert_eq!(integrity, shards::Integrity::Verified);
    assert_eq!(back.meta, shard.meta);
    assert_eq!(back.samples, shard.samples);
    assert_eq!(back.samples[7].aux.reply, Some(vec![(6, 0.75), (1, 0.25)]));
    assert_eq!(back.samples[0].aux, Aux::default());
    // The tensors Python sees.
    let bytes = fs::read(&path).unwrap();
    let st = safetensors::SafeTensors::deserialize(&bytes).unwrap();
    assert_eq!(st.tensor("ownership").unwrap().shape(), [8, 2, 3]);
    assert_eq!(
        st.tensor("ownership_mask").unwrap().data(),
        [0, 1, 0, 1, 0, 1, 0, 1]
    );
    assert_eq!(
        st.tensor("score_mask").unwrap().data(),
        [0, 0, 1, 1, 0, 0, 1, 1]
    );
    assert_eq!(st.tensor("reply_offsets").unwrap().shape(), [9]);
    assert_eq!(st.tensor("reply_index").unwrap().shape(), [8]);
    let (_, header) = safetensors::SafeTensors::read_metadata(&bytes).unwrap();
    assert_eq!(header.metadata().as_ref().unwrap()["version"], "4");
    assert_eq!(
        st.tensor("surprise_mask").unwrap().data(),
        [0, 1, 1, 0, 1, 1, 0, 1]
    );
    assert_eq!(back.samples[5].aux.surprise, Some(1.25));
    assert_eq!(back.samples[6].aux.surprise, None);
}

/// The shard at `path` with tensor `name`'s bytes changed by `edit` (bypassing the writer's
/// checks, as a hand-made file would), its checksums recorded anew.
fn rewrite_tensor(path: &Path, name: &str, edit: &dyn Fn(&mut Vec<u8>)) {
    let bytes = fs::read(path).unwrap();
    let (_, header) = safetensors::SafeTensors::read_metadata(&bytes).unwrap();
    let st = safetensors::SafeTensors::deserialize(&bytes).unwrap();
    let mut owned: Vec<(String, safetensors::Dtype, Vec<usize>, Vec<u8>)> = st
        .tensors()
        .into_iter()
        .map(|(n, t)| (n, t.dtype(), t.shape().to_vec(), t.data().to_vec()))
        .collect();
    edit(&mut owned.iter_mut().find(|t| t.0 == name).unwrap().3);
    let views: Vec<(&str, safetensors::tensor::TensorView)> = owned
        .iter()
        .map(|(n, d, s, b)| {
            let v = safetensors::tensor::TensorView::new(*d, s.clone(), b).unwrap();
            (n.as_str(), v)
        })
        .collect();
    let info = header.metadata().clone().unwrap();
    fs::write(path, shards::checksum::serialize(views, info).unwrap()).unwrap();
}

fn set_f32(b: &mut [u8], i: usize, v: f32) {
    b[4 * i..4 * i + 4].copy_from_slice(&v.to_le_bytes());
}

type Edit = Box<dyn Fn(&mut Vec<u8>)>;

#[test]
fn bad_targets_are_refused_naming_tensor_and_element() {
    let dir = tmpdir("bad");
    let good = dir.join("good.safetensors");
    board_2x3().write(&good).unwrap();
    // (tensor, case, the damage, what the error must say). Sample 1 has an ownership, sample 0
    // none; sample 3 a score, sample 0 none; samples 4 to 7 a reply (two entries each).
    let cases: Vec<(&str, &str, Edit, &str)> = vec![
        (
            "ownership",
            "ownership_range",
            Box::new(|b| set_f32(b, 6 + 4, 1.5)),
            "element 10 (sample 1) is 1.5, outside [-1, 1]",
        ),
        (
            "ownership",
            "ownership_nan",
            Box::new(|b| set_f32(b, 6 + 2, f32::NAN)),
            "element 8 (sample 1) is NaN",
        ),
        (
            "ownership",
            "ownership_absent",
            Box::new(|b| set_f32(b, 1, 0.5)),
            "element 1 (sample 0) is 0.5, but the sample has no ownership target",
        ),
        (
            "ownership_mask",
            "ownership_mask",
            Box::new(|b| b[2] = 2),
            "element 2 is 2, neither 0 (absent) nor 1 (present)",
        ),
        (
            "score",
            "score_inf",
            Box::new(|b| set_f32(b, 3, f32::INFINITY)),
            "element 3 is inf, not a finite number",
        ),
        (
            "score",
            "score_absent",
            Box::new(|b| set_f32(b, 0, 2.0)),
            "element 0 is 2, but the sample has no score target",
        ),
        (
            "reply_index",
            "reply_index",
            Box::new(|b| b[2..4].copy_from_slice(&7u16.to_le_bytes())),
            "element 1 (sample 4) is 7, outside 0..7",
        ),
        (
            "reply_prob",
            "reply_negative",
            Box::new(|b| set_f32(b, 2, -0.25)),
            "element 2 (sample 5) is -0.25, outside [0, 1]",
        ),
        (
            "reply_prob",
            "reply_sum",
            Box::new(|b| set_f32(b, 0, 0.25)),
            "sample 4's entries (elements 0..2) sum to 0.5, not 1",
        ),
        (
            "reply_offsets",
            "reply_offsets",
            Box::new(|b| b[4 * 8..4 * 9].copy_from_slice(&3u32.to_le_bytes())),
            "is not a partition of the 8 reply entries",
        ),
        (
            "surprise",
            "surprise_negative",
            Box::new(|b| set_f32(b, 1, -0.5)),
            "element 1 is -0.5, not a finite number ≥ 0",
        ),
        (
            "surprise",
            "surprise_absent",
            Box::new(|b| set_f32(b, 3, 0.5)),
            "element 3 is 0.5, but the sample has no surprise",
        ),
        (
            "surprise_mask",
            "surprise_mask",
            Box::new(|b| b[4] = 3),
            "element 4 is 3, neither 0 (absent) nor 1 (present)",
        ),
    ];
    for (tensor, name, edit, expect) in cases {
        let path = dir.join(format!("{name}.safetensors"));
        fs::copy(&good, &path).unwrap();
        rewrite_tensor(&path, tensor, &*edit);
        match Shard::read(&path) {
            Err(e @ ShardError::Invalid { .. }) => {
                let msg = e.to_string();
                assert!(msg.contains(&format!("{name}.safetensors")), "{msg}");
                assert!(msg.contains(&format!("tensor `{tensor}`")), "{msg}");
                assert!(msg.contains(expect), "{name}: {msg}");
            }
            other => panic!("{name}: expected Invalid, got {:?}", other.err()),
        }
    }

    // The writer refuses the same numbers, and those it could not store, and writes nothing.
    let out = tmpdir("bad-out");
    let with = |edit: &dyn Fn(&mut Aux)| {
        let mut s = board_2x3();
        edit(&mut s.samples[5].aux);
        s
    };
    for (bad, expect) in [
        (
            with(&|a| a.ownership.as_mut().unwrap()[0] = -1.01),
            "tensor `ownership`: element 30 (sample 5) is -1.01",
        ),
        (
            with(&|a| a.ownership = Some(vec![0.0; 5])),
            "sample 5 has 5 ownership values, expected 6",
        ),
        (
            with(&|a| a.score = Some(f32::NAN)),
            "tensor `score`: element 5 is NaN",
        ),
        (
            with(&|a| a.reply = Some(vec![(9, 1.0)])),
            "tensor `reply_index`: element 2 (sample 5) is 9, outside 0..7",
        ),
        (
            with(&|a| a.reply = Some(vec![])),
            "sample 5 has an empty reply target",
        ),
        (
            with(&|a| a.reply = Some(vec![(1, 0.3)])),
            "sample 5's entries (elements 2..3) sum to 0.3, not 1",
        ),
        (
            with(&|a| a.surprise = Some(f32::INFINITY)),
            "tensor `surprise`: element 5 is inf",
        ),
    ] {
        match bad.write(&out.join("x.safetensors")) {
            Err(e @ ShardError::BadSamples(_)) => assert!(e.to_string().contains(expect), "{e}"),
            other => panic!("expected BadSamples ({expect}), got {other:?}"),
        }
    }
    assert_eq!(fs::read_dir(&out).unwrap().count(), 0, "nothing written");
}

/// A shard of the current version must hold its auxiliary tensors and its surprise (all
/// absent is a mask of zeros).
#[test]
fn a_shard_without_its_targets_is_refused() {
    let dir = tmpdir("missing");
    let good = dir.join("good.safetensors");
    board_2x3().write(&good).unwrap();
    let bytes = fs::read(&good).unwrap();
    let (_, header) = safetensors::SafeTensors::read_metadata(&bytes).unwrap();
    let st = safetensors::SafeTensors::deserialize(&bytes).unwrap();
    let tensors = st.tensors();
    for missing in ["score_mask", "surprise", "surprise_mask"] {
        let kept: Vec<_> = tensors
            .iter()
            .filter(|(n, _)| n != missing)
            .map(|(n, t)| (n.as_str(), t.clone()))
            .collect();
        let bad = dir.join(format!("no-{missing}.safetensors"));
        let info = header.metadata().clone().unwrap();
        fs::write(&bad, shards::checksum::serialize(kept, info).unwrap()).unwrap();
        match Shard::read(&bad) {
            Err(e @ ShardError::Invalid { .. }) => assert!(
                e.to_string()
                    .contains(&format!("tensor `{missing}` missing")),
                "{e}"
            ),
            other => panic!("expected Invalid, got {other:?}"),
        }
    }
}

/// Positions of random games from `start`, each with its ownership and score, and the
/// uniform policy over the legal actions of the next position as its reply: each symmetry of
/// the shard sends the ownership where it sends the planes (the image's own ownership, and the
/// mover's stone plane marks the points the mover owns), the score nowhere, and the reply where
/// the game sends the next position's actions.
fn check_targets_move_with_the_symmetry<G: Encoding>(start: G, games: usize, seed: u64) -> usize {
    let shape = start.shape();
    let meta = ShardMeta {
        game: G::NAME.into(),
        planes: shape.planes,
        height: shape.height,
        width: shape.width,
        policy_size: shape.policy_size,
        model: String::new(),
        config: String::new(),
        created_unix: 0,
        games,
        policy_target: PolicyTarget::Visits,
    };
    let maps = symmetry_maps(&start);
    let area = shape.height * shape.width;
    let mut rng = SmallRng::seed_from_u64(seed);
    let (mut planes, mut image_planes) =
        (vec![0.0; shape.input_len()], vec![0.0; shape.input_len()]);
    let mut out_planes = vec![0.0; shape.input_len()];
    let (mut own_out, mut reply_out) = (vec![0.0; area], vec![0.0; shape.policy_size]);
    let mut policy_out = vec![0.0; shape.policy_size];
    let mut checked = 0;
    for _ in 0..games {
        let mut s = start.clone();
        while s.outcome().is_none() {
            let mut legal = Vec::new();
            s.legal_actions(&mut legal);
            let mut next = s.clone();
            next.play_unchecked(*legal.choose(&mut rng).unwrap());
            let mut next_legal = Vec::new();
            next.legal_actions(&mut next_legal);
            let share = 1.0 / next_legal.len().max(1) as f32;
            let reply: Vec<(u16, f32)> = next_legal
                .iter()
                .map(|&a| (next.action_index(a) as u16, share))
                .collect();
            let me = s.to_act();
            let own = s.final_ownership(me).unwrap();
            s.encode(&mut planes);
            for (sym, map) in &maps {
                let image = s.transform(*sym);
                image.encode(&mut image_planes);
                transform(
                    &meta,
                    &planes,
                    &[],
                    *sym,
                    map,
                    &mut out_planes,
                    &mut policy_out,
                );
                assert_eq!(out_planes, image_planes, "planes under {sym:?}");
                transform_ownership(&meta, &own, *sym, &mut own_out);
                assert_eq!(
                    Some(&own_out),
                    image.final_ownership(me).as_ref(),
                    "{} ownership under {sym:?} in {}",
                    G::NAME,
                    s.to_text()
                );
                // The marker: a stone of the mover in the moved plane is owned +1 there.
                for i in 0..area {
                    if out_planes[i] == 1.0 {
                        assert_eq!(own_out[i], 1.0, "point {i} under {sym:?}");
                    }
                }
                assert_eq!(image.final_score(me), s.final_score(me));
                transform_policy(&meta, &reply, map, &mut reply_out);
                let next_image = next.transform(*sym);
                for &a in &next_legal {
                    let j = next_image.action_index(next.transform_action(*sym, a));
                    assert!((reply_out[j] - share).abs() < 1e-6, "reply under {sym:?}");
                }
                let total: f32 = reply_out.iter().sum();
                assert!((total - share * next_legal.len() as f32).abs() < 1e-4);
                checked += 1;
            }
            s = next;
        }
    }
    checked
}

#[test]
fn ownership_moves_like_the_planes_and_the_reply_like_the_policy() {
    assert!(check_targets_move_with_the_symmetry(Liuzhou::default(), 3, 1) > 1000);
    assert!(check_targets_move_with_the_symmetry(GoState::with_size(5), 3, 2) > 500);
}

/// The reply of a position is the opponent's next decision, past the mover's own further
/// actions; none when the game ends first.
#[test]
fn the_reply_comes_from_the_opponents_next_decision() {
    use games::Player::{First as B, Second as W};
    let movers = [B, W, W, B, B, B, W];
    let replies: Vec<Option<usize>> = (0..8).map(|ply| shards::reply_ply(&movers, ply)).collect();
    assert_eq!(
        replies,
        [
            Some(1),
            Some(3),
            Some(3),
            Some(6),
            Some(6),
            Some(6),
            None,
            None
        ]
    );
}

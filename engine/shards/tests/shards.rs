//! Shard round trips, refusal of broken or foreign files, and symmetry augmentation agreeing with
//! the game's own transforms.

use std::fs;
use std::path::PathBuf;

use games::liuzhou::Liuzhou;
use games::{Encoding, Game, Symmetry};
use rand::rngs::SmallRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use shards::{
    newest_first, read_newest, symmetry_maps, transform_sample, Aux, Integrity, PolicyTarget,
    Sample, Shard, ShardError, ShardMeta,
};

fn tmpdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("shards-test-{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&d);
    fs::create_dir_all(&d).unwrap();
    d
}

/// Positions from random Liuzhou games with made-up visit distributions, and auxiliary targets
/// as self-play stores them: the ownership and score of the position itself (standing in for
/// the game's end) and, where the next position is the opponent's, its policy as the reply.
fn liuzhou_shard(n: usize, seed: u64) -> (Shard, Vec<Liuzhou>) {
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut states: Vec<Liuzhou> = Vec::new();
    let mut samples: Vec<Sample> = Vec::new();
    let mut s = Liuzhou::default();
    let mut new_game = true;
    while samples.len() < n {
        let mut legal = Vec::new();
        s.legal_actions(&mut legal);
        if legal.is_empty() {
            s = Liuzhou::default();
            new_game = true;
            continue;
        }
        let mut planes = vec![0.0; s.shape().input_len()];
        s.encode(&mut planes);
        let k = legal.len().min(5);
        let policy: Vec<(u16, f32)> = legal[..k]
            .iter()
            .map(|&a| (s.action_index(a) as u16, 1.0 / k as f32))
            .collect();
        let me = s.to_act();
        if let (Some(last), Some(before)) = (samples.last_mut(), states.last()) {
            if !new_game && before.to_act() != me {
                last.aux.reply = Some(policy.clone());
            }
        }
        new_game = false;
        samples.push(Sample {
            planes,
            policy,
            value: [-1.0, 0.0, 1.0][rng.gen_range(0..3)],
            aux: Aux {
                ownership: s.final_ownership(me),
                score: s.final_score(me),
                reply: None,
                surprise: rng.gen_bool(0.5).then(|| rng.gen_range(0.0..3.0)),
            },
        });
        states.push(s.clone());
        s.play(*legal.choose(&mut rng).unwrap()).unwrap();
    }
    let shape = s.shape();
    let meta = ShardMeta {
        game: "liuzhou".into(),
        planes: shape.planes,
        height: shape.height,
        width: shape.width,
        policy_size: shape.policy_size,
        model: "random".into(),
        config: "game: {lose_below: 1}\n".into(),
        created_unix: 1_700_000_000,
        games: 3,
        policy_target: PolicyTarget::Visits,
    };
    (
        Shard {
            meta,
            samples,
            symmetries: symmetry_maps(&s),
        },
        states,
    )
}

#[test]
fn round_trip() {
    let dir = tmpdir("round");
    let (shard, _) = liuzhou_shard(300, 1);
    let path = dir.join("000001.safetensors");
    shard.write(&path).unwrap();
    let back = Shard::read(&path).unwrap();
    assert_eq!(back.meta, shard.meta);
    assert_eq!(back.samples, shard.samples);
    assert_eq!(back.symmetries, shard.symmetries);
    // The header alone tells the same.
    assert_eq!(ShardMeta::read(&path).unwrap(), (shard.meta.clone(), 300));
    // No temporary file is left behind.
    assert_eq!(fs::read_dir(&dir).unwrap().count(), 1);
}

#[test]
fn broken_and_foreign_files_are_typed_errors() {
    let dir = tmpdir("broken");
    let (shard, _) = liuzhou_shard(50, 2);
    let good = dir.join("good.safetensors");
    shard.write(&good).unwrap();
    let bytes = fs::read(&good).unwrap();

    let truncated = dir.join("truncated.safetensors");
    fs::write(&truncated, &bytes[..bytes.len() / 2]).unwrap();
    assert!(matches!(
        Shard::read(&truncated),
        Err(ShardError::Corrupt { .. })
    ));

    let garbage = dir.join("garbage.safetensors");
    fs::write(&garbage, b"\x05\x00\x00\x00\x00\x00\x00\x00hello").unwrap();
    assert!(matches!(
        Shard::read(&garbage),
        Err(ShardError::Corrupt { .. })
    ));

    let empty = dir.join("empty.safetensors");
    fs::write(&empty, b"").unwrap();
    assert!(matches!(
        Shard::read(&empty),
        Err(ShardError::Corrupt { .. })
    ));

    // A valid safetensors file that is not a shard.
    let other = dir.join("other.safetensors");
    let data = [0u8; 8];
    let t = safetensors::tensor::TensorView::new(safetensors::Dtype::F32, vec![2], &data).unwrap();
    fs::write(&other, safetensors::serialize([("w", t)], None).unwrap()).unwrap();
    assert!(matches!(
        Shard::read(&other),
        Err(ShardError::Foreign { .. })
    ));

    let missing = dir.join("missing.safetensors");
    assert!(matches!(Shard::read(&missing), Err(ShardError::Io { .. })));

    // Reading the header alone: the truncated shard's header is whole, the rest are errors.
    assert_eq!(ShardMeta::read(&truncated).unwrap().0, shard.meta);
    for (path, corrupt) in [(&garbage, true), (&empty, true), (&other, false)] {
        match ShardMeta::read(path) {
            Err(ShardError::Corrupt { .. }) if corrupt => {}
            Err(ShardError::Foreign { .. }) if !corrupt => {}
            r => panic!("{}: {r:?}", path.display()),
        }
    }
    let mut huge = 1u64.to_le_bytes().to_vec();
    huge[7] = 0xff;
    let claims_too_much = dir.join("claims.safetensors");
    fs::write(&claims_too_much, &huge).unwrap();
    assert!(matches!(
        ShardMeta::read(&claims_too_much),
        Err(ShardError::Corrupt { .. })
    ));
    assert!(matches!(
        ShardMeta::read(&missing),
        Err(ShardError::Io { .. })
    ));

    // Errors name the file.
    let msg = Shard::read(&truncated).unwrap_err().to_string();
    assert!(msg.contains("truncated.safetensors"), "{msg}");
}

#[test]
fn read_newest_skips_bad_and_foreign_shards() {
    let dir = tmpdir("newest");
    let (shard, _) = liuzhou_shard(20, 3);
    for i in 1..=3 {
        shard
            .write(&dir.join(format!("{i:06}.safetensors")))
            .unwrap();
    }
    let mut go = shard.clone();
    go.meta.game = "go".into();
    go.write(&dir.join("000004.safetensors")).unwrap();
    fs::write(dir.join("000005.safetensors"), b"half a shard").unwrap();
    fs::write(dir.join(".000006.safetensors.123.tmp"), b"in progress").unwrap();
    let got = read_newest(&dir, "liuzhou", 2).unwrap();
    assert_eq!(got.len(), 2);
    let all = read_newest(&dir, "liuzhou", 100).unwrap();
    assert_eq!(all.len(), 3);

    // The listing both readers (this one and trainer-bridge's window) start from.
    fs::write(dir.join(".hidden.safetensors"), b"not a shard").unwrap();
    fs::write(dir.join("notes.txt"), b"not a shard").unwrap();
    let names: Vec<String> = newest_first(&dir)
        .unwrap()
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        ["000005", "000004", "000003", "000002", "000001"].map(|n| format!("{n}.safetensors"))
    );
    assert!(matches!(
        newest_first(&dir.join("missing")),
        Err(ShardError::Io { .. })
    ));
}

/// The shard at `path` with tensor `name`'s bytes changed by `edit` (bypassing the writer's
/// checks, as a hand-made file would), its checksums recorded anew.
fn rewrite_tensor(path: &std::path::Path, name: &str, edit: impl FnOnce(&mut Vec<u8>)) {
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

type Edit<'a> = Box<dyn Fn(&mut Vec<u8>) + 'a>;

fn set_f32(b: &mut [u8], i: usize, v: f32) {
    b[4 * i..4 * i + 4].copy_from_slice(&v.to_le_bytes());
}

fn set_u16(b: &mut [u8], i: usize, v: u16) {
    b[2 * i..2 * i + 2].copy_from_slice(&v.to_le_bytes());
}

/// Numbers a trainer cannot use (NaN input, negative probabilities, indices off the policy)
/// are refused with the tensor and element named.
#[test]
fn refuses_unusable_numbers_naming_tensor_and_element() {
    let dir = tmpdir("numbers");
    let (shard, _) = liuzhou_shard(10, 6);
    let good = dir.join("good.safetensors");
    shard.write(&good).unwrap();
    let policy_size = shard.meta.policy_size;
    // (tensor, case name, the damage, what the error must say)
    let cases: [(&str, &str, Edit, &str); 6] = [
        (
            "planes",
            "planes_nan",
            Box::new(|b| set_f32(b, 2, f32::NAN)),
            "element 2 (sample 0) is NaN",
        ),
        (
            "planes",
            "planes_inf",
            Box::new(|b| set_f32(b, shard.meta.input_len() + 1, f32::INFINITY)),
            "(sample 1) is inf",
        ),
        (
            "policy_prob",
            "prob_neg",
            Box::new(|b| set_f32(b, 0, -5.0)),
            "element 0 (sample 0) is -5",
        ),
        (
            "symmetry_policy",
            "sym_oob",
            Box::new(|b| set_u16(b, policy_size + 5, 5000)),
            "element [1, 5] is 5000",
        ),
        (
            "symmetry_bits",
            "sym_bits",
            Box::new(|b| b[0] = 9),
            "identity (0) first",
        ),
        (
            "value",
            "value_nan",
            Box::new(|b| set_f32(b, 3, f32::NAN)),
            "element 3 is NaN",
        ),
    ];
    for (tensor, name, edit, expect) in cases {
        let path = dir.join(format!("{name}.safetensors"));
        fs::copy(&good, &path).unwrap();
        rewrite_tensor(&path, tensor, edit);
        match Shard::read(&path) {
            Err(e @ ShardError::Invalid { .. }) => {
                let msg = e.to_string();
                assert!(msg.contains(name), "{msg}");
                assert!(msg.contains(&format!("tensor `{tensor}`")), "{msg}");
                assert!(msg.contains(expect), "{name}: {msg}");
            }
            other => panic!("{name}: expected Invalid, got {:?}", other.err()),
        }
    }
    // read_newest skips them with a warning and keeps the good shard.
    let got = read_newest(&dir, "liuzhou", 100).unwrap();
    assert_eq!(got.len(), 1);

    // The writer refuses the same numbers, and writes nothing.
    let out = tmpdir("numbers-out");
    let mut nan = shard.clone();
    nan.samples[1].planes[0] = f32::NAN;
    let mut neg = shard.clone();
    neg.samples[0].policy[0].1 = -0.5;
    let mut sym = shard.clone();
    sym.symmetries[2].1[7] = policy_size as u16;
    for (bad, expect) in [
        (nan, "tensor `planes`: element"),
        (neg, "tensor `policy_prob`: element 0"),
        (sym, "tensor `symmetry_policy`: element [2, 7]"),
    ] {
        match bad.write(&out.join("x.safetensors")) {
            Err(e @ ShardError::BadSamples(_)) => assert!(e.to_string().contains(expect), "{e}"),
            other => panic!("expected BadSamples, got {other:?}"),
        }
    }
    assert_eq!(fs::read_dir(&out).unwrap().count(), 0, "nothing written");
}

#[test]
fn refuses_inconsistent_samples() {
    let (mut shard, _) = liuzhou_shard(5, 4);
    shard.samples[2].planes.pop();
    let dir = tmpdir("bad-samples");
    assert!(matches!(
        shard.write(&dir.join("x.safetensors")),
        Err(ShardError::BadSamples(_))
    ));
    assert_eq!(fs::read_dir(&dir).unwrap().count(), 0, "nothing written");
}

#[test]
fn augmentation_agrees_with_the_game_transform() {
    let (shard, states) = liuzhou_shard(200, 5);
    let m = &shard.meta;
    let mut planes = vec![0.0; m.input_len()];
    let mut policy = vec![0.0; m.policy_size];
    let mut expected = vec![0.0; m.input_len()];
    for (sample, state) in shard.samples.iter().zip(&states) {
        for (sym, map) in &shard.symmetries {
            transform_sample(m, sample, *sym, map, &mut planes, &mut policy);
            let image = state.transform(*sym);
            image.encode(&mut expected);
            assert_eq!(
                planes,
                expected,
                "planes under {sym:?} in {}",
                state.to_text()
            );
            for &(i, p) in &sample.policy {
                let a = state.index_action(i as usize).unwrap();
                let j = image.action_index(state.transform_action(*sym, a));
                assert_eq!(policy[j], p, "policy under {sym:?}");
            }
        }
    }
    assert_eq!(shard.symmetries.len(), 8);
    assert_eq!(shard.symmetries[0].0, Symmetry::IDENTITY);
}

/// Random games from `start`: every position's encoding and a uniform policy over its legal
/// actions, transformed by each of the game's symmetries, must equal the encoding and the
/// actions of the transformed position. Returns the positions checked per side to act.
fn check_augmentation<G: Encoding>(start: G, games: usize, max_moves: usize) -> [usize; 2] {
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
    let mut rng = SmallRng::seed_from_u64(5);
    let mut planes = vec![0.0; shape.input_len()];
    let mut policy = vec![0.0; shape.policy_size];
    let mut expected = vec![0.0; shape.input_len()];
    let (mut actions, mut image_actions) = (Vec::new(), Vec::new());
    let mut by_side = [0; 2];
    for _ in 0..games {
        let mut s = start.clone();
        for _ in 0..max_moves {
            if s.outcome().is_some() {
                break;
            }
            actions.clear();
            s.legal_actions(&mut actions);
            let mut encoded = vec![0.0; shape.input_len()];
            s.encode(&mut encoded);
            let share = 1.0 / actions.len() as f32;
            let sample = Sample {
                planes: encoded,
                policy: actions
                    .iter()
                    .map(|&a| (s.action_index(a) as u16, share))
                    .collect(),
                value: 0.0,
                aux: Default::default(),
            };
            for (sym, map) in &maps {
                transform_sample(&meta, &sample, *sym, map, &mut planes, &mut policy);
                let image = s.transform(*sym);
                image.encode(&mut expected);
                assert_eq!(
                    planes,
                    expected,
                    "{} planes under {sym:?} in {}",
                    G::NAME,
                    s.to_text()
                );
                image_actions.clear();
                image.legal_actions(&mut image_actions);
                for &a in &actions {
                    let b = s.transform_action(*sym, a);
                    assert!(
                        image_actions.contains(&b),
                        "{sym:?} of a legal action is legal"
                    );
                    // transform_sample renormalises: equal up to rounding.
                    let got = policy[image.action_index(b)];
                    assert!(
                        (got - share).abs() < 1e-6,
                        "{} policy under {sym:?}: {got}",
                        G::NAME
                    );
                }
            }
            by_side[s.to_act().index()] += 1;
            s.play_unchecked(*actions.choose(&mut rng).unwrap());
        }
    }
    by_side
}

#[test]
fn augmentation_agrees_with_the_transforms_of_xiangqi_and_go() {
    // Xiangqi: the mirror only; Black's positions are encoded in a flipped frame, so both
    // sides must be covered.
    let xiangqi = games::xiangqi::Xiangqi::default();
    assert_eq!(xiangqi.symmetries().len(), 2);
    let sides = check_augmentation(xiangqi, 6, 120);
    assert!(sides.iter().all(|&n| n > 100), "{sides:?}");
    let go = games::go::GoState::new(games::go::GoRules::default()).unwrap();
    assert_eq!(go.symmetries().len(), 8);
    let sides = check_augmentation(go, 3, 100);
    assert!(sides.iter().all(|&n| n > 100), "{sides:?}");
}

/// Where each tensor's bytes lie in the file: (name, start, end), in file order.
fn tensor_ranges(bytes: &[u8]) -> Vec<(String, usize, usize)> {
    let (n, header) = safetensors::SafeTensors::read_metadata(bytes).unwrap();
    let mut ranges: Vec<_> = header
        .tensors()
        .into_iter()
        .map(|(name, info)| {
            let (a, b) = info.data_offsets;
            (name, 8 + n + a, 8 + n + b)
        })
        .collect();
    ranges.sort_by_key(|r| r.1);
    ranges
}

/// The file at `from` written to `to` with its metadata changed by `edit` and its tensors as
/// they are.
fn with_metadata(
    from: &std::path::Path,
    to: &std::path::Path,
    edit: impl FnOnce(&mut std::collections::HashMap<String, String>),
) {
    let bytes = fs::read(from).unwrap();
    let (_, header) = safetensors::SafeTensors::read_metadata(&bytes).unwrap();
    let st = safetensors::SafeTensors::deserialize(&bytes).unwrap();
    let mut info = header.metadata().clone().unwrap();
    edit(&mut info);
    fs::write(
        to,
        safetensors::serialize(st.tensors(), Some(info)).unwrap(),
    )
    .unwrap();
}

/// The shard at `from` as version 1 wrote it: no `crc32` metadata.
fn as_version_1(from: &std::path::Path, to: &std::path::Path) {
    with_metadata(from, to, |info| {
        info.remove(shards::checksum::KEY);
        info.insert("version".into(), "1".into());
    });
}

/// One byte changed in any tensor (the reported case among them: an f32 of `planes` from 0.0
/// to 2.0, a number the value checks accept) is refused, naming the file and the tensor.
#[test]
fn a_changed_byte_in_any_tensor_is_refused_naming_file_and_tensor() {
    let dir = tmpdir("damage");
    let (shard, _) = liuzhou_shard(40, 7);
    let good = dir.join("000000-good.safetensors");
    shard.write(&good).unwrap();
    let bytes = fs::read(&good).unwrap();
    let ranges = tensor_ranges(&bytes);
    assert_eq!(ranges.len(), 16, "{ranges:?}");
    let planes = ranges.iter().find(|r| r.0 == "planes").unwrap();
    let zero = bytes[planes.1..planes.2]
        .chunks_exact(4)
        .position(|c| c == [0; 4])
        .unwrap();
    let mut two = bytes.clone();
    // 2.0f32 is 0x40000000: its little-endian bytes are 00 00 00 40.
    two[planes.1 + 4 * zero + 3] = 0x40;
    let mut cases = vec![("planes-2.0".to_string(), "planes".to_string(), two)];
    for (name, start, end) in &ranges {
        let mut damaged = bytes.clone();
        damaged[(start + end) / 2] ^= 0x10;
        cases.push((format!("flip-{name}"), name.clone(), damaged));
    }
    for (case, tensor, damaged) in cases {
        let path = dir.join(format!("{case}.safetensors"));
        fs::write(&path, damaged).unwrap();
        match Shard::read(&path) {
            Err(e @ ShardError::Checksum { .. }) => {
                let msg = e.to_string();
                assert!(msg.starts_with(&path.display().to_string()), "{msg}");
                assert!(
                    msg.contains(&format!("tensor `{tensor}` fails its checksum")),
                    "{msg}"
                );
            }
            other => panic!("{case}: expected a checksum error, got {other:?}"),
        }
        let check = shards::verify::check_file(&path);
        assert_eq!(check.kind, shards::verify::Kind::Shard);
        assert!(matches!(check.result, Err(ShardError::Checksum { .. })));
    }
    // A directory reader skips them all and keeps the good shard.
    assert_eq!(read_newest(&dir, "liuzhou", 100).unwrap().len(), 1);
}

#[test]
fn version_1_shards_without_checksums_are_still_read() {
    let dir = tmpdir("v1");
    let (shard, _) = liuzhou_shard(30, 8);
    let v3 = dir.join("v3.safetensors");
    shard.write(&v3).unwrap();
    let v1 = dir.join("v1.safetensors");
    as_version_1(&v3, &v1);
    let (back, integrity) = Shard::read_checked(&v1).unwrap();
    assert_eq!(integrity, Integrity::NoChecksum);
    // Version 1 had no auxiliary targets: whatever tensors the file holds besides its own are
    // not looked at.
    let mut without_aux = shard.samples.clone();
    without_aux.iter_mut().for_each(|s| s.aux = Aux::default());
    assert_eq!(
        (&back.meta, &back.samples, &back.symmetries),
        (&shard.meta, &without_aux, &shard.symmetries)
    );
    assert_eq!(Shard::read_checked(&v3).unwrap().1, Integrity::Verified);
    assert_eq!(ShardMeta::read(&v1).unwrap(), (shard.meta.clone(), 30));
    assert_eq!(read_newest(&dir, "liuzhou", 100).unwrap().len(), 2);

    // A shard of version 2 or later must carry its checksums; versions this build does not know are
    // foreign.
    let stripped = dir.join("stripped.safetensors");
    with_metadata(&v3, &stripped, |info| {
        info.remove(shards::checksum::KEY);
    });
    match Shard::read(&stripped) {
        Err(e @ ShardError::Invalid { .. }) => {
            assert!(e.to_string().contains("without `crc32` metadata"), "{e}")
        }
        other => panic!("expected Invalid, got {other:?}"),
    }
    let future = dir.join("future.safetensors");
    with_metadata(&v3, &future, |info| {
        info.insert("version".into(), "5".into());
    });
    match Shard::read(&future) {
        Err(e @ ShardError::Foreign { .. }) => {
            assert!(e.to_string().contains("reads versions 1 to 4"), "{e}")
        }
        other => panic!("expected Foreign, got {other:?}"),
    }
    // Checksums that do not cover the tensors exactly are refused too.
    let extra = dir.join("extra.safetensors");
    with_metadata(&v3, &extra, |info| {
        let mut map: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(&info["crc32"]).unwrap();
        map.insert("ghost".into(), "00000000".into());
        info.insert("crc32".into(), serde_json::Value::Object(map).to_string());
    });
    let msg = Shard::read(&extra).unwrap_err().to_string();
    assert!(msg.contains("records tensor `ghost`"), "{msg}");
    let bad_hex = dir.join("bad-hex.safetensors");
    with_metadata(&v3, &bad_hex, |info| {
        info.insert("crc32".into(), r#"{"planes":"xyz"}"#.into());
    });
    let msg = Shard::read(&bad_hex).unwrap_err().to_string();
    assert!(
        msg.contains("not a map of tensor names to 8 hex digits"),
        "{msg}"
    );
}

/// `engine shards verify`'s library: every file under the paths, a line's worth of reason for
/// each bad one, and the counts.
#[test]
fn verify_reports_each_bad_file_and_counts() {
    use shards::verify::{verify_paths, Summary};
    let dir = tmpdir("verify");
    let (shard, _) = liuzhou_shard(20, 9);
    let good = dir.join("a-good.safetensors");
    shard.write(&good).unwrap();
    as_version_1(&good, &dir.join("b-old.safetensors"));
    let mut bytes = fs::read(&good).unwrap();
    let (_, _, end) = tensor_ranges(&bytes)
        .into_iter()
        .find(|r| r.0 == "value")
        .unwrap();
    bytes[end - 1] ^= 1;
    fs::write(dir.join("c-damaged.safetensors"), &bytes).unwrap();
    let good_bytes = fs::read(&good).unwrap();
    fs::write(
        dir.join("d-truncated.safetensors"),
        &good_bytes[..good_bytes.len() - 10],
    )
    .unwrap();
    fs::create_dir_all(dir.join("sub")).unwrap();
    shard.write(&dir.join("sub/e-good.safetensors")).unwrap();
    // Left out: hidden files, unfinished writes, other extensions.
    fs::write(dir.join(".hidden.safetensors"), b"x").unwrap();
    fs::write(dir.join(".f.safetensors.7.tmp"), b"x").unwrap();
    fs::write(dir.join("notes.txt"), b"x").unwrap();
    // A checkpoint-like file: another format with checksums, good and damaged.
    let w = [1.5f32, -2.0, 0.25].map(f32::to_le_bytes).concat();
    let view = safetensors::tensor::TensorView::new(safetensors::Dtype::F32, vec![3], &w).unwrap();
    let info = [("format".to_string(), "some-model".to_string())].into();
    let model = shards::checksum::serialize(vec![("w", view)], info).unwrap();
    fs::write(dir.join("m-good.safetensors"), &model).unwrap();
    let mut damaged = model.clone();
    *damaged.last_mut().unwrap() ^= 0x80;
    let damaged_model = dir.join("m-damaged.safetensors");
    fs::write(&damaged_model, &damaged).unwrap();

    let mut lines = Vec::new();
    let summary = verify_paths(std::slice::from_ref(&dir), |check| {
        if let Err(e) = &check.result {
            lines.push(e.to_string());
        }
        Ok::<(), ShardError>(())
    })
    .unwrap();
    assert_eq!(
        summary,
        Summary {
            shards: 5,
            others: 2,
            bad: 3,
            unchecked: 1
        }
    );
    assert_eq!(
        summary.to_string(),
        "5 shards and 2 other files checked, 3 bad; 1 without checksums (their bytes could not \
         be checked)"
    );
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert!(lines[0].contains("c-damaged.safetensors: damaged: tensor `value` fails its checksum"));
    assert!(lines[1].contains("d-truncated.safetensors: not a readable safetensors file"));
    assert!(lines[2].contains("m-damaged.safetensors: damaged: tensor `w` fails"));

    // Files given by name; the plain summary.
    let summary = verify_paths(std::slice::from_ref(&good), |_| Ok::<(), ShardError>(())).unwrap();
    assert_eq!(summary.to_string(), "1 shard checked, 0 bad");
    // A path that cannot be listed is an error, not a bad file.
    assert!(matches!(
        verify_paths(&[dir.join("missing")], |_| Ok::<(), ShardError>(())),
        Err(ShardError::Io { .. })
    ));
}

#[test]
fn the_kind_of_policy_target_is_recorded() {
    let dir = tmpdir("target");
    let (mut shard, _) = liuzhou_shard(20, 3);
    shard.meta.policy_target = PolicyTarget::Improved;
    let path = dir.join("improved.safetensors");
    shard.write(&path).unwrap();
    assert_eq!(
        Shard::read(&path).unwrap().meta.policy_target,
        PolicyTarget::Improved
    );
    assert_eq!(
        ShardMeta::read(&path).unwrap().0.policy_target,
        PolicyTarget::Improved
    );
    // A shard without the key holds visit shares.
    let plain = dir.join("plain.safetensors");
    with_metadata(&path, &plain, |info| {
        info.remove("policy_target");
    });
    assert_eq!(
        Shard::read(&plain).unwrap().meta.policy_target,
        PolicyTarget::Visits
    );
    let bad = dir.join("bad.safetensors");
    with_metadata(&path, &bad, |info| {
        info.insert("policy_target".into(), "guesses".into());
    });
    match Shard::read(&bad) {
        Err(ShardError::Invalid { reason, .. }) => {
            assert!(
                reason.contains("`policy_target` is \"guesses\""),
                "{reason}"
            )
        }
        r => panic!("{r:?}"),
    }
}

/// A Xiangqi shard of the 16-plane encoding is carried over in place to the current one, its
/// samples then exactly as the encoder writes them; current shards are left alone, and an
/// encoding that cannot be carried over is an error naming the file.
#[test]
fn xiangqi_shards_of_the_earlier_encoding_are_carried_over() {
    use games::xiangqi::{encode, Xiangqi};
    use shards::upgrade::{upgrade_file, Upgrade};
    let dir = tmpdir("upgrade");
    let mut rng = SmallRng::seed_from_u64(3);
    let mut s = Xiangqi::default();
    let shape = s.shape();
    let (mut full, mut old) = (Vec::new(), Vec::new());
    while full.len() < 200 {
        let mut legal = Vec::new();
        s.legal_actions(&mut legal);
        if legal.is_empty() {
            s = Xiangqi::default();
            continue;
        }
        let mut planes = vec![0.0; shape.input_len()];
        s.encode(&mut planes);
        let policy = vec![(s.action_index(legal[0]) as u16, 1.0)];
        old.push(Sample {
            planes: planes[..encode::BASE_PLANES * 90].to_vec(),
            policy: policy.clone(),
            value: 0.5,
            aux: Default::default(),
        });
        full.push(Sample {
            planes,
            policy,
            value: 0.5,
            aux: Default::default(),
        });
        s.play(*legal.choose(&mut rng).unwrap()).unwrap();
    }
    let meta = ShardMeta {
        game: "xiangqi".into(),
        planes: encode::BASE_PLANES,
        height: shape.height,
        width: shape.width,
        policy_size: shape.policy_size,
        model: "random".into(),
        config: String::new(),
        created_unix: 1_700_000_000,
        games: 1,
        policy_target: PolicyTarget::Teacher,
    };
    let path = dir.join("old.safetensors");
    let shard = Shard {
        meta: meta.clone(),
        samples: old,
        symmetries: symmetry_maps(&s),
    };
    shard.write(&path).unwrap();

    let done = upgrade_file(&path).unwrap();
    assert_eq!(done, Upgrade::CarriedOver { from: 16, to: 20 });
    let back = Shard::read(&path).unwrap();
    assert_eq!(back.meta.planes, shape.planes);
    assert_eq!(back.meta.policy_target, PolicyTarget::Teacher);
    assert_eq!(back.samples, full);
    assert_eq!(upgrade_file(&path).unwrap(), Upgrade::Current);

    let (liuzhou, _) = liuzhou_shard(8, 1);
    let mut older = liuzhou.clone();
    older.meta.planes -= 4;
    older
        .samples
        .iter_mut()
        .for_each(|x| x.planes.truncate(older.meta.input_len()));
    let lz = dir.join("lz.safetensors");
    older.write(&lz).unwrap();
    let e = upgrade_file(&lz).unwrap_err().to_string();
    assert!(
        e.contains("lz.safetensors") && e.contains("liuzhou shard of"),
        "{e}"
    );
    assert_eq!(
        Shard::read(&lz).unwrap().samples,
        older.samples,
        "left as it was"
    );
    let _ = fs::remove_dir_all(&dir);
}

//! Runs every file of the `shard` fuzz corpus through the target's body on stable Rust, and
//! writes the corpus's seed files (`cargo test --release -p shards --test fuzz_corpus --
//! --ignored`): small valid shards and damaged copies of them.

use std::fs;
use std::path::{Path, PathBuf};

use games::liuzhou::Liuzhou;
use games::{Encoding, Game, Symmetry};
use shards::{symmetry_maps, Aux, Integrity, PolicyTarget, Sample, Shard, ShardMeta};

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/shard")
}

#[test]
fn shard_corpus() {
    let mut n = 0;
    for entry in fs::read_dir(corpus()).expect("fuzz/corpus/shard") {
        let path = entry.unwrap().path();
        shards::fuzzing::check_bytes(&fs::read(&path).unwrap());
        n += 1;
    }
    assert!(n > 0, "empty corpus");
}

fn meta(game: &str, planes: usize, side: usize, policy_size: usize) -> ShardMeta {
    ShardMeta {
        game: game.into(),
        planes,
        height: side,
        width: side,
        policy_size,
        model: "random".into(),
        config: "game: {name: liuzhou}\n".into(),
        created_unix: 1_700_000_000,
        games: 1,
        policy_target: PolicyTarget::Visits,
    }
}

/// Two positions of a Liuzhou game, encoded as self-play encodes them, the first with the
/// second's policy as its reply and both with the ownership and score of their own position.
fn liuzhou() -> Shard {
    let mut s = Liuzhou::default();
    let shape = s.shape();
    let mut samples: Vec<Sample> = Vec::new();
    for value in [1.0, -1.0] {
        let mut legal = Vec::new();
        s.legal_actions(&mut legal);
        let mut planes = vec![0.0; shape.input_len()];
        s.encode(&mut planes);
        let policy: Vec<(u16, f32)> = legal[..2]
            .iter()
            .map(|&a| (s.action_index(a) as u16, 0.5))
            .collect();
        let aux = Aux {
            ownership: s.final_ownership(s.to_act()),
            score: s.final_score(s.to_act()),
            reply: None,
            surprise: Some(0.5),
        };
        if let Some(last) = samples.last_mut() {
            last.aux.reply = Some(policy.clone());
        }
        samples.push(Sample {
            planes,
            policy,
            value,
            aux,
        });
        s.play(legal[0]).unwrap();
    }
    Shard {
        meta: meta("liuzhou", shape.planes, shape.height, shape.policy_size),
        samples,
        symmetries: symmetry_maps(&s),
    }
}

/// A 2 × 2 board of one plane and five policy indices, mirrored once.
fn tiny() -> Shard {
    Shard {
        meta: ShardMeta {
            policy_target: PolicyTarget::Improved,
            ..meta("go", 1, 2, 5)
        },
        samples: vec![
            Sample {
                planes: vec![0.0, 1.0, 0.5, -1.0],
                policy: vec![(0, 0.25), (4, 0.75)],
                value: 0.0,
                aux: Aux {
                    ownership: Some(vec![1.0, -1.0, 0.0, 0.5]),
                    score: Some(2.5),
                    reply: Some(vec![(1, 0.5), (4, 0.5)]),
                    surprise: Some(0.75),
                },
            },
            Sample {
                planes: vec![1.0; 4],
                policy: vec![],
                value: 1.0,
                aux: Aux {
                    score: Some(-3.5),
                    ..Aux::default()
                },
            },
        ],
        symmetries: vec![
            (Symmetry::IDENTITY, vec![0, 1, 2, 3, 4]),
            (Symmetry::MIRROR_FILES, vec![1, 0, 3, 2, u16::MAX]),
        ],
    }
}

/// A fixture of `tests/data`: `tiny()` as the writers of versions 1 and 2 wrote it (without
/// its auxiliary targets) and as version 3 wrote it (without its surprise).
fn fixture(name: &str) -> Vec<u8> {
    fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data")
            .join(name),
    )
    .unwrap()
}

/// Shards as versions 1 and 2 wrote them (files kept from then) read with every auxiliary
/// target absent, and are written again as the current version, which reads back the same.
#[test]
fn versions_1_to_3_read_with_what_they_had() {
    let mut want = tiny();
    want.samples.iter_mut().for_each(|s| s.aux = Aux::default());
    for (name, version, integrity) in [
        ("tiny_v1.safetensors", "1", Integrity::NoChecksum),
        ("tiny_v2.safetensors", "2", Integrity::Verified),
    ] {
        let bytes = fixture(name);
        let (_, header) = safetensors::SafeTensors::read_metadata(&bytes).unwrap();
        assert_eq!(header.metadata().as_ref().unwrap()["version"], version);
        let (shard, got) = Shard::from_bytes_checked(&bytes, Path::new(name)).unwrap();
        assert_eq!(got, integrity, "{name}");
        assert_eq!(shard.meta, want.meta, "{name}");
        assert_eq!(shard.samples, want.samples, "{name}");
        assert_eq!(shard.symmetries, want.symmetries, "{name}");
        let again = Shard::from_bytes(&shard.to_bytes().unwrap(), Path::new(name)).unwrap();
        assert_eq!(again.samples, want.samples, "{name}");
    }
    // Version 3 (a file kept from then) reads with its targets and no surprise.
    let mut want = tiny();
    want.samples.iter_mut().for_each(|s| s.aux.surprise = None);
    let bytes = fixture("tiny_v3.safetensors");
    let (_, header) = safetensors::SafeTensors::read_metadata(&bytes).unwrap();
    assert_eq!(header.metadata().as_ref().unwrap()["version"], "3");
    let (shard, got) = Shard::from_bytes_checked(&bytes, Path::new("v3")).unwrap();
    assert_eq!(got, Integrity::Verified);
    assert_eq!(shard.samples, want.samples);
    let again = Shard::from_bytes(&shard.to_bytes().unwrap(), Path::new("v3")).unwrap();
    assert_eq!(again.samples, want.samples);
    // The current version keeps them all.
    let bytes = tiny().to_bytes().unwrap();
    let back = Shard::from_bytes(&bytes, Path::new("tiny")).unwrap();
    assert_eq!(back.samples, tiny().samples);
}

/// A shard of no positions whose board is 2²² × 2²² × 2²²: its tensors are all empty but its
/// input length overflows `usize`.
fn overflowing_board() -> Vec<u8> {
    use safetensors::tensor::{Dtype, TensorView};
    let big = 1usize << 22;
    let zero = 0u32.to_le_bytes();
    let sym_policy: Vec<u8> = (0..5u16).flat_map(u16::to_le_bytes).collect();
    let tensors = vec![
        (
            "planes",
            TensorView::new(Dtype::F32, vec![0, big, big, big], &[]).unwrap(),
        ),
        (
            "policy_offsets",
            TensorView::new(Dtype::U32, vec![1], &zero).unwrap(),
        ),
        (
            "policy_index",
            TensorView::new(Dtype::U16, vec![0], &[]).unwrap(),
        ),
        (
            "policy_prob",
            TensorView::new(Dtype::F32, vec![0], &[]).unwrap(),
        ),
        ("value", TensorView::new(Dtype::F32, vec![0], &[]).unwrap()),
        (
            "symmetry_bits",
            TensorView::new(Dtype::U8, vec![1], &[0]).unwrap(),
        ),
        (
            "symmetry_policy",
            TensorView::new(Dtype::U16, vec![1, 5], &sym_policy).unwrap(),
        ),
    ];
    let big = big.to_string();
    let info = [
        ("format", "engine-shard"),
        ("version", "2"),
        ("game", "go"),
        ("planes", big.as_str()),
        ("height", big.as_str()),
        ("width", big.as_str()),
        ("policy_size", "5"),
        ("positions", "0"),
        ("model", "random"),
        ("config", ""),
        ("created_unix", "0"),
        ("games", "0"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    shards::checksum::serialize(tensors, info).unwrap()
}

#[test]
fn a_board_too_large_to_count_is_refused() {
    let bytes = overflowing_board();
    let path = Path::new("big.safetensors");
    let e = Shard::from_bytes(&bytes, path).unwrap_err().to_string();
    assert!(e.contains("too large to count"), "{e}");
    let e = ShardMeta::read_from(&mut &bytes[..], bytes.len() as u64, path).unwrap_err();
    assert!(e.to_string().contains("too large to count"), "{e}");
}

#[test]
#[ignore = "writes the seed files of fuzz/corpus/shard"]
fn write_seed_corpus() {
    let dir = corpus();
    fs::create_dir_all(&dir).unwrap();
    let liuzhou = liuzhou().to_bytes().unwrap();
    let tiny = tiny().to_bytes().unwrap();
    let mut flipped = tiny.clone();
    let last = flipped.len() - 3;
    flipped[last] ^= 0x10;
    let mut flipped_header = tiny.clone();
    flipped_header[20] ^= 0x01;
    let seeds: [(&str, Vec<u8>); 10] = [
        ("liuzhou", liuzhou.clone()),
        ("tiny", tiny.clone()),
        ("tiny_v1", fixture("tiny_v1.safetensors")),
        ("tiny_v2", fixture("tiny_v2.safetensors")),
        ("tiny_v3", fixture("tiny_v3.safetensors")),
        ("damaged_truncated", tiny[..tiny.len() / 2].to_vec()),
        ("damaged_flipped_data", flipped),
        ("damaged_flipped_header", flipped_header),
        (
            "damaged_liuzhou_short",
            liuzhou[..liuzhou.len() - 1].to_vec(),
        ),
        ("bad_input_len_overflow", overflowing_board()),
    ];
    for (name, bytes) in seeds {
        assert!(bytes.len() < 64 * 1024, "{name}: {} bytes", bytes.len());
        fs::write(dir.join(name), bytes).unwrap();
    }
}

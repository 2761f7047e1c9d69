//! Runs every file of the `shard` fuzz corpus through the target's body on stable Rust, and
//! writes the corpus's seed files (`cargo test --release -p shards --test fuzz_corpus --
//! --ignored`): small valid shards and damaged copies of them.

use std::fs;
use std::path::{Path, PathBuf};

use games::liuzhou::Liuzhou;
use games::{Game, Symmetry};
use safetensors::SafeTensors;
use shards::{symmetry_maps, PolicyTarget, Sample, Shard, ShardMeta};

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

/// Two positions of a Liuzhou game, encoded as self-play encodes them.
fn liuzhou() -> Shard {
    let mut s = Liuzhou::default();
    let shape = s.shape();
    let mut samples = Vec::new();
    for value in [1.0, -1.0] {
        let mut legal = Vec::new();
        s.legal_actions(&mut legal);
        let mut planes = vec![0.0; shape.input_len()];
        s.encode(&mut planes);
        let policy = legal[..2]
            .iter()
            .map(|&a| (s.action_index(a) as u16, 0.5))
            .collect();
        samples.push(Sample {
            planes,
            policy,
            value,
            aux: Default::default(),
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
                aux: Default::default(),
            },
            Sample {
                planes: vec![1.0; 4],
                policy: vec![],
                value: 1.0,
                aux: Default::default(),
            },
        ],
        symmetries: vec![
            (Symmetry::IDENTITY, vec![0, 1, 2, 3, 4]),
            (Symmetry::MIRROR_FILES, vec![1, 0, 3, 2, u16::MAX]),
        ],
    }
}

/// `bytes` as version 1 wrote them: no checksums.
fn version_1(bytes: &[u8]) -> Vec<u8> {
    let (_, header) = SafeTensors::read_metadata(bytes).unwrap();
    let st = SafeTensors::deserialize(bytes).unwrap();
    let mut info = header.metadata().clone().unwrap();
    info.remove("crc32");
    info.insert("version".into(), "1".into());
    safetensors::serialize(st.tensors(), Some(info)).unwrap()
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
    let seeds: [(&str, Vec<u8>); 8] = [
        ("liuzhou", liuzhou.clone()),
        ("tiny", tiny.clone()),
        ("tiny_v1", version_1(&tiny)),
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

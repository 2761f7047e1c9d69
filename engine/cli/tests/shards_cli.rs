//! `engine shards verify`: one line per bad file (the file, the tensor, why), a summary line,
//! and exit code 0 when all are good, 1 when any is bad, 2 when a path cannot be read.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use games::liuzhou::Liuzhou;
use games::{Encoding, Game};
use shards::{Sample, Shard, ShardMeta};

fn tmpdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("shards-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn verify(paths: &[&Path]) -> (Option<i32>, String, String) {
    let out: Output = Command::new(env!("CARGO_BIN_EXE_engine"))
        .args(["shards", "verify"])
        .args(paths)
        .env("RUST_LOG", "warn")
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A shard of the start position's encoding, `n` times, at `path`.
fn shard(path: &Path, n: usize) {
    let s = Liuzhou::default();
    let shape = s.shape();
    let mut planes = vec![0.0; shape.input_len()];
    s.encode(&mut planes);
    let mut legal = Vec::new();
    s.legal_actions(&mut legal);
    let sample = Sample {
        planes,
        policy: vec![(s.action_index(legal[0]) as u16, 1.0)],
        value: 0.0,
        aux: Default::default(),
    };
    Shard {
        meta: ShardMeta {
            game: Liuzhou::NAME.into(),
            planes: shape.planes,
            height: shape.height,
            width: shape.width,
            policy_size: shape.policy_size,
            model: "test".into(),
            config: String::new(),
            created_unix: 0,
            games: 1,
            policy_target: shards::PolicyTarget::Visits,
        },
        samples: vec![sample; n],
        symmetries: shards::symmetry_maps(&s),
    }
    .write(path)
    .unwrap();
}

/// Flips one bit in the middle of tensor `name` of the safetensors file at `path` (an 8-byte
/// header length, a JSON header giving each tensor's `data_offsets`, then the data).
fn damage(path: &Path, name: &str) {
    let mut bytes = std::fs::read(path).unwrap();
    let n = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
    let header: serde_json::Value = serde_json::from_slice(&bytes[8..8 + n]).unwrap();
    let offsets = &header[name]["data_offsets"];
    let (a, b) = (offsets[0].as_u64().unwrap(), offsets[1].as_u64().unwrap());
    bytes[8 + n + (a + b) as usize / 2] ^= 0x04;
    std::fs::write(path, bytes).unwrap();
}

#[test]
fn verify_names_bad_files_and_sets_the_exit_code() {
    let dir = tmpdir("verify");
    let data = dir.join("shards");
    std::fs::create_dir_all(&data).unwrap();
    shard(&data.join("0001.safetensors"), 10);
    shard(&data.join("0002.safetensors"), 10);

    let (code, stdout, stderr) = verify(&[&data]);
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    assert_eq!(stdout, "2 shards checked, 0 bad\n");

    let bad = data.join("0002.safetensors");
    damage(&bad, "policy_prob");
    let (code, stdout, stderr) = verify(&[&data]);
    assert_eq!(code, Some(1), "{stdout}\n{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{stdout}");
    assert!(
        lines[0].starts_with(&format!(
            "{}: damaged: tensor `policy_prob` fails its checksum (CRC-32 ",
            bad.display()
        )),
        "{stdout}"
    );
    assert_eq!(lines[1], "2 shards checked, 1 bad");

    // A file named directly, good: exit code 0.
    let (code, stdout, _) = verify(&[&data.join("0001.safetensors")]);
    assert_eq!(
        (code, stdout.as_str()),
        (Some(0), "1 shard checked, 0 bad\n")
    );

    // A path that cannot be read is an error (exit code 2) naming it.
    let missing = dir.join("missing");
    let (code, stdout, stderr) = verify(&[&data, &missing]);
    assert_eq!(code, Some(2), "{stdout}\n{stderr}");
    assert!(stderr.starts_with("error: "), "{stderr}");
    assert!(stderr.contains(&missing.display().to_string()), "{stderr}");
}

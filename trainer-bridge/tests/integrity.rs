//! Damaged files: a changed byte in a shard or a checkpoint is found and named, `fit` trains on
//! the shards that are left, and files written before checksums existed still load, with a
//! warning.

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use candle_core::Device;
use games::liuzhou::Liuzhou;
use games::{Encoding, Game};
use shards::{Sample, Shard, ShardMeta};
use trainer_bridge::{write_model, Checkpoint, ModelMeta, Net, NetConfig, NetError};

fn tmpdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("tb-integrity-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A config for a tiny network and short fits, in `dir`.
fn config(dir: &Path) -> PathBuf {
    let path = dir.join("tiny.yaml");
    std::fs::write(
        &path,
        "network:\n  blocks: 1\n  channels: 8\nfit:\n  batch_size: 8\n  window_samples: 10000\n",
    )
    .unwrap();
    path
}

/// A generation-0 Liuzhou checkpoint (and its ONNX model) for `config`, at `<dir>/0000`.
fn checkpoint(dir: &Path, config: &Path) -> PathBuf {
    let network = NetConfig::from_yaml_file(config).unwrap();
    let shape = Liuzhou::default().shape();
    let (varmap, _) = Net::fresh(&network, shape, &Device::Cpu).unwrap();
    let meta = ModelMeta {
        game: Liuzhou::NAME.into(),
        shape,
        network,
        generation: 0,
    };
    write_model(&varmap, &meta, &dir.join("0000")).unwrap().0
}

/// A Liuzhou shard of `n` positions along one game at `path`.
fn shard(path: &Path, n: usize) {
    let mut s = Liuzhou::default();
    let shape = s.shape();
    let mut samples = Vec::new();
    let mut legal = Vec::new();
    while samples.len() < n {
        legal.clear();
        s.legal_actions(&mut legal);
        if legal.is_empty() {
            s = Liuzhou::default();
            continue;
        }
        let mut planes = vec![0.0; shape.input_len()];
        s.encode(&mut planes);
        samples.push(Sample {
            planes,
            policy: vec![(s.action_index(legal[0]) as u16, 1.0)],
            value: 0.0,
            aux: Default::default(),
        });
        s.play(legal[samples.len() % legal.len()]).unwrap();
    }
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
        samples,
        symmetries: shards::symmetry_maps(&Liuzhou::default()),
    }
    .write(path)
    .unwrap();
}

/// Where each tensor's bytes lie in a safetensors file: (name, start, end).
fn tensor_ranges(bytes: &[u8]) -> Vec<(String, usize, usize)> {
    let (n, header) = safetensors::SafeTensors::read_metadata(bytes).unwrap();
    let mut ranges: Vec<_> = header
        .tensors()
        .into_iter()
        .map(|(name, info)| {
            (
                name,
                8 + n + info.data_offsets.0,
                8 + n + info.data_offsets.1,
            )
        })
        .collect();
    ranges.sort_by_key(|r| r.1);
    ranges
}

/// The file at `path` with one byte of tensor `name` changed: an f32 of 0.0 becomes 2.0 where
/// there is one (a number every other check accepts), else the middle byte flips.
fn damage(path: &Path, name: &str) {
    let mut bytes = std::fs::read(path).unwrap();
    let (_, start, end) = tensor_ranges(&bytes)
        .into_iter()
        .find(|r| r.0 == name)
        .unwrap();
    match bytes[start..end].chunks_exact(4).position(|c| c == [0; 4]) {
        Some(i) => bytes[start + 4 * i + 3] = 0x40,
        None => bytes[(start + end) / 2] ^= 0x10,
    }
    std::fs::write(path, bytes).unwrap();
}

/// The file at `path` as the previous version wrote it: no `crc32`, version 1.
fn as_version_1(path: &Path) {
    let bytes = std::fs::read(path).unwrap();
    let (_, header) = safetensors::SafeTensors::read_metadata(&bytes).unwrap();
    let st = safetensors::SafeTensors::deserialize(&bytes).unwrap();
    let mut info: HashMap<String, String> = header.metadata().clone().unwrap();
    info.remove(shards::checksum::KEY);
    info.insert("version".into(), "1".into());
    let out = safetensors::serialize(st.tensors(), Some(info)).unwrap();
    std::fs::write(path, out).unwrap();
}

fn fit(shards: &Path, model: &Path, out: &Path, config: &Path) -> Output {
    let args: Vec<OsString> = vec![
        "fit".into(),
        shards.into(),
        "--model".into(),
        model.into(),
        "--out".into(),
        out.into(),
        "--name".into(),
        "0001".into(),
        "--config".into(),
        config.into(),
        "--steps".into(),
        "2".into(),
    ];
    Command::new(env!("CARGO_BIN_EXE_trainer-bridge"))
        .args(args)
        .env("RUST_LOG", "warn")
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

fn text(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_changed_byte_in_any_checkpoint_tensor_is_refused() {
    let dir = tmpdir("checkpoint");
    let good = checkpoint(&dir, &config(&dir));
    let loaded = Checkpoint::read(&good, &Device::Cpu).unwrap();
    assert_eq!(loaded.meta.unwrap().generation, 0);
    let check = shards::verify::check_file(&good);
    assert_eq!(
        check.kind,
        shards::verify::Kind::Other(Some(trainer_bridge::net::CHECKPOINT_FORMAT.into()))
    );
    assert_eq!(check.result.unwrap(), shards::Integrity::Verified);

    let names: Vec<String> = tensor_ranges(&std::fs::read(&good).unwrap())
        .into_iter()
        .map(|r| r.0)
        .collect();
    assert!(names.len() > 10, "{names:?}");
    for name in names {
        let bad = dir.join(format!("bad-{name}.safetensors"));
        std::fs::copy(&good, &bad).unwrap();
        damage(&bad, &name);
        match Checkpoint::read(&bad, &Device::Cpu) {
            Err(e @ NetError::Damaged { .. }) => {
                let msg = e.to_string();
                assert!(msg.starts_with(&bad.display().to_string()), "{msg}");
                assert!(
                    msg.contains(&format!("tensor `{name}` fails its checksum")),
                    "{msg}"
                );
            }
            Err(e) => panic!("{name}: expected Damaged, got {e}"),
            Ok(_) => panic!("{name}: a damaged checkpoint loaded"),
        }
        assert!(shards::verify::check_file(&bad).result.is_err());
    }
}

#[test]
fn checkpoints_without_checksums_still_load() {
    let dir = tmpdir("old-checkpoint");
    let good = checkpoint(&dir, &config(&dir));
    let meta = Checkpoint::read(&good, &Device::Cpu).unwrap().meta;
    let old = dir.join("old.safetensors");
    std::fs::copy(&good, &old).unwrap();
    as_version_1(&old);
    let loaded = Checkpoint::read(&old, &Device::Cpu).unwrap();
    assert_eq!(loaded.meta, meta);
    assert_eq!(
        shards::verify::check_file(&old).result.unwrap(),
        shards::Integrity::NoChecksum
    );

    // Version 2 without its checksums is not a checkpoint this build wrote.
    let bytes = std::fs::read(&good).unwrap();
    let (_, header) = safetensors::SafeTensors::read_metadata(&bytes).unwrap();
    let st = safetensors::SafeTensors::deserialize(&bytes).unwrap();
    let mut info = header.metadata().clone().unwrap();
    info.remove(shards::checksum::KEY);
    let stripped = dir.join("stripped.safetensors");
    std::fs::write(
        &stripped,
        safetensors::serialize(st.tensors(), Some(info)).unwrap(),
    )
    .unwrap();
    match Checkpoint::read(&stripped, &Device::Cpu) {
        Err(e @ NetError::NotCheckpoint { .. }) => {
            assert!(e.to_string().contains("without `crc32` metadata"), "{e}")
        }
        Err(e) => panic!("expected NotCheckpoint, got {e}"),
        Ok(_) => panic!("a version 2 checkpoint without checksums loaded"),
    }
}

/// `fit` skips a damaged shard with a warning naming the file and the tensor, and trains on
/// the others; with only damaged shards it fails (exit code 2) and says why.
#[test]
fn fit_skips_a_damaged_shard_and_trains_on_the_rest() {
    let dir = tmpdir("fit-damaged");
    let config = config(&dir);
    let model = checkpoint(&dir, &config);
    let data = dir.join("shards");
    for i in 1..=3 {
        shard(&data.join(format!("{i:04}.safetensors")), 40);
    }
    let damaged = data.join("0002.safetensors");
    damage(&damaged, "planes");

    let out = fit(&data, &model, &dir.join("out"), &config);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(
        stderr.contains(&format!(
            "skipping shard: {}: damaged: tensor `planes` fails its checksum",
            damaged.display()
        )),
        "{stderr}"
    );
    assert!(stdout.contains("on 80 samples from 2 shards"), "{stdout}");
    assert!(dir.join("out/0001.safetensors").is_file());

    let only = dir.join("only-damaged");
    std::fs::create_dir_all(&only).unwrap();
    std::fs::copy(&damaged, only.join("0002.safetensors")).unwrap();
    let out = fit(&only, &model, &dir.join("out2"), &config);
    let stderr = testkit::refused(&out, &["tensor `planes` fails its checksum"]);
    assert!(
        stderr.contains(&format!(
            "error: no readable shard with samples in {} (1 skipped",
            only.display()
        )),
        "{stderr}"
    );
    assert!(!dir.join("out2").exists());
}

/// Shards and a checkpoint of the previous version train, with one warning for the directory
/// and one for the checkpoint.
#[test]
fn fit_reads_version_1_files_with_one_warning_each() {
    let dir = tmpdir("fit-v1");
    let config = config(&dir);
    let model = checkpoint(&dir, &config);
    as_version_1(&model);
    let data = dir.join("shards");
    for i in 1..=3 {
        let path = data.join(format!("{i:04}.safetensors"));
        shard(&path, 30);
        as_version_1(&path);
    }
    let out = fit(&data, &model, &dir.join("out"), &config);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("from 3 shards"), "{stdout}");
    assert_eq!(
        stderr
            .matches("3 of the 3 shards read are of version 1 and carry no checksums")
            .count(),
        1,
        "{stderr}"
    );
    assert!(stderr.contains(&data.display().to_string()), "{stderr}");
    assert_eq!(
        stderr
            .matches("the checkpoint carries no checksums")
            .count(),
        1,
        "{stderr}"
    );
    // What fit writes carries checksums again.
    let written = dir.join("out/0001.safetensors");
    assert_eq!(
        shards::verify::check_file(&written).result.unwrap(),
        shards::Integrity::Verified
    );
}

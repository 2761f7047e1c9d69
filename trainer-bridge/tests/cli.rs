//! The `trainer-bridge` command line refuses bad arguments with exit code 2 and one line that
//! names the argument or file at fault, and writes nothing.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn tmpdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("tb-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn config() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/liuzhou.yaml")
}

fn run(args: &[OsString]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_trainer-bridge"))
        .args(args)
        .env("RUST_BACKTRACE", "0")
        .env("RUST_LOG", "off")
        .output()
        .unwrap()
}

/// Runs the command, asserts that it succeeded, and returns its standard output.
fn succeeded(args: &[OsString]) -> String {
    let out = run(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Runs and expects a refusal; returns stderr.
fn refused(args: &[OsString]) -> String {
    let out = run(args);
    let stderr = testkit::refused(&out, &[]);
    assert!(stderr.starts_with("error: "), "{args:?}: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    stderr
}

/// A generation-0 Liuzhou model in `dir`/0000.
fn init(dir: &Path) -> PathBuf {
    let stem = dir.join("0000");
    succeeded(&args(
        &["init", "--game", "liuzhou", "--config"],
        [config(), "--out".into(), stem.clone()],
    ));
    stem.with_extension("safetensors")
}

/// `words` then `paths`, as arguments.
fn args<const N: usize>(words: &[&str], paths: [PathBuf; N]) -> Vec<OsString> {
    words
        .iter()
        .map(OsString::from)
        .chain(paths.into_iter().map(PathBuf::into_os_string))
        .collect()
}

fn fit_args(shards: &Path, model: &Path, out: &Path, extra: &[&str]) -> Vec<OsString> {
    let mut v = args(
        &["fit"],
        [
            shards.into(),
            "--model".into(),
            model.into(),
            "--out".into(),
            out.into(),
            "--config".into(),
            config(),
        ],
    );
    v.extend(extra.iter().map(OsString::from));
    v
}

/// `--name` is a file stem inside `--out`: `../x` would escape it, `""` and `.x` would write
/// hidden files.
#[test]
fn fit_refuses_names_that_are_not_plain_stems() {
    let dir = tmpdir("name");
    let model = init(&dir);
    let out = dir.join("out/deeper");
    for (name, reason) in [
        ("../../escape", "contains a path separator"),
        ("a/b", "contains a path separator"),
        ("", "is empty"),
        (".hidden", "starts with '.'"),
    ] {
        let err = refused(&fit_args(&dir, &model, &out, &["--name", name]));
        assert!(err.contains(&format!("--name {name:?}: {reason}")), "{err}");
    }
    assert!(!dir.join("escape.onnx").exists() && !dir.join("out").exists());
}

/// A damaged checkpoint is reported as such (also when its name is not a number, which would
/// otherwise ask for --name), without a guess about shapes.
#[test]
fn fit_names_a_corrupt_checkpoint() {
    let dir = tmpdir("corrupt");
    let good = init(&dir);
    let bytes = std::fs::read(&good).unwrap();
    for name in ["0005.safetensors", "best.safetensors"] {
        let bad = dir.join(name);
        std::fs::write(&bad, &bytes[..bytes.len() / 3]).unwrap();
        let err = refused(&fit_args(&dir, &bad, &dir, &[]));
        assert!(
            err.contains(&format!(
                "{}: not a valid safetensors checkpoint",
                bad.display()
            )),
            "{err}"
        );
        assert!(
            !err.contains("--name") && !err.contains("TensorShape"),
            "{err}"
        );
    }
    // A valid checkpoint whose name is no number still needs --name.
    let named = dir.join("best.safetensors");
    std::fs::copy(&good, &named).unwrap();
    let err = refused(&fit_args(&dir, &named, &dir, &[]));
    assert!(err.contains("give --name"), "{err}");
}

/// `--out` naming a regular file is refused before any training, naming the path.
#[test]
fn fit_refuses_an_out_that_is_a_file() {
    let dir = tmpdir("out");
    let model = init(&dir);
    let file = dir.join("a-file");
    std::fs::write(&file, b"x").unwrap();
    let err = refused(&fit_args(&dir, &model, &file, &[]));
    assert!(
        err.contains(&format!("--out {}: not a directory", file.display())),
        "{err}"
    );
}

/// An io error appears once in the message, not once per layer.
#[test]
fn io_errors_are_reported_once() {
    let dir = tmpdir("io");
    let model = init(&dir);
    let missing = dir.join("no-shards");
    let err = refused(&fit_args(&missing, &model, &dir, &[]));
    assert!(err.contains("no-shards"), "{err}");
    assert_eq!(err.matches("No such file").count(), 1, "{err}");
    let err = refused(&args(
        &["init", "--game", "liuzhou", "--config"],
        [dir.join("absent.yaml"), "--out".into(), dir.join("m")],
    ));
    assert!(err.contains("absent.yaml: cannot read"), "{err}");
    assert_eq!(err.matches("No such file").count(), 1, "{err}");
}

/// `upgrade` carries a checkpoint of the game's earlier, smaller encoding over to the current
/// one, and refuses one that needs nothing or that it cannot read.
#[test]
fn upgrade_grows_the_input_planes_and_refuses_what_it_cannot() {
    use candle_core::Device;
    use trainer_bridge::{Checkpoint, ModelMeta, Net, NetConfig};
    let dir = tmpdir("upgrade");
    let shape = games::shape_of("liuzhou", None).unwrap();
    let older = games::TensorShape {
        planes: shape.planes - 4,
        ..shape
    };
    let network = NetConfig::from_yaml_file(&config()).unwrap();
    let (varmap, _) = Net::seeded(&network, older, &Device::Cpu, 5).unwrap();
    let old = dir.join("old.safetensors");
    let meta = ModelMeta {
        game: "liuzhou".into(),
        shape: older,
        network: network.clone(),
        generation: 7,
    };
    Net::save(&varmap, &meta, &old).unwrap();
    let new = dir.join("sub/new");
    let stdout = succeeded(&args(
        &["upgrade", "--model"],
        [old.clone(), "--out".into(), new.clone()],
    ));
    assert!(
        stdout.contains("liuzhou generation 7 carried over to"),
        "{stdout}"
    );
    let grown = new.with_extension("safetensors");
    assert!(new.with_extension("onnx").is_file());
    let checkpoint = Checkpoint::read(&grown, &Device::Cpu).unwrap();
    assert_eq!(
        checkpoint.meta,
        Some(ModelMeta {
            shape,
            ..meta.clone()
        })
    );
    Net::from_checkpoint(&checkpoint, &network, shape, &Device::Cpu).unwrap();

    let e = refused(&args(
        &["upgrade", "--model"],
        [grown, "--out".into(), dir.join("again")],
    ));
    assert!(e.contains("already takes 19 input planes"), "{e}");
    assert!(!dir.join("again.onnx").exists());
    let e = refused(&args(
        &["upgrade", "--model"],
        [
            dir.join("missing.safetensors"),
            "--out".into(),
            dir.join("x"),
        ],
    ));
    assert!(
        e.contains("missing.safetensors") && e.contains("cannot read"),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `upgrade --config` widens the policy and value heads to the config's channels and adds its
/// residual blocks; the grown network computes what the checkpoint's did, and a config that
/// changes anything else, or shrinks the network, is refused.
#[test]
fn upgrade_grows_the_network_and_keeps_what_it_computes() {
    use candle_core::{Device, Tensor};
    use trainer_bridge::{Checkpoint, ModelMeta, Net, NetConfig};
    let dir = tmpdir("widen");
    let shape = games::shape_of("liuzhou", None).unwrap();
    let narrow = NetConfig {
        blocks: 1,
        channels: 8,
        policy_channels: 2,
        value_channels: 1,
        value_hidden: 16,
        ..NetConfig::default()
    };
    let (varmap, _) = Net::seeded(&narrow, shape, &Device::Cpu, 3).unwrap();
    let old = dir.join("old.safetensors");
    let meta = ModelMeta {
        game: "liuzhou".into(),
        shape,
        network: narrow.clone(),
        generation: 9,
    };
    Net::save(&varmap, &meta, &old).unwrap();
    let write_config = |name: &str, network: &NetConfig| {
        let path = dir.join(name);
        let text = serde_yaml::to_string(&BTreeMap::from([("network", network)])).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    };
    let wide = NetConfig {
        blocks: 3,
        policy_channels: 8,
        value_channels: 4,
        ..narrow.clone()
    };
    let new = dir.join("wide");
    let stdout = succeeded(&args(
        &["upgrade", "--model"],
        [
            old.clone(),
            "--out".into(),
            new.clone(),
            "--config".into(),
            write_config("wide.yaml", &wide),
        ],
    ));
    assert!(
        stdout.contains("3 blocks of 8 channels, heads of 8 policy and 4 value channels"),
        "{stdout}"
    );
    assert!(new.with_extension("onnx").is_file());
    let widened = Checkpoint::read(&new.with_extension("safetensors"), &Device::Cpu).unwrap();
    assert_eq!(
        widened.meta,
        Some(ModelMeta {
            network: wide.clone(),
            ..meta.clone()
        })
    );

    // The same positions through both networks: the same logits and values.
    let (_, before) = Net::load(&old, &narrow, shape, &Device::Cpu).unwrap();
    let (_, after) = Net::from_checkpoint(&widened, &wide, shape, &Device::Cpu).unwrap();
    let n = 5 * shape.planes * shape.height * shape.width;
    let x: Vec<f32> = (0..n).map(|i| ((i * 7919) % 13) as f32 / 13.0).collect();
    let x = Tensor::from_vec(
        x,
        (5, shape.planes, shape.height, shape.width),
        &Device::Cpu,
    )
    .unwrap();
    let trainer_bridge::net::Outputs {
        policy: p0,
        value: v0,
        ..
    } = before.forward_t(&x, false).unwrap();
    let trainer_bridge::net::Outputs {
        policy: p1,
        value: v1,
        ..
    } = after.forward_t(&x, false).unwrap();
    let gap = |a: &Tensor, b: &Tensor| {
        let (a, b) = (
            a.flatten_all().unwrap().to_vec1::<f32>().unwrap(),
            b.flatten_all().unwrap().to_vec1::<f32>().unwrap(),
        );
        assert_eq!(a.len(), b.len());
        a.iter()
            .zip(&b)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f32::max)
    };
    assert!(gap(&p0, &p1) < 1e-5, "policy moved by {}", gap(&p0, &p1));
    assert!(gap(&v0, &v1) < 1e-5, "value moved by {}", gap(&v0, &v1));
    // So does a training step's forward pass (batch statistics), where the fit starts.
    let trainer_bridge::net::Outputs {
        policy: p0,
        value: v0,
        ..
    } = before.forward_t(&x, true).unwrap();
    let trainer_bridge::net::Outputs {
        policy: p1,
        value: v1,
        ..
    } = after.forward_t(&x, true).unwrap();
    assert!(gap(&p0, &p1) < 1e-4, "policy moved by {}", gap(&p0, &p1));
    assert!(gap(&v0, &v1) < 1e-4, "value moved by {}", gap(&v0, &v1));

    // A wider trunk is refused, and nothing is written.
    let wider = NetConfig {
        channels: 16,
        ..wide.clone()
    };
    let e = refused(&args(
        &["upgrade", "--model"],
        [
            old.clone(),
            "--out".into(),
            dir.join("wider"),
            "--config".into(),
            write_config("wider.yaml", &wider),
        ],
    ));
    assert!(
        e.contains(
            "only the heads' channels, the number of blocks and the auxiliary heads can grow"
        ) && e.contains("network.channels"),
        "{e}"
    );
    let narrower = NetConfig {
        policy_channels: 1,
        ..narrow.clone()
    };
    let e = refused(&args(
        &["upgrade", "--model"],
        [
            old.clone(),
            "--out".into(),
            dir.join("narrower"),
            "--config".into(),
            write_config("narrower.yaml", &narrower),
        ],
    ));
    assert!(e.contains("cannot shrink"), "{e}");
    let e = refused(&args(
        &["upgrade", "--model"],
        [
            old,
            "--out".into(),
            dir.join("same"),
            "--config".into(),
            write_config("same.yaml", &narrow),
        ],
    ));
    assert!(e.contains("nothing to carry over"), "{e}");
    for name in ["wider", "narrower", "same"] {
        assert!(!dir.join(name).with_extension("onnx").exists(), "{name}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `upgrade --config` turns the soft policy head on (`network.soft_policy: 1`): the new
/// checkpoint has it, and the ONNX model written beside it is the old network's, byte for byte,
/// but for the `network` metadata that records the switch (the head is trained, not exported).
#[test]
fn upgrade_adds_the_soft_policy_head_and_exports_what_it_did() {
    use candle_core::Device;
    use trainer_bridge::{Checkpoint, ModelMeta, Net, NetConfig};
    let dir = tmpdir("soft");
    let shape = games::shape_of("liuzhou", None).unwrap();
    let plain = NetConfig {
        blocks: 1,
        channels: 8,
        value_hidden: 16,
        ..NetConfig::default()
    };
    let (varmap, _) = Net::seeded(&plain, shape, &Device::Cpu, 4).unwrap();
    let old = dir.join("old.safetensors");
    let meta = ModelMeta {
        game: "liuzhou".into(),
        shape,
        network: plain.clone(),
        generation: 5,
    };
    Net::save(&varmap, &meta, &old).unwrap();
    let soft = NetConfig {
        soft_policy: true,
        ..plain.clone()
    };
    let config = dir.join("soft.yaml");
    std::fs::write(
        &config,
        "network:\n  blocks: 1\n  channels: 8\n  value_hidden: 16\n  soft_policy: 1\n",
    )
    .unwrap();
    let new = dir.join("soft");
    succeeded(&args(
        &["upgrade", "--model"],
        [old, "--out".into(), new.clone(), "--config".into(), config],
    ));
    let grown = Checkpoint::read(&new.with_extension("safetensors"), &Device::Cpu).unwrap();
    let with_soft = ModelMeta {
        network: soft.clone(),
        ..meta
    };
    assert_eq!(grown.meta.as_ref(), Some(&with_soft));
    Net::from_checkpoint(&grown, &soft, shape, &Device::Cpu).unwrap();
    let onnx = std::fs::read(new.with_extension("onnx")).unwrap();
    assert!(onnx == trainer_bridge::onnx::model_bytes(&varmap, &with_soft).unwrap());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `average` writes the mean of checkpoints of one network, tensor by tensor, with the newest
/// generation; checkpoints of different networks or games are refused, and nothing is written.
#[test]
fn average_writes_the_mean_of_one_networks_checkpoints() {
    use candle_core::Device;
    use trainer_bridge::{Checkpoint, ModelMeta, Net, NetConfig};
    let dir = tmpdir("average");
    let small = NetConfig {
        blocks: 1,
        channels: 8,
        policy_channels: 2,
        value_channels: 1,
        value_hidden: 16,
        ..NetConfig::default()
    };
    let save = |name: &str, game: &str, network: &NetConfig, seed: u64, generation: u64| {
        let shape = games::shape_of(game, None).unwrap();
        let (varmap, _) = Net::seeded(network, shape, &Device::Cpu, seed).unwrap();
        let path = dir.join(name);
        let meta = ModelMeta {
            game: game.into(),
            shape,
            network: network.clone(),
            generation,
        };
        Net::save(&varmap, &meta, &path).unwrap();
        path
    };
    let a = save("a.safetensors", "liuzhou", &small, 3, 5);
    let b = save("b.safetensors", "liuzhou", &small, 4, 7);
    let c = save("c.safetensors", "liuzhou", &small, 5, 6);
    let mean = dir.join("mean");
    let stdout = succeeded(&args(
        &["average"],
        [
            a.clone(),
            b.clone(),
            c.clone(),
            "--out".into(),
            mean.clone(),
        ],
    ));
    assert!(
        stdout.contains("the mean of 3 liuzhou checkpoints (generation 7)"),
        "{stdout}"
    );
    assert!(mean.with_extension("onnx").is_file());
    let read = |p: &Path| candle_core::safetensors::load(p, &Device::Cpu).unwrap();
    let (ta, tb, tc) = (read(&a), read(&b), read(&c));
    let tm = read(&mean.with_extension("safetensors"));
    assert_eq!(tm.len(), ta.len());
    for (name, m) in &tm {
        let m = m.flatten_all().unwrap().to_vec1::<f32>().unwrap();
        let parts: Vec<Vec<f32>> = [&ta, &tb, &tc]
            .iter()
            .map(|t| t[name].flatten_all().unwrap().to_vec1::<f32>().unwrap())
            .collect();
        for (i, m) in m.iter().enumerate() {
            let want = (parts[0][i] + parts[1][i] + parts[2][i]) / 3.0;
            assert!((m - want).abs() < 1e-6, "{name}[{i}]: {m}, want {want}");
        }
    }
    let meta = Checkpoint::read(&mean.with_extension("safetensors"), &Device::Cpu)
        .unwrap()
        .meta
        .unwrap();
    assert_eq!((meta.game.as_str(), meta.generation), ("liuzhou", 7));

    // Another network, another game, a single checkpoint: refused, nothing written.
    let deep = save(
        "deep.safetensors",
        "liuzhou",
        &NetConfig {
            blocks: 2,
            ..small.clone()
        },
        3,
        8,
    );
    let e = refused(&args(
        &["average"],
        [a.clone(), deep, "--out".into(), dir.join("bad1")],
    ));
    assert!(
        e.contains("deep.safetensors")
            && e.contains("2 blocks of 8 channels")
            && e.contains("only checkpoints of one network can be averaged"),
        "{e}"
    );
    let xq = save("xq.safetensors", "xiangqi", &small, 3, 1);
    let e = refused(&args(
        &["average"],
        [a.clone(), xq, "--out".into(), dir.join("bad2")],
    ));
    assert!(
        e.contains("a xiangqi network, where") && e.contains("a liuzhou one"),
        "{e}"
    );
    let e = refused(&args(&["average"], [a, "--out".into(), dir.join("bad3")]));
    assert!(e.contains("CHECKPOINT"), "{e}");
    for name in ["bad1", "bad2", "bad3"] {
        assert!(!dir.join(name).with_extension("onnx").exists(), "{name}");
        assert!(
            !dir.join(name).with_extension("safetensors").exists(),
            "{name}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `shrink` writes the checkpoint with the named blocks taken out; a block the network lacks,
/// and `fit --teacher` with no share for the teacher, are refused.
#[test]
fn shrink_takes_blocks_out_and_a_teacher_needs_a_share() {
    use candle_core::Device;
    use trainer_bridge::Checkpoint;
    let dir = tmpdir("shrink");
    let model = init(&dir);
    let network = Checkpoint::read(&model, &Device::Cpu)
        .unwrap()
        .meta
        .unwrap()
        .network;
    let blocks = network.blocks;
    // Liuzhou's config pools in every second block (1, 3).
    assert_eq!((blocks, network.pool_every), (4, 2));
    let out = dir.join("short");
    // The last block: the blocks before it keep their places, pooling or not.
    let last = (blocks - 1).to_string();
    let stdout = succeeded(&args(
        &["shrink", "--drop-blocks", &last, "--model"],
        [model.clone(), "--out".into(), out.clone()],
    ));
    assert!(
        stdout.contains(&format!("{} of its {blocks} blocks kept", blocks - 1)),
        "{stdout}"
    );
    let short = Checkpoint::read(&out.with_extension("safetensors"), &Device::Cpu).unwrap();
    assert_eq!(short.meta.unwrap().network.blocks, blocks - 1);
    assert!(out.with_extension("onnx").is_file());

    let e = refused(&args(
        &["shrink", "--drop-blocks", "9", "--model"],
        [model.clone(), "--out".into(), dir.join("none")],
    ));
    assert!(e.contains("block 9"), "{e}");
    assert!(!dir.join("none.onnx").exists());
    // The first block: a pooling block would move into a plain block's place.
    let e = refused(&args(
        &["shrink", "--drop-blocks", "0", "--model"],
        [model.clone(), "--out".into(), dir.join("none")],
    ));
    assert!(e.contains("global-pooling"), "{e}");
    assert!(!dir.join("none.onnx").exists());

    // The built-in config gives a teacher no share (anchor_weight 0).
    let e = refused(&args(
        &["fit"],
        [
            dir.clone(),
            "--model".into(),
            model.clone(),
            "--teacher".into(),
            model,
            "--out".into(),
            dir.join("fitted"),
            "--config".into(),
            config(),
        ],
    ));
    assert!(
        e.contains("--teacher") && e.contains("anchor_weight"),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

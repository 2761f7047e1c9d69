//! The `trainer-bridge` command line refuses bad arguments with exit code 2 and one line that
//! names the argument or file at fault, and writes nothing.

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

/// Runs and expects a refusal; returns stderr.
fn refused(args: &[OsString]) -> String {
    let out = run(args);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    assert!(stderr.starts_with("error: "), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    stderr
}

/// A generation-0 Liuzhou model in `dir`/0000.
fn init(dir: &Path) -> PathBuf {
    let stem = dir.join("0000");
    let out = run(&args(
        &["init", "--game", "liuzhou", "--config"],
        [config(), "--out".into(), stem.clone()],
    ));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
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
    let out = run(&args(
        &["upgrade", "--model"],
        [old.clone(), "--out".into(), new.clone()],
    ));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
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

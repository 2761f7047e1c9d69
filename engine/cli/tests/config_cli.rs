//! Bad configs and arguments of `engine selfplay` fail at startup: exit code 2, a message naming
//! the file, section and key (or the path), and nothing created.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const LIUZHOU_CONFIG: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../configs/liuzhou.yaml");

fn tmpdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("engine-config-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn engine(args: &[&str], extra: &[&Path]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_engine"))
        .args(args)
        .args(extra)
        .output()
        .unwrap()
}

/// Exit code 2, no panic, and every needle in stderr; returns stderr.
fn fails_with(out: &Output, needles: &[&str]) -> String {
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    for n in needles {
        assert!(err.contains(n), "missing {n:?} in: {err}");
    }
    err
}

/// The shipped Liuzhou config with `from` replaced by `to` (which must occur).
fn variant(dir: &Path, name: &str, from: &str, to: &str) -> PathBuf {
    let text = std::fs::read_to_string(LIUZHOU_CONFIG).unwrap();
    assert!(text.contains(from), "{from:?} not in the shipped config");
    let path = dir.join(format!("{name}.yaml"));
    std::fs::write(&path, text.replacen(from, to, 1)).unwrap();
    path
}

fn selfplay(config: &Path, out: &Path) -> Output {
    let args = ["selfplay", "--model", "uniform", "--games", "1", "--config"];
    engine(&args, &[config, Path::new("--out"), out])
}

#[test]
fn selfplay_refuses_misshapen_configs_and_out_of_range_values() {
    let dir = tmpdir("selfplay");
    let out = dir.join("shards");
    let shaped = [
        ("empty", "", "the file is empty"),
        ("scalar", "hello\n", "the document is a single value"),
        ("list", "- 1\n", "the document is a list"),
        (
            "typo",
            "selfpaly:\n  c_puct: 2\n",
            "unknown section `selfpaly`",
        ),
    ];
    for (name, text, needle) in shaped {
        let path = dir.join(format!("{name}.yaml"));
        std::fs::write(&path, text).unwrap();
        fails_with(&selfplay(&path, &out), &[&format!("{name}.yaml"), needle]);
    }
    let ranged = [
        (
            "c_puct: 1.5",
            "c_puct: .inf",
            "`c_puct` is inf; allowed: a finite number > 0",
        ),
        ("c_puct: 1.5", "c_puct: -3", "`c_puct` is -3"),
        (
            "dirichlet_alpha: 0.3",
            "dirichlet_alpha: 0",
            "`dirichlet_alpha` is 0",
        ),
        (
            "dirichlet_alpha: 0.3",
            "dirichlet_alpha: -1",
            "`dirichlet_alpha` is -1",
        ),
        (
            "dirichlet_epsilon: 0.25",
            "dirichlet_epsilon: 2",
            "`dirichlet_epsilon` is 2; allowed: 0 to 1",
        ),
        (
            "resign_threshold: -0.95",
            "resign_threshold: 5",
            "`resign_threshold` is 5",
        ),
    ];
    for (i, (from, to, needle)) in ranged.into_iter().enumerate() {
        let path = variant(&dir, &format!("sp{i}"), from, to);
        let name = format!("sp{i}.yaml: section `selfplay`: ");
        fails_with(&selfplay(&path, &out), &[&name, needle]);
    }
    let path = variant(&dir, "batch", "batch_size: 64", "batch_size: 0");
    let needle = "batch.yaml: section `inference`: `batch_size` is 0; allowed: 1 to 65536";
    fails_with(&selfplay(&path, &out), &[needle]);
    assert!(!out.exists(), "a refused config created --out");
}

#[test]
fn selfplay_refuses_an_unusable_out_before_playing() {
    let dir = tmpdir("out");
    let file = dir.join("f.txt");
    std::fs::write(&file, "x").unwrap();
    let config = Path::new(LIUZHOU_CONFIG);
    let err = fails_with(
        &selfplay(config, &file),
        &["f.txt: exists and is not a directory"],
    );
    assert!(err.contains("--out"), "{err}");
    let nope = Path::new("/proc/nope");
    fails_with(&selfplay(config, nope), &["/proc/nope: cannot create it"]);
    // No game was played: the summary line never appeared.
    assert!(!String::from_utf8_lossy(&selfplay(config, nope).stdout).contains("games"));
}

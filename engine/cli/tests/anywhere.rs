//! The engine as a user gets it from `cargo install --path engine/cli --root DIR`: the binary
//! alone in a directory of its own, run from another empty directory, with a home, data and
//! cache directory of its own. Configs are built in, Liuzhou's network is found (the checkout's
//! or the built-in one), ONNX Runtime's library is found in the user's cache, and a log written
//! to a file is plain text.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// A scratch directory tree: `bin/engine`, an empty working directory, and the user's
/// directories.
struct Place {
    root: PathBuf,
}

impl Place {
    fn new(name: &str) -> Place {
        let root =
            std::env::temp_dir().join(format!("engine-anywhere-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        for d in ["bin", "work", "home", "data", "cache", "config"] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        std::fs::copy(env!("CARGO_BIN_EXE_engine"), root.join("bin/engine")).unwrap();
        // The library the test process finds (fetched once if need be), where the user's cache
        // keeps it: the engine must find it there from any directory.
        let lib = testkit::onnx_runtime();
        let dir = root.join(format!(
            "cache/liuzhou-engine/ort/{}-{}",
            infer::runtime::ORT_VERSION,
            std::env::consts::ARCH
        ));
        std::fs::create_dir_all(&dir).unwrap();
        std::os::unix::fs::symlink(lib, dir.join(infer::runtime::LIB_NAME)).unwrap();
        Place { root }
    }

    fn work(&self) -> PathBuf {
        self.root.join("work")
    }

    /// `bin/engine ARGS` in `work/`, stderr into `work/<log>`: (output, the log's text).
    fn run(&self, args: &[&str], log: &str) -> (Output, String) {
        self.run_with(args, log, &[])
    }

    /// [`Place::run`] with the environment variables `vars` set as well.
    fn run_with(&self, args: &[&str], log: &str, vars: &[(&str, &Path)]) -> (Output, String) {
        let log_path = self.work().join(log);
        let mut tries = 0;
        let out = loop {
            let log_file = std::fs::File::create(&log_path).unwrap();
            let run = Command::new(self.root.join("bin/engine"))
                .args(args)
                .current_dir(self.work())
                .env_clear()
                .env("PATH", std::env::var_os("PATH").unwrap_or_default())
                .env("HOME", self.root.join("home"))
                .env("XDG_DATA_HOME", self.root.join("data"))
                .env("XDG_CACHE_HOME", self.root.join("cache"))
                .env("XDG_CONFIG_HOME", self.root.join("config"))
                .envs(vars.iter().copied())
                .stdin(Stdio::null())
                .stderr(Stdio::from(log_file))
                .output();
            match run {
                // A child another test thread forked while this binary was being copied may
                // still hold the copy open for writing until it execs: wait for it.
                Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy && tries < 50 => {
                    tries += 1;
                    std::thread::sleep(std::time::Duration::from_millis(100));
                }
                run => break run.unwrap(),
            }
        };
        let log = std::fs::read_to_string(&log_path).unwrap();
        assert!(
            out.status.success(),
            "engine {args:?}: {:?}\n{log}",
            out.status
        );
        assert!(!log.contains('\x1b'), "escape codes in the log: {log:?}");
        assert!(!log.contains("panicked"), "{log}");
        (out, log)
    }
}

impl Drop for Place {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

fn shards_in(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .filter(|e| {
            let name = e.as_ref().unwrap().file_name();
            name.to_string_lossy().ends_with(".safetensors")
        })
        .count()
}

#[test]
fn the_installed_binary_plays_from_an_empty_directory() {
    let place = Place::new("play");

    // Liuzhou self-play with no --model and no --config: the default network, and the log
    // says which and where from.
    let (_, log) = place.run(
        &[
            "selfplay", "--game", "liuzhou", "--games", "2", "--out", "s",
        ],
        "selfplay.log",
    );
    let said: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("liuzhou: default network"))
        .collect();
    assert_eq!(said.len(), 1, "{log}");
    assert!(
        said[0].contains("(checkout)") || said[0].contains("(built-in)"),
        "{log}"
    );
    assert_eq!(
        log.matches("loaded ").count(),
        1,
        "one model load, said once: {log}"
    );
    // The built-in configs' `precision: auto` plays the shipped network's int8 model.
    assert!(
        log.lines()
            .any(|l| l.contains("loaded ") && l.contains("generation 147, int8,")),
        "{log}"
    );
    assert!(shards_in(&place.work().join("s")) >= 1);

    // Go without a network: uniform priors, asked for by name.
    let (_, log) = place.run(
        &[
            "selfplay", "--game", "go", "--model", "uniform", "--games", "2", "--out", "g",
        ],
        "go.log",
    );
    assert!(shards_in(&place.work().join("g")) >= 1, "{log}");

    // Analysis with the default network, and with the built-in one by name.
    let (out, _) = place.run(
        &["analyse", "--game", "liuzhou", "--visits", "200"],
        "analyse.log",
    );
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.contains("net ("), "{table}");
    let (out, _) = place.run(
        &[
            "analyse", "--game", "liuzhou", "--model", "built-in", "--visits", "50", "--json",
        ],
        "built-in.log",
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["agent"], "net (built-in)");

    // ENGINE_MODELS comes before every other place.
    let mine = place.root.join("mine");
    std::fs::create_dir_all(mine.join("liuzhou")).unwrap();
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models/liuzhou/best.onnx");
    std::fs::copy(shipped, mine.join("liuzhou/best.onnx")).unwrap();
    let (_, log) = place.run_with(
        &["analyse", "--game", "liuzhou", "--visits", "20"],
        "env.log",
        &[("ENGINE_MODELS", &mine)],
    );
    assert!(log.contains("(ENGINE_MODELS)"), "{log}");

    // The default network is named once, with the place it came from.
    let (_, log) = place.run(
        &["analyse", "--game", "xiangqi", "--visits", "20"],
        "xiangqi.log",
    );
    let said: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("xiangqi: default network"))
        .collect();
    assert_eq!(said.len(), 1, "{log}");
    assert!(said[0].contains("best.onnx (checkout)"), "{log}");

    // Nothing was written where the engine ran but what was asked for, and ONNX Runtime came
    // from the user's cache (or a checkout's `.ort/`), not from this directory.
    let mut written: Vec<String> = std::fs::read_dir(place.work())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !n.ends_with(".log"))
        .collect();
    written.sort();
    assert_eq!(written, ["g", "s"]);
}

#[test]
fn config_models_and_doctor_answer_from_an_empty_directory() {
    let place = Place::new("report");
    for game in ["liuzhou", "xiangqi", "go"] {
        let (out, _) = place.run(&["config", "show", "--game", game], "show.log");
        let shown: serde_yaml::Value = serde_yaml::from_slice(&out.stdout).unwrap();
        let built_in: serde_yaml::Value =
            serde_yaml::from_str(setup::config::built_in(game).unwrap()).unwrap();
        assert_eq!(shown, built_in, "{game}");
    }

    let (out, _) = place.run(&["config", "path"], "path.log");
    let text = String::from_utf8_lossy(&out.stdout);
    let data = place.root.join("data/liuzhou-engine/models");
    assert!(text.contains(&data.display().to_string()), "{text}");
    assert!(text.contains("built-in configs/<game>.yaml"), "{text}");

    // Installing puts the networks in the user's data directory, where they are then found.
    let (out, _) = place.run(&["models", "install"], "install.log");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("liuzhou: "), "{text}");
    assert!(data.join("liuzhou/best.onnx").is_file(), "{text}");
    let (out, _) = place.run(&["models", "list"], "list.log");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("user data"), "{text}");
    assert!(text.contains("found, used"), "{text}");

    let (out, _) = place.run(&["doctor"], "doctor.log");
    let text = String::from_utf8_lossy(&out.stdout);
    for needle in [
        concat!("engine ", env!("CARGO_PKG_VERSION")),
        "built-in configs/go.yaml",
        "library: ",
        "version: 1.31",
        "provider cpu      runs",
        "fairy-stockfish",
        "gnugo",
    ] {
        assert!(text.contains(needle), "{needle:?} in {text}");
    }
}

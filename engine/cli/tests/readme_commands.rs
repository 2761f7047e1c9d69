//! The README's commands work as written. Every line of a ```` ```sh ```` block is run with the
//! built `engine` first on the `PATH`, from a scratch directory, and must succeed and print
//! something. Blocks marked ```` ```sh slow ```` (training, long matches, installs, servers) are
//! not run; their `engine` commands must name a real subcommand. In the README and the model
//! cards, every file under `models/` that a command names must be in the tree.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

/// Longest a quick command may take here (a debug-free test build, two cores, other tests beside).
const QUICK: Duration = Duration::from_secs(240);

/// The shell commands of a Markdown text: one per line of each fenced block whose info string
/// starts with `sh`, backslash continuations joined, comments and blank lines dropped; with
/// whether the block is marked `slow`.
fn commands(markdown: &str) -> Vec<(String, bool)> {
    // Outside a block: None; inside one: Some(None) for another language, Some(Some(slow)).
    let mut block: Option<Option<bool>> = None;
    let mut out = Vec::new();
    let mut pending = String::new();
    for line in markdown.lines() {
        if let Some(info) = line.trim_start().strip_prefix("```") {
            block = match block {
                Some(_) => None,
                None => {
                    let mut words = info.split_whitespace();
                    let sh = words.next() == Some("sh");
                    Some(sh.then(|| words.any(|w| w == "slow")))
                }
            };
            pending.clear();
            continue;
        }
        let Some(Some(slow)) = block else { continue };
        let code = strip_comment(line);
        if let Some(head) = code.trim_end().strip_suffix('\\') {
            pending.push_str(head.trim());
            pending.push(' ');
            continue;
        }
        pending.push_str(code.trim());
        let command = std::mem::take(&mut pending).trim().to_string();
        if !command.is_empty() {
            out.push((command, slow));
        }
    }
    out
}

/// `line` without a `#` comment that starts outside quotes.
fn strip_comment(line: &str) -> &str {
    let (mut single, mut double) = (false, false);
    for (i, c) in line.char_indices() {
        match c {
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            '#' if !single && !double && (i == 0 || line[..i].ends_with(' ')) => return &line[..i],
            _ => {}
        }
    }
    line
}

fn engine() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_engine"))
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(Path::new(ROOT).join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// The `engine` subcommand a command line names, if it calls the engine.
fn subcommand(command: &str) -> Option<String> {
    let words: Vec<&str> = command.split_whitespace().collect();
    let at = words
        .iter()
        .position(|w| *w == "engine" || w.ends_with("/engine"))?;
    words.get(at + 1).map(|w| w.to_string())
}

#[test]
fn the_parser_finds_commands_blocks_and_comments() {
    let text = "intro\n```sh\nengine doctor   # what it finds\n\n# a comment\nengine match \\\n    --games 2\n```\n\
                ```sh slow\nengine serve\n```\n```python\nprint('engine x')\n```\n\
                ```sh\nprintf 'a # b\\n' | engine gtp\n```\n";
    assert_eq!(
        commands(text),
        vec![
            ("engine doctor".to_string(), false),
            ("engine match --games 2".to_string(), false),
            ("engine serve".to_string(), true),
            ("printf 'a # b\\n' | engine gtp".to_string(), false),
        ]
    );
    assert_eq!(
        subcommand("printf 'x' | engine gtp --game liuzhou").as_deref(),
        Some("gtp")
    );
    assert_eq!(
        subcommand("./target/release/engine train --config c").as_deref(),
        Some("train")
    );
    assert_eq!(subcommand("cargo test --workspace"), None);
}

#[test]
fn quick_readme_commands_run_and_slow_ones_name_real_subcommands() {
    let readme = read("README.md");
    let all = commands(&readme);
    assert!(
        all.iter().filter(|(_, slow)| !slow).count() >= 5,
        "README has few quick commands"
    );
    let bin_dir = engine().parent().unwrap().to_path_buf();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let scratch = std::env::temp_dir().join(format!("readme-commands-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).unwrap();
    let mut failures = Vec::new();
    for (command, slow) in &all {
        if *slow {
            if let Some(sub) = subcommand(command) {
                let status = Command::new(engine())
                    .args([sub.as_str(), "--help"])
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .status()
                    .unwrap();
                if !status.success() {
                    failures.push(format!("{command}: `engine {sub}` is no subcommand"));
                }
            }
            continue;
        }
        let started = Instant::now();
        let out = Command::new("bash")
            .args(["-o", "pipefail", "-c", command])
            .current_dir(&scratch)
            .env("PATH", &path)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let took = started.elapsed();
        let stdout = String::from_utf8_lossy(&out.stdout);
        if !out.status.success() || stdout.trim().is_empty() {
            failures.push(format!(
                "{command}: {} after {took:.1?}\nstdout: {stdout}\nstderr: {}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            ));
        } else if took > QUICK {
            failures.push(format!(
                "{command}: took {took:.1?}; mark its block `sh slow`"
            ));
        }
        // A GTP or UCI session answers every command it is sent; an error answer is a failure.
        if stdout.lines().any(|l| l.starts_with('?')) {
            failures.push(format!("{command}: an error answer\n{stdout}"));
        }
    }
    let _ = std::fs::remove_dir_all(&scratch);
    assert!(
        failures.is_empty(),
        "README commands failed:\n{}",
        failures.join("\n\n")
    );
}

#[test]
fn files_under_models_that_docs_name_exist() {
    let mut missing = Vec::new();
    for doc in [
        "README.md",
        "models/liuzhou/README.md",
        "models/xiangqi/README.md",
        "models/go/README.md",
    ] {
        let text = read(doc);
        for (n, line) in text.lines().enumerate() {
            for (i, _) in line.match_indices("models/") {
                if line[..i].ends_with(|c: char| c.is_alphanumeric() || "_./-".contains(c)) {
                    continue; // runs/liuzhou/models/…, a path inside another directory
                }
                let path: String = line[i..]
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || "/._-".contains(*c))
                    .collect();
                let path = path.trim_end_matches(['.', '/']);
                let is_file = path.rsplit('/').next().is_some_and(|f| f.contains('.'));
                if is_file && !Path::new(ROOT).join(path).exists() {
                    missing.push(format!("{doc}:{}: {path}", n + 1));
                }
            }
        }
    }
    assert!(
        missing.is_empty(),
        "files named but not in the tree:\n{}",
        missing.join("\n")
    );
}

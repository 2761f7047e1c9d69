//! What the tests of several crates share, and nothing the product uses: finding the programs
//! nobody here wrote that the rules are checked against (GNU Go, Fairy-Stockfish), ONNX
//! Runtime's library for a test that loads a model in its own process, and the check that a
//! command refused its input as the engine promises (exit code 2, the reason on stderr).
//!
//! A test whose oracle is missing says so and passes, so that a developer without the Debian
//! packages can run the suite; under `ENGINE_REQUIRE_ORACLES=1` (CI) it fails instead.

use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::OnceLock;

/// The first of `candidates` that exists, or `None` after printing `SKIPPED: …` naming the
/// Debian `package` and what is not checked (`what`). Under `ENGINE_REQUIRE_ORACLES=1` a
/// missing oracle panics.
pub fn oracle(candidates: &[PathBuf], package: &str, what: &str) -> Option<String> {
    if let Some(found) = candidates.iter().find(|p| p.is_file()) {
        return Some(found.to_string_lossy().into_owned());
    }
    let msg = format!("{package} not found (apt-get install {package}): {what}");
    if std::env::var("ENGINE_REQUIRE_ORACLES").is_ok_and(|v| v == "1") {
        panic!("{msg}, but ENGINE_REQUIRE_ORACLES=1");
    }
    eprintln!("SKIPPED: {msg}");
    None
}

/// GNU Go (`gnugo`), where Debian and others install it ([`oracle`]).
pub fn gnugo(what: &str) -> Option<String> {
    let places = ["/usr/games/gnugo", "/usr/bin/gnugo", "/usr/local/bin/gnugo"];
    oracle(&places.map(PathBuf::from), "gnugo", what)
}

/// Fairy-Stockfish: `FAIRY_STOCKFISH` if set, else Debian's, else the first on `PATH`
/// ([`oracle`]).
pub fn fairy_stockfish(what: &str) -> Option<String> {
    let mut places: Vec<PathBuf> = std::env::var_os("FAIRY_STOCKFISH")
        .map(PathBuf::from)
        .into_iter()
        .collect();
    places.push(Path::new("/usr/games/fairy-stockfish").to_path_buf());
    if let Some(path) = std::env::var_os("PATH") {
        places.extend(std::env::split_paths(&path).map(|d| d.join("fairy-stockfish")));
    }
    oracle(&places, "fairy-stockfish", what)
}

/// ONNX Runtime's library, fetched into the user's cache on the first call of the process if
/// the lookup finds none (as the `engine` binary does on first use; `infer` itself never
/// fetches). Later model loads in this process fetch too, if need be. A test that loads a model
/// calls it first; it panics with the reason when there is no library to be had.
pub fn onnx_runtime() -> &'static Path {
    static LIBRARY: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    match LIBRARY.get_or_init(|| provision::library().map_err(|e| e.to_string())) {
        Ok(path) => path,
        Err(e) => panic!("ONNX Runtime: {e}"),
    }
}

/// Asserts that `out` is a refusal: exit code 2 and every one of `words` on stderr; returns
/// stderr for further checks.
#[track_caller]
pub fn refused(out: &Output, words: &[&str]) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "exit code; stderr: {stderr}");
    for w in words {
        assert!(stderr.contains(w), "{w:?} not in stderr: {stderr}");
    }
    stderr
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_existing_candidate_is_the_oracle() {
        let here = std::env::current_exe().unwrap();
        let found = oracle(&[PathBuf::from("/no/such/program"), here.clone()], "x", "y");
        assert_eq!(found, Some(here.to_string_lossy().into_owned()));
    }

    #[test]
    fn onnx_runtime_is_a_library_the_lookup_then_finds() {
        let lib = onnx_runtime();
        assert!(lib.is_file(), "{}", lib.display());
        assert_eq!(infer::runtime::find_library(), Ok(Some(lib.to_path_buf())));
    }

    #[test]
    fn a_refusal_is_exit_2_with_the_words() {
        let out = std::process::Command::new("sh")
            .args(["-c", "echo 'bad --flag: no' >&2; exit 2"])
            .output()
            .unwrap();
        assert!(refused(&out, &["--flag", "no"]).contains("bad"));
    }
}

//! Fetching ONNX Runtime's library for the programs that load it.
//!
//! `infer` only looks the library up (`infer::runtime`: `ORT_DYLIB_PATH`, the checkout's
//! `.ort/`, the user's cache); no library crate starts a process. The binaries call [`install`]
//! at startup, so that the first model they load fetches the library when none is found, and
//! the tests get it through `testkit::onnx_runtime`.
//!
//! A fetch downloads the pinned PyPI wheel `onnxruntime==1.31.1` with `python3 -m pip download`,
//! checks it against its pinned SHA-256 and extracts the library into `infer::runtime::cache_dir`
//! (the user's cache, or the checkout's `.ort/` where there is no home directory).

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

use infer::runtime::{self, RuntimeError, HINT, LIB_NAME, ORT_VERSION};
use sha2::{Digest, Sha256};

/// Shipped next to the library in the wheel; GPU execution providers load through it.
const SHARED_PROVIDERS: &str = "libonnxruntime_providers_shared.so";

/// A pinned wheel: the pip platform tag and the file's SHA-256 as published on PyPI.
struct Wheel {
    platform: &'static str,
    sha256: &'static str,
}

/// The CPython 3.11 wheels; the library inside does not depend on the Python version, and
/// pinning one tag keeps the hash independent of the local Python.
fn pinned_wheel() -> Option<Wheel> {
    if std::env::consts::OS != "linux" {
        return None;
    }
    match std::env::consts::ARCH {
        "x86_64" => Some(Wheel {
            platform: "manylinux_2_28_x86_64",
            sha256: "5752bd508126ae7c49894d3b9d2e83f0c3d487319246d04c444b393308d7ad7f",
        }),
        "aarch64" => Some(Wheel {
            platform: "manylinux_2_28_aarch64",
            sha256: "da05378364c44d4407e463982d2bf8d5e4cfea873283757e48beeb41df97b7f3",
        }),
        _ => None,
    }
}

/// Why the library could not be fetched. Each message ends with what to do about it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FetchError {
    #[error("cannot fetch onnxruntime=={ORT_VERSION} from PyPI ({step}): {reason}; {HINT}")]
    Step { step: &'static str, reason: String },
    #[error("the downloaded wheel {file} has SHA-256 {actual}, expected {expected}; refusing to use it. Delete it and retry, or {HINT}")]
    HashMismatch {
        file: PathBuf,
        expected: String,
        actual: String,
    },
    #[error("no pinned onnxruntime wheel for this platform ({os}/{arch}); {HINT}")]
    UnsupportedPlatform {
        os: &'static str,
        arch: &'static str,
    },
}

/// Lets `infer` fetch the library when its lookup finds none (the first model load, or
/// `infer::runtime::environment`). Binaries call it first thing; calling it again does nothing.
pub fn install() {
    runtime::set_fetcher(|dir| fetch_into(dir).map_err(|e| RuntimeError::Fetch(e.to_string())));
}

/// The library to load, fetched into the cache first if the lookup finds none.
pub fn library() -> Result<PathBuf, RuntimeError> {
    install();
    runtime::library_path()
}

/// Downloads the pinned wheel, checks its hash and extracts the libraries into `dir`.
///
/// Work happens in a sibling temporary directory renamed into place, so a concurrent or
/// interrupted fetch never leaves a half-written library under the final name.
pub fn fetch_into(dir: &Path) -> Result<(), FetchError> {
    let wheel = pinned_wheel().ok_or(FetchError::UnsupportedPlatform {
        os: std::env::consts::OS,
        arch: std::env::consts::ARCH,
    })?;
    let parent = dir.parent().ok_or_else(|| {
        step(
            "create the cache directory",
            format!("{} has no parent", dir.display()),
        )
    })?;
    std::fs::create_dir_all(parent).map_err(|e| {
        step(
            "create the cache directory",
            format!("{}: {e}", parent.display()),
        )
    })?;
    let tmp = parent.join(format!(".fetch-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp)
        .map_err(|e| step("create a temporary directory", e.to_string()))?;
    let result = fetch_steps(&wheel, &tmp, dir);
    let _ = std::fs::remove_dir_all(&tmp);
    result
}

fn step(step: &'static str, reason: String) -> FetchError {
    FetchError::Step { step, reason }
}

fn fetch_steps(wheel: &Wheel, tmp: &Path, dir: &Path) -> Result<(), FetchError> {
    tracing::info!(
        "fetching onnxruntime=={ORT_VERSION} ({}) from PyPI into {}",
        wheel.platform,
        dir.display()
    );
    let wheels = tmp.join("wheel");
    let out = Command::new("python3")
        .args([
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--only-binary=:all:",
            "--disable-pip-version-check",
        ])
        .args(["--python-version", "3.11", "--implementation", "cp"])
        .args(["--platform", wheel.platform])
        .arg(format!("onnxruntime=={ORT_VERSION}"))
        .arg("--dest")
        .arg(&wheels)
        .output()
        .map_err(|e| step("run python3 -m pip", e.to_string()))?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let tail: Vec<&str> = stderr.lines().rev().take(3).collect();
        return Err(step(
            "pip download",
            format!(
                "{}: {}",
                out.status,
                tail.into_iter().rev().collect::<Vec<_>>().join(" | ")
            ),
        ));
    }
    let file = std::fs::read_dir(&wheels)
        .map_err(|e| step("find the wheel", e.to_string()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.extension().is_some_and(|x| x == "whl"))
        .ok_or_else(|| step("find the wheel", "pip saved no .whl file".into()))?;
    check_hash(&file, wheel.sha256)?;
    // The wheel is a zip; Python (already required for pip) extracts the two members.
    let staged = tmp.join("lib");
    let script = "import sys, zipfile, os\n\
        z = zipfile.ZipFile(sys.argv[1])\n\
        for name in sys.argv[3:]:\n\
        \x20   with z.open('onnxruntime/capi/' + name) as src, open(os.path.join(sys.argv[2], name), 'wb') as dst:\n\
        \x20       dst.write(src.read())\n";
    std::fs::create_dir_all(&staged).map_err(|e| step("extract the library", e.to_string()))?;
    let out = Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(&file)
        .arg(&staged)
        .args([LIB_NAME, SHARED_PROVIDERS])
        .output()
        .map_err(|e| step("run python3", e.to_string()))?;
    if !out.status.success() {
        return Err(step(
            "extract the library",
            String::from_utf8_lossy(&out.stderr).trim().to_string(),
        ));
    }
    match std::fs::rename(&staged, dir) {
        Ok(()) => Ok(()),
        // Another process finished first: its copy is as good as ours.
        Err(_) if dir.join(LIB_NAME).is_file() => Ok(()),
        Err(e) => Err(step(
            "move the library into place",
            format!("{}: {e}", dir.display()),
        )),
    }
}

/// `Ok` when `file`'s SHA-256 is `expected` (lower-case hex).
fn check_hash(file: &Path, expected: &str) -> Result<(), FetchError> {
    let actual = sha256_file(file).map_err(|e| step("hash the wheel", e.to_string()))?;
    if actual == expected {
        Ok(())
    } else {
        Err(FetchError::HashMismatch {
            file: file.to_path_buf(),
            expected: expected.into(),
            actual,
        })
    }
}

/// Hex SHA-256 of a file.
pub fn sha256_file(path: &Path) -> std::io::Result<String> {
    let mut file = std::fs::File::open(path)?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `abc`'s SHA-256 (FIPS 180-2, appendix B.1).
    const ABC: &str = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

    fn file_with(name: &str, bytes: &[u8]) -> PathBuf {
        let path = std::env::temp_dir().join(format!("provision-{name}-{}", std::process::id()));
        std::fs::write(&path, bytes).unwrap();
        path
    }

    #[test]
    fn sha256_matches_a_known_digest() {
        let path = file_with("sha", b"abc");
        assert_eq!(sha256_file(&path).unwrap(), ABC);
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn a_wheel_with_another_hash_is_refused() {
        let path = file_with("wheel", b"abc");
        assert_eq!(check_hash(&path, ABC), Ok(()));
        let other = "0".repeat(64);
        match check_hash(&path, &other) {
            Err(e @ FetchError::HashMismatch { .. }) => {
                let text = e.to_string();
                assert!(
                    text.contains(ABC) && text.contains("ORT_DYLIB_PATH"),
                    "{text}"
                );
            }
            other => panic!("expected HashMismatch, got {other:?}"),
        }
        std::fs::remove_file(&path).unwrap();
    }
}

//! Finding, fetching and loading the ONNX Runtime library.
//!
//! `ort` is built with `load-dynamic`: nothing is linked or downloaded at build time, and the
//! library is opened at run time. Where it comes from, in order ([`places`]):
//! 1. `ORT_DYLIB_PATH`, if set: that file, and nothing else (the way to use a GPU build);
//! 2. `.ort/<version>-<arch>/` in the checkout the engine was built from, where a developer's
//!    or CI's copy already is (git-ignored);
//! 3. the user's cache, `$XDG_CACHE_HOME/liuzhou-engine/ort/<version>-<arch>/` (by default
//!    `~/.cache/liuzhou-engine/...`), found the same from any directory;
//! 4. otherwise the pinned PyPI wheel `onnxruntime==1.31.1` is fetched with
//!    `python3 -m pip download`, checked against its pinned SHA-256, and the library is
//!    extracted into the user's cache (into the checkout's `.ort/` where there is no home
//!    directory to hold a cache).
//!
//! Every failure is a [`RuntimeError`] saying what to do; ort's own panic on a missing library
//! is never reached, because the library is loaded here before any other ort call.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use sha2::{Digest, Sha256};

/// The ONNX Runtime release this build of `ort` targets (API 31).
pub const ORT_VERSION: &str = "1.31.1";

/// The library's file name inside the wheel (`onnxruntime/capi/`) and in the cache.
pub const LIB_NAME: &str = "libonnxruntime.so.1.31.1";

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

const WHAT_TO_DO: &str = "set ORT_DYLIB_PATH to a libonnxruntime.so of ONNX Runtime 1.31.x (it is \
     onnxruntime/capi/libonnxruntime.so.1.31.1 inside the PyPI wheel onnxruntime==1.31.1), or make \
     `python3 -m pip` work (Debian: apt-get install python3-pip) and PyPI reachable so the engine \
     can fetch it itself";

/// Why ONNX Runtime is not usable. Each message ends with what to do about it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RuntimeError {
    #[error("ORT_DYLIB_PATH={path} does not name a file; point it at libonnxruntime.so.{ORT_VERSION} or unset it to use the engine's own copy")]
    EnvPathMissing { path: PathBuf },
    #[error("cannot load ONNX Runtime from {path}: {reason}; {WHAT_TO_DO}")]
    Load { path: PathBuf, reason: String },
    #[error("cannot fetch onnxruntime=={ORT_VERSION} from PyPI ({step}): {reason}; {WHAT_TO_DO}")]
    Fetch { step: &'static str, reason: String },
    #[error("the downloaded wheel {file} has SHA-256 {actual}, expected {expected}; refusing to use it. Delete it and retry, or {WHAT_TO_DO}")]
    HashMismatch {
        file: PathBuf,
        expected: String,
        actual: String,
    },
    #[error("no pinned onnxruntime wheel for this platform ({os}/{arch}); {WHAT_TO_DO}")]
    UnsupportedPlatform {
        os: &'static str,
        arch: &'static str,
    },
    #[error("ONNX Runtime environment: {0}")]
    Environment(String),
}

/// The name of the engine's per-user directories: its cache (`$XDG_CACHE_HOME/liuzhou-engine`,
/// ONNX Runtime's library) and its data (`$XDG_DATA_HOME/liuzhou-engine`, installed models).
pub const APP: &str = "liuzhou-engine";

/// The engine's per-user directories, where the platform has a home directory.
pub fn user_dirs() -> Option<directories::ProjectDirs> {
    directories::ProjectDirs::from("", "", APP)
}

/// The workspace this crate was built from, while it still exists (a binary installed with
/// `cargo install --path` keeps finding its checkout until the checkout is removed).
pub fn checkout() -> Option<PathBuf> {
    // This crate lives at <workspace>/engine/infer.
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).ancestors().nth(2)?;
    root.join("Cargo.toml")
        .is_file()
        .then(|| root.to_path_buf())
}

/// The directory of this version and architecture below a cache root.
fn versioned(root: &Path) -> PathBuf {
    root.join(format!("{ORT_VERSION}-{}", std::env::consts::ARCH))
}

/// Where the library is looked for, in order, each with a short name: the
/// `ORT_DYLIB_PATH` file when set (then nothing else), else the checkout's `.ort/` and the
/// user's cache.
pub fn places() -> Vec<(&'static str, PathBuf)> {
    if let Some(path) = std::env::var_os("ORT_DYLIB_PATH").filter(|p| !p.is_empty()) {
        return vec![("ORT_DYLIB_PATH", PathBuf::from(path))];
    }
    let mut places = Vec::new();
    if let Some(root) = checkout() {
        places.push(("checkout", versioned(&root.join(".ort")).join(LIB_NAME)));
    }
    if let Some(dirs) = user_dirs() {
        places.push((
            "user cache",
            versioned(&dirs.cache_dir().join("ort")).join(LIB_NAME),
        ));
    }
    places
}

/// The directory a fetched library goes to: the user's cache, else (no home directory) the
/// checkout's `.ort/`, else `.ort/` in the current directory.
pub fn cache_dir() -> PathBuf {
    let root = match (user_dirs(), checkout()) {
        (Some(dirs), _) => dirs.cache_dir().join("ort"),
        (None, Some(root)) => root.join(".ort"),
        (None, None) => PathBuf::from(".ort"),
    };
    versioned(&root)
}

/// The library that would be loaded, without fetching anything: `Ok(None)` when none is
/// there yet (the first use fetches it into [`cache_dir`]).
pub fn find_library() -> Result<Option<PathBuf>, RuntimeError> {
    if let Some(path) = std::env::var_os("ORT_DYLIB_PATH").filter(|p| !p.is_empty()) {
        let path = PathBuf::from(path);
        return if path.is_file() {
            Ok(Some(path))
        } else {
            Err(RuntimeError::EnvPathMissing { path })
        };
    }
    Ok(places().into_iter().map(|(_, p)| p).find(|p| p.is_file()))
}

/// The library to load: the first of [`places`] that is there, else a freshly fetched one.
pub fn library_path() -> Result<PathBuf, RuntimeError> {
    if let Some(path) = find_library()? {
        return Ok(path);
    }
    let dir = cache_dir();
    fetch_into(&dir)?;
    Ok(dir.join(LIB_NAME))
}

/// Downloads the pinned wheel, checks its hash and extracts the libraries into `dir`.
///
/// Work happens in a sibling temporary directory renamed into place, so a concurrent or
/// interrupted fetch never leaves a half-written library under the final name.
pub fn fetch_into(dir: &Path) -> Result<(), RuntimeError> {
    let wheel = pinned_wheel().ok_or(RuntimeError::UnsupportedPlatform {
        os: std::env::consts::OS,
        arch: std::env::consts::ARCH,
    })?;
    if std::env::consts::OS != "linux" {
        return Err(RuntimeError::UnsupportedPlatform {
            os: std::env::consts::OS,
            arch: std::env::consts::ARCH,
        });
    }
    let fetch = |step, reason: String| RuntimeError::Fetch { step, reason };
    let parent = dir.parent().expect("cache dir has a parent");
    std::fs::create_dir_all(parent).map_err(|e| {
        fetch(
            "create the cache directory",
            format!("{}: {e}", parent.display()),
        )
    })?;
    let tmp = parent.join(format!(".fetch-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp)
        .map_err(|e| fetch("create a temporary directory", e.to_string()))?;
    let result = fetch_steps(&wheel, &tmp, dir);
    let _ = std::fs::remove_dir_all(&tmp);
    result
}

fn fetch_steps(wheel: &Wheel, tmp: &Path, dir: &Path) -> Result<(), RuntimeError> {
    let fetch = |step, reason: String| RuntimeError::Fetch { step, reason };
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
        .map_err(|e| fetch("run python3 -m pip", e.to_string()))?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let tail: Vec<&str> = stderr.lines().rev().take(3).collect();
        return Err(fetch(
            "pip download",
            format!(
                "{}: {}",
                out.status,
                tail.into_iter().rev().collect::<Vec<_>>().join(" | ")
            ),
        ));
    }
    let file = std::fs::read_dir(&wheels)
        .map_err(|e| fetch("find the wheel", e.to_string()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.extension().is_some_and(|x| x == "whl"))
        .ok_or_else(|| fetch("find the wheel", "pip saved no .whl file".into()))?;
    let actual = sha256_file(&file).map_err(|e| fetch("hash the wheel", e.to_string()))?;
    if actual != wheel.sha256 {
        return Err(RuntimeError::HashMismatch {
            file,
            expected: wheel.sha256.into(),
            actual,
        });
    }
    // The wheel is a zip; Python (already required for pip) extracts the two members.
    let staged = tmp.join("lib");
    let script = "import sys, zipfile, os\n\
        z = zipfile.ZipFile(sys.argv[1])\n\
        for name in sys.argv[3:]:\n\
        \x20   with z.open('onnxruntime/capi/' + name) as src, open(os.path.join(sys.argv[2], name), 'wb') as dst:\n\
        \x20       dst.write(src.read())\n";
    std::fs::create_dir_all(&staged).map_err(|e| fetch("extract the library", e.to_string()))?;
    let out = Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(&file)
        .arg(&staged)
        .args([LIB_NAME, SHARED_PROVIDERS])
        .output()
        .map_err(|e| fetch("run python3", e.to_string()))?;
    if !out.status.success() {
        return Err(fetch(
            "extract the library",
            String::from_utf8_lossy(&out.stderr).trim().to_string(),
        ));
    }
    match std::fs::rename(&staged, dir) {
        Ok(()) => Ok(()),
        // Another process finished first: its copy is as good as ours.
        Err(_) if dir.join(LIB_NAME).is_file() => Ok(()),
        Err(e) => Err(fetch(
            "move the library into place",
            format!("{}: {e}", dir.display()),
        )),
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

/// The library the process loaded (set once [`environment`] has loaded it).
static LOADED: OnceLock<PathBuf> = OnceLock::new();

/// The library this process loaded, once a model or [`environment`] has loaded one.
pub fn loaded_library() -> Option<&'static Path> {
    LOADED.get().map(PathBuf::as_path)
}

/// The version the loaded ONNX Runtime library reports (`OrtGetApiBase()->GetVersionString()`),
/// loading it first if need be.
pub fn version() -> Result<String, RuntimeError> {
    environment()?;
    let path =
        loaded_library().ok_or_else(|| RuntimeError::Environment("no library loaded".into()))?;
    let failed = |reason: &str| RuntimeError::Load {
        path: path.to_owned(),
        reason: format!("reading its version: {reason}"),
    };
    let name = std::ffi::CString::new(path.as_os_str().as_encoded_bytes())
        .map_err(|_| failed("the path holds a NUL byte"))?;
    // SAFETY: the library is already loaded (so opening it again runs no initialiser and only
    // counts a reference, given back below); `OrtGetApiBase` has this signature in every ONNX
    // Runtime release, and the string it hands out is static and NUL-terminated.
    unsafe {
        let handle = libc::dlopen(name.as_ptr(), libc::RTLD_NOW | libc::RTLD_NOLOAD);
        if handle.is_null() {
            return Err(failed("dlopen"));
        }
        let symbol = libc::dlsym(handle, c"OrtGetApiBase".as_ptr());
        let version = if symbol.is_null() {
            Err(failed("no OrtGetApiBase"))
        } else {
            let get_base: unsafe extern "C" fn() -> *const ort::sys::OrtApiBase =
                std::mem::transmute(symbol);
            let base = get_base();
            if base.is_null() {
                Err(failed("OrtGetApiBase gave nothing"))
            } else {
                let text = ((*base).GetVersionString)();
                Ok(std::ffi::CStr::from_ptr(text)
                    .to_string_lossy()
                    .into_owned())
            }
        };
        libc::dlclose(handle);
        version
    }
}

static ENVIRONMENT: OnceLock<Result<ort::environment::Environment, RuntimeError>> = OnceLock::new();

/// The process-wide ONNX Runtime environment, loading the library on first use (see the module
/// documentation for where it comes from). ONNX Runtime allows one environment per process, so
/// the first outcome, success or failure, is kept.
pub fn environment() -> Result<&'static ort::environment::Environment, RuntimeError> {
    ENVIRONMENT
        .get_or_init(|| {
            let path = library_path()?;
            let builder = ort::init_from(&path).map_err(|e| {
                let mut reason = e.to_string();
                if let Some(dir) = path.parent().filter(|_| path.starts_with(cache_dir())) {
                    reason += &format!(" (delete {} to fetch it again)", dir.display());
                }
                RuntimeError::Load {
                    path: path.clone(),
                    reason,
                }
            })?;
            tracing::debug!("ONNX Runtime loaded from {}", path.display());
            let _ = LOADED.set(path.clone());
            builder
                .with_name("engine")
                .with_telemetry(false)
                .build()
                .map_err(|e| RuntimeError::Environment(e.to_string()))
        })
        .as_ref()
        .map_err(Clone::clone)
}

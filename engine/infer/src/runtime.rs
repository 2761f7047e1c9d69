//! Finding and loading the ONNX Runtime library.
//!
//! `ort` is built with `load-dynamic`: nothing is linked or downloaded at build time, and the
//! library is opened at run time. Where it comes from, in order ([`places`]):
//! 1. `ORT_DYLIB_PATH`, if set: that file, and nothing else (the way to use a GPU build);
//! 2. `.ort/<version>-<arch>/` in the checkout the engine was built from, where a developer's
//!    or CI's copy already is (git-ignored);
//! 3. the user's cache, `$XDG_CACHE_HOME/liuzhou-engine/ort/<version>-<arch>/` (by default
//!    `~/.cache/liuzhou-engine/...`), found the same from any directory;
//! 4. otherwise the fetcher a program registered with [`set_fetcher`] puts it into
//!    [`cache_dir`]. This crate starts no process: the binaries register the `provision`
//!    crate's download of the pinned PyPI wheel; without a fetcher the answer is
//!    [`RuntimeError::NotFound`], which says how to get the library.
//!
//! Every failure is a [`RuntimeError`] saying what to do; ort's own panic on a missing library
//! is never reached, because the library is loaded here before any other ort call.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The ONNX Runtime release this build of `ort` targets (API 31).
pub const ORT_VERSION: &str = "1.31.1";

/// The library's file name inside the wheel (`onnxruntime/capi/`) and in the cache.
pub const LIB_NAME: &str = "libonnxruntime.so.1.31.1";

/// What a user can do when the library is missing or broken; the end of each error's message.
pub const HINT: &str = "set ORT_DYLIB_PATH to a libonnxruntime.so of ONNX Runtime 1.31.x (it is \
     onnxruntime/capi/libonnxruntime.so.1.31.1 inside the PyPI wheel onnxruntime==1.31.1), or make \
     `python3 -m pip` work (Debian: apt-get install python3-pip) and PyPI reachable so the engine \
     can fetch it itself";

/// Why ONNX Runtime is not usable. Each message ends with what to do about it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RuntimeError {
    #[error("ORT_DYLIB_PATH={path} does not name a file; point it at libonnxruntime.so.{ORT_VERSION} or unset it to use the engine's own copy")]
    EnvPathMissing { path: PathBuf },
    #[error("no ONNX Runtime library at {}; the `engine` and `trainer-bridge` programs fetch it on first use, and in a checkout `cargo run -q -p provision --example ort_fetch` does; or {HINT}", list(searched))]
    NotFound { searched: Vec<PathBuf> },
    #[error("cannot load ONNX Runtime from {path}: {reason}; {HINT}")]
    Load { path: PathBuf, reason: String },
    /// The registered fetcher failed; its message says why and what to do.
    #[error("{0}")]
    Fetch(String),
    #[error("ONNX Runtime environment: {0}")]
    Environment(String),
}

fn list(paths: &[PathBuf]) -> String {
    let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    names.join(", ")
}

/// Puts the library into the directory it is given (the binaries' download, see the module
/// documentation).
pub type Fetcher = fn(&Path) -> Result<(), RuntimeError>;

static FETCHER: OnceLock<Fetcher> = OnceLock::new();

/// Registers how this process gets the library when the lookup finds none; the first
/// registration stays.
pub fn set_fetcher(fetch: Fetcher) {
    let _ = FETCHER.set(fetch);
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
/// there yet (a registered fetcher puts it into [`cache_dir`] on first use).
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

/// The library to load: the first of [`places`] that is there, else one the registered
/// fetcher puts into [`cache_dir`].
pub fn library_path() -> Result<PathBuf, RuntimeError> {
    if let Some(path) = find_library()? {
        return Ok(path);
    }
    let Some(fetch) = FETCHER.get() else {
        let searched = places().into_iter().map(|(_, p)| p).collect();
        return Err(RuntimeError::NotFound { searched });
    };
    let dir = cache_dir();
    fetch(&dir)?;
    Ok(dir.join(LIB_NAME))
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

//! Turns a `--model` argument into an evaluator (the one place that knows the model kinds),
//! and finds each game's default network from any directory ([`places`], [`default_network`]).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use anyhow::Context;
use eval::fake::FakeEvaluator;
use eval::Evaluator;
use games::Encoding;
use infer::onnx::{OrtEvaluator, OrtModel, OrtOptions, Provider};
use infer::Precision;

use crate::config;

/// The model name of no network: uniform priors, value 0.
pub const UNIFORM: &str = "uniform";

/// The model name of the network compiled into the engine (Liuzhou's; see [`built_in`]).
pub const BUILT_IN: &str = "built-in";

/// The environment variable naming a directory of networks, `<game>/best.onnx`, looked in
/// before any other place.
pub const MODELS_ENV: &str = "ENGINE_MODELS";

/// The games that may have a default network, in the order listings show them.
pub const GAMES: [&str; 3] = ["liuzhou", "xiangqi", "go"];

/// Liuzhou's shipped network, compiled in: it is small (777 KB, 4 blocks × 48 channels) and
/// makes `engine` play the main game well with nothing beside it. The Go network (1.8 MB)
/// stays a file.
const LIUZHOU_NET: &[u8] = include_bytes!("../../../models/liuzhou/best.onnx");
/// Its int8 model (`trainer-bridge quantize`), for `inference.precision: int8`.
const LIUZHOU_INT8: &[u8] = include_bytes!("../../../models/liuzhou/best.int8.onnx");

/// The network compiled into the engine for `game`, if any.
pub fn built_in(game: &str) -> Option<&'static [u8]> {
    (game == "liuzhou").then_some(LIUZHOU_NET)
}

/// The network compiled into the engine for `game` at `precision`, if any.
pub fn built_in_at(game: &str, precision: Precision) -> Option<&'static [u8]> {
    match precision {
        Precision::Int8 => (game == "liuzhou").then_some(LIUZHOU_INT8),
        Precision::Fp32 | Precision::Fp16 => built_in(game),
        Precision::Auto => built_in_at(game, Precision::Int8).or(built_in(game)),
    }
}

/// Where a default network can come from, in the order they are tried.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// `$ENGINE_MODELS/<game>/best.onnx`.
    Env,
    /// `models/<game>/best.onnx` of the checkout the engine was built from, while it exists.
    Checkout,
    /// The user's data directory, where `engine models install` copies the shipped networks.
    UserData,
    /// Compiled into the engine.
    BuiltIn,
}

impl Source {
    /// A short name for listings and logs.
    pub fn name(self) -> &'static str {
        match self {
            Source::Env => MODELS_ENV,
            Source::Checkout => "checkout",
            Source::UserData => "user data",
            Source::BuiltIn => "built-in",
        }
    }
}

/// One place a game's default network is looked for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Place {
    pub source: Source,
    /// The file; `None` for the built-in network, and for a place that cannot exist here
    /// (`ENGINE_MODELS` unset, no home directory, a checkout that is gone).
    pub file: Option<PathBuf>,
    /// Whether a network is there.
    pub found: bool,
}

impl Place {
    /// The model name that loads this place's network: its file, or [`BUILT_IN`].
    pub fn model(&self) -> String {
        match &self.file {
            Some(f) => f.to_string_lossy().into_owned(),
            None => BUILT_IN.to_owned(),
        }
    }

    /// Where it is, for people: the file, or what stands for it.
    pub fn location(&self) -> String {
        match (&self.file, self.source) {
            (Some(f), _) => f.display().to_string(),
            (None, Source::BuiltIn) => "compiled into this engine".into(),
            (None, Source::Env) => "not set".into(),
            (None, Source::Checkout) => "gone (the checkout the engine was built from)".into(),
            (None, Source::UserData) => "no home directory".into(),
        }
    }
}

/// The directories of networks (each holding `<game>/best.onnx`) tried before the built-in
/// one: `ENGINE_MODELS`, the checkout's `models/`, the user's data directory.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Roots {
    pub env: Option<PathBuf>,
    pub checkout: Option<PathBuf>,
    pub user_data: Option<PathBuf>,
}

impl Roots {
    /// This process's roots, from its environment and the engine's build.
    pub fn current() -> Roots {
        Roots {
            env: std::env::var_os(MODELS_ENV)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from),
            checkout: infer::runtime::checkout().map(|root| root.join("models")),
            user_data: user_models_dir(),
        }
    }

    /// Where `game`'s default network is looked for, in order, and which are there.
    pub fn places(&self, game: &str) -> Vec<Place> {
        let file = |root: &Option<PathBuf>| root.as_ref().map(|r| r.join(game).join("best.onnx"));
        let mut places: Vec<Place> = [
            (Source::Env, file(&self.env)),
            (Source::Checkout, file(&self.checkout)),
            (Source::UserData, file(&self.user_data)),
        ]
        .into_iter()
        .map(|(source, file)| Place {
            found: file.as_ref().is_some_and(|f| f.is_file()),
            source,
            file,
        })
        .collect();
        places.push(Place {
            source: Source::BuiltIn,
            file: None,
            found: built_in(game).is_some(),
        });
        places
    }

    /// The first place that holds `game`'s network.
    pub fn find(&self, game: &str) -> Option<Place> {
        self.places(game).into_iter().find(|p| p.found)
    }
}

/// `models/` in the user's data directory (`$XDG_DATA_HOME/liuzhou-engine/models`), where a
/// home directory exists.
pub fn user_models_dir() -> Option<PathBuf> {
    infer::runtime::user_dirs().map(|d| d.data_dir().join("models"))
}

/// Where `game`'s default network is looked for from this process, in order.
pub fn places(game: &str) -> Vec<Place> {
    Roots::current().places(game)
}

/// `game`'s default network: the first of [`places`] that holds one. The first call for a game
/// logs which it is, or that there is none and what plays instead (`fallback`, such as
/// "uniform priors"), in one line.
pub fn default_network(game: &str, fallback: &str) -> Option<Place> {
    let found = Roots::current().find(game);
    let line = match &found {
        Some(p) => format!(
            "{game}: default network {} ({})",
            p.location(),
            p.source.name()
        ),
        None => format!(
            "{game}: no network found ({MODELS_ENV}, the checkout, the user's data directory; \
             `engine models list`): using {fallback}"
        ),
    };
    log_once(&line);
    found
}

/// [`default_network`] where it plays `start`'s board: a network made for another board (a Go
/// network with fully connected heads plays the one size it was made for) is passed over, and
/// one warning names it and what plays instead (`fallback`). A network of any size plays
/// every board.
pub fn default_network_for<G: Encoding>(start: &G, fallback: &str) -> Option<Place> {
    let place = default_network(G::NAME, fallback)?;
    let model = place.model();
    if model == BUILT_IN {
        return Some(place);
    }
    // The metadata says which boards the model plays; a model that does not load is let
    // through, for its own load to report.
    match OrtModel::read_info(Path::new(&model)) {
        Ok(info) if !info.fits(start.shape()) => {
            let s = start.shape();
            let line = format!(
                "{}: the default network {} plays {}x{} only, not this {}x{} board: using \
                 {fallback}",
                G::NAME,
                place.location(),
                info.shape.height,
                info.shape.width,
                s.height,
                s.width
            );
            if first_time(&line) {
                tracing::warn!("{line}");
            }
            None
        }
        _ => Some(place),
    }
}

/// Logs `line` at info level the first time this process asks, at debug level after: a line
/// about a network or a fallback is said once, however many games or agents need it.
pub fn log_once(line: &str) {
    if first_time(line) {
        tracing::info!("{line}");
    } else {
        tracing::debug!("{line}");
    }
}

/// Whether this process has not said `line` before (and from now on, it has).
fn first_time(line: &str) -> bool {
    // Only grows; a poisoned lock still holds a valid list.
    static SAID: Mutex<Vec<String>> = Mutex::new(Vec::new());
    let mut said = SAID.lock().unwrap_or_else(|p| p.into_inner());
    if said.iter().any(|s| s == line) {
        return false;
    }
    said.push(line.to_owned());
    true
}

/// The evaluator named by `model`: [`UNIFORM`] (no network: uniform priors, value 0),
/// [`BUILT_IN`] (the network compiled into the engine), or an ONNX model file run by ONNX
/// Runtime with the config's `inference` section.
pub fn evaluator<G: Encoding>(
    start: &G,
    model: &str,
    doc: &serde_yaml::Value,
    config_path: &Path,
) -> anyhow::Result<Arc<dyn Evaluator<G>>> {
    evaluator_with(start, model, doc, config_path, Overrides::default())
}

/// Settings of the command line that replace the `inference` section's.
#[derive(Clone, Copy, Debug, Default)]
pub struct Overrides {
    /// `--provider`.
    pub provider: Option<Provider>,
    /// `--precision`.
    pub precision: Option<Precision>,
    /// Intra-op threads per network, where several networks share the cores (`engine match
    /// --parallel`).
    pub intra_threads: Option<usize>,
}

impl Overrides {
    /// For networks of `parallel` games played at once (one side of a game thinks at a time):
    /// each gets an equal share of the cores for its intra-op threads; a single game keeps the
    /// config's setting.
    pub fn sharing_cores(parallel: u32) -> Self {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        Overrides {
            intra_threads: (parallel > 1).then(|| (cores / parallel as usize).max(1)),
            ..Default::default()
        }
    }
}

/// As [`evaluator`], with the command line's `overrides` in place of the section's settings.
pub fn evaluator_with<G: Encoding>(
    start: &G,
    model: &str,
    doc: &serde_yaml::Value,
    config_path: &Path,
    overrides: Overrides,
) -> anyhow::Result<Arc<dyn Evaluator<G>>> {
    let mut opts: OrtOptions = config::inference(doc, config_path)?;
    if let Some(p) = overrides.provider {
        opts.provider = p;
    }
    if let Some(p) = overrides.precision {
        opts.precision = p;
    }
    opts.validate()
        .with_context(|| format!("config {}: section `inference`", config_path.display()))?;
    if let Some(n) = overrides.intra_threads {
        opts.intra_threads = n;
    }
    if model == UNIFORM {
        // A model of the game's variant, as a file would be.
        let uniform = FakeEvaluator::new(opts.batch_size.max(1)).for_board(start.shape());
        return Ok(Arc::new(uniform));
    }
    let evaluator = if model == BUILT_IN {
        opts.precision = opts.precision.resolve(
            opts.provider == Provider::Cpu,
            built_in_at(G::NAME, Precision::Int8).is_some(),
        );
        let bytes = built_in_at(G::NAME, opts.precision).with_context(|| {
            format!(
                "model {BUILT_IN}: no {} network is built into this engine for {}",
                opts.precision,
                G::NAME
            )
        })?;
        let file = match opts.precision {
            Precision::Int8 => "best.int8.onnx",
            Precision::Fp32 | Precision::Fp16 | Precision::Auto => "best.onnx",
        };
        let name = PathBuf::from(format!("{BUILT_IN} models/{}/{file}", G::NAME));
        let model = OrtModel::from_bytes(&name, bytes, &opts)
            .and_then(|m| OrtEvaluator::from_model(m, start));
        model.with_context(|| format!("loading the {BUILT_IN} {} network", G::NAME))?
    } else {
        OrtEvaluator::load(Path::new(model), start, &opts)
            .with_context(|| format!("loading model {model}"))?
    };
    Ok(Arc::new(evaluator))
}

/// The model `engine play`, `engine analyse` and `engine uci` play game `game` with: `--model` when given,
/// else, unless `--agent` asks for another agent than `net`, the game's default network
/// ([`default_network`]) if it has one; `fallback` says what plays when it has none.
pub fn given_or_default<G: Encoding>(
    model: Option<&Path>,
    agent: Option<&str>,
    start: &G,
    fallback: &str,
) -> Option<String> {
    if let Some(m) = model {
        return Some(m.to_string_lossy().into_owned());
    }
    if agent.is_some_and(|a| a != "net") {
        return None;
    }
    default_network_for(start, fallback).map(|p| p.model())
}

/// What `engine models install` did for one game.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Installed {
    /// Copied from this file.
    Copied { from: PathBuf, to: PathBuf },
    /// Written from the network compiled into the engine.
    BuiltIn { to: PathBuf },
    /// No shipped network to install: none in `from`, none built in.
    Nothing,
}

/// Copies each game's shipped network (`from/<game>/best.onnx`, else the built-in one) into
/// `to/<game>/best.onnx`, each written to a temporary name and renamed; its int8 model
/// (`best.int8.onnx`) goes with it where there is one.
pub fn install(from: Option<&Path>, to: &Path) -> anyhow::Result<Vec<(&'static str, Installed)>> {
    let mut done = Vec::new();
    for game in GAMES {
        let src = from.map(|f| f.join(game).join("best.onnx"));
        let dst_dir = to.join(game);
        let dst = dst_dir.join("best.onnx");
        let bytes = match (&src, built_in(game)) {
            (Some(src), _) if src.is_file() => {
                std::fs::read(src).with_context(|| format!("reading {}", src.display()))?
            }
            (_, Some(bytes)) => bytes.to_vec(),
            _ => {
                done.push((game, Installed::Nothing));
                continue;
            }
        };
        std::fs::create_dir_all(&dst_dir)
            .with_context(|| format!("creating {}", dst_dir.display()))?;
        write_renamed(&dst, &bytes)?;
        // The int8 model of the network installed: beside the file copied, or built in with
        // the built-in network. One left from an earlier install belongs to another network.
        let copied = src.as_ref().filter(|s| s.is_file());
        let int8 = match copied {
            Some(src) => std::fs::read(infer::precision::int8_path(src)).ok(),
            None => built_in_at(game, Precision::Int8).map(|b| b.to_vec()),
        };
        let dst_int8 = infer::precision::int8_path(&dst);
        match int8 {
            Some(bytes) => write_renamed(&dst_int8, &bytes)?,
            None if dst_int8.exists() => std::fs::remove_file(&dst_int8)
                .with_context(|| format!("removing {}", dst_int8.display()))?,
            None => {}
        }
        done.push((
            game,
            match src {
                Some(from) if from.is_file() => Installed::Copied { from, to: dst },
                _ => Installed::BuiltIn { to: dst },
            },
        ));
    }
    Ok(done)
}

/// Writes `bytes` to `dst` through a temporary name.
fn write_renamed(dst: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let tmp = dst.with_extension("onnx.tmp");
    std::fs::write(&tmp, bytes).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, dst).with_context(|| format!("writing {}", dst.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmpdir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("setup-models-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn put(root: &Path, game: &str) {
        std::fs::create_dir_all(root.join(game)).unwrap();
        std::fs::write(root.join(game).join("best.onnx"), b"net").unwrap();
    }

    #[test]
    fn the_first_place_holding_a_network_wins_in_order() {
        let dir = tmpdir("order");
        let (env, checkout, data) = (dir.join("env"), dir.join("checkout"), dir.join("data"));
        let roots = Roots {
            env: Some(env.clone()),
            checkout: Some(checkout.clone()),
            user_data: Some(data.clone()),
        };
        // Nothing anywhere: Liuzhou has its built-in network, the others none.
        assert_eq!(roots.find("liuzhou").unwrap().source, Source::BuiltIn);
        assert_eq!(roots.find("liuzhou").unwrap().model(), BUILT_IN);
        assert_eq!(roots.find("go"), None);
        put(&data, "go");
        assert_eq!(roots.find("go").unwrap().source, Source::UserData);
        put(&checkout, "go");
        put(&checkout, "liuzhou");
        assert_eq!(roots.find("go").unwrap().source, Source::Checkout);
        assert_eq!(roots.find("liuzhou").unwrap().source, Source::Checkout);
        put(&env, "go");
        let found = roots.find("go").unwrap();
        assert_eq!(
            (found.source, found.model()),
            (
                Source::Env,
                env.join("go/best.onnx").to_string_lossy().into_owned()
            )
        );
        assert_eq!(roots.find("xiangqi"), None);
        let places = roots.places("xiangqi");
        let sources: Vec<Source> = places.iter().map(|p| p.source).collect();
        assert_eq!(
            sources,
            [
                Source::Env,
                Source::Checkout,
                Source::UserData,
                Source::BuiltIn
            ]
        );
        assert!(places.iter().all(|p| !p.found));
        // Places that cannot exist here say why.
        let none = Roots::default().places("go");
        assert_eq!(none[0].location(), "not set");
        assert_eq!(none[3].location(), "compiled into this engine");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn install_copies_shipped_networks_and_writes_the_built_in_one_where_none_is_given() {
        let dir = tmpdir("install");
        let (from, to) = (dir.join("from"), dir.join("to"));
        put(&from, "go");
        let done = install(Some(&from), &to).unwrap();
        assert_eq!(done[1], ("xiangqi", Installed::Nothing));
        assert_eq!(
            done[2],
            (
                "go",
                Installed::Copied {
                    from: from.join("go/best.onnx"),
                    to: to.join("go/best.onnx")
                }
            )
        );
        assert_eq!(std::fs::read(to.join("go/best.onnx")).unwrap(), b"net");
        assert_eq!(
            std::fs::read(to.join("liuzhou/best.onnx")).unwrap(),
            LIUZHOU_NET
        );
        // The built-in network's int8 model goes with it; the copied Go network has none.
        assert_eq!(
            std::fs::read(to.join("liuzhou/best.int8.onnx")).unwrap(),
            LIUZHOU_INT8
        );
        assert!(!to.join("go/best.int8.onnx").exists());
        // One beside the copied network is copied; a stale one is removed.
        std::fs::write(from.join("go/best.int8.onnx"), b"int8").unwrap();
        install(Some(&from), &to).unwrap();
        assert_eq!(
            std::fs::read(to.join("go/best.int8.onnx")).unwrap(),
            b"int8"
        );
        std::fs::remove_file(from.join("go/best.int8.onnx")).unwrap();
        install(Some(&from), &to).unwrap();
        assert!(!to.join("go/best.int8.onnx").exists());
        assert!(!to.join("xiangqi").exists());
        let roots = Roots {
            user_data: Some(to.clone()),
            ..Default::default()
        };
        assert_eq!(roots.find("liuzhou").unwrap().source, Source::UserData);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_built_in_network_is_the_shipped_liuzhou_file() {
        let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models/liuzhou/best.onnx");
        assert_eq!(
            std::fs::read(shipped).unwrap(),
            built_in("liuzhou").unwrap()
        );
        assert!(built_in("go").is_none() && built_in("xiangqi").is_none());
        // The built-in int8 model is the shipped one, quantised from the built-in network:
        // it records that network's CRC-32.
        let int8 =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models/liuzhou/best.int8.onnx");
        assert_eq!(std::fs::read(int8).unwrap(), LIUZHOU_INT8);
        let crc = infer::precision::source_crc32(LIUZHOU_NET);
        assert!(
            LIUZHOU_INT8.windows(crc.len()).any(|w| w == crc.as_bytes()),
            "models/liuzhou/best.int8.onnx was not quantised from models/liuzhou/best.onnx \
             (CRC-32 {crc}): run trainer-bridge quantize again"
        );
        assert!(LIUZHOU_NET.len() < 2 << 20, "{} bytes", LIUZHOU_NET.len());
    }
}

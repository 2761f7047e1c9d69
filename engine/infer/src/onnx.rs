//! The ONNX Runtime evaluator: a model written by `trainer-bridge`, checked against the game
//! and run in fixed-size batches.
//!
//! [`OrtModel`] is game-agnostic (encoded floats in, logits and values out); [`OrtEvaluator`]
//! puts a [`Game`] in front of it. The model's interface and metadata keys are documented in
//! `trainer-bridge`'s `onnx` module; what is read here must match what is written there (the
//! parity tests prove it).

use std::fmt;
use std::marker::PhantomData;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Mutex;

use games::{Encoding, TensorShape};
use ort::ep::ExecutionProvider as _;
use ort::session::builder::{GraphOptimizationLevel, SessionBuilder};
use ort::session::Session;
use ort::value::TensorRef;

use crate::precision::{self, Precision};
use crate::runtime::{self, RuntimeError};
use eval::{AuxOutputs, EvalError, Evaluator, Heads};

/// Model interface version understood here (metadata key `format_version`).
pub const FORMAT_VERSION: u32 = 1;
/// Input and output names of the model.
pub const INPUT: &str = "input";
pub const POLICY: &str = "policy";
pub const VALUE: &str = "value";
/// Optional outputs (trainer-bridge writes them where the config's network has the heads):
/// `[batch, cells]` ownership, `[batch, 1]` score, `[batch, 3]` win/draw/loss logits.
pub const OWNERSHIP: &str = "ownership";
pub const SCORE: &str = "score";
pub const WDL: &str = "wdl";

/// Largest accepted batch size: the input buffer is allocated up front.
pub const MAX_BATCH: usize = 1 << 16;

/// A network call below the batch size runs a multiple of this many rows ([`OrtModel::rows`]).
const ROW_STEP: usize = 8;

/// Where the network runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Provider {
    /// ONNX Runtime's CPU execution provider (always present).
    Cpu,
    /// NVIDIA CUDA: needs a GPU build of ONNX Runtime (`onnxruntime-gpu`) and the CUDA libraries.
    Cuda,
    /// NVIDIA TensorRT: as CUDA, plus TensorRT's own libraries (not on the package registries).
    #[serde(rename = "tensorrt")]
    TensorRt,
}

impl Provider {
    pub const ALL: [Provider; 3] = [Provider::Cpu, Provider::Cuda, Provider::TensorRt];

    /// The spelling in configs and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Provider::Cpu => "cpu",
            Provider::Cuda => "cuda",
            Provider::TensorRt => "tensorrt",
        }
    }
}

impl fmt::Display for Provider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Provider {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Provider::ALL
            .into_iter()
            .find(|p| p.as_str().eq_ignore_ascii_case(s))
            .ok_or_else(|| {
                format!("unknown execution provider {s:?}; expected cpu, cuda or tensorrt")
            })
    }
}

/// How to run a model.
#[derive(Clone, Debug, PartialEq, serde::Deserialize, serde::Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct OrtOptions {
    /// States per network call; fewer are padded, more are split into several calls.
    pub batch_size: usize,
    /// ONNX Runtime intra-op threads; 0 lets ONNX Runtime choose (one per core).
    pub intra_threads: usize,
    /// The execution provider to ask for.
    pub provider: Provider,
    /// GPU ordinal for CUDA and TensorRT.
    pub device_id: i32,
    /// If the requested provider cannot run, fall back (TensorRT → CUDA → CPU) and say so in
    /// [`OrtModel::provider`] and the logs, instead of failing.
    pub allow_fallback: bool,
    /// `int8` runs the quantised model beside the one named (`x.onnx` → `x.int8.onnx`);
    /// `auto` runs it where it is there (CPU only); `fp16` asks TensorRT for half-precision
    /// engines (GPUs only).
    pub precision: Precision,
}

impl Default for OrtOptions {
    fn default() -> Self {
        OrtOptions {
            batch_size: 64,
            intra_threads: 1,
            provider: Provider::Cpu,
            device_id: 0,
            allow_fallback: true,
            precision: Precision::Fp32,
        }
    }
}

/// Most intra-op threads accepted: more is a typo, and ONNX Runtime would try to start them.
pub const MAX_INTRA_THREADS: usize = 1024;

impl OrtOptions {
    /// Range checks, so that a bad `inference` section fails when the config is read, before
    /// any model is loaded or any game is played.
    pub fn validate(&self) -> Result<(), eval::InvalidSetting> {
        use eval::InvalidSetting as I;
        I::check(
            (1..=MAX_BATCH).contains(&self.batch_size),
            "batch_size",
            self.batch_size,
            format_args!("1 to {MAX_BATCH}"),
        )?;
        I::check(
            self.intra_threads <= MAX_INTRA_THREADS,
            "intra_threads",
            self.intra_threads,
            format_args!("0 (one per core) to {MAX_INTRA_THREADS}"),
        )?;
        I::check(
            self.device_id >= 0,
            "device_id",
            self.device_id,
            "0 or more",
        )?;
        I::check(
            self.precision != Precision::Fp16 || self.provider == Provider::TensorRt,
            "precision",
            format_args!("fp16 with provider {}", self.provider),
            "fp16 only with provider tensorrt (it runs on GPUs); on the CPU use fp32 or int8",
        )
    }
}

/// What the model says about itself (its ONNX metadata).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelInfo {
    pub format_version: u32,
    /// The game's `NAME`.
    pub game: String,
    pub shape: TensorShape,
    /// The network configuration, as JSON.
    pub network: String,
    pub generation: u64,
    /// Metadata `precision`: `int8` for a quantised model; absent means fp32.
    pub precision: Precision,
    /// Metadata `source_crc32` of an int8 model: the CRC-32 of the fp32 model it was made from.
    pub source_crc32: Option<String>,
    /// Metadata `any_size`: the board's dims are open, and the model plays every board of its
    /// game whose policy is one entry a point then pass (Go of any size); `shape` is the board
    /// it was trained on.
    pub any_size: bool,
}

impl ModelInfo {
    /// Whether the model can evaluate states of `shape`: its own, or, for a model of any size,
    /// any board with its planes and a policy of a point each then pass.
    pub fn fits(&self, shape: TensorShape) -> bool {
        shape == self.shape
            || self.any_size
                && shape.planes == self.shape.planes
                && shape.policy_size == shape.height * shape.width + 1
    }
}

/// The provider that really runs a model, and why it differs from the one asked for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProviderReport {
    pub requested: Provider,
    pub active: Provider,
    /// Why each provider tried before `active` could not be used.
    pub fallbacks: Vec<String>,
}

impl fmt::Display for ProviderReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.active)?;
        if self.active != self.requested {
            write!(
                f,
                " (fell back from {}: {})",
                self.requested,
                self.fallbacks.join("; ")
            )?;
        }
        Ok(())
    }
}

/// Why a model could not be loaded. Each names the file.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error("{path}: no such model file")]
    Missing { path: PathBuf },
    #[error(
        "{path}: no int8 model beside {model} (inference.precision int8); make it with \
         `trainer-bridge quantize --model {model} --shards DIR` (DIR: shards of the game's \
         positions, e.g. from `engine selfplay`), or set inference.precision: fp32"
    )]
    MissingInt8 { path: PathBuf, model: PathBuf },
    #[error(
        "{path}: quantised from another model than {model} (its CRC-32 is {found}, the int8 \
         model records {recorded}); make it again with `trainer-bridge quantize --model \
         {model} --shards DIR`"
    )]
    StaleInt8 {
        path: PathBuf,
        model: PathBuf,
        found: String,
        recorded: String,
    },
    #[error("{path}: a {found} model, but inference.precision asks for {wanted}")]
    WrongPrecision {
        path: PathBuf,
        wanted: Precision,
        found: Precision,
    },
    #[error("{path}: cannot read: {reason}")]
    Read { path: PathBuf, reason: String },
    #[error("{path}: not a loadable ONNX model (truncated or corrupt?): {reason}")]
    Invalid { path: PathBuf, reason: String },
    #[error("{path}: metadata `{key}`: {reason}")]
    Metadata {
        path: PathBuf,
        key: &'static str,
        reason: String,
    },
    #[error("{path}: the model is for the game {found:?}, not {expected:?}")]
    WrongGame {
        path: PathBuf,
        expected: String,
        found: String,
    },
    #[error("{path}: the model's tensors are {found}, the game needs {expected}{hint}")]
    WrongShape {
        path: PathBuf,
        expected: ShapeText,
        found: ShapeText,
        /// How to carry the model over, where it only lacks planes the game added.
        hint: &'static str,
    },
    #[error("{path}: inputs/outputs: {reason}")]
    Interface { path: PathBuf, reason: String },
    #[error("execution provider {requested}: {reason}")]
    Provider { requested: Provider, reason: String },
    #[error("bad evaluator options: {0}")]
    Options(String),
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
}

/// A [`TensorShape`] printed as `planes×height×width → policy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShapeText(pub TensorShape);

impl fmt::Display for ShapeText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = self.0;
        write!(
            f,
            "{}×{}×{} planes → policy {}",
            s.planes, s.height, s.width, s.policy_size
        )
    }
}

fn check_batch(opts: &OrtOptions) -> Result<(), ModelError> {
    if (1..=MAX_BATCH).contains(&opts.batch_size) {
        Ok(())
    } else {
        Err(ModelError::Options(format!(
            "batch_size {} is not in 1..={MAX_BATCH}",
            opts.batch_size
        )))
    }
}

/// Whether this process loads the model `name` for the first time: a load is logged once per
/// process, however many games, agents or iterations load the same file.
fn first_load(name: &Path) -> bool {
    // Only grows; a poisoned lock still holds a valid list.
    static LOADED: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
    let mut loaded = LOADED.lock().unwrap_or_else(|p| p.into_inner());
    if loaded.iter().any(|p| p == name) {
        return false;
    }
    loaded.push(name.to_owned());
    true
}

/// A loaded model with its session and a reused input buffer.
pub struct OrtModel {
    path: PathBuf,
    info: ModelInfo,
    batch: usize,
    provider: ProviderReport,
    /// The session needs `&mut` to run, and the threads of a search or of self-play share the
    /// model: held for one network call only.
    session: Mutex<Session>,
    /// The optional outputs the graph has (read by name).
    heads: Heads,
    /// Input buffers (`batch × input_len` floats) of the calls not running, reused. Each call
    /// takes one and encodes its states into it before waiting for the session, so that one
    /// caller's encoding overlaps another's network call.
    inputs: Mutex<Vec<Vec<f32>>>,
}

impl OrtModel {
    /// Loads a model, reads and checks its metadata and interface, and builds a session with
    /// the requested provider (see [`OrtOptions::allow_fallback`]).
    ///
    /// With [`Precision::Int8`] the file loaded is the int8 model beside `path`
    /// ([`precision::int8_path`]; `path` itself when it names one): missing, it is
    /// [`ModelError::MissingInt8`], naming the command that makes it; quantised from another
    /// model than the one at `path`, it is [`ModelError::StaleInt8`].
    ///
    /// With [`Precision::Auto`] it is the int8 model where the provider is the CPU and that
    /// file is there, else `path` in fp32; an int8 file quantised from another model is passed
    /// over with a warning.
    /// What the model file at `path` says about itself ([`ModelInfo`]), read without keeping
    /// or announcing the model: a caller deciding whether to play it at all.
    pub fn read_info(path: &Path) -> Result<ModelInfo, ModelError> {
        let env = runtime::environment()?;
        let bytes = read_model(path)?;
        let (session, _) = build_session(env, path, &bytes, &OrtOptions::default())?;
        let info = read_info(&session, path)?;
        check_interface(&session, path, &info)?;
        Ok(info)
    }

    pub fn load(path: &Path, opts: &OrtOptions) -> Result<OrtModel, ModelError> {
        check_batch(opts)?;
        if opts.precision == Precision::Auto {
            let has_int8 = !precision::is_int8_path(path) && precision::int8_path(path).is_file();
            let mut chosen = opts.clone();
            chosen.precision = opts
                .precision
                .resolve(opts.provider == Provider::Cpu, has_int8);
            if chosen.precision == Precision::Int8 {
                match Self::load(path, &chosen) {
                    Err(e @ ModelError::StaleInt8 { .. }) => {
                        tracing::warn!("{e}; playing {} in fp32", path.display());
                        chosen.precision = Precision::Fp32;
                    }
                    loaded => return loaded,
                }
            }
            return Self::load(path, &chosen);
        }
        if opts.precision != Precision::Int8 || precision::is_int8_path(path) {
            return Self::build(path, &read_model(path)?, opts, None);
        }
        let file = precision::int8_path(path);
        let bytes = read_model(&file).map_err(|e| match e {
            ModelError::Missing { path: int8 } => ModelError::MissingInt8 {
                path: int8,
                model: path.to_owned(),
            },
            e => e,
        })?;
        // The fp32 model it belongs to, where it is there to compare with.
        let source = std::fs::read(path).ok();
        Self::build(&file, &bytes, opts, source.as_deref().map(|s| (path, s)))
    }

    /// [`OrtModel::load`] for a model already in memory (one compiled into the binary);
    /// `name` stands for its path in messages. With [`Precision::Int8`] the bytes must be an
    /// int8 model.
    pub fn from_bytes(
        name: &Path,
        bytes: &[u8],
        opts: &OrtOptions,
    ) -> Result<OrtModel, ModelError> {
        Self::build(name, bytes, opts, None)
    }

    /// Loads `bytes`; `source` is the fp32 model (its path and bytes) an int8 model must have
    /// been quantised from.
    fn build(
        name: &Path,
        bytes: &[u8],
        opts: &OrtOptions,
        source: Option<(&Path, &[u8])>,
    ) -> Result<OrtModel, ModelError> {
        check_batch(opts)?;
        let env = runtime::environment()?;
        let (session, provider) = build_session(env, name, bytes, opts)?;
        let info = read_info(&session, name)?;
        check_interface(&session, name, &info)?;
        if opts.precision == Precision::Int8 && info.precision != Precision::Int8 {
            return Err(ModelError::WrongPrecision {
                path: name.to_owned(),
                wanted: Precision::Int8,
                found: info.precision,
            });
        }
        if let (Some((model, source)), Some(recorded)) = (source, &info.source_crc32) {
            let found = precision::source_crc32(source);
            if found != *recorded {
                return Err(ModelError::StaleInt8 {
                    path: name.to_owned(),
                    model: model.to_owned(),
                    found,
                    recorded: recorded.clone(),
                });
            }
        }
        let input = vec![0.0; opts.batch_size * info.shape.input_len()];
        let has = |name: &str| session.outputs().iter().any(|o| o.name() == name);
        let heads = Heads {
            ownership: has(OWNERSHIP),
            score: has(SCORE),
            wdl: has(WDL),
        };
        let text = format!(
            "loaded {} ({} generation {}, {}, batch {}, provider {})",
            name.display(),
            info.game,
            info.generation,
            info.precision,
            opts.batch_size,
            provider
        );
        if first_load(name) {
            tracing::info!("{text}");
        } else {
            tracing::debug!("{text}");
        }
        Ok(OrtModel {
            path: name.to_owned(),
            info,
            batch: opts.batch_size,
            provider,
            session: Mutex::new(session),
            heads,
            inputs: Mutex::new(vec![input]),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn info(&self) -> &ModelInfo {
        &self.info
    }

    pub fn batch_size(&self) -> usize {
        self.batch
    }

    /// The optional outputs the model has.
    pub fn heads(&self) -> Heads {
        self.heads
    }

    /// The execution provider that really runs this model.
    pub fn provider(&self) -> &ProviderReport {
        &self.provider
    }

    /// Rows of the network call that evaluates `n` states (n ≤ batch size). TensorRT builds
    /// an engine per input shape, so it always gets the whole batch. Elsewhere a call runs
    /// `n` rounded up to a multiple of [`ROW_STEP`]: a search of one game gathers far fewer
    /// leaves than a batch holds (17 of 64 at 200 visits), and padding them to the batch
    /// would spend most of the call's arithmetic on zeros; the rounding keeps the number of
    /// distinct shapes ONNX Runtime plans for small.
    fn rows(&self, n: usize) -> usize {
        if self.provider.active == Provider::TensorRt {
            self.batch
        } else {
            (n.max(1).div_ceil(ROW_STEP) * ROW_STEP).min(self.batch)
        }
    }

    /// Evaluates `n` inputs. `fill` writes them into the first `n × input_len` floats of the
    /// buffer it is given (n ≤ batch size); the rest of the call's rows ([`OrtModel::rows`])
    /// are padding. Writes `n × policy_size` logits into `policy` and `n` values into `value`.
    fn run_chunk(
        &self,
        shape: TensorShape,
        n: usize,
        fill: impl FnOnce(&mut [f32]),
        policy: &mut [f32],
        value: &mut [f32],
        aux: Option<&mut AuxOutputs>,
    ) -> Result<(), EvalError> {
        let len = shape.input_len();
        let spare = self.inputs.lock().unwrap_or_else(|p| p.into_inner()).pop();
        let mut input = spare.unwrap_or_default();
        // A model of any size gets boards of several sizes.
        input.resize(self.batch * len, 0.0);
        let rows = self.rows(n);
        fill(&mut input[..n * len]);
        input[n * len..rows * len].fill(0.0);
        let result = self.run_rows(shape, &input[..rows * len], n, policy, value, aux);
        self.inputs
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(input);
        result
    }

    /// Runs the network on `input` (whole rows, padding included) and copies the outputs of
    /// its first `n` rows; with `aux`, the optional outputs the model has are appended to it.
    fn run_rows(
        &self,
        shape: TensorShape,
        input: &[f32],
        n: usize,
        policy: &mut [f32],
        value: &mut [f32],
        aux: Option<&mut AuxOutputs>,
    ) -> Result<(), EvalError> {
        let rows = input.len() / shape.input_len();
        let dims = [rows, shape.planes, shape.height, shape.width];
        let tensor = TensorRef::from_array_view((dims, input)).map_err(backend)?;
        let mut session = self.session.lock().unwrap_or_else(|p| p.into_inner());
        let outputs = session
            .run(ort::inputs![INPUT => tensor])
            .map_err(backend)?;
        let (_, p) = outputs[POLICY]
            .try_extract_tensor::<f32>()
            .map_err(backend)?;
        let (_, v) = outputs[VALUE]
            .try_extract_tensor::<f32>()
            .map_err(backend)?;
        let ps = shape.policy_size;
        if p.len() < n * ps || v.len() < n {
            return Err(EvalError::Backend(format!(
                "{}: outputs hold {} logits and {} values for {n} states",
                self.path.display(),
                p.len(),
                v.len()
            )));
        }
        policy[..n * ps].copy_from_slice(&p[..n * ps]);
        value[..n].copy_from_slice(&v[..n]);
        if let Some(aux) = aux {
            let cells = shape.height * shape.width;
            for (name, width, sink) in [
                (OWNERSHIP, cells, &mut aux.ownership),
                (SCORE, 1, &mut aux.score),
                (WDL, 3, &mut aux.wdl),
            ] {
                let Some(out) = outputs.get(name) else {
                    continue;
                };
                let (_, x) = out.try_extract_tensor::<f32>().map_err(backend)?;
                if x.len() < n * width {
                    return Err(EvalError::Backend(format!(
                        "{}: output {name:?} holds {} values for {n} states",
                        self.path.display(),
                        x.len()
                    )));
                }
                sink.get_or_insert_with(Vec::new)
                    .extend_from_slice(&x[..n * width]);
            }
        }
        Ok(())
    }

    /// Evaluates encoded inputs (`inputs.len()` a multiple of `input_len`), in as many batches
    /// as needed.
    pub fn evaluate_encoded(
        &self,
        inputs: &[f32],
        policy: &mut [f32],
        value: &mut [f32],
    ) -> Result<(), EvalError> {
        let len = self.info.shape.input_len();
        if !inputs.chunks_exact(len).remainder().is_empty() {
            return Err(EvalError::Backend(format!(
                "{} floats are not a whole number of {len}-float inputs",
                inputs.len()
            )));
        }
        let n = inputs.len() / len;
        let shape = self.info.shape;
        self.for_chunks(shape, n, policy, value, |start, count, policy, value| {
            let src = &inputs[start * len..(start + count) * len];
            self.run_chunk(
                shape,
                count,
                |buf| buf.copy_from_slice(src),
                policy,
                value,
                None,
            )
        })
    }

    /// Splits `n` items into batches, checking the output slices' lengths once.
    fn for_chunks(
        &self,
        shape: TensorShape,
        n: usize,
        policy: &mut [f32],
        value: &mut [f32],
        mut f: impl FnMut(usize, usize, &mut [f32], &mut [f32]) -> Result<(), EvalError>,
    ) -> Result<(), EvalError> {
        let ps = shape.policy_size;
        if policy.len() != n * ps || value.len() != n {
            return Err(EvalError::Backend(format!(
                "output buffers hold {} logits and {} values; {n} states need {} and {n}",
                policy.len(),
                value.len(),
                n * ps
            )));
        }
        let mut start = 0;
        for (policy, value) in policy
            .chunks_mut(self.batch * ps)
            .zip(value.chunks_mut(self.batch))
        {
            let count = value.len();
            f(start, count, policy, value)?;
            start += count;
        }
        Ok(())
    }
}

/// The bytes of the model file at `path`.
fn read_model(path: &Path) -> Result<Vec<u8>, ModelError> {
    std::fs::read(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => ModelError::Missing {
            path: path.to_owned(),
        },
        _ => ModelError::Read {
            path: path.to_owned(),
            reason: e.to_string(),
        },
    })
}

fn backend(e: ort::Error) -> EvalError {
    EvalError::Backend(e.to_string())
}

/// Tries the requested provider, then (if allowed) the fallbacks, building a session with each
/// until one works. A model that cannot be parsed fails on the CPU too, and that error is
/// returned.
pub(crate) fn build_session(
    env: &ort::environment::Environment,
    path: &Path,
    bytes: &[u8],
    opts: &OrtOptions,
) -> Result<(Session, ProviderReport), ModelError> {
    let lone = [opts.provider];
    let chain: &[Provider] = match (opts.provider, opts.allow_fallback) {
        (_, false) | (Provider::Cpu, true) => &lone,
        (Provider::Cuda, true) => &[Provider::Cuda, Provider::Cpu],
        (Provider::TensorRt, true) => &[Provider::TensorRt, Provider::Cuda, Provider::Cpu],
    };
    let mut fallbacks = Vec::new();
    for &provider in chain {
        match try_session(env, bytes, opts, provider) {
            Ok(session) => {
                if provider != opts.provider {
                    tracing::warn!(
                        "{}: running on {provider} instead of {}: {}",
                        path.display(),
                        opts.provider,
                        fallbacks.join("; ")
                    );
                }
                return Ok((
                    session,
                    ProviderReport {
                        requested: opts.provider,
                        active: provider,
                        fallbacks,
                    },
                ));
            }
            Err(Attempt::Provider(reason)) if provider != Provider::Cpu => {
                if !opts.allow_fallback {
                    return Err(ModelError::Provider {
                        requested: provider,
                        reason,
                    });
                }
                fallbacks.push(format!("{provider}: {reason}"));
            }
            Err(Attempt::Provider(reason)) | Err(Attempt::Commit(reason)) => {
                return Err(ModelError::Invalid {
                    path: path.to_owned(),
                    reason,
                });
            }
        }
    }
    unreachable!("the chain ends with CPU or returns for a lone provider")
}

enum Attempt {
    /// The provider could not be registered (or a session with it could not be created).
    Provider(String),
    /// The model itself was refused.
    Commit(String),
}

fn try_session(
    env: &ort::environment::Environment,
    bytes: &[u8],
    opts: &OrtOptions,
    provider: Provider,
) -> Result<Session, Attempt> {
    let commit = |e: ort::Error<SessionBuilder>| Attempt::Commit(e.to_string());
    let mut builder = Session::builder(env)
        .map_err(|e| Attempt::Commit(e.to_string()))?
        .with_optimization_level(GraphOptimizationLevel::All)
        .map_err(commit)?
        .with_intra_threads(opts.intra_threads)
        .map_err(commit)?;
    let fp16 = opts.precision == Precision::Fp16;
    register(&mut builder, provider, opts.device_id, fp16).map_err(Attempt::Provider)?;
    builder.commit_from_memory(bytes).map_err(|e| {
        if provider == Provider::Cpu {
            Attempt::Commit(e.to_string())
        } else {
            // A GPU session can fail at creation (missing CUDA libraries) on a valid model;
            // the CPU attempt that follows tells the two apart.
            Attempt::Provider(format!("session creation failed: {e}"))
        }
    })
}

const NO_GPU_BUILD: &str = "this ONNX Runtime library has no such execution provider (the PyPI \
    wheel onnxruntime is CPU-only: point ORT_DYLIB_PATH at libonnxruntime.so from \
    onnxruntime-gpu==1.31.1)";

fn register(
    builder: &mut SessionBuilder,
    provider: Provider,
    device_id: i32,
    fp16: bool,
) -> Result<(), String> {
    let dispatch = match provider {
        Provider::Cpu => return Ok(()),
        Provider::Cuda => {
            if !ort::ep::CUDA::is_available().map_err(|e| e.to_string())? {
                return Err(NO_GPU_BUILD.into());
            }
            ort::ep::CUDA::default().with_device_id(device_id).build()
        }
        Provider::TensorRt => {
            if !ort::ep::TensorRT::is_available().map_err(|e| e.to_string())? {
                return Err(format!(
                    "{NO_GPU_BUILD}; TensorRT also needs NVIDIA's TensorRT libraries, which the \
                     package registries do not carry"
                ));
            }
            ort::ep::TensorRT::default()
                .with_device_id(device_id)
                .with_fp16(fp16)
                .build()
        }
    };
    dispatch
        .error_on_failure()
        .register(builder)
        .map_err(|e| e.to_string())
}

fn read_info(session: &Session, path: &Path) -> Result<ModelInfo, ModelError> {
    let meta = session.metadata().map_err(|e| ModelError::Invalid {
        path: path.to_owned(),
        reason: e.to_string(),
    })?;
    let get = |key: &'static str| {
        meta.custom(key).ok_or_else(|| ModelError::Metadata {
            path: path.to_owned(),
            key,
            reason: "missing (not a model written by trainer-bridge?)".into(),
        })
    };
    let number = |key: &'static str| -> Result<u64, ModelError> {
        let text = get(key)?;
        text.trim().parse().map_err(|_| ModelError::Metadata {
            path: path.to_owned(),
            key,
            reason: format!("{text:?} is not a whole number"),
        })
    };
    let format_version = number("format_version")?;
    if format_version != u64::from(FORMAT_VERSION) {
        return Err(ModelError::Metadata {
            path: path.to_owned(),
            key: "format_version",
            reason: format!("version {format_version}; this engine reads version {FORMAT_VERSION}"),
        });
    }
    let size = |key| number(key).map(|n| n as usize);
    Ok(ModelInfo {
        format_version: FORMAT_VERSION,
        game: get("game")?,
        shape: TensorShape {
            planes: size("planes")?,
            height: size("height")?,
            width: size("width")?,
            policy_size: size("policy_size")?,
        },
        network: get("network")?,
        generation: number("generation")?,
        precision: match meta.custom("precision") {
            None => Precision::Fp32,
            Some(text) => match text.parse() {
                Ok(p @ (Precision::Fp32 | Precision::Int8)) => p,
                _ => {
                    return Err(ModelError::Metadata {
                        path: path.to_owned(),
                        key: "precision",
                        reason: format!("{text:?}; this engine reads fp32 and int8 models"),
                    })
                }
            },
        },
        source_crc32: meta.custom("source_crc32"),
        any_size: meta.custom("any_size").as_deref() == Some("1"),
    })
}

/// The graph's own input and output shapes must agree with its metadata.
fn check_interface(session: &Session, path: &Path, info: &ModelInfo) -> Result<(), ModelError> {
    let shape = info.shape;
    let fail = |reason: String| ModelError::Interface {
        path: path.to_owned(),
        reason,
    };
    let dims = |outlets: &[ort::value::Outlet], name: &str| -> Result<Vec<i64>, ModelError> {
        let outlet = outlets
            .iter()
            .find(|o| o.name() == name)
            .ok_or_else(|| fail(format!("no tensor named {name:?}")))?;
        outlet
            .dtype()
            .tensor_shape()
            .map(|s| s.to_vec())
            .ok_or_else(|| fail(format!("{name:?} is not a tensor")))
    };
    let [p, mut h, mut w, mut ps] =
        [shape.planes, shape.height, shape.width, shape.policy_size].map(|d| d as i64);
    if info.any_size {
        // Open dims, which ONNX Runtime reports as −1.
        (h, w, ps) = (-1, -1, -1);
    }
    let checks = [
        (INPUT, dims(session.inputs(), INPUT)?, vec![p, h, w]),
        (POLICY, dims(session.outputs(), POLICY)?, vec![ps]),
        (VALUE, dims(session.outputs(), VALUE)?, vec![1]),
    ];
    for (name, found, want) in checks {
        // The first dimension is the dynamic batch.
        if found.len() != want.len() + 1 || found[1..] != want[..] {
            return Err(fail(format!(
                "{name:?} has dims {found:?}, metadata implies [batch, {}]",
                want.iter()
                    .map(|d| d.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
    }
    Ok(())
}

/// [`Evaluator`] over an ONNX model, for one game.
pub struct OrtEvaluator<G> {
    model: OrtModel,
    _game: PhantomData<fn() -> G>,
}

impl<G: Encoding> OrtEvaluator<G> {
    /// Loads a model for the variant of `proto` (Go's board size decides its shape); refuses a
    /// model written for another game or shape.
    pub fn load(path: &Path, proto: &G, opts: &OrtOptions) -> Result<Self, ModelError> {
        Self::from_model(OrtModel::load(path, opts)?, proto)
    }

    /// Wraps a loaded model after checking it against the game.
    pub fn from_model(model: OrtModel, proto: &G) -> Result<Self, ModelError> {
        let info = model.info();
        if info.game != G::NAME {
            return Err(ModelError::WrongGame {
                path: model.path.clone(),
                expected: G::NAME.into(),
                found: info.game.clone(),
            });
        }
        let (found, expected) = (info.shape, proto.shape());
        if !info.fits(expected) {
            let only_planes_added = found.planes < expected.planes
                && TensorShape {
                    planes: expected.planes,
                    ..found
                } == expected;
            return Err(ModelError::WrongShape {
                path: model.path.clone(),
                expected: ShapeText(expected),
                found: ShapeText(found),
                hint: if only_planes_added {
                    "; the model is for an earlier encoding of the game: `trainer-bridge \
                     upgrade --model ITS.safetensors --out NEW` carries its checkpoint over"
                } else {
                    ""
                },
            });
        }
        Ok(OrtEvaluator {
            model,
            _game: PhantomData,
        })
    }

    pub fn model(&self) -> &OrtModel {
        &self.model
    }

    /// Encodes and evaluates `states`, in as many calls as the batch needs; the optional
    /// outputs go to `aux` when given. A model of any size takes each stretch of states of one
    /// board size in calls of its own.
    fn run(
        &self,
        states: &[&G],
        policy: &mut [f32],
        value: &mut [f32],
        mut aux: Option<&mut AuxOutputs>,
    ) -> Result<(), EvalError> {
        let mut start = 0;
        let (mut p_at, mut v_at) = (0, 0);
        while start < states.len() {
            let shape = states[start].shape();
            if !self.model.info.fits(shape) {
                return Err(EvalError::Backend(format!(
                    "{}: a state of shape {} for a model of {}",
                    self.model.path.display(),
                    ShapeText(shape),
                    ShapeText(self.model.info.shape)
                )));
            }
            let end = start
                + states[start..]
                    .iter()
                    .take_while(|s| s.shape() == shape)
                    .count();
            let n = end - start;
            let ps = shape.policy_size;
            let (Some(p), Some(v)) = (
                policy.get_mut(p_at..p_at + n * ps),
                value.get_mut(v_at..v_at + n),
            ) else {
                return Err(EvalError::Backend(format!(
                    "output buffers hold {} logits and {} values, too few for {} states",
                    policy.len(),
                    value.len(),
                    states.len()
                )));
            };
            self.run_one_shape(shape, &states[start..end], p, v, aux.as_deref_mut())?;
            (start, p_at, v_at) = (end, p_at + n * ps, v_at + n);
        }
        if p_at != policy.len() || v_at != value.len() {
            return Err(EvalError::Backend(format!(
                "output buffers hold {} logits and {} values; {} states need {p_at} and {v_at}",
                policy.len(),
                value.len(),
                states.len()
            )));
        }
        Ok(())
    }

    /// [`OrtEvaluator::run`] of states of one `shape`.
    fn run_one_shape(
        &self,
        shape: TensorShape,
        states: &[&G],
        policy: &mut [f32],
        value: &mut [f32],
        mut aux: Option<&mut AuxOutputs>,
    ) -> Result<(), EvalError> {
        let len = shape.input_len();
        self.model.for_chunks(
            shape,
            states.len(),
            policy,
            value,
            |start, count, policy, value| {
                let chunk = &states[start..start + count];
                self.model.run_chunk(
                    shape,
                    count,
                    |buf| {
                        for (state, row) in chunk.iter().zip(buf.chunks_exact_mut(len)) {
                            state.encode(row);
                        }
                    },
                    policy,
                    value,
                    aux.as_deref_mut(),
                )
            },
        )
    }
}

impl<G: Encoding> Evaluator<G> for OrtEvaluator<G> {
    fn batch_size(&self) -> usize {
        self.model.batch
    }

    fn evaluate(
        &self,
        states: &[&G],
        policy: &mut [f32],
        value: &mut [f32],
    ) -> Result<(), EvalError> {
        self.run(states, policy, value, None)
    }

    fn heads(&self) -> Heads {
        self.model.heads
    }

    fn fits(&self, shape: TensorShape) -> bool {
        self.model.info.fits(shape)
    }

    fn evaluate_aux(
        &self,
        states: &[&G],
        policy: &mut [f32],
        value: &mut [f32],
    ) -> Result<AuxOutputs, EvalError> {
        let mut aux = AuxOutputs::default();
        let sink = self.model.heads.any().then_some(&mut aux);
        self.run(states, policy, value, sink)?;
        Ok(aux)
    }

    fn calls_cost_whole_batch(&self) -> bool {
        self.model.provider.active != Provider::Cpu
    }

    fn describe(&self) -> String {
        format!(
            "onnx {} ({} gen {}, {}, batch {}, provider {})",
            self.model.path.display(),
            self.model.info.game,
            self.model.info.generation,
            self.model.info.precision,
            self.model.batch,
            self.model.provider
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn provider_names_round_trip() {
        for p in Provider::ALL {
            assert_eq!(p.as_str().parse::<Provider>(), Ok(p));
            assert_eq!(p.to_string().to_uppercase().parse::<Provider>(), Ok(p));
        }
        let e = "rocm".parse::<Provider>().unwrap_err();
        assert!(e.contains("rocm") && e.contains("tensorrt"), "{e}");
    }

    #[test]
    fn fp16_is_for_tensorrt_only() {
        for (provider, ok) in [
            (Provider::Cpu, false),
            (Provider::Cuda, false),
            (Provider::TensorRt, true),
        ] {
            let opts = OrtOptions {
                provider,
                precision: Precision::Fp16,
                ..OrtOptions::default()
            };
            match opts.validate() {
                Ok(()) => assert!(ok, "{provider}"),
                Err(e) => {
                    assert!(!ok, "{provider}: {e}");
                    assert_eq!(e.key, "precision");
                    let text = e.to_string();
                    assert!(text.contains("GPUs") && text.contains("int8"), "{text}");
                }
            }
        }
        for precision in [Precision::Fp32, Precision::Int8] {
            let opts = OrtOptions {
                precision,
                ..OrtOptions::default()
            };
            assert_eq!(opts.validate(), Ok(()));
        }
    }

    #[test]
    fn provider_report_says_what_runs_and_why() {
        let same = ProviderReport {
            requested: Provider::Cpu,
            active: Provider::Cpu,
            fallbacks: vec![],
        };
        assert_eq!(same.to_string(), "cpu");
        let fell = ProviderReport {
            requested: Provider::TensorRt,
            active: Provider::Cpu,
            fallbacks: vec!["tensorrt: none".into(), "cuda: none".into()],
        };
        assert_eq!(
            fell.to_string(),
            "cpu (fell back from tensorrt: tensorrt: none; cuda: none)"
        );
    }
}

//! The inference section of `engine bench`: evaluations per second of [`OrtEvaluator`] against
//! the same model in a bare ONNX Runtime session, so that the ratio shows the engine's overhead
//! (encoding states, padding, locking, copying results out).

use std::path::Path;
use std::time::{Duration, Instant};

use games::Encoding;
use ort::session::Session;
use ort::value::TensorRef;
use rand::rngs::SmallRng;
use rand::SeedableRng;

use crate::onnx::{ModelError, OrtEvaluator, OrtOptions, Provider, INPUT, POLICY, VALUE};
use crate::precision::Precision;
use crate::runtime;
use eval::Evaluator;

/// The batch sizes `engine bench` reports.
pub const BATCH_SIZES: [usize; 5] = [1, 8, 32, 128, 512];

/// How to measure.
#[derive(Clone, Debug)]
pub struct BenchOptions {
    pub batch_sizes: Vec<usize>,
    /// Wall time per batch size, shared by the two sides (their calls alternate).
    pub min_time: Duration,
    /// ONNX Runtime intra-op threads for both sides.
    pub intra_threads: usize,
    /// Where both sides run; no fallback, so a figure is always the provider's own.
    pub provider: Provider,
}

impl Default for BenchOptions {
    fn default() -> Self {
        BenchOptions {
            batch_sizes: BATCH_SIZES.to_vec(),
            min_time: Duration::from_secs(2),
            intra_threads: 1,
            provider: Provider::Cpu,
        }
    }
}

/// One line of the report.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub game: &'static str,
    pub batch: usize,
    /// Through [`OrtEvaluator::evaluate`] (states in, logits and values out); both rates are
    /// batch size over the median time of one call.
    pub engine_evals_per_s: f64,
    /// `Session::run` on pre-encoded inputs, outputs only borrowed.
    pub bare_evals_per_s: f64,
}

impl Row {
    /// Engine throughput as a fraction of the bare session's.
    pub fn ratio(&self) -> f64 {
        self.engine_evals_per_s / self.bare_evals_per_s
    }
}

/// Measures the model at `path` for the game of `proto` at each batch size, on the provider
/// `opts` names.
///
/// The states are positions reached by random play from `proto`, so the encoding cost is that
/// of real positions.
pub fn run<G: Encoding>(
    path: &Path,
    proto: &G,
    opts: &BenchOptions,
) -> Result<Vec<Row>, ModelError> {
    let max = opts.batch_sizes.iter().copied().max().unwrap_or(1);
    let states = sample_states(proto, max, 0x5eed);
    let shape = proto.shape();
    let mut rows = Vec::new();
    for &batch in &opts.batch_sizes {
        let eval_opts = OrtOptions {
            batch_size: batch,
            intra_threads: opts.intra_threads,
            provider: opts.provider,
            allow_fallback: false,
            ..OrtOptions::default()
        };
        let evaluator = OrtEvaluator::load(path, proto, &eval_opts)?;
        let refs: Vec<&G> = states[..batch].iter().collect();
        let mut policy = vec![0.0; batch * shape.policy_size];
        let mut value = vec![0.0; batch];

        let mut bare = bare_session(path, &eval_opts)?;
        let mut input = vec![0.0; batch * shape.input_len()];
        for (s, row) in refs.iter().zip(input.chunks_exact_mut(shape.input_len())) {
            s.encode(row);
        }
        let dims = [batch, shape.planes, shape.height, shape.width];

        let mut engine = || {
            evaluator
                .evaluate(&refs, &mut policy, &mut value)
                .map_err(|e| e.to_string())
        };
        let mut bare = || {
            let tensor =
                TensorRef::from_array_view((dims, &input[..])).map_err(|e| e.to_string())?;
            let out = bare
                .run(ort::inputs![INPUT => tensor])
                .map_err(|e| e.to_string())?;
            let (_, p) = out[POLICY]
                .try_extract_tensor::<f32>()
                .map_err(|e| e.to_string())?;
            let (_, v) = out[VALUE]
                .try_extract_tensor::<f32>()
                .map_err(|e| e.to_string())?;
            std::hint::black_box((p, v));
            Ok(())
        };
        let (engine_s, bare_s) = measure_pair(opts.min_time, &mut engine, &mut bare)
            .map_err(|reason| bench_error(path, reason))?;
        rows.push(Row {
            game: G::NAME,
            batch,
            engine_evals_per_s: batch as f64 / engine_s,
            bare_evals_per_s: batch as f64 / bare_s,
        });
    }
    Ok(rows)
}

/// The batch sizes of the fp32 against int8 comparison.
pub const PRECISION_BATCH_SIZES: [usize; 3] = [16, 64, 256];

/// One line of the precision comparison: the same network at fp32 and at int8, both through
/// [`OrtEvaluator::evaluate`] (states in, logits and values out).
#[derive(Clone, Debug, PartialEq)]
pub struct PrecisionRow {
    pub game: &'static str,
    pub batch: usize,
    pub fp32_evals_per_s: f64,
    pub int8_evals_per_s: f64,
}

impl PrecisionRow {
    /// int8 throughput over fp32's.
    pub fn ratio(&self) -> f64 {
        self.int8_evals_per_s / self.fp32_evals_per_s
    }
}

/// Measures the model at `path` (fp32) against its int8 model beside it
/// ([`crate::precision::int8_path`]) at each of `opts.batch_sizes`, on the CPU, their calls
/// alternating on the same positions (random play from `proto`).
pub fn compare_precisions<G: Encoding>(
    path: &Path,
    proto: &G,
    opts: &BenchOptions,
) -> Result<Vec<PrecisionRow>, ModelError> {
    let max = opts.batch_sizes.iter().copied().max().unwrap_or(1);
    let states = sample_states(proto, max, 0x5eed);
    let shape = proto.shape();
    let mut rows = Vec::new();
    for &batch in &opts.batch_sizes {
        let load = |precision| {
            let eval_opts = OrtOptions {
                batch_size: batch,
                intra_threads: opts.intra_threads,
                provider: Provider::Cpu,
                allow_fallback: false,
                precision,
                ..OrtOptions::default()
            };
            OrtEvaluator::load(path, proto, &eval_opts)
        };
        let (fp32, int8) = (load(Precision::Fp32)?, load(Precision::Int8)?);
        let refs: Vec<&G> = states[..batch].iter().collect();
        let (mut p1, mut v1) = (vec![0.0; batch * shape.policy_size], vec![0.0; batch]);
        let (mut p2, mut v2) = (p1.clone(), v1.clone());
        let mut first = || {
            fp32.evaluate(&refs, &mut p1, &mut v1)
                .map_err(|e| e.to_string())
        };
        let mut second = || {
            int8.evaluate(&refs, &mut p2, &mut v2)
                .map_err(|e| e.to_string())
        };
        let (fp32_s, int8_s) = measure_pair(opts.min_time, &mut first, &mut second)
            .map_err(|reason| bench_error(path, reason))?;
        rows.push(PrecisionRow {
            game: G::NAME,
            batch,
            fp32_evals_per_s: batch as f64 / fp32_s,
            int8_evals_per_s: batch as f64 / int8_s,
        });
    }
    Ok(rows)
}

/// Formats rows of [`compare_precisions`] as `engine bench --precision int8` prints them.
pub fn format_precision_rows(rows: &[PrecisionRow]) -> String {
    let mut s = format!(
        "{:<10} {:>6} {:>14} {:>14} {:>10}\n",
        "game", "batch", "fp32 eval/s", "int8 eval/s", "int8/fp32"
    );
    for r in rows {
        s += &format!(
            "{:<10} {:>6} {:>14.0} {:>14.0} {:>10.2}\n",
            r.game,
            r.batch,
            r.fp32_evals_per_s,
            r.int8_evals_per_s,
            r.ratio()
        );
    }
    s
}

fn bench_error(path: &Path, reason: String) -> ModelError {
    ModelError::Invalid {
        path: path.to_owned(),
        reason,
    }
}

/// The same session settings as [`OrtEvaluator`] on the CPU, with nothing around it.
/// A session of its own on the model at `path`, with the evaluator's provider and threads.
fn bare_session(path: &Path, opts: &OrtOptions) -> Result<Session, ModelError> {
    let env = runtime::environment()?;
    let bytes = std::fs::read(path).map_err(|e| ModelError::Read {
        path: path.to_owned(),
        reason: e.to_string(),
    })?;
    crate::onnx::build_session(env, path, &bytes, opts).map(|(session, _)| session)
}

/// Times `a` and `b` (one batch each) call by call, alternating, for about `min_time` in all
/// after one warm-up call each; returns the median seconds per call of each. Alternating makes
/// both sides share whatever else the machine is doing, and the median ignores the calls it
/// preempted, so the ratio stays meaningful on a busy machine.
fn measure_pair(
    min_time: Duration,
    a: &mut dyn FnMut() -> Result<(), String>,
    b: &mut dyn FnMut() -> Result<(), String>,
) -> Result<(f64, f64), String> {
    a()?;
    b()?;
    let (mut ta, mut tb) = (Vec::new(), Vec::new());
    let start = Instant::now();
    while start.elapsed() < min_time || ta.len() < 5 {
        let t = Instant::now();
        a()?;
        ta.push(t.elapsed().as_secs_f64());
        let t = Instant::now();
        b()?;
        tb.push(t.elapsed().as_secs_f64());
    }
    Ok((median(&mut ta), median(&mut tb)))
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// `count` positions from random games started at `proto` (a new game whenever one ends), each
/// after a random number of actions, so that the batch holds varied positions.
pub fn sample_states<G: Encoding>(proto: &G, count: usize, seed: u64) -> Vec<G> {
    use rand::Rng;
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut out = Vec::with_capacity(count);
    let mut state = proto.clone();
    while out.len() < count {
        let steps = rng.gen_range(0..8);
        for _ in 0..steps {
            match games::random_action(&state, &mut rng) {
                Some(a) => state.play_unchecked(a),
                None => state = proto.clone(),
            }
        }
        if state.outcome().is_some() {
            state = proto.clone();
        }
        out.push(state.clone());
    }
    out
}

/// Formats rows as the table `engine bench` prints.
pub fn format_rows(rows: &[Row]) -> String {
    let mut s = format!(
        "{:<10} {:>6} {:>14} {:>14} {:>7}\n",
        "game", "batch", "engine eval/s", "bare eval/s", "ratio"
    );
    for r in rows {
        s += &format!(
            "{:<10} {:>6} {:>14.0} {:>14.0} {:>6.1}%\n",
            r.game,
            r.batch,
            r.engine_evals_per_s,
            r.bare_evals_per_s,
            100.0 * r.ratio()
        );
    }
    s
}

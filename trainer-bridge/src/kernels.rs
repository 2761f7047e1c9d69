//! CPU kernels of the network, as candle custom ops with their own backward passes.
//!
//! Activations inside the tower are channels-last, (batch, height, width, channels), so that a
//! convolution is one matrix product of the im2col rows (a point's k × k neighbours' channel
//! vectors side by side, zeros off the board) with the weight, and its output is already the
//! next layer's input; batch norm reduces over rows, each channel a SIMD lane. Work is split
//! over the batch in chunks of a few samples (rayon), each chunk's im2col rows small enough to
//! stay in the core's cache while its single-threaded matrix product runs.
//!
//! - [`conv`]: a stride-1 `same` convolution, k odd, no bias. Its input gradient is the same
//!   convolution of the output gradient with the weight flipped and its channels swapped; the
//!   weight gradient is im2col rows transposed times the output gradient, summed over chunks.
//! - [`bn_relu`]: batch norm (batch statistics, or the running ones), an optional residual
//!   added, then ReLU, in one pass; its backward pass is the usual closed form.
//! - [`global_pool`]: the mean, scaled mean and max over the board of a channels-last tensor's
//!   last channels; the means' gradient spreads evenly over the points, the max's goes to the
//!   first point that holds it.
//! - [`add_bias`]: a channels-last tensor's first channels plus a bias per sample and channel;
//!   the bias's gradient is the output gradient summed over the points.
//!
//! Weights keep candle's layout ((out, in, k, k) for a convolution), so checkpoints and the
//! ONNX export do not change.

use std::cell::RefCell;
use std::sync::{Arc, OnceLock};

use candle_core::{
    bail, CpuStorage, CustomOp1, CustomOp2, CustomOp3, Layout, Result, Shape, Storage, Tensor,
};
use rayon::prelude::*;

/// im2col rows per chunk of work: 256 rows of 9 × 48 floats are 442 KiB.
const CHUNK_ROWS: usize = 256;

thread_local! {
    /// Each worker's im2col buffer, kept between calls.
    static COLS: RefCell<Vec<f32>> = const { RefCell::new(Vec::new()) };
}

/// The contiguous f32 data of an op's input.
fn slice<'a>(s: &'a CpuStorage, l: &Layout) -> Result<&'a [f32]> {
    match l.contiguous_offsets() {
        Some((a, b)) => Ok(&s.as_slice::<f32>()?[a..b]),
        None => bail!("kernel input is not contiguous"),
    }
}

/// Runs `f` on the contiguous f32 data of `t`.
fn with_data<R>(t: &Tensor, f: impl FnOnce(&[f32]) -> Result<R>) -> Result<R> {
    let (storage, layout) = t.storage_and_layout();
    match &*storage {
        Storage::Cpu(s) => f(slice(s, layout)?),
        _ => bail!("kernels run on the CPU only"),
    }
}

fn tensor(data: Vec<f32>, shape: impl Into<Shape>) -> Result<Tensor> {
    Tensor::from_vec(data, shape, &candle_core::Device::Cpu)
}

/// Samples per chunk of work for `points` points a sample: about [`CHUNK_ROWS`] rows.
fn samples_per_chunk(points: usize) -> usize {
    (CHUNK_ROWS / points).max(1)
}

/// `dst (m × n, rows n apart) (+)= lhs (m × k) · rhs (k × n)`, the operands given by their row
/// and column strides; single-threaded (callers split the work).
#[allow(clippy::too_many_arguments)]
fn matmul(
    (m, n, k): (usize, usize, usize),
    dst: &mut [f32],
    accumulate: bool,
    lhs: &[f32],
    (lhs_rs, lhs_cs): (usize, usize),
    rhs: &[f32],
    (rhs_rs, rhs_cs): (usize, usize),
) {
    let last = |rs: usize, cs: usize, rows: usize, cols: usize| (rows - 1) * rs + (cols - 1) * cs;
    if m == 0 || n == 0 || k == 0 {
        return;
    }
    assert!(dst.len() >= m * n);
    assert!(lhs.len() > last(lhs_rs, lhs_cs, m, k));
    assert!(rhs.len() > last(rhs_rs, rhs_cs, k, n));
    // SAFETY: the asserts above keep every element the product reads or writes in bounds.
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            dst.as_mut_ptr(),
            1,
            n as isize,
            accumulate,
            lhs.as_ptr(),
            lhs_cs as isize,
            lhs_rs as isize,
            rhs.as_ptr(),
            rhs_cs as isize,
            rhs_rs as isize,
            1.0,
            1.0,
            false,
            false,
            false,
            gemm::Parallelism::None,
        )
    }
}

/// Board geometry of a channels-last batch.
#[derive(Clone, Copy, Debug)]
struct Geometry {
    height: usize,
    width: usize,
    /// Kernel side (odd); padding k / 2.
    k: usize,
}

impl Geometry {
    fn points(self) -> usize {
        self.height * self.width
    }

    /// The im2col rows of `samples` channels-last samples `x` (c channels): row (b, y, x),
    /// columns (ky, kx, channel), zeros where the neighbour is off the board. Every element is
    /// written once (the buffer is not cleared first).
    fn im2col(self, x: &[f32], samples: usize, c: usize, cols: &mut Vec<f32>) {
        let (h, w, k) = (self.height, self.width, self.k);
        let pad = k / 2;
        let row_len = k * k * c;
        cols.resize(samples * h * w * row_len, 0.0);
        let rows = cols.chunks_exact_mut(row_len);
        for (r, row) in rows.enumerate() {
            let (b, y, xx) = (r / (h * w), r / w % h, r % w);
            let sample = &x[b * h * w * c..(b + 1) * h * w * c];
            for (t, tap) in row.chunks_exact_mut(c).enumerate() {
                let (sy, sx) = (
                    (y + t / k).wrapping_sub(pad),
                    (xx + t % k).wrapping_sub(pad),
                );
                if sy < h && sx < w {
                    tap.copy_from_slice(&sample[(sy * w + sx) * c..][..c]);
                } else {
                    tap.fill(0.0);
                }
            }
        }
    }

    /// Runs `f(rows, cols)` on the im2col rows of `samples` samples of `x` (for k = 1, `x`
    /// itself).
    fn with_cols<R>(
        self,
        x: &[f32],
        samples: usize,
        c: usize,
        f: impl FnOnce(usize, &[f32]) -> R,
    ) -> R {
        let rows = samples * self.points();
        if self.k == 1 {
            return f(rows, &x[..rows * c]);
        }
        COLS.with(|cols| {
            let mut cols = cols.borrow_mut();
            self.im2col(x, samples, c, &mut cols);
            f(rows, &cols)
        })
    }

    /// `x` (batch × points × cin, channels-last) convolved with `packed` (k·k·cin × cout, rows
    /// ordered (ky, kx, channel)): batch × points × cout.
    fn conv(self, x: &[f32], cin: usize, packed: &[f32], cout: usize) -> Vec<f32> {
        let p = self.points();
        let per = samples_per_chunk(p);
        let depth = self.k * self.k * cin;
        let mut out = vec![0.0; x.len() / cin * cout];
        out.par_chunks_mut(per * p * cout)
            .zip(x.par_chunks(per * p * cin))
            .for_each(|(out, x)| {
                let samples = x.len() / (p * cin);
                self.with_cols(x, samples, cin, |rows, cols| {
                    matmul(
                        (rows, cout, depth),
                        out,
                        false,
                        cols,
                        (depth, 1),
                        packed,
                        (cout, 1),
                    )
                });
            });
        out
    }

    /// The weight gradient, packed like the forward weight (k·k·cin × cout): the im2col rows
    /// of `x` transposed times `dy` (batch × points × cout), summed over the batch.
    fn conv_filter_grad(self, x: &[f32], cin: usize, dy: &[f32], cout: usize) -> Vec<f32> {
        let p = self.points();
        let per = samples_per_chunk(p);
        let depth = self.k * self.k * cin;
        x.par_chunks(per * p * cin)
            .zip(dy.par_chunks(per * p * cout))
            .fold(
                || vec![0.0; depth * cout],
                |mut acc, (x, dy)| {
                    let samples = x.len() / (p * cin);
                    self.with_cols(x, samples, cin, |rows, cols| {
                        matmul(
                            (depth, cout, rows),
                            &mut acc,
                            true,
                            cols,
                            (1, depth),
                            dy,
                            (cout, 1),
                        )
                    });
                    acc
                },
            )
            .reduce(
                || vec![0.0; depth * cout],
                |mut a, b| {
                    a.iter_mut().zip(&b).for_each(|(a, b)| *a += b);
                    a
                },
            )
    }
}

/// A weight (cout, cin, k, k) packed as (k·k·cin × cout) rows ordered (ky, kx, channel);
/// `flipped`: the weight of the input gradient's convolution instead, (k·k·cout × cin), taps
/// mirrored in both directions.
fn pack(w: &[f32], cout: usize, cin: usize, k: usize, flipped: bool) -> Vec<f32> {
    let mut packed = vec![0.0; w.len()];
    for o in 0..cout {
        for c in 0..cin {
            for ky in 0..k {
                for kx in 0..k {
                    let v = w[((o * cin + c) * k + ky) * k + kx];
                    let at = if flipped {
                        (((k - 1 - ky) * k + (k - 1 - kx)) * cout + o) * cin + c
                    } else {
                        ((ky * k + kx) * cin + c) * cout + o
                    };
                    packed[at] = v;
                }
            }
        }
    }
    packed
}

/// The inverse of `pack(…, false)`: (k·k·cin × cout) back to (cout, cin, k, k).
fn unpack(packed: &[f32], cout: usize, cin: usize, k: usize) -> Vec<f32> {
    let mut w = vec![0.0; packed.len()];
    for o in 0..cout {
        for c in 0..cin {
            for t in 0..k * k {
                w[(o * cin + c) * k * k + t] = packed[(t * cin + c) * cout + o];
            }
        }
    }
    w
}

/// (batch, height, width, cin) and (cout, cin, k, k) → the geometry and sizes, checked.
fn conv_dims(x: &Shape, w: &Shape) -> Result<(Geometry, usize, usize)> {
    let (_, h, wd, c) = x.dims4()?;
    let (o, wc, k, k2) = w.dims4()?;
    if wc != c || k != k2 || k % 2 == 0 {
        bail!("conv: input {x:?} and weight {w:?} do not fit (odd square kernels only)")
    }
    let g = Geometry {
        height: h,
        width: wd,
        k,
    };
    Ok((g, c, o))
}

/// `same` stride-1 convolution of channels-last `x` (batch, height, width, cin) with `w`
/// (cout, cin, k, k): (batch, height, width, cout).
pub fn conv(x: &Tensor, w: &Tensor) -> Result<Tensor> {
    x.contiguous()?.apply_op2(&w.contiguous()?, Conv)
}

struct Conv;

impl CustomOp2 for Conv {
    fn name(&self) -> &'static str {
        "conv-nhwc"
    }

    fn cpu_fwd(
        &self,
        xs: &CpuStorage,
        xl: &Layout,
        ws: &CpuStorage,
        wl: &Layout,
    ) -> Result<(CpuStorage, Shape)> {
        let (g, cin, cout) = conv_dims(xl.shape(), wl.shape())?;
        let packed = pack(slice(ws, wl)?, cout, cin, g.k, false);
        let y = g.conv(slice(xs, xl)?, cin, &packed, cout);
        let (b, h, w, _) = xl.shape().dims4()?;
        Ok((CpuStorage::F32(y), Shape::from((b, h, w, cout))))
    }

    fn bwd(
        &self,
        x: &Tensor,
        w: &Tensor,
        _y: &Tensor,
        dy: &Tensor,
    ) -> Result<(Option<Tensor>, Option<Tensor>)> {
        let (g, cin, cout) = conv_dims(x.shape(), w.shape())?;
        let dy = dy.contiguous()?;
        // The input planes need no gradient: only computed where something upstream learns.
        let dx = if x.track_op() {
            let flipped = with_data(w, |w| Ok(pack(w, cout, cin, g.k, true)))?;
            let dx = with_data(&dy, |dy| Ok(g.conv(dy, cout, &flipped, cin)))?;
            Some(tensor(dx, x.shape())?)
        } else {
            None
        };
        let dw = with_data(x, |x| {
            with_data(&dy, |dy| Ok(g.conv_filter_grad(x, cin, dy, cout)))
        })?;
        Ok((dx, Some(tensor(unpack(&dw, cout, cin, g.k), w.shape())?)))
    }
}

/// Per-channel mean and 1/√(variance + ε) that normalised a batch, and the batch's variance
/// (biased, over all rows).
#[derive(Clone, Debug)]
pub struct BnStats {
    pub mean: Vec<f32>,
    pub var: Vec<f32>,
    pub rstd: Vec<f32>,
    /// Rows the statistics were taken over (batch × points).
    pub rows: usize,
}

/// How [`bn_relu`] normalises.
#[derive(Clone, Debug)]
pub enum BnMode {
    /// Batch statistics, which are returned (the caller updates the running ones).
    Train { eps: f32 },
    /// Given statistics (the running ones); no backward pass.
    Eval { mean: Vec<f32>, rstd: Vec<f32> },
}

/// Row chunks for the batch-norm passes.
const BN_ROWS: usize = 512;

/// Sums over rows of `f(row index, column)` for each of `c` columns, in parallel chunks.
fn column_sums(rows: usize, c: usize, f: impl Fn(usize, &mut [f32]) + Sync) -> Vec<f32> {
    (0..rows.div_ceil(BN_ROWS))
        .into_par_iter()
        .map(|chunk| {
            let mut acc = vec![0.0; c];
            for r in chunk * BN_ROWS..rows.min((chunk + 1) * BN_ROWS) {
                f(r, &mut acc);
            }
            acc
        })
        .reduce(
            || vec![0.0; c],
            |mut a, b| {
                a.iter_mut().zip(&b).for_each(|(a, b)| *a += b);
                a
            },
        )
}

/// Batch norm of channels-last `x` (the last dimension the channels) with `gamma` and `beta`
/// (channels), plus `skip` if given (same shape as `x`), then ReLU. With [`BnMode::Train`], the
/// batch statistics are returned.
pub fn bn_relu(
    x: &Tensor,
    gamma: &Tensor,
    beta: &Tensor,
    skip: Option<&Tensor>,
    mode: BnMode,
) -> Result<(Tensor, Option<BnStats>)> {
    let stats = Arc::new(OnceLock::new());
    let op = BnRelu {
        mode,
        stats: stats.clone(),
    };
    let gb = Tensor::stack(&[gamma, beta], 0)?;
    let x = x.contiguous()?;
    let y = match skip {
        None => x.apply_op2(&gb, op)?,
        Some(s) => x.apply_op3(&gb, &s.contiguous()?, op)?,
    };
    let stats = stats.get().cloned();
    Ok((y, stats))
}

struct BnRelu {
    mode: BnMode,
    stats: Arc<OnceLock<BnStats>>,
}

impl BnRelu {
    fn forward(&self, x: &[f32], gb: &[f32], skip: Option<&[f32]>) -> Result<Vec<f32>> {
        let c = gb.len() / 2;
        let rows = x.len() / c;
        let (mean, rstd) = match &self.mode {
            BnMode::Eval { mean, rstd } => (mean.clone(), rstd.clone()),
            BnMode::Train { eps } => {
                let n = rows as f32;
                let mut mean = column_sums(rows, c, |r, acc| {
                    acc.iter_mut()
                        .zip(&x[r * c..(r + 1) * c])
                        .for_each(|(a, v)| *a += v)
                });
                mean.iter_mut().for_each(|m| *m /= n);
                let mut var = column_sums(rows, c, |r, acc| {
                    for ((a, v), m) in acc.iter_mut().zip(&x[r * c..(r + 1) * c]).zip(&mean) {
                        *a += (v - m) * (v - m);
                    }
                });
                var.iter_mut().for_each(|v| *v /= n);
                let rstd: Vec<f32> = var.iter().map(|v| 1.0 / (v + eps).sqrt()).collect();
                let _ = self.stats.set(BnStats {
                    mean: mean.clone(),
                    var,
                    rstd: rstd.clone(),
                    rows,
                });
                (mean, rstd)
            }
        };
        if mean.len() != c || rstd.len() != c {
            bail!("batch norm: {} statistics for {c} channels", mean.len())
        }
        // y = relu(x · scale + shift (+ skip)), scale = γ·rstd, shift = β − mean·scale.
        let scale: Vec<f32> = gb[..c].iter().zip(&rstd).map(|(g, r)| g * r).collect();
        let shift: Vec<f32> = (0..c).map(|i| gb[c + i] - mean[i] * scale[i]).collect();
        let mut y = vec![0.0; x.len()];
        y.par_chunks_mut(BN_ROWS * c)
            .enumerate()
            .for_each(|(i, y)| {
                let at = i * BN_ROWS * c;
                let x = &x[at..at + y.len()];
                for ((y, x), r) in y.chunks_exact_mut(c).zip(x.chunks_exact(c)).zip(at / c..) {
                    for ((y, x), (s, t)) in y.iter_mut().zip(x).zip(scale.iter().zip(&shift)) {
                        *y = x * s + t;
                    }
                    match skip {
                        Some(s) => y
                            .iter_mut()
                            .zip(&s[r * c..(r + 1) * c])
                            .for_each(|(y, s)| *y = (*y + s).max(0.0)),
                        None => y.iter_mut().for_each(|y| *y = y.max(0.0)),
                    }
                }
            });
        Ok(y)
    }

    /// Gradients of x, of (γ, β) stacked, and of the output before ReLU (the skip's).
    fn backward(
        &self,
        x: &Tensor,
        gb: &Tensor,
        y: &Tensor,
        dy: &Tensor,
    ) -> Result<(Tensor, Tensor, Tensor)> {
        let Some(stats) = self.stats.get() else {
            bail!("batch norm: backward pass through running statistics")
        };
        let dy = dy.contiguous()?;
        let gamma = gb.get(0)?.to_vec1::<f32>()?;
        let c = gamma.len();
        let (mean, rstd, rows) = (&stats.mean, &stats.rstd, stats.rows);
        let (dx, dgb, dz) = with_data(x, |x| {
            with_data(y, |y| {
                with_data(&dy, |dy| {
                    // dz: the gradient before ReLU; sums of dz and dz·x̂ per channel.
                    let mut dz = vec![0.0; x.len()];
                    dz.par_chunks_mut(BN_ROWS * c)
                        .enumerate()
                        .for_each(|(i, dz)| {
                            let at = i * BN_ROWS * c;
                            for ((dz, y), dy) in dz.iter_mut().zip(&y[at..]).zip(&dy[at..]) {
                                *dz = if *y > 0.0 { *dy } else { 0.0 };
                            }
                        });
                    let sums = column_sums(rows, 2 * c, |r, acc| {
                        let (sd, sdx) = acc.split_at_mut(c);
                        let (x, dz) = (&x[r * c..(r + 1) * c], &dz[r * c..(r + 1) * c]);
                        let terms = sd.iter_mut().zip(sdx.iter_mut()).zip(x.iter().zip(dz));
                        for (((sd, sdx), (x, dz)), (m, r)) in terms.zip(mean.iter().zip(rstd)) {
                            *sd += dz;
                            *sdx += dz * (x - m) * r;
                        }
                    });
                    let (sum_dz, sum_dzx) = sums.split_at(c);
                    // dx = γ·rstd·(dz − Σdz/N − x̂·Σ(dz·x̂)/N)
                    let n = rows as f32;
                    let k: Vec<f32> = (0..c).map(|j| gamma[j] * rstd[j]).collect();
                    let a: Vec<f32> = (0..c).map(|j| sum_dz[j] / n).collect();
                    let b: Vec<f32> = (0..c).map(|j| sum_dzx[j] / n * rstd[j]).collect();
                    let mut dx = vec![0.0; x.len()];
                    dx.par_chunks_mut(BN_ROWS * c)
                        .enumerate()
                        .for_each(|(i, dx)| {
                            let at = i * BN_ROWS * c;
                            for ((dx, x), dz) in dx
                                .chunks_exact_mut(c)
                                .zip(x[at..].chunks_exact(c))
                                .zip(dz[at..].chunks_exact(c))
                            {
                                let terms = dx.iter_mut().zip(x.iter().zip(dz));
                                for ((dx, (x, dz)), ((k, a), (b, m))) in
                                    terms.zip(k.iter().zip(&a).zip(b.iter().zip(mean)))
                                {
                                    *dx = k * (dz - a - (x - m) * b);
                                }
                            }
                        });
                    let mut dgb = sum_dzx.to_vec();
                    dgb.extend_from_slice(sum_dz);
                    Ok((dx, dgb, dz))
                })
            })
        })?;
        Ok((
            tensor(dx, x.shape())?,
            tensor(dgb, (2, c))?,
            tensor(dz, x.shape())?,
        ))
    }
}

fn bn_shapes(x: &Layout, gb: &Layout) -> Result<()> {
    let c = *x.shape().dims().last().unwrap_or(&0);
    if gb.shape().dims() != [2, c] {
        bail!(
            "batch norm: parameters {:?} for input {:?}",
            gb.shape(),
            x.shape()
        )
    }
    Ok(())
}

impl CustomOp2 for BnRelu {
    fn name(&self) -> &'static str {
        "batch-norm-relu"
    }

    fn cpu_fwd(
        &self,
        xs: &CpuStorage,
        xl: &Layout,
        gs: &CpuStorage,
        gl: &Layout,
    ) -> Result<(CpuStorage, Shape)> {
        bn_shapes(xl, gl)?;
        let y = self.forward(slice(xs, xl)?, slice(gs, gl)?, None)?;
        Ok((CpuStorage::F32(y), xl.shape().clone()))
    }

    fn bwd(
        &self,
        x: &Tensor,
        gb: &Tensor,
        y: &Tensor,
        dy: &Tensor,
    ) -> Result<(Option<Tensor>, Option<Tensor>)> {
        let (dx, dgb, _) = self.backward(x, gb, y, dy)?;
        Ok((Some(dx), Some(dgb)))
    }
}

impl CustomOp3 for BnRelu {
    fn name(&self) -> &'static str {
        "batch-norm-add-relu"
    }

    fn cpu_fwd(
        &self,
        xs: &CpuStorage,
        xl: &Layout,
        gs: &CpuStorage,
        gl: &Layout,
        ss: &CpuStorage,
        sl: &Layout,
    ) -> Result<(CpuStorage, Shape)> {
        bn_shapes(xl, gl)?;
        if sl.shape() != xl.shape() {
            bail!(
                "batch norm: skip {:?} for input {:?}",
                sl.shape(),
                xl.shape()
            )
        }
        let y = self.forward(slice(xs, xl)?, slice(gs, gl)?, Some(slice(ss, sl)?))?;
        Ok((CpuStorage::F32(y), xl.shape().clone()))
    }

    fn bwd(
        &self,
        x: &Tensor,
        gb: &Tensor,
        _skip: &Tensor,
        y: &Tensor,
        dy: &Tensor,
    ) -> Result<(Option<Tensor>, Option<Tensor>, Option<Tensor>)> {
        let (dx, dgb, dz) = self.backward(x, gb, y, dy)?;
        Ok((Some(dx), Some(dgb), Some(dz)))
    }
}

/// The mean, the mean times `scale`, and the max over the board (height × width) of channels
/// `from..` of channels-last `x` (batch, height, width, channels): (batch, 3 × (channels −
/// from)), in that order. [`crate::net::global_pool`] says why and how a mask would enter.
pub fn global_pool(x: &Tensor, from: usize, scale: f32) -> Result<Tensor> {
    x.contiguous()?.apply_op1(Pool { from, scale })
}

struct Pool {
    from: usize,
    scale: f32,
}

impl Pool {
    /// (batch, points, channels) of a channels-last shape.
    fn dims(shape: &Shape) -> Result<(usize, usize, usize)> {
        let (b, h, w, c) = shape.dims4()?;
        Ok((b, h * w, c))
    }
}

impl CustomOp1 for Pool {
    fn name(&self) -> &'static str {
        "global-pool-nhwc"
    }

    fn cpu_fwd(&self, s: &CpuStorage, l: &Layout) -> Result<(CpuStorage, Shape)> {
        let (b, p, c) = Pool::dims(l.shape())?;
        if self.from >= c {
            bail!("global pool: channels {}.. of {c}", self.from)
        }
        let g = c - self.from;
        let x = slice(s, l)?;
        let mut out = vec![0.0; b * 3 * g];
        out.par_chunks_mut(3 * g)
            .zip(x.par_chunks(p * c))
            .for_each(|(out, x)| {
                let (mean, rest) = out.split_at_mut(g);
                let (scaled, max) = rest.split_at_mut(g);
                max.fill(f32::NEG_INFINITY);
                for point in x.chunks_exact(c) {
                    for ((m, mx), v) in mean.iter_mut().zip(max.iter_mut()).zip(&point[self.from..])
                    {
                        *m += v;
                        *mx = mx.max(*v);
                    }
                }
                for (m, s) in mean.iter_mut().zip(scaled.iter_mut()) {
                    *m /= p as f32;
                    *s = *m * self.scale;
                }
            });
        Ok((CpuStorage::F32(out), Shape::from((b, 3 * g))))
    }

    fn bwd(&self, x: &Tensor, _y: &Tensor, dy: &Tensor) -> Result<Option<Tensor>> {
        let (b, p, c) = Pool::dims(x.shape())?;
        let (from, g) = (self.from, c - self.from);
        let dy = dy.contiguous()?;
        let dx = with_data(x, |x| {
            with_data(&dy, |dy| {
                let mut dx = vec![0.0; b * p * c];
                dx.par_chunks_mut(p * c)
                    .zip(x.par_chunks(p * c))
                    .zip(dy.par_chunks(3 * g))
                    .for_each(|((dx, x), dy)| {
                        let spread: Vec<f32> = (0..g)
                            .map(|j| (dy[j] + self.scale * dy[g + j]) / p as f32)
                            .collect();
                        let mut best = vec![(f32::NEG_INFINITY, 0usize); g];
                        for (i, (dx, x)) in
                            dx.chunks_exact_mut(c).zip(x.chunks_exact(c)).enumerate()
                        {
                            dx[from..].copy_from_slice(&spread);
                            for (b, v) in best.iter_mut().zip(&x[from..]) {
                                if *v > b.0 {
                                    *b = (*v, i);
                                }
                            }
                        }
                        for (j, (_, i)) in best.into_iter().enumerate() {
                            dx[i * c + from + j] += dy[2 * g + j];
                        }
                    });
                Ok(dx)
            })
        })?;
        Ok(Some(tensor(dx, x.shape())?))
    }
}

/// The first `bias.dim(1)` channels of channels-last `x` (batch, height, width, channels), each
/// plus `bias` (batch, those channels) at every point: (batch, height, width, bias.dim(1)).
pub fn add_bias(x: &Tensor, bias: &Tensor) -> Result<Tensor> {
    x.contiguous()?.apply_op2(&bias.contiguous()?, AddBias)
}

struct AddBias;

impl CustomOp2 for AddBias {
    fn name(&self) -> &'static str {
        "add-bias-nhwc"
    }

    fn cpu_fwd(
        &self,
        xs: &CpuStorage,
        xl: &Layout,
        bs: &CpuStorage,
        bl: &Layout,
    ) -> Result<(CpuStorage, Shape)> {
        let (b, h, w, c) = xl.shape().dims4()?;
        let (bb, k) = bl.shape().dims2()?;
        if bb != b || k > c {
            bail!("add bias: {:?} to {:?}", bl.shape(), xl.shape())
        }
        let (x, bias) = (slice(xs, xl)?, slice(bs, bl)?);
        let p = h * w;
        let mut y = vec![0.0; b * p * k];
        y.par_chunks_mut(p * k)
            .zip(x.par_chunks(p * c))
            .zip(bias.par_chunks(k))
            .for_each(|((y, x), bias)| {
                for (y, x) in y.chunks_exact_mut(k).zip(x.chunks_exact(c)) {
                    for ((y, x), b) in y.iter_mut().zip(x).zip(bias) {
                        *y = x + b;
                    }
                }
            });
        Ok((CpuStorage::F32(y), Shape::from((b, h, w, k))))
    }

    fn bwd(
        &self,
        x: &Tensor,
        bias: &Tensor,
        _y: &Tensor,
        dy: &Tensor,
    ) -> Result<(Option<Tensor>, Option<Tensor>)> {
        let (b, h, w, c) = x.shape().dims4()?;
        let k = bias.dim(1)?;
        let p = h * w;
        let dy = dy.contiguous()?;
        let (dx, db) = with_data(&dy, |dy| {
            let mut dx = vec![0.0; b * p * c];
            let mut db = vec![0.0; b * k];
            dx.par_chunks_mut(p * c)
                .zip(db.par_chunks_mut(k))
                .zip(dy.par_chunks(p * k))
                .for_each(|((dx, db), dy)| {
                    for (dx, dy) in dx.chunks_exact_mut(c).zip(dy.chunks_exact(k)) {
                        dx[..k].copy_from_slice(dy);
                        db.iter_mut().zip(dy).for_each(|(d, g)| *d += g);
                    }
                });
            Ok((dx, db))
        })?;
        Ok((
            Some(tensor(dx, x.shape())?),
            Some(tensor(db, bias.shape())?),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use candle_core::{Device, Var, D};

    fn close(a: &Tensor, b: &Tensor, tol: f32) {
        assert_eq!(a.dims(), b.dims());
        let d = (a - b)
            .unwrap()
            .abs()
            .unwrap()
            .flatten_all()
            .unwrap()
            .max(D::Minus1)
            .unwrap()
            .to_scalar::<f32>()
            .unwrap();
        assert!(d <= tol, "largest difference {d}");
    }

    /// The kernels against candle's own conv2d and batch norm, values and gradients, on a
    /// board that is not square and kernels of 3 and 1.
    #[test]
    fn conv_and_bn_match_candle() {
        let dev = Device::Cpu;
        for (k, cin, cout, skip) in [(3, 5, 7, false), (3, 6, 6, true), (1, 6, 2, false)] {
            let x =
                Var::from_tensor(&Tensor::randn(0f32, 1.0, (3, cin, 4, 5), &dev).unwrap()).unwrap();
            let w = Var::from_tensor(&Tensor::randn(0f32, 0.5, (cout, cin, k, k), &dev).unwrap())
                .unwrap();
            let gamma = Var::from_tensor(&Tensor::randn(1f32, 0.2, cout, &dev).unwrap()).unwrap();
            let beta = Var::from_tensor(&Tensor::randn(0f32, 0.2, cout, &dev).unwrap()).unwrap();
            let s = Var::from_tensor(&Tensor::randn(0f32, 1.0, (3, cout, 4, 5), &dev).unwrap())
                .unwrap();
            let probe = Tensor::randn(0f32, 1.0, (3, cout, 4, 5), &dev).unwrap();

            // candle: NCHW conv2d, batch norm from its definition, residual, ReLU.
            let z = x.conv2d(&w, k / 2, 1, 1, 1).unwrap();
            let mean = z
                .mean_keepdim(3)
                .unwrap()
                .mean_keepdim(2)
                .unwrap()
                .mean_keepdim(0)
                .unwrap();
            let zc = z.broadcast_sub(&mean).unwrap();
            let var = zc
                .sqr()
                .unwrap()
                .mean_keepdim(3)
                .unwrap()
                .mean_keepdim(2)
                .unwrap()
                .mean_keepdim(0)
                .unwrap();
            let bn = zc
                .broadcast_div(&(var + 1e-5).unwrap().sqrt().unwrap())
                .unwrap()
                .broadcast_mul(&gamma.reshape((1, cout, 1, 1)).unwrap())
                .unwrap()
                .broadcast_add(&beta.reshape((1, cout, 1, 1)).unwrap())
                .unwrap();
            let bn = if skip {
                (bn + s.as_tensor()).unwrap()
            } else {
                bn
            };
            let want = bn.relu().unwrap();
            let loss = (&want * &probe).unwrap().sum_all().unwrap();
            let want_grads = loss.backward().unwrap();

            // ours, channels-last.
            let nhwc = |t: &Tensor| t.permute((0, 2, 3, 1)).unwrap();
            let zz = conv(&nhwc(&x), &w).unwrap();
            let sk = nhwc(&s);
            let (got, stats) = bn_relu(
                &zz,
                &gamma,
                &beta,
                skip.then_some(&sk),
                BnMode::Train { eps: 1e-5 },
            )
            .unwrap();
            assert_eq!(stats.unwrap().rows, 60);
            let got = got.permute((0, 3, 1, 2)).unwrap();
            close(&got, &want, 1e-5);
            let loss = (&got * &probe).unwrap().sum_all().unwrap();
            let grads = loss.backward().unwrap();
            let mut vars = vec![&x, &w, &gamma, &beta];
            if skip {
                vars.push(&s);
            }
            for v in vars {
                close(grads.get(v).unwrap(), want_grads.get(v).unwrap(), 2e-4);
            }
        }
    }

    /// The pooling and bias kernels against candle's own operations, values and gradients.
    #[test]
    fn pool_and_bias_match_candle() {
        let dev = Device::Cpu;
        let (b, h, w, c, from) = (3, 4, 5, 7, 3);
        let g = c - from;
        let x = Var::from_tensor(&Tensor::randn(0f32, 1.0, (b, h, w, c), &dev).unwrap()).unwrap();
        let bias = Var::from_tensor(&Tensor::randn(0f32, 1.0, (b, from), &dev).unwrap()).unwrap();
        let probe_p = Tensor::randn(0f32, 1.0, (b, 3 * g), &dev).unwrap();
        let probe_y = Tensor::randn(0f32, 1.0, (b, h, w, from), &dev).unwrap();

        // candle: narrow, mean and max over the points, concatenation, broadcast addition.
        let flat = x.narrow(3, from, g).unwrap().flatten(1, 2).unwrap();
        let mean = flat.mean(1).unwrap();
        let want_p =
            Tensor::cat(&[&mean, &(&mean * -0.3).unwrap(), &flat.max(1).unwrap()], 1).unwrap();
        let want_y = x
            .narrow(3, 0, from)
            .unwrap()
            .broadcast_add(&bias.reshape((b, 1, 1, from)).unwrap())
            .unwrap();
        let loss = |p: &Tensor, y: &Tensor| {
            ((p * &probe_p).unwrap().sum_all().unwrap()
                + (y * &probe_y).unwrap().sum_all().unwrap())
            .unwrap()
        };
        let want = loss(&want_p, &want_y).backward().unwrap();

        let got_p = global_pool(&x, from, -0.3).unwrap();
        let got_y = add_bias(&x, &bias).unwrap();
        close(&got_p, &want_p, 1e-6);
        close(&got_y, &want_y, 1e-6);
        let got = loss(&got_p, &got_y).backward().unwrap();
        for v in [&x, &bias] {
            close(got.get(v).unwrap(), want.get(v).unwrap(), 1e-5);
        }
    }
}

//! How a network's int8 copy differs from its fp32 original where the search uses them: the
//! policy over the legal actions only (the search's softmax), its entropy and its largest
//! share, and the value, on positions of games that the fp32 network plays by sampling its own
//! policy. For each softmax temperature in `--temps`, the fp32 policy's entropy at that
//! temperature, to find the one that flattens it as much as quantisation does.
//!
//! ```sh
//! cargo run --release -p engine --example precision_policy -- \
//!     --model models/liuzhou/best.onnx --positions 3000 --temps 1,1.1,1.2,1.3,1.5
//! ```
//! Liuzhou only (the game whose int8 copy plays stronger than its fp32 original).

use std::path::PathBuf;

use anyhow::{bail, Context};
use eval::Evaluator;
use games::liuzhou::{Liuzhou, Rules};
use games::{Encoding, Game};
use infer::{OrtEvaluator, OrtOptions, Precision};

struct Args {
    /// The fp32 network; its int8 copy is the `.int8.onnx` beside it.
    model: Option<PathBuf>,
    positions: usize,
    temps: Vec<f64>,
    seed: u64,
}

fn parse_args() -> anyhow::Result<Args> {
    let mut args = Args {
        model: None,
        positions: 3000,
        temps: vec![1.0, 1.1, 1.2, 1.3, 1.5],
        seed: 1,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().with_context(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--model" => args.model = Some(value.into()),
            "--positions" => args.positions = value.parse().context("--positions")?,
            "--seed" => args.seed = value.parse().context("--seed")?,
            "--temps" => {
                args.temps = value
                    .split(',')
                    .map(|t| t.parse::<f64>().context("--temps"))
                    .collect::<Result<_, _>>()?
            }
            _ => bail!("unknown flag {flag}"),
        }
    }
    Ok(args)
}

/// A small xorshift generator: enough to sample actions, and no dependency for an example.
struct Rng(u64);

impl Rng {
    fn next_f64(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// The softmax at temperature `t` of `logits` restricted to `legal` indices.
fn legal_softmax(logits: &[f32], legal: &[usize], t: f64) -> Vec<f64> {
    let max = legal
        .iter()
        .map(|&i| f64::from(logits[i]))
        .fold(f64::NEG_INFINITY, f64::max);
    let e: Vec<f64> = legal
        .iter()
        .map(|&i| ((f64::from(logits[i]) - max) / t).exp())
        .collect();
    let sum: f64 = e.iter().sum();
    e.into_iter().map(|x| x / sum).collect()
}

fn entropy(p: &[f64]) -> f64 {
    -p.iter()
        .filter(|&&x| x > 0.0)
        .map(|x| x * x.ln())
        .sum::<f64>()
}

fn main() -> anyhow::Result<()> {
    // Fetches ONNX Runtime's library on first use, as the engine does.
    provision::install();
    let args = parse_args()?;
    let model = args
        .model
        .clone()
        .context("--model PATH (the fp32 .onnx) is needed")?;
    let start = Liuzhou::new(Rules::default());
    let load = |precision| {
        let opts = OrtOptions {
            batch_size: 1,
            precision,
            ..Default::default()
        };
        OrtEvaluator::load(&model, &start, &opts)
            .with_context(|| format!("{} ({precision:?})", model.display()))
    };
    let (fp32, int8) = (load(Precision::Fp32)?, load(Precision::Int8)?);
    let ps = start.shape().policy_size;
    let mut rng = Rng(args.seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let (mut p32, mut p8, mut v32, mut v8) = (vec![0.0; ps], vec![0.0; ps], [0.0], [0.0]);
    let mut sums = Sums::new(args.temps.len());
    let mut state = start.clone();
    let mut actions = Vec::new();
    while sums.n < args.positions {
        if state.outcome().is_some() {
            state = start.clone();
        }
        actions.clear();
        state.legal_actions(&mut actions);
        if actions.len() < 2 {
            // A forced action tells nothing about the policy's shape.
            state.play_unchecked(actions[0]);
            continue;
        }
        fp32.evaluate(&[&state], &mut p32, &mut v32)?;
        int8.evaluate(&[&state], &mut p8, &mut v8)?;
        let legal: Vec<usize> = actions.iter().map(|&a| state.action_index(a)).collect();
        let (a, b) = (
            legal_softmax(&p32, &legal, 1.0),
            legal_softmax(&p8, &legal, 1.0),
        );
        sums.add(&a, &b, v32[0], v8[0]);
        for (k, &t) in args.temps.iter().enumerate() {
            sums.tempered[k] += entropy(&legal_softmax(&p32, &legal, t));
        }
        // The next position: an action drawn from the fp32 policy.
        let mut r = rng.next_f64();
        let pick = a
            .iter()
            .position(|&p| {
                r -= p;
                r <= 0.0
            })
            .unwrap_or(a.len() - 1);
        state.play_unchecked(actions[pick]);
    }
    sums.print(&args.temps);
    Ok(())
}

#[derive(Default)]
struct Sums {
    n: usize,
    entropy32: f64,
    entropy8: f64,
    top32: f64,
    top8: f64,
    tv: f64,
    same_top: usize,
    abs_v32: f64,
    abs_v8: f64,
    dv: f64,
    v8_minus_v32: f64,
    tempered: Vec<f64>,
}

impl Sums {
    fn new(temps: usize) -> Sums {
        Sums {
            tempered: vec![0.0; temps],
            ..Default::default()
        }
    }

    fn add(&mut self, a: &[f64], b: &[f64], v32: f32, v8: f32) {
        let argmax = |p: &[f64]| {
            (0..p.len())
                .max_by(|&i, &j| p[i].total_cmp(&p[j]))
                .unwrap_or(0)
        };
        self.n += 1;
        self.entropy32 += entropy(a);
        self.entropy8 += entropy(b);
        self.top32 += a.iter().cloned().fold(0.0, f64::max);
        self.top8 += b.iter().cloned().fold(0.0, f64::max);
        self.tv += a.iter().zip(b).map(|(x, y)| (x - y).abs()).sum::<f64>() / 2.0;
        self.same_top += usize::from(argmax(a) == argmax(b));
        self.abs_v32 += f64::from(v32.abs());
        self.abs_v8 += f64::from(v8.abs());
        self.dv += f64::from((v8 - v32).abs());
        self.v8_minus_v32 += f64::from(v8 - v32);
    }

    fn print(&self, temps: &[f64]) {
        let n = self.n as f64;
        println!("positions {} (two or more legal actions)", self.n);
        println!("                       fp32     int8");
        println!(
            "policy entropy (nats) {:8.4} {:8.4}",
            self.entropy32 / n,
            self.entropy8 / n
        );
        println!(
            "largest share         {:8.4} {:8.4}",
            self.top32 / n,
            self.top8 / n
        );
        println!(
            "mean |value|          {:8.4} {:8.4}",
            self.abs_v32 / n,
            self.abs_v8 / n
        );
        println!(
            "total variation {:.4}, same top action {:.3}, mean |dv| {:.4}, mean dv (int8 - fp32) {:+.4}",
            self.tv / n,
            self.same_top as f64 / n,
            self.dv / n,
            self.v8_minus_v32 / n
        );
        for (t, e) in temps.iter().zip(&self.tempered) {
            println!("fp32 at softmax temperature {t}: entropy {:.4}", e / n);
        }
    }
}

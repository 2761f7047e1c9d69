//! Dirichlet noise for the root priors, from Gamma variates (Marsaglia and Tsang's method).

use rand::Rng;

/// A standard normal variate (Box–Muller).
fn normal<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    let u1: f64 = 1.0 - rng.gen::<f64>(); // in (0, 1]
    let u2: f64 = rng.gen();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// A Gamma(alpha, 1) variate, alpha > 0.
fn gamma<R: Rng + ?Sized>(alpha: f64, rng: &mut R) -> f64 {
    if alpha < 1.0 {
        // Gamma(a) = Gamma(a + 1) · U^(1/a).
        let u: f64 = 1.0 - rng.gen::<f64>();
        return gamma(alpha + 1.0, rng) * u.powf(1.0 / alpha);
    }
    let d = alpha - 1.0 / 3.0;
    let c = 1.0 / (9.0 * d).sqrt();
    loop {
        let x = normal(rng);
        let v = 1.0 + c * x;
        if v <= 0.0 {
            continue;
        }
        let v = v * v * v;
        let u: f64 = 1.0 - rng.gen::<f64>();
        if u.ln() < 0.5 * x * x + d - d * v + d * v.ln() {
            return d * v;
        }
    }
}

/// Fills `out` with a symmetric Dirichlet(alpha) sample.
pub fn dirichlet<R: Rng + ?Sized>(alpha: f32, out: &mut [f32], rng: &mut R) {
    let alpha = f64::from(alpha.max(1e-3));
    let mut sum = 0.0;
    let mut draws: Vec<f64> = out.iter().map(|_| gamma(alpha, rng)).collect();
    for d in &draws {
        sum += d;
    }
    if sum <= 0.0 {
        // Every draw underflowed (tiny alpha): put the mass on one point.
        draws.iter_mut().for_each(|d| *d = 0.0);
        let k = rng.gen_range(0..out.len());
        draws[k] = 1.0;
        sum = 1.0;
    }
    for (o, d) in out.iter_mut().zip(draws) {
        *o = (d / sum) as f32;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::SmallRng;
    use rand::SeedableRng;

    #[test]
    fn dirichlet_sums_to_one_with_the_right_mean_and_spread() {
        let mut rng = SmallRng::seed_from_u64(7);
        let mut out = [0.0f32; 4];
        let n = 20_000;
        let mut mean0 = 0.0f64;
        let mut sq0 = 0.0f64;
        for _ in 0..n {
            dirichlet(0.3, &mut out, &mut rng);
            let s: f32 = out.iter().sum();
            assert!((s - 1.0).abs() < 1e-5);
            assert!(out.iter().all(|&x| (0.0..=1.0).contains(&x)));
            mean0 += f64::from(out[0]);
            sq0 += f64::from(out[0]).powi(2);
        }
        mean0 /= n as f64;
        let var0 = sq0 / n as f64 - mean0 * mean0;
        // Dirichlet(0.3 × 4): mean 1/4, variance (1/4)(3/4)/(1.2 + 1) ≈ 0.0852.
        assert!((mean0 - 0.25).abs() < 0.01, "mean {mean0}");
        assert!((var0 - 0.0852).abs() < 0.006, "variance {var0}");
    }
}

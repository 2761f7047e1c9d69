//! The fit's window in memory: the shards it samples from, each position's planes packed
//! without loss. Encoded positions hold few distinct values (a Xiangqi position's 1 800 floats
//! are ones, zeros and a move counter), so each float is kept as a 1-, 2- or 4-bit code into
//! the position's own palette of values: 7 200 bytes as read become about 500, and a window of
//! millions of positions fits in memory. A position with more than 16 distinct values is kept
//! as it is.

use games::Symmetry;
use shards::{Shard, ShardMeta};

/// Most distinct values a position may hold to be packed; more are kept as plain floats.
const PALETTE_MAX: usize = 16;

/// One position's input planes, packed.
#[derive(Clone, Debug, PartialEq)]
pub struct Planes {
    /// Number of floats.
    len: u32,
    /// Bits per float: 1, 2 or 4 (codes into `palette`), or 32 (`data` holds the floats).
    bits: u8,
    palette: Box<[f32]>,
    data: Box<[u8]>,
}

impl Planes {
    /// Packs `planes`; [`Planes::unpack`] gives them back bit for bit.
    pub fn pack(planes: &[f32]) -> Planes {
        let mut palette: Vec<f32> = Vec::new();
        for &x in planes {
            if !palette.iter().any(|p| p.to_bits() == x.to_bits()) {
                if palette.len() == PALETTE_MAX {
                    return Planes::plain(planes);
                }
                palette.push(x);
            }
        }
        let bits: u8 = match palette.len() {
            0..=2 => 1,
            3..=4 => 2,
            _ => 4,
        };
        let per_byte = 8 / usize::from(bits);
        let mut data = vec![0u8; planes.len().div_ceil(per_byte)];
        for (i, &x) in planes.iter().enumerate() {
            let code = palette
                .iter()
                .position(|p| p.to_bits() == x.to_bits())
                .expect("every value is in the palette") as u8;
            data[i / per_byte] |= code << ((i % per_byte) * usize::from(bits));
        }
        Planes {
            len: planes.len() as u32,
            bits,
            palette: palette.into(),
            data: data.into(),
        }
    }

    fn plain(planes: &[f32]) -> Planes {
        Planes {
            len: planes.len() as u32,
            bits: 32,
            palette: Box::new([]),
            data: planes.iter().flat_map(|x| x.to_le_bytes()).collect(),
        }
    }

    /// Number of floats.
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// Whether there are no floats.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Writes the floats into `out` (exactly [`Planes::len`] of them).
    pub fn unpack(&self, out: &mut [f32]) {
        assert_eq!(
            out.len(),
            self.len(),
            "unpacking into a buffer of another size"
        );
        if self.bits == 32 {
            for (o, b) in out.iter_mut().zip(self.data.chunks_exact(4)) {
                *o = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            }
            return;
        }
        let bits = usize::from(self.bits);
        let (per_byte, mask) = (8 / bits, (1u8 << bits) - 1);
        for (i, o) in out.iter_mut().enumerate() {
            let code = (self.data[i / per_byte] >> ((i % per_byte) * bits)) & mask;
            *o = self.palette[usize::from(code)];
        }
    }

    /// Bytes held, headers included: what the window's memory figure counts.
    pub fn bytes(&self) -> usize {
        std::mem::size_of::<Planes>() + 4 * self.palette.len() + self.data.len()
    }
}

/// A position of the window: packed planes and its targets as stored.
#[derive(Clone, Debug)]
pub struct Sample {
    pub planes: Planes,
    /// Policy indices with their probabilities.
    pub policy: Box<[(u16, f32)]>,
    /// The value target from the mover's point of view.
    pub value: f32,
    /// The auxiliary targets the shard had for the position ([`shards::Aux`]), each `None`
    /// where it had none.
    pub aux: Aux,
}

/// A position's auxiliary targets as the window holds them: the ownership board packed as
/// planes are (its values are few: −1, 0, 1).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Aux {
    /// Final ownership of each point, row-major, the mover's view, in [−1, 1].
    pub ownership: Option<Planes>,
    /// Final score margin, the mover's view.
    pub score: Option<f32>,
    /// The opponent's reply: the next position's policy target (sparse).
    pub reply: Option<Box<[(u16, f32)]>>,
    /// The policy surprise ([`shards::Aux::surprise`]): no target, the input of the sampling
    /// weight ([`Sampler`]).
    pub surprise: Option<f32>,
}

impl From<shards::Aux> for Aux {
    fn from(aux: shards::Aux) -> Aux {
        Aux {
            ownership: aux.ownership.as_deref().map(Planes::pack),
            score: aux.score,
            reply: aux.reply.map(Into::into),
            surprise: aux.surprise,
        }
    }
}

impl Aux {
    /// Bytes held beyond the struct itself.
    fn bytes(&self) -> usize {
        self.ownership.as_ref().map_or(0, Planes::bytes)
            + self
                .reply
                .as_ref()
                .map_or(0, |r| std::mem::size_of_val::<[(u16, f32)]>(r))
    }
}

/// A shard of the window: its header, symmetries and packed samples.
#[derive(Clone, Debug)]
pub struct WindowShard {
    pub meta: ShardMeta,
    /// Valid symmetries, each with its policy index map.
    pub symmetries: Vec<(Symmetry, Vec<u16>)>,
    pub samples: Vec<Sample>,
}

impl From<Shard> for WindowShard {
    fn from(shard: Shard) -> WindowShard {
        WindowShard {
            meta: shard.meta,
            symmetries: shard.symmetries,
            samples: shard
                .samples
                .into_iter()
                .map(|s| Sample {
                    planes: Planes::pack(&s.planes),
                    policy: s.policy.into(),
                    value: s.value,
                    aux: s.aux.into(),
                })
                .collect(),
        }
    }
}

impl WindowShard {
    /// Bytes the samples hold, headers included.
    pub fn bytes(&self) -> usize {
        self.samples
            .iter()
            .map(|s| {
                std::mem::size_of::<Sample>()
                    + s.planes.bytes()
                    + std::mem::size_of_val::<[(u16, f32)]>(&s.policy)
                    + s.aux.bytes()
            })
            .sum()
    }
}

/// Draws the window's positions: uniformly, or with `fit.surprise_weight` a above 0 each with
/// weight (1 − a) + a · surprise / (the mean surprise of the window's positions that have one),
/// and weight 1 where a position has none (KataGo's policy-surprise weighting, a = 0.5: half
/// the weight spread evenly, half by surprise). A window with no surprise, or only surprises of
/// 0, is drawn uniformly.
pub struct Sampler<'a> {
    /// The window's (shard, sample) pairs.
    index: &'a [(usize, usize)],
    /// Running sums of the weights (`None`: uniform).
    cumulative: Option<Vec<f64>>,
}

impl<'a> Sampler<'a> {
    /// The sampler of the positions `index` names in `shards`, with surprise weight `a` in
    /// [0, 1].
    pub fn new(shards: &[WindowShard], index: &'a [(usize, usize)], a: f64) -> Sampler<'a> {
        let surprises: Vec<Option<f32>> = index
            .iter()
            .map(|&(k, i)| shards[k].samples[i].aux.surprise)
            .collect();
        let cumulative = surprise_weights(&surprises, a).map(|w| {
            w.iter()
                .scan(0.0, |sum, x| {
                    *sum += x;
                    Some(*sum)
                })
                .collect()
        });
        Sampler { index, cumulative }
    }

    /// The sampler that draws the positions `index` names uniformly.
    pub fn uniform(index: &'a [(usize, usize)]) -> Sampler<'a> {
        Sampler {
            index,
            cumulative: None,
        }
    }

    /// Positions in the window.
    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// Whether the window is empty.
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// Whether positions are drawn by weight rather than uniformly.
    pub fn weighted(&self) -> bool {
        self.cumulative.is_some()
    }

    /// One (shard, sample) pair. Uniform draws take one number from `rng` as a plain
    /// `gen_range` over the window does, so a fit without weights draws what it drew before.
    pub fn draw(&self, rng: &mut impl rand::Rng) -> (usize, usize) {
        match &self.cumulative {
            None => self.index[rng.gen_range(0..self.index.len())],
            Some(cumulative) => {
                let total = cumulative.last().copied().unwrap_or(0.0);
                let u = rng.gen::<f64>() * total;
                let k = cumulative.partition_point(|&c| c <= u);
                self.index[k.min(self.index.len() - 1)]
            }
        }
    }
}

/// Each position's sampling weight for surprise weight `a` (see [`Sampler`]): (1 − a) + a ·
/// surprise / mean over the positions with a surprise, 1 for those without one; `None` (draw
/// uniformly) when `a` is 0 or no position has a surprise above 0.
pub fn surprise_weights(surprises: &[Option<f32>], a: f64) -> Option<Vec<f64>> {
    let present: Vec<f64> = surprises.iter().flatten().map(|&s| f64::from(s)).collect();
    let mean = present.iter().sum::<f64>() / present.len().max(1) as f64;
    if a <= 0.0 || mean <= 0.0 {
        return None;
    }
    Some(
        surprises
            .iter()
            .map(|s| s.map_or(1.0, |s| (1.0 - a) + a * f64::from(s) / mean))
            .collect(),
    )
}

/// Up to `samples` positions of `shards`, evenly spaced over all of theirs, as encoded planes
/// one after another (the calibration input of the int8 model). In a window of several board
/// sizes, the positions of the newest shard's size.
pub fn spread(shards: &[WindowShard], samples: usize) -> Vec<f32> {
    let len = shards
        .iter()
        .find_map(|s| s.samples.first())
        .map_or(0, |x| x.planes.len());
    let all: Vec<&Planes> = shards
        .iter()
        .flat_map(|s| s.samples.iter().map(|x| &x.planes))
        .filter(|p| p.len() == len)
        .collect();
    let picks = crate::quantize::spread_picks(all.len(), samples);
    let mut out = vec![0.0; picks.len() * len];
    for (chunk, &i) in out.chunks_exact_mut(len.max(1)).zip(&picks) {
        all[i].unpack(chunk);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(planes: &[f32]) -> Planes {
        let packed = Planes::pack(planes);
        let mut out = vec![7.5; planes.len()];
        packed.unpack(&mut out);
        let (a, b): (Vec<u32>, Vec<u32>) = (
            planes.iter().map(|x| x.to_bits()).collect(),
            out.iter().map(|x| x.to_bits()).collect(),
        );
        assert_eq!(a, b, "unpacked floats differ from the packed ones");
        packed
    }

    #[test]
    fn binary_planes_take_one_bit_a_float() {
        let planes: Vec<f32> = (0..1800).map(|i| f32::from(i % 7 == 0)).collect();
        let p = round_trip(&planes);
        assert_eq!((p.bits, p.data.len()), (1, 225));
        assert!(p.bytes() * 20 < planes.len() * 4, "{} bytes", p.bytes());
    }

    #[test]
    fn a_move_counter_beside_ones_and_zeros_takes_two_bits() {
        let mut planes: Vec<f32> = (0..1800).map(|i| f32::from(i % 3 == 0)).collect();
        planes[1700..1790].fill(37.0 / 120.0);
        let p = round_trip(&planes);
        assert_eq!((p.bits, p.data.len()), (2, 450));
    }

    #[test]
    fn sixteen_values_pack_and_seventeen_stay_plain() {
        let sixteen: Vec<f32> = (0..361).map(|i| (i % 16) as f32 * 0.1).collect();
        assert_eq!(round_trip(&sixteen).bits, 4);
        let seventeen: Vec<f32> = (0..361).map(|i| (i % 17) as f32 * 0.1).collect();
        let p = round_trip(&seventeen);
        assert_eq!((p.bits, p.data.len()), (32, 361 * 4));
    }

    #[test]
    fn signed_zeros_and_nan_come_back_as_they_were() {
        let planes = [0.0, -0.0, f32::NAN, 1.0, -0.0, 0.0, f32::INFINITY];
        assert_eq!(round_trip(&planes).palette.len(), 5);
    }

    #[test]
    fn odd_lengths_and_empty_planes_round_trip() {
        for n in [0, 1, 7, 9, 15, 17, 36, 325] {
            let planes: Vec<f32> = (0..n).map(|i| f32::from(i % 2 == 1)).collect();
            let p = round_trip(&planes);
            assert_eq!(p.len(), n);
            assert_eq!(p.is_empty(), n == 0);
        }
    }

    #[test]
    fn surprise_weights_spread_a_share_by_surprise() {
        let s = [None, Some(0.5), Some(1.5), Some(0.0)];
        // Mean surprise 2 / 3: weights 1, 0.5 + 0.5 · 0.75, 0.5 + 0.5 · 2.25, 0.5.
        let w = surprise_weights(&s, 0.5).unwrap();
        let want = [1.0, 0.875, 1.625, 0.5];
        assert!(
            w.iter().zip(want).all(|(a, b)| (a - b).abs() < 1e-12),
            "{w:?}"
        );
        let w = surprise_weights(&s, 1.0).unwrap();
        assert!(w
            .iter()
            .zip([1.0, 0.75, 2.25, 0.0])
            .all(|(a, b)| (a - b).abs() < 1e-12));
        assert_eq!(surprise_weights(&s, 0.0), None);
        assert_eq!(surprise_weights(&[None, Some(0.0)], 0.5), None);
        assert_eq!(surprise_weights(&[None, None], 0.5), None);
    }

    fn shard_of(surprises: &[Option<f32>]) -> WindowShard {
        WindowShard {
            meta: ShardMeta {
                game: "go".into(),
                planes: 1,
                height: 1,
                width: 1,
                policy_size: 1,
                model: String::new(),
                config: String::new(),
                created_unix: 0,
                games: 1,
                policy_target: shards::PolicyTarget::Visits,
            },
            symmetries: Vec::new(),
            samples: surprises
                .iter()
                .map(|&surprise| Sample {
                    planes: Planes::pack(&[0.0]),
                    policy: Box::new([]),
                    value: 0.0,
                    aux: Aux {
                        surprise,
                        ..Aux::default()
                    },
                })
                .collect(),
        }
    }

    /// 200 000 draws: each position's share is within 0.01 of its weight's share (about six
    /// standard deviations); a position of weight 0 is never drawn.
    #[test]
    fn the_sampler_draws_in_proportion_to_the_weights() {
        use rand::SeedableRng;
        let shards = [
            shard_of(&[None, Some(0.5)]),
            shard_of(&[Some(1.5), Some(0.0)]),
        ];
        let index = [(0, 0), (0, 1), (1, 0), (1, 1)];
        let draws = 200_000;
        for (a, want) in [
            (0.5, [1.0, 0.875, 1.625, 0.5]),
            (1.0, [1.0, 0.75, 2.25, 0.0]),
            (0.0, [1.0; 4]),
        ] {
            let sampler = Sampler::new(&shards, &index, a);
            assert_eq!(sampler.weighted(), a > 0.0);
            let mut rng = rand::rngs::SmallRng::seed_from_u64(7);
            let mut counts = [0usize; 4];
            for _ in 0..draws {
                let pair = sampler.draw(&mut rng);
                counts[index.iter().position(|&p| p == pair).unwrap()] += 1;
            }
            let total: f64 = want.iter().sum();
            for k in 0..4 {
                let got = counts[k] as f64 / draws as f64;
                assert!(
                    (got - want[k] / total).abs() < 0.01,
                    "a = {a}, position {k}: {got} vs {}",
                    want[k] / total
                );
            }
            if want[3] == 0.0 {
                assert_eq!(counts[3], 0);
            }
        }
    }

    /// Without weights the sampler draws what a plain uniform draw over the window drew.
    #[test]
    fn an_unweighted_sampler_draws_as_before() {
        use rand::{Rng, SeedableRng};
        let shards = [shard_of(&[Some(1.0), None, Some(2.0)])];
        let index = [(0, 2), (0, 1), (0, 0)];
        let sampler = Sampler::new(&shards, &index, 0.0);
        let (mut a, mut b) = (
            rand::rngs::SmallRng::seed_from_u64(3),
            rand::rngs::SmallRng::seed_from_u64(3),
        );
        for _ in 0..100 {
            assert_eq!(sampler.draw(&mut a), index[b.gen_range(0..index.len())]);
        }
    }

    #[test]
    fn spread_picks_evenly_and_unpacks() {
        let meta = ShardMeta {
            game: "liuzhou".into(),
            planes: 1,
            height: 1,
            width: 3,
            policy_size: 1,
            model: String::new(),
            config: String::new(),
            created_unix: 0,
            games: 1,
            policy_target: shards::PolicyTarget::Visits,
        };
        let meta_shard = |first: f32| WindowShard {
            meta: meta.clone(),
            symmetries: Vec::new(),
            samples: (0..5)
                .map(|i| Sample {
                    planes: Planes::pack(&[first + i as f32, 0.0, 1.0]),
                    policy: Box::new([]),
                    value: 0.0,
                    aux: Aux::default(),
                })
                .collect(),
        };
        let shards = [meta_shard(0.0), meta_shard(5.0)];
        let inputs = spread(&shards, 4);
        let firsts: Vec<f32> = inputs.chunks(3).map(|c| c[0]).collect();
        assert_eq!(firsts, [0.0, 2.0, 5.0, 7.0]);
        assert_eq!(spread(&shards, 100).len(), 10 * 3);
    }
}

//! Self-play shards: the training data that `engine selfplay` writes and `trainer-bridge fit`
//! reads. This module is the only code that knows their bytes.
//!
//! A shard is a [safetensors](https://huggingface.co/docs/safetensors) file, so any language
//! reads it in a few lines (`safetensors.numpy.load_file`). Its string metadata describes it:
//!
//! | key | meaning |
//! |---|---|
//! | `format` | always `engine-shard` |
//! | `version` | format version, [`VERSION`] (readers also take [`OLDEST_VERSION`]) |
//! | `game` | game name (`liuzhou`, `xiangqi`, `go`) |
//! | `planes`, `height`, `width`, `policy_size` | the network interface the samples are for |
//! | `positions` | number of samples |
//! | `games` | complete games whose positions the shard holds |
//! | `model` | the model that played the games (`random` or a path/name) |
//! | `config` | the producing configuration (YAML text) |
//! | `created_unix` | seconds since the epoch |
//! | `policy_target` | what `policy_prob` holds ([`PolicyTarget`]): `visits`, `improved` or `teacher`; a shard without it holds `visits` |
//! | `crc32` | the CRC-32 of each tensor's bytes ([`checksum`]), checked before a sample is used |
//!
//! Tensors (N samples, M stored policy entries, S symmetries):
//!
//! | name | dtype | shape | meaning |
//! |---|---|---|---|
//! | `planes` | F32 | N × planes × height × width | network input, mover's point of view |
//! | `policy_offsets` | U32 | N + 1 | sample i's policy entries are `offsets[i]..offsets[i+1]` |
//! | `policy_index` | U16 | M | policy index of an entry (sparse: only actions with a share) |
//! | `policy_prob` | F32 | M | its share of the policy target (`policy_target`), in [0, 1] (each sample's sum is 1) |
//! | `value` | F32 | N | the game's result from the mover's point of view (−1, 0, 1) |
//! | `symmetry_bits` | U8 | S ≥ 1 | the board symmetries valid for training ([`games::Symmetry`]), the identity first |
//! | `symmetry_policy` | U16 | S × policy_size | where each symmetry sends each policy index ([`NO_INDEX`] if nowhere) |
//! | `ownership` | F32 | N × height × width | each point's owner at the game's end, mover's point of view, in [−1, 1] ([`Aux::ownership`]); 0 where the mask is 0 |
//! | `ownership_mask` | U8 | N | 1 where the sample has an ownership target, else 0 |
//! | `score` | F32 | N | the final score margin, mover's point of view ([`Aux::score`]); 0 where the mask is 0 |
//! | `score_mask` | U8 | N | 1 where the sample has a score target, else 0 |
//! | `reply_offsets` | U32 | N + 1 | sample i's reply entries are `offsets[i]..offsets[i+1]`; none where it has no reply target |
//! | `reply_index` | U16 | R | policy index of an entry of the opponent's reply ([`Aux::reply`]) |
//! | `reply_prob` | F32 | R | its share, in [0, 1] (each present reply sums to 1 within 10⁻³) |
//! | `surprise` | F32 | N | the policy surprise ([`Aux::surprise`]), finite and ≥ 0; 0 where the mask is 0 |
//! | `surprise_mask` | U8 | N | 1 where the sample has a surprise, else 0 |
//!
//! The seven tensors from `ownership` to `reply_prob`, the auxiliary targets, are new in
//! version 3; a version 1 or 2 shard reads with every target absent ([`Aux::default`]), and a
//! fit gives an absent target weight 0. The last two, the policy surprise, are new in version 4;
//! a shard of an earlier version reads with no surprise (a fit weighs such a sample 1).
//! The ownership's points are in the order of a plane of `planes`, so a symmetry moves them as
//! it moves a plane ([`transform_ownership`]), and a reply as it moves the policy
//! ([`transform_policy`]).
//!
//! `planes`, `height`, `width` and `policy_size` are at least 1, and `policy_size` is at most
//! [`NO_INDEX`]. Writers and readers both check every number above (finite planes, indices in
//! range, masks 0 or 1, ...): a shard that breaks one is refused with the tensor and element at
//! fault.
//!
//! A shard that fails its checksums is refused with the tensor at fault, like a truncated one:
//! readers of a directory skip it with a warning. Version 1 shards carry no `crc32` and are
//! still read; [`read_newest`] and trainer-bridge warn once per directory that holds some
//! ([`warn_unchecked`]), and [`verify::verify_paths`] (`engine shards verify`) counts them.
//!
//! Shards are written to a temporary name and renamed, so a reader never sees half a shard;
//! readers ignore anything not ending in `.safetensors`.

mod augment;
pub mod checksum;
pub mod fuzzing;
pub mod upgrade;
pub mod verify;

use std::collections::HashMap;
use std::fs;
use std::io::Read;
use std::io::Write;
use std::path::{Path, PathBuf};

use safetensors::tensor::{Dtype, SafeTensors, TensorView};

pub use augment::{transform, transform_ownership, transform_policy, transform_sample};
pub use checksum::{ChecksumError, Integrity};
/// The policy index map of every symmetry of a state, in the form shards store.
pub use games::symmetry_maps;

/// The `format` metadata value of every shard.
pub const FORMAT: &str = "engine-shard";
/// The version written. Bumped whenever the layout changes; readers refuse versions outside
/// [`OLDEST_VERSION`]`..=VERSION`.
pub const VERSION: u32 = 4;
/// The oldest version read: version 1 is version 2 without the `crc32` metadata, version 2 is
/// version 3 without the auxiliary targets, and version 3 is version 4 without the surprise.
pub const OLDEST_VERSION: u32 = 1;
/// `symmetry_policy` entry for an index a symmetry maps to no action.
pub use games::NO_INDEX;
/// File name ending of a finished shard.
pub const EXTENSION: &str = "safetensors";

/// Why a shard could not be written or read.
#[derive(Debug, thiserror::Error)]
pub enum ShardError {
    // The io error is shown, not chained as a `source`: chains would print it twice.
    #[error("{path}: {error}")]
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("{path}: not a readable safetensors file: {reason}")]
    Corrupt { path: PathBuf, reason: String },
    #[error("{path}: not a shard of this format: {reason}")]
    Foreign { path: PathBuf, reason: String },
    #[error("{path}: inconsistent shard: {reason}")]
    Invalid { path: PathBuf, reason: String },
    /// A tensor's bytes are not those written: the file was damaged after it was written.
    #[error("{path}: damaged: {reason}")]
    Checksum {
        path: PathBuf,
        reason: ChecksumError,
    },
    #[error("cannot write a shard: {0}")]
    BadSamples(String),
}

/// What kind of distribution a shard's policy targets are (the `policy_target` metadata).
/// Readers train on any of them alike; the key says where the numbers came from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PolicyTarget {
    /// Each action's share of the root's visits (PUCT self-play). Shards without the key.
    #[default]
    Visits,
    /// The improved policy softmax(logit + σ(completed Q)) of a Gumbel search's root.
    Improved,
    /// A teacher's analysis or the moves of game records (`engine bootstrap`, `engine import`).
    Teacher,
}

impl PolicyTarget {
    pub fn name(self) -> &'static str {
        match self {
            PolicyTarget::Visits => "visits",
            PolicyTarget::Improved => "improved",
            PolicyTarget::Teacher => "teacher",
        }
    }

    pub fn from_name(name: &str) -> Option<PolicyTarget> {
        [
            PolicyTarget::Visits,
            PolicyTarget::Improved,
            PolicyTarget::Teacher,
        ]
        .into_iter()
        .find(|t| t.name() == name)
    }
}

/// What a shard says about itself.
#[derive(Clone, Debug, PartialEq)]
pub struct ShardMeta {
    pub game: String,
    pub planes: usize,
    pub height: usize,
    pub width: usize,
    pub policy_size: usize,
    pub model: String,
    pub config: String,
    pub created_unix: u64,
    /// Complete games whose positions this shard holds.
    pub games: usize,
    pub policy_target: PolicyTarget,
}

impl ShardMeta {
    pub fn input_len(&self) -> usize {
        self.planes * self.height * self.width
    }

    /// Reads only the header of the shard at `path`: what it says about itself, and how many
    /// positions it holds. Cheap (the samples are not read), and checks no more than the
    /// header: [`Shard::read`] validates the rest.
    pub fn read(path: &Path) -> Result<(ShardMeta, usize), ShardError> {
        let io = |error| ShardError::Io {
            path: path.into(),
            error,
        };
        let mut file = fs::File::open(path).map_err(io)?;
        let file_len = file.metadata().map_err(io)?.len();
        ShardMeta::read_from(&mut file, file_len, path)
    }

    /// [`ShardMeta::read`] from `file`, `file_len` bytes long; `path` only names it in errors.
    pub fn read_from(
        file: &mut impl Read,
        file_len: u64,
        path: &Path,
    ) -> Result<(ShardMeta, usize), ShardError> {
        let io = |error| ShardError::Io {
            path: path.into(),
            error,
        };
        let corrupt = |reason: String| ShardError::Corrupt {
            path: path.into(),
            reason,
        };
        if file_len < 8 {
            return Err(corrupt(format!("{file_len} bytes: shorter than a header")));
        }
        let mut len = [0u8; 8];
        file.read_exact(&mut len).map_err(io)?;
        let len = u64::from_le_bytes(len);
        if len > file_len - 8 {
            return Err(corrupt(format!(
                "the header claims {len} bytes; the file has {file_len}"
            )));
        }
        let mut header = vec![0u8; len as usize];
        file.read_exact(&mut header).map_err(io)?;
        let header: safetensors::tensor::Metadata =
            serde_json::from_slice(&header).map_err(|e| corrupt(e.to_string()))?;
        ShardMeta::from_info(header.metadata().as_ref(), path).map(|(meta, n, _)| (meta, n))
    }

    /// The metadata map of a shard's header as a `ShardMeta`, with the number of positions and
    /// the format version.
    fn from_info(
        info: Option<&HashMap<String, String>>,
        path: &Path,
    ) -> Result<(ShardMeta, usize, u32), ShardError> {
        let foreign = |reason: String| ShardError::Foreign {
            path: path.into(),
            reason,
        };
        let get = |k: &str| {
            info.and_then(|m| m.get(k))
                .cloned()
                .ok_or_else(|| foreign(format!("no `{k}` metadata")))
        };
        let format = get("format")?;
        if format != FORMAT {
            return Err(foreign(format!("format is {format:?}, not {FORMAT}")));
        }
        let version = get("version")?;
        let version = match version.parse::<u32>() {
            Ok(v) if (OLDEST_VERSION..=VERSION).contains(&v) => v,
            _ => {
                return Err(foreign(format!(
                    "version {version}; this build reads versions {OLDEST_VERSION} to {VERSION}"
                )))
            }
        };
        let num = |k: &str| -> Result<usize, ShardError> {
            get(k)?.parse().map_err(|_| ShardError::Invalid {
                path: path.into(),
                reason: format!("metadata `{k}` is not a number"),
            })
        };
        // Sizes of zero would make empty networks; a policy index of NO_INDEX could not be told
        // from "maps nowhere" in `symmetry_policy`.
        let dim = |k: &str, max: usize| -> Result<usize, ShardError> {
            let v = num(k)?;
            if !(1..=max).contains(&v) {
                return Err(ShardError::Invalid {
                    path: path.into(),
                    reason: format!("metadata `{k}` is {v}, outside 1..={max}"),
                });
            }
            Ok(v)
        };
        let meta = ShardMeta {
            game: get("game")?,
            planes: dim("planes", usize::MAX)?,
            height: dim("height", usize::MAX)?,
            width: dim("width", usize::MAX)?,
            policy_size: dim("policy_size", NO_INDEX as usize)?,
            model: get("model")?,
            config: get("config")?,
            created_unix: num("created_unix")? as u64,
            games: num("games")?,
            policy_target: match info.and_then(|m| m.get("policy_target")) {
                None => PolicyTarget::Visits,
                Some(name) => PolicyTarget::from_name(name).ok_or_else(|| ShardError::Invalid {
                    path: path.into(),
                    reason: format!(
                        "metadata `policy_target` is {name:?}; expected visits, improved or teacher"
                    ),
                })?,
            },
        };
        // Every reader multiplies them: a product past `usize` would wrap (or panic).
        let input = meta.planes.checked_mul(meta.height);
        if input.and_then(|x| x.checked_mul(meta.width)).is_none() {
            return Err(ShardError::Invalid {
                path: path.into(),
                reason: format!(
                    "metadata `planes` × `height` × `width` ({} × {} × {}) is too large to count",
                    meta.planes, meta.height, meta.width
                ),
            });
        }
        Ok((meta, num("positions")?, version))
    }
}

/// One training position.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    /// The encoded state (`input_len` floats).
    pub planes: Vec<f32>,
    /// Visited policy indices with their share of the visits.
    pub policy: Vec<(u16, f32)>,
    /// The final result from the mover's point of view.
    pub value: f32,
    /// Auxiliary targets from the finished game.
    pub aux: Aux,
}

/// Auxiliary targets from the finished game; each is None where the producer had none (older shards, teacher data), and a fit weights a missing target 0.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Aux {
    /// Final ownership of each of the height × width points, mover's view, in [−1, 1].
    pub ownership: Option<Vec<f32>>,
    /// Final score margin, mover's view (Go: area margin with komi; Liuzhou: stone difference).
    pub score: Option<f32>,
    /// The opponent's reply: the next position's policy target as stored there (sparse).
    pub reply: Option<Vec<(u16, f32)>>,
    /// Not a target but a sampling weight's input: how surprising the policy target was to the
    /// network that played, KL(target ‖ the network's prior at the root, before noise), in
    /// nats, finite and ≥ 0 (KataGo's policy-surprise weighting, `fit.surprise_weight`).
    pub surprise: Option<f32>,
}

/// The ply whose policy target is the reply target of the position at `ply`, in a game where
/// `movers[k]` decided at ply k: the opponent's next decision, the first later ply whose mover
/// is the other player (past the mover's own further actions, as in a Liuzhou turn of several).
/// `None` when the game ended first. Producers store that ply's policy target as
/// [`Aux::reply`] where they stored one for it.
pub fn reply_ply(movers: &[games::Player], ply: usize) -> Option<usize> {
    let me = *movers.get(ply)?;
    (ply + 1..movers.len()).find(|&k| movers[k] != me)
}

/// A shard in memory.
#[derive(Clone, Debug)]
pub struct Shard {
    pub meta: ShardMeta,
    pub samples: Vec<Sample>,
    /// Valid symmetries, each with its policy index map.
    pub symmetries: Vec<(games::Symmetry, Vec<u16>)>,
}

/// Numbers as the little-endian bytes safetensors stores.
trait LeBytes: Copy {
    fn extend_le(self, out: &mut Vec<u8>);
}

macro_rules! le_bytes {
    ($($t:ty),*) => {$(
        impl LeBytes for $t {
            fn extend_le(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
        }
    )*};
}
le_bytes!(u8, u16, u32, f32);

fn bytes_of<T: LeBytes>(v: &[T]) -> Vec<u8> {
    let mut out = Vec::with_capacity(std::mem::size_of_val(v));
    v.iter().for_each(|x| x.extend_le(&mut out));
    out
}

impl Shard {
    /// Checks the samples against the metadata, then writes the shard to `path` through a
    /// temporary file in the same directory.
    pub fn write(&self, path: &Path) -> Result<(), ShardError> {
        write_atomically(path, &self.to_bytes()?)
    }

    /// The bytes of the shard's file, after the samples are checked against the metadata.
    pub fn to_bytes(&self) -> Result<Vec<u8>, ShardError> {
        let m = &self.meta;
        let n = self.samples.len();
        let area = m.height * m.width;
        let mut planes = Vec::with_capacity(n * m.input_len());
        let mut offsets = Vec::with_capacity(n + 1);
        let mut index = Vec::new();
        let mut prob = Vec::new();
        let mut value = Vec::with_capacity(n);
        let mut aux = AuxColumns::default();
        offsets.push(0u32);
        aux.reply_offsets.push(0u32);
        for (i, s) in self.samples.iter().enumerate() {
            if s.planes.len() != m.input_len() {
                return Err(ShardError::BadSamples(format!(
                    "sample {i} has {} input floats, expected {}",
                    s.planes.len(),
                    m.input_len()
                )));
            }
            planes.extend_from_slice(&s.planes);
            index.extend(s.policy.iter().map(|&(j, _)| j));
            prob.extend(s.policy.iter().map(|&(_, p)| p));
            offsets.push(index.len() as u32);
            value.push(s.value);
            aux.push(i, &s.aux, area)?;
        }
        let sym_bits: Vec<u8> = self.symmetries.iter().map(|(s, _)| s.bits()).collect();
        let mut sym_policy = Vec::with_capacity(self.symmetries.len() * m.policy_size);
        for (s, map) in &self.symmetries {
            if map.len() != m.policy_size {
                return Err(ShardError::BadSamples(format!(
                    "symmetry {s:?}: map of {} entries",
                    map.len()
                )));
            }
            sym_policy.extend_from_slice(map);
        }
        Columns {
            planes: &planes,
            offsets: &offsets,
            index: &index,
            prob: &prob,
            value: &value,
            sym_bits: &sym_bits,
            sym_policy: &sym_policy,
            aux: Some(&aux),
        }
        .check(m)
        .map_err(ShardError::BadSamples)?;
        let (planes, offsets, index_b, prob, value, sym_policy) = (
            bytes_of(&planes),
            bytes_of(&offsets),
            bytes_of(&index),
            bytes_of(&prob),
            bytes_of(&value),
            bytes_of(&sym_policy),
        );
        let (ownership, score, reply_offsets, reply_index, reply_prob, surprise) = (
            bytes_of(&aux.ownership),
            bytes_of(&aux.score),
            bytes_of(&aux.reply_offsets),
            bytes_of(&aux.reply_index),
            bytes_of(&aux.reply_prob),
            bytes_of(&aux.surprise),
        );
        let replies = aux.reply_index.len();
        let tensors = vec![
            (
                "planes",
                view(Dtype::F32, vec![n, m.planes, m.height, m.width], &planes)?,
            ),
            ("policy_offsets", view(Dtype::U32, vec![n + 1], &offsets)?),
            (
                "policy_index",
                view(Dtype::U16, vec![index.len()], &index_b)?,
            ),
            ("policy_prob", view(Dtype::F32, vec![index.len()], &prob)?),
            ("value", view(Dtype::F32, vec![n], &value)?),
            (
                "symmetry_bits",
                view(Dtype::U8, vec![sym_bits.len()], &sym_bits)?,
            ),
            (
                "symmetry_policy",
                view(
                    Dtype::U16,
                    vec![self.symmetries.len(), m.policy_size],
                    &sym_policy,
                )?,
            ),
            (
                "ownership",
                view(Dtype::F32, vec![n, m.height, m.width], &ownership)?,
            ),
            (
                "ownership_mask",
                view(Dtype::U8, vec![n], &aux.ownership_mask)?,
            ),
            ("score", view(Dtype::F32, vec![n], &score)?),
            ("score_mask", view(Dtype::U8, vec![n], &aux.score_mask)?),
            (
                "reply_offsets",
                view(Dtype::U32, vec![n + 1], &reply_offsets)?,
            ),
            (
                "reply_index",
                view(Dtype::U16, vec![replies], &reply_index)?,
            ),
            ("reply_prob", view(Dtype::F32, vec![replies], &reply_prob)?),
            ("surprise", view(Dtype::F32, vec![n], &surprise)?),
            (
                "surprise_mask",
                view(Dtype::U8, vec![n], &aux.surprise_mask)?,
            ),
        ];
        let info: HashMap<String, String> = [
            ("format", FORMAT.to_string()),
            ("version", VERSION.to_string()),
            ("game", m.game.clone()),
            ("planes", m.planes.to_string()),
            ("height", m.height.to_string()),
            ("width", m.width.to_string()),
            ("policy_size", m.policy_size.to_string()),
            ("positions", n.to_string()),
            ("model", m.model.clone()),
            ("config", m.config.clone()),
            ("created_unix", m.created_unix.to_string()),
            ("games", m.games.to_string()),
            ("policy_target", m.policy_target.name().to_string()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        checksum::serialize(tensors, info).map_err(|e| ShardError::BadSamples(e.to_string()))
    }

    /// Reads and validates the shard at `path`: its checksums first, then its numbers.
    pub fn read(path: &Path) -> Result<Shard, ShardError> {
        Shard::read_checked(path).map(|(shard, _)| shard)
    }

    /// [`Shard::read`], saying whether the shard's checksums were checked
    /// ([`Integrity::NoChecksum`] for a version 1 shard).
    pub fn read_checked(path: &Path) -> Result<(Shard, Integrity), ShardError> {
        let bytes = fs::read(path).map_err(|error| ShardError::Io {
            path: path.into(),
            error,
        })?;
        Shard::from_bytes_checked(&bytes, path)
    }

    /// Reads a shard from its bytes; `path` only names it in errors.
    pub fn from_bytes(bytes: &[u8], path: &Path) -> Result<Shard, ShardError> {
        Shard::from_bytes_checked(bytes, path).map(|(shard, _)| shard)
    }

    /// [`Shard::from_bytes`], saying whether the shard's checksums were checked.
    pub fn from_bytes_checked(bytes: &[u8], path: &Path) -> Result<(Shard, Integrity), ShardError> {
        let corrupt = |reason: String| ShardError::Corrupt {
            path: path.into(),
            reason,
        };
        let invalid = |reason: String| ShardError::Invalid {
            path: path.into(),
            reason,
        };
        let (_, header) = SafeTensors::read_metadata(bytes).map_err(|e| corrupt(e.to_string()))?;
        let st = SafeTensors::deserialize(bytes).map_err(|e| corrupt(e.to_string()))?;
        let damaged = |reason| ShardError::Checksum {
            path: path.into(),
            reason,
        };
        let info = header.metadata().as_ref();
        let (meta, n, version) = ShardMeta::from_info(info, path)?;
        let recorded = checksum::recorded(info).map_err(damaged)?;
        if version >= 2 && recorded.is_none() {
            return Err(invalid(format!(
                "a version {version} shard without `{}` metadata",
                checksum::KEY
            )));
        }
        let tensor = |name: &str, dtype: Dtype, shape: &[usize]| -> Result<&[u8], ShardError> {
            let t = st
                .tensor(name)
                .map_err(|_| invalid(format!("tensor `{name}` missing")))?;
            if t.dtype() != dtype || (!shape.is_empty() && t.shape() != shape) {
                return Err(invalid(format!(
                    "tensor `{name}` is {:?} {:?}, expected {dtype:?} {shape:?}",
                    t.dtype(),
                    t.shape()
                )));
            }
            Ok(t.data())
        };
        // Each tensor's CRC-32, computed as it is decoded.
        let mut crcs = HashMap::new();
        let planes = decode(
            &mut crcs,
            "planes",
            tensor(
                "planes",
                Dtype::F32,
                &[n, meta.planes, meta.height, meta.width],
            )?,
            f32::from_le_bytes,
        );
        let offsets = decode(
            &mut crcs,
            "policy_offsets",
            tensor("policy_offsets", Dtype::U32, &[n + 1])?,
            u32::from_le_bytes,
        );
        let index = decode(
            &mut crcs,
            "policy_index",
            tensor("policy_index", Dtype::U16, &[])?,
            u16::from_le_bytes,
        );
        let prob = decode(
            &mut crcs,
            "policy_prob",
            tensor("policy_prob", Dtype::F32, &[index.len()])?,
            f32::from_le_bytes,
        );
        let value = decode(
            &mut crcs,
            "value",
            tensor("value", Dtype::F32, &[n])?,
            f32::from_le_bytes,
        );
        let sym_bits = decode(
            &mut crcs,
            "symmetry_bits",
            tensor("symmetry_bits", Dtype::U8, &[])?,
            u8::from_le_bytes,
        );
        let sym_policy = decode(
            &mut crcs,
            "symmetry_policy",
            tensor(
                "symmetry_policy",
                Dtype::U16,
                &[sym_bits.len(), meta.policy_size],
            )?,
            u16::from_le_bytes,
        );
        // The auxiliary targets, from version 3 on.
        let aux = if version >= 3 {
            let reply_index = decode(
                &mut crcs,
                "reply_index",
                tensor("reply_index", Dtype::U16, &[])?,
                u16::from_le_bytes,
            );
            Some(AuxColumns {
                ownership: decode(
                    &mut crcs,
                    "ownership",
                    tensor("ownership", Dtype::F32, &[n, meta.height, meta.width])?,
                    f32::from_le_bytes,
                ),
                ownership_mask: decode(
                    &mut crcs,
                    "ownership_mask",
                    tensor("ownership_mask", Dtype::U8, &[n])?,
                    u8::from_le_bytes,
                ),
                score: decode(
                    &mut crcs,
                    "score",
                    tensor("score", Dtype::F32, &[n])?,
                    f32::from_le_bytes,
                ),
                score_mask: decode(
                    &mut crcs,
                    "score_mask",
                    tensor("score_mask", Dtype::U8, &[n])?,
                    u8::from_le_bytes,
                ),
                reply_offsets: decode(
                    &mut crcs,
                    "reply_offsets",
                    tensor("reply_offsets", Dtype::U32, &[n + 1])?,
                    u32::from_le_bytes,
                ),
                reply_prob: decode(
                    &mut crcs,
                    "reply_prob",
                    tensor("reply_prob", Dtype::F32, &[reply_index.len()])?,
                    f32::from_le_bytes,
                ),
                reply_index,
                // The policy surprise, from version 4 on.
                surprise: if version >= 4 {
                    decode(
                        &mut crcs,
                        "surprise",
                        tensor("surprise", Dtype::F32, &[n])?,
                        f32::from_le_bytes,
                    )
                } else {
                    vec![0.0; n]
                },
                surprise_mask: if version >= 4 {
                    decode(
                        &mut crcs,
                        "surprise_mask",
                        tensor("surprise_mask", Dtype::U8, &[n])?,
                        u8::from_le_bytes,
                    )
                } else {
                    vec![0; n]
                },
            })
        } else {
            None
        };
        // Before any number is looked at: a damaged tensor is reported as damaged, not as
        // whatever its changed bytes happen to break.
        let integrity = match recorded {
            None => Integrity::NoChecksum,
            Some(recorded) => {
                checksum::compare(&st, recorded, &crcs).map_err(damaged)?;
                Integrity::Verified
            }
        };

        let columns = Columns {
            planes: &planes,
            offsets: &offsets,
            index: &index,
            prob: &prob,
            value: &value,
            sym_bits: &sym_bits,
            sym_policy: &sym_policy,
            aux: aux.as_ref(),
        };
        columns.check(&meta).map_err(invalid)?;
        let input = meta.input_len();
        let area = meta.height * meta.width;
        let samples = (0..n)
            .map(|i| {
                let (a, b) = (offsets[i] as usize, offsets[i + 1] as usize);
                Sample {
                    planes: planes[i * input..(i + 1) * input].to_vec(),
                    policy: index[a..b]
                        .iter()
                        .copied()
                        .zip(prob[a..b].iter().copied())
                        .collect(),
                    value: value[i],
                    aux: aux
                        .as_ref()
                        .map_or_else(Aux::default, |a| a.sample(i, area)),
                }
            })
            .collect();
        let symmetries = sym_bits
            .iter()
            .zip(sym_policy.chunks_exact(meta.policy_size))
            .map(|(&bits, map)| {
                let sym = games::Symmetry::from_bits(bits).expect("checked by Columns::check");
                (sym, map.to_vec())
            })
            .collect();
        Ok((
            Shard {
                meta,
                samples,
                symmetries,
            },
            integrity,
        ))
    }
}

/// A shard's tensors as flat columns, as written and as read.
struct Columns<'a> {
    planes: &'a [f32],
    offsets: &'a [u32],
    index: &'a [u16],
    prob: &'a [f32],
    value: &'a [f32],
    sym_bits: &'a [u8],
    sym_policy: &'a [u16],
    /// The auxiliary targets; `None` for a shard of a version without them.
    aux: Option<&'a AuxColumns>,
}

impl Columns<'_> {
    /// Checks the numbers (the lengths agree with `meta` already): the one place that decides
    /// what a shard may hold, so that writer and reader refuse the same shards. A trainer fed
    /// a NaN or a negative probability would train a broken model without noticing; an index
    /// out of range would panic. The reason names the tensor and the element.
    fn check(&self, meta: &ShardMeta) -> Result<(), String> {
        let policy_size = meta.policy_size;
        let sparse = Sparse {
            what: "policy",
            offsets: ("policy_offsets", self.offsets),
            index: ("policy_index", self.index),
            prob: ("policy_prob", self.prob),
        };
        sparse.check_partition()?;
        let input = meta.input_len();
        if let Some(i) = self.planes.iter().position(|x| !x.is_finite()) {
            return Err(format!(
                "tensor `planes`: element {i} (sample {}) is {}, not a finite number",
                i / input,
                self.planes[i]
            ));
        }
        if let Some(i) = self.value.iter().position(|v| !(-1.0..=1.0).contains(v)) {
            return Err(format!(
                "tensor `value`: element {i} is {}, outside [-1, 1]",
                self.value[i]
            ));
        }
        sparse.check_entries(policy_size)?;
        // Training without augmentation takes the first symmetry as the identity.
        if self.sym_bits.first() != Some(&games::Symmetry::IDENTITY.bits()) {
            return Err(format!(
                "tensor `symmetry_bits` is {:?}: it must list the identity (0) first",
                self.sym_bits
            ));
        }
        for (k, &bits) in self.sym_bits.iter().enumerate() {
            match games::Symmetry::from_bits(bits) {
                None => return Err(format!("tensor `symmetry_bits`: element {k} is {bits}, not a symmetry")),
                // Transposing a non-square board would send cells off it.
                Some(sym) if sym.transposes() && meta.height != meta.width => {
                    return Err(format!(
                        "tensor `symmetry_bits`: element {k} ({bits}) transposes, but the board is {}×{}",
                        meta.height, meta.width
                    ))
                }
                Some(_) => {}
            }
        }
        if let Some(i) = self
            .sym_policy
            .iter()
            .position(|&j| j != NO_INDEX && j as usize >= policy_size)
        {
            return Err(format!(
                "tensor `symmetry_policy`: element [{}, {}] is {}, neither in 0..{policy_size} nor {NO_INDEX} (no action)",
                i / policy_size,
                i % policy_size,
                self.sym_policy[i]
            ));
        }
        match self.aux {
            Some(aux) => aux.check(meta),
            None => Ok(()),
        }
    }
}

/// A sparse distribution per sample (the policy, the reply) as its three tensors, each with
/// its name for errors.
struct Sparse<'a> {
    /// What the entries are, in words ("policy", "reply").
    what: &'static str,
    offsets: (&'static str, &'a [u32]),
    index: (&'static str, &'a [u16]),
    prob: (&'static str, &'a [f32]),
}

impl Sparse<'_> {
    /// The offsets tile the entries: they start at 0, never decrease and end at their count.
    fn check_partition(&self) -> Result<(), String> {
        let ((name, offsets), entries) = (self.offsets, self.index.1.len());
        let n = offsets.len() - 1;
        if offsets[0] != 0
            || offsets[n] as usize != entries
            || offsets.windows(2).any(|w| w[0] > w[1])
        {
            return Err(format!(
                "tensor `{name}` is not a partition of the {entries} {} entries \
                 (it must start at 0, never decrease and end at {entries})",
                self.what
            ));
        }
        Ok(())
    }

    /// The sample an entry belongs to (after [`Sparse::check_partition`]).
    fn sample_of(&self, i: usize) -> usize {
        self.offsets.1.partition_point(|&o| o as usize <= i) - 1
    }

    /// Every index names a policy entry and every share lies in [0, 1].
    fn check_entries(&self, policy_size: usize) -> Result<(), String> {
        let ((index_name, index), (prob_name, prob)) = (self.index, self.prob);
        if let Some(i) = index.iter().position(|&j| j as usize >= policy_size) {
            return Err(format!(
                "tensor `{index_name}`: element {i} (sample {}) is {}, outside 0..{policy_size}",
                self.sample_of(i),
                index[i]
            ));
        }
        if let Some(i) = prob.iter().position(|p| !(0.0..=1.0).contains(p)) {
            return Err(format!(
                "tensor `{prob_name}`: element {i} (sample {}) is {}, outside [0, 1]",
                self.sample_of(i),
                prob[i]
            ));
        }
        Ok(())
    }
}

/// How far a present reply's shares may sum from 1 (rounding of a visit distribution's shares).
const REPLY_SUM_TOLERANCE: f32 = 1e-3;

/// The auxiliary targets of a shard's samples as the columns stored (version 3 on): an
/// absent target is a 0 in its mask with zeros in its place, or no reply entries.
#[derive(Default)]
struct AuxColumns {
    ownership: Vec<f32>,
    ownership_mask: Vec<u8>,
    score: Vec<f32>,
    score_mask: Vec<u8>,
    reply_offsets: Vec<u32>,
    reply_index: Vec<u16>,
    reply_prob: Vec<f32>,
    /// Version 4 on; a shard of version 3 reads with zeros and masks of 0.
    surprise: Vec<f32>,
    surprise_mask: Vec<u8>,
}

impl AuxColumns {
    /// Appends sample `i`'s targets (boards of `area` points). `reply_offsets` must hold its
    /// leading 0 already.
    fn push(&mut self, i: usize, aux: &Aux, area: usize) -> Result<(), ShardError> {
        match &aux.ownership {
            Some(o) if o.len() != area => {
                return Err(ShardError::BadSamples(format!(
                    "sample {i} has {} ownership values, expected {area} (height × width)",
                    o.len()
                )))
            }
            Some(o) => self.ownership.extend_from_slice(o),
            None => self.ownership.resize(self.ownership.len() + area, 0.0),
        }
        self.ownership_mask.push(u8::from(aux.ownership.is_some()));
        self.score.push(aux.score.unwrap_or(0.0));
        self.score_mask.push(u8::from(aux.score.is_some()));
        if let Some(reply) = &aux.reply {
            // No entries is how a shard says "no reply": an empty one could not be read back.
            if reply.is_empty() {
                return Err(ShardError::BadSamples(format!(
                    "sample {i} has an empty reply target (an absent one is None)"
                )));
            }
            self.reply_index.extend(reply.iter().map(|&(j, _)| j));
            self.reply_prob.extend(reply.iter().map(|&(_, p)| p));
        }
        self.reply_offsets.push(self.reply_index.len() as u32);
        self.surprise.push(aux.surprise.unwrap_or(0.0));
        self.surprise_mask.push(u8::from(aux.surprise.is_some()));
        Ok(())
    }

    /// Sample `i`'s targets (boards of `area` points).
    fn sample(&self, i: usize, area: usize) -> Aux {
        let (a, b) = (
            self.reply_offsets[i] as usize,
            self.reply_offsets[i + 1] as usize,
        );
        Aux {
            ownership: (self.ownership_mask[i] == 1)
                .then(|| self.ownership[i * area..(i + 1) * area].to_vec()),
            score: (self.score_mask[i] == 1).then_some(self.score[i]),
            reply: (a < b).then(|| {
                self.reply_index[a..b]
                    .iter()
                    .copied()
                    .zip(self.reply_prob[a..b].iter().copied())
                    .collect()
            }),
            surprise: (self.surprise_mask[i] == 1).then_some(self.surprise[i]),
        }
    }

    /// [`Columns::check`] for the auxiliary targets.
    fn check(&self, meta: &ShardMeta) -> Result<(), String> {
        let area = meta.height * meta.width;
        for (name, mask) in [
            ("ownership_mask", &self.ownership_mask),
            ("score_mask", &self.score_mask),
            ("surprise_mask", &self.surprise_mask),
        ] {
            if let Some(i) = mask.iter().position(|&m| m > 1) {
                return Err(format!(
                    "tensor `{name}`: element {i} is {}, neither 0 (absent) nor 1 (present)",
                    mask[i]
                ));
            }
        }
        if let Some(i) = self
            .ownership
            .iter()
            .position(|o| !(-1.0..=1.0).contains(o))
        {
            return Err(format!(
                "tensor `ownership`: element {i} (sample {}) is {}, outside [-1, 1]",
                i / area,
                self.ownership[i]
            ));
        }
        if let Some(i) = self
            .ownership
            .iter()
            .enumerate()
            .position(|(i, &o)| o != 0.0 && self.ownership_mask[i / area] == 0)
        {
            return Err(format!(
                "tensor `ownership`: element {i} (sample {}) is {}, but the sample has no \
                 ownership target (`ownership_mask` 0): it must be 0",
                i / area,
                self.ownership[i]
            ));
        }
        if let Some(i) = self.score.iter().position(|x| !x.is_finite()) {
            return Err(format!(
                "tensor `score`: element {i} is {}, not a finite number",
                self.score[i]
            ));
        }
        if let Some(i) =
            (0..self.score.len()).find(|&i| self.score[i] != 0.0 && self.score_mask[i] == 0)
        {
            return Err(format!(
                "tensor `score`: element {i} is {}, but the sample has no score target \
                 (`score_mask` 0): it must be 0",
                self.score[i]
            ));
        }
        let reply = Sparse {
            what: "reply",
            offsets: ("reply_offsets", &self.reply_offsets),
            index: ("reply_index", &self.reply_index),
            prob: ("reply_prob", &self.reply_prob),
        };
        reply.check_partition()?;
        reply.check_entries(meta.policy_size)?;
        for (i, w) in self.reply_offsets.windows(2).enumerate() {
            let (a, b) = (w[0] as usize, w[1] as usize);
            if a == b {
                continue;
            }
            let sum: f32 = self.reply_prob[a..b].iter().sum();
            if (sum - 1.0).abs() > REPLY_SUM_TOLERANCE {
                return Err(format!(
                    "tensor `reply_prob`: sample {i}'s entries (elements {a}..{b}) sum to {sum}, \
                     not 1"
                ));
            }
        }
        if let Some(i) = self
            .surprise
            .iter()
            .position(|x| !(x.is_finite() && *x >= 0.0))
        {
            return Err(format!(
                "tensor `surprise`: element {i} is {}, not a finite number ≥ 0",
                self.surprise[i]
            ));
        }
        if let Some(i) = (0..self.surprise.len())
            .find(|&i| self.surprise[i] != 0.0 && self.surprise_mask[i] == 0)
        {
            return Err(format!(
                "tensor `surprise`: element {i} is {}, but the sample has no surprise \
                 (`surprise_mask` 0): it must be 0",
                self.surprise[i]
            ));
        }
        Ok(())
    }
}

fn view(dtype: Dtype, shape: Vec<usize>, data: &[u8]) -> Result<TensorView<'_>, ShardError> {
    TensorView::new(dtype, shape, data).map_err(|e| ShardError::BadSamples(e.to_string()))
}

/// Tensor `name`'s little-endian numbers, with the CRC-32 of its bytes (into `crcs`) computed
/// on the way: a chunk at a time, hashed and decoded while it is in the cache, so that the
/// bytes are read from memory once, not once more for the check.
fn decode<'a, const N: usize, T>(
    crcs: &mut HashMap<&'a str, u32>,
    name: &'a str,
    bytes: &[u8],
    from_le: fn([u8; N]) -> T,
) -> Vec<T> {
    const CHUNK: usize = 16 * 1024;
    let mut crc = crc32fast::Hasher::new();
    let mut out = Vec::with_capacity(bytes.len() / N);
    for chunk in bytes.chunks(CHUNK) {
        crc.update(chunk);
        out.extend(
            chunk
                .chunks_exact(N)
                .map(|c| from_le(c.try_into().expect("chunks of N bytes"))),
        );
    }
    crcs.insert(name, crc.finalize());
    out
}

/// Writes `bytes` to `path` so that `path` either does not exist or holds all of them: a
/// temporary file in the same directory, flushed to disk, then renamed over `path`.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), ShardError> {
    let io = |error| ShardError::Io {
        path: path.into(),
        error,
    };
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    fs::create_dir_all(dir).map_err(io)?;
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("shard");
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let result = (|| {
        let mut f = fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result.map_err(io)
}

/// The paths of the finished shards in `dir`, newest first (by name: writers name shards so
/// that names sort by time). Temporary files of unfinished writes and hidden files are left out.
pub fn newest_first(dir: &Path) -> Result<Vec<PathBuf>, ShardError> {
    let io = |error| ShardError::Io {
        path: dir.into(),
        error,
    };
    let mut paths: Vec<PathBuf> = fs::read_dir(dir)
        .map_err(io)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.extension().and_then(|e| e.to_str()) == Some(EXTENSION)
                && !p
                    .file_name()
                    .and_then(|n| n.to_str())
                    .is_none_or(|n| n.starts_with('.'))
        })
        .collect();
    paths.sort();
    paths.reverse();
    Ok(paths)
}

/// Finished shards in `dir` for `game`, newest first (see [`newest_first`]), at most `limit`.
/// Shards that cannot be read (damaged ones included) or belong to another game are reported
/// with `tracing::warn!` and skipped; shards without checksums are read, with one warning for
/// the directory ([`warn_unchecked`]).
pub fn read_newest(dir: &Path, game: &str, limit: usize) -> Result<Vec<Shard>, ShardError> {
    let mut out = Vec::new();
    let mut unchecked = 0;
    for path in newest_first(dir)? {
        if out.len() >= limit {
            break;
        }
        match Shard::read_checked(&path) {
            Ok((s, integrity)) if s.meta.game == game => {
                unchecked += usize::from(integrity == Integrity::NoChecksum);
                out.push(s);
            }
            Ok((s, _)) => tracing::warn!(
                "skipping {}: a {} shard, not {game}",
                path.display(),
                s.meta.game
            ),
            Err(e) => tracing::warn!("skipping shard: {e}"),
        }
    }
    warn_unchecked(dir, unchecked, out.len());
    Ok(out)
}

/// The one warning for a directory from which `unchecked` of the `read` shards used carry no
/// checksums (version 1); nothing when `unchecked` is 0.
pub fn warn_unchecked(dir: &Path, unchecked: usize, read: usize) {
    if unchecked > 0 {
        tracing::warn!(
            "{}: {unchecked} of the {read} shards read are of version {OLDEST_VERSION} and carry no \
             checksums: damage to their bytes cannot be detected",
            dir.display()
        );
    }
}

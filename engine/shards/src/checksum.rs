//! Checksums of a safetensors file's tensors, kept in its string metadata: how shards and
//! trainer-bridge's checkpoints show that their bytes are the ones written.
//!
//! The metadata key [`KEY`] (`crc32`) holds a JSON object from each tensor's name to the
//! CRC-32 of its bytes, as 8 lowercase hex digits:
//! `{"planes":"8c736521","value":"0d4a1185",...}`. Every tensor of the file has one, and
//! nothing else does. The rest of the file is the header, which is checked by parsing it: its
//! offsets must tile the data exactly, and a changed checksum digit fails the check it records.
//!
//! CRC-32 is the checksum of gzip and zip, so the one lc0's and KataGo's training data carry.
//! It finds every change of up to 32 consecutive bits, so any changed byte, which is the damage
//! a bad disk, a bad copy or a truncated and padded file does; it is not meant to stop a person
//! who edits a file on purpose (they can recompute it). It is computed with
//! [`crc32fast`], which uses the processor's carry-less multiply (PCLMULQDQ) and runs at
//! several GB/s on one core, so checking costs a small part of decoding a shard (figures in
//! README's "Shards and models"). Python checks it with the standard library alone
//! (`zlib.crc32(tensor.tobytes())`). `crc32fast` is a well-kept crate (flate2 and zip use it)
//! that the workspace built already, under candle. xxh3 is faster still but needs a package
//! outside Python's standard library; blake3, a cryptographic hash, is slower per core and
//! guards against a kind of tampering that is not the threat here.

use std::collections::HashMap;

use safetensors::tensor::{SafeTensorError, SafeTensors, TensorView};

/// The metadata key holding the checksums.
pub const KEY: &str = "crc32";

/// The CRC-32 (gzip's and zip's) of `bytes`.
pub fn crc32(bytes: &[u8]) -> u32 {
    crc32fast::hash(bytes)
}

/// Whether a file's tensors were checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Integrity {
    /// Every tensor matched the checksum the file records for it.
    Verified,
    /// The file records no checksums (written before they existed): a changed byte in it
    /// cannot be seen.
    NoChecksum,
}

/// Why a file's checksums do not hold. The reason names the tensor.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ChecksumError {
    #[error(
        "tensor `{tensor}` fails its checksum (CRC-32 {actual:08x}, recorded {recorded:08x}): \
         its bytes changed after it was written"
    )]
    Mismatch {
        tensor: String,
        recorded: u32,
        actual: u32,
    },
    #[error("tensor `{tensor}` has no checksum in metadata `{KEY}`")]
    Missing { tensor: String },
    #[error("metadata `{KEY}` records tensor `{tensor}`, which the file does not hold")]
    Unknown { tensor: String },
    #[error("metadata `{KEY}` is not a map of tensor names to 8 hex digits: {reason}")]
    Malformed { reason: String },
}

/// The value of metadata [`KEY`] for these tensors.
pub fn record<'a>(tensors: impl IntoIterator<Item = (&'a str, &'a [u8])>) -> String {
    let map: serde_json::Map<String, serde_json::Value> = tensors
        .into_iter()
        .map(|(name, bytes)| (name.to_string(), format!("{:08x}", crc32(bytes)).into()))
        .collect();
    serde_json::Value::Object(map).to_string()
}

/// `safetensors::serialize` with the tensors' checksums added to `info` under [`KEY`].
pub fn serialize(
    tensors: Vec<(&str, TensorView<'_>)>,
    mut info: HashMap<String, String>,
) -> Result<Vec<u8>, SafeTensorError> {
    info.insert(
        KEY.to_string(),
        record(tensors.iter().map(|(name, t)| (*name, t.data()))),
    );
    safetensors::serialize(tensors, Some(info))
}

/// Checks every tensor of `st` against the checksums in its metadata `info`.
/// [`Integrity::NoChecksum`] when `info` has no [`KEY`]; whether that is acceptable is the
/// format's decision.
pub fn verify(
    st: &SafeTensors<'_>,
    info: Option<&HashMap<String, String>>,
) -> Result<Integrity, ChecksumError> {
    match recorded(info)? {
        None => Ok(Integrity::NoChecksum),
        Some(recorded) => compare(st, recorded, &HashMap::new()).map(|()| Integrity::Verified),
    }
}

/// The checksums metadata `info` records, by tensor name; `None` when it records none.
pub fn recorded(
    info: Option<&HashMap<String, String>>,
) -> Result<Option<HashMap<String, u32>>, ChecksumError> {
    let Some(text) = info.and_then(|m| m.get(KEY)) else {
        return Ok(None);
    };
    let malformed = |reason: String| ChecksumError::Malformed { reason };
    let hex: HashMap<String, String> =
        serde_json::from_str(text).map_err(|e| malformed(e.to_string()))?;
    hex.into_iter()
        .map(|(name, hex)| {
            let crc = (hex.len() == 8)
                .then(|| u32::from_str_radix(&hex, 16).ok())
                .flatten()
                .ok_or_else(|| malformed(format!("`{name}`: {hex:?}")))?;
            Ok((name, crc))
        })
        .collect::<Result<_, _>>()
        .map(Some)
}

/// Checks every tensor of `st` against `recorded`, taking the CRC-32 of a tensor from
/// `computed` where the caller has it already (computed while decoding, when the bytes were
/// in cache) and computing the others.
pub fn compare(
    st: &SafeTensors<'_>,
    mut recorded: HashMap<String, u32>,
    computed: &HashMap<&str, u32>,
) -> Result<(), ChecksumError> {
    // In file order, so that of several damaged tensors the first is named.
    let mut tensors: Vec<_> = st.iter().collect();
    tensors.sort_by_key(|(_, t)| t.data().as_ptr() as usize);
    for (name, t) in tensors {
        let recorded = recorded
            .remove(name)
            .ok_or_else(|| ChecksumError::Missing {
                tensor: name.to_string(),
            })?;
        let actual = computed
            .get(name)
            .copied()
            .unwrap_or_else(|| crc32(t.data()));
        if actual != recorded {
            return Err(ChecksumError::Mismatch {
                tensor: name.to_string(),
                recorded,
                actual,
            });
        }
    }
    match recorded.into_keys().min() {
        Some(tensor) => Err(ChecksumError::Unknown { tensor }),
        None => Ok(()),
    }
}

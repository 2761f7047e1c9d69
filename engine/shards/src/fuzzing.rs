//! The body of the `shard` fuzz target, here so the stable test suite runs the same checks over
//! the fuzz corpus (`fuzz/corpus/shard/`, in `tests/fuzz_corpus.rs`).

use std::path::Path;

use safetensors::SafeTensors;

use crate::{checksum, Integrity, Shard, ShardMeta};

/// Reads `data` as a shard file and checks, without ever panicking on bad bytes, that: the
/// header reader and the full reader agree on what they both accept; a shard that reads holds
/// tensors that pass the checksums it records (or records none, version 1); written again, it
/// reads back equal and verified.
pub fn check_bytes(data: &[u8]) {
    let path = Path::new("fuzz.safetensors");
    let header = ShardMeta::read_from(&mut &data[..], data.len() as u64, path);
    let Ok((shard, integrity)) = Shard::from_bytes_checked(data, path) else {
        return;
    };
    let (meta, positions) = header.expect("a shard that reads has a header that reads");
    assert_eq!(meta, shard.meta, "header and shard disagree");
    assert_eq!(positions, shard.samples.len(), "header and shard disagree");
    let (_, header) = SafeTensors::read_metadata(data).expect("a shard is safetensors");
    let st = SafeTensors::deserialize(data).expect("a shard is safetensors");
    assert_eq!(
        checksum::verify(&st, header.metadata().as_ref()),
        Ok(integrity),
        "an accepted shard's checksums"
    );
    let bytes = shard.to_bytes().expect("a shard that reads writes");
    let (again, integrity) = Shard::from_bytes_checked(&bytes, path).expect("own bytes read");
    assert_eq!(integrity, Integrity::Verified);
    assert_eq!(again.meta, shard.meta);
    assert_eq!(again.samples, shard.samples);
    assert_eq!(again.symmetries, shard.symmetries);
}

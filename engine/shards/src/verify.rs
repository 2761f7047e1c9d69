//! Checking files after a copy (`engine shards verify`): every shard in full (checksums, then
//! numbers), and any other safetensors file (trainer-bridge's checkpoints) against the
//! checksums it records.

use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};

use safetensors::tensor::SafeTensors;

use crate::checksum::{self, Integrity};
use crate::{Shard, ShardError, EXTENSION, FORMAT};

/// What a checked file is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A shard, or a file too damaged to say (a truncated shard looks like any broken file).
    Shard,
    /// Another safetensors file: its `format` metadata, if it has one.
    Other(Option<String>),
}

/// One file and what checking it found.
#[derive(Debug)]
pub struct FileCheck {
    pub path: PathBuf,
    pub kind: Kind,
    pub result: Result<Integrity, ShardError>,
}

/// The counts `engine shards verify` ends with.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    pub shards: usize,
    /// Files of other formats (checkpoints).
    pub others: usize,
    /// Files that failed.
    pub bad: usize,
    /// Good files that record no checksums, so whose bytes could not be checked.
    pub unchecked: usize,
}

impl fmt::Display for Summary {
    /// `N shards checked, B bad`, with the other files and the unchecked ones when there are.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let plural =
            |n: usize, one: &'static str, many: &'static str| if n == 1 { one } else { many };
        write!(
            f,
            "{} {}",
            self.shards,
            plural(self.shards, "shard", "shards")
        )?;
        if self.others > 0 {
            write!(
                f,
                " and {} other {}",
                self.others,
                plural(self.others, "file", "files")
            )?;
        }
        write!(f, " checked, {} bad", self.bad)?;
        if self.unchecked > 0 {
            write!(
                f,
                "; {} without checksums (their bytes could not be checked)",
                self.unchecked
            )?;
        }
        Ok(())
    }
}

/// The files `paths` name: a file as given, a directory's finished `.safetensors` files at any
/// depth (hidden entries and temporary files of unfinished writes left out), sorted by path.
/// A path that cannot be listed is an error.
pub fn files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, ShardError> {
    let mut out = Vec::new();
    for path in paths {
        let meta = fs::metadata(path).map_err(|error| ShardError::Io {
            path: path.clone(),
            error,
        })?;
        if meta.is_dir() {
            let start = out.len();
            walk(path, &mut out)?;
            out[start..].sort();
        } else {
            out.push(path.clone());
        }
    }
    Ok(out)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), ShardError> {
    let io = |error| ShardError::Io {
        path: dir.into(),
        error,
    };
    for entry in fs::read_dir(dir).map_err(io)? {
        let path = entry.map_err(io)?.path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or(".");
        if name.starts_with('.') {
            continue;
        }
        if path.is_dir() {
            walk(&path, out)?;
        } else if path.extension().and_then(|e| e.to_str()) == Some(EXTENSION) {
            out.push(path);
        }
    }
    Ok(())
}

/// Checks one file: a shard is read in full ([`Shard::from_bytes_checked`]); any other
/// safetensors file must parse and match the checksums it records.
pub fn check_file(path: &Path) -> FileCheck {
    let check = |kind, result| FileCheck {
        path: path.into(),
        kind,
        result,
    };
    let bytes = match fs::read(path) {
        Ok(b) => b,
        Err(error) => {
            let error = ShardError::Io {
                path: path.into(),
                error,
            };
            return check(Kind::Shard, Err(error));
        }
    };
    let corrupt = |reason: String| ShardError::Corrupt {
        path: path.into(),
        reason,
    };
    let st = match SafeTensors::deserialize(&bytes) {
        Ok(st) => st,
        Err(e) => return check(Kind::Shard, Err(corrupt(e.to_string()))),
    };
    let (_, header) = SafeTensors::read_metadata(&bytes).expect("deserialize read it");
    let info = header.metadata().as_ref();
    let format = info.and_then(|m| m.get("format")).cloned();
    if format.as_deref() == Some(FORMAT) {
        let result = Shard::from_bytes_checked(&bytes, path).map(|(_, integrity)| integrity);
        return check(Kind::Shard, result);
    }
    let result = checksum::verify(&st, info).map_err(|reason| ShardError::Checksum {
        path: path.into(),
        reason,
    });
    check(Kind::Other(format), result)
}

/// Checks every file `paths` name ([`files`]), calling `on_file` with each result in order
/// (an error it returns stops the check); the counts at the end. A bad file is a result, not
/// an error: only a path that cannot be listed is one.
pub fn verify_paths<E: From<ShardError>>(
    paths: &[PathBuf],
    mut on_file: impl FnMut(&FileCheck) -> Result<(), E>,
) -> Result<Summary, E> {
    let mut summary = Summary::default();
    for path in files(paths)? {
        let check = check_file(&path);
        match check.kind {
            Kind::Shard => summary.shards += 1,
            Kind::Other(_) => summary.others += 1,
        }
        match check.result {
            Ok(Integrity::Verified) => {}
            Ok(Integrity::NoChecksum) => summary.unchecked += 1,
            Err(_) => summary.bad += 1,
        }
        on_file(&check)?;
    }
    Ok(summary)
}

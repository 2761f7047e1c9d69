//! Game records into shards: every position of a game's main line becomes a sample whose policy
//! is the move played and whose value is the recorded result.

use std::collections::HashSet;
use std::fmt::Write as _;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use games::{Encoding, GameRecord, RecordError};
use shards::{Aux, Sample, ShardError};

use crate::writer::ShardWriter;

/// How `import` and `import_files` work and where they write.
#[derive(Clone, Debug)]
pub struct ImportOptions {
    /// The shard directory (created if missing).
    pub out: PathBuf,
    /// Positions per shard, at least 1.
    pub positions_per_shard: usize,
    /// Print one line per game (`FILE#K moves=N result=R final=POSITION`) as it is read.
    pub list: bool,
    /// Stop at the first file or game that cannot be read, writing nothing.
    pub strict: bool,
    /// The file-name ending (no dot, any case) of record files found in directories: `sgf`.
    /// Files named directly are read whatever their name.
    pub extension: String,
    /// Recorded as each shard's `model` metadata: who played the games.
    pub model: String,
    /// Recorded as each shard's `config` metadata (the configuration's YAML text).
    pub config: String,
    /// Reads a file that is not UTF-8 (Xiangqi PGN: GBK, as Chinese GUIs write it); `None`:
    /// such a file is unreadable.
    pub legacy_text: Option<fn(&[u8]) -> String>,
}

impl ImportOptions {
    /// Options with the defaults: 2048 positions a shard (as self-play writes), no listing,
    /// bad games skipped, `model` metadata `records`.
    pub fn new(out: impl Into<PathBuf>, extension: &str) -> ImportOptions {
        ImportOptions {
            out: out.into(),
            positions_per_shard: 2048,
            list: false,
            strict: false,
            extension: extension.to_string(),
            model: "records".into(),
            config: String::new(),
            legacy_text: None,
        }
    }
}

/// What an import did. Games are imported, skipped for a reason, or bad.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ImportSummary {
    /// Record files read (unreadable ones included).
    pub files: usize,
    /// Games whose positions went into shards.
    pub games: usize,
    pub positions: usize,
    /// Games skipped because the record gives no result (`RE` missing, `Void`, `?`): without
    /// one there is no value target.
    pub no_result: usize,
    /// Games skipped because their board is not the network's.
    pub other_shape: usize,
    /// Games that cannot be read or replayed.
    pub bad_games: usize,
    /// Files that cannot be read at all (not UTF-8, an I/O error): their games are not counted.
    pub bad_files: usize,
    /// The shards written, in order.
    pub shards: Vec<PathBuf>,
}

impl ImportSummary {
    /// Games left out of training, for whatever reason.
    pub fn skipped(&self) -> usize {
        self.no_result + self.other_shape + self.bad_games
    }

    /// The closing line of a report: `imported G games, P positions; skipped S games`, then why
    /// they were skipped and how many files could not be read, when any.
    pub fn line(&self) -> String {
        let mut s = format!(
            "imported {} games, {} positions; skipped {} games",
            self.games,
            self.positions,
            self.skipped()
        );
        let reasons: Vec<String> = [
            (self.no_result, "without a result"),
            (self.other_shape, "of another board size"),
            (self.bad_games, "unreadable"),
        ]
        .into_iter()
        .filter(|&(n, _)| n > 0)
        .map(|(n, why)| format!("{n} {why}"))
        .collect();
        if !reasons.is_empty() {
            write!(s, " ({})", reasons.join(", ")).unwrap();
        }
        if self.bad_files > 0 {
            write!(s, "; {} files unreadable", self.bad_files).unwrap();
        }
        s
    }
}

/// Why an import stopped. Every variant ends the run; the CLI exits with status 2.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("invalid option: {0}")]
    Options(String),
    #[error("{path}: {error}")]
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
    /// Other text encodings are not guessed: a wrong guess would read wrong moves.
    #[error("{path}: not UTF-8 text (first bad byte at offset {offset})")]
    NotUtf8 { path: PathBuf, offset: usize },
    /// With `strict`: the first game that cannot be read or replayed.
    #[error("{path}: {error}")]
    BadGame { path: PathBuf, error: RecordError },
    #[error("no .{extension} files in the given paths")]
    NoFiles { extension: String },
    #[error(transparent)]
    Shard(#[from] ShardError),
    #[error("cannot write the report: {0}")]
    Report(#[source] std::io::Error),
}

/// The record files under `paths`: files as given, directories walked recursively (entries in
/// name order, hidden ones and symbolic links to directories left out) for files ending in
/// `.extension` in any case. A file reached twice is listed once.
pub fn record_files(paths: &[PathBuf], extension: &str) -> Result<Vec<PathBuf>, ImportError> {
    let mut files = Vec::new();
    let mut seen = HashSet::new();
    for path in paths {
        let meta = fs::metadata(path).map_err(|error| ImportError::Io {
            path: path.clone(),
            error,
        })?;
        if meta.is_dir() {
            walk(path, extension, &mut files, &mut seen)?;
        } else if seen.insert(fs::canonicalize(path).unwrap_or_else(|_| path.clone())) {
            files.push(path.clone());
        }
    }
    Ok(files)
}

fn walk(
    dir: &Path,
    extension: &str,
    files: &mut Vec<PathBuf>,
    seen: &mut HashSet<PathBuf>,
) -> Result<(), ImportError> {
    let io = |path: &Path, error| ImportError::Io {
        path: path.to_owned(),
        error,
    };
    let mut entries = Vec::new();
    for entry in fs::read_dir(dir).map_err(|e| io(dir, e))? {
        let entry = entry.map_err(|e| io(dir, e))?;
        if entry.file_name().to_string_lossy().starts_with('.') {
            continue;
        }
        entries.push(entry);
    }
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let path = entry.path();
        let kind = entry.file_type().map_err(|e| io(&path, e))?;
        if kind.is_dir() {
            walk(&path, extension, files, seen)?;
        } else if (kind.is_file() || (kind.is_symlink() && path.is_file()))
            && path
                .extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| e.eq_ignore_ascii_case(extension))
            && seen.insert(fs::canonicalize(&path).unwrap_or_else(|_| path.clone()))
        {
            files.push(path);
        }
    }
    Ok(())
}

/// The shard name stem of an import of `sources`: the same sources give the same stem, so a
/// second import of them replaces the first one's shards. The run of zeros in place of the time
/// stamp that self-play names start with sorts imported shards as the oldest: a replay window
/// keeps them until enough self-play has been written.
pub fn import_stem(sources: &[String]) -> String {
    // FNV-1a: stable across builds and platforms, unlike std's hasher.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for s in sources {
        for b in s.bytes().chain([0]) {
            h ^= b as u64;
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    format!("{:013}-import-{h:016x}", 0)
}

/// The training samples of one game: each position of the main line, encoded from its mover's
/// point of view, with the move played as the whole policy and the recorded result from the
/// mover's point of view as the value. `None` when the record gives no result.
///
/// Auxiliary targets: the reply is the opponent's next move ([`shards::reply_ply`]), as the
/// whole of its policy; the ownership and score are those of the last position from the
/// mover's side, where that position ends the game by the rules with the recorded result
/// (not after a resignation or a time loss, nor where dead stones left on a Go board would
/// make the area count disagree with the record).
pub fn record_samples<G: Encoding>(record: &GameRecord<G>) -> Option<Vec<Sample>> {
    let outcome = record.result?;
    let input_len = record.start.shape().input_len();
    let last = record.final_state();
    let ended = last.outcome() == Some(outcome);
    let (positions, policies): (Vec<G>, Vec<(u16, f32)>) = record
        .positions()
        .map(|(state, action)| {
            let policy = (state.action_index(action) as u16, 1.0);
            (state, policy)
        })
        .unzip();
    let movers: Vec<_> = positions.iter().map(|s| s.to_act()).collect();
    Some(
        positions
            .iter()
            .enumerate()
            .map(|(ply, state)| {
                let mut planes = vec![0.0; input_len];
                state.encode(&mut planes);
                let mover = state.to_act();
                Sample {
                    planes,
                    policy: vec![policies[ply]],
                    value: outcome.value_for(mover),
                    aux: Aux {
                        ownership: last.final_ownership(mover).filter(|_| ended),
                        score: last.final_score(mover).filter(|_| ended),
                        reply: shards::reply_ply(&movers, ply).map(|k| vec![policies[k]]),
                        surprise: None,
                    },
                }
            })
            .collect(),
    )
}

/// One import run: the writer, the tally and the report.
struct Run<'a, G: Encoding> {
    network: &'a G,
    opts: &'a ImportOptions,
    writer: ShardWriter,
    summary: ImportSummary,
    out: &'a mut dyn Write,
}

impl<'a, G: Encoding> Run<'a, G> {
    fn new(
        network: &'a G,
        stem: &str,
        opts: &'a ImportOptions,
        out: &'a mut dyn Write,
    ) -> Result<Self, ImportError> {
        if opts.positions_per_shard == 0 {
            return Err(ImportError::Options(
                "positions per shard must be at least 1".into(),
            ));
        }
        if opts.out.exists() && !opts.out.is_dir() {
            return Err(ImportError::Io {
                path: opts.out.clone(),
                error: std::io::Error::other("exists and is not a directory"),
            });
        }
        let writer = ShardWriter::new(
            network,
            &opts.out,
            stem,
            &opts.model,
            &opts.config,
            opts.positions_per_shard,
        )?;
        Ok(Run {
            network,
            opts,
            writer,
            summary: ImportSummary::default(),
            out,
        })
    }

    fn say(&mut self, line: std::fmt::Arguments) -> Result<(), ImportError> {
        writeln!(self.out, "{line}").map_err(ImportError::Report)
    }

    /// Game number `k` of `source`.
    fn entry(
        &mut self,
        source: &str,
        k: usize,
        entry: Result<GameRecord<G>, RecordError>,
    ) -> Result<(), ImportError> {
        match entry {
            Ok(record) => self.record(&format!("{source}#{k}"), record),
            Err(error) => {
                self.summary.bad_games += 1;
                self.say(format_args!("{source}: {error}"))
            }
        }
    }

    fn record(&mut self, label: &str, record: GameRecord<G>) -> Result<(), ImportError> {
        if self.opts.list {
            let result = record.result_text.as_deref().unwrap_or("?");
            let line = format!(
                "{label} moves={} result={} final={}",
                record.actions.len(),
                if result.is_empty() { "?" } else { result },
                record.final_state().to_text()
            );
            self.say(format_args!("{line}"))?;
        }
        let (shape, want) = (record.start.shape(), self.network.shape());
        if shape != want {
            self.summary.other_shape += 1;
            return self.say(format_args!(
                "{label}: skipped: its board is {}x{}, the network's is {}x{}",
                shape.height, shape.width, want.height, want.width
            ));
        }
        let Some(samples) = record_samples(&record) else {
            self.summary.no_result += 1;
            return Ok(());
        };
        self.summary.games += 1;
        self.summary.positions += samples.len();
        self.writer.add_game(samples)?;
        Ok(())
    }

    fn finish(self) -> Result<ImportSummary, ImportError> {
        let Run {
            opts,
            writer,
            mut summary,
            out,
            ..
        } = self;
        summary.shards = writer.finish()?;
        writeln!(
            out,
            "wrote {} shards to {}\n{}",
            summary.shards.len(),
            opts.out.display(),
            summary.line()
        )
        .map_err(ImportError::Report)?;
        Ok(summary)
    }
}

/// Imports records held in memory, named `source` in the report (`SOURCE#K` for game K) and in
/// the shard names (see [`import_stem`]). `network` is a state of the configured variant: games
/// of another shape are skipped, and its symmetries go into the shards. With `strict`, the first
/// bad game is returned as an error before anything is written.
pub fn import<G: Encoding>(
    records: Vec<Result<GameRecord<G>, RecordError>>,
    source: &str,
    network: &G,
    opts: &ImportOptions,
    out: &mut dyn Write,
) -> Result<ImportSummary, ImportError> {
    if opts.strict {
        if let Some(Err(error)) = records.iter().find(|r| r.is_err()) {
            return Err(ImportError::BadGame {
                path: source.into(),
                error: error.clone(),
            });
        }
    }
    let mut run = Run::new(network, &import_stem(&[source.into()]), opts, out)?;
    run.summary.files = 1;
    for (i, entry) in records.into_iter().enumerate() {
        run.entry(source, i + 1, entry)?;
    }
    run.finish()
}

/// The text of a record file, or why it has none.
fn read_text(path: &Path, legacy: Option<fn(&[u8]) -> String>) -> Result<String, ImportError> {
    let bytes = fs::read(path).map_err(|error| ImportError::Io {
        path: path.to_owned(),
        error,
    })?;
    match (String::from_utf8(bytes), legacy) {
        (Ok(text), _) => Ok(text),
        (Err(e), Some(decode)) => Ok(decode(e.as_bytes())),
        (Err(e), None) => Err(ImportError::NotUtf8 {
            path: path.to_owned(),
            offset: e.utf8_error().valid_up_to(),
        }),
    }
}

/// Imports the record files under `paths` (see [`record_files`]) into shards in `opts.out`,
/// reading each file's games with `read` (one entry per game, such as
/// `games::go::sgf::read_records`). `network` is a state of the configured variant: games of
/// another shape are skipped with a line saying so, and its symmetries go into the shards.
///
/// Writes to `out`: with `list`, `FILE#K moves=N result=R final=POSITION` for each game read
/// (`R` is `?` when the record gives none); a line for each bad game or file (`FILE: game K,
/// move M: reason`) and each game of another size; then `wrote N shards to DIR` and
/// [`ImportSummary::line`]. Games without a result are skipped and counted in that last line.
///
/// Without `strict`, bad games and unreadable files are reported and skipped; with it, the
/// first one is returned as an error and nothing is written. Shards are named by
/// [`import_stem`] of the files' canonical paths, so importing the same files again into the
/// same directory replaces the earlier shards instead of adding to them.
pub fn import_files<G: Encoding>(
    paths: &[PathBuf],
    read: impl Fn(&str) -> Vec<Result<GameRecord<G>, RecordError>>,
    network: &G,
    opts: &ImportOptions,
    out: &mut dyn Write,
) -> Result<ImportSummary, ImportError> {
    let files = record_files(paths, &opts.extension)?;
    if files.is_empty() {
        return Err(ImportError::NoFiles {
            extension: opts.extension.clone(),
        });
    }
    if opts.strict {
        // Everything is read once before anything is written, so a bad game leaves no shards.
        for path in &files {
            for entry in read(&read_text(path, opts.legacy_text)?) {
                if let Err(error) = entry {
                    return Err(ImportError::BadGame {
                        path: path.clone(),
                        error,
                    });
                }
            }
        }
    }
    let sources: Vec<String> = files
        .iter()
        .map(|p| {
            fs::canonicalize(p)
                .unwrap_or_else(|_| p.clone())
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    let mut run = Run::new(network, &import_stem(&sources), opts, out)?;
    for path in &files {
        run.summary.files += 1;
        let name = path.display().to_string();
        let text = match read_text(path, opts.legacy_text) {
            Ok(text) => text,
            Err(e) if !opts.strict => {
                run.summary.bad_files += 1;
                run.say(format_args!("{e}"))?;
                continue;
            }
            Err(e) => return Err(e),
        };
        for (i, entry) in read(&text).into_iter().enumerate() {
            run.entry(&name, i + 1, entry)?;
        }
    }
    run.finish()
}

//! Training shards from what others know: game records that people and other programs wrote.
//!
//! [`import_files`] reads record files (SGF for Go, through the game's own reader), replays each
//! game's main line and writes one sample per position into shards of the format `shards`
//! owns, so `trainer-bridge fit` learns from them as from self-play:
//! - the policy target is the move played, a single sparse entry of probability 1;
//! - the value target is the recorded result from the mover's point of view (1, 0, −1). A game
//!   whose record gives no result (missing, `Void`, `?`) has no value target and is skipped;
//!   the closing line counts it;
//! - games on another board than the configured network's are skipped with a line saying so.
//!
//! Shards are written to a temporary name and renamed, and are named from the imported files
//! (see [`import_stem`]): importing the same files again replaces the same shards. Imported
//! shards sort before every self-play shard, as the oldest data.
//!
//! [`ShardWriter`] is the part that knows nothing of records: numbered shards of one stem.

pub mod bootstrap;
mod games;
pub mod gtp_teacher;
mod import;
pub mod teacher;
pub mod uci_teacher;
mod writer;

pub use games::Learnable;
pub use import::{
    import, import_files, import_stem, record_files, record_samples, ImportError, ImportOptions,
    ImportSummary,
};
pub use writer::ShardWriter;

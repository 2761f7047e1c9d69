//! Alpha-beta searchers: Xiangqi's ([`xiangqi`]) and Liuzhou's ([`liuzhou`]), over what they
//! share ([`core`]: their limits, the budget that stops a search, the transposition table, the
//! agent around a searcher).

pub mod core;
pub mod liuzhou;
pub mod xiangqi;

pub use self::core::{HashError, SearchLimits, DEFAULT_HASH_MB, MAX_HASH_MB, MAX_PLY};

//! Who chooses moves, and how they are named.
//!
//! - [`spec`]: the one grammar that names a player (`random`, `mcts:visits=800`,
//!   `net:model=…,visits=200`, `alphabeta:depth=6`, `uci:cmd=…`, `gtp:cmd=…`) and the one
//!   builder every face uses, so a spec plays the same in a match, over GTP or UCI and on the
//!   web page.
//! - [`driven`]: the searches a protocol drives move by move (UCI/UCCI's limits, `stop`,
//!   progress); [`timing`]: the time a clock gives a move; [`guard`] and [`handoff`]:
//!   alpha-beta beside a tree search.
//! - Classical and external players: the [`alphabeta`] searchers of Xiangqi
//!   ([`alphabeta::xiangqi`]) and Liuzhou ([`alphabeta::liuzhou`], named by [`liuzhou`]), which
//!   share their limits, budget and table in [`alphabeta::core`]; other programs as child
//!   processes ([`process`]) under the GTP ([`gtp_client`]; Liuzhou's dialect:
//!   [`gtp_client::liuzhou`]) and UCI ([`uci_client`]) clients;
//!   Fairy-Stockfish as a rules oracle ([`fairy`]).
//! - [`matchplay`]: matches between agents, colours alternating, in parallel, with their records
//!   and forfeits ([`matchplay::MatchLog`]); [`ladder`]: their ratings; [`levels`]: named
//!   strength levels with their Elo, measured by [`calibration`].
//!
//! Nothing below this crate starts a process.

pub mod alphabeta;
pub mod calibration;
pub mod driven;
pub mod fairy;
pub mod go;
pub mod gtp_client;
pub mod guard;
pub mod handoff;
pub mod ladder;
pub mod levels;
pub mod liuzhou;
pub mod matchplay;
pub mod process;
pub mod spec;
pub mod timing;
pub mod uci_client;
pub mod xiangqi;

//! What people and other programs talk to, as a library: the terminal ([`terminal`]), GTP
//! ([`gtp`]: Go's and Liuzhou's dialects over one framing and one clock),
//! UCI/UCCI for Xiangqi ([`uci`]) and the web page with its JSON API ([`web`]),
//! over one [`session::Match`] (a person against the engine), and what a search found in one
//! position as a table or JSON ([`analysis`]). Each face parses its protocol and hands every
//! decision to an agent built by `players::spec`; no face searches by itself.

// First, so its macros (`outln!`, `out!`) are seen by the modules below.
#[macro_use]
pub mod out;

pub mod analysis;
pub mod fuzzing;
pub mod gtp;
pub mod session;
pub mod terminal;
pub mod uci;
pub mod web;

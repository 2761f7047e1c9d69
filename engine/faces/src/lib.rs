//! What people and other programs talk to, as a library: the terminal ([`terminal`]), GTP for
//! Go ([`gtp`]) and its Liuzhou dialect ([`gtp_liuzhou`]) over one framing ([`gtp_frame`]),
//! UCI/UCCI for Xiangqi ([`uci`]) and the web page with its JSON API ([`web`]),
//! over one [`session::Match`] (a person against the engine), and what a search found in one
//! position as a table or JSON ([`analysis`]). Each face parses its protocol and hands every
//! decision to an agent built by `players::spec`; no face searches by itself.

// First, so its macros (`outln!`, `out!`) are seen by the modules below.
#[macro_use]
pub mod out;

pub mod analysis;
pub mod clock;
pub mod fuzzing;
pub mod gtp;
pub mod gtp_frame;
pub mod gtp_liuzhou;
pub mod session;
pub mod terminal;
pub mod uci;
pub mod web;

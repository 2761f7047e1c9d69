//! The Go Text Protocol, version 2: one framing ([`frame`]) and one clock ([`clock`]) under
//! two dialects, Go's ([`go`]) and Liuzhou's ([`liuzhou`]).

pub mod clock;
pub mod frame;
pub mod go;
pub mod liuzhou;

pub use frame::serve_stdio;

//! Standard output for the subcommands. `println!` panics when the reader has gone
//! (`engine perft … | head`); these return [`StdoutClosed`] instead, which `main` turns into a
//! quiet, successful exit: the reader asked for no more.

use std::fmt;
use std::io::{self, Write};

/// The reader of stdout closed it (a broken pipe).
#[derive(Debug, thiserror::Error)]
#[error("stdout was closed")]
pub struct StdoutClosed;

/// Writes `args` to stdout and flushes, so a prompt shows before the program waits.
pub fn write(args: fmt::Arguments) -> anyhow::Result<()> {
    let mut out = io::stdout().lock();
    out.write_fmt(args)
        .and_then(|()| out.flush())
        .map_err(stdout_error)
}

/// Writes `args` and a line break to stdout.
pub fn write_line(args: fmt::Arguments) -> anyhow::Result<()> {
    let mut out = io::stdout().lock();
    out.write_fmt(args)
        .and_then(|()| out.write_all(b"\n"))
        .map_err(stdout_error)
}

/// A failed write to stdout as an error: [`StdoutClosed`] for a broken pipe.
pub fn stdout_error(e: io::Error) -> anyhow::Error {
    if e.kind() == io::ErrorKind::BrokenPipe {
        anyhow::Error::new(StdoutClosed)
    } else {
        anyhow::Error::new(e).context("writing to stdout")
    }
}

/// Whether `e` ends the program because stdout was closed.
pub fn is_closed(e: &anyhow::Error) -> bool {
    e.chain().any(|c| c.is::<StdoutClosed>())
}

/// `println!` that returns an error instead of panicking (see the module docs).
#[macro_export]
macro_rules! outln {
    () => {
        $crate::out::write_line(format_args!(""))
    };
    ($($arg:tt)*) => {
        $crate::out::write_line(format_args!($($arg)*))
    };
}

/// `print!` and a flush, returning an error instead of panicking.
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::out::write(format_args!($($arg)*))
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_broken_pipe_is_told_apart_from_other_failures() {
        let closed = stdout_error(io::Error::from(io::ErrorKind::BrokenPipe));
        assert!(is_closed(&closed.context("perft")));
        let full = stdout_error(io::Error::from(io::ErrorKind::StorageFull));
        assert!(!is_closed(&full));
        assert!(
            format!("{full:#}").contains("writing to stdout"),
            "{full:#}"
        );
    }
}

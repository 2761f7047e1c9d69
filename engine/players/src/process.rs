//! Another program as a child process that speaks a line protocol (GTP, UCI): the one place
//! that starts it, writes its lines, reads its answers with a deadline, and ends it.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// Why talking to the child failed.
#[derive(Debug, thiserror::Error)]
pub enum ProcessError {
    #[error("empty command line")]
    EmptyCommand,
    #[error("cannot start `{command}`: {source}")]
    Spawn {
        command: String,
        source: std::io::Error,
    },
    #[error("`{command}`: pipe error: {source}")]
    Io {
        command: String,
        source: std::io::Error,
    },
    #[error("`{command}` closed its output")]
    Closed { command: String },
    #[error("`{command}` gave no answer within {after:?} (stopped)")]
    Timeout { command: String, after: Duration },
}

/// A running child: its stdin, and its stdout as lines read by a thread of their own so that a
/// wait can time out. Dropping it asks the child to quit, then kills it.
pub struct ChildProcess {
    command: String,
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<std::io::Result<String>>,
    /// The line that asks the program to exit (`quit` in GTP and UCI).
    quit: &'static str,
}

impl ChildProcess {
    /// Starts `argv[0]` with the rest as arguments (no shell); stderr is discarded. A program
    /// named without a `/` is looked for on the `PATH`, then in `/usr/games` (where Debian
    /// puts `gnugo` and `fairy-stockfish`).
    pub fn spawn(argv: &[String]) -> Result<ChildProcess, ProcessError> {
        let command = argv.join(" ");
        let program = argv.first().ok_or(ProcessError::EmptyCommand)?;
        let mut child = Command::new(find_program(program))
            .args(&argv[1..])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|source| ProcessError::Spawn {
                command: command.clone(),
                source,
            })?;
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = BufReader::new(child.stdout.take().expect("piped stdout"));
        let (tx, lines) = mpsc::channel();
        // Ends at the child's end of output, or when nobody listens any more.
        std::thread::spawn(move || {
            for line in byte_lines(stdout) {
                let end = line.is_err();
                if tx.send(line).is_err() || end {
                    break;
                }
            }
        });
        Ok(ChildProcess {
            command,
            child,
            stdin,
            lines,
            quit: "quit",
        })
    }

    /// Starts a command line split on whitespace (program then arguments; no shell quoting).
    pub fn spawn_line(command_line: &str) -> Result<ChildProcess, ProcessError> {
        let argv: Vec<String> = command_line.split_whitespace().map(String::from).collect();
        ChildProcess::spawn(&argv)
    }

    /// The command line it was started with.
    pub fn command(&self) -> &str {
        &self.command
    }

    /// The child's process id.
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// Writes one line.
    pub fn send(&mut self, line: &str) -> Result<(), ProcessError> {
        writeln!(self.stdin, "{line}")
            .and_then(|_| self.stdin.flush())
            .map_err(|source| ProcessError::Io {
                command: self.command.clone(),
                source,
            })
    }

    /// The next line of output (without its line ending), waiting until `deadline`. A child
    /// that misses it is killed: its late answer would be taken for the next request's.
    pub fn read_line(&mut self, deadline: Instant) -> Result<String, ProcessError> {
        let left = deadline.saturating_duration_since(Instant::now());
        match self.lines.recv_timeout(left) {
            Ok(Ok(line)) => Ok(line.trim_end_matches('\r').to_string()),
            Ok(Err(source)) => Err(ProcessError::Io {
                command: self.command.clone(),
                source,
            }),
            Err(RecvTimeoutError::Disconnected) => Err(ProcessError::Closed {
                command: self.command.clone(),
            }),
            Err(RecvTimeoutError::Timeout) => {
                let _ = self.child.kill();
                Err(ProcessError::Timeout {
                    command: self.command.clone(),
                    after: left,
                })
            }
        }
    }

    /// Reads lines until one satisfies `done`; returns every line read, that one last.
    pub fn read_until(
        &mut self,
        timeout: Duration,
        done: impl Fn(&str) -> bool,
    ) -> Result<Vec<String>, ProcessError> {
        let deadline = Instant::now() + timeout;
        let mut lines = Vec::new();
        loop {
            let line = self.read_line(deadline)?;
            let stop = done(line.trim());
            lines.push(line);
            if stop {
                return Ok(lines);
            }
        }
    }
}

/// Where `name` is run from: itself when it holds a `/`, else the first match on the `PATH`,
/// then in `/usr/games`; unchanged when none is found (starting it then says so).
pub fn find_program(name: &str) -> PathBuf {
    if name.contains('/') {
        return PathBuf::from(name);
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/games")])
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
        .unwrap_or_else(|| PathBuf::from(name))
}

/// Lines as bytes, decoded leniently: a program that writes a stray non-UTF-8 byte (a name in
/// a local encoding) must not end the conversation.
fn byte_lines(mut reader: impl BufRead) -> impl Iterator<Item = std::io::Result<String>> {
    let mut buf = Vec::new();
    std::iter::from_fn(move || {
        buf.clear();
        match reader.read_until(b'\n', &mut buf) {
            Ok(0) => None,
            Ok(_) => {
                if buf.last() == Some(&b'\n') {
                    buf.pop();
                }
                Some(Ok(String::from_utf8_lossy(&buf).into_owned()))
            }
            Err(e) => Some(Err(e)),
        }
    })
}

impl Drop for ChildProcess {
    fn drop(&mut self) {
        // Ask politely, then make sure the child does not outlive us.
        let _ = writeln!(self.stdin, "{}", self.quit);
        let _ = self.stdin.flush();
        for _ in 0..50 {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn reads_lines_and_times_out_on_a_silent_child() {
        let mut p = ChildProcess::spawn_line("cat").unwrap();
        p.send("hello").unwrap();
        let got = p
            .read_until(Duration::from_secs(5), |l| l == "hello")
            .unwrap();
        assert_eq!(got, ["hello"]);
        let e = p
            .read_line(Instant::now() + Duration::from_millis(50))
            .unwrap_err();
        assert!(matches!(e, ProcessError::Timeout { .. }), "{e}");
    }

    #[test]
    fn programs_are_found_on_the_path_and_in_usr_games() {
        let sh = find_program("sh");
        assert!(sh.is_absolute() && sh.is_file(), "{}", sh.display());
        assert_eq!(find_program("./x/y"), PathBuf::from("./x/y"));
        assert_eq!(
            find_program("no-such-program"),
            PathBuf::from("no-such-program")
        );
        if Path::new("/usr/games/gnugo").is_file() && !on_path("gnugo") {
            assert_eq!(find_program("gnugo"), PathBuf::from("/usr/games/gnugo"));
        }
    }

    fn on_path(name: &str) -> bool {
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
            .any(|d| d.join(name).is_file())
    }

    #[test]
    fn a_missing_program_is_a_spawn_error() {
        let e = ChildProcess::spawn_line("/nonexistent/program")
            .err()
            .unwrap();
        assert!(matches!(e, ProcessError::Spawn { .. }), "{e}");
        assert!(matches!(
            ChildProcess::spawn_line("  ").err().unwrap(),
            ProcessError::EmptyCommand
        ));
    }
}

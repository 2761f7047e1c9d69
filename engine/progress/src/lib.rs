//! The progress of a long job (self-play, a match, a fit, a teacher's games) on stderr: a bar
//! that redraws itself when stderr is a terminal; elsewhere (a log file, a pipe, CI) one plain
//! line every [`PLAIN_EVERY`], since redraws would be noise there and a bar hidden altogether
//! would leave a long job silent for hours.

use std::io::{IsTerminal, Write};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

/// How often a plain progress line is written when stderr is not a terminal.
pub const PLAIN_EVERY: Duration = Duration::from_secs(10);

/// Progress of `len` steps of one job. Shared by reference between the threads that advance
/// it.
pub struct Progress {
    kind: Kind,
}

enum Kind {
    Bar(ProgressBar),
    Lines(Mutex<Lines>),
    Hidden,
}

/// The state of plain-line progress.
struct Lines {
    what: String,
    unit: &'static str,
    len: u64,
    pos: u64,
    message: String,
    began: Instant,
    /// When the last line was written (the start, before the first).
    last: Instant,
    every: Duration,
    /// Whether any line was written: a job that wrote none ends quietly.
    written: bool,
    out: Box<dyn Write + Send>,
}

impl Progress {
    /// Progress of `len` `unit`s (such as "games") of the job `what` on stderr: a bar on a
    /// terminal, plain lines elsewhere.
    pub fn new(len: u64, what: impl Into<String>, unit: &'static str) -> Progress {
        let what = what.into();
        if std::io::stderr().is_terminal() {
            let template = format!("{{prefix}} {{bar:30}} {{pos}}/{{len}} {unit} {{msg}} [{{elapsed_precise}} < {{eta}}]");
            let style = ProgressStyle::with_template(&template)
                .unwrap_or_else(|_| ProgressStyle::default_bar());
            Progress {
                kind: Kind::Bar(ProgressBar::new(len).with_style(style).with_prefix(what)),
            }
        } else {
            Progress::lines(len, what, unit, PLAIN_EVERY, Box::new(std::io::stderr()))
        }
    }

    /// Plain lines to `out`, one at most every `every` (zero: at every change).
    pub fn lines(
        len: u64,
        what: impl Into<String>,
        unit: &'static str,
        every: Duration,
        out: Box<dyn Write + Send>,
    ) -> Progress {
        let now = Instant::now();
        Progress {
            kind: Kind::Lines(Mutex::new(Lines {
                what: what.into(),
                unit,
                len,
                pos: 0,
                message: String::new(),
                began: now,
                last: now,
                every,
                written: false,
                out,
            })),
        }
    }

    /// Progress that shows nothing.
    pub fn hidden() -> Progress {
        Progress { kind: Kind::Hidden }
    }

    pub fn set_position(&self, pos: u64) {
        match &self.kind {
            Kind::Bar(bar) => bar.set_position(pos),
            Kind::Lines(lines) => lock(lines).advance(|l| l.pos = pos),
            Kind::Hidden => {}
        }
    }

    pub fn inc(&self, n: u64) {
        match &self.kind {
            Kind::Bar(bar) => bar.inc(n),
            Kind::Lines(lines) => lock(lines).advance(|l| l.pos += n),
            Kind::Hidden => {}
        }
    }

    /// The text shown after the count (a rate, a score); set it before the count moves, so
    /// that the line the move writes carries it.
    pub fn set_message(&self, message: impl Into<String>) {
        let message = message.into();
        match &self.kind {
            Kind::Bar(bar) => bar.set_message(message),
            // The next line carries it; a message alone is no progress.
            Kind::Lines(lines) => lock(lines).message = message,
            Kind::Hidden => {}
        }
    }

    /// Runs `f` (which prints a line of its own) with the bar out of the way.
    pub fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        match &self.kind {
            Kind::Bar(bar) => bar.suspend(f),
            _ => f(),
        }
    }

    /// The job is over: the bar is cleared; plain progress that wrote lines closes with one
    /// saying how long it took.
    pub fn finish(&self) {
        match &self.kind {
            Kind::Bar(bar) => bar.finish_and_clear(),
            Kind::Lines(lines) => {
                let mut l = lock(lines);
                if l.written {
                    let line = format!(
                        "{}: {}/{} {}, done in {}",
                        l.what,
                        l.pos,
                        l.len,
                        l.unit,
                        clock(l.began.elapsed())
                    );
                    l.write(&line);
                }
            }
            Kind::Hidden => {}
        }
    }
}

fn lock(lines: &Mutex<Lines>) -> std::sync::MutexGuard<'_, Lines> {
    // A thread that panicked mid-update left whole numbers behind: go on with them.
    lines.lock().unwrap_or_else(|p| p.into_inner())
}

impl Lines {
    fn advance(&mut self, change: impl FnOnce(&mut Lines)) {
        change(self);
        let now = Instant::now();
        if now.duration_since(self.last) >= self.every {
            self.last = now;
            let line = self.line(now.duration_since(self.began));
            self.write(&line);
        }
    }

    /// `self-play: 12/64 games (18 %), 340.2 positions/s, 31s elapsed, about 2m14s left`.
    fn line(&self, elapsed: Duration) -> String {
        let mut s = format!("{}: {}/{} {}", self.what, self.pos, self.len, self.unit);
        if let Some(percent) = (self.pos.min(self.len) * 100).checked_div(self.len) {
            s += &format!(" ({percent} %)");
        }
        if !self.message.is_empty() {
            s += &format!(", {}", self.message);
        }
        s += &format!(", {} elapsed", clock(elapsed));
        if self.pos > 0 && self.pos < self.len {
            let left = elapsed.mul_f64((self.len - self.pos) as f64 / self.pos as f64);
            s += &format!(", about {} left", clock(left));
        }
        s
    }

    fn write(&mut self, line: &str) {
        self.written = true;
        // Progress is a courtesy: a closed stderr must not stop the job.
        let _ = writeln!(self.out, "{line}");
        let _ = self.out.flush();
    }
}

/// `42s`, `3m05s`, `2h07m`.
fn clock(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, s % 3600 / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    /// A writer whose bytes the test reads back.
    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl Shared {
        fn text(&self) -> String {
            String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
        }
    }

    #[test]
    fn plain_lines_carry_the_count_the_message_and_no_escape_codes() {
        let out = Shared::default();
        let p = Progress::lines(
            4,
            "self-play",
            "games",
            Duration::ZERO,
            Box::new(out.clone()),
        );
        p.set_message("300.0 positions/s");
        p.set_position(1);
        p.inc(3);
        p.finish();
        let text = out.text();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{text}");
        assert!(
            lines[0].starts_with(
                "self-play: 1/4 games (25 %), 300.0 positions/s, 0s elapsed, about 0s left"
            ),
            "{text}"
        );
        assert!(
            lines[1].starts_with("self-play: 4/4 games (100 %)"),
            "{text}"
        );
        assert!(
            lines[2].starts_with("self-play: 4/4 games, done in 0s"),
            "{text}"
        );
        assert!(!text.contains('\x1b') && !text.contains('\r'), "{text:?}");
    }

    #[test]
    fn plain_lines_wait_their_interval_and_a_quiet_job_ends_quietly() {
        let out = Shared::default();
        let p = Progress::lines(
            100,
            "fit",
            "steps",
            Duration::from_secs(3600),
            Box::new(out.clone()),
        );
        for _ in 0..100 {
            p.inc(1);
        }
        p.finish();
        assert_eq!(out.text(), "");
        let hidden = Progress::hidden();
        hidden.inc(1);
        hidden.finish();
    }

    #[test]
    fn durations_read_as_a_clock() {
        assert_eq!(clock(Duration::from_secs(42)), "42s");
        assert_eq!(clock(Duration::from_secs(185)), "3m05s");
        assert_eq!(clock(Duration::from_secs(7620)), "2h07m");
    }
}

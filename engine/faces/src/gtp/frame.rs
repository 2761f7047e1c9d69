//! GTP version 2's framing, the same for every dialect the engine speaks (Go's [`super::go`],
//! Liuzhou's [`super::liuzhou`]): an input line cleaned and split into an optional numeric
//! id, a command and its arguments ([`read_request`]); an answer `=ID text` or `?ID text`
//! ended by a blank line ([`answer`]); the conversation on stdin/stdout ([`serve_stdio`]).
//! The dialects own their commands; nothing here knows a game.

use std::io::{self, BufRead, Write};
use std::sync::mpsc;

use anyhow::Context;
use games::Player;

/// One command line: the id to echo (empty when none was given), the command and its
/// arguments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    pub id: String,
    pub command: String,
    pub args: Vec<String>,
}

impl Request {
    /// The arguments as the dialects' command tables take them.
    pub fn arg_strs(&self) -> Vec<&str> {
        self.args.iter().map(String::as_str).collect()
    }
}

/// Reads one input line as GTP preprocesses it: control characters other than tab dropped,
/// tabs made spaces, `#` starting a comment. `None` for a line with no command (empty or a
/// comment); `Some(Err(reply))` for one that cannot be answered otherwise (an id with no
/// command).
pub fn read_request(raw: &str) -> Option<Result<Request, String>> {
    let cleaned: String = raw
        .chars()
        .filter(|&c| c == '\t' || !c.is_control())
        .map(|c| if c == '\t' { ' ' } else { c })
        .collect();
    let line = cleaned.split('#').next().unwrap_or("").trim();
    let mut words = line.split_whitespace();
    let first = words.next()?;
    let (id, command) = if first.bytes().all(|b| b.is_ascii_digit()) {
        match words.next() {
            Some(c) => (first, c),
            None => return Some(Err(format!("?{first} syntax error: no command\n\n"))),
        }
    } else {
        ("", first)
    };
    Some(Ok(Request {
        id: id.to_string(),
        command: command.to_string(),
        args: words.map(String::from).collect(),
    }))
}

/// The whole answer to request `id`: `=ID text` (or `=ID` for no text) on success, `?ID
/// reason` on failure, ended by the blank line.
pub fn answer(id: &str, result: Result<String, String>) -> String {
    match result {
        Ok(body) if body.is_empty() => format!("={id}\n\n"),
        Ok(body) => format!("={id} {body}\n\n"),
        Err(e) => format!("?{id} {e}\n\n"),
    }
}

/// `Ok` when `command` has `n` arguments, else the syntax error.
pub fn arity(command: &str, args: &[&str], n: usize) -> Result<(), String> {
    if args.len() == n {
        Ok(())
    } else {
        Err(format!("syntax error: {command} takes {n} argument(s)"))
    }
}

/// The commands every dialect answers alike: `protocol_version`, `name`, `version`,
/// `known_command` and `list_commands` (over `commands`, the dialect's list) and `quit` (which
/// sets `quit`). `None` for any other command.
pub fn common_command(
    command: &str,
    args: &[&str],
    commands: &[&str],
    quit: &mut bool,
) -> Option<Result<String, String>> {
    let arity = |n: usize| arity(command, args, n);
    Some(match command {
        "protocol_version" => arity(0).map(|_| "2".into()),
        "name" => arity(0).map(|_| "engine".into()),
        "version" => arity(0).map(|_| env!("CARGO_PKG_VERSION").into()),
        "known_command" => arity(1).map(|_| commands.contains(&args[0]).to_string()),
        "list_commands" => arity(0).map(|_| commands.join("\n")),
        "quit" => arity(0).map(|_| {
            *quit = true;
            String::new()
        }),
        _ => return None,
    })
}

/// A colour as GTP writes it: `b`, `w`, `black` or `white`, in any case.
pub fn parse_colour(text: &str) -> Option<Player> {
    match text.to_ascii_lowercase().as_str() {
        "b" | "black" => Some(Player::First),
        "w" | "white" => Some(Player::Second),
        _ => None,
    }
}

/// A whole number of seconds or stones, as GTP's time commands send them.
pub fn parse_count(what: &str, text: &str) -> Result<u32, String> {
    text.parse()
        .map_err(|_| format!("syntax error: {what} {text:?} is not a whole number"))
}

/// What [`serve_stdio`] drives: a dialect's session.
pub trait Conversation {
    /// Answers one input line, or `None` for a line with no command.
    fn handle(&mut self, line: &str) -> Option<String>;

    /// Whether `quit` was asked.
    fn quit(&self) -> bool;

    /// Whether an answer is still going on (Go's `lz-analyze`): its reports are written
    /// until the next line arrives.
    fn ongoing(&self) -> bool {
        false
    }

    /// The next report of the answer going on.
    fn report(&mut self) -> String {
        String::new()
    }

    /// Ends the answer going on (a line arrived); its blank line is written after this.
    fn end_ongoing(&mut self) {}

    /// Whether a line that arrives ends the answer going on; one that is not (a move searched
    /// with reports) runs to its own end, its last report ending with its blank line.
    fn interruptible(&self) -> bool {
        true
    }
}

/// Runs one GTP conversation on stdin/stdout until `quit` or the end of input. Lines are read
/// on a thread of their own, so that an answer that goes on (an analysis) runs until the next
/// command arrives, which ends it, rather than until it is read.
pub fn serve_stdio(mut session: impl Conversation) -> anyhow::Result<()> {
    let (lines, incoming) = mpsc::channel::<io::Result<Vec<u8>>>();
    std::thread::spawn(move || {
        let mut stdin = io::stdin().lock();
        loop {
            let mut raw = Vec::new();
            match stdin.read_until(b'\n', &mut raw) {
                Ok(0) => break,
                Ok(_) => {
                    if lines.send(Ok(raw)).is_err() {
                        break;
                    }
                }
                Err(e) => {
                    let _ = lines.send(Err(e));
                    break;
                }
            }
        }
    });
    let mut out = io::stdout().lock();
    let mut write = |text: &str| {
        out.write_all(text.as_bytes())
            .and_then(|()| out.flush())
            .map_err(crate::out::stdout_error)
    };
    loop {
        let next = if session.ongoing() {
            if !session.interruptible() {
                write(&session.report())?;
                continue;
            }
            match incoming.try_recv() {
                Err(mpsc::TryRecvError::Empty) => {
                    write(&session.report())?;
                    continue;
                }
                // Any input ends the answer going on with its blank line.
                next => {
                    session.end_ongoing();
                    write("\n")?;
                    next.ok()
                }
            }
        } else {
            incoming.recv().ok()
        };
        let Some(raw) = next else { break };
        let raw = raw.context("reading stdin")?;
        // Bytes that are not UTF-8 cannot form a known command; they must not end the session.
        let line = String::from_utf8_lossy(&raw);
        if let Some(reply) = session.handle(&line) {
            write(&reply)?;
        }
        if session.quit() {
            break;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_cleaned_and_split() {
        assert_eq!(read_request(""), None);
        assert_eq!(read_request("  # a comment"), None);
        let r = read_request("12 play\tb  c3 # why\r\n").unwrap().unwrap();
        assert_eq!((r.id.as_str(), r.command.as_str()), ("12", "play"));
        assert_eq!(r.arg_strs(), ["b", "c3"]);
        let r = read_request("name\u{7}").unwrap().unwrap();
        assert_eq!((r.id.as_str(), r.command.as_str()), ("", "name"));
        assert_eq!(
            read_request("7").unwrap().unwrap_err(),
            "?7 syntax error: no command\n\n"
        );
    }

    #[test]
    fn answers_end_with_a_blank_line_and_echo_the_id() {
        assert_eq!(answer("", Ok(String::new())), "=\n\n");
        assert_eq!(answer("3", Ok("2".into())), "=3 2\n\n");
        assert_eq!(
            answer("4", Err("illegal move".into())),
            "?4 illegal move\n\n"
        );
        assert_eq!(
            arity("play", &["b"], 2).unwrap_err(),
            "syntax error: play takes 2 argument(s)"
        );
        assert_eq!(parse_colour("WHITE"), Some(Player::Second));
        assert_eq!(parse_colour("red"), None);
        assert!(parse_count("time", "x").unwrap_err().contains("\"x\""));
    }
}

//! Every function of the loop is short enough to read at a glance: none of `src/` runs past
//! [`LIMIT`] lines, from its `fn` line to its closing brace.

use std::path::Path;

const LIMIT: usize = 80;

/// The source with comments, string and character literals blanked out (newlines kept), so
/// that only code braces are counted.
fn code_only(src: &str) -> String {
    let c: Vec<char> = src.chars().collect();
    let mut out = String::with_capacity(src.len());
    let blank = |out: &mut String, ch: char| out.push(if ch == '\n' { '\n' } else { ' ' });
    let mut i = 0;
    while i < c.len() {
        if c[i] == '/' && c.get(i + 1).copied() == Some('/') {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if c[i] == '/' && c.get(i + 1).copied() == Some('*') {
            let mut depth = 0;
            loop {
                if c[i] == '/' && c.get(i + 1).copied() == Some('*') {
                    depth += 1;
                } else if c[i] == '*' && c.get(i + 1).copied() == Some('/') {
                    depth -= 1;
                    if depth == 0 {
                        i += 2;
                        break;
                    }
                }
                blank(&mut out, c[i]);
                i += 1;
            }
        } else if c[i] == 'r'
            && matches!(c.get(i + 1).copied(), Some('#' | '"'))
            && !ident(c.get(i.wrapping_sub(1)))
        {
            // A raw string: r"…" or r#"…"#, ended by a quote and as many hashes.
            let hashes = c[i + 1..].iter().take_while(|&&x| x == '#').count();
            i += 1 + hashes;
            if c.get(i) != Some(&'"') {
                continue;
            }
            i += 1;
            let end: String = std::iter::once('"')
                .chain("#".repeat(hashes).chars())
                .collect();
            while i < c.len() && !c[i..].iter().collect::<String>().starts_with(&end) {
                blank(&mut out, c[i]);
                i += 1;
            }
            i += end.len();
        } else if c[i] == '"' {
            i += 1;
            while i < c.len() && c[i] != '"' {
                if c[i] == '\\' {
                    i += 1;
                }
                blank(&mut out, c[i]);
                i += 1;
            }
            i += 1;
        } else if c[i] == '\''
            && (c.get(i + 2).copied() == Some('\'') || c.get(i + 1).copied() == Some('\\'))
        {
            // A character literal ('{', '\n', '\''); a lifetime has no closing quote.
            i += if c.get(i + 1).copied() == Some('\\') {
                2
            } else {
                1
            };
            while i < c.len() && c[i] != '\'' {
                i += 1;
            }
            i += 1;
        } else {
            out.push(c[i]);
            i += 1;
        }
    }
    out
}

fn ident(c: Option<&char>) -> bool {
    c.is_some_and(|c| c.is_alphanumeric() || *c == '_')
}

/// Each function of `src` whose body is longer than [`LIMIT`] lines, as `NAME (N lines, line L)`.
fn long_functions(src: &str) -> Vec<String> {
    let code = code_only(src);
    let lines: Vec<&str> = code.lines().collect();
    let mut long = Vec::new();
    for (start, line) in lines.iter().enumerate() {
        let Some(at) = line.find("fn ") else { continue };
        if at > 0 && ident(line[..at].chars().last().as_ref()) {
            continue;
        }
        let name: String = line[at + 3..]
            .chars()
            .take_while(|c| ident(Some(c)))
            .collect();
        let (mut depth, mut opened) = (0i64, false);
        for (end, l) in lines.iter().enumerate().skip(start) {
            for ch in l.chars() {
                match ch {
                    '{' => (depth, opened) = (depth + 1, true),
                    '}' => depth -= 1,
                    // A declaration without a body (in a trait).
                    ';' if !opened => break,
                    _ => {}
                }
            }
            if (opened && depth <= 0) || (!opened && l.trim_end().ends_with(';')) {
                let n = end - start + 1;
                if n > LIMIT {
                    long.push(format!("{name} ({n} lines, line {})", start + 1));
                }
                break;
            }
        }
    }
    long
}

#[test]
fn no_function_of_the_loop_is_longer_than_the_limit() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let (mut dirs, mut files) = (vec![src.clone()], 0);
    let mut long = Vec::new();
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files += 1;
                let text = std::fs::read_to_string(&path).unwrap();
                for f in long_functions(&text) {
                    long.push(format!("{}: {f}", path.display()));
                }
            }
        }
    }
    assert!(files >= 5, "read {files} files of {}", src.display());
    assert!(
        long.is_empty(),
        "longer than {LIMIT} lines:\n{}",
        long.join("\n")
    );
}

#[test]
fn the_counter_sees_through_literals_and_comments() {
    let body = "    let x = 1;\n".repeat(LIMIT);
    let long = format!("fn long() {{\n{body}}}\n");
    assert_eq!(
        long_functions(&long),
        [format!("long ({} lines, line 1)", LIMIT + 2)]
    );
    // Braces in strings, raw strings, characters and comments open nothing; a lifetime is
    // not a character.
    let tricky = "fn a<'b>(s: &'b str) -> char {\n    let _ = \"}\";\n    let _ = r#\"}\"#;\n    \
                  // }\n    let _ = '}';\n    '{'\n}\n";
    assert_eq!(code_only(tricky).matches('}').count(), 1);
    let short_then_long = format!("{tricky}{long}");
    assert_eq!(
        long_functions(&short_then_long),
        [format!("long ({} lines, line 8)", LIMIT + 2)]
    );
}

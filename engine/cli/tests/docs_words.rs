//! The docs describe the product as it is. Every Markdown file of the repository and every `//!`
//! module doc of its Rust sources holds no account of how the product came to be (that lives in
//! commit messages), no lineage of models (which model made which, candidates, stops, targets
//! passed) and no path of one machine. Under `docs/experiments/` dated findings may name models
//! and candidates; the history words stay refused there too. No file of the repository points at
//! a spec outside it.

use std::path::Path;
use std::process::Command;

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

/// This file: it names the phrases it refuses.
const THIS_FILE: &str = "engine/cli/tests/docs_words.rs";

/// Where dated findings live: model numbers and candidates are allowed there.
const EXPERIMENTS: &str = "docs/experiments/";

/// Phrases that tell a history rather than describe; matched as whole words, ignoring case.
fn history_phrases() -> Vec<String> {
    let mut phrases: Vec<String> = [
        "the issue",
        "before/after",
        "before and after",
        "previously",
        "formerly",
        "used to be",
        "used to have",
        "used to take",
        "used to give",
        "was changed",
        "we changed",
        "earlier stop",
    ]
    .map(String::from)
    .to_vec();
    for when in [
        "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "this", "last",
        "previous", "earlier", "next", "later",
    ] {
        phrases.push(format!("{when} session"));
    }
    // "now" as a change of behaviour ("X now does Y", "Y is now Z"); "now" as a moment of
    // the game (the current position) stays allowed.
    for verb in [
        "is", "are", "does", "do", "has", "have", "gathers", "plays", "reads", "writes", "uses",
        "runs", "takes", "gives", "loads", "finds", "says", "keeps", "works", "starts", "prints",
        "checks", "lives",
    ] {
        phrases.push(format!("now {verb}"));
        phrases.push(format!("{verb} now"));
    }
    phrases
}

/// Whether a history phrase followed by `rest` describes after all: "before and after each move"
/// is a moment of the game, not a comparison across changes.
fn describes(phrase: &str, rest: &str) -> bool {
    ["before and after", "before/after"].contains(&phrase)
        && [" each ", " every ", " a ", " one ", " the move"]
            .iter()
            .any(|w| rest.starts_with(w))
}

/// Absolute paths of one machine.
const MACHINE_PATHS: [&str; 3] = ["/work/", "/home/", "/tmp/"];

/// Specs outside the repository: refused in every file, code included.
const OUTSIDE_SPECS: [&str; 2] = ["shared/spec", "../shared"];

/// The repository's files, relative to its root with `/` between parts: git's list (tracked, and
/// untracked but not ignored) where git answers, else a walk that skips build output and run data.
fn repository_files() -> Vec<String> {
    let listed = Command::new("git")
        .args([
            "-C",
            ROOT,
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
        ])
        .output()
        .ok()
        .filter(|out| out.status.success() && !out.stdout.is_empty());
    let mut files: Vec<String> = match listed {
        Some(out) => String::from_utf8_lossy(&out.stdout)
            .split('\0')
            .filter(|f| !f.is_empty())
            .map(String::from)
            .collect(),
        None => walk(),
    };
    // A tracked file deleted from the working tree is not there to read.
    files.retain(|f| Path::new(ROOT).join(f).is_file());
    files.sort();
    files.dedup();
    files
}

/// Every file under the root but build output, run data and dependencies.
fn walk() -> Vec<String> {
    const SKIP: [&str; 9] = [
        ".git",
        "target",
        "node_modules",
        "runs",
        "shards",
        ".ort",
        "fuzz/target",
        "fuzz/artifacts",
        "fuzz/coverage",
    ];
    let mut files = Vec::new();
    let mut dirs = vec![String::new()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(Path::new(ROOT).join(&dir)).unwrap() {
            let entry = entry.unwrap();
            let name = entry.file_name().to_string_lossy().into_owned();
            let rel = if dir.is_empty() {
                name.clone()
            } else {
                format!("{dir}/{name}")
            };
            if entry.file_type().unwrap().is_dir() {
                if !SKIP.contains(&name.as_str()) && !SKIP.contains(&rel.as_str()) {
                    dirs.push(rel);
                }
            } else {
                files.push(rel);
            }
        }
    }
    files
}

/// The prose of a file, as (line number, text) pairs: every line of a Markdown file, the text
/// after `//!` of a Rust file's module-doc lines; `None` for other files.
fn prose(file: &str, text: &str) -> Option<Vec<(usize, String)>> {
    let numbered = text.lines().enumerate().map(|(n, l)| (n + 1, l));
    if file.ends_with(".md") {
        Some(numbered.map(|(n, l)| (n, l.to_string())).collect())
    } else if file.ends_with(".rs") {
        Some(
            numbered
                .filter_map(|(n, l)| Some((n, l.trim_start().strip_prefix("//!")?)))
                .map(|(n, l)| (n, l.strip_prefix(' ').unwrap_or(l).to_string()))
                .collect(),
        )
    } else {
        None
    }
}

/// Runs of prose read as one text: a paragraph or list item, continued over its wrapped lines;
/// a heading, a table row, a fence and each line of code on their own. Each run is its lines
/// (lower case) joined by spaces, with the byte offset at which each line starts.
fn passages(lines: &[(usize, String)]) -> Vec<(String, Vec<(usize, usize)>)> {
    let block_start = |t: &str| {
        let digits = t.trim_start_matches(|c: char| c.is_ascii_digit());
        ["#", "|", ">", "```", "- ", "* ", "+ "]
            .iter()
            .any(|m| t.starts_with(m))
            || (digits.len() < t.len() && (digits.starts_with(". ") || digits.starts_with(") ")))
    };
    let mut out = Vec::new();
    let mut text = String::new();
    let mut starts: Vec<(usize, usize)> = Vec::new();
    let mut flush = |text: &mut String, starts: &mut Vec<(usize, usize)>| {
        if !starts.is_empty() {
            out.push((std::mem::take(text), std::mem::take(starts)));
        }
    };
    let mut in_code = false;
    let mut last_line = 0;
    for (n, line) in lines {
        let t = line.trim();
        let fence = t.starts_with("```");
        if t.is_empty() || *n != last_line + 1 || in_code || block_start(t) {
            flush(&mut text, &mut starts);
        }
        last_line = *n;
        if t.is_empty() {
            continue;
        }
        if !text.is_empty() {
            text.push(' ');
        }
        starts.push((text.len(), *n));
        text.push_str(&t.to_lowercase());
        if fence {
            in_code = !in_code;
        }
        if fence || in_code || t.starts_with('#') || t.starts_with('|') {
            flush(&mut text, &mut starts);
        }
    }
    flush(&mut text, &mut starts);
    out
}

/// The sentences of a passage, as byte ranges: each ends after `.`, `?` or `!` followed by a
/// space (so `0.887` stays whole), or at the passage's end.
fn sentences(text: &str) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, c) in text.char_indices() {
        if matches!(c, '.' | '?' | '!') && text[i + 1..].starts_with(' ') {
            out.push(start..i + 1);
            start = i + 2;
        }
    }
    if start < text.len() {
        out.push(start..text.len());
    }
    out
}

fn is_word_char(c: Option<char>) -> bool {
    c.is_some_and(|c| c.is_alphanumeric())
}

/// Where `phrase` occurs in `text` (both lower case) with no letter or digit either side.
fn words_at<'a>(text: &'a str, phrase: &'a str) -> impl Iterator<Item = usize> + 'a {
    text.match_indices(phrase)
        .map(|(i, _)| i)
        .filter(move |&i| {
            !is_word_char(text[..i].chars().next_back())
                && !is_word_char(text[i + phrase.len()..].chars().next())
        })
}

fn word_at(text: &str, phrase: &str) -> Option<usize> {
    words_at(text, phrase).next()
}

fn has_word(text: &str, phrase: &str) -> bool {
    word_at(text, phrase).is_some()
}

/// Where `text` (lower case) names a ticket: `issue 3`, `issue #12`.
fn names_an_issue(text: &str) -> Option<usize> {
    text.match_indices("issue ").map(|(i, _)| i).find(|&i| {
        let rest = text[i + "issue ".len()..].trim_start_matches('#');
        rest.starts_with(|c: char| c.is_ascii_digit())
    })
}

/// Model numbers in `text`: four digits with a leading zero (`0147`), standing alone (not the
/// tail of `0.0001` nor the head of `0147.5`), with their offsets.
fn model_numbers(text: &str) -> Vec<(usize, &str)> {
    let b = text.as_bytes();
    (0..b.len().saturating_sub(3))
        .filter(|&i| {
            b[i] == b'0'
                && b[i..i + 4].iter().all(u8::is_ascii_digit)
                && !text[..i]
                    .chars()
                    .next_back()
                    .is_some_and(|c| c.is_alphanumeric() || c == '.' || c == ',')
                && !is_word_char(text[i + 4..].chars().next())
                && !(text[i + 4..].starts_with('.')
                    && text[i + 5..].starts_with(|c: char| c.is_ascii_digit()))
        })
        .map(|i| (i, &text[i..i + 4]))
        .collect()
}

/// What tells a lineage of models in one sentence (lower case): which model made which, two
/// models compared, candidates, numbered stops, a target passed or reached. Each with its offset
/// in the sentence.
fn lineage(sentence: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    let models = model_numbers(sentence);
    // Generation 0 is where every run starts (`trainer-bridge init`), not a step of a lineage.
    let grown = models.iter().find(|&&(_, number)| number != "0000");
    if let Some(&(i, number)) = grown.filter(|_| has_word(sentence, "made")) {
        found.push((i, format!("model {number} … made")));
    }
    // One model measured against, or grown from, another: `0038 against 0009`.
    for &(i, number) in &models {
        let rest = &sentence[i + 4..];
        let other = [" against ", " from ", " over ", " beat ", " beats "]
            .iter()
            .find_map(|relation| rest.strip_prefix(relation))
            .map(|r| r.strip_prefix("model ").unwrap_or(r))
            .filter(|r| model_numbers(r).first().is_some_and(|m| m.0 == 0));
        if let Some(other) = other {
            found.push((i, format!("model {number} … {}", &other[..4])));
        }
    }
    for (i, _) in sentence.match_indices("candidate ") {
        let rest = &sentence[i + "candidate ".len()..];
        let numbered =
            rest.starts_with("nnnn") || model_numbers(rest).first().is_some_and(|m| m.0 == 0);
        if numbered && !is_word_char(sentence[..i].chars().next_back()) {
            found.push((i, format!("candidate {}", &rest[..4])));
        }
    }
    for (i, _) in sentence.match_indices("stop ") {
        let rest = &sentence[i + "stop ".len()..];
        if rest.starts_with(|c: char| c.is_ascii_digit())
            && !is_word_char(sentence[..i].chars().next_back())
        {
            found.push((i, "stop N".to_string()));
        }
    }
    if has_word(sentence, "target") {
        for verb in ["passed", "reached"] {
            if let Some(i) = word_at(sentence, verb) {
                found.push((i, format!("target … {verb}")));
            }
        }
    }
    found
}

/// The phrases of one file that the docs refuse, as (line, phrase) pairs.
fn violations(file: &str, lines: &[(usize, String)], phrases: &[String]) -> Vec<(usize, String)> {
    let experiments = file.starts_with(EXPERIMENTS);
    let mut found = Vec::new();
    for (text, starts) in passages(lines) {
        let line_at = |offset: usize| starts[starts.partition_point(|s| s.0 <= offset) - 1].1;
        let mut hit = |offset: usize, phrase: String| found.push((line_at(offset), phrase));
        for phrase in phrases {
            for i in words_at(&text, phrase) {
                if !describes(phrase, &text[i + phrase.len()..]) {
                    hit(i, format!("{phrase:?}"));
                }
            }
        }
        if let Some(i) = names_an_issue(&text) {
            hit(i, "issue N".to_string());
        }
        for path in MACHINE_PATHS {
            for (i, _) in text.match_indices(path) {
                hit(i, format!("machine path {path:?}"));
            }
        }
        if !experiments {
            for range in sentences(&text) {
                for (i, phrase) in lineage(&text[range.clone()]) {
                    hit(range.start + i, format!("lineage: {phrase}"));
                }
            }
        }
    }
    found.sort();
    found.dedup();
    found
}

/// Every line of `text` that names a spec outside the repository.
fn outside_specs(text: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (n, line) in text.lines().enumerate() {
        for spec in OUTSIDE_SPECS.into_iter().filter(|s| line.contains(s)) {
            found.push((n + 1, format!("spec outside the repository {spec:?}")));
        }
    }
    found
}

#[test]
fn docs_describe_the_product_not_its_history_nor_a_machine() {
    let phrases = history_phrases();
    let files = repository_files();
    let markdown = files.iter().filter(|f| f.ends_with(".md")).count();
    let rust = files.iter().filter(|f| f.ends_with(".rs")).count();
    assert!(
        markdown >= 10 && rust >= 100,
        "{markdown} Markdown and {rust} Rust files found"
    );
    let mut hits = Vec::new();
    for file in &files {
        // Binary files (images, networks) have no prose.
        let Ok(text) = std::fs::read_to_string(Path::new(ROOT).join(file)) else {
            continue;
        };
        let mut found = prose(file, &text)
            .map(|lines| violations(file, &lines, &phrases))
            .unwrap_or_default();
        if file != THIS_FILE {
            found.extend(outside_specs(&text));
        }
        found.sort();
        let lines: Vec<&str> = text.lines().collect();
        for (n, phrase) in found {
            hits.push(format!("{file}:{n}: {phrase} in {:?}", lines[n - 1].trim()));
        }
    }
    assert!(
        hits.is_empty(),
        "{} places tell a history, a lineage of models or a machine, or point outside the \
         repository; describe the product as it is:\n{}",
        hits.len(),
        hits.join("\n")
    );
}

/// The phrases found in a Markdown text, as (line, phrase).
fn check(file: &str, text: &str) -> Vec<(usize, String)> {
    violations(file, &prose(file, text).unwrap(), &history_phrases())
}

#[test]
fn the_word_matcher_needs_whole_words() {
    assert!(has_word("a net now gathers", "now gathers"));
    assert!(!has_word("i know gathers", "now gathers"));
    assert!(has_word("the third session:", "third session"));
    assert!(!has_word("web sessions", "this session"));
    assert!(names_an_issue("inference (issue 3)").is_some());
    assert!(names_an_issue("see issue #12").is_some());
    assert!(names_an_issue("an issue with 3 parts").is_none());
}

#[test]
fn descriptions_of_the_product_pass() {
    let fine = "\
# Rules

Each player places stones in the placement phase before the movement phase; the first player
is White. Search reads the position as it stands now, and the player to move now picks an
action.

| model | score |
|---|---|
| the shipped network | 0.887 [0.854, 0.919] |

Learning rate 0.0001, seed 0147.5, 2 000 visits, a 1024-entry table. The stop flag ends
the search; the value target is the game's result. The engine stops at 10 000 nodes. The
oracle lists the legal moves before and after each move. A new name is the input's number plus
one (0003 → 0004).
";
    assert_eq!(check("docs/rules/liuzhou.md", fine), vec![]);
    assert_eq!(
        check("README.md", "The shipped model 0147 plays as Black.\n"),
        vec![]
    );
    let run = "The run directory: model 0000 and the bootstrap shards that make a new run, and the
checks a resumed run passes. `init` made model 0000 from seeded weights.
";
    assert_eq!(check("README.md", run), vec![]);
}

#[test]
fn histories_and_lineages_are_refused_with_their_line() {
    let text = "\
The engine previously read YAML.
From 0126, four self-play iterations made model 0131,
and 0131's search labelling the placement made
model 0134, timed before and after the change.

Candidate 0022 scored 0.338; 0038 against model 0009 0.978.
The target of one half against depth 8 is passed; the other
target is not reached.
After an earlier stop at 30 minutes it resumed: stop 3 of the run.
Paths such as /home/me/net.onnx and `/work/shared/spec/go.md` stay out.
";
    let found = check("docs/xiangqi.md", text);
    let has =
        |line: usize, phrase: &str| found.iter().any(|(n, p)| *n == line && p.contains(phrase));
    assert!(has(1, "previously"), "{found:?}");
    assert!(has(4, "before and after"), "{found:?}");
    assert!(has(2, "model 0126 … made"), "{found:?}");
    assert!(has(6, "candidate 0022"), "{found:?}");
    assert!(has(6, "model 0038 … 0009"), "{found:?}");
    assert!(has(7, "target … passed"), "{found:?}");
    assert!(has(8, "target … reached"), "{found:?}");
    assert!(has(9, "earlier stop") && has(9, "stop N"), "{found:?}");
    assert!(
        has(10, "machine path \"/home/\"") && has(10, "machine path \"/work/\""),
        "{found:?}"
    );
    assert_eq!(outside_specs(text).len(), 1);
    assert_eq!(outside_specs("Rules: `../shared/go.md`.").len(), 1);

    // Dated findings name models and candidates; the history words stay refused.
    let found = check("docs/experiments/xiangqi-opening/README.md", text);
    assert!(
        found.iter().all(|(_, p)| !p.starts_with("lineage")),
        "{found:?}"
    );
    assert!(
        found
            .iter()
            .any(|(n, p)| *n == 1 && p.contains("previously")),
        "{found:?}"
    );
    assert!(
        found
            .iter()
            .any(|(n, p)| *n == 9 && p.contains("earlier stop")),
        "{found:?}"
    );
}

#[test]
fn module_docs_are_read_and_code_is_not() {
    // `\x2f` is `/`: this file's own lines do not start with the module-doc marker.
    let source = "\
\x2f/! Reads positions; the engine previously wrote them.
/// Items' docs are not module docs: previously.
fn f() {} // previously
";
    let lines = prose("engine/x/src/lib.rs", source).unwrap();
    assert_eq!(
        lines,
        vec![(
            1,
            "Reads positions; the engine previously wrote them.".to_string()
        )]
    );
    let found = violations("engine/x/src/lib.rs", &lines, &history_phrases());
    assert_eq!(found, vec![(1, "\"previously\"".to_string())]);
}

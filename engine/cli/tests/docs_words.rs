//! The docs describe the product as it is: README.md and docs/**/*.md hold no account of how it
//! came to be (that lives in commit messages) and no path of one machine.

use std::path::{Path, PathBuf};

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

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

/// Absolute paths of one machine.
const MACHINE_PATHS: [&str; 3] = ["/work/", "/home/", "/tmp/"];

fn docs() -> Vec<PathBuf> {
    let root = Path::new(ROOT);
    let mut files = vec![root.join("README.md")];
    let mut dirs = vec![root.join("docs")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                files.push(path);
            }
        }
    }
    files
}

/// Whether `phrase` occurs in `line` (both lower case) with no letter or digit either side.
fn has_word(line: &str, phrase: &str) -> bool {
    let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric());
    line.match_indices(phrase).any(|(i, _)| {
        !word(line[..i].chars().next_back()) && !word(line[i + phrase.len()..].chars().next())
    })
}

/// Whether `line` (lower case) names a ticket: `issue 3`, `issue #12`.
fn names_an_issue(line: &str) -> bool {
    line.match_indices("issue ").any(|(i, w)| {
        let rest = line[i + w.len()..].trim_start_matches('#');
        rest.starts_with(|c: char| c.is_ascii_digit())
    })
}

#[test]
fn docs_describe_the_product_not_its_history_nor_a_machine() {
    let phrases = history_phrases();
    let mut hits = Vec::new();
    let files = docs();
    assert!(files.len() >= 5, "{files:?}");
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for (n, line) in text.lines().enumerate() {
            let lower = line.to_lowercase();
            let found = phrases
                .iter()
                .map(String::as_str)
                .filter(|p| has_word(&lower, p))
                .chain(names_an_issue(&lower).then_some("issue N"))
                .chain(MACHINE_PATHS.into_iter().filter(|p| line.contains(p)));
            for p in found {
                let name = file
                    .strip_prefix(ROOT)
                    .unwrap_or(file)
                    .display()
                    .to_string();
                hits.push(format!("{name}:{}: {p:?} in {line:?}", n + 1));
            }
        }
    }
    assert!(hits.is_empty(), "\n{}", hits.join("\n"));
}

#[test]
fn the_word_matcher_needs_whole_words() {
    assert!(has_word("a net now gathers", "now gathers"));
    assert!(!has_word("i know gathers", "now gathers"));
    assert!(has_word("the third session:", "third session"));
    assert!(!has_word("web sessions", "this session"));
    assert!(names_an_issue("inference (issue 3)") && names_an_issue("see issue #12"));
    assert!(!names_an_issue("an issue with 3 parts"));
}

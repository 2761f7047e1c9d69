//! The repetition rules against the table of cases in `src/xiangqi/repetition_cases.txt`, and
//! the simple rule against an independent statement of the perpetual-check-only rule on random
//! games that repeat.

use games::xiangqi::repetition::new_chases;
use games::xiangqi::{EndReason, Move, RepetitionRule, Xiangqi};
use games::{Game, Outcome, Player};
use rand::{Rng, SeedableRng};

struct Case {
    name: String,
    fen: String,
    moves: Vec<String>,
    /// Per rule: the result text and the reason.
    expected: Vec<(RepetitionRule, String, String)>,
}

fn cases() -> Vec<Case> {
    let text = include_str!("../src/xiangqi/repetition_cases.txt");
    let mut out = Vec::new();
    for block in text.split("\n\n") {
        let fields: Vec<(&str, &str)> = block
            .lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
            .map(|l| l.split_once(':').expect("`key: value`"))
            .map(|(k, v)| (k.trim(), v.trim()))
            .collect();
        if fields.is_empty() {
            continue;
        }
        let get = |key: &str| {
            fields
                .iter()
                .find(|(k, _)| *k == key)
                .map(|(_, v)| v.to_string())
                .unwrap_or_else(|| panic!("a case without `{key}`: {block}"))
        };
        let expected = [RepetitionRule::Asian, RepetitionRule::Simple]
            .into_iter()
            .map(|rule| {
                let v = get(&rule.name().to_lowercase());
                let (result, reason) = v.split_once(' ').expect("`result reason`");
                (rule, result.to_string(), reason.to_string())
            })
            .collect();
        out.push(Case {
            name: get("name"),
            fen: get("fen"),
            moves: get("moves").split_whitespace().map(String::from).collect(),
            expected,
        });
    }
    out
}

fn result_text(o: Option<Outcome>) -> &'static str {
    match o {
        Some(Outcome::Win(Player::First)) => "1-0",
        Some(Outcome::Win(Player::Second)) => "0-1",
        Some(Outcome::Draw) => "1/2-1/2",
        None => "*",
    }
}

#[test]
fn the_repetition_cases_end_as_the_table_says() {
    let cases = cases();
    assert!(cases.len() >= 15, "{} cases", cases.len());
    let mut chases = 0;
    for case in &cases {
        for (rule, result, reason) in &case.expected {
            let mut g =
                Xiangqi::from_fen(&case.fen).unwrap_or_else(|e| panic!("{}: {e}", case.name));
            g.set_repetition_rule(*rule);
            for (i, text) in case.moves.iter().enumerate() {
                assert_eq!(
                    g.end_reason(),
                    None,
                    "{} ({rule}): ended before move {i}",
                    case.name
                );
                let m = g.parse_action(text).unwrap();
                assert!(
                    g.is_legal(m),
                    "{}: {text} is not legal in {}",
                    case.name,
                    g.to_text()
                );
                g.play(m).unwrap();
            }
            assert_eq!(
                g.occurrences(),
                3,
                "{}: the last move repeats thrice",
                case.name
            );
            let got = (result_text(g.outcome()), g.end_reason().unwrap_or_default());
            assert_eq!(
                got,
                (result.as_str(), reason.clone()),
                "{} under the {rule} rule",
                case.name
            );
            chases += (g.end_rule() == Some(EndReason::PerpetualChase)) as usize;
        }
    }
    assert!(chases >= 5, "{chases} perpetual chases");
}

/// The simple rule, stated independently: at the third occurrence, a side that gave check with
/// every move since the first of the three loses if the other side did not; else a draw.
fn simple_verdict(g: &Xiangqi) -> Option<(Outcome, EndReason)> {
    let hist: Vec<(u64, bool)> = g.history().collect();
    let n = hist.len() - 1;
    let same: Vec<usize> = (0..=n).filter(|&i| hist[i].0 == hist[n].0).collect();
    if same.len() < 3 {
        return None;
    }
    let first = same[same.len() - 3];
    // The side to move at the end moved into positions first+1, first+3, ...
    let mover_all = (first + 1..=n).step_by(2).all(|j| hist[j].1);
    let other_all = (first + 2..=n).step_by(2).all(|j| hist[j].1);
    let mover = g.to_act();
    Some(match (mover_all, other_all) {
        (true, false) => (Outcome::Win(mover.opponent()), EndReason::PerpetualCheck),
        (false, true) => (Outcome::Win(mover), EndReason::PerpetualCheck),
        _ => (Outcome::Draw, EndReason::Repetition),
    })
}

/// Random games in small positions that often step back (a move undone two plies later), so
/// they repeat: the simple rule gives the independent verdict, and the Asian rule differs
/// from it only by turning a draw into a perpetual chase.
#[test]
fn the_simple_rule_judges_perpetual_check_only_and_asian_adds_chases() {
    // The table's positions, where checks and chases are near, and a fuller one.
    let mut starts: Vec<String> = cases().into_iter().map(|c| c.fen).collect();
    starts.push("3ak4/4a4/2n1b4/9/2c6/6R2/9/4C4/4A4/3AK1N2 w".to_string());
    let mut rng = rand::rngs::SmallRng::seed_from_u64(11);
    let (mut repetitions, mut chases, mut checks) = (0, 0, 0);
    for game in 0..2000 {
        let mut simple = Xiangqi::from_fen(&starts[game % starts.len()]).unwrap();
        simple.set_repetition_rule(RepetitionRule::Simple);
        let mut asian = simple.clone();
        asian.set_repetition_rule(RepetitionRule::Asian);
        let mut played: Vec<Move> = Vec::new();
        while simple.outcome().is_none() && played.len() < 200 {
            let mut moves = Vec::new();
            simple.legal_actions(&mut moves);
            // Undo the own move of two plies ago when that is legal (most of the time).
            let back = played.len().checked_sub(2).map(|i| {
                let t = simple.format_action(played[i]);
                simple
                    .parse_action(&format!("{}{}", &t[2..], &t[..2]))
                    .unwrap()
            });
            // Otherwise a check or a chase when there is one, half the time each.
            let pos = simple.position();
            let gives_check = |&m: &Move| {
                let mut p = pos.clone();
                p.make(m);
                p.in_check(p.side())
            };
            let forcing: Vec<Move> = match rng.gen_range(0..4) {
                0 => moves.iter().copied().filter(gives_check).collect(),
                1 => moves
                    .iter()
                    .copied()
                    .filter(|&m| new_chases(pos, m) != 0)
                    .collect(),
                _ => Vec::new(),
            };
            let m = match back {
                Some(b) if moves.contains(&b) && rng.gen_bool(0.8) => b,
                _ if !forcing.is_empty() => forcing[rng.gen_range(0..forcing.len())],
                _ => moves[rng.gen_range(0..moves.len())],
            };
            simple.play(m).unwrap();
            asian.play(m).unwrap();
            played.push(m);
            let expected = simple_verdict(&simple).or_else(|| {
                let natural = simple.halfmove_clock() >= 120;
                let stuck = simple.legal_moves().is_empty()
                    && simple.end_rule() == Some(EndReason::NoMoves);
                (natural || stuck).then(|| (simple.outcome().unwrap(), simple.end_rule().unwrap()))
            });
            let got = simple.outcome().zip(simple.end_rule());
            assert_eq!(got, expected, "{} after {played:?}", simple.to_text());
            // Asian differs only where Simple says a repetition is drawn.
            match (got, asian.outcome().zip(asian.end_rule())) {
                (
                    Some((_, EndReason::Repetition)),
                    Some((Outcome::Win(_), EndReason::PerpetualChase)),
                ) => chases += 1,
                (a, b) => assert_eq!(a, b, "{} after {played:?}", simple.to_text()),
            }
            repetitions += (simple.end_rule() == Some(EndReason::Repetition)) as usize;
            checks += (simple.end_rule() == Some(EndReason::PerpetualCheck)) as usize;
        }
    }
    assert!(
        repetitions > 500 && checks > 20 && chases > 3,
        "{repetitions} {checks} {chases}"
    );
}

//! SGF collections read as game records: several games, variations, setup and handicap,
//! passes, comments, FF[3] identifiers, CRLF, sizes and every result form; and each kind of bad
//! game refused with its game and move number while the others still read.

use games::go::sgf::{read_records, result_outcome};
use games::go::{GoRules, GoState, Move, Point};
use games::{Game, GameRecord, Outcome, Player, RecordError};

fn read(text: &str) -> Vec<Result<GameRecord<GoState>, RecordError>> {
    read_records(text, &GoRules::default())
}

fn ok(entry: &Result<GameRecord<GoState>, RecordError>) -> &GameRecord<GoState> {
    entry.as_ref().unwrap_or_else(|e| panic!("{e}"))
}

fn bad(entry: &Result<GameRecord<GoState>, RecordError>) -> &RecordError {
    match entry {
        Ok(r) => panic!("accepted: {} moves", r.actions.len()),
        Err(e) => e,
    }
}

fn place(gtp: &str, size: usize) -> Move {
    Move::parse_gtp(gtp, size).unwrap()
}

#[test]
fn a_collection_gives_one_record_per_game_following_main_lines() {
    let text = "(;GM[1]FF[4]SZ[9]RE[B+R];B[ee](;W[cc];B[gg])(;W[gg]))\n\
                (;GM[1]FF[4]SZ[5]RE[W+3.5]C[a comment with \\] inside];B[cc](;W[bb]\n(;B[dd])(;B[dc]))\n;W[aa])\n\
                (;GM[1]SZ[7];B[dd])";
    let records = read(text);
    assert_eq!(records.len(), 3);

    let first = ok(&records[0]);
    assert_eq!(first.start.size(), 9);
    assert_eq!(
        first.actions,
        vec![place("E5", 9), place("C7", 9), place("G3", 9)]
    );
    assert_eq!(first.result, Some(Outcome::Win(Player::First)));
    assert_eq!(first.result_text.as_deref(), Some("B+R"));

    let second = ok(&records[1]);
    assert_eq!(second.start.size(), 5);
    assert_eq!(
        second.actions,
        vec![place("C3", 5), place("B4", 5), place("D2", 5)]
    );
    assert_eq!(second.result, Some(Outcome::Win(Player::Second)));
    let final_state = second.final_state();
    assert_eq!(final_state.stone_at(Point::new(1, 3)), Some(Player::First));
    assert_eq!(final_state.to_act(), Player::Second);

    let third = ok(&records[2]);
    assert_eq!(third.start.size(), 7);
    assert_eq!(third.result, None);
    assert_eq!(third.result_text, None);
}

#[test]
fn setup_and_handicap_start_the_game_with_white() {
    let text = "(;GM[1]FF[4]SZ[9]HA[2]KM[0.5]AB[cc][gg]AE[ee];W[ee];B[ce];W[ge])";
    let records = read(text);
    let r = ok(&records[0]);
    assert_eq!(r.start.to_act(), Player::Second);
    assert_eq!(r.start.komi(), 0.5);
    assert_eq!(r.start.stones_of(Player::First).len(), 2);
    assert_eq!(r.actions.len(), 3);
    let positions: Vec<_> = r.positions().collect();
    assert_eq!(positions[0].0.to_act(), Player::Second);
    assert_eq!(positions[1].0.to_act(), Player::First);
    assert_eq!(positions[1].1, place("C5", 9));

    // `PL` decides who starts when there are no stones yet; komi falls back to the rules'.
    let r = read("(;GM[1]SZ[9]AB[aa:bb]PL[W];W[ee])");
    let r = ok(&r[0]);
    assert_eq!(r.start.to_act(), Player::Second);
    assert_eq!(r.start.stones_of(Player::First).len(), 4);
    assert_eq!(r.start.komi(), GoRules::default().komi);
}

#[test]
fn passes_are_empty_values_or_tt_up_to_19x19() {
    let r = read("(;GM[1]SZ[9];B[ee];W[];B[tt];W[])");
    let r = ok(&r[0]);
    assert_eq!(
        r.actions,
        vec![place("E5", 9), Move::Pass, Move::Pass, Move::Pass]
    );
    let r = read("(;GM[1]SZ[19];B[tt];W[pd])");
    assert_eq!(ok(&r[0]).actions, vec![Move::Pass, place("Q16", 19)]);
    let r = read("(;GM[1]SZ[2];B[aa];W[tt];B[])");
    assert_eq!(
        ok(&r[0]).actions,
        vec![place("A2", 2), Move::Pass, Move::Pass]
    );
}

#[test]
fn ff3_identifiers_crlf_and_comments_read_as_ff4() {
    let text = "(;GaMe[1]FileFormat[3]SiZe[9]AddBlack[cc]\r\nKoMi[6.5]REsult[W+T]\r\n\
                ;White[ee]Comment[W: good \\] move\r\n(b]\r\n;Black[gg]\r\n)\r\n";
    let records = read(text);
    let r = ok(&records[0]);
    assert_eq!(r.start.stones_of(Player::First), vec![Point::new(6, 2)]);
    assert_eq!(r.start.komi(), 6.5);
    assert_eq!(r.actions, vec![place("E5", 9), place("G3", 9)]);
    assert_eq!(r.result, Some(Outcome::Win(Player::Second)));
}

#[test]
fn every_result_form() {
    let wins_b = Some(Outcome::Win(Player::First));
    let wins_w = Some(Outcome::Win(Player::Second));
    for (text, outcome) in [
        ("B+R", wins_b),
        ("B+Resign", wins_b),
        ("W+3.5", wins_w),
        ("B+T", wins_b),
        ("W+Time", wins_w),
        ("W+F", wins_w),
        ("B+", wins_b),
        ("0", Some(Outcome::Draw)),
        ("Draw", Some(Outcome::Draw)),
        ("B+0", Some(Outcome::Draw)),
        ("Void", None),
        ("?", None),
        ("", None),
        ("nonsense", None),
    ] {
        assert_eq!(result_outcome(text), outcome, "{text:?}");
        let records = read(&format!("(;GM[1]SZ[5]RE[{text}];B[cc])"));
        let r = ok(&records[0]);
        assert_eq!(r.result, outcome, "{text:?}");
        assert_eq!(r.result_text.as_deref(), Some(text));
    }
}

#[test]
fn a_bad_game_costs_only_itself() {
    let text = "(;GM[1]SZ[9]RE[B+R];B[ee];W[ee])\
                (;GM[1]SZ[9];B[ee];W[zz])\
                (;GM[1]SZ[9];B[ee];B[dd])\
                (;GM[1]SZ[9]PL[W];B[ee])\
                (;GM[1]SZ[9];B[ee];AB[dd])\
                (;GM[2];B[ee])\
                (;GM[1]SZ[9];B[ee];W[dd])";
    let records = read(text);
    assert_eq!(records.len(), 7);
    let e = bad(&records[0]);
    assert_eq!((e.game, e.move_number), (1, Some(2)));
    assert!(
        e.reason.contains("illegal move W E5: point occupied"),
        "{e}"
    );
    let e = bad(&records[1]);
    assert_eq!((e.game, e.move_number), (2, Some(2)));
    assert!(e.reason.contains("off the 9x9 board"), "{e}");
    assert_eq!(
        e.to_string(),
        "game 2, move 2: SGF, byte 51: point \"zz\" is off the 9x9 board"
    );
    let e = bad(&records[2]);
    assert_eq!((e.game, e.move_number), (3, Some(2)));
    assert!(e.reason.contains("same colour twice"), "{e}");
    let e = bad(&records[3]);
    assert_eq!((e.game, e.move_number), (4, Some(1)));
    assert!(e.reason.contains("PL"), "{e}");
    let e = bad(&records[4]);
    assert_eq!((e.game, e.move_number), (5, Some(2)));
    assert!(e.reason.contains("setup after the first move"), "{e}");
    let e = bad(&records[5]);
    assert_eq!((e.game, e.move_number), (6, None));
    assert!(e.reason.contains("GM[2]"), "{e}");
    assert_eq!(ok(&records[6]).actions.len(), 2);
}

#[test]
fn a_syntax_error_ends_the_collection_and_keeps_the_games_before_it() {
    // Truncated in the middle of a value: the third move is not whole.
    let records = read("(;GM[1]SZ[9];B[ee])(;GM[1]SZ[9];B[ee];W[dd];B[c");
    assert_eq!(records.len(), 2);
    ok(&records[0]);
    let e = bad(&records[1]);
    assert_eq!((e.game, e.move_number), (2, Some(3)));
    assert!(e.reason.contains("unterminated property value"), "{e}");

    // Truncated after a whole move: the tree is never closed.
    let records = read("(;GM[1]SZ[9];B[ee];W[dd]");
    let e = bad(&records[0]);
    assert_eq!((e.game, e.move_number), (1, Some(3)));
    assert!(e.reason.contains("missing `)`"), "{e}");

    // Broken syntax: a stray `]`; the games after it are lost with it.
    let records = read("(;GM[1]SZ[9];B[ee])(;GM[1]SZ[9];B[ee];W[dd]];B[cc])(;GM[1]SZ[9])");
    assert_eq!(records.len(), 2);
    let e = bad(&records[1]);
    assert_eq!((e.game, e.move_number), (2, Some(3)));
    assert!(e.reason.contains("unexpected ']'"), "{e}");

    // An identifier with no upper-case letter breaks the node it is in.
    let records = read("(;GM[1]SZ[9];B[ee]x[1];W[dd])");
    let e = bad(&records[0]);
    assert_eq!((e.game, e.move_number), (1, Some(1)));
    assert!(e.reason.contains("without an uppercase letter"), "{e}");

    // Text between games, and a text with no game at all.
    let records = read("(;GM[1]SZ[9]) junk (;GM[1])");
    assert_eq!(records.len(), 2);
    assert!(bad(&records[1]).reason.contains("expected `(`"));
    let records = read(" \r\n");
    assert_eq!(records.len(), 1);
    assert!(bad(&records[0]).reason.contains("no game tree"));
}

#[test]
fn size_and_komi_come_from_the_record() {
    for size in [2, 5, 13, 19] {
        let records = read(&format!("(;GM[1]SZ[{size}]KM[-2])"));
        let r = ok(&records[0]);
        assert_eq!(r.start.size(), size);
        assert_eq!(r.start.komi(), -2.0);
    }
    // No SZ: SGF's default, 19.
    assert_eq!(ok(&read("(;GM[1])")[0]).start.size(), 19);
    for bad_size in ["1", "20", "9:13"] {
        let records = read(&format!("(;GM[1]SZ[{bad_size}])"));
        assert_eq!(bad(&records[0]).move_number, None, "{bad_size}");
    }
}

#[test]
fn a_byte_order_mark_is_skipped() {
    let records = read("\u{feff}(;GM[1]SZ[9];B[ee])");
    assert_eq!(ok(&records[0]).actions.len(), 1);
}

//! Xiangqi PGN: every notation and encoding the reader takes, bad files and their errors, and
//! round trips through the writers (PGN files; WXF and Chinese move text over random games).

use games::xiangqi::chinese::{chinese_notation, parse_chinese};
use games::xiangqi::fen::parse_move;
use games::xiangqi::pgn::{
    notation_of, parse_move_text, read_pgn, read_pgn_games, write_pgn, MoveTextError, Notation,
};
use games::xiangqi::wxf::{parse_wxf, wxf_notation};
use games::xiangqi::{Move, Xiangqi};
use games::{Game, GameRecord, Outcome, Player, RecordError};
use rand::rngs::SmallRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;

/// 中炮对屏风马 in ICCS: the line every notation test below writes its own way.
const OPENING: [&str; 12] = [
    "h2e2", "h9g7", "h0g2", "i9h9", "i0h0", "b9c7", "c3c4", "g6g5", "h0h6", "h7i7", "h6g6", "i7i8",
];

fn opening() -> Vec<Move> {
    OPENING.iter().map(|m| parse_move(m).unwrap()).collect()
}

fn read_one(text: &str) -> GameRecord<Xiangqi> {
    let mut games = read_pgn(text.as_bytes());
    assert_eq!(games.len(), 1, "{text}");
    games
        .pop()
        .unwrap()
        .unwrap_or_else(|e| panic!("{e}\n{text}"))
}

fn read_err(text: &str) -> RecordError {
    let mut games = read_pgn(text.as_bytes());
    assert_eq!(games.len(), 1, "{text}");
    games.pop().unwrap().expect_err(text)
}

#[test]
fn iccs_in_every_spelling() {
    let text = "[Game \"Chinese Chess\"]\n[Format \"ICCS\"]\n\n\
        1. h2e2 h9-g7 2. H0-G2 I9H9 3.i0h0 b9c7\n4. c3-c4 1... g6g5 5. h0h6 h7i7 6. h6g6 i7i8 *\n";
    let g = read_one(text);
    assert_eq!(g.actions, opening());
    assert_eq!(g.result, None);
}

#[test]
fn wxf_with_every_sideways_mark() {
    let text = "[Game \"Chinese Chess\"]\n[Format \"WXF\"]\n\n\
        1. C2.5 H8+7 2. H2+3 R9=8 3. R1.2 H2+3 4. P7+1 p7+1 5. R2+6 C89 6. r2.3 C9-1\n";
    assert_eq!(read_one(text).actions, opening());
}

#[test]
fn chinese_simplified_traditional_and_every_numeral() {
    for text in [
        "1. 炮二平五 马８进７ 2. 马二进三 车９平８ 3. 车一平二 马２进３ \
         4. 兵七进一 卒７进１ 5. 车二进六 炮８平９ 6. 车二平三 炮９退１",
        "1. 砲二平五 馬8進7 2. 傌二進三 車9平8 3. 俥一平二 馬2進3 \
         4. 兵七進一 卒7進1 5. 俥二進六 砲8平9 6. 俥二平三 包9退1",
        // Chinese numerals for Black too, and one move number glued to its move.
        "1.炮二平五 马八进七 2.马二进三 车九平八 3.车一平二 马二进三 \
         4.兵七进一 卒七进一 5.车二进六 炮八平九 6.车二平三 炮九退一",
    ] {
        assert_eq!(read_one(text).actions, opening(), "{text}");
    }
}

#[test]
fn notations_mix_within_one_game() {
    let text = "1. h2e2 马８进７ 2. H2+3 r9.8 3. 车一平二 b9-c7 4. P7+1 卒7进1 5. h0h6 C8.9 \
                6. 车二平三 炮９退１";
    assert_eq!(read_one(text).actions, opening());
    assert_eq!(notation_of("h2-e2"), Some(Notation::Iccs));
    assert_eq!(notation_of("C2.5"), Some(Notation::Wxf));
    assert_eq!(notation_of("炮二平五"), Some(Notation::Chinese));
    assert_eq!(notation_of("hello"), None);
}

#[test]
fn comments_variations_nags_crlf_and_bom() {
    let text = "\u{feff}[Game \"Chinese Chess\"]\r\n[Red \"许银川\"]\r\n[Black \"吕钦\"]\r\n\
        [Result \"1-0\"]\r\n; a line comment\r\n\r\n\
        1. h2e2 {中炮\r\n over two lines} h9g7 $1 2. h0g2! (2. b0c2 {a sideline} b9c7) i9h9?!\r\n\
        3. i0h0 b9c7 4. c3c4 g6g5 5. h0h6 h7i7 6. h6g6 i7i8 1-0\r\n";
    let games = read_pgn_games(text.as_bytes());
    let g = games[0].as_ref().unwrap();
    assert_eq!(g.record.actions, opening());
    assert_eq!(g.tag("red"), Some("许银川"));
    assert_eq!(g.tag("Black"), Some("吕钦"));
    assert_eq!(g.record.result, Some(Outcome::Win(Player::First)));
    assert_eq!(g.record.result_text.as_deref(), Some("1-0"));
}

#[test]
fn gbk_files_are_read() {
    let text =
        "[Game \"Chinese Chess\"]\n[Red \"胡荣华\"]\n[Black \"杨官璘\"]\n[Result \"0-1\"]\n\n\
        1. 炮二平五 马８进７ 2. 马二进三 车９平８ 3. 车一平二 马２进３\n\
        4. 兵七进一 卒７进１ 5. 车二进六 炮８平９ 6. 车二平三 炮９退１ 0-1\n";
    let (bytes, _, unmappable) = encoding_rs::GBK.encode(text);
    assert!(!unmappable);
    assert!(
        std::str::from_utf8(&bytes).is_err(),
        "the test needs non-UTF-8 bytes"
    );
    let games = read_pgn_games(&bytes);
    let g = games[0].as_ref().unwrap();
    assert_eq!(g.record.actions, opening());
    assert_eq!(g.tag("Red"), Some("胡荣华"));
    assert_eq!(g.record.result, Some(Outcome::Win(Player::Second)));
}

#[test]
fn several_games_results_and_a_fen_start() {
    let text = "[Game \"Chinese Chess\"]\n[Result \"1-0\"]\n1. h2e2 h9g7 1-0\n\n\
        [Game \"Chinese Chess\"]\n[Result \"0-1\"]\n1. C2.5 C8.5 0-1\n\
        [Result \"1/2-1/2\"]\n1. 炮二平五 1/2-1/2\n\
        [Event \"no result tag, a marker\"]\n1. h2e2 0-1\n\
        [Event \"unfinished\"]\n[Result \"*\"]\n1. h2e2 *\n\
        [Event \"nothing at all\"]\n1. h2e2\n\
        [FEN \"rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C2C4/9/RNBAKABNR b - - 0 1\"]\n\
        1... h7e7 2. h0g2 马８进７ *\n\
        1. h2e2 h9g7 0-1 1. b0c2\n";
    let games = read_pgn(text.as_bytes());
    let results: Vec<Option<Outcome>> = games.iter().map(|g| g.as_ref().unwrap().result).collect();
    assert_eq!(
        results,
        [
            Some(Outcome::Win(Player::First)),
            Some(Outcome::Win(Player::Second)),
            Some(Outcome::Draw),
            Some(Outcome::Win(Player::Second)),
            None,
            None,
            None,
            Some(Outcome::Win(Player::Second)),
            None,
        ]
    );
    let fen_game = games[6].as_ref().unwrap();
    assert_eq!(fen_game.start.side(), games::xiangqi::Side::Black);
    let names: Vec<String> = fen_game.actions.iter().map(|m| m.to_string()).collect();
    assert_eq!(names, ["h7e7", "h0g2", "h9g7"]);
    // Movetext after a result marker is the next game.
    assert_eq!(games[8].as_ref().unwrap().actions.len(), 1);
}

/// Two red cannons on file 五 and two black rooks on file ３.
const TANDEM: &str = "3k5/9/9/2r6/9/2r6/4C4/9/4C4/5K3 w - - 0 1";

#[test]
fn front_and_rear_pieces_in_every_notation() {
    let front_back = parse_move("e3e2").unwrap();
    let rear_side = parse_move("e1a1").unwrap();
    for (text, expected) in [
        ("前炮退一", front_back),
        ("前砲退1", front_back),
        ("炮前退一", front_back),
        ("C+-1", front_back),
        ("+C-1", front_back),
        ("c+-1", front_back),
        ("后炮平九", rear_side),
        ("後炮平9", rear_side),
        ("C-.9", rear_side),
        ("-C.9", rear_side),
        ("-C=9", rear_side),
    ] {
        let text = format!("[FEN \"{TANDEM}\"]\n1. {text}");
        assert_eq!(read_one(&text).actions, [expected], "{text}");
    }
    // Black's rooks: the front one (c4, nearer Red), then the rear one (c6).
    let text = format!("[FEN \"{TANDEM}\"]\n1. e3e2 前车进一 2. e2e3 R-.5");
    let names: Vec<String> = read_one(&text)
        .actions
        .iter()
        .map(|m| m.to_string())
        .collect();
    assert_eq!(names, ["e3e2", "c4c3", "e2e3", "c6e6"]);
}

/// Five red soldiers on file 九 (a5 to a9).
const FIVE_ON_A_FILE: &str = "P4k3/P8/P8/P8/P8/9/9/9/9/3K5 w - - 0 1";

#[test]
fn tandem_soldiers() {
    // Three soldiers on file 五, then five, then two files with several.
    let three = "5k3/9/4P4/4P4/4P4/9/9/9/9/3K5 w - - 0 1";
    for (text, m) in [
        ("前兵平四", "e7f7"),
        ("中兵平四", "e6f6"),
        ("后兵平四", "e5f5"),
        ("P+.4", "e7f7"),
        ("P5.4", "e6f6"),
        ("P-.4", "e5f5"),
    ] {
        let g = read_one(&format!("[FEN \"{three}\"]\n{text}"));
        assert_eq!(g.actions[0].to_string(), m, "{text}");
    }
    let five = FIVE_ON_A_FILE;
    for (text, m) in [
        ("一兵平八", "a9b9"),
        ("二兵平八", "a8b8"),
        ("三兵平八", "a7b7"),
        ("四兵平八", "a6b6"),
        ("五兵平八", "a5b5"),
        ("++.8", "a9b9"),
        ("P+.8", "a8b8"),
        ("P9.8", "a7b7"),
        ("P-.8", "a6b6"),
        ("--.8", "a5b5"),
    ] {
        let g = read_one(&format!("[FEN \"{five}\"]\n{text}"));
        assert_eq!(g.actions[0].to_string(), m, "{text}");
    }
    // Files 三 (g: g7, g6, g5) and 七 (c: c6, c5).
    let two_files = "5k3/9/6P2/2P3P2/2P3P2/9/9/9/9/3K5 w - - 0 1";
    for (text, m) in [
        ("一兵平四", "g7f7"),
        ("二兵平四", "g6f6"),
        ("三兵平四", "g5f5"),
        ("四兵平六", "c6d6"),
        ("五兵平六", "c5d5"),
        ("前兵三平四", "g7f7"),
        ("后三平四", "g5f5"),
        ("3+.4", "g7f7"),
        ("33.4", "g6f6"),
        ("3-.4", "g5f5"),
        ("7+.6", "c6d6"),
        ("7-.6", "c5d5"),
    ] {
        let g = read_one(&format!("[FEN \"{two_files}\"]\n{text}"));
        assert_eq!(g.actions[0].to_string(), m, "{text}");
    }
}

#[test]
fn bad_moves_name_game_and_ply() {
    let text = "[Event \"good\"]\n1. h2e2 h9g7 *\n\
        [Event \"unknown text\"]\n1. h2e2 h9g7 2. 炮十平五\n\
        [Event \"illegal\"]\n1. h2e2 h9g7 2. a0a5\n\
        [Event \"ambiguous\"]\n[FEN \"5k3/9/9/9/9/9/4R4/9/4R4/3K5 w - - 0 1\"]\n1. 车五平四\n\
        [Event \"good again\"]\n1. C2.5 *\n";
    let games = read_pgn(text.as_bytes());
    assert_eq!(games.len(), 5);
    assert!(games[0].is_ok() && games[4].is_ok());
    let unknown = games[1].as_ref().unwrap_err();
    assert_eq!((unknown.game, unknown.move_number), (2, Some(3)));
    assert!(unknown.reason.contains("2. 炮十平五"), "{unknown}");
    assert!(unknown.reason.contains("not a move in"), "{unknown}");
    assert_eq!(
        unknown.to_string().split(':').next(),
        Some("game 2, move 3")
    );
    let illegal = games[2].as_ref().unwrap_err();
    assert_eq!((illegal.game, illegal.move_number), (3, Some(3)));
    assert!(illegal.reason.contains("not a legal move"), "{illegal}");
    let ambiguous = games[3].as_ref().unwrap_err();
    assert_eq!((ambiguous.game, ambiguous.move_number), (4, Some(1)));
    assert!(ambiguous.reason.contains("ambiguous"), "{ambiguous}");
    assert!(ambiguous.reason.contains("e3f3") && ambiguous.reason.contains("e1f1"));
}

#[test]
fn black_move_numbers_in_errors() {
    let e = read_err("1. h2e2 h9g7 2. h0g2 车９进９");
    assert_eq!(e.move_number, Some(4));
    assert!(e.reason.starts_with("2... 车９进９ (line 1)"), "{e}");
}

#[test]
fn broken_structure() {
    let e = read_err("[Event \"x\"]\n1. h2e2 {never closed h9g7\n2. h0g2\n");
    assert_eq!(e.move_number, Some(2));
    assert!(e.reason.contains("comment opened on line 2"), "{e}");
    let e = read_err("1. h2e2 (1. b0c2 h9g7\n");
    assert!(e.reason.contains("variation opened on line 1"), "{e}");
    // A tag with no closing quote or bracket spoils its game only.
    let games = read_pgn(b"[Event \"broken]\n1. h2e2\n[Event \"fine\"]\n1. h2e2 *\n");
    assert_eq!(games.len(), 2);
    let e = games[0].as_ref().unwrap_err();
    assert_eq!((e.game, e.move_number), (1, None));
    assert!(e.reason.contains("tag on line 1"), "{e}");
    assert!(games[1].is_ok());
    let e = read_err("[FEN \"rnbakabnr/9 w\"]\n1. h2e2");
    assert!(e.reason.starts_with("FEN tag"), "{e}");
    let e = read_err("[Game \"Chess\"]\n1. e4 e5");
    assert!(e.reason.contains("not Chinese Chess"), "{e}");
}

#[test]
fn stray_closing_brackets_are_passed_over() {
    let g = read_one("1. h2e2 } h9g7 ] 2. h0g2) i9h9}]\n*");
    let names: Vec<String> = g.actions.iter().map(|m| m.to_string()).collect();
    assert_eq!(names, ["h2e2", "h9g7", "h0g2", "i9h9"]);
}

#[test]
fn moves_after_the_rules_end_the_game_are_an_error() {
    // Red mates at once; a move after the mate is refused.
    let fen = "3k5/9/9/9/9/9/9/9/R8/R3K4 w - - 0 1";
    let ok = read_one(&format!("[FEN \"{fen}\"]\n1. a1d1 1-0"));
    assert_eq!(
        ok.final_state().outcome(),
        Some(Outcome::Win(Player::First))
    );
    let e = read_err(&format!("[FEN \"{fen}\"]\n1. a1d1 d9e9"));
    assert_eq!(e.move_number, Some(2));
    assert!(e.reason.contains("already over (checkmate)"), "{e}");
}

#[test]
fn single_move_parsers() {
    let start = Xiangqi::start();
    let pos = start.position();
    assert_eq!(parse_wxf(pos, "C2.5"), Ok(parse_move("h2e2").unwrap()));
    assert_eq!(
        parse_chinese(pos, "炮二平五"),
        Ok(parse_move("h2e2").unwrap())
    );
    assert_eq!(
        parse_move_text(pos, "h2-e2+"),
        Ok(parse_move("h2e2").unwrap())
    );
    assert_eq!(
        parse_wxf(pos, "炮二平五"),
        Err(MoveTextError::Unreadable("炮二平五".into()))
    );
    assert_eq!(
        parse_chinese(pos, "炮二进九"),
        Err(MoveTextError::Illegal("炮二进九".into()))
    );
}

/// The states of a random game (the start first) and the moves between them.
fn random_game(seed: u64, plies: usize) -> (Vec<Xiangqi>, Vec<Move>) {
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut state = Xiangqi::start();
    let mut states = vec![state.clone()];
    let mut played = Vec::new();
    let mut moves = Vec::new();
    for _ in 0..plies {
        moves.clear();
        state.legal_actions(&mut moves);
        let Some(&m) = moves.choose(&mut rng) else {
            break;
        };
        state.play_unchecked(m);
        states.push(state.clone());
        played.push(m);
    }
    (states, played)
}

/// Every legal move of `state`, written in WXF and in Chinese, reads back to itself.
fn check_round_trips(state: &Xiangqi) -> usize {
    let pos = state.position();
    let moves = state.legal_moves();
    for &m in moves.as_slice() {
        let w = wxf_notation(pos, m);
        assert_eq!(parse_wxf(pos, &w), Ok(m), "WXF {w} in {state:?}");
        assert_eq!(parse_move_text(pos, &w), Ok(m), "WXF {w} in {state:?}");
        let c = chinese_notation(pos, m);
        assert_eq!(parse_chinese(pos, &c), Ok(m), "Chinese {c} in {state:?}");
        assert_eq!(parse_move_text(pos, &c), Ok(m), "Chinese {c} in {state:?}");
    }
    moves.len()
}

#[test]
fn wxf_and_chinese_round_trip_over_random_games() {
    let mut checked = 0;
    for seed in 0..40 {
        for state in random_game(seed, 300).0 {
            checked += check_round_trips(&state);
        }
    }
    assert!(checked > 50_000, "{checked}");
}

#[test]
fn wxf_and_chinese_round_trip_with_tandem_pieces() {
    for fen in [
        FIVE_ON_A_FILE,
        "P4k3/P8/P8/P8/9/9/9/9/9/3K5 w - - 0 1",
        "5k3/9/4P4/4P4/4P4/9/9/9/9/3K5 w - - 0 1",
        "5k3/9/9/2P3P2/2P3P2/9/9/9/9/3K5 w - - 0 1",
        "5k3/9/6P2/2P3P2/2P3P2/9/9/9/9/3K5 w - - 0 1",
        "5k3/9/9/4p4/4p4/4p4/4p4/4p4/9/3K5 b - - 0 1",
        "5k3/9/9/9/2p3p2/2p3p2/2p6/9/9/3K5 b - - 0 1",
        "5k3/9/9/9/9/2B6/9/3A5/9/2BAK4 w - - 0 1",
        TANDEM,
    ] {
        assert!(
            check_round_trips(&Xiangqi::from_fen(fen).unwrap()) > 0,
            "{fen}"
        );
    }
}

#[test]
fn written_pgn_reads_back() {
    let mut file = Vec::new();
    let mut expected = Vec::new();
    for seed in 0..6 {
        let (states, moves) = random_game(100 + seed, 150);
        // Some games start from a position reached in play, Black to move in one of them.
        let from = [0, 0, 7, 20, 0, 33][seed as usize].min(moves.len());
        let start = states[from].clone();
        let last = states.last().unwrap();
        let actions = moves[from..].to_vec();
        let result = [
            last.outcome(),
            Some(Outcome::Draw),
            Some(Outcome::Win(Player::Second)),
            None,
            Some(Outcome::Win(Player::First)),
            None,
        ][seed as usize];
        let record = GameRecord {
            start,
            actions,
            result,
            result_text: None,
        };
        let text = write_pgn(
            &record,
            &[
                ("Event", "test \"quoted\""),
                ("Red", "engine"),
                ("Date", "2026.01.01"),
            ],
        );
        assert!(text.starts_with("[Game \"Chinese Chess\"]\n[Event \"test \\\"quoted\\\"\"]"));
        assert!(text.contains("[Format \"ICCS\"]"));
        assert_eq!(text.contains("[FEN "), from != 0, "{text}");
        let movetext = text.lines().filter(|l| !l.starts_with('['));
        assert!(movetext.clone().all(|l| l.len() <= 80), "{text}");
        file.extend_from_slice(text.as_bytes());
        file.push(b'\n');
        expected.push(record);
    }
    let games = read_pgn_games(&file);
    assert_eq!(games.len(), expected.len());
    for (g, want) in games.iter().zip(&expected) {
        let g = g.as_ref().unwrap();
        assert_eq!(g.record.actions, want.actions);
        assert_eq!(g.record.start.to_text(), want.start.to_text());
        assert_eq!(g.record.result, want.result);
        assert_eq!(g.tag("Event"), Some("test \"quoted\""));
        assert_eq!(g.tag("Red"), Some("engine"));
        assert_eq!(g.tag("Black"), Some("?"));
    }
}

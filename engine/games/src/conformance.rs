//! The one harness every game passes: it plays random games and checks, in every position, the
//! contracts written on [`Game`](crate::Game) and [`Encoding`]. A game's own tests call
//! [`check_random_games`] with its start positions; the traits that other crates define beside
//! the rules (the search's `Tactics`, self-play's `Shaping`) add their checks through
//! [`check_random_games_with`]. Nothing here knows any particular game.

use std::collections::HashSet;

use rand::rngs::SmallRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;

use crate::Encoding;

/// What one run of the harness covered, so a test can assert that it really exercised the game.
#[derive(Clone, Debug, Default)]
pub struct Coverage {
    pub games: usize,
    pub finished_games: usize,
    pub positions: usize,
    pub actions_checked: usize,
}

/// Plays `games` random games from `start` (at most `max_plies` each) and checks every position
/// they pass through. Panics with the position's text on the first broken contract.
pub fn check_random_games<G: Encoding>(
    start: &G,
    games: usize,
    max_plies: usize,
    seed: u64,
) -> Coverage {
    check_random_games_with(start, games, max_plies, seed, |_| {})
}

/// [`check_random_games`] that also runs `more` on every position it checks: the contracts of
/// a trait defined outside this crate.
pub fn check_random_games_with<G: Encoding>(
    start: &G,
    games: usize,
    max_plies: usize,
    seed: u64,
    mut more: impl FnMut(&G),
) -> Coverage {
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut cov = Coverage::default();
    for _ in 0..games {
        let mut state = start.clone();
        for _ in 0..max_plies {
            check_position(&state, &mut cov);
            more(&state);
            let mut actions = Vec::new();
            state.legal_actions(&mut actions);
            let Some(&action) = actions.choose(&mut rng) else {
                break;
            };
            state.play(action).unwrap_or_else(|e| {
                panic!(
                    "legal action {action:?} refused in {}: {e}",
                    state.to_text()
                )
            });
        }
        cov.games += 1;
        if state.outcome().is_some() {
            cov.finished_games += 1;
            check_position(&state, &mut cov);
            more(&state);
        }
    }
    cov
}

/// Checks every contract of [`Game`](crate::Game) and [`Encoding`] in one position.
pub fn check_position<G: Encoding>(state: &G, cov: &mut Coverage) {
    let text = state.to_text();
    let shape = state.shape();
    let mut legal = Vec::new();
    state.legal_actions(&mut legal);
    cov.positions += 1;

    assert_eq!(
        legal.is_empty(),
        state.outcome().is_some(),
        "legal actions empty ⇔ game over, in {text}"
    );
    match state.end_reason() {
        Some(r) => assert!(
            state.outcome().is_some() && !r.trim().is_empty(),
            "end reason {r:?} without an outcome, or empty, in {text}"
        ),
        None => assert!(
            state.outcome().is_none(),
            "game over without an end reason in {text}"
        ),
    }
    let legal_set: HashSet<_> = legal.iter().copied().collect();
    assert_eq!(
        legal_set.len(),
        legal.len(),
        "duplicate legal actions in {text}"
    );

    // The text format reads back to the same position.
    let reread = state
        .parse_position(&text)
        .unwrap_or_else(|e| panic!("own text {text} does not parse: {e}"));
    assert_eq!(reread.to_text(), text, "text round trip");

    // Each legal action round-trips through its policy index and its notation, and plays.
    let me = state.to_act();
    let mut indices = HashSet::new();
    for &a in &legal {
        let i = state.action_index(a);
        assert!(i < shape.policy_size, "index {i} out of range in {text}");
        assert!(
            indices.insert(i),
            "two legal actions share index {i} in {text}"
        );
        assert_eq!(
            state.index_action(i),
            Some(a),
            "index round trip of {a:?} in {text}"
        );
        let t = state.format_action(a);
        assert_eq!(
            state.parse_action(&t).as_ref(),
            Ok(&a),
            "text round trip of {t} in {text}"
        );
        assert!(state.is_legal(a), "is_legal rejects legal {t} in {text}");
        let mut next = state.clone();
        next.play(a)
            .unwrap_or_else(|e| panic!("{t} refused in {text}: {e}"));
        cov.actions_checked += 1;
    }
    // `play` accepts nothing else: every action any index names is legal iff listed.
    for i in 0..shape.policy_size {
        if let Some(a) = state.index_action(i) {
            let listed = legal_set.contains(&a);
            assert_eq!(state.is_legal(a), listed, "is_legal({a:?}) in {text}");
            let mut next = state.clone();
            let before = next.to_text();
            let played = next.play(a).is_ok();
            assert_eq!(played, listed, "play({a:?}) accepted = {played} in {text}");
            if !played {
                assert_eq!(next.to_text(), before, "a refused play changed the state");
            }
        }
    }

    // The encoding has the declared shape and holds only finite numbers.
    let mut planes = vec![f32::NAN; shape.input_len()];
    state.encode(&mut planes);
    assert!(
        planes.iter().all(|x| x.is_finite()),
        "encoding not finite in {text}"
    );

    // The final targets: one number per point in [−1, 1] and a finite score, each the
    // negation of the opponent's view.
    let (ownership, score) = (state.final_ownership(me), state.final_score(me));
    if let Some(own) = &ownership {
        assert_eq!(
            own.len(),
            shape.height * shape.width,
            "ownership length in {text}"
        );
        assert!(
            own.iter().all(|o| (-1.0..=1.0).contains(o)),
            "ownership outside [-1, 1] in {text}"
        );
        let theirs = state
            .final_ownership(me.opponent())
            .expect("both views or neither");
        assert!(
            own.iter().zip(&theirs).all(|(a, b)| *a == -*b),
            "the two players' ownership are not opposite in {text}"
        );
    }
    if let Some(v) = score {
        assert!(v.is_finite(), "score {v} in {text}");
        assert_eq!(
            state.final_score(me.opponent()),
            Some(-v),
            "score views in {text}"
        );
    }

    // Each symmetry maps legal actions to legal actions and commutes with play.
    let syms = state.symmetries();
    assert!(!syms.is_empty() && syms[0] == crate::Symmetry::IDENTITY);
    for &sym in syms {
        let image = state.transform(sym);
        // Training shows stored planes through a symmetry without the rules (`shards::augment`):
        // the image's encoding must be the planes moved point by point.
        let mut image_planes = vec![f32::NAN; shape.input_len()];
        image.encode(&mut image_planes);
        let (h, w) = (shape.height, shape.width);
        for (i, &x) in planes.iter().enumerate() {
            let (plane, rank, file) = (i / (h * w), i / w % h, i % w);
            let (r2, f2) = sym.map(rank, file, h, w);
            assert_eq!(
                image_planes[plane * h * w + r2 * w + f2],
                x,
                "symmetry {sym:?} does not move plane {plane} point by point in {text}"
            );
        }
        // Ownership targets move like a plane; the score does not move.
        if let Some(own) = &ownership {
            let image_own = image
                .final_ownership(me)
                .expect("an image has ownership too");
            for (i, &o) in own.iter().enumerate() {
                let (r2, f2) = sym.map(i / w, i % w, h, w);
                assert_eq!(
                    image_own[r2 * w + f2],
                    o,
                    "symmetry {sym:?} does not move ownership point by point in {text}"
                );
            }
        }
        assert_eq!(
            image.final_score(me),
            score,
            "symmetry {sym:?} changed the score"
        );
        let mut image_legal = Vec::new();
        image.legal_actions(&mut image_legal);
        let mapped: HashSet<_> = legal
            .iter()
            .map(|&a| state.transform_action(sym, a))
            .collect();
        let image_set: HashSet<_> = image_legal.iter().copied().collect();
        assert_eq!(
            mapped, image_set,
            "symmetry {sym:?} of legal actions in {text}"
        );
        assert_eq!(
            image.outcome(),
            state.outcome(),
            "symmetry {sym:?} changed the outcome"
        );
        if let Some(&a) = legal.first() {
            let mut after = state.clone();
            after.play_unchecked(a);
            let mut image_after = image.clone();
            image_after.play_unchecked(state.transform_action(sym, a));
            assert_eq!(
                after.transform(sym).to_text(),
                image_after.to_text(),
                "symmetry {sym:?} does not commute with play in {text}"
            );
        }
    }
}

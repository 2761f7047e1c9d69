//! Win, draw and loss in per mille (UCI's `wdl W D L`, the `UCI_ShowWDL` option) from a score
//! in centipawns, by a logistic model of the engine's own games:
//!
//! win = 1 / (1 + e^((A − s) / B)), loss = 1 / (1 + e^((A + s) / B)), draw = the rest,
//!
//! so that a score of 0 draws with probability 1 − 2 / (1 + e^(A / B)) and a score of ±A is an
//! even chance of the win (or the loss). [`A`] and [`B`] are fitted by maximum likelihood to
//! the scores alpha-beta's moves had and the results of the games they were played in: 400
//! games of depth 5 against depth 4 from random four-move openings, about 48 000 scored moves
//! (`cargo test -p engine --test uci_wdl_fit -- --ignored --nocapture`; docs/xiangqi.md gives
//! its figures). A mate, or a win by a repetition rule (perpetual check or chase), is certain.
//! A network's win/draw/loss head, where the model has one, is shown as it is
//! ([`per_mille`]).

use players::alphabeta::xiangqi::RULE_WIN;
use players::alphabeta::MAX_PLY;

/// The score, in centipawns, at which a win is as likely as not.
pub const A: f64 = 217.0;
/// How fast the chances change with the score, in centipawns.
pub const B: f64 = 220.0;

/// The model's win, draw and loss for the player to move at `score` (see the module's notes).
pub(super) fn from_score(score: i32) -> [u32; 3] {
    if score.abs() >= RULE_WIN - MAX_PLY as i32 {
        return if score > 0 {
            [1000, 0, 0]
        } else {
            [0, 0, 1000]
        };
    }
    let s = score as f64;
    let win = 1.0 / (1.0 + ((A - s) / B).exp());
    let loss = 1.0 / (1.0 + ((A + s) / B).exp());
    per_mille([win as f32, (1.0 - win - loss) as f32, loss as f32])
}

/// Probabilities of a win, a draw and a loss as per mille summing to 1000 (the draw takes
/// what rounding leaves).
pub(super) fn per_mille(p: [f32; 3]) -> [u32; 3] {
    let total: f32 = p.iter().map(|x| x.max(0.0)).sum();
    if total <= 0.0 {
        return [0, 1000, 0];
    }
    let share = |x: f32| ((x.max(0.0) / total) * 1000.0).round() as u32;
    let (w, l) = (share(p[0]), share(p[2]));
    let w = w.min(1000);
    let l = l.min(1000 - w);
    [w, 1000 - w - l, l]
}

#[cfg(test)]
mod tests {
    use super::*;
    use players::alphabeta::xiangqi::MATE;

    #[test]
    fn the_model_is_even_at_zero_and_certain_at_a_mate() {
        let [w, d, l] = from_score(0);
        assert_eq!(w, l, "an even score favours no one");
        assert_eq!(w + d + l, 1000);
        assert_eq!(from_score(MATE - 5), [1000, 0, 0]);
        assert_eq!(from_score(-(MATE - 6)), [0, 0, 1000]);
        assert_eq!(from_score(RULE_WIN - 3), [1000, 0, 0]);
        // A is the score of an even chance to win.
        let [w, _, _] = from_score(A as i32);
        assert_eq!(w, 500);
        // Better scores win more and lose less; every triple sums to 1000.
        let mut last = from_score(-3000);
        for s in (-2900..=3000).step_by(100) {
            let now = from_score(s);
            assert_eq!(now.iter().sum::<u32>(), 1000, "{s}");
            assert!(
                now[0] >= last[0] && now[2] <= last[2],
                "{s}: {now:?} after {last:?}"
            );
            last = now;
        }
        assert_eq!(from_score(100)[0], from_score(-100)[2], "symmetric");
    }

    #[test]
    fn a_head_is_shown_as_it_is() {
        assert_eq!(per_mille([0.5, 0.3, 0.2]), [500, 300, 200]);
        assert_eq!(per_mille([0.3334, 0.3333, 0.3333]), [333, 334, 333]);
        assert_eq!(per_mille([1.0, 0.0, 0.0]), [1000, 0, 0]);
        assert_eq!(per_mille([f32::NAN, 0.0, 0.0]), [0, 1000, 0]);
    }
}

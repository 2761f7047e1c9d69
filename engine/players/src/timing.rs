//! How long one move may take under a clock. The faces keep the clocks their protocols
//! describe (UCI's `go wtime …`, GTP's `time_settings` and `time_left`) and ask here what the
//! next move gets; a guarded tree search then splits that time with alpha-beta
//! ([`crate::guard::GuardSpec::tree_time`]).

use std::time::Duration;

/// The time a clock gives one move: a share of the time `left` (per move to go, else 1/30)
/// plus most of the increment `inc`, never more than half of what is left, less 30 ms for
/// the answer to travel, and 5 ms at least.
pub fn clock_move_time(left: Duration, inc: Duration, moves_to_go: Option<u64>) -> Duration {
    let (left, inc) = (left.as_millis() as u64, inc.as_millis() as u64);
    let share = left / moves_to_go.unwrap_or(30).max(1) + inc * 3 / 4;
    Duration::from_millis(share.min(left / 2).saturating_sub(30).max(5))
}

/// What a clock has left for the next move, in seconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ClockLeft {
    /// Main time: `secs` left, then overtime in which one move gets `overtime`.
    Main { secs: f64, overtime: f64 },
    /// An overtime period: `secs` for the `moves` moves it still holds.
    Period { secs: f64, moves: u32 },
}

/// The time the next move may take under periods of overtime (GTP's clocks): in main time a
/// fortieth of what is left, or an overtime move's time if that is more (the overtime
/// follows); in a period its share of the period; four fifths of that, less 0.1 s for the
/// pipe, and never under 0.05 s.
pub fn period_move_time(left: ClockLeft) -> Duration {
    let share = match left {
        ClockLeft::Main { secs, overtime } => (secs.max(0.0) / 40.0).max(overtime),
        ClockLeft::Period { secs, moves } => secs.max(0.0) / f64::from(moves.max(1)),
    };
    Duration::from_secs_f64((share * 0.8 - 0.1).max(0.05))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clock_gives_a_share_never_more_than_half() {
        let ms = Duration::from_millis;
        assert_eq!(
            clock_move_time(ms(60_000), ms(0), None),
            ms(60_000 / 30 - 30)
        );
        assert!(clock_move_time(ms(1000), ms(0), None) <= ms(500));
        assert_eq!(clock_move_time(ms(0), ms(0), None), ms(5));
    }

    #[test]
    fn a_period_is_shared_by_its_moves_and_main_time_gives_a_fortieth() {
        let secs = |t: Duration| (t.as_secs_f64() * 1000.0).round() / 1000.0;
        let main = ClockLeft::Main {
            secs: 400.0,
            overtime: 0.0,
        };
        assert_eq!(secs(period_move_time(main)), 7.9);
        let period = ClockLeft::Period {
            secs: 30.0,
            moves: 1,
        };
        assert_eq!(secs(period_move_time(period)), 23.9);
        let out = ClockLeft::Main {
            secs: -100.0,
            overtime: 0.0,
        };
        assert_eq!(secs(period_move_time(out)), 0.05);
    }
}

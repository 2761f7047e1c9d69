//! The clock of a GTP game: the time system a controller sets (`time_settings`,
//! `kgs-time_settings`), each colour's time left (counted down by the engine's own moves,
//! corrected by `time_left`), and what it has left for the next move (the share of it that
//! move takes is `players::timing`'s).

use std::time::Duration;

use games::Player;
use players::timing::{period_move_time, ClockLeft};

/// A time system, in whole seconds as GTP sends them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeSystem {
    /// Main time, then periods of `byo` seconds for `stones` stones each (GTP's
    /// `time_settings`; Canadian byo-yomi). Absolute time is `byo` 0; `byo` > 0 with `stones`
    /// 0 means no limit, as GTP says.
    Canadian { main: u32, byo: u32, stones: u32 },
    /// Main time, then `periods` periods of `period` seconds: a move made within a period
    /// keeps it, a period used up is lost (Japanese byo-yomi, `kgs-time_settings byoyomi`).
    Byoyomi {
        main: u32,
        period: u32,
        periods: u32,
    },
}

impl TimeSystem {
    /// Whether this system limits time at all.
    fn limits(self) -> bool {
        match self {
            TimeSystem::Canadian { main, byo, stones } => {
                !(byo > 0 && stones == 0) && (main > 0 || byo > 0)
            }
            TimeSystem::Byoyomi {
                main,
                period,
                periods,
            } => main > 0 || (period > 0 && periods > 0),
        }
    }

    /// The time each colour starts with: seconds, and the stones (Canadian) or periods
    /// (byo-yomi) of the current period, 0 while in main time.
    fn start(self) -> (f64, u32) {
        match self {
            TimeSystem::Canadian { main, .. } | TimeSystem::Byoyomi { main, .. } if main > 0 => {
                (f64::from(main), 0)
            }
            TimeSystem::Canadian { byo, stones, .. } => (f64::from(byo), stones),
            TimeSystem::Byoyomi {
                period, periods, ..
            } => (f64::from(period), periods),
        }
    }
}

/// Both colours' clocks under one time system; no system means no limit.
#[derive(Clone, Debug, Default)]
pub struct GameClock {
    system: Option<TimeSystem>,
    /// Per colour, seconds and stones (Canadian) or periods (byo-yomi) left in the current
    /// period; 0 stones or periods: main time.
    pub(crate) left: [Option<(f64, u32)>; 2],
}

impl GameClock {
    /// New settings (`None`: no limit); both clocks start again.
    pub fn set(&mut self, system: Option<TimeSystem>) {
        self.system = system;
        self.reset();
    }

    /// Both colours' time back to the start of the settings (a new game).
    pub fn reset(&mut self) {
        self.left = [self.system.map(TimeSystem::start); 2];
    }

    /// `time_left`: what the controller says `who` has (seconds, and stones or periods; 0 in
    /// main time).
    pub fn set_left(&mut self, who: Player, secs: u32, count: u32) {
        self.left[who.index()] = Some((f64::from(secs), count));
    }

    /// Takes `used` off `who`'s clock: main time first, then the periods.
    pub fn account(&mut self, who: Player, used: Duration) {
        let Some(system) = self.system else {
            return;
        };
        let Some((secs, count)) = &mut self.left[who.index()] else {
            return;
        };
        *secs -= used.as_secs_f64();
        match system {
            TimeSystem::Canadian { byo, stones, .. } => {
                if *count == 0 {
                    if *secs > 0.0 || stones == 0 {
                        return;
                    }
                    // Main time ran out during this move: it ends in the first period.
                    *secs += f64::from(byo);
                    *count = stones;
                }
                *count -= 1;
                if *count == 0 {
                    // The period's stones are all played: a new period starts.
                    *secs = f64::from(byo);
                    *count = stones;
                }
            }
            TimeSystem::Byoyomi {
                period, periods, ..
            } => {
                if *count == 0 {
                    if *secs > 0.0 || periods == 0 {
                        return;
                    }
                    // Main time ran out during this move: the rest comes off the periods.
                    *secs += f64::from(period);
                    *count = periods;
                }
                // Each period the move used up is lost; the next move has a whole one.
                while *secs <= 0.0 && *count > 1 {
                    *secs += f64::from(period);
                    *count -= 1;
                }
                *secs = f64::from(period);
            }
        }
    }

    /// The time `who`'s next move may take, if the clock limits it, as
    /// `players::timing::period_move_time` gives it: in a Canadian period the period is shared
    /// by its stones left, in a byo-yomi period it is the move's; in main time the overtime
    /// move's time follows (a Canadian period's share per stone, a byo-yomi period).
    pub fn move_time(&self, who: Player) -> Option<Duration> {
        let system = self.system.filter(|s| s.limits())?;
        let (secs, count) = self.left[who.index()]?;
        let left = match system {
            TimeSystem::Canadian { .. } if count > 0 => ClockLeft::Period { secs, moves: count },
            TimeSystem::Byoyomi { .. } if count > 0 => ClockLeft::Period { secs, moves: 1 },
            TimeSystem::Canadian { byo, stones, .. } => ClockLeft::Main {
                secs,
                overtime: f64::from(byo) / f64::from(stones.max(1)),
            },
            TimeSystem::Byoyomi {
                period, periods, ..
            } => ClockLeft::Main {
                secs,
                overtime: if periods > 0 { f64::from(period) } else { 0.0 },
            },
        };
        Some(period_move_time(left))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(t: Option<Duration>) -> Option<f64> {
        t.map(|t| (t.as_secs_f64() * 1000.0).round() / 1000.0)
    }

    #[test]
    fn byo_yomi_keeps_a_period_that_a_move_did_not_use_up() {
        let mut c = GameClock::default();
        c.set(Some(TimeSystem::Byoyomi {
            main: 10,
            period: 30,
            periods: 3,
        }));
        // Main time: a period is more than a fortieth of ten seconds.
        assert_eq!(secs(c.move_time(Player::First)), Some(23.9));
        // Twelve seconds: main time ends, the move ends within the first period.
        c.account(Player::First, Duration::from_secs(12));
        assert_eq!(c.left[0], Some((30.0, 3)));
        assert_eq!(secs(c.move_time(Player::First)), Some(23.9));
        // A move of 70 seconds uses up two periods.
        c.account(Player::First, Duration::from_secs(70));
        assert_eq!(c.left[0], Some((30.0, 1)));
        // White's clock is its own.
        assert_eq!(c.left[1], Some((10.0, 0)));
        // Byo-yomi alone; no periods and no main time is no limit.
        c.set(Some(TimeSystem::Byoyomi {
            main: 0,
            period: 5,
            periods: 2,
        }));
        assert_eq!(secs(c.move_time(Player::Second)), Some(3.9));
        c.set(Some(TimeSystem::Byoyomi {
            main: 0,
            period: 5,
            periods: 0,
        }));
        assert_eq!(c.move_time(Player::Second), None);
        c.set(None);
        assert_eq!(c.move_time(Player::Second), None);
    }

    #[test]
    fn absolute_time_is_canadian_without_periods() {
        let mut c = GameClock::default();
        c.set(Some(TimeSystem::Canadian {
            main: 400,
            byo: 0,
            stones: 0,
        }));
        assert_eq!(secs(c.move_time(Player::First)), Some(7.9));
        c.account(Player::First, Duration::from_secs(500));
        // Out of time: still a little.
        assert_eq!(secs(c.move_time(Player::First)), Some(0.05));
    }
}

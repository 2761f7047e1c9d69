//! The rules a Go game is played by: board size, komi, suicide, ko and the move cap.

use serde::{Deserialize, Serialize};

use super::board::{MAX_SIZE, MIN_SIZE};

/// Which repetitions are forbidden.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KoRule {
    /// No stone may recreate any earlier whole-board position (the default).
    #[default]
    PositionalSuperko,
    /// Only the immediate recapture of a single stone is forbidden.
    Simple,
}

/// When a game that runs too long is stopped and scored as it stands. Configs write `auto`,
/// `unlimited` or `{moves: N}` (YAML's tagged `!moves N` is read too); N is at least 1.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MoveCap {
    /// After 2·N² moves (passes included): the self-play default.
    #[default]
    Auto,
    /// Never (GTP play, where the controller ends the game).
    Unlimited,
    /// After this many moves.
    Moves(u32),
}

impl<'de> Deserialize<'de> for MoveCap {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::{self, EnumAccess, MapAccess, VariantAccess};

        const EXPECTED: &str = "a move_cap of `auto`, `unlimited` or `{moves: N}` with N ≥ 1";

        fn moves<E: de::Error>(n: u32) -> Result<MoveCap, E> {
            if n == 0 {
                return Err(E::custom(
                    "move_cap: moves must be at least 1 (`unlimited` means no cap)",
                ));
            }
            Ok(MoveCap::Moves(n))
        }

        struct Visitor;
        impl<'de> de::Visitor<'de> for Visitor {
            type Value = MoveCap;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str(EXPECTED)
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<MoveCap, E> {
                match v {
                    "auto" => Ok(MoveCap::Auto),
                    "unlimited" => Ok(MoveCap::Unlimited),
                    _ => Err(E::invalid_value(de::Unexpected::Str(v), &self)),
                }
            }
            // `{moves: N}`: the form the configs document (and JSON writes).
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<MoveCap, A::Error> {
                let key: String = map
                    .next_key()?
                    .ok_or_else(|| de::Error::invalid_length(0, &self))?;
                if key != "moves" {
                    return Err(de::Error::custom(format!(
                        "move_cap: unknown key `{key}`: expected `{{moves: N}}`"
                    )));
                }
                let n: u32 = map.next_value()?;
                if let Some(extra) = map.next_key::<String>()? {
                    return Err(de::Error::custom(format!(
                        "move_cap: unexpected key `{extra}` after `moves`"
                    )));
                }
                moves(n)
            }
            // `!moves N`: the tagged form serde_yaml writes for this enum.
            fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<MoveCap, A::Error> {
                let (tag, variant): (String, _) = data.variant()?;
                match tag.as_str() {
                    "moves" => moves(variant.newtype_variant::<u32>()?),
                    "auto" => variant.unit_variant().map(|()| MoveCap::Auto),
                    "unlimited" => variant.unit_variant().map(|()| MoveCap::Unlimited),
                    other => Err(de::Error::unknown_variant(
                        other,
                        &["auto", "unlimited", "moves"],
                    )),
                }
            }
        }
        d.deserialize_any(Visitor)
    }
}

/// The variant settings of a game of Go. Read from the `rules` section of a Go config.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GoRules {
    /// Board side, 2 to 19.
    pub size: usize,
    /// Points added to White's area score.
    pub komi: f32,
    /// Whether a move may remove its own group (multi-stone suicide changes the position).
    pub allow_suicide: bool,
    pub ko: KoRule,
    pub move_cap: MoveCap,
}

impl Default for GoRules {
    fn default() -> Self {
        GoRules {
            size: 9,
            komi: 7.5,
            allow_suicide: false,
            ko: KoRule::PositionalSuperko,
            move_cap: MoveCap::Auto,
        }
    }
}

/// Settings that cannot make a game.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum RulesError {
    #[error("board size {0} is outside {MIN_SIZE}..={MAX_SIZE}")]
    Size(usize),
    #[error("komi {0} is not a finite number of points within ±1000")]
    Komi(f32),
}

impl GoRules {
    /// Default rules on an `size × size` board.
    pub fn with_size(size: usize) -> GoRules {
        GoRules {
            size,
            ..GoRules::default()
        }
    }

    pub fn validate(&self) -> Result<(), RulesError> {
        if !(MIN_SIZE..=MAX_SIZE).contains(&self.size) {
            return Err(RulesError::Size(self.size));
        }
        if !self.komi.is_finite() || self.komi.abs() > 1000.0 {
            return Err(RulesError::Komi(self.komi));
        }
        Ok(())
    }

    /// The number of moves after which the game stops, if any.
    pub fn cap(&self) -> Option<u32> {
        match self.move_cap {
            MoveCap::Auto => Some(2 * (self.size * self.size) as u32),
            MoveCap::Unlimited => None,
            MoveCap::Moves(n) => Some(n),
        }
    }
}

//! The one error every config section's `validate` returns: which key is out of range, its
//! value, and what is allowed. The config loader adds the file and the section.

use std::fmt::Display;

/// A setting outside its allowed range.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("`{key}` is {value}; allowed: {allowed}")]
pub struct InvalidSetting {
    pub key: &'static str,
    pub value: String,
    pub allowed: String,
}

impl InvalidSetting {
    /// `Ok` when `ok`, else the error for `key` holding `value`.
    pub fn check(
        ok: bool,
        key: &'static str,
        value: impl Display,
        allowed: impl Display,
    ) -> Result<(), InvalidSetting> {
        if ok {
            Ok(())
        } else {
            Err(InvalidSetting {
                key,
                value: value.to_string(),
                allowed: allowed.to_string(),
            })
        }
    }
}

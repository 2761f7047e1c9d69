//! What every command starts from: [`config`] reads the YAML files (each tool its sections,
//! every value checked, errors naming file, section and key), [`models`] finds and loads the
//! networks they name with their inference settings.

pub mod config;
pub mod fuzzing;
pub mod models;

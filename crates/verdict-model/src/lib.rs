//! verdict-model: the shared vocabulary. Experiments (parsed and validated
//! from TOML, errors carrying file:line:col), factors, levels, cells,
//! metrics, samples, run ids and environments. Serde types with validation
//! and no other behaviour: no processes, no database, no statistics.

pub mod environment;

pub use environment::Environment;

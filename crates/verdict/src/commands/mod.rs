//! One module per subcommand; each exposes its clap `Args` and `run`.

pub(crate) mod ab;
pub(crate) mod agent;
pub(crate) mod bisect;
pub(crate) mod check;
pub(crate) mod compare;
pub(crate) mod copy;
pub(crate) mod doctor;
pub(crate) mod explain;
pub(crate) mod export;
pub(crate) mod history;
pub(crate) mod kconfig;
pub(crate) mod plan;
pub(crate) mod report;
pub(crate) mod run;
pub(crate) mod runs;
pub(crate) mod simulate;
pub(crate) mod work;

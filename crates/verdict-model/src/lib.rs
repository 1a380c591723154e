//! verdict-model: the shared vocabulary. Experiments (parsed and validated
//! from TOML, errors carrying file:line:col), factors, levels, cells,
//! metrics, samples, run ids, environments, kernels built from source
//! and the adaptive state a run records. Serde types with validation
//! and no other behaviour: no processes, no database, no statistics (it
//! re-exports the vocabulary it shares with its neighbours: verdict-parse's
//! `Extractor`, verdict-stats' `Analysis` and `Better`, verdict-exit's
//! `ExitClass`).

pub mod adaptive;
pub mod boot;
pub mod boot_file;
pub mod environment;
pub mod experiment;
pub mod kernel_build;
pub mod metric;
mod placement;
pub mod profile;
pub mod provenance;
pub mod sample;
pub mod shell_guard;
pub mod stored;
pub mod target;

pub use adaptive::{AdaptiveRecord, ComparisonState, ComparisonStatus};
pub use boot::{
    Accelerator, BootPlan, CmdlineMode, HostBoot, LevelBoot, OnBootFailure, Verify, VmSpec,
};
pub use boot_file::{LevelBootError, level_boot, parse_boot_file};
pub use environment::Environment;
pub use experiment::{
    Analysis, Cell, CommandSpec, ComparisonSpec, Experiment, Factor, Level, ModelError, Order,
    Sampling, SamplingMode,
};
pub use kernel_build::{
    AppliedPatch, BuildFailure, BuildSpec, BuildStep, ConfigBase, Fragment, KernelBuild,
    KernelBuildRecord, KernelBuildStatus,
};
pub use metric::{Better, Builtin, Extractor, MetricSource, MetricSpec, Stream};
pub use placement::Placement;
pub use profile::{CallGraph, Monitors, ProfileRecord, ProfileSpec, SampleDetails};
pub use provenance::{BuildProvenance, CpuFeature, CpuIdentity};
pub use sample::{Failure, RunId, RunStatus, Sample};
pub use stored::{BootStatus, RunKind, UnknownSpelling};
pub use target::{BootHostSettings, HostGroupSettings, ReconnectTimeout, SshSettings, TargetSpec};
pub use verdict_exit::ExitClass;

//! Pure parsers of /proc and /sys file contents: text in, typed values out.
//!
//! Must not: read files, look at the clock, or guess. A value that does not
//! parse is `None`, and callers report it as unknown.

pub mod cgroup;
pub mod cpuinfo;
pub mod identity;
pub mod kconfig;
pub mod lparcfg;
pub mod process;
pub mod stat;
pub mod sysfs;
pub mod virtualization;

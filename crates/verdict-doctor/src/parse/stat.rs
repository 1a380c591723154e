//! /proc/stat, through verdict-parse's parser of that file (the one parser
//! of it: the monitors read the same file); kept under this path for the
//! doctor's checks. Must not parse anything itself.

pub use verdict_parse::proc::stat::*;

//! /proc/PID/stat: a process's name and CPU time, for "who else used the
//! CPU during the check".
//!
//! Source: proc(5), "/proc/pid/stat". The name (field 2) is in parentheses
//! and may itself contain spaces and parentheses, so the fields after it are
//! found from the last `)`. Must not: read files.

use serde::Serialize;

/// One process's identity and cumulative CPU time.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ProcessTimes {
    pub pid: u32,
    pub name: String,
    /// State letter (R, S, D, ...).
    pub state: char,
    /// utime + stime, in clock ticks.
    pub cpu_ticks: u64,
    /// Parent pid; kernel threads have parent 2 (kthreadd) or are 2.
    pub parent: u32,
}

/// Parses one /proc/PID/stat line.
pub fn parse_stat(text: &str) -> Option<ProcessTimes> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    if close < open {
        return None;
    }
    let pid = text[..open].trim().parse().ok()?;
    let name = text[open + 1..close].to_string();
    let rest: Vec<&str> = text[close + 1..].split_whitespace().collect();
    // rest[0] is field 3 (state); utime is field 14 -> rest[11], stime rest[12].
    let state = rest.first()?.chars().next()?;
    let parent = rest.get(1)?.parse().ok()?;
    let user: u64 = rest.get(11)?.parse().ok()?;
    let system: u64 = rest.get(12)?.parse().ok()?;
    Some(ProcessTimes {
        pid,
        name,
        state,
        cpu_ticks: user + system,
        parent,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_name_with_spaces_and_parentheses() {
        let line = "4242 (tmux: server (1)) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 1 0 10 0 0";
        let process = parse_stat(line).unwrap();
        assert_eq!(process.pid, 4242);
        assert_eq!(process.name, "tmux: server (1)");
        assert_eq!(process.state, 'S');
        assert_eq!(process.cpu_ticks, 300);
        assert_eq!(process.parent, 1);
    }

    #[test]
    fn truncated_is_none() {
        assert_eq!(parse_stat("12 (x) S 1 2 3"), None);
        assert_eq!(parse_stat(""), None);
        assert_eq!(parse_stat("12 x) S"), None);
    }
}

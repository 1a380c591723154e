//! Small /proc and /sys value formats: CPU lists, bracketed selections,
//! load averages, vmstat counters, /proc/swaps and the kernel command line.
//!
//! Must not: read files. Every function is total: bad input gives `None`.

/// Parses a CPU list such as `0-3,8,10-11` (cpuset(7) "List format") into
/// the CPU numbers, ascending. An empty or blank list is `Some(vec![])`.
pub fn parse_cpu_list(text: &str) -> Option<Vec<u32>> {
    let mut cpus = Vec::new();
    for part in text
        .trim()
        .split(',')
        .filter(|part| !part.trim().is_empty())
    {
        let part = part.trim();
        // cpuset also allows a stride suffix: 0-7:2 (every second CPU).
        let (range, stride) = match part.split_once(':') {
            Some((range, stride)) => (range, stride.parse::<u32>().ok().filter(|s| *s > 0)?),
            None => (part, 1),
        };
        match range.split_once('-') {
            Some((first, last)) => {
                let first: u32 = first.parse().ok()?;
                let last: u32 = last.parse().ok()?;
                if last < first || last - first > 65_536 {
                    return None;
                }
                cpus.extend((first..=last).step_by(stride as usize));
            }
            None => cpus.push(range.parse().ok()?),
        }
    }
    cpus.sort_unstable();
    cpus.dedup();
    Some(cpus)
}

/// The bracketed choice of a sysfs selection such as
/// `always [madvise] never` -> `madvise`. A value without brackets is
/// returned as is (single-valued files).
pub fn selected_choice(text: &str) -> Option<String> {
    let text = text.trim();
    if let Some(start) = text.find('[') {
        let end = text[start..].find(']')? + start;
        return Some(text[start + 1..end].to_string());
    }
    (!text.is_empty() && !text.contains(char::is_whitespace)).then(|| text.to_string())
}

/// /proc/loadavg: the 1-, 5- and 15-minute load averages.
pub fn parse_loadavg(text: &str) -> Option<[f64; 3]> {
    let mut fields = text.split_whitespace();
    let mut loads = [0.0; 3];
    for slot in &mut loads {
        *slot = fields.next()?.parse().ok()?;
    }
    Some(loads)
}

/// One counter from /proc/vmstat (`name value` lines).
pub fn vmstat_counter(text: &str, name: &str) -> Option<u64> {
    verdict_parse::proc::vmstat::counter(text, name)
}

/// An active swap area from /proc/swaps.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SwapArea {
    pub name: String,
    pub size_kib: u64,
    pub used_kib: u64,
}

/// /proc/swaps: the header line, then one line per active swap area.
pub fn parse_swaps(text: &str) -> Option<Vec<SwapArea>> {
    let mut lines = text.lines();
    let header = lines.next()?;
    if !header.starts_with("Filename") {
        return None;
    }
    let mut areas = Vec::new();
    for line in lines.filter(|line| !line.trim().is_empty()) {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.len() < 4 {
            return None;
        }
        areas.push(SwapArea {
            name: fields[0].to_string(),
            size_kib: fields[2].parse().ok()?,
            used_kib: fields[3].parse().ok()?,
        });
    }
    Some(areas)
}

/// The value of `name=` on a kernel command line; `Some("")` for a bare
/// flag `name`. Stops at a lone `--` (arguments for init follow).
pub fn cmdline_parameter(cmdline: &str, name: &str) -> Option<String> {
    for word in cmdline.split_whitespace() {
        if word == "--" {
            break;
        }
        match word.split_once('=') {
            Some((key, value)) if key == name => return Some(value.to_string()),
            None if word == name => return Some(String::new()),
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists() {
        assert_eq!(parse_cpu_list("0-3,8\n"), Some(vec![0, 1, 2, 3, 8]));
        assert_eq!(parse_cpu_list("\n"), Some(vec![]));
        assert_eq!(parse_cpu_list("0-7:2"), Some(vec![0, 2, 4, 6]));
        assert_eq!(parse_cpu_list("3-1"), None);
        assert_eq!(parse_cpu_list("a"), None);
    }

    #[test]
    fn bracketed() {
        assert_eq!(
            selected_choice("always [madvise] never\n").as_deref(),
            Some("madvise")
        );
        assert_eq!(
            selected_choice("performance\n").as_deref(),
            Some("performance")
        );
        assert_eq!(selected_choice("always [madvise"), None);
        assert_eq!(selected_choice(""), None);
    }

    #[test]
    fn loadavg_vmstat_swaps() {
        assert_eq!(
            parse_loadavg("1.64 0.93 0.39 1/86 7078\n"),
            Some([1.64, 0.93, 0.39])
        );
        assert_eq!(parse_loadavg("1.0 x"), None);
        assert_eq!(
            vmstat_counter("pswpin 0\npswpout 12\n", "pswpout"),
            Some(12)
        );
        assert_eq!(vmstat_counter("pswpin 0\n", "pswpout"), None);
        let swaps = "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n\
                     /dev/dm-1  partition\t8388604\t\t1024\t\t-2\n";
        assert_eq!(
            parse_swaps(swaps),
            Some(vec![SwapArea {
                name: "/dev/dm-1".into(),
                size_kib: 8_388_604,
                used_kib: 1024
            }])
        );
        assert_eq!(
            parse_swaps("Filename Type Size Used Priority\n"),
            Some(vec![])
        );
        assert_eq!(parse_swaps("nonsense\n"), None);
    }

    #[test]
    fn cmdline() {
        let line = "ro quiet isolcpus=2-3 nohz_full=2-3 nosmt -- init=ignored";
        assert_eq!(cmdline_parameter(line, "isolcpus").as_deref(), Some("2-3"));
        assert_eq!(cmdline_parameter(line, "nosmt").as_deref(), Some(""));
        assert_eq!(cmdline_parameter(line, "init"), None);
        assert_eq!(cmdline_parameter(line, "preempt"), None);
    }
}

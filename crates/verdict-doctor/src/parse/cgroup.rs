//! Control groups and container evidence: /proc/PID/cgroup, cgroup CPU
//! quotas (v2 `cpu.max`, v1 `cpu.cfs_quota_us`/`cpu.cfs_period_us`) and the
//! `container=` variable of /proc/1/environ.
//!
//! Source: cgroups(7); the `container=` convention of systemd's
//! CONTAINER_INTERFACE. Must not: read files or decide on a verdict.

/// One line of /proc/PID/cgroup: `hierarchy-ID:controller-list:path`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CgroupEntry {
    pub hierarchy: u32,
    pub controllers: String,
    pub path: String,
}

/// Parses /proc/PID/cgroup.
pub fn parse_membership(text: &str) -> Option<Vec<CgroupEntry>> {
    let mut entries = Vec::new();
    for line in text.lines().filter(|line| !line.trim().is_empty()) {
        let mut parts = line.splitn(3, ':');
        let hierarchy = parts.next()?.parse().ok()?;
        let controllers = parts.next()?.to_string();
        let path = parts.next()?.to_string();
        entries.push(CgroupEntry {
            hierarchy,
            controllers,
            path,
        });
    }
    Some(entries)
}

/// The container runtime named by a cgroup path, e.g. `docker` for
/// `/docker/3f2a...` or `/system.slice/docker-3f2a.scope`.
pub fn runtime_from_paths(entries: &[CgroupEntry]) -> Option<&'static str> {
    const RUNTIMES: [(&str, &str); 6] = [
        ("kubepods", "kubernetes"),
        ("docker", "docker"),
        ("libpod", "podman"),
        ("lxc", "lxc"),
        ("containerd", "containerd"),
        ("crio", "cri-o"),
    ];
    entries.iter().find_map(|entry| {
        RUNTIMES
            .iter()
            .find(|(marker, _)| entry.path.contains(marker))
            .map(|(_, runtime)| *runtime)
    })
}

/// A CPU bandwidth limit in CPUs (quota / period), `Some(None)` when
/// unlimited, `None` when the text does not parse.
/// cgroup v2 `cpu.max`: `max 100000` or `200000 100000`.
pub fn parse_cpu_max(text: &str) -> Option<Option<f64>> {
    let mut fields = text.split_whitespace();
    let quota = fields.next()?;
    let period: f64 = fields
        .next()
        .map_or(Some(100_000.0), |value| value.parse().ok())?;
    if quota == "max" {
        return Some(None);
    }
    let quota: f64 = quota.parse().ok()?;
    (period > 0.0).then_some(Some(quota / period))
}

/// cgroup v1: `cpu.cfs_quota_us` (-1 unlimited) and `cpu.cfs_period_us`.
pub fn parse_cfs_quota(quota: &str, period: &str) -> Option<Option<f64>> {
    let quota: i64 = quota.trim().parse().ok()?;
    let period: f64 = period.trim().parse().ok()?;
    if quota < 0 {
        return Some(None);
    }
    (period > 0.0).then_some(Some(quota as f64 / period))
}

/// The file system type mounted at `/` in a /proc/PID/mountinfo text
/// (proc(5): fields after the ` - ` separator are type, source, options).
pub fn root_filesystem_type(mountinfo: &str) -> Option<String> {
    mountinfo
        .lines()
        .filter(|line| line.split_whitespace().nth(4) == Some("/"))
        .filter_map(|line| line.split_once(" - "))
        .filter_map(|(_, tail)| tail.split_whitespace().next())
        .next_back()
        .map(str::to_string)
}

/// The `container=` value in a NUL-separated environment block.
pub fn container_variable(environ: &[u8]) -> Option<String> {
    environ
        .split(|byte| *byte == 0)
        .filter_map(|entry| std::str::from_utf8(entry).ok())
        .find_map(|entry| entry.strip_prefix("container="))
        .filter(|value| !value.is_empty())
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn membership_v1_and_v2() {
        let v1 = "4:memory:/process_api/e569\n0::/\n";
        let entries = parse_membership(v1).unwrap();
        assert_eq!(entries.len(), 2);
        assert_eq!(entries[0].controllers, "memory");
        assert_eq!(runtime_from_paths(&entries), None);
        let docker = parse_membership("0::/system.slice/docker-3f2a.scope\n").unwrap();
        assert_eq!(runtime_from_paths(&docker), Some("docker"));
        let pod = parse_membership("0::/kubepods/besteffort/pod12/abc\n").unwrap();
        assert_eq!(runtime_from_paths(&pod), Some("kubernetes"));
        assert_eq!(parse_membership("x:y\n"), None);
        assert_eq!(parse_membership(""), Some(vec![]));
    }

    #[test]
    fn quotas() {
        assert_eq!(parse_cpu_max("max 100000\n"), Some(None));
        assert_eq!(parse_cpu_max("200000 100000\n"), Some(Some(2.0)));
        assert_eq!(parse_cpu_max("abc 100000"), None);
        assert_eq!(parse_cfs_quota("-1\n", "100000\n"), Some(None));
        assert_eq!(parse_cfs_quota("50000\n", "100000\n"), Some(Some(0.5)));
        assert_eq!(parse_cfs_quota("x", "100000"), None);
    }

    #[test]
    fn root_filesystem() {
        let vm = "22 27 0:21 / /proc rw,relatime - proc proc rw\n\
                  27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard\n";
        assert_eq!(root_filesystem_type(vm).as_deref(), Some("ext4"));
        let docker = "612 540 0:52 / / rw,relatime master:289 - overlay overlay rw,lowerdir=/l\n";
        assert_eq!(root_filesystem_type(docker).as_deref(), Some("overlay"));
        assert_eq!(root_filesystem_type("garbage\n"), None);
    }

    #[test]
    fn environ_container() {
        assert_eq!(
            container_variable(b"PATH=/bin\0container=podman\0HOME=/\0").as_deref(),
            Some("podman")
        );
        assert_eq!(container_variable(b"PATH=/bin\0"), None);
        assert_eq!(container_variable(b""), None);
    }
}

//! Where a run measures, decided once: [`placement`] turns the
//! experiment's `[target]` and the hosts the command line resolved into the
//! run's `Placement`, which both chooses how the run is launched and is
//! stored with it (`runs.placement`).
//!
//! Must not connect to anything.

use verdict_model::{Placement, TargetSpec};

/// Where a run of `target` measures, given the ssh hosts it measures on
/// (`--host`, which wins over the file's `[target] hosts`, or those; empty
/// when the run stays on this machine): the target verdict boots when the
/// experiment has one, else the hosts when any are named, else here.
pub fn placement(target: &TargetSpec, hosts: &[String]) -> Placement {
    match target {
        TargetSpec::Vm(_) => Placement::Vm,
        TargetSpec::BootedHost { .. } => Placement::BootedHost,
        TargetSpec::Local | TargetSpec::Hosts(_) if hosts.is_empty() => Placement::Local,
        TargetSpec::Local | TargetSpec::Hosts(_) => Placement::Hosts,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hosts_measured_on_decide_between_here_and_hosts() {
        let named = TargetSpec::Hosts(vec!["a".to_string()]);
        // A file's hosts that a command measures here (a bisection
        // without --host) stay here.
        assert_eq!(placement(&named, &[]), Placement::Local);
        assert_eq!(placement(&named, &["a".to_string()]), Placement::Hosts);
        assert_eq!(
            placement(&TargetSpec::Local, &["b".to_string()]),
            Placement::Hosts
        );
        assert_eq!(placement(&TargetSpec::Local, &[]), Placement::Local);
    }
}

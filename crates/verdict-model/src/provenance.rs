//! What exactly ran, beyond the kernel's own facts: the CPU's identity
//! (vendor, family, model, stepping, microcode), the named CPU features
//! that change performance, and how the measured program was built
//! (commit, build command, compiler). Plain data stored inside
//! [`Environment`](crate::Environment) (per run and per boot), every part
//! optional so environments stored before it existed still load.
//!
//! Must not: read files or run programs (verdict-doctor captures the CPU
//! facts through the target; verdict-engine records a build's toolchain).

use serde::{Deserialize, Serialize};

/// The CPU's identity as /proc/cpuinfo states it. On x86 the kernel's own
/// words (`vendor_id`, `cpu family`, `model`, `stepping`, `microcode`); on
/// arm64 the implementer, architecture, part and `rVpR` variant/revision;
/// on powerpc the `revision` (PVR) line as the stepping. Each field is as
/// printed, never decoded or guessed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CpuIdentity {
    /// `GenuineIntel`, `AuthenticAMD`; arm64 `CPU implementer` (`0x41`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vendor: Option<String>,
    /// x86 `cpu family` (decimal); arm64 `CPU architecture`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub family: Option<String>,
    /// x86 `model` (decimal); arm64 `CPU part`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// x86 `stepping`; arm64 `r<variant>p<revision>`; powerpc `revision`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stepping: Option<String>,
    /// x86 `microcode` revision (e.g. `0x1000065`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub microcode: Option<String>,
}

impl CpuIdentity {
    /// `AuthenticAMD family 26 model 2 stepping 1 microcode 0x1000065`:
    /// only the parts that were read.
    pub fn line(&self) -> String {
        let mut parts = Vec::new();
        if let Some(vendor) = &self.vendor {
            parts.push(vendor.clone());
        }
        for (word, value) in [
            ("family", &self.family),
            ("model", &self.model),
            ("stepping", &self.stepping),
            ("microcode", &self.microcode),
        ] {
            if let Some(value) = value {
                parts.push(format!("{word} {value}"));
            }
        }
        parts.join(" ")
    }

    /// True when nothing was read.
    pub fn is_empty(&self) -> bool {
        self == &CpuIdentity::default()
    }
}

/// One CPU feature from the short per-architecture list of features that
/// change performance (x86: the speculation controls and PTI; arm64:
/// pointer authentication and BTI; powerpc: the radix MMU), and whether
/// the CPU (as the kernel lists it) has it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CpuFeature {
    pub name: String,
    pub present: bool,
}

/// `ibrs+ ibpb+ stibp- pti-`: every checked feature, `+` when present.
pub fn features_line(features: &[CpuFeature]) -> String {
    features
        .iter()
        .map(|feature| {
            format!(
                "{}{}",
                feature.name,
                if feature.present { "+" } else { "-" }
            )
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// How the measured program (or kernel) was built: the commit, the
/// command, and the compiler the build environment's `cc --version`
/// named. A kernel built from source per boot level records the same
/// shape in its boot's environment (with its patches and config).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct BuildProvenance {
    /// The full commit id that was built.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// The build command as given (run with /bin/sh in the tree).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// First line of `cc --version` in the build environment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compiler: Option<String>,
    /// Patches applied on top of `commit`, in order (file names or ids).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub patches: Vec<String>,
    /// SHA-256 of the build's config (a kernel's `.config`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_sha256: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_name_only_what_was_read() {
        let identity = CpuIdentity {
            vendor: Some("AuthenticAMD".to_string()),
            family: Some("26".to_string()),
            model: Some("2".to_string()),
            stepping: Some("1".to_string()),
            microcode: Some("0x1000065".to_string()),
        };
        assert_eq!(
            identity.line(),
            "AuthenticAMD family 26 model 2 stepping 1 microcode 0x1000065"
        );
        assert_eq!(
            CpuIdentity {
                family: Some("8".to_string()),
                ..CpuIdentity::default()
            }
            .line(),
            "family 8"
        );
        assert!(CpuIdentity::default().is_empty());
        let features = [
            CpuFeature {
                name: "paca".to_string(),
                present: true,
            },
            CpuFeature {
                name: "bti".to_string(),
                present: false,
            },
        ];
        assert_eq!(features_line(&features), "paca+ bti-");
    }

    #[test]
    fn an_empty_build_is_an_empty_object() {
        assert_eq!(
            serde_json::to_string(&BuildProvenance::default()).unwrap(),
            "{}"
        );
        let read: BuildProvenance = serde_json::from_str("{\"commit\":\"abc\"}").unwrap();
        assert_eq!(read.commit.as_deref(), Some("abc"));
    }
}

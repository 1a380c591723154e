//! A boot level a build writes (`verdict bisect --boot-spec FILE`): a TOML
//! file with one `boot` table holding a level's `boot` keys (`kernel`,
//! `initrd`, `cmdline`, `cmdline_mode`, `hook`), validated as a level's
//! `boot` is, errors at `file:line:col`. Must not read the file (the
//! caller passes its text) or resolve its paths.

use crate::ExitClass;
use crate::boot::LevelBoot;
use crate::experiment::{ModelError, located};
use serde::Deserialize;
use toml::Spanned;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBootFile {
    boot: Spanned<toml::Value>,
}

/// Why a level's boot given by its parts is not valid.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LevelBootError {
    /// A part breaks a rule of a level's `boot` table; the message names
    /// the key (`boot.cmdline`).
    #[error("{message}")]
    Invalid { message: String },
}

impl LevelBootError {
    /// The exit class this error ends a command with: the parts are the
    /// user's flags.
    pub fn exit_class(&self) -> ExitClass {
        ExitClass::Input
    }
}

/// A level's boot from its parts (`verdict bisect --boot-kernel`,
/// `--boot-initrd`, `--boot-cmdline`), validated as the file's `boot`
/// table is; the error names the key (`boot.cmdline`).
pub fn level_boot(
    kernel: Option<&std::path::Path>,
    initrd: Option<&std::path::Path>,
    cmdline: &str,
) -> Result<LevelBoot, LevelBootError> {
    let mut table = toml::map::Map::new();
    table.insert("cmdline".to_string(), toml::Value::from(cmdline));
    for (key, path) in [("kernel", kernel), ("initrd", initrd)] {
        if let Some(path) = path {
            table.insert(
                key.to_string(),
                toml::Value::from(path.to_string_lossy().into_owned()),
            );
        }
    }
    crate::boot::boot_from(toml::Value::Table(table))
        .map_err(|message| LevelBootError::Invalid { message })
}

/// The `boot` table of `text` (the file `origin`).
pub fn parse_boot_file(text: &str, origin: &str) -> Result<LevelBoot, ModelError> {
    let raw: RawBootFile = toml::from_str(text).map_err(|error| {
        let span = error.span().unwrap_or(0..0);
        located(text, origin, span.start, error.message().trim().to_string())
    })?;
    let offset = raw.boot.span().start;
    crate::boot::boot_from(raw.boot.into_inner())
        .map_err(|message| located(text, origin, offset, message))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::boot::CmdlineMode;

    #[test]
    fn a_boot_table_is_a_level_boot_and_mistakes_carry_their_place() {
        let boot = parse_boot_file(
            "[boot]\nkernel = \"arch/x86/boot/bzImage\"\ncmdline = \"mitigations=off\"\n",
            "verdict-boot.toml",
        )
        .unwrap();
        assert_eq!(
            boot.kernel.as_deref(),
            Some(std::path::Path::new("arch/x86/boot/bzImage"))
        );
        assert_eq!(boot.cmdline, "mitigations=off");
        assert_eq!(boot.cmdline_mode, CmdlineMode::Append);
        let error = parse_boot_file(
            "# written by make\n[boot]\ncmdline_mode = \"prepend\"\n",
            "t/verdict-boot.toml",
        )
        .unwrap_err()
        .to_string();
        assert!(
            error.starts_with("t/verdict-boot.toml:2:1: ") && error.contains("cmdline_mode"),
            "{error}"
        );
        let error = parse_boot_file("[boot]\nkernle = \"x\"\n", "b.toml")
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("b.toml:") && error.contains("kernle"),
            "{error}"
        );
        let error = parse_boot_file("[other]\n", "b.toml")
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("b.toml:1:") && error.contains("expected `boot`"),
            "{error}"
        );
        let boot = level_boot(Some(std::path::Path::new("bzImage")), None, "quiet").unwrap();
        assert_eq!(boot.cmdline, "quiet");
        assert!(
            level_boot(None, None, "verdict.boot=1")
                .unwrap_err()
                .to_string()
                .contains("boot.cmdline")
        );
    }
}

//! `.config` files as values: parsing `CONFIG_X=value` and
//! `# CONFIG_X is not set` lines, and decoding gzip input such as
//! /proc/config.gz. Works on bytes and text only; callers read the files.

use crate::error::KconfigError;
use flate2::read::GzDecoder;
use std::collections::BTreeMap;
use std::io::Read;

/// A parsed kernel configuration: symbol name (without `CONFIG_`) to its raw
/// value as written (`y`, `m`, `"text"`, `0x10`), `n` for "is not set".
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DotConfig {
    values: BTreeMap<String, String>,
}

const PREFIX: &str = "CONFIG_";

impl DotConfig {
    /// Parses `.config` text. `path` is only used in error messages.
    /// Other comment lines and blank lines are ignored, like scripts/diffconfig.
    pub fn parse(text: &str, path: &str) -> Result<Self, KconfigError> {
        let mut values = BTreeMap::new();
        for (index, raw) in text.lines().enumerate() {
            let line = raw.trim();
            if line.is_empty() {
                continue;
            }
            if let Some(comment) = line.strip_prefix('#') {
                let comment = comment.trim();
                if let Some(name) = comment
                    .strip_prefix(PREFIX)
                    .and_then(|rest| rest.strip_suffix(" is not set"))
                {
                    values.insert(name.to_string(), "n".to_string());
                }
                continue;
            }
            let parsed = line
                .strip_prefix(PREFIX)
                .and_then(|rest| rest.split_once('='))
                .filter(|(name, _)| is_symbol_name(name));
            match parsed {
                Some((name, value)) => {
                    values.insert(name.to_string(), value.to_string());
                }
                None => {
                    return Err(KconfigError::ConfigLine {
                        path: path.to_string(),
                        line: u32::try_from(index + 1).unwrap_or(u32::MAX),
                        found: raw.to_string(),
                    });
                }
            }
        }
        Ok(Self { values })
    }

    /// Builds a config from (name, raw value) pairs; used by tests and callers
    /// that already hold values.
    pub fn from_pairs<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Self {
        Self {
            values: pairs
                .into_iter()
                .map(|(name, value)| (name.to_string(), value.to_string()))
                .collect(),
        }
    }

    /// The raw value of `name` (without `CONFIG_`), `None` when absent.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.values.get(name).map(String::as_str)
    }

    /// All (name, raw value) pairs in name order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.values
            .iter()
            .map(|(name, value)| (name.as_str(), value.as_str()))
    }

    /// Number of symbols mentioned (set or "not set").
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// True when no symbol is mentioned.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
}

fn is_symbol_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || byte == b'_')
}

/// Turns file bytes into config text, gunzipping when the bytes start with
/// the gzip magic (as /proc/config.gz does). `path` is for error messages.
pub fn decode_config_bytes(bytes: &[u8], path: &str) -> Result<String, KconfigError> {
    let decoded = if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut text = Vec::new();
        GzDecoder::new(bytes)
            .read_to_end(&mut text)
            .map_err(|source| KconfigError::Decompress {
                path: path.to_string(),
                source,
            })?;
        text
    } else {
        bytes.to_vec()
    };
    Ok(String::from_utf8_lossy(&decoded).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use flate2::Compression;
    use flate2::write::GzEncoder;
    use std::io::Write;

    #[test]
    fn parses_values_and_not_set_lines() {
        let text = "#\n# Automatically generated file; DO NOT EDIT.\n\
                    CONFIG_A=y\nCONFIG_B=\"text with = sign\"\n# CONFIG_C is not set\n\nCONFIG_D=0x10\n";
        let config = DotConfig::parse(text, "x").unwrap();
        assert_eq!(config.get("A"), Some("y"));
        assert_eq!(config.get("B"), Some("\"text with = sign\""));
        assert_eq!(config.get("C"), Some("n"));
        assert_eq!(config.get("D"), Some("0x10"));
        assert_eq!(config.len(), 4);
    }

    #[test]
    fn rejects_garbage_with_path_and_line() {
        let error = DotConfig::parse("CONFIG_A=y\nhello\n", "old.config").unwrap_err();
        assert_eq!(
            error.to_string(),
            "parse config old.config:2: expected `CONFIG_NAME=value` or `# CONFIG_NAME is not set`, found `hello`"
        );
    }

    #[test]
    fn gunzips_gzip_input() {
        let mut encoder = GzEncoder::new(Vec::new(), Compression::default());
        encoder.write_all(b"CONFIG_A=m\n").unwrap();
        let bytes = encoder.finish().unwrap();
        assert_eq!(decode_config_bytes(&bytes, "c.gz").unwrap(), "CONFIG_A=m\n");
        assert_eq!(
            decode_config_bytes(b"CONFIG_A=y\n", "c").unwrap(),
            "CONFIG_A=y\n"
        );
        let error = decode_config_bytes(&bytes[..8], "c.gz").unwrap_err();
        assert!(error.to_string().starts_with("decompress c.gz:"), "{error}");
    }
}

//! The crate's error type. Messages are lowercase fragments that read after
//! "failed to" and name the file and line involved. No formatting for
//! terminals happens here.

use std::path::PathBuf;
use verdict_exit::ExitClass;

/// Everything that can go wrong while reading configs or Kconfig trees.
#[derive(Debug, thiserror::Error)]
pub enum KconfigError {
    /// A Kconfig file does not follow the grammar.
    #[error("parse {file}:{line}: expected {expected}, found {found}")]
    Parse {
        file: String,
        line: u32,
        expected: String,
        found: String,
    },
    /// A `source` statement names a file that does not exist.
    #[error("read {file}:{line}: sourced file `{path}` does not exist")]
    MissingSource {
        file: String,
        line: u32,
        path: String,
    },
    /// A file could not be read.
    #[error("read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A `.config` file could not be read.
    #[error("read config {path}: {source}")]
    ReadConfig {
        path: String,
        source: std::io::Error,
    },
    /// A file given as a `.config` holds no config line.
    #[error(
        "read config {path}: it has no `CONFIG_NAME=value` or `# CONFIG_NAME is not set` line; is it a kernel .config?"
    )]
    EmptyConfig { path: String },
    /// The directory given as a kernel tree has no top-level Kconfig.
    #[error("find {kconfig}: --tree must be a kernel source directory with a top-level Kconfig")]
    NoKconfig { kconfig: PathBuf },
    /// A gzip-compressed config could not be decompressed.
    #[error("decompress {path}: {source}")]
    Decompress {
        path: String,
        source: std::io::Error,
    },
    /// A line of a `.config` file is neither an assignment nor a comment.
    #[error(
        "parse config {path}:{line}: expected `CONFIG_NAME=value` or `# CONFIG_NAME is not set`, found `{found}`"
    )]
    ConfigLine {
        path: String,
        line: u32,
        found: String,
    },
    /// A symbol filter is not a valid regular expression.
    #[error("compile symbol pattern `{pattern}`: {message}")]
    Pattern { pattern: String, message: String },
    /// The symbol asked about is not defined anywhere in the tree.
    #[error("explain {symbol}: no `config {symbol}` in the Kconfig tree for arch {arch}")]
    UnknownSymbol { symbol: String, arch: String },
    /// A symbol named on the command line is not defined anywhere in the
    /// tree; `hint` is "; did you mean X?" or empty.
    #[error("find symbol {symbol}: no `config {symbol}` in the Kconfig tree for arch {arch}{hint}")]
    NotInTree {
        symbol: String,
        arch: String,
        hint: String,
    },
    /// A request (an assignment, a goal) that cannot be carried out; the
    /// message reads after "failed to".
    #[error("{message}")]
    Request { message: String },
    /// An error about an unknown symbol with the names it may have meant.
    #[error("{error}; did you mean {suggestions}?")]
    Suggested {
        error: Box<KconfigError>,
        suggestions: String,
    },
}

impl KconfigError {
    /// The exit class this error ends a command with: every one is about
    /// what the user named (a tree, a config, a symbol, a request), and a
    /// file of theirs that cannot be read is theirs to fix.
    pub fn exit_class(&self) -> ExitClass {
        match self {
            KconfigError::Parse { .. }
            | KconfigError::MissingSource { .. }
            | KconfigError::Read { .. }
            | KconfigError::ReadConfig { .. }
            | KconfigError::EmptyConfig { .. }
            | KconfigError::NoKconfig { .. }
            | KconfigError::Decompress { .. }
            | KconfigError::ConfigLine { .. }
            | KconfigError::Pattern { .. }
            | KconfigError::UnknownSymbol { .. }
            | KconfigError::NotInTree { .. }
            | KconfigError::Request { .. }
            | KconfigError::Suggested { .. } => ExitClass::Input,
        }
    }
}

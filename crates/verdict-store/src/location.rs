//! Where a store is: a SQLite file path or a PostgreSQL URL
//! (`postgres://…`, `postgresql://…`), told apart by the scheme; the URL's
//! connection settings completed the way libpq completes them (`PGHOST`,
//! `PGPORT`, `PGUSER`, `PGDATABASE`, `PGPASSWORD`, then `PGPASSFILE` or
//! `~/.pgpass`); and the URL as it may be shown, its password redacted.
//! Must not: connect, log, or keep a password anywhere but the returned
//! connection settings (never in the store, an error or a message).

use std::path::{Path, PathBuf};
use std::str::FromStr;

/// A store named on the command line or in `VERDICT_DB`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// A SQLite database file.
    Sqlite(PathBuf),
    /// A PostgreSQL connection URL, exactly as given (it may hold a
    /// password: show it only through `redacted`).
    Postgres(String),
}

impl Location {
    /// `postgres://…` and `postgresql://…` are PostgreSQL; anything else is
    /// a SQLite file path.
    pub fn parse(text: &str) -> Location {
        if is_postgres_url(text) {
            Location::Postgres(text.to_string())
        } else {
            Location::Sqlite(PathBuf::from(text))
        }
    }

    /// The location as it may be printed or stored: a path as it is, a URL
    /// with its password replaced by `***`.
    pub fn redacted(&self) -> String {
        match self {
            Location::Sqlite(path) => path.display().to_string(),
            Location::Postgres(url) => redact_url(url),
        }
    }
}

impl From<&Path> for Location {
    fn from(path: &Path) -> Location {
        match path.to_str() {
            Some(text) => Location::parse(text),
            None => Location::Sqlite(path.to_path_buf()),
        }
    }
}

/// Whether `text` is a PostgreSQL connection URL.
pub fn is_postgres_url(text: &str) -> bool {
    let lower = text.get(..13).unwrap_or(text).to_ascii_lowercase();
    lower.starts_with("postgres://") || lower.starts_with("postgresql://")
}

/// `url` with the password of its user part (`user:password@`) and any
/// `password=` query parameter replaced by `***`. Text that is not a URL is
/// returned as it is.
pub fn redact_url(url: &str) -> String {
    let Some(scheme_end) = url.find("://") else {
        return url.to_string();
    };
    let (scheme, rest) = url.split_at(scheme_end + 3);
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    let authority = match authority.rfind('@') {
        Some(at) => {
            let (userinfo, host) = authority.split_at(at);
            match userinfo.find(':') {
                Some(colon) => format!("{}:***{host}", &userinfo[..colon]),
                None => authority.to_string(),
            }
        }
        None => authority.to_string(),
    };
    let tail = match tail.find('?') {
        Some(question) => {
            let (path, query) = tail.split_at(question + 1);
            let query: Vec<String> = query
                .split('&')
                .map(|pair| {
                    if pair.to_ascii_lowercase().starts_with("password=") {
                        "password=***".to_string()
                    } else {
                        pair.to_string()
                    }
                })
                .collect();
            format!("{path}{}", query.join("&"))
        }
        None => tail.to_string(),
    };
    format!("{scheme}{authority}{tail}")
}

/// A command line as it may be stored: every argument holding a URL
/// (`--db postgres://user:password@…`, `--db=…`) with its password
/// redacted.
pub fn redact_arguments(arguments: &[String]) -> Vec<String> {
    arguments
        .iter()
        .map(|argument| {
            if argument.contains("://") {
                redact_url(argument)
            } else {
                argument.clone()
            }
        })
        .collect()
}

/// What can be wrong with a PostgreSQL URL (the URL itself is not in the
/// message: it may hold a password).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UrlError(pub String);

/// Connection settings for `url`, completed from the environment as libpq
/// does: a setting missing from the URL is taken from `PGHOST` (default
/// the Unix socket directory `/var/run/postgresql`), `PGPORT` (5432),
/// `PGUSER` (the login name), `PGDATABASE` (the user name); the password
/// from the URL, else `PGPASSWORD`, else the first matching line of
/// `PGPASSFILE` (default `~/.pgpass`; `host:port:database:user:password`,
/// `*` matching anything, a Unix socket matching `localhost`).
pub fn postgres_config(
    url: &str,
    environment: &dyn Fn(&str) -> Option<String>,
) -> Result<postgres::Config, UrlError> {
    let mut config = postgres::Config::from_str(url).map_err(|error| {
        UrlError(format!(
            "`{}` is not a PostgreSQL URL: {error}",
            redact_url(url)
        ))
    })?;
    let non_empty = |name: &str| environment(name).filter(|value| !value.is_empty());
    if config.get_hosts().is_empty() {
        let host = non_empty("PGHOST").unwrap_or_else(|| "/var/run/postgresql".to_string());
        for host in host.split(',') {
            if host.starts_with('/') {
                config.host_path(host);
            } else {
                config.host(host);
            }
        }
    }
    if config.get_ports().is_empty()
        && let Some(port) = non_empty("PGPORT")
    {
        let port = port
            .parse()
            .map_err(|_| UrlError(format!("PGPORT `{port}` is not a port number")))?;
        config.port(port);
    }
    if config.get_user().is_none() {
        let user = non_empty("PGUSER")
            .or_else(|| non_empty("USER"))
            .or_else(|| non_empty("LOGNAME"))
            .ok_or_else(|| {
                UrlError("no user in the URL, and neither PGUSER nor USER is set".to_string())
            })?;
        config.user(&user);
    }
    if config.get_dbname().is_none() {
        let database = non_empty("PGDATABASE")
            .or_else(|| config.get_user().map(str::to_string))
            .unwrap_or_default();
        config.dbname(&database);
    }
    if config.get_password().is_none() {
        if let Some(password) = non_empty("PGPASSWORD") {
            config.password(password);
        } else if let Some(password) = password_from_file(&config, environment) {
            config.password(password);
        }
    }
    Ok(config)
}

/// The password for `config` in the password file, if any line matches.
fn password_from_file(
    config: &postgres::Config,
    environment: &dyn Fn(&str) -> Option<String>,
) -> Option<String> {
    let path = match environment("PGPASSFILE").filter(|value| !value.is_empty()) {
        Some(path) => PathBuf::from(path),
        None => PathBuf::from(environment("HOME")?).join(".pgpass"),
    };
    let text = std::fs::read_to_string(path).ok()?;
    let host = match config.get_hosts().first()? {
        postgres::config::Host::Tcp(name) => name.clone(),
        postgres::config::Host::Unix(_) => "localhost".to_string(),
    };
    let port = config
        .get_ports()
        .first()
        .copied()
        .unwrap_or(5432)
        .to_string();
    let database = config.get_dbname().unwrap_or_default();
    let user = config.get_user().unwrap_or_default();
    text.lines()
        .filter(|line| !line.starts_with('#'))
        .find_map(|line| {
            let fields = split_pgpass_line(line);
            if fields.len() != 5 {
                return None;
            }
            let matches = |field: &str, value: &str| field == "*" || field == value;
            (matches(&fields[0], &host)
                && matches(&fields[1], &port)
                && matches(&fields[2], database)
                && matches(&fields[3], user))
            .then(|| fields[4].clone())
        })
}

/// The `:`-separated fields of a password file line (`\:` and `\\` are a
/// literal colon and backslash).
fn split_pgpass_line(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut characters = line.chars();
    while let Some(character) = characters.next() {
        match character {
            '\\' => {
                if let Some(next) = characters.next() {
                    fields.last_mut().expect("one field").push(next);
                }
            }
            ':' if fields.len() < 5 => fields.push(String::new()),
            other => fields.last_mut().expect("one field").push(other),
        }
    }
    fields
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_and_paths_are_told_apart_by_the_scheme() {
        assert!(matches!(
            Location::parse("postgres://h/db"),
            Location::Postgres(_)
        ));
        assert!(matches!(
            Location::parse("PostgreSQL://h/db"),
            Location::Postgres(_)
        ));
        assert_eq!(
            Location::parse("postgres.db"),
            Location::Sqlite(PathBuf::from("postgres.db"))
        );
    }

    #[test]
    fn passwords_are_redacted_from_the_user_part_and_the_query() {
        assert_eq!(
            redact_url("postgres://alice:s3cret@db.lab:5432/verdict"),
            "postgres://alice:***@db.lab:5432/verdict"
        );
        assert_eq!(
            redact_url("postgresql://alice:p@ss@db/verdict?password=s3cret&sslmode=require"),
            "postgresql://alice:***@db/verdict?password=***&sslmode=require"
        );
        assert_eq!(
            redact_url("postgres://alice@db/verdict"),
            "postgres://alice@db/verdict"
        );
    }

    #[test]
    fn stored_command_lines_lose_their_passwords() {
        let arguments: Vec<String> = ["verdict", "run", "--db=postgres://a:pw@h/d", "x:y@z"]
            .map(String::from)
            .to_vec();
        assert_eq!(
            redact_arguments(&arguments),
            ["verdict", "run", "--db=postgres://a:***@h/d", "x:y@z"]
        );
    }

    #[test]
    fn a_password_file_line_matches_with_wildcards_and_escapes() {
        let directory = std::env::temp_dir().join(format!("verdict-pgpass-{}", std::process::id()));
        std::fs::create_dir_all(&directory).unwrap();
        let file = directory.join("pgpass");
        std::fs::write(
            &file,
            "# comment\nother:5432:*:alice:wrong\ndb.lab:*:verdict:alice:pa\\:ss\n",
        )
        .unwrap();
        let file_text = file.display().to_string();
        let environment = move |name: &str| (name == "PGPASSFILE").then(|| file_text.clone());
        let config = postgres_config("postgres://alice@db.lab/verdict", &environment).unwrap();
        assert_eq!(config.get_password(), Some(&b"pa:ss"[..]));
        let config = postgres_config("postgres://bob@db.lab/verdict", &environment).unwrap();
        assert_eq!(config.get_password(), None);
        std::fs::remove_dir_all(&directory).unwrap();
    }

    #[test]
    fn missing_settings_come_from_the_environment() {
        let environment = |name: &str| match name {
            "PGHOST" => Some("/run/pg".to_string()),
            "PGUSER" => Some("carol".to_string()),
            "PGPASSWORD" => Some("from-env".to_string()),
            _ => None,
        };
        let config = postgres_config("postgres:///lab", &environment).unwrap();
        assert_eq!(config.get_user(), Some("carol"));
        assert_eq!(config.get_dbname(), Some("lab"));
        assert_eq!(config.get_password(), Some(&b"from-env"[..]));
        assert_eq!(
            config.get_hosts(),
            &[postgres::config::Host::Unix(PathBuf::from("/run/pg"))]
        );
    }
}

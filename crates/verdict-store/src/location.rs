//! Where a store is: a SQLite file path or a PostgreSQL connection string,
//! a URL (`postgres://…`, `postgresql://…`) or libpq's keyword form
//! (`host=… dbname=… password=…`), told apart by their syntax; the
//! connection settings completed the way libpq completes them (`PGHOST`,
//! `PGPORT`, `PGUSER`, `PGDATABASE`, `PGPASSWORD`, then `PGPASSFILE` or
//! `~/.pgpass`); the variables that carry credentials (`STORE_VARIABLES`),
//! kept for the store once the binary has taken them out of the
//! environment its children inherit; and every form as it may be shown,
//! its password redacted. Must not: connect, log, or keep a password
//! anywhere but the returned connection settings and the kept variables
//! (never in the store, an error or a message).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::OnceLock;

/// A store named on the command line or in `VERDICT_DB`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// A SQLite database file.
    Sqlite(PathBuf),
    /// A PostgreSQL connection string (a URL or libpq's keyword form),
    /// exactly as given (it may hold a password: show it only through
    /// `redacted`).
    Postgres(String),
}

impl Location {
    /// `postgres://…` and `postgresql://…`, and libpq keyword strings
    /// (`host=/run/postgresql dbname=lab`: every key a libpq keyword) are
    /// PostgreSQL; anything else is a SQLite file path.
    pub fn parse(text: &str) -> Location {
        if is_postgres_url(text) || is_keyword_string(text) {
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
            Location::Postgres(url) => redact(url),
        }
    }
}

/// The environment variables that name a store or carry its credentials.
/// The binary takes them out of its environment once it has read them
/// (`keep_store_variables`), so no workload, hook or other child inherits
/// them; the store still connects with their values (`store_variable`).
pub const STORE_VARIABLES: &[&str] = &["VERDICT_DB", "PGPASSWORD", "PGPASSFILE"];

static KEPT: OnceLock<HashMap<String, String>> = OnceLock::new();

/// Keeps the values `STORE_VARIABLES` have now, for `store_variable` to
/// answer with once they are gone from the environment. The first call
/// wins.
pub fn keep_store_variables() {
    KEPT.get_or_init(|| {
        STORE_VARIABLES
            .iter()
            .filter_map(|name| Some((name.to_string(), std::env::var(name).ok()?)))
            .collect()
    });
}

/// An environment variable as the store reads it: a `STORE_VARIABLES`
/// one as kept by `keep_store_variables` (when it was called), any other
/// from the environment.
pub fn store_variable(name: &str) -> Option<String> {
    match KEPT.get() {
        Some(kept) if STORE_VARIABLES.contains(&name) => kept.get(name).cloned(),
        _ => std::env::var(name).ok(),
    }
}

/// libpq's connection keywords (PostgreSQL 17, "Parameter Key Words").
const LIBPQ_KEYWORDS: &[&str] = &[
    "host",
    "hostaddr",
    "port",
    "dbname",
    "user",
    "password",
    "passfile",
    "require_auth",
    "channel_binding",
    "connect_timeout",
    "client_encoding",
    "options",
    "application_name",
    "fallback_application_name",
    "keepalives",
    "keepalives_idle",
    "keepalives_interval",
    "keepalives_count",
    "tcp_user_timeout",
    "replication",
    "gssencmode",
    "sslmode",
    "requiressl",
    "sslnegotiation",
    "sslcompression",
    "sslcert",
    "sslkey",
    "sslpassword",
    "sslcertmode",
    "sslrootcert",
    "sslcrl",
    "sslcrldir",
    "sslsni",
    "requirepeer",
    "ssl_min_protocol_version",
    "ssl_max_protocol_version",
    "krbsrvname",
    "gsslib",
    "gssdelegation",
    "service",
    "target_session_attrs",
    "load_balance_hosts",
];

/// The keywords of a libpq keyword string (`key=value` separated by
/// spaces, spaces allowed around `=`, a value in single quotes with `\'`
/// and `\\` escapes), or `None` when `text` is not one.
fn keyword_settings(text: &str) -> Option<Vec<&str>> {
    let bytes = text.as_bytes();
    let mut settings = Vec::new();
    let mut position = 0;
    let skip_spaces = |mut position: usize| {
        while position < bytes.len() && bytes[position].is_ascii_whitespace() {
            position += 1;
        }
        position
    };
    loop {
        position = skip_spaces(position);
        if position == bytes.len() {
            break;
        }
        let start = position;
        while position < bytes.len()
            && (bytes[position].is_ascii_alphanumeric() || bytes[position] == b'_')
        {
            position += 1;
        }
        let keyword = &text[start..position];
        position = skip_spaces(position);
        if keyword.is_empty() || bytes.get(position) != Some(&b'=') {
            return None;
        }
        position = skip_spaces(position + 1);
        if bytes.get(position) == Some(&b'\'') {
            position += 1;
            loop {
                match bytes.get(position) {
                    None => return None,
                    Some(b'\\') => position += 2,
                    Some(b'\'') => {
                        position += 1;
                        break;
                    }
                    Some(_) => position += 1,
                }
            }
        } else {
            while position < bytes.len() && !bytes[position].is_ascii_whitespace() {
                position += 1;
            }
        }
        settings.push(keyword);
    }
    (!settings.is_empty()).then_some(settings)
}

/// Whether `text` is a libpq keyword connection string: at least one
/// `keyword=value`, every keyword one libpq knows.
pub fn is_keyword_string(text: &str) -> bool {
    keyword_settings(text).is_some_and(|keywords| {
        keywords
            .iter()
            .all(|keyword| LIBPQ_KEYWORDS.contains(keyword))
    })
}

/// `text` with every password it holds replaced by `***`, in each form
/// libpq accepts: a URL's `user:password@`, a URL's `password=` (and
/// `sslpassword=`) query parameter, and a keyword string's `password=`
/// (quoted or not). Other text is returned as it is.
pub fn redact(text: &str) -> String {
    let text = if text.contains("://") {
        redact_url(text)
    } else {
        text.to_string()
    };
    redact_password_settings(&text)
}

/// `text` with the value of every `password=` / `sslpassword=` (at the
/// start, after a space, `?`, `&` or `=`) replaced by `***`: up to the
/// next space or `&`, or the closing quote of a quoted value.
fn redact_password_settings(text: &str) -> String {
    let lower = text.to_ascii_lowercase();
    let bytes = text.as_bytes();
    let mut output = String::with_capacity(text.len());
    let mut copied = 0;
    let mut search = 0;
    while let Some(found) = lower[search..].find("password") {
        let start = search + found;
        search = start + "password".len();
        let keyword_start = if lower[..start].ends_with("ssl") {
            start - 3
        } else {
            start
        };
        let boundary = keyword_start == 0
            || matches!(
                bytes[keyword_start - 1],
                b' ' | b'\t' | b'\n' | b'?' | b'&' | b'='
            );
        let mut position = search;
        while position < bytes.len() && bytes[position] == b' ' {
            position += 1;
        }
        if !boundary || bytes.get(position) != Some(&b'=') {
            continue;
        }
        position += 1;
        while position < bytes.len() && bytes[position] == b' ' {
            position += 1;
        }
        let value_start = position;
        if bytes.get(position) == Some(&b'\'') {
            position += 1;
            while position < bytes.len() && bytes[position] != b'\'' {
                position += if bytes[position] == b'\\' { 2 } else { 1 };
            }
            position = (position + 1).min(bytes.len());
        } else {
            while position < bytes.len() && !matches!(bytes[position], b' ' | b'\t' | b'\n' | b'&')
            {
                position += 1;
            }
        }
        if &text[value_start..position] == "***" {
            continue;
        }
        output.push_str(&text[copied..value_start]);
        output.push_str("***");
        copied = position;
        search = position;
    }
    output.push_str(&text[copied..]);
    output
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

/// A command line as it may be stored or shown: every argument holding a
/// password (`--db postgres://user:password@…`, `--db=…`, `host=… password=…`)
/// with it redacted.
pub fn redact_arguments(arguments: &[String]) -> Vec<String> {
    arguments.iter().map(|argument| redact(argument)).collect()
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
            "`{}` is not a PostgreSQL connection string: {error}",
            redact(url)
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
    fn keyword_strings_are_postgres_and_lose_their_passwords() {
        let text = "host=/run/postgresql dbname=lab password=s3cret";
        assert_eq!(Location::parse(text), Location::Postgres(text.to_string()));
        assert_eq!(
            Location::parse(text).redacted(),
            "host=/run/postgresql dbname=lab password=***"
        );
        assert_eq!(
            redact(r"host = db password = 'se cret\'s' user=alice"),
            "host = db password = *** user=alice"
        );
        assert_eq!(redact("sslpassword=key host=db"), "sslpassword=*** host=db");
        // Not keyword strings: a path with `=`, unknown keywords, no pair.
        for path in ["a=b.db", "verdict.db", "results/x=1 y=2", "mypassword.db"] {
            assert!(
                matches!(Location::parse(path), Location::Sqlite(_)),
                "{path}"
            );
            assert_eq!(Location::parse(path).redacted(), path);
        }
        // A URL's password in the user part and in the query, once each.
        assert_eq!(
            redact("postgresql://u:pw@/lab?host=/tmp&password=x"),
            "postgresql://u:***@/lab?host=/tmp&password=***"
        );
    }

    #[test]
    fn stored_command_lines_lose_their_passwords() {
        let arguments: Vec<String> = [
            "verdict",
            "run",
            "--db=postgres://a:pw@h/d",
            "x:y@z",
            "--db",
            "host=h password=pw",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(
            redact_arguments(&arguments),
            [
                "verdict",
                "run",
                "--db=postgres://a:***@h/d",
                "x:y@z",
                "--db",
                "host=h password=***"
            ]
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

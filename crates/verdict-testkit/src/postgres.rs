//! A throwaway PostgreSQL cluster for tests: `initdb` into a fresh
//! temporary directory (as the unprivileged user `nobody` when the test
//! runs as root, since initdb refuses root), `postgres` listening on a Unix
//! socket in that directory only (`listen_addresses=''`), trust
//! authentication for local connections, superuser `postgres`. A test may
//! stop it as an administrator would (`stop_fast`: `pg_ctl stop -m fast`)
//! and start it again on the same data (`start_again`). Dropping the
//! `PostgresServer` shuts the server down (fast shutdown, then a kill if
//! it lingers) and removes the directory.
//!
//! Must not: listen on TCP, touch any cluster or file but its own
//! directory, or keep running after the test (Drop stops it).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// A running throwaway cluster.
#[derive(Debug)]
pub struct PostgresServer {
    directory: PathBuf,
    socket_directory: PathBuf,
    bin: PathBuf,
    /// The `-c` settings the server was started with.
    settings: Vec<String>,
    child: Option<Child>,
}

/// The directory holding `initdb`, `postgres`, `psql`…: the newest
/// `/usr/lib/postgresql/*/bin` (Debian), else wherever `initdb` is in
/// `PATH`; or the outcome of [`crate::missing`] naming the Debian package
/// `postgresql`.
pub fn require_postgres_bin() -> Option<PathBuf> {
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let version = entry.file_name().to_str()?.parse::<u32>().ok()?;
            let bin = entry.path().join("bin");
            bin.join("initdb").exists().then_some((version, bin))
        })
        .collect();
    found.sort();
    if let Some((_, bin)) = found.pop() {
        return Some(bin);
    }
    if let Some(initdb) = crate::find_program("initdb") {
        return initdb.parent().map(Path::to_path_buf);
    }
    crate::missing(
        "the PostgreSQL server programs (`initdb`, `postgres`)",
        "apt-get install postgresql",
    )
}

fn running_as_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// `program` run as `nobody` when we are root (setpriv from util-linux),
/// as ourselves otherwise.
fn command_as_server_user(program: &Path) -> Command {
    if running_as_root() {
        let mut command = Command::new("setpriv");
        command
            .args(["--reuid=nobody", "--regid=nogroup", "--clear-groups", "--"])
            .arg(program);
        command
    } else {
        Command::new(program)
    }
}

fn chown_to_server_user(path: &Path) {
    if running_as_root() {
        let status = Command::new("chown")
            .args(["nobody:nogroup"])
            .arg(path)
            .status()
            .expect("run chown");
        assert!(status.success(), "chown nobody {}", path.display());
    }
}

impl PostgresServer {
    /// Creates and starts a cluster; `None` (after the testkit's failure or
    /// skip) when PostgreSQL is not installed.
    ///
    /// # Panics
    /// When initdb or the server fails, with the server's log.
    pub fn start() -> Option<PostgresServer> {
        Self::start_with(&[])
    }

    /// Like [`start`](Self::start), with extra server settings
    /// (`name=value`, each passed as `-c`, overriding the test defaults
    /// such as `fsync=off`; a benchmark passes `fsync=on`).
    ///
    /// # Panics
    /// As `start`.
    pub fn start_with(settings: &[&str]) -> Option<PostgresServer> {
        let bin = require_postgres_bin()?;
        static COUNTER: AtomicU32 = AtomicU32::new(0);
        let directory = std::env::temp_dir().join(format!(
            "verdict-pg-{}-{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&directory);
        std::fs::create_dir_all(&directory).expect("create the cluster directory");
        chown_to_server_user(&directory);
        let data = directory.join("data");
        let socket_directory = directory.join("socket");
        let output = command_as_server_user(&bin.join("initdb"))
            .arg("-D")
            .arg(&data)
            .args([
                "-U",
                "postgres",
                "--auth=trust",
                "-E",
                "UTF8",
                "--no-locale",
                "--no-sync",
            ])
            .output()
            .expect("run initdb");
        assert!(
            output.status.success(),
            "initdb failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        std::fs::create_dir_all(&socket_directory).expect("create the socket directory");
        chown_to_server_user(&socket_directory);
        let log = std::fs::File::create(directory.join("server.log")).expect("create the log");
        chown_to_server_user(&directory.join("server.log"));
        drop(log);
        let mut server = PostgresServer {
            directory,
            socket_directory,
            bin,
            settings: settings.iter().map(|setting| setting.to_string()).collect(),
            child: None,
        };
        server.spawn();
        server.wait_ready();
        Some(server)
    }

    /// Starts the postmaster on the cluster's data, its output appended to
    /// the log.
    fn spawn(&mut self) {
        let log = std::fs::OpenOptions::new()
            .append(true)
            .open(self.directory.join("server.log"))
            .expect("open the log");
        let child = command_as_server_user(&self.bin.join("postgres"))
            .arg("-D")
            .arg(self.directory.join("data"))
            .arg("-k")
            .arg(&self.socket_directory)
            .args([
                "-c",
                "listen_addresses=",
                "-c",
                "fsync=off",
                "-c",
                "max_connections=50",
                "-c",
                "shared_buffers=16MB",
            ])
            .args(
                self.settings
                    .iter()
                    .flat_map(|setting| ["-c", setting.as_str()]),
            )
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("clone the log"))
            .stderr(log)
            .spawn()
            .expect("start postgres");
        self.child = Some(child);
    }

    /// Stops the server as an administrator would: `pg_ctl stop -m fast`
    /// (every session ended, the cluster shut down cleanly), waiting until
    /// it is down.
    ///
    /// # Panics
    /// When pg_ctl fails.
    pub fn stop_fast(&mut self) {
        let output = command_as_server_user(&self.bin.join("pg_ctl"))
            .arg("-D")
            .arg(self.directory.join("data"))
            .args(["stop", "-m", "fast", "-w"])
            .output()
            .expect("run pg_ctl");
        assert!(
            output.status.success(),
            "pg_ctl stop failed: {}{}",
            String::from_utf8_lossy(&output.stderr),
            self.log()
        );
        if let Some(mut child) = self.child.take() {
            let _ = child.wait();
        }
    }

    /// Starts the server again after `stop_fast`, on the same data and
    /// socket, and waits until it accepts connections.
    ///
    /// # Panics
    /// When the server fails to start.
    pub fn start_again(&mut self) {
        assert!(self.child.is_none(), "the server is running");
        self.spawn();
        self.wait_ready();
    }

    fn wait_ready(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let ready = Command::new(self.bin.join("pg_isready"))
                .arg("-q")
                .arg("-h")
                .arg(&self.socket_directory)
                .status()
                .is_ok_and(|status| status.success());
            if ready {
                return;
            }
            if let Some(child) = self.child.as_mut()
                && let Ok(Some(status)) = child.try_wait()
            {
                panic!(
                    "postgres exited ({status}) before it was ready: {}",
                    self.log()
                );
            }
            assert!(
                Instant::now() < deadline,
                "postgres not ready after 60 s: {}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The server's log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.directory.join("server.log")).unwrap_or_default()
    }

    /// The directory of the server's Unix socket.
    pub fn socket_directory(&self) -> &Path {
        &self.socket_directory
    }

    /// The directory of the server's programs (`psql`, `pg_dump`…).
    pub fn bin(&self) -> &Path {
        &self.bin
    }

    /// A URL for `database` as superuser `postgres` over the Unix socket.
    pub fn url(&self, database: &str) -> String {
        self.url_as("postgres", database)
    }

    /// A URL for `database` as `user` over the Unix socket.
    pub fn url_as(&self, user: &str, database: &str) -> String {
        format!(
            "postgresql://{user}@/{database}?host={}",
            self.socket_directory.display()
        )
    }

    /// Runs SQL through `psql` as the superuser in `database`; panics with
    /// psql's message when it fails.
    pub fn psql(&self, database: &str, sql: &str) -> String {
        let output = Command::new(self.bin.join("psql"))
            .args(["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1"])
            .arg("-h")
            .arg(&self.socket_directory)
            .args(["-U", "postgres", "-d", database, "-c", sql])
            .output()
            .expect("run psql");
        assert!(
            output.status.success(),
            "psql failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// Creates an empty database and returns its URL.
    pub fn create_database(&self, name: &str) -> String {
        self.psql("postgres", &format!("CREATE DATABASE \"{name}\""));
        self.url(name)
    }
}

impl Drop for PostgresServer {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            // The postmaster runs as nobody under setpriv, which execs it:
            // the child's pid is the postmaster's. SIGINT is a fast
            // shutdown (clients disconnected, shared memory released).
            // SAFETY: kill has no memory-safety preconditions.
            unsafe {
                libc::kill(child.id() as libc::pid_t, libc::SIGINT);
            }
            let deadline = Instant::now() + Duration::from_secs(20);
            while Instant::now() < deadline {
                if let Ok(Some(_)) = child.try_wait() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            if let Ok(None) = child.try_wait() {
                let _ = child.kill();
                let _ = child.wait();
            }
        }
        let _ = std::fs::remove_dir_all(&self.directory);
    }
}

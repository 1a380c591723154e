//! Real OpenSSH servers for tests: each `SshServer` is Debian's sshd started
//! by the test on 127.0.0.1 at a free port (`-D -e -f <generated config>`),
//! with its own ed25519 host key, running as the current user, with a
//! per-test client key authorized and a generated client config (`-F`)
//! whose known_hosts lives in the test's temporary directory. Each server
//! sets XDG_CACHE_HOME for its sessions, so the agent copied to "the
//! target" lands in the test directory, never in the real home.
//!
//! Must not: touch ~/.ssh or any system file except creating /run/sshd (the
//! privilege-separation directory sshd requires when run as root).

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The client side shared by several servers: one key, one config file.
pub struct SshFixture {
    pub directory: PathBuf,
    pub config_file: PathBuf,
    sshd: PathBuf,
    keygen: PathBuf,
    entries: Vec<String>,
}

pub struct SshServer {
    pub port: u16,
    pub cache_directory: PathBuf,
    config: PathBuf,
    log: PathBuf,
    sshd: PathBuf,
    child: Option<Child>,
}

fn keygen(program: &Path, path: &Path) {
    let status = Command::new(program)
        .args(["-q", "-t", "ed25519", "-N", "", "-C", "verdict-test", "-f"])
        .arg(path)
        .status()
        .expect("run ssh-keygen");
    assert!(status.success(), "ssh-keygen failed");
}

fn current_user() -> String {
    let output = Command::new("id").arg("-un").output().expect("run id -un");
    String::from_utf8(output.stdout).unwrap().trim().to_string()
}

impl SshFixture {
    /// `None` (after the testkit's failure or skip) when sshd or ssh-keygen
    /// is missing.
    pub fn new(directory: &Path) -> Option<Self> {
        let sshd = verdict_testkit::require_program("sshd", "openssh-server")?;
        let keygen = verdict_testkit::require_program("ssh-keygen", "openssh-client")?;
        verdict_testkit::require_program("ssh", "openssh-client")?;
        keygen_if_missing(&keygen, &directory.join("client_key"));
        std::fs::copy(
            directory.join("client_key.pub"),
            directory.join("authorized_keys"),
        )
        .unwrap();
        // As root, sshd insists on its privilege-separation directory.
        let _ = std::fs::create_dir_all("/run/sshd");
        Some(Self {
            directory: directory.to_path_buf(),
            config_file: directory.join("ssh_config"),
            sshd,
            keygen,
            entries: Vec::new(),
        })
    }

    /// Starts a server known to the client config as `name`.
    pub fn server(&mut self, name: &str) -> SshServer {
        let home = self.directory.join(name);
        std::fs::create_dir_all(&home).unwrap();
        let host_key = home.join("host_key");
        keygen_if_missing(&self.keygen, &host_key);
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let cache_directory = home.join("cache");
        let config = home.join("sshd_config");
        std::fs::write(
            &config,
            format!(
                "Port {port}\nListenAddress 127.0.0.1\nHostKey {}\nAuthorizedKeysFile {}\n\
                 StrictModes no\nPidFile none\nUsePAM no\nPasswordAuthentication no\n\
                 KbdInteractiveAuthentication no\nPubkeyAuthentication yes\n\
                 PermitRootLogin prohibit-password\nSetEnv XDG_CACHE_HOME={}\nLogLevel ERROR\n",
                host_key.display(),
                self.directory.join("authorized_keys").display(),
                cache_directory.display()
            ),
        )
        .unwrap();
        let public = std::fs::read_to_string(home.join("host_key.pub")).unwrap();
        let public = public
            .split_whitespace()
            .take(2)
            .collect::<Vec<_>>()
            .join(" ");
        let known_hosts = self.directory.join("known_hosts");
        let mut known = std::fs::read_to_string(&known_hosts).unwrap_or_default();
        known.push_str(&format!("{name} {public}\n"));
        std::fs::write(&known_hosts, known).unwrap();
        self.entries.push(format!(
            "Host {name}\n  HostName 127.0.0.1\n  Port {port}\n  User {}\n  IdentityFile {}\n  \
             IdentitiesOnly yes\n  UserKnownHostsFile {}\n  StrictHostKeyChecking yes\n  \
             HostKeyAlias {name}\n  LogLevel ERROR\n",
            current_user(),
            self.directory.join("client_key").display(),
            known_hosts.display()
        ));
        std::fs::write(&self.config_file, self.entries.join("\n")).unwrap();
        let mut server = SshServer {
            port,
            cache_directory,
            config,
            log: home.join("sshd.log"),
            sshd: self.sshd.clone(),
            child: None,
        };
        server.start();
        server
    }

    /// Adds a client entry for a host nobody listens on.
    pub fn unreachable_host(&mut self, name: &str) {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        self.entries.push(format!(
            "Host {name}\n  HostName 127.0.0.1\n  Port {port}\n  IdentityFile {}\n  \
             UserKnownHostsFile {}\n  StrictHostKeyChecking yes\n",
            self.directory.join("client_key").display(),
            self.directory.join("known_hosts").display()
        ));
        std::fs::write(&self.config_file, self.entries.join("\n")).unwrap();
    }
}

fn keygen_if_missing(program: &Path, path: &Path) {
    if !path.exists() {
        keygen(program, path);
    }
}

impl SshServer {
    /// Starts (or restarts) sshd and waits until it accepts connections.
    pub fn start(&mut self) {
        use std::os::unix::process::CommandExt;
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log)
            .unwrap();
        let child = Command::new(&self.sshd)
            .arg("-D")
            .arg("-e")
            .arg("-f")
            .arg(&self.config)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::from(log))
            .process_group(0)
            .spawn()
            .expect("start sshd");
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        while TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "sshd did not listen on {}: {}",
                self.port,
                std::fs::read_to_string(&self.log).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Kills sshd and every process it forked (the per-connection servers
    /// call setsid, so they are found by walking parent ids in /proc), as a
    /// crash or a reboot would.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let signal = |signal: &str, pid: u32| {
                let _ = Command::new("kill")
                    .args([signal, &pid.to_string()])
                    .stderr(Stdio::null())
                    .status();
            };
            // Freeze the listener first: a client that notices its session
            // die and reconnects at once must not be served by a fresh
            // child forked after the walk below.
            signal("-STOP", child.id());
            for pid in descendants(child.id()) {
                signal("-KILL", pid);
            }
            signal("-KILL", child.id());
            let _ = child.wait();
        }
    }
}

impl Drop for SshServer {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Every process whose chain of parents reaches `root`.
fn descendants(root: u32) -> Vec<u32> {
    let mut parents = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // The field after the parenthesised command name: state, then ppid.
        let Some(after) = stat.rsplit_once(')') else {
            continue;
        };
        let ppid: Option<u32> = after
            .1
            .split_whitespace()
            .nth(1)
            .and_then(|field| field.parse().ok());
        if let Some(ppid) = ppid {
            parents.push((pid, ppid));
        }
    }
    let mut found = vec![root];
    let mut index = 0;
    while index < found.len() {
        let parent = found[index];
        for (pid, ppid) in &parents {
            if *ppid == parent && !found.contains(pid) {
                found.push(*pid);
            }
        }
        index += 1;
    }
    found.remove(0);
    found
}

//! Sets `VERDICT_BUILD_VERSION` (`0.2.0 (abc1234 2026-12-03)`) for the
//! binary: the crate version and the commit it is built from (see
//! build/git_version.rs). Must not use the network or fail without git.

#[path = "build/git_version.rs"]
mod git_version;

fn main() {
    let manifest = std::path::PathBuf::from(
        std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"),
    );
    let workspace = manifest.join("../..");
    let commit = git_version::describe("git".as_ref(), &workspace);
    println!("cargo:rerun-if-changed=build.rs");
    for path in &commit.watched {
        println!("cargo:rerun-if-changed={}", path.display());
    }
    let version = std::env::var("CARGO_PKG_VERSION").expect("cargo sets CARGO_PKG_VERSION");
    println!(
        "cargo:rustc-env=VERDICT_BUILD_VERSION={version} ({})",
        commit.description
    );
}

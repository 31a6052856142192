//! Embeds where the binary came from, for the certification report
//! (`as-capone report --table`):
//! - `AS_CAPONE_GIT_COMMIT`: `git rev-parse HEAD` at build time, or "unknown"
//!   (no git, or not a git checkout: a source tarball);
//! - `AS_CAPONE_GIT_DIRTY`: "true" when tracked files had uncommitted changes
//!   at build time, "false" when not, "unknown" without git;
//! - `AS_CAPONE_RULES_DIGESTS`: `sha256  FILE` of the repository's rules'
//!   files (`docs/rules.md` and the French regulation
//!   `docs/reglement-as-capone.fr.txt`), separated by `;`; empty when
//!   neither is found.
//!
//! The report also hashes the executable itself at run time: that digest
//! names the exact file whatever the build said.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Runs git without its optional locks: `git status` would otherwise
/// refresh and rewrite the index it reads, and this script watches the
/// index, so every build would run it again and rebuild the crate.
fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").arg("--no-optional-locks").args(args).output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn main() {
    let commit = git(&["rev-parse", "HEAD"]).filter(|c| !c.is_empty());
    let dirty =
        commit.as_ref().and_then(|_| git(&["status", "--porcelain", "--untracked-files=no"])).map(|s| !s.is_empty());
    println!("cargo:rustc-env=AS_CAPONE_GIT_COMMIT={}", commit.as_deref().unwrap_or("unknown"));
    println!(
        "cargo:rustc-env=AS_CAPONE_GIT_DIRTY={}",
        match dirty {
            Some(true) => "true",
            Some(false) => "false",
            None => "unknown",
        }
    );
    // Rebuild when the commit or the index changes (only files that exist:
    // a missing one would make cargo rerun this script on every build).
    for p in ["HEAD", "index"] {
        if let Some(path) = git(&["rev-parse", "--git-path", p]) {
            let path = PathBuf::from(path);
            if path.exists() {
                println!("cargo:rerun-if-changed={}", path.display());
            }
        }
    }
    if let Some(head_ref) = git(&["symbolic-ref", "-q", "HEAD"])
        && let Some(path) = git(&["rev-parse", "--git-path", &head_ref])
        && Path::new(&path).exists()
    {
        println!("cargo:rerun-if-changed={path}");
    }

    // The rules' files of this repository, from the workspace root (two
    // levels above this crate's manifest).
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let root = manifest.join("../..");
    let mut digests = Vec::new();
    // Watch the folder too, so that a rules file added later is hashed.
    if root.join("docs").is_dir() {
        println!("cargo:rerun-if-changed={}", root.join("docs").display());
    }
    for name in ["docs/rules.md", "docs/reglement-as-capone.fr.txt"] {
        let f = root.join(name);
        if !f.exists() {
            continue;
        }
        println!("cargo:rerun-if-changed={}", f.display());
        let digest = Command::new("sha256sum")
            .arg(&f)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .and_then(|o| String::from_utf8_lossy(&o.stdout).split_whitespace().next().map(String::from));
        if let Some(d) = digest {
            digests.push(format!("{d}  {name}"));
        }
    }
    println!("cargo:rustc-env=AS_CAPONE_RULES_DIGESTS={}", digests.join(";"));
    println!("cargo:rerun-if-changed=build.rs");
}

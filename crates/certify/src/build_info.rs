//! Where the executable that writes the report was built.

use std::sync::OnceLock;

/// Where the executable that writes the report was built: the report's
/// subject. The binary's build script knows it (crates/lab/build.rs); this
/// crate has no build script of its own, so that a new commit does not
/// rebuild everything above it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BuildInfo {
    pub version: String,
    /// `git rev-parse HEAD` at build time, or "unknown".
    pub git_commit: String,
    /// Uncommitted changes to tracked files at build time (None: unknown).
    pub git_dirty: Option<bool>,
    /// `sha256  FILE` of the rules' files found at build time.
    pub rules_files: Vec<String>,
}

static REGISTERED: OnceLock<BuildInfo> = OnceLock::new();

impl BuildInfo {
    /// Nothing known but this crate's version.
    pub fn unknown() -> BuildInfo {
        BuildInfo {
            version: env!("CARGO_PKG_VERSION").into(),
            git_commit: "unknown".into(),
            git_dirty: None,
            rules_files: Vec::new(),
        }
    }

    /// Records this process's build, once (the binary's `main` does, before
    /// any report): later calls are ignored.
    pub fn register(info: BuildInfo) {
        let _ = REGISTERED.set(info);
    }

    /// The build [`BuildInfo::register`] recorded, or [`BuildInfo::unknown`].
    pub fn registered() -> BuildInfo {
        REGISTERED.get().cloned().unwrap_or_else(BuildInfo::unknown)
    }
}

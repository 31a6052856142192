//! Where this binary was built, from the build script.

/// Where this binary was built, from crates/lab/build.rs: the certification
/// report's subject. The binary registers it at start
/// (`certify::BuildInfo::register`) so that the server's reports say it too.
pub fn build_info() -> certify::BuildInfo {
    certify::BuildInfo {
        version: env!("CARGO_PKG_VERSION").into(),
        git_commit: env!("AS_CAPONE_GIT_COMMIT").into(),
        git_dirty: match env!("AS_CAPONE_GIT_DIRTY") {
            "true" => Some(true),
            "false" => Some(false),
            _ => None,
        },
        rules_files: env!("AS_CAPONE_RULES_DIGESTS").split(';').filter(|s| !s.is_empty()).map(String::from).collect(),
    }
}

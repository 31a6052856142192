//! The record crate is what a verifier links: `as-capone verify`, the fuzz
//! targets, a future WASM build. It must not pull in a web framework, a
//! database driver or an async runtime, so its `[dependencies]` stay within
//! a fixed list (ARCHITECTURE.md).

/// What `[dependencies]` may name: the engine, the emission and plain data
/// crates (utoipa: the record's OpenAPI schema, plain data too).
const ALLOWED: &[&str] = &["engine", "emission", "sha2", "hex", "serde", "serde_json", "thiserror", "utoipa"];

/// The dependency names of a `[dependencies]` section (also
/// `[dependencies.name]` tables and target-specific sections).
fn dependencies(manifest: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut in_deps = false;
    for line in manifest.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if line.starts_with('[') {
            let section = line.trim_matches(|c| c == '[' || c == ']').trim();
            let dev_or_build = section.contains("dev-dependencies") || section.contains("build-dependencies");
            if let Some(name) = section.strip_prefix("dependencies.") {
                names.push(name.trim_matches('"').to_string());
                in_deps = false;
            } else {
                in_deps = !dev_or_build && (section == "dependencies" || section.ends_with(".dependencies"));
            }
            continue;
        }
        if in_deps && let Some((name, _)) = line.split_once('=') {
            let name = name.trim().trim_matches('"');
            names.push(name.split('.').next().unwrap_or(name).to_string());
        }
    }
    names
}

#[test]
fn the_record_crate_depends_only_on_engine_emission_and_plain_data_crates() {
    let manifest = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml")).unwrap();
    let names = dependencies(&manifest);
    assert!(names.iter().any(|n| n == "engine"), "the parser finds the dependencies: {names:?}");
    let outside: Vec<&String> = names.iter().filter(|n| !ALLOWED.contains(&n.as_str())).collect();
    assert!(outside.is_empty(), "crates/record/Cargo.toml depends on {outside:?}, outside {ALLOWED:?}");
}

#[test]
fn the_check_sees_a_dependency_outside_the_list() {
    let manifest = "[package]\nname = \"x\"\n[dependencies]\nengine.workspace = true\naxum = \"0.8\"\n\
        [dependencies.sqlx]\nversion = \"0.9\"\n[dev-dependencies]\nmath.workspace = true\n";
    assert_eq!(dependencies(manifest), ["engine", "axum", "sqlx"]);
}

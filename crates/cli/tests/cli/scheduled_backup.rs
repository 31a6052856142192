//! The scheduled backup of the SQLite default (docs/backups.md, "Scheduled
//! backups"): the commands of `deploy/as-capone-backup.service`, as systemd
//! would run them (with this build's executable and `%S` a test folder),
//! back up a serving database into `backups/` beside it and remove only the
//! copies older than 14 days; a server given that folder (`backup_dir`)
//! exports the newest copy's age, `+Inf` before the first.

use crate::common;
use crate::deploy::unit_settings;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, SystemTime};

/// A command line of a unit as systemd reads it: its specifiers read from
/// left to right (`%S` the state folder, `%%` a `%`), `$$` a `$`, words
/// split at blanks outside single quotes (systemd's quoting, as far as
/// these units use it; no glob, no shell), and this build's executable for
/// the installed one.
fn argv(line: &str, state: &Path) -> Vec<String> {
    let mut expanded = String::new();
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match (c, c == '%' || c == '$') {
            (_, false) => expanded.push(c),
            ('%', true) => match chars.next() {
                Some('%') => expanded.push('%'),
                Some('S') => expanded.push_str(&state.display().to_string()),
                other => panic!("a specifier this test does not know: %{other:?} in {line}"),
            },
            (_, true) => match chars.next() {
                Some('$') => expanded.push('$'),
                other => panic!("an environment variable in {line}: ${other:?}"),
            },
        }
    }
    let line = expanded.replace("/usr/local/bin/as-capone", &common::exe().display().to_string());
    let (mut words, mut word, mut quoted) = (Vec::new(), String::new(), false);
    for c in line.chars() {
        match c {
            '\'' => quoted = !quoted,
            c if c.is_whitespace() && !quoted => {
                if !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
            }
            c => word.push(c),
        }
    }
    assert!(!quoted, "an unclosed quote in {line}");
    words.extend((!word.is_empty()).then_some(word));
    words
}

/// Runs one of the unit's command lines; panics with its output on failure.
fn run(line: &str, state: &Path) -> String {
    let words = argv(line, state);
    let out = Command::new(&words[0]).args(&words[1..]).output().unwrap();
    let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{words:?}: {said}");
    said
}

/// The server's `as_capone_backup_age_seconds`.
fn backup_age(url: &str) -> f64 {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let text = rt.block_on(async { reqwest::get(format!("{url}/metrics")).await.unwrap().text().await.unwrap() });
    let line = text.lines().find(|l| l.starts_with("as_capone_backup_age_seconds ")).expect("the backup gauge");
    line.split_once(' ').unwrap().1.parse().unwrap_or_else(|_| panic!("a number: {line}"))
}

/// A file in `dir` whose modification time is `age` ago.
fn file_aged(dir: &Path, name: &str, age: Duration) {
    let f = std::fs::File::create(dir.join(name)).unwrap();
    f.set_modified(SystemTime::now() - age).unwrap();
}

const DAY: Duration = Duration::from_secs(86_400);

#[test]
fn the_backup_unit_copies_a_serving_database_prunes_old_copies_and_the_server_says_the_newest_ones_age() {
    let unit =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../deploy/as-capone-backup.service")).unwrap();
    let state = tempfile::tempdir().unwrap();
    let home = state.path().join("as-capone");
    let backups = home.join("backups");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(home.join("table.toml"), common::BLOCKS_OF_2000).unwrap();
    let server = common::start_server(&home, "as-capone.db", &["--backup-dir", backups.to_str().unwrap()]);
    assert_eq!(backup_age(&server.url), f64::INFINITY, "no backup folder yet: no backup");

    // Copies of earlier runs: one past the 14 days kept, one within them,
    // and a backup being written (its .tmp file), the newest of all.
    std::fs::create_dir_all(&backups).unwrap();
    file_aged(&backups, "as-capone-20201001T000000Z.db", 40 * DAY);
    file_aged(&backups, "as-capone-20201104T000000Z.db", 3 * DAY);
    file_aged(&backups, "as-capone-20201107T000000Z.db.x7Yq.tmp", Duration::ZERO);
    let age = backup_age(&server.url);
    assert!((3.0 * 86_400.0..3.0 * 86_400.0 + 120.0).contains(&age), "the newest finished copy, 3 days: {age}");

    // The unit's run, while the server serves.
    let settings = unit_settings(&unit);
    let [pre, start, post] = ["ExecStartPre", "ExecStart", "ExecStartPost"].map(|k| {
        let lines = &settings[k];
        assert_eq!(lines.len(), 1, "one {k}: {lines:?}");
        lines[0].clone()
    });
    run(&pre, state.path());
    let said = run(&start, state.path());
    assert!(said.contains("integrity ok"), "{said}");
    run(&post, state.path());

    let mut names: Vec<String> =
        std::fs::read_dir(&backups).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    let new: Vec<&String> = names.iter().filter(|n| !n.starts_with("as-capone-2020")).collect();
    assert_eq!(new.len(), 1, "one new copy: {names:?}");
    assert!(new[0].starts_with("as-capone-") && new[0].ends_with("Z.db") && new[0].len() == 29, "{names:?}");
    assert!(!names.contains(&"as-capone-20201001T000000Z.db".to_string()), "40 days old: removed: {names:?}");
    assert!(names.contains(&"as-capone-20201104T000000Z.db".to_string()), "3 days old: kept: {names:?}");
    let age = backup_age(&server.url);
    assert!(age < 120.0, "the new copy is the newest: {age}");

    // The copy is a database that restores, with its checks.
    let restored = format!("sqlite://{}", state.path().join("restored.db").display());
    let out = Command::new(common::exe())
        .args(["restore", "--from"])
        .arg(backups.join(new[0]))
        .args(["--db", &restored])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && said.contains("ledger sound"), "{said}{}", String::from_utf8_lossy(&out.stderr));
}

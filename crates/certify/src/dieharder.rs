//! dieharder's text output, for the report's appendix: the result lines
//!
//! ```text
//!    diehard_birthdays|   0|       100|     100|0.80552831|  PASSED
//! ```
//!
//! counted by assessment (PASSED, WEAK, FAILED), with the lines that did
//! not pass kept. Header and comment lines (`#...`) are skipped; the
//! version and generator lines are kept for the record.

use anyhow::Context;
use serde::{Deserialize, Serialize};
use std::path::Path;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DieharderLine {
    pub test: String,
    pub ntup: u32,
    pub tsamples: u64,
    pub psamples: u64,
    pub p_value: f64,
    pub assessment: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DieharderRun {
    /// The stream's name: the file name up to its first dot (`fair.dieharder.txt` -> `fair`).
    pub name: String,
    pub file: String,
    /// dieharder's version line and the generator line, as printed.
    pub header: Vec<String>,
    pub passed: u32,
    pub weak: u32,
    pub failed: u32,
    /// The WEAK and FAILED lines.
    pub not_passed: Vec<DieharderLine>,
}

/// One result line, or None for anything else.
pub fn parse_line(line: &str) -> Option<DieharderLine> {
    let f: Vec<&str> = line.split('|').map(str::trim).collect();
    if f.len() != 6 || line.trim_start().starts_with('#') {
        return None;
    }
    let assessment = f[5];
    if !matches!(assessment, "PASSED" | "WEAK" | "FAILED") {
        return None;
    }
    Some(DieharderLine {
        test: f[0].to_string(),
        ntup: f[1].parse().ok()?,
        tsamples: f[2].parse().ok()?,
        psamples: f[3].parse().ok()?,
        p_value: f[4].parse().ok()?,
        assessment: assessment.to_string(),
    })
}

/// Reads a whole output. At least one result line is required.
pub fn parse(name: &str, file: &str, text: &str) -> anyhow::Result<DieharderRun> {
    let mut run = DieharderRun {
        name: name.to_string(),
        file: file.to_string(),
        header: Vec::new(),
        passed: 0,
        weak: 0,
        failed: 0,
        not_passed: Vec::new(),
    };
    let mut next_is_generator = false;
    for line in text.lines() {
        if line.contains("dieharder version") {
            run.header.push(line.trim_matches(|c: char| c == '#' || c.is_whitespace()).to_string());
            continue;
        }
        if line.trim_start().starts_with("rng_name") {
            next_is_generator = true;
            continue;
        }
        if next_is_generator {
            next_is_generator = false;
            let fields: Vec<&str> = line.split('|').map(str::trim).filter(|f| !f.is_empty()).collect();
            run.header.push(format!("generator: {}", fields.join(", ")));
            continue;
        }
        let Some(l) = parse_line(line) else { continue };
        match l.assessment.as_str() {
            "PASSED" => run.passed += 1,
            "WEAK" => {
                run.weak += 1;
                run.not_passed.push(l);
            }
            _ => {
                run.failed += 1;
                run.not_passed.push(l);
            }
        }
    }
    anyhow::ensure!(
        run.passed + run.weak + run.failed > 0,
        "{file}: no dieharder result line (\"test_name|ntup|tsamples|psamples|p-value|Assessment\")"
    );
    Ok(run)
}

/// Reads a file of dieharder output.
pub fn read(path: &Path) -> anyhow::Result<DieharderRun> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let file_name = path.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
    let name = file_name.split('.').next().unwrap_or("stream").to_string();
    parse(&name, &path.display().to_string(), &text)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "\
#=============================================================================#
#            dieharder version 3.31.1 Copyright 2003 Robert G. Brown          #
#=============================================================================#
   rng_name    |rands/second|   Seed   |
stdin_input_raw|  1.54e+07  | 437094741|
#=============================================================================#
        test_name   |ntup| tsamples |psamples|  p-value |Assessment
#=============================================================================#
   diehard_birthdays|   0|       100|     100|0.80552831|  PASSED  
      diehard_operm5|   0|   1000000|     100|0.19041750|  PASSED  
         sts_serial|  16|    100000|     100|0.99612345|   WEAK   
      rgb_lagged_sum|  31|   1000000|     100|0.00000012|  FAILED  
";

    #[test]
    fn counts_by_assessment_and_keeps_what_did_not_pass() {
        let r = parse("fair", "fair.dieharder.txt", SAMPLE).unwrap();
        assert_eq!((r.passed, r.weak, r.failed), (2, 1, 1));
        assert_eq!(r.not_passed.len(), 2);
        assert_eq!(r.not_passed[0].test, "sts_serial");
        assert_eq!(r.not_passed[0].ntup, 16);
        assert_eq!(r.not_passed[1].assessment, "FAILED");
        assert_eq!(r.not_passed[1].p_value, 0.00000012);
        assert_eq!(r.header[0], "dieharder version 3.31.1 Copyright 2003 Robert G. Brown");
        assert_eq!(r.header[1], "generator: stdin_input_raw, 1.54e+07, 437094741");
    }

    #[test]
    fn refuses_a_file_without_results() {
        assert!(parse("x", "x.txt", "# nothing here\n").is_err());
        assert!(parse_line("        test_name   |ntup| tsamples |psamples|  p-value |Assessment").is_none());
    }

    /// The real outputs being produced on this machine, when present.
    #[test]
    fn reads_real_outputs_when_present() {
        for f in ["/tmp/dh/fair.dieharder.txt", "/tmp/dh/sim.dieharder.txt"] {
            let p = Path::new(f);
            if p.exists() {
                let r = read(p).unwrap();
                assert!(r.passed + r.weak + r.failed > 0, "{f}");
                let lines = std::fs::read_to_string(p).unwrap().lines().filter(|l| parse_line(l).is_some()).count();
                assert_eq!((r.passed + r.weak + r.failed) as usize, lines);
            }
        }
    }
}

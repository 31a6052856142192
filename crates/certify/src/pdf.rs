//! The report's page printed to PDF.

use anyhow::Context;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Renders `html_file` to a PDF with Debian's Chromium, headless.
pub fn pdf(html_file: &Path, pdf_file: &Path) -> anyhow::Result<()> {
    let chromium =
        ["chromium", "chromium-browser", "google-chrome"].iter().find_map(|name| which(name)).ok_or_else(|| {
            anyhow::anyhow!(
                "--pdf needs Chromium to render the page: install Debian's `chromium` package \
                 (apt-get install chromium), or open the HTML file and print it to PDF"
            )
        })?;
    let html = std::fs::canonicalize(html_file)?;
    let profile = std::env::temp_dir().join(format!("as-capone-pdf-{}-{}", std::process::id(), nanos()));
    let target = if pdf_file.is_absolute() { pdf_file.to_path_buf() } else { std::env::current_dir()?.join(pdf_file) };
    let mut child = std::process::Command::new(&chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--no-pdf-header-footer",
            "--no-first-run",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--print-to-pdf={}", target.display()))
        .arg(format!("file://{}", html.display()))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .with_context(|| format!("starting {}", chromium.display()))?;
    let deadline = Instant::now() + std::time::Duration::from_secs(120);
    let status = loop {
        if let Some(s) = child.try_wait()? {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            let _ = std::fs::remove_dir_all(&profile);
            anyhow::bail!("{} did not finish the PDF within 120 s", chromium.display());
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let mut err = String::new();
    if let Some(mut e) = child.stderr.take() {
        use std::io::Read;
        let _ = e.read_to_string(&mut err);
    }
    let _ = std::fs::remove_dir_all(&profile);
    let ok = std::fs::read(&target).map(|b| b.starts_with(b"%PDF")).unwrap_or(false);
    anyhow::ensure!(
        status.success() && ok,
        "{} failed to write {}: {status}\n{err}",
        chromium.display(),
        target.display()
    );
    Ok(())
}

fn nanos() -> u128 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0)
}

fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|d| d.join(name)).find(|p| p.is_file())
}

//! "Scanner le QR code" on the player's home page (web/qrscan.js): the
//! phone's camera reads a paper ticket's QR code and the ticket opens.
//!
//! Chromium's fake camera plays a Y4M file written here: a QR code drawn
//! from the `qrcode` crate's matrix (the crate and error correction level
//! the print file uses, crates/emission/src/print.rs), with its quiet zone,
//! about 9 pixels a module, turned by 3°, unevenly lit and noisy, after a
//! second of paper with nothing on it. Headless Chromium on Linux has no
//! `BarcodeDetector`: the page reads the frames with the vendored jsQR
//! (web/vendor/).
//!
//! - A ticket sold by a shop through the API, its QR code (`/play?code=...`)
//!   in front of the camera: one tap on the button opens it (its serial on
//!   the ticket screen, the camera off, the server's record `in_play`); at
//!   desktop size in French, on a 390x844 phone in English.
//! - A QR code that is not a ticket's (`https://example.org/`): said in the
//!   panel, in both languages, the camera goes on and nothing is sent;
//!   axe-core clean with the panel open at 390x844, the focus in the panel
//!   and back on the button after "Annuler"; the camera stops when the tab
//!   is hidden and when the player leaves the home page. What the page takes
//!   from a QR code's text (any origin's address with a play code, a bare
//!   play code) against `PlayCode::parse`.
//! - The camera refused: said under the form in both languages, the focus
//!   on the button.

use crate::harness::*;
use crate::retail::{OPERATOR, Printed, RETAILER, SHOP, print_file};
use crate::webdriver::Screen;
use emission::PlayCode;
use qrcode::{Color, EcLevel, QrCode};
use serde_json::{Value, json};

const W: usize = 640;
const H: usize = 480;

/// A Y4M video (640 × 480, 10 frames a second, 4:2:0, grey: U = V = 128)
/// of a QR code holding `text` under a phone's camera: `blank` frames of
/// paper, then `shown` frames of the code (its 4-module quiet zone on the
/// ticket's paper) 380 pixels wide, turned by 3°, lit from the left, with
/// the sensor's noise and a little movement from frame to frame.
fn qr_video(text: &str, blank: usize, shown: usize) -> Vec<u8> {
    let qr = QrCode::with_error_correction_level(text.as_bytes(), EcLevel::M).expect("a short text fits");
    let n = qr.width();
    let dark: Vec<bool> = qr.to_colors().into_iter().map(|c| c == Color::Dark).collect();
    let modules = (n + 8) as f64;
    let scale = 380.0 / modules; // pixels a module
    assert!(scale >= 8.0, "{n} modules: {scale:.1} pixels a module");
    // Luminance at a point of the ticket, in modules from the quiet zone's corner.
    let ticket = |u: f64, v: f64| -> f64 {
        if !(0.0..modules).contains(&u) || !(0.0..modules).contains(&v) {
            return 222.0; // the paper around the code
        }
        let (x, y) = (u.floor() as isize - 4, v.floor() as isize - 4);
        let on = (0..n as isize).contains(&x) && (0..n as isize).contains(&y) && dark[y as usize * n + x as usize];
        if on { 30.0 } else { 240.0 }
    };
    let mut out = format!("YUV4MPEG2 W{W} H{H} F10:1 Ip A1:1 C420jpeg\n").into_bytes();
    let mut seed = 0x1b87_3593_u32;
    let mut noise = move || {
        seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
        f64::from(seed >> 8) / f64::from(1u32 << 24) - 0.5
    };
    let (sin, cos) = 3f64.to_radians().sin_cos();
    for f in 0..blank + shown {
        let showing = f >= blank;
        let (dx, dy) = ((f % 4) as f64 * 1.5, (f % 3) as f64 * 1.2);
        let mut y_plane = vec![0u8; W * H];
        for py in 0..H {
            for px in 0..W {
                let mut sum = 222.0;
                if showing {
                    // 2 × 2 samples a pixel: the modules' edges come out grey.
                    sum = 0.0;
                    for sy in 0..2 {
                        for sx in 0..2 {
                            let x = px as f64 + (sx as f64 + 0.5) / 2.0 - W as f64 / 2.0 - dx;
                            let y = py as f64 + (sy as f64 + 0.5) / 2.0 - H as f64 / 2.0 - dy;
                            let u = modules / 2.0 + (x * cos + y * sin) / scale;
                            let v = modules / 2.0 + (-x * sin + y * cos) / scale;
                            sum += ticket(u, v);
                        }
                    }
                    sum /= 4.0;
                }
                let lit = sum * (0.78 + 0.22 * px as f64 / W as f64) + 20.0 * noise();
                y_plane[py * W + px] = lit.clamp(0.0, 255.0) as u8;
            }
        }
        out.extend_from_slice(b"FRAME\n");
        out.extend_from_slice(&y_plane);
        out.extend(std::iter::repeat_n(128u8, 2 * (W / 2) * (H / 2)));
    }
    out
}

/// The fake camera's flags, playing `video` (written in `dir`).
fn fake_camera(dir: &tempfile::TempDir, video: &[u8]) -> Vec<String> {
    let path = dir.path().join("camera.y4m");
    std::fs::write(&path, video).unwrap();
    vec![
        "--use-fake-device-for-media-stream".to_string(),
        "--use-fake-ui-for-media-stream".to_string(),
        format!("--use-file-for-fake-video-capture={}", path.display()),
    ]
}

async fn server() -> TestServer {
    spawn_server_with(|c| {
        c.operator_tokens = vec![OPERATOR.into()];
        c.retailer_tokens = vec![format!("{SHOP}:{RETAILER}")];
    })
    .await
}

/// A paper emission's first ticket, sold by the shop (the API, as the counter does).
async fn a_sold_ticket(srv: &TestServer) -> Printed {
    let r = srv
        .post("/api/admin/emissions", Some(OPERATOR), &json!({"table": TABLE, "blocks": 1, "channel": "paper"}))
        .await;
    let ticket = print_file(srv, r["emission"].as_u64().unwrap()).await.swap_remove(0);
    let sold = srv.post("/api/retail/sell", Some(RETAILER), &json!({"serial": ticket.serial})).await;
    assert_eq!(sold["status"], "sold", "{sold}");
    ticket
}

/// The status the shop's counter reads for a serial (validate changes nothing).
async fn status_at_the_counter(srv: &TestServer, serial: &str) -> Value {
    srv.post("/api/retail/validate", Some(RETAILER), &json!({"serial": serial})).await["status"].clone()
}

async fn assert_axe(b: &Browser, what: &str) {
    if let Some(v) = b.axe().await {
        assert!(v.is_empty(), "axe-core on {what}:\n{}", v.join("\n"));
    }
}

/// Counts the page's POST requests from now on (`window.__posts`).
async fn count_posts(b: &Browser) {
    b.exec(
        "window.__posts = 0; const f = window.fetch; window.fetch = (u, i) => { if (i && i.method === 'POST') window.__posts++; return f(u, i); };",
        json!([]),
    )
    .await;
}

/// Taps "Scanner le QR code" and waits until the camera looks (`on`); the
/// camera's tracks are kept in `window.__tracks`.
async fn open_the_camera(b: &Browser) {
    b.click("#qr-open").await;
    b.wait_for("document.getElementById('qr-scanner').dataset.camera === 'on'", "the camera").await;
    b.exec("window.__tracks = document.getElementById('qr-video').srcObject.getTracks()", json!([])).await;
}

/// The camera is off: the panel hidden, no video, every track ended, the button says so.
async fn assert_camera_stopped(b: &Browser, what: &str) {
    b.wait_for("document.getElementById('qr-scanner').hidden", what).await;
    let got = b
        .exec(
            "return [document.getElementById('qr-video').srcObject === null,
                     (window.__tracks || []).every(t => t.readyState === 'ended'),
                     document.getElementById('qr-open').getAttribute('aria-expanded')]",
            json!([]),
        )
        .await;
    assert_eq!(got, json!([true, true, "false"]), "{what}: the camera stops");
}

/// A sold ticket's QR code before the camera: the button, then the ticket on screen.
async fn a_tickets_qr_code_opens_it(screen: Screen, lang: &str) {
    let srv = server().await;
    let ticket = a_sold_ticket(&srv).await;
    // The address the printed QR code holds (print.rs `play_url`).
    let url = format!("{}/play?code={}", srv.url, ticket.code);
    let dir = tempfile::tempdir().unwrap();
    let Some(b) = browser_with_args(&srv.url, screen, &fake_camera(&dir, &qr_video(&url, 10, 20))).await else {
        return;
    };
    let phone = matches!(screen, Screen::Phone { .. });
    let shot = format!("qr-{}-{lang}", if phone { "phone" } else { "desktop" });
    b.open("/?anim=0").await;
    if lang == "en" {
        b.click("#lang").await;
    }
    assert_eq!(b.text("#qr-open").await, b.string(lang, "qr.open", &[]).await);
    assert_eq!(b.exec("return document.getElementById('qr-scanner').hidden", json!([])).await, true);
    assert_eq!(status_at_the_counter(&srv, &ticket.serial).await, "sold");
    if phone {
        assert_fits(&b, 390, "the lobby with the QR button").await;
    }
    b.exec("document.querySelector('.panel.paper').scrollIntoView()", json!([])).await;
    b.shot(&format!("{shot}-0-lobby")).await;

    b.click("#qr-open").await;
    // The panel while the camera looks (the video's first second is bare paper).
    b.wait_for(
        "['on', 'read'].includes(document.getElementById('qr-scanner').dataset.camera)
         && (document.getElementById('qr-scanner').dataset.camera === 'read' || !!document.getElementById('qr-video').srcObject)",
        "the camera",
    )
    .await;
    b.exec("window.__tracks = document.getElementById('qr-video').srcObject?.getTracks() || []", json!([])).await;
    if b.exec("return document.getElementById('qr-scanner').dataset.camera", json!([])).await == "on" {
        b.shot(&format!("{shot}-1-camera")).await;
    }

    // Read: the ticket opens on its own screen, the camera off.
    b.wait_for(
        &format!(
            "document.body.dataset.view === 'game' && document.body.dataset.state === 'idle' && location.hash === {}",
            json!(format!("#t={}", ticket.serial))
        ),
        "the ticket opened from its QR code",
    )
    .await;
    assert_eq!(b.text("#game-title").await, b.string(lang, "ticket.serial", &[("serial", &ticket.serial)]).await);
    assert_camera_stopped(&b, "the ticket read").await;
    let how = b
        .exec(
            "const p = document.getElementById('qr-scanner');
             return [p.dataset.camera, p.dataset.decoder, typeof BarcodeDetector === 'undefined', document.getElementById('play-code').value]",
            json!([]),
        )
        .await;
    assert_eq!(how[0], "read", "{how}");
    if how[2] == true {
        assert_eq!(how[1], "js", "no BarcodeDetector here: the vendored jsQR read it");
    }
    assert_eq!(how[3], "", "the field is emptied once the ticket opened");
    // The server's record: opened (redeemed) by its play code.
    assert_eq!(status_at_the_counter(&srv, &ticket.serial).await, "in_play");
    let token = b
        .exec(
            "return JSON.parse(localStorage.getItem('asc.paper') || '{}')[arguments[0]] || null",
            json!([ticket.serial]),
        )
        .await;
    assert!(token.as_str().is_some_and(|t| t.starts_with(&format!("t1.{}.", ticket.serial))), "{token}");
    if phone {
        assert_fits(&b, 390, "the ticket opened by the camera").await;
    }
    b.exec("window.scrollTo(0, 0)", json!([])).await;
    b.shot(&format!("{shot}-2-ticket")).await;
    b.close().await;
    srv.app.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tickets_qr_code_read_by_the_camera_opens_it_on_a_desktop_in_french() {
    a_tickets_qr_code_opens_it(Screen::Desktop { width: 1100, height: 860 }, "fr").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tickets_qr_code_read_by_the_camera_opens_it_on_a_phone_in_english() {
    a_tickets_qr_code_opens_it(Screen::Phone { width: 390, height: 844 }, "en").await;
}

/// Another QR code: said, nothing sent, the camera goes on; the panel's
/// accessibility, focus and stops; what a QR code's text gives.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_qr_code_that_is_not_a_tickets_is_said_and_the_camera_stops_when_it_should() {
    let srv = spawn_server().await;
    let dir = tempfile::tempdir().unwrap();
    let args = fake_camera(&dir, &qr_video("https://example.org/", 3, 7));
    let Some(b) = browser_with_args(&srv.url, Screen::Phone { width: 390, height: 844 }, &args).await else { return };
    b.open("/?anim=0").await;

    // What the page takes from a QR code's text: a play code in an address
    // of any origin (http or https) or alone, as `PlayCode::parse` reads it.
    let code = "7K3M-Q9ZD-XW40-2H1T";
    assert_eq!(PlayCode::parse(code).unwrap().to_string(), code);
    let addresses = [
        (format!("{}/play?code={code}", srv.url), Some(code)),
        (format!("https://jeu.example/play?code={}", code.replace('-', "").to_lowercase()), Some(code)),
        (format!("http://example.org/?lang=en&code={code}#x"), Some(code)),
        ("https://example.org/".to_string(), None),
        ("https://example.org/play?code=HELLO".to_string(), None),
        (format!("https://example.org/play?ticket={code}"), None),
        (format!("ftp://example.org/?code={code}"), None),
        (format!("javascript:void(0)//?code={code}"), None),
    ];
    // Bare texts: as `PlayCode::parse` reads them (O is 0, I and L are 1, spaces and dashes ignored).
    let bare = [
        code.to_string(),
        format!("  {}  ", code.replace('-', " ")),
        "7k3m q9zd xw4o 2hlt".to_string(),
        format!("{code}X"),
        "7K3M-Q9ZD-XW40-2H1U".to_string(), // U is not Crockford base32
        String::new(),
    ];
    let cases: Vec<(String, Option<String>)> = addresses
        .iter()
        .map(|(t, w)| (t.clone(), w.map(str::to_string)))
        .chain(bare.iter().map(|t| (t.clone(), PlayCode::parse(t).ok().map(|p| p.to_string()))))
        .collect();
    assert_eq!(cases.iter().filter(|(_, w)| w.as_deref() == Some(code)).count(), 6, "{cases:?}");
    let texts: Vec<&str> = cases.iter().map(|(t, _)| t.as_str()).collect();
    let got = b
        .exec_async(
            "const done = arguments[arguments.length - 1];
             import('/qrscan.js').then(m => done(arguments[0].map((t) => m.playCodeOf(t))), e => done(String(e)));",
            json!([texts]),
        )
        .await;
    let want: Vec<Value> = cases.iter().map(|(_, w)| json!(w)).collect();
    assert_eq!(got, json!(want), "{texts:?}");

    // The camera sees example.org's QR code: said, and it goes on looking.
    count_posts(&b).await;
    open_the_camera(&b).await;
    let opened = b
        .exec(
            "return [document.activeElement.id, document.getElementById('qr-open').getAttribute('aria-expanded'),
                     document.getElementById('qr-scanner').getAttribute('aria-labelledby')]",
            json!([]),
        )
        .await;
    assert_eq!(opened, json!(["qr-scanner", "true", "qr-title"]), "the focus goes to the labelled panel");
    assert_eq!(b.text("#qr-title").await, b.string("fr", "qr.title", &[]).await);
    b.wait_for("document.getElementById('qr-scanner').dataset.misread === 'https://example.org/'", "the QR code read")
        .await;
    assert_eq!(b.text("#qr-state").await, b.string("fr", "qr.not_ticket", &[]).await);
    let frames = b.exec("return Number(document.getElementById('qr-scanner').dataset.frames)", json!([])).await;
    b.wait_for(
        &format!("Number(document.getElementById('qr-scanner').dataset.frames) >= {}", frames.as_u64().unwrap() + 3),
        "more frames read",
    )
    .await;
    let still = b
        .exec(
            "return [document.getElementById('qr-scanner').dataset.camera, window.__posts, document.body.dataset.view, location.hash]",
            json!([]),
        )
        .await;
    assert_eq!(still, json!(["on", 0, "home", ""]), "the camera goes on, nothing is sent, nothing opens");
    assert_axe(&b, "the scan panel open, a QR code that is not a ticket's").await;
    assert_fits(&b, 390, "the scan panel").await;
    b.exec("document.getElementById('qr-scanner').scrollIntoView()", json!([])).await;
    b.shot("qr-3-not-a-ticket").await;
    // In English: the same words, and the button's.
    b.click("#lang").await;
    assert_eq!(b.text("#qr-state").await, b.string("en", "qr.not_ticket", &[]).await);
    assert_eq!(b.text("#qr-close").await, "Cancel");
    assert_axe(&b, "the scan panel in English").await;

    // "Cancel": the camera stops and the focus goes back to the button.
    b.click("#qr-close").await;
    assert_camera_stopped(&b, "Cancel").await;
    assert_eq!(b.exec("return document.activeElement.id", json!([])).await, "qr-open");
    // Escape closes the panel as well.
    open_the_camera(&b).await;
    b.keys("\u{E00C}").await;
    assert_camera_stopped(&b, "Escape").await;
    assert_eq!(b.exec("return document.activeElement.id", json!([])).await, "qr-open");
    // The tab hidden (another app, a locked phone): the camera stops.
    open_the_camera(&b).await;
    b.exec(
        "Object.defineProperty(document, 'hidden', { configurable: true, get: () => true });
         document.dispatchEvent(new Event('visibilitychange'));
         delete document.hidden;",
        json!([]),
    )
    .await;
    assert_camera_stopped(&b, "the tab hidden").await;
    // The player leaves the home page (a page of the menu): the camera stops.
    open_the_camera(&b).await;
    b.exec("location.hash = '#/regles'", json!([])).await;
    assert_camera_stopped(&b, "leaving the home page").await;
    assert_eq!(b.exec("return [document.body.dataset.view, window.__posts]", json!([])).await, json!(["rules", 0]));
    b.close().await;
    srv.app.shutdown().await.unwrap();
}

/// The browser refuses the camera: said under the form in both languages.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_camera_is_said_in_both_languages() {
    let srv = spawn_server().await;
    let args = ["--use-fake-device-for-media-stream".to_string(), "--deny-permission-prompts".to_string()];
    let Some(b) = browser_with_args(&srv.url, Screen::Desktop { width: 1000, height: 800 }, &args).await else {
        return;
    };
    b.open("/?anim=0").await;
    b.click("#qr-open").await;
    b.wait_for("document.getElementById('qr-scanner').dataset.camera === 'refused'", "the refusal").await;
    let shown = b
        .exec(
            "return [document.getElementById('qr-scanner').hidden, document.getElementById('qr-video').srcObject === null,
                     document.activeElement.id, document.getElementById('qr-open').getAttribute('aria-expanded'),
                     document.getElementById('qr-note').getAttribute('role')]",
            json!([]),
        )
        .await;
    assert_eq!(shown, json!([true, true, "qr-open", "false", "alert"]));
    assert_eq!(b.text("#qr-note").await, b.string("fr", "qr.refused", &[]).await);
    assert_axe(&b, "the camera refused").await;
    b.shot("qr-4-refused").await;
    b.click("#lang").await;
    assert_eq!(b.text("#qr-note").await, b.string("en", "qr.refused", &[]).await, "the words follow the language");
    // Typing the code by hand instead: the camera's words go.
    b.type_into("#play-code", "7K3M").await;
    assert_eq!(b.text("#qr-note").await, "");
    b.close().await;
    srv.app.shutdown().await.unwrap();
}

//! The serial read by the phone's camera at the shop's counter (`/shop`,
//! "Scanner"): web/code128.js reads the Code 128 barcode the print file
//! draws (crates/emission/src/print.rs, code128.rs), web/serial.js checks
//! the serial's check digits as `Serial::parse` does, and web/shop.js opens
//! the camera, fills the field and stops.
//!
//! - The decoder in Chromium, on the print file's own SVG page drawn into a
//!   canvas at several scales, blurred and noisy; on bars drawn from the
//!   Rust encoder's widths; nothing from a corrupted barcode (the check
//!   symbol wrong, a bar changed), and nothing from one scan line alone.
//! - The page's serial check against the Rust one, on every single-character
//!   change and swap of serials.
//! - The real path with Chromium's fake camera playing a Y4M file of a
//!   printed ticket's barcode written here: sign in, "Scanner", the field
//!   gets the serial, the camera stops, "Vendre" sells it; in French and
//!   English, axe-core clean; a shop's USB scanner (a keyboard: the serial,
//!   then Enter) checks the ticket even when a button has the focus.
//! - Camera refused or absent: a clear message in both languages, and the
//!   field still works by hand.

use crate::harness::*;
use crate::webdriver::Screen;
use emission::{Emission, EmissionSeed, PlayCode, Serial, TicketRecord, code128, ticket_svg};
use serde_json::{Value, json};

const OPERATOR: &str = "scan-operator-token-0001";
const RETAILER: &str = "scan-retailer-token-0001";
const SHOP: &str = "Tabac de la Gare";

/// Test-only helpers run in the page: `draw(svg, scale, crop)` draws the
/// print file's SVG page at `scale` pixels per SVG unit and keeps the rows
/// `crop` = [top, height] (SVG units; null: the whole page);
/// `bars(widths, module, height)` draws element widths (bar first) with
/// 10-module quiet zones on white; `spoil(canvas, blur, noise, seed)`
/// blurs it (CSS pixels of standard deviation) and adds uniform noise of
/// ±`noise` grey levels; all return canvases.
const PAGE_HELPERS: &str = r#"
const h = {
  async draw(svg, scale, crop) {
    const w = Math.round(320 * scale), ht = Math.round(600 * scale);
    // The page at the pixel size wanted (not 80 mm scaled afterwards): the same drawing, sharper.
    const sized = svg.replace('width="80mm" height="150mm"', `width="${w}" height="${ht}"`);
    const img = new Image();
    img.src = 'data:image/svg+xml;charset=utf-8,' + encodeURIComponent(sized);
    await img.decode();
    const [top, height] = crop || [0, 600];
    const c = document.createElement('canvas');
    c.width = w;
    c.height = Math.round(height * scale);
    const ctx = c.getContext('2d');
    ctx.fillStyle = '#fff';
    ctx.fillRect(0, 0, c.width, c.height);
    ctx.drawImage(img, 0, -top * scale, w, ht);
    return c;
  },
  bars(widths, module, height) {
    const total = widths.reduce((a, b) => a + b, 0) + 20;
    const c = document.createElement('canvas');
    c.width = Math.ceil(total * module + 40);
    c.height = height;
    const ctx = c.getContext('2d');
    ctx.fillStyle = '#f4efe2';
    ctx.fillRect(0, 0, c.width, c.height);
    ctx.fillStyle = '#fff';
    ctx.fillRect(20, 0, total * module, height);
    ctx.fillStyle = '#111';
    let at = 20 + 10 * module;
    widths.forEach((w, i) => {
      if (i % 2 === 0) ctx.fillRect(at, 0, w * module, height);
      at += w * module;
    });
    return c;
  },
  spoil(src, blur, noise, seed) {
    const c = document.createElement('canvas');
    c.width = src.width;
    c.height = src.height;
    const ctx = c.getContext('2d', { willReadFrequently: true });
    ctx.fillStyle = '#fff';
    ctx.fillRect(0, 0, c.width, c.height);
    ctx.filter = blur > 0 ? `blur(${blur}px)` : 'none';
    ctx.drawImage(src, 0, 0);
    ctx.filter = 'none';
    const img = ctx.getImageData(0, 0, c.width, c.height);
    let s = seed >>> 0;
    for (let i = 0; i < img.data.length; i += 4) {
      s = (Math.imul(s, 1103515245) + 12345) >>> 0;
      const n = ((s >>> 8) / 16777216 - 0.5) * 2 * noise;
      for (let k = 0; k < 3; k++) img.data[i + k] = Math.max(0, Math.min(255, img.data[i + k] + n));
    }
    return img;
  },
};
"#;

/// Runs `body` (which may `await`, and sees `m`: web/code128.js, `s`:
/// web/serial.js, `h`: [`PAGE_HELPERS`], `args`) in the page; its value.
async fn in_page(b: &Browser, body: &str, args: Value) -> Value {
    let script = format!(
        "const args = arguments[0]; const done = arguments[arguments.length - 1];
         {PAGE_HELPERS}
         (async () => {{
           const m = await import('/code128.js');
           const s = await import('/serial.js');
           {body}
         }})().then(done, e => done({{error: String(e && e.stack || e)}}));"
    );
    let v = b.exec_async(&script, json!([args])).await;
    assert!(v.get("error").is_none(), "in the page: {v}");
    v
}

/// The print file's ticket pages of an emission of the test table (the
/// same code as `as-capone emit --print`: [`ticket_svg`]).
fn printed_pages(count: usize) -> Vec<(TicketRecord, String)> {
    let table = math::PrizeTable::parse_toml(TABLE).unwrap();
    let e = Emission::new(3, table, EmissionSeed::from_bytes(std::array::from_fn(|i| (i * 7) as u8))).unwrap();
    let block = e.generate_block(2).unwrap();
    block.tickets.iter().take(count).map(|t| (*t, ticket_svg(e.table(), t, "https://jeu.example/"))).collect()
}

/// The barcode group of a ticket's SVG page: the white ground `(x, width)` (quiet zones included), the bars `(x, width)`
/// and their top and height.
struct Drawn {
    ground: (f64, f64),
    bars: Vec<(f64, f64)>,
    top: f64,
    height: f64,
}

fn barcode_of(svg: &str) -> Drawn {
    let group = svg.split("<g id=\"serial-barcode\"").nth(1).expect("the barcode").split("</g>").next().unwrap();
    let attr = |s: &str, name: &str| -> f64 {
        let at = s.find(&format!(" {name}=\"")).unwrap_or_else(|| panic!("{name} in {s}")) + name.len() + 3;
        s[at..at + s[at..].find('"').unwrap()].parse().unwrap()
    };
    let rects: Vec<&str> = group.split("<rect").skip(1).collect();
    Drawn {
        ground: (attr(rects[0], "x"), attr(rects[0], "width")),
        bars: rects[1..].iter().map(|r| (attr(r, "x"), attr(r, "width"))).collect(),
        top: attr(rects[0], "y"),
        height: attr(rects[0], "height"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_counters_decoder_reads_the_printed_barcode_and_nothing_else() {
    let srv = spawn_server().await;
    let Some(b) = browser(&srv.url, Screen::Desktop { width: 1000, height: 800 }).await else { return };
    b.open("/shop").await;

    // The print file's pages: the barcode's band (with the scratch zone's
    // edge above and the small print below), at several scales, sharp,
    // blurred and noisy. A module is 1.15 SVG units: 2.3 to 5.2 pixels
    // (drawn with crispEdges, as the print asks: each edge on a pixel's).
    let pages = printed_pages(3);
    for (t, svg) in &pages {
        let text = t.serial.to_string().replace('-', "");
        let d = barcode_of(svg);
        let crop = [d.top - 20.0, d.height + 40.0];
        let cases = json!([[2.0, 0.0, 0], [2.0, 0.5, 20], [3.0, 0.8, 25], [3.0, 0.0, 45], [4.5, 1.2, 30]]);
        let read = in_page(
            &b,
            "const out = [];
             for (const [scale, blur, noise] of args.cases) {
               const img = h.spoil(await h.draw(args.svg, scale, args.crop), blur, noise, 7 + out.length);
               out.push([m.decodeImage(img), m.readLines(img).length]);
             }
             return out;",
            json!({"svg": svg, "crop": crop, "cases": cases}),
        )
        .await;
        for (case, got) in cases.as_array().unwrap().iter().zip(read.as_array().unwrap()) {
            assert_eq!(got[0], json!(text), "{}: scale, blur, noise {case}: {got}", t.serial);
        }
        // What the shop's camera fills the field with: the serial with its dashes.
        let field = in_page(&b, "return s.parseSerial(args.text);", json!({"text": text})).await;
        assert_eq!(field, json!(t.serial.to_string()));
    }

    // The whole page (the QR code, the texts and the scratch zone's frame
    // read as nothing else): the barcode, on many lines.
    let (t, svg) = &pages[0];
    let whole = in_page(
        &b,
        "const img = h.spoil(await h.draw(args.svg, 3, null), 0.5, 10, 3);
         return [m.decodeImage(img, {lines: 300}), m.readLines(img, 300)];",
        json!({"svg": svg}),
    )
    .await;
    assert_eq!(whole[0], json!(t.serial.to_string().replace('-', "")), "{whole}");
    let lines = whole[1].as_array().unwrap();
    assert!(lines.len() >= 2, "several lines read it: {whole}");
    assert!(lines.iter().all(|l| *l == whole[0]), "no line reads anything else: {whole}");

    // Bars drawn from the Rust encoder's widths read back; a barcode with
    // one data symbol changed (a valid symbol: the check symbol is then
    // wrong) or one bar a module wider (and the next space a module
    // narrower, so that the symbols stay 11 modules) reads as nothing.
    let text = t.serial.to_string().replace('-', "");
    let good = code128::widths(&text).unwrap();
    let mut other_symbol = good.clone();
    let seven = code128::widths("7").unwrap();
    let at = 6 * 5; // the fifth character's symbol
    assert_ne!(other_symbol[at..at + 6], seven[6..12], "a different symbol");
    other_symbol[at..at + 6].copy_from_slice(&seven[6..12]);
    assert_eq!(code128::decode(&other_symbol), Err(code128::Code128Error::BadCheck), "only the check symbol is wrong");
    let mut wider_bar = good.clone();
    let k = (6..good.len() - 7).find(|&i| i % 2 == 0 && good[i + 1] > 1).unwrap();
    wider_bar[k] += 1;
    wider_bar[k + 1] -= 1;
    assert!(code128::decode(&wider_bar).is_err(), "the Rust decoder refuses it too");
    let read = in_page(
        &b,
        "const out = [];
         for (const w of args.widths) for (const [module, blur, noise] of [[2, 0, 0], [3, 0.6, 15], [4, 1, 25]]) {
           const img = h.spoil(h.bars(w, module, 60), blur, noise, out.length + 1);
           out.push([m.decodeImage(img), m.readLines(img).length]);
         }
         return out;",
        json!({"widths": [good, other_symbol, wider_bar]}),
    )
    .await;
    let read = read.as_array().unwrap();
    for got in &read[0..3] {
        assert_eq!(got[0], json!(text), "the encoder's bars: {got}");
        assert!(got[1].as_u64().unwrap() >= 2, "{got}");
    }
    for got in &read[3..9] {
        assert_eq!(got, &json!([null, 0]), "a corrupted barcode reads as nothing, on every line");
    }

    // Two lines must agree: a band of bars only three pixels high, under
    // one scan line of 48, is read by that line and refused; the same band
    // across several lines is accepted.
    let agree = in_page(
        &b,
        "const band = h.bars(args.widths, 2, 3);
         const out = [];
         for (const rows of [3, 30]) {
           const c = document.createElement('canvas');
           c.width = band.width; c.height = 480;
           const ctx = c.getContext('2d');
           ctx.fillStyle = '#f4efe2'; ctx.fillRect(0, 0, c.width, c.height);
           // Scan line 20 of 48 is at y = floor(20.5 * 480 / 48) = 205.
           ctx.drawImage(band, 0, 0, band.width, 3, 0, 204, band.width, rows);
           const img = ctx.getImageData(0, 0, c.width, c.height);
           out.push([m.readLines(img, 48), m.decodeImage(img, {lines: 48})]);
         }
         return out;",
        json!({"widths": good}),
    )
    .await;
    assert_eq!(agree[0], json!([[text], null]), "one line alone is not a reading");
    assert_eq!(agree[1][1], json!(text), "{agree}");
    b.close().await;
    srv.app.shutdown().await.unwrap();
}

/// web/serial.js accepts exactly what `Serial::parse` accepts, and writes
/// it as Rust does: every single character changed and every neighbour
/// swap of serials, with and without dashes, in either case.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_pages_serial_check_is_the_rust_one() {
    let srv = spawn_server().await;
    let Some(b) = browser(&srv.url, Screen::Desktop { width: 1000, height: 800 }).await else { return };
    b.open("/shop").await;
    let mut texts = vec![String::new(), "ASC".into(), " asc-001-00001-000042-81 ".into(), "aſc0010000100004281".into()];
    for (code, e, bl, p) in
        [("ASC", 1, 1, 42), ("TST", 1, 1, 7), ("B1X2", 907, 31_415, 92_653), ("ZZZZZZ", 999, 99_999, 999_999)]
    {
        let s = Serial::new(emission::GameCode::parse(code).unwrap(), e, bl, p).unwrap();
        for text in [s.to_string(), s.to_string().replace('-', ""), s.to_string().to_lowercase()] {
            let chars: Vec<char> = text.chars().collect();
            texts.push(text.clone());
            for i in 0..chars.len() {
                for c in ['0', '1', '5', '9', 'A', 'O', 'Z', 'a', '-', ' ', 'é'] {
                    let mut t = chars.clone();
                    t[i] = c;
                    texts.push(t.into_iter().collect());
                }
                if i + 1 < chars.len() {
                    let mut t = chars.clone();
                    t.swap(i, i + 1);
                    texts.push(t.into_iter().collect());
                }
                texts.push(chars[..i].iter().chain(&chars[i + 1..]).collect());
            }
        }
    }
    let page = in_page(&b, "return args.texts.map((t) => s.parseSerial(t));", json!({"texts": texts})).await;
    let page = page.as_array().unwrap();
    let mut accepted = 0;
    for (text, got) in texts.iter().zip(page) {
        let rust = Serial::parse(text).ok().map(|s| s.to_string());
        assert_eq!(got.as_str().map(str::to_string), rust, "{text:?}");
        accepted += usize::from(rust.is_some());
    }
    assert!(accepted >= 12 && accepted < texts.len() / 4, "{accepted} of {} accepted", texts.len());
    b.close().await;
    srv.app.shutdown().await.unwrap();
}

// ------------------------------------------------------------------ the fake camera

const W: usize = 640;
const H: usize = 480;

/// A Y4M video (640 × 480, 10 frames a second, 4:2:0, grey: U = V = 128)
/// of a printed ticket's barcode under a phone's camera: `blank` frames of
/// the ticket's paper with no barcode in view, then `shown` frames of the
/// barcode band (the scratch zone's grey edge above it), turned by 2°,
/// unevenly lit, noisy, moving a little from frame to frame.
fn camera_video(d: &Drawn, blank: usize, shown: usize) -> Vec<u8> {
    let mut out = format!("YUV4MPEG2 W{W} H{H} F10:1 Ip A1:1 C420jpeg\n").into_bytes();
    let mut seed = 0x2545_f491_u32;
    let mut noise = move || {
        seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
        f64::from(seed >> 8) / f64::from(1u32 << 24) - 0.5
    };
    // The barcode's ground fills 84 % of the picture's width.
    let scale = 0.84 * W as f64 / d.ground.1;
    let (cx, cy) = (d.ground.0 + d.ground.1 / 2.0, d.top + d.height / 2.0);
    let mut bars = d.bars.clone();
    bars.sort_by(|a, b| a.0.total_cmp(&b.0));
    let in_bar = |u: f64| {
        let i = bars.partition_point(|(x, _)| *x <= u);
        i > 0 && u < bars[i - 1].0 + bars[i - 1].1
    };
    // Luminance at a point of the ticket (SVG units).
    let ticket = |u: f64, v: f64| -> f64 {
        if v >= d.top && v < d.top + d.height && u >= d.ground.0 && u < d.ground.0 + d.ground.1 {
            if in_bar(u) { 28.0 } else { 246.0 }
        } else if v < d.top - 4.0 {
            201.0 // the scratch zone's grey
        } else {
            236.0 // the paper
        }
    };
    for f in 0..blank + shown {
        let mut y_plane = vec![0u8; W * H];
        let showing = f >= blank;
        let (angle, dx, dy) = (2f64.to_radians(), (f % 5) as f64 * 1.3, (f % 3) as f64 * 2.0);
        let (sin, cos) = angle.sin_cos();
        for py in 0..H {
            for px in 0..W {
                let mut sum = 0.0;
                if showing {
                    // 4 × 2 samples a pixel: the camera sees the bars' edges as grey.
                    for sy in 0..2 {
                        for sx in 0..4 {
                            let x = px as f64 + (sx as f64 + 0.5) / 4.0 - W as f64 / 2.0 - dx;
                            let y = py as f64 + (sy as f64 + 0.5) / 2.0 - H as f64 / 2.0 - dy;
                            let u = cx + (x * cos + y * sin) / scale;
                            let v = cy + (-x * sin + y * cos) / scale;
                            sum += ticket(u, v);
                        }
                    }
                    sum /= 8.0;
                } else {
                    sum = 236.0;
                }
                // Light from the left, and the sensor's noise.
                let lit = sum * (0.8 + 0.2 * px as f64 / W as f64) + 24.0 * noise();
                y_plane[py * W + px] = lit.clamp(0.0, 255.0) as u8;
            }
        }
        out.extend_from_slice(b"FRAME\n");
        out.extend_from_slice(&y_plane);
        out.extend(std::iter::repeat_n(128u8, 2 * (W / 2) * (H / 2)));
    }
    out
}

/// The first ticket of the server's paper emission, as its print file draws it.
async fn a_printed_ticket(srv: &TestServer) -> (String, String) {
    let r = srv
        .post("/api/admin/emissions", Some(OPERATOR), &json!({"table": TABLE, "blocks": 1, "channel": "paper"}))
        .await;
    let csv = srv.get_text(&format!("/api/admin/emissions/{}/blocks/1/print.csv", r["emission"]), OPERATOR).await;
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap_or_else(|| panic!("{name} in {header:?}"));
    let f: Vec<&str> = lines.next().unwrap().split(',').collect();
    let table = math::PrizeTable::parse_toml(TABLE).unwrap();
    let prizes: Vec<u64> = (5..=8).map(|n| f[col(&format!("prize_{n}"))].parse().unwrap()).collect();
    let row = table
        .schedules
        .iter()
        .position(|s| (5..=8u8).map(|n| s.prizes.for_tricks(n)).eq(prizes.iter().copied()))
        .expect("the ticket's row of the table");
    let serial = Serial::parse(f[col("serial")]).unwrap();
    let ticket = TicketRecord {
        position: serial.position(),
        serial,
        play_code: PlayCode::parse(f[col("play_code")]).unwrap(),
        row,
        prizes: table.schedules[row].prizes,
        server_seed: [0; 32],
    };
    (serial.to_string(), ticket_svg(&table, &ticket, &srv.url))
}

async fn sign_in(b: &Browser) {
    b.open("/shop").await;
    b.type_into("#shop-token", RETAILER).await;
    b.click("#login-go").await;
    b.wait_for("document.body.dataset.view === 'counter' && document.body.dataset.state === 'idle'", "signed in").await;
    assert_eq!(b.text("#shop-name").await, SHOP);
}

/// Clicks a counter's button and waits for its answer: `[action, ok, status]`.
async fn answer_to(b: &Browser, button: &str) -> Vec<Value> {
    let n = b.exec("return Number(document.getElementById('answer').dataset.n || 0)", json!([])).await;
    b.click(button).await;
    answer_after(b, n.as_u64().unwrap()).await
}

async fn answer_after(b: &Browser, n: u64) -> Vec<Value> {
    b.wait_for(
        &format!(
            "document.body.dataset.state === 'idle' && Number(document.getElementById('answer').dataset.n || 0) === {}",
            n + 1
        ),
        "the counter's answer",
    )
    .await;
    b.exec(
        "const a = document.getElementById('answer'); return [a.dataset.action, a.dataset.ok, a.dataset.status, document.getElementById('answer-message').textContent];",
        json!([]),
    )
    .await
    .as_array()
    .unwrap()
    .clone()
}

async fn assert_axe(b: &Browser, screen: &str) {
    if let Some(v) = b.axe().await {
        assert!(v.is_empty(), "{screen}: axe-core found serious or critical violations:\n{}", v.join("\n"));
    }
}

/// "Scanner", then the camera's reading: the serial in the field, the
/// camera stopped, the line under the field in `lang`.
async fn scan_with_the_camera(b: &Browser, serial: &str, lang: &str, shot: &str) {
    b.exec("delete document.body.dataset.camera; document.getElementById('serial').value = '';", json!([])).await;
    assert_eq!(b.exec("return document.getElementById('scanner').hidden", json!([])).await, true);
    b.click("#scan-open").await;
    // The picture shows while the camera looks (the video's first frames hold no barcode).
    b.wait_for(
        "['on', 'read'].includes(document.body.dataset.camera) && (document.body.dataset.camera === 'read' || Number(document.getElementById('scanner').dataset.frames || 0) >= 1)",
        "the camera",
    )
    .await;
    if b.exec("return document.body.dataset.camera", json!([])).await == "on" {
        assert_eq!(
            b.exec("return document.getElementById('scan-open').getAttribute('aria-expanded')", json!([])).await,
            "true"
        );
        assert_eq!(b.text("#scanner-state").await, b.string(lang, "shop.scan.looking", &[]).await);
        assert_axe(b, &format!("{shot}: the camera open")).await;
        b.shot(&format!("{shot}-camera")).await;
    }
    b.wait_for("document.body.dataset.camera === 'read'", "the serial read by the camera").await;
    let after = b
        .exec(
            "const v = document.getElementById('scanner-video');
             return [document.getElementById('serial').value, document.getElementById('scanner').hidden, v.srcObject === null,
                     document.getElementById('scan-open').getAttribute('aria-expanded'), document.activeElement.id,
                     document.getElementById('scanner').dataset.decoder,
                     typeof BarcodeDetector === 'undefined'];",
            json!([]),
        )
        .await;
    let after = after.as_array().unwrap();
    assert_eq!(after[0], serial, "the field gets the serial, with its dashes");
    assert_eq!(after[1..5], [json!(true), json!(true), json!("false"), json!("serial")], "the camera stops: {after:?}");
    if after[6] == true {
        assert_eq!(after[5], "js", "no BarcodeDetector here: web/code128.js read it");
    }
    assert_eq!(b.text("#scan-note").await, b.string(lang, "shop.scan.read", &[("serial", serial)]).await);
    assert_eq!(
        b.exec("return document.getElementById('answer').dataset.pending || null", json!([])).await,
        Value::Null,
        "reading sends nothing: no sale, no payment"
    );
    assert_axe(b, &format!("{shot}: the serial read")).await;
    b.shot(shot).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_printed_tickets_barcode_scanned_with_the_phones_camera_then_sold() {
    let srv = spawn_server_with(|c| {
        c.operator_tokens = vec![OPERATOR.into()];
        c.retailer_tokens = vec![format!("{SHOP}:{RETAILER}")];
    })
    .await;
    let (serial, svg) = a_printed_ticket(&srv).await;
    let dir = tempfile::tempdir().unwrap();
    let video = dir.path().join("ticket.y4m");
    std::fs::write(&video, camera_video(&barcode_of(&svg), 20, 20)).unwrap();
    let args = [
        "--use-fake-device-for-media-stream".to_string(),
        "--use-fake-ui-for-media-stream".to_string(),
        format!("--use-file-for-fake-video-capture={}", video.display()),
    ];
    let Some(b) = browser_with_args(&srv.url, Screen::Phone { width: 390, height: 844 }, &args).await else { return };
    sign_in(&b).await;
    assert_eq!(b.text("#scan-open").await, "Scanner");
    assert_eq!(srv.post("/api/retail/validate", Some(RETAILER), &json!({"serial": serial})).await["status"], "printed");

    scan_with_the_camera(&b, &serial, "fr", "scan-1-read").await;
    assert_fits(&b, 390, "the serial read").await;
    assert_eq!(
        srv.post("/api/retail/validate", Some(RETAILER), &json!({"serial": serial})).await["status"],
        "printed",
        "the camera only fills the field"
    );
    // The shopkeeper sells it with the usual button.
    let sold = answer_to(&b, "#do-sell").await;
    assert_eq!(sold[0..3], [json!("sell"), json!("true"), json!("sold")], "{sold:?}");
    assert_eq!(srv.post("/api/retail/validate", Some(RETAILER), &json!({"serial": serial})).await["sold_by"], SHOP);
    b.shot("scan-2-sold").await;

    // In English: scanned again, then checked.
    b.click("#lang").await;
    assert_eq!(b.text("#scan-open").await, "Scan");
    scan_with_the_camera(&b, &serial, "en", "scan-3-read-en").await;
    let checked = answer_to(&b, "#do-validate").await;
    assert_eq!(checked[0..3], [json!("validate"), json!("true"), json!("sold")], "{checked:?}");

    // A shop's USB or Bluetooth scanner types the serial as it reads it
    // (no dashes) and Enter. A button has the focus (after "Vérifier"):
    // the keys go to the field, emptied, and Enter checks the ticket (the
    // button is not pressed: nothing sold). Then, the focus in the field,
    // the next serial replaces the last one (left selected) and is checked.
    let compact = serial.replace('-', "");
    b.exec("document.getElementById('do-sell').focus()", json!([])).await;
    for (i, typed) in [compact.clone(), compact.to_lowercase()].iter().enumerate() {
        let n = b.exec("return Number(document.getElementById('answer').dataset.n || 0)", json!([])).await;
        b.keys(&format!("{typed}\u{E007}")).await;
        let got = answer_after(&b, n.as_u64().unwrap()).await;
        assert_eq!(got[0..3], [json!("validate"), json!("true"), json!("sold")], "scan {i}: {got:?}");
        assert_eq!(b.exec("return document.getElementById('serial').value", json!([])).await, typed.as_str());
        assert_eq!(b.exec("return document.activeElement.id", json!([])).await, "serial");
    }
    b.close().await;
    srv.app.shutdown().await.unwrap();
}

/// The camera refused (the browser denies it) or absent: said under the
/// field in both languages; the serial is typed by hand as before.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_camera_or_a_refused_one_is_said_and_the_field_still_works() {
    let srv = spawn_server_with(|c| {
        c.operator_tokens = vec![OPERATOR.into()];
        c.retailer_tokens = vec![format!("{SHOP}:{RETAILER}")];
    })
    .await;
    let (serial, _) = a_printed_ticket(&srv).await;
    for (args, key) in [
        (
            vec!["--use-fake-device-for-media-stream".to_string(), "--deny-permission-prompts".to_string()],
            "shop.scan.refused",
        ),
        (vec![], "shop.scan.none"),
    ] {
        let Some(b) = browser_with_args(&srv.url, Screen::Phone { width: 390, height: 844 }, &args).await else {
            return;
        };
        sign_in(&b).await;
        for lang in ["fr", "en"] {
            b.exec("delete document.body.dataset.camera", json!([])).await;
            b.click("#scan-open").await;
            b.wait_for("document.body.dataset.camera === 'refused'", key).await;
            assert_eq!(b.text("#scan-note").await, b.string(lang, key, &[]).await, "{args:?}");
            assert_eq!(b.exec("return document.getElementById('scan-note').dataset.kind", json!([])).await, "error");
            assert_eq!(b.exec("return document.getElementById('scanner').hidden", json!([])).await, true);
            assert_eq!(b.exec("return document.activeElement.id", json!([])).await, "serial");
            assert_axe(&b, key).await;
            b.shot(&format!("scan-4-{key}-{lang}")).await;
            if lang == "fr" {
                b.click("#lang").await;
                assert_eq!(
                    b.text("#scan-note").await,
                    b.string("en", key, &[]).await,
                    "the message follows the language"
                );
            }
        }
        // By hand, as before: typed, and the line under the field goes.
        b.type_into("#serial", &serial).await;
        assert_eq!(b.text("#scan-note").await, "");
        let got = answer_to(&b, "#do-validate").await;
        assert_eq!(got[0..3], [json!("validate"), json!("true"), json!("printed")], "{got:?}");
        b.close().await;
    }
    srv.app.shutdown().await.unwrap();
}

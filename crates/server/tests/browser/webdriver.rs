//! A small W3C WebDriver client over reqwest: just the commands these tests
//! use (session, navigation, elements, scripts, pointer and key actions,
//! screenshots). Chromedriver speaks the W3C protocol over HTTP, so no
//! WebDriver crate is needed.

use base64::Engine as _;
use serde_json::{Value, json};
use std::path::Path;
use std::time::{Duration, Instant};

const ELEMENT_KEY: &str = "element-6066-11e4-a52e-4f735466cecf";

/// What a browser window looks like.
#[derive(Clone, Copy, Debug)]
pub enum Screen {
    /// A desktop window of this size.
    Desktop { width: u32, height: u32 },
    /// A phone: a `width` CSS-pixel viewport, touch, device pixel ratio 2.
    Phone { width: u32, height: u32 },
}

pub struct Session {
    http: reqwest::Client,
    base: String,
    pub id: String,
}

#[derive(Clone, Debug)]
pub struct Element(pub String);

impl Session {
    pub async fn start(
        driver_url: &str,
        chromium: &Path,
        user_data_dir: &Path,
        screen: Screen,
        extra: &[String],
    ) -> Session {
        let mut args = vec![
            "--headless".to_string(),
            "--no-sandbox".into(),
            "--disable-gpu".into(),
            "--disable-background-networking".into(),
            "--disable-component-update".into(),
            "--disable-sync".into(),
            "--no-first-run".into(),
            "--disable-dev-shm-usage".into(),
            "--disable-extensions".into(),
            "--password-store=basic".into(),
            format!("--user-data-dir={}", user_data_dir.display()),
        ];
        args.extend_from_slice(extra);
        let mut chrome = json!({"binary": chromium.display().to_string()});
        match screen {
            Screen::Desktop { width, height } => args.push(format!("--window-size={width},{height}")),
            Screen::Phone { width, height } => {
                args.push(format!("--window-size={width},{height}"));
                chrome["mobileEmulation"] = json!({
                    "deviceMetrics": {"width": width, "height": height, "pixelRatio": 2.0, "touch": true, "mobile": true}
                });
            }
        }
        chrome["args"] = json!(args);
        let caps = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": chrome,
            "pageLoadStrategy": "normal",
            // The console's messages, read at the end of every test (harness.rs: no error allowed).
            "goog:loggingPrefs": {"browser": "ALL"},
            "timeouts": {"script": 30000, "pageLoad": 30000, "implicit": 0}
        }}});
        let http = reqwest::Client::builder().timeout(Duration::from_secs(60)).build().unwrap();
        let r = http.post(format!("{driver_url}/session")).json(&caps).send().await.expect("chromedriver answers");
        let v: Value = r.json().await.expect("chromedriver JSON");
        let id = v["value"]["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("chromedriver could not start Chromium: {v}"))
            .to_string();
        Session { http, base: driver_url.to_string(), id }
    }

    /// A session already started in the chromedriver at `driver_url` (a
    /// kept one: pool.rs).
    pub fn attach(driver_url: &str, id: &str) -> Session {
        let http = reqwest::Client::builder().timeout(Duration::from_secs(60)).build().unwrap();
        Session { http, base: driver_url.to_string(), id: id.to_string() }
    }

    async fn cmd(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> Result<Value, String> {
        let url = format!("{}/session/{}{path}", self.base, self.id);
        let mut req = self.http.request(method.clone(), &url);
        if let Some(b) = body {
            req = req.json(&b);
        }
        let r = req.send().await.map_err(|e| format!("{method} {path}: {e}"))?;
        let v: Value = r.json().await.map_err(|e| format!("{method} {path}: {e}"))?;
        if let Some(err) = v["value"]["error"].as_str() {
            return Err(format!("{method} {path}: {err}: {}", v["value"]["message"].as_str().unwrap_or("")));
        }
        Ok(v["value"].clone())
    }

    async fn post(&self, path: &str, body: Value) -> Value {
        self.cmd(reqwest::Method::POST, path, Some(body)).await.unwrap_or_else(|e| panic!("{e}"))
    }

    pub async fn goto(&self, url: &str) {
        self.post("/url", json!({"url": url})).await;
    }

    /// [`Session::goto`], an error instead of a panic.
    pub async fn try_goto(&self, url: &str) -> Result<(), String> {
        self.cmd(reqwest::Method::POST, "/url", Some(json!({"url": url}))).await.map(|_| ())
    }

    /// A Chrome DevTools Protocol command (chromedriver's `goog/cdp/execute`).
    pub async fn cdp(&self, command: &str, params: Value) -> Result<Value, String> {
        self.cmd(reqwest::Method::POST, "/goog/cdp/execute", Some(json!({"cmd": command, "params": params}))).await
    }

    pub async fn refresh(&self) {
        self.post("/refresh", json!({})).await;
    }

    /// Runs `script` (a function body; `arguments` are `args`) and returns its value.
    pub async fn exec(&self, script: &str, args: Value) -> Value {
        self.post("/execute/sync", json!({"script": script, "args": args})).await
    }

    /// Runs an async script: it must call `arguments[arguments.length - 1](value)`.
    pub async fn exec_async(&self, script: &str, args: Value) -> Value {
        self.post("/execute/async", json!({"script": script, "args": args})).await
    }

    pub async fn try_find(&self, css: &str) -> Option<Element> {
        let v = self
            .cmd(reqwest::Method::POST, "/element", Some(json!({"using": "css selector", "value": css})))
            .await
            .ok()?;
        v[ELEMENT_KEY].as_str().map(|s| Element(s.to_string()))
    }

    pub async fn find(&self, css: &str) -> Element {
        self.try_find(css).await.unwrap_or_else(|| panic!("no element matches {css}"))
    }

    /// A real click (chromedriver checks that the element is visible and not covered).
    pub async fn click(&self, css: &str) {
        let e = self.find(css).await;
        self.post(&format!("/element/{}/click", e.0), json!({})).await;
    }

    pub async fn type_into(&self, css: &str, text: &str) {
        let e = self.find(css).await;
        self.post(&format!("/element/{}/clear", e.0), json!({})).await;
        self.post(&format!("/element/{}/value", e.0), json!({"text": text})).await;
    }

    /// Presses keys on whatever has the focus (W3C key codes: "\u{E007}" is Enter).
    pub async fn keys(&self, keys: &str) {
        let mut seq = Vec::new();
        for ch in keys.chars() {
            seq.push(json!({"type": "keyDown", "value": ch.to_string()}));
            seq.push(json!({"type": "keyUp", "value": ch.to_string()}));
        }
        self.post("/actions", json!({"actions": [{"type": "key", "id": "kbd", "actions": seq}]})).await;
        self.cmd(reqwest::Method::DELETE, "/actions", None).await.ok();
    }

    /// A pointer stroke through `points` (viewport CSS pixels), pressed all along.
    pub async fn stroke(&self, pointer: &str, points: &[(f64, f64)]) {
        let mut seq = Vec::new();
        let (x0, y0) = points[0];
        seq.push(json!({"type": "pointerMove", "duration": 0, "x": x0.round() as i64, "y": y0.round() as i64, "origin": "viewport"}));
        seq.push(json!({"type": "pointerDown", "button": 0}));
        for &(x, y) in &points[1..] {
            seq.push(json!({"type": "pointerMove", "duration": 15, "x": x.round() as i64, "y": y.round() as i64, "origin": "viewport"}));
        }
        seq.push(json!({"type": "pointerUp", "button": 0}));
        self.post(
            "/actions",
            json!({"actions": [{"type": "pointer", "id": format!("p-{pointer}"), "parameters": {"pointerType": pointer}, "actions": seq}]}),
        )
        .await;
        self.cmd(reqwest::Method::DELETE, "/actions", None).await.ok();
    }

    /// Polls `expr` (a JS expression) until it is truthy; returns its value.
    pub async fn wait_for(&self, expr: &str, what: &str) -> Value {
        let started = Instant::now();
        loop {
            let v = self.exec(&format!("return ({expr});"), json!([])).await;
            let ok = match &v {
                Value::Null => false,
                Value::Bool(b) => *b,
                Value::String(s) => !s.is_empty(),
                Value::Number(n) => n.as_f64() != Some(0.0),
                _ => true,
            };
            if ok {
                return v;
            }
            if started.elapsed() > Duration::from_secs(15) {
                let state = self
                    .exec("return document.body.dataset.state + ' / ' + document.body.dataset.view + ' / ' + ((document.getElementById('alert') || {}).textContent || '')", json!([]))
                    .await;
                panic!("timed out waiting for {what} ({expr}); page state: {state}");
            }
            tokio::time::sleep(Duration::from_millis(40)).await;
        }
    }

    pub async fn screenshot(&self, path: &Path) {
        let v = self.cmd(reqwest::Method::GET, "/screenshot", None).await.unwrap_or_else(|e| panic!("{e}"));
        let png =
            base64::engine::general_purpose::STANDARD.decode(v.as_str().expect("base64 PNG")).expect("valid base64");
        std::fs::write(path, png).expect("write screenshot");
    }

    /// The browser console's entries since the last call (chromedriver's
    /// log, `goog:loggingPrefs`): `{level, message, source, timestamp}`.
    pub async fn browser_log(&self) -> Vec<Value> {
        self.try_browser_log().await.unwrap_or_else(|e| panic!("chromedriver's browser log: {e}"))
    }

    /// [`Session::browser_log`], an error instead of a panic.
    pub async fn try_browser_log(&self) -> Result<Vec<Value>, String> {
        match self.cmd(reqwest::Method::POST, "/se/log", Some(json!({"type": "browser"}))).await? {
            Value::Array(v) => Ok(v),
            other => Err(other.to_string()),
        }
    }

    pub async fn quit(&self) {
        let _ = self.cmd(reqwest::Method::DELETE, "", None).await;
    }
}

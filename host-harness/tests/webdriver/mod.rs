//! A small WebDriver client for the browser tests: chromedriver started on a
//! free loopback port, headless Debian Chromium, and the few commands the
//! tests need (navigate, run a script, resize, screenshot) over HTTP/1.1
//! with `std::net`.

use serde_json::{json, Value};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub const CHROMIUM: &str = "/usr/bin/chromium";
pub const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

/// Chromium and chromedriver, when both are installed. Without them a test
/// is skipped on a developer's machine and fails in CI
/// (`MEMORY_CORE_REQUIRE_BROWSER` set), where `.ci/run` installs them: a
/// browser test that silently passed would hide the missing install.
pub fn available(test: &str) -> bool {
    let present = Path::new(CHROMIUM).is_file() && Path::new(CHROMEDRIVER).is_file();
    if !present {
        let why = format!(
            "{test}: needs {CHROMIUM} and {CHROMEDRIVER} (apt-get install chromium chromium-driver)"
        );
        if std::env::var_os("MEMORY_CORE_REQUIRE_BROWSER").is_some() {
            panic!("{why}");
        }
        eprintln!("skipped — {why}");
    }
    present
}

pub struct Browser {
    driver: Child,
    port: u16,
    session: String,
    _profile: tempfile::TempDir,
}

impl Browser {
    pub fn start() -> Browser {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let driver = Command::new(CHROMEDRIVER)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver starts");
        let profile = tempfile::tempdir().unwrap();
        let mut browser = Browser {
            driver,
            port,
            session: String::new(),
            _profile: profile,
        };
        let started = Instant::now();
        while browser.call("GET", "/status", None).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "chromedriver did not answer on port {port}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        // As root, without a display, on a machine with no outside network:
        // the flags keep Chromium from trying to reach Google's services.
        let args = [
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-quic",
            "--hide-scrollbars",
            &format!("--user-data-dir={}", browser._profile.path().display()),
        ];
        let answer = browser
            .call(
                "POST",
                "/session",
                Some(json!({"capabilities": {"alwaysMatch": {
                    "browserName": "chrome",
                    "goog:chromeOptions": {"binary": CHROMIUM, "args": args}
                }}})),
            )
            .expect("a browser session starts");
        browser.session = answer["value"]["sessionId"]
            .as_str()
            .expect("the session has an id")
            .to_string();
        browser
    }

    pub fn open(&self, url: &str) {
        self.command("POST", "url", json!({ "url": url }));
    }

    /// Runs `script` (a function body) in the page; returns its value.
    pub fn run(&self, script: &str) -> Value {
        self.command(
            "POST",
            "execute/sync",
            json!({"script": script, "args": []}),
        )
    }

    /// A screenshot of the whole page, at `width` CSS pixels wide.
    pub fn screenshot_full_page(&self, width: u32, to: &Path) -> PathBuf {
        // The height at this width, measured once the window has it (text
        // wraps differently at another width).
        let mut height = 1200;
        for _ in 0..2 {
            self.command(
                "POST",
                "window/rect",
                json!({"width": width, "height": height}),
            );
            height = self
                .run("return Math.ceil(document.documentElement.scrollHeight);")
                .as_u64()
                .unwrap_or(1200)
                .clamp(600, 16_000);
        }
        self.command(
            "POST",
            "window/rect",
            json!({"width": width, "height": height}),
        );
        let png = self.command("GET", "screenshot", Value::Null);
        let bytes = base64_decode(png.as_str().expect("a base64 screenshot"));
        assert!(bytes.starts_with(b"\x89PNG"), "not a PNG");
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::write(to, bytes).unwrap();
        to.to_path_buf()
    }

    fn command(&self, method: &str, path: &str, body: Value) -> Value {
        let path = format!("/session/{}/{path}", self.session);
        let body = (!body.is_null()).then_some(body);
        let answer = self
            .call(method, &path, body)
            .unwrap_or_else(|e| panic!("{method} {path}: {e}"));
        answer["value"].clone()
    }

    fn call(&self, method: &str, path: &str, body: Option<Value>) -> Result<Value, String> {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).map_err(|e| e.to_string())?;
        stream
            .set_read_timeout(Some(Duration::from_secs(60)))
            .map_err(|e| e.to_string())?;
        let body = body.map(|b| b.to_string()).unwrap_or_default();
        write!(
            stream,
            "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            self.port,
            body.len()
        )
        .map_err(|e| e.to_string())?;
        let (status, _, body) = read_response(&mut stream)?;
        let value: Value = serde_json::from_slice(&body).map_err(|e| e.to_string())?;
        if status != 200 {
            return Err(format!("status {status}: {value}"));
        }
        Ok(value)
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        if !self.session.is_empty() {
            let path = format!("/session/{}", self.session);
            let _ = self.call("DELETE", &path, None);
        }
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

/// One HTTP/1.1 response: status, headers, body (a chunked body decoded).
/// The body is read by its length, since a server may keep the connection
/// open whatever the request asked.
pub fn read_response(stream: &mut TcpStream) -> Result<(u16, String, Vec<u8>), String> {
    let mut raw = Vec::new();
    let mut buf = [0u8; 8192];
    let split = loop {
        if let Some(at) = raw.windows(4).position(|w| w == b"\r\n\r\n") {
            break at;
        }
        let n = stream.read(&mut buf).map_err(|e| e.to_string())?;
        if n == 0 {
            return Err("the connection closed before the headers ended".into());
        }
        raw.extend_from_slice(&buf[..n]);
    };
    let head = String::from_utf8_lossy(&raw[..split]).into_owned();
    let mut body = raw[split + 4..].to_vec();
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or("no status")?;
    let lower = head.to_ascii_lowercase();
    let length = lower
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse::<usize>().ok());
    let chunked = lower.contains("transfer-encoding: chunked");
    loop {
        let complete = match (length, chunked) {
            (Some(n), _) => body.len() >= n,
            (None, true) => body.ends_with(b"0\r\n\r\n"),
            (None, false) => false,
        };
        if complete {
            break;
        }
        let n = stream.read(&mut buf).map_err(|e| e.to_string())?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(&buf[..n]);
    }
    if let Some(n) = length {
        body.truncate(n);
    } else if chunked {
        body = dechunk(&body)?;
    }
    Ok((status, head, body))
}

fn dechunk(mut data: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    loop {
        let line_end = data
            .windows(2)
            .position(|w| w == b"\r\n")
            .ok_or("bad chunk")?;
        let size_text = String::from_utf8_lossy(&data[..line_end]);
        let size = usize::from_str_radix(size_text.split(';').next().unwrap_or("").trim(), 16)
            .map_err(|e| e.to_string())?;
        data = &data[line_end + 2..];
        if size == 0 {
            return Ok(out);
        }
        out.extend_from_slice(data.get(..size).ok_or("short chunk")?);
        data = data.get(size + 2..).ok_or("short chunk")?;
    }
}

fn base64_decode(text: &str) -> Vec<u8> {
    let value = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    };
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    for v in text.bytes().filter_map(value) {
        acc = (acc << 6) | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    out
}

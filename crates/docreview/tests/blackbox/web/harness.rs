//! The browser-test harness: one chromedriver (Debian's) for the whole test binary, a fresh
//! headless Chromium per test on a fresh real server, and helpers to sign in, wait for a
//! condition (polled with a deadline, never a fixed sleep), take screenshots, and run axe-core.
//!
//! Without Chromium the tests print a note and pass, unless `DOCREVIEW_REQUIRE_BROWSER` is set
//! (CI sets it after installing `chromium` and `chromium-driver`).

use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::LazyLock;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use thirtyfour::prelude::*;

use crate::support::Server;

const CHROMEDRIVER: &str = "/usr/bin/chromedriver";
/// The real binary: `/usr/bin/chromium` is a launcher script chromedriver cannot drive.
const CHROMIUM: &str = "/usr/lib/chromium/chromium";
/// axe-core from its npm package (vendored for the tests only; never shipped in the binary).
const AXE: &str = include_str!("vendor/axe.min.js");

/// How long a condition may take before a test fails.
pub const PATIENCE: Duration = Duration::from_secs(30);

/// What a failed wait reports: the page's and the document frame's state, and every script or
/// frame request with its status (0: failed or blocked).
const DIAGNOSIS: &str = r"
const frame = document.getElementById('doc-frame');
let frameDoc = null; try { frameDoc = frame && frame.contentDocument; } catch (e) {}
return {
  page: document.readyState,
  frameSrc: frame ? frame.getAttribute('src') : null,
  frameState: frameDoc ? frameDoc.readyState : null,
  framePath: frameDoc ? frameDoc.location.pathname : null,
  classes: document.getElementById('review')?.className ?? null,
  requests: performance.getEntriesByType('resource')
    .filter((e) => e.initiatorType === 'script' || e.initiatorType === 'iframe' || e.name.includes('/view'))
    .map((e) => [e.name.replace(location.origin, ''), e.responseStatus, Math.round(e.duration)]),
};
";

/// A wide and a narrow (phone) viewport.
pub const WIDE: (u32, u32) = (1280, 800);
pub const NARROW: (u32, u32) = (390, 844);

struct Chromedriver {
    url: String,
    _process: Child,
}

/// The binary's one chromedriver. It runs under `sh`, which kills it when this process's end
/// of the pipe closes (the test binary exited, however it exited), so none is left behind.
static DRIVER: LazyLock<Option<Chromedriver>> = LazyLock::new(|| {
    if !Path::new(CHROMEDRIVER).exists() || !Path::new(CHROMIUM).exists() {
        assert!(
            std::env::var_os("DOCREVIEW_REQUIRE_BROWSER").is_none(),
            "DOCREVIEW_REQUIRE_BROWSER is set but chromium or chromium-driver is not installed"
        );
        eprintln!("note: chromium/chromium-driver not installed; skipping the browser tests");
        return None;
    }
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port();
    let script = format!(
        "{CHROMEDRIVER} --port={port} --log-level=OFF >/dev/null 2>&1 & driver=$!; \
         echo started; read _ignored; kill $driver"
    );
    let mut process = Command::new("sh")
        .args(["-c", &script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("start chromedriver");
    let mut line = String::new();
    BufReader::new(process.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("chromedriver started");
    let url = format!("http://127.0.0.1:{port}");
    let deadline = Instant::now() + PATIENCE;
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "chromedriver did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    Some(Chromedriver {
        url,
        _process: process,
    })
});

/// Whether browser tests can run here (else the test returns early, having printed why).
pub fn available() -> bool {
    DRIVER.is_some()
}

/// One headless Chromium on one server.
pub struct Browser {
    pub driver: WebDriver,
    pub base: String,
    profile: tempfile::TempDir,
}

impl Browser {
    /// A fresh browser (own profile) with a viewport of `size`, pointed at `server`.
    pub async fn open(server: &Server, size: (u32, u32)) -> Browser {
        Browser::open_at(&server.base, size).await
    }

    /// A fresh browser pointed at a server running at `base`.
    pub async fn open_at(base: &str, size: (u32, u32)) -> Browser {
        let driver_url = &DRIVER.as_ref().expect("chromedriver").url;
        let profile = tempfile::tempdir().expect("profile dir");
        let mut caps = DesiredCapabilities::chrome();
        caps.set_binary(CHROMIUM).expect("binary");
        for arg in [
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-dev-shm-usage",
            "--hide-scrollbars",
            "--force-device-scale-factor=1",
        ] {
            caps.add_arg(arg).expect("arg");
        }
        caps.add_arg(&format!("--window-size={},{}", size.0, size.1))
            .expect("arg");
        caps.add_arg(&format!("--user-data-dir={}", profile.path().display()))
            .expect("arg");
        docreview_client::tls::install_default_provider();
        let driver = WebDriver::new(driver_url.as_str(), caps)
            .await
            .expect("a browser session");
        // Headless windows are at least 500 px wide; a phone's viewport is emulated instead.
        if size.0 < 500 {
            driver
                .cdp()
                .send_raw(
                    "Emulation.setDeviceMetricsOverride",
                    json!({ "width": size.0, "height": size.1, "deviceScaleFactor": 1, "mobile": true }),
                )
                .await
                .expect("emulate a phone");
        }
        Browser {
            driver,
            base: base.to_string(),
            profile,
        }
    }

    pub async fn quit(self) {
        let _ = self.driver.quit().await;
        drop(self.profile);
    }

    pub async fn goto(&self, path: &str) {
        self.driver
            .goto(format!("{}{path}", self.base))
            .await
            .expect("navigate");
    }

    /// Navigates to an absolute URL (another server's page, for controls).
    pub async fn goto_url(&self, url: &str) {
        self.driver.goto(url).await.expect("navigate");
    }

    /// The path and query of the page the browser shows.
    pub async fn path(&self) -> String {
        let url = self.driver.current_url().await.expect("url");
        let text = url.as_str();
        text.strip_prefix(&self.base).unwrap_or(text).to_string()
    }

    /// Signs in through the sign-in form of whatever page the browser is on (which must be the
    /// sign-in page), the way a person does.
    pub async fn fill_sign_in(&self, email: &str, password: &str) {
        let email_field = self.find("#email").await;
        email_field.send_keys(email).await.expect("type email");
        self.find("#password")
            .await
            .send_keys(password)
            .await
            .expect("type password");
        let submit = self.find("form[action='/login'] button[type=submit]").await;
        self.click_and_wait_for_new_page(&submit).await;
    }

    /// Clicks `element` and waits until the browser shows a new document (a navigation).
    pub async fn click_and_wait_for_new_page(&self, element: &WebElement) {
        self.run("window.__docreviewOldPage = true;", Vec::new())
            .await;
        element.click().await.expect("click");
        self.wait_for(
            "!window.__docreviewOldPage && document.readyState !== 'loading'",
            "a new page",
        )
        .await;
    }

    /// Opens the sign-in page and signs in; waits until the documents page shows.
    pub async fn sign_in(&self, email: &str, password: &str) {
        self.goto("/login").await;
        self.fill_sign_in(email, password).await;
        self.wait_for("document.querySelector('.signout') !== null", "signed in")
            .await;
    }

    /// The first element matching `css`, waiting for it to appear.
    pub async fn find(&self, css: &str) -> WebElement {
        self.driver
            .query(By::Css(css))
            .wait(PATIENCE, Duration::from_millis(25))
            .first()
            .await
            .unwrap_or_else(|error| panic!("no element `{css}`: {error}"))
    }

    /// Clicks the first element matching `css`, finding it again if a swap replaced it (the
    /// screen re-renders its panel on live changes).
    pub async fn click(&self, css: &str) {
        let deadline = Instant::now() + PATIENCE;
        loop {
            match self.find(css).await.click().await {
                Ok(()) => return,
                Err(error) => assert!(
                    Instant::now() < deadline,
                    "could not click `{css}`: {error}"
                ),
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }

    /// The text of the first element matching `css` (found again if a swap replaced it).
    pub async fn text(&self, css: &str) -> String {
        let deadline = Instant::now() + PATIENCE;
        loop {
            match self.find(css).await.text().await {
                Ok(text) => return text,
                Err(error) => assert!(Instant::now() < deadline, "could not read `{css}`: {error}"),
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }

    /// Types into the first element matching `css` (found again if a swap replaced it).
    pub async fn type_into(&self, css: &str, text: &str) {
        let deadline = Instant::now() + PATIENCE;
        loop {
            match self.find(css).await.send_keys(text).await {
                Ok(()) => return,
                Err(error) => assert!(
                    Instant::now() < deadline,
                    "could not type into `{css}`: {error}"
                ),
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }

    /// Every element matching `css` now.
    pub async fn find_all(&self, css: &str) -> Vec<WebElement> {
        self.driver.find_all(By::Css(css)).await.expect("find_all")
    }

    /// Runs `script` (a function body; `arguments` holds `args`) and returns its value.
    pub async fn run(&self, script: &str, args: Vec<Value>) -> Value {
        self.driver
            .execute(script, args)
            .await
            .unwrap_or_else(|error| panic!("script failed: {error}\n{script}"))
            .json()
            .clone()
    }

    /// Polls the expression `condition` until it is truthy; returns its value. Fails after
    /// `PATIENCE`, naming `what` was awaited.
    pub async fn wait_for(&self, condition: &str, what: &str) -> Value {
        let script = format!("return ({condition});");
        let deadline = Instant::now() + PATIENCE;
        loop {
            let value = self
                .driver
                .execute(&script, Vec::new())
                .await
                .map_or(Value::Null, |ret| ret.json().clone());
            let truthy = match &value {
                Value::Null => false,
                Value::Bool(b) => *b,
                Value::Number(n) => n.as_f64().is_some_and(|n| n != 0.0),
                Value::String(s) => !s.is_empty(),
                Value::Array(_) | Value::Object(_) => true,
            };
            if truthy {
                return value;
            }
            if Instant::now() >= deadline {
                let state = self.run(DIAGNOSIS, Vec::new()).await;
                panic!(
                    "timed out waiting for {what} ({condition}); page: {}; state: {state}",
                    self.path().await
                );
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }

    /// Saves a screenshot as `target/screenshots/<name>.png`; returns its path.
    pub async fn screenshot(&self, name: &str) -> PathBuf {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/screenshots");
        std::fs::create_dir_all(&dir).expect("screenshot dir");
        let path = dir.join(format!("{name}.png"));
        self.driver.screenshot(&path).await.expect("screenshot");
        path
    }

    /// Runs axe-core on the page (not inside the document frame, which is the author's HTML):
    /// fails on any serious or critical violation, listing them.
    pub async fn check_accessibility(&self, screen: &str) {
        self.run(AXE, Vec::new()).await;
        let script = r"
            const done = arguments[arguments.length - 1];
            axe.run(document, { iframes: false, resultTypes: ['violations'] })
              .then((result) => done(result.violations
                .filter((v) => v.impact === 'serious' || v.impact === 'critical')
                .map((v) => ({ id: v.id, impact: v.impact, help: v.help,
                               nodes: v.nodes.slice(0, 5).map((n) => n.target.join(' ')) }))))
              .catch((error) => done([{ id: 'axe-error', help: String(error) }]));
        ";
        let violations = self
            .driver
            .execute_async(script, Vec::new())
            .await
            .expect("axe ran")
            .json()
            .clone();
        assert_eq!(
            violations,
            json!([]),
            "accessibility violations on {screen}: {violations:#}"
        );
    }
}

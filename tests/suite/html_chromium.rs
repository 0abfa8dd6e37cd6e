//! `scan --format html` in a real browser (issue 14 item 3): the report of
//! `testdata/broker-1` is loaded by headless Chromium from the distribution's packages; the
//! DOM it builds must hold the timeline of payments-3 with the zombie write pinned and
//! labelled at offset 21, the open transaction's span and the LSO line; a screenshot is
//! kept under `target/tmp/` as a CI artifact.
//!
//! Without a `chromium` binary the browser test prints `SKIPPED (chromium)` and returns,
//! unless `KLOGSCAN_REQUIRE_CHROMIUM=1` (set by `.ci/run`) demands it.

use assert_cmd::Command;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

fn sample() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata/broker-1")
}

fn html_report(args: &[&str]) -> String {
    let out = Command::cargo_bin("klogscan")
        .unwrap()
        .args(["scan", "--format", "html"])
        .args(args)
        .arg(sample())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn chromium() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    for name in ["chromium", "chromium-browser", "google-chrome"] {
        for dir in std::env::split_paths(&path) {
            let p = dir.join(name);
            if p.is_file() {
                return Some(p);
            }
        }
    }
    None
}

/// Run Chromium headless on `page` with `args`, killing it after two minutes.
fn run_chromium(bin: &Path, profile: &Path, args: &[String], page: &Path) -> String {
    let mut child = std::process::Command::new(bin)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(format!("file://{}", page.display()))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start chromium");
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut stdout, &mut s).unwrap();
        s
    });
    let start = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if start.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            panic!("chromium did not finish within 120 s");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    reader.join().unwrap()
}

#[test]
fn the_report_is_self_contained() {
    let html = html_report(&[]);
    assert!(html.starts_with("<!DOCTYPE html>"));
    for banned in [
        "http://", "https://", "<script", "<link", "url(", "@import", "<iframe", "<img",
    ] {
        assert!(!html.contains(banned), "{banned} in the report");
    }
    // Triage first, then the partitions, then payments-3's timeline and findings.
    let t = html.find("id=\"triage\"").unwrap();
    let p = html.find("id=\"partitions\"").unwrap();
    let svg = html.find("<svg class=\"timeline\"").unwrap();
    assert!(t < p && p < svg);
    assert_eq!(
        html.matches("<svg").count(),
        1,
        "only payments-3 has findings"
    );
    assert!(html.contains("6 partitions without findings</summary>"));
    assert!(html.contains("abort --topic payments --partition 3 --start-offset 21"));
}

#[test]
fn filters_apply_to_the_html_report_too() {
    let html = html_report(&["--min-severity", "error"]);
    assert!(!html.contains("data-kind=\"marker_without_transaction\""));
    assert!(html.contains("data-kind=\"zombie_write\""));
}

/// The chromium binary, or `None` after saying the test is skipped (a failure instead under
/// `KLOGSCAN_REQUIRE_CHROMIUM=1`, as `.ci/run` sets).
fn chromium_or_skip() -> Option<PathBuf> {
    let bin = chromium();
    if bin.is_none() {
        if std::env::var_os("KLOGSCAN_REQUIRE_CHROMIUM").is_some_and(|v| v == "1") {
            panic!("KLOGSCAN_REQUIRE_CHROMIUM=1 but no chromium binary is on PATH");
        }
        eprintln!("SKIPPED (chromium): no chromium binary on PATH (apt-get install chromium)");
    }
    bin
}

/// The DOM says no label of any timeline runs past its picture's edge ([`MEASURE`]).
fn assert_labels_inside(dom: &str, what: &str) {
    assert!(
        dom.contains("data-labels-outside=\"[]\""),
        "{what}: labels past the edge: {}",
        dom.split("data-labels-outside=")
            .nth(1)
            .unwrap_or("not measured")
            .chars()
            .take(300)
            .collect::<String>()
    );
}

/// The browser measures every timeline label (getBBox) against its picture's width and
/// writes the labels that run past an edge into the DOM.
const MEASURE: &str = "<script>window.addEventListener('load',()=>{const out=[];\
    for(const svg of document.querySelectorAll('svg.timeline')){\
    const w=svg.viewBox.baseVal.width;for(const t of svg.querySelectorAll('text')){\
    const b=t.getBBox();if(b.x<0||b.x+b.width>w)out.push(t.textContent);}}\
    document.body.setAttribute('data-labels-outside',JSON.stringify(out));});</script>";

#[test]
fn chromium_renders_the_timeline_with_the_zombie_pinned() {
    let Some(bin) = chromium_or_skip() else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let page = work.path().join("report.html");
    let report = html_report(&[]).replace("</body>", &format!("{MEASURE}</body>"));
    std::fs::write(&page, report).unwrap();

    let dom = run_chromium(
        &bin,
        &work.path().join("profile-dom"),
        &["--dump-dom".into()],
        &page,
    );
    assert!(dom.contains("</html>"), "no DOM from chromium: {dom}");
    // Every label inside its timeline's picture.
    assert_labels_inside(&dom, "the report");
    // The zombie's marker: a finding group in the SVG, labelled, with hover text.
    let zombie = dom
        .find("<g class=\"finding error\" data-kind=\"zombie_write\" data-offset=\"21\"")
        .expect("zombie_write marker in the DOM");
    let group = &dom[zombie..zombie + dom[zombie..].find("</g>").unwrap()];
    assert!(
        group.contains("<title>error zombie_write at offset 21: producer 4001 wrote transactional data at epoch 18"),
        "{group}"
    );
    assert!(group.contains("<circle"), "{group}");
    assert!(
        group.contains(">zombie_write @21 (producer 4001@18)</text>"),
        "{group}"
    );
    // It sits inside the SVG timeline (the parser kept it in the svg subtree).
    let svg_start = dom.find("<svg class=\"timeline\"").unwrap();
    let svg_end = svg_start + dom[svg_start..].find("</svg>").unwrap();
    assert!(svg_start < zombie && zombie < svg_end);
    // The open transaction's span and the LSO line.
    assert!(dom.contains("class=\"span open\" data-first=\"21\" data-last=\"23\""));
    assert!(dom.contains("<g class=\"lso\" data-offset=\"21\">"));
    assert!(dom.contains(">LSO 21</text>"));
    // The producer lanes and the ABORT marker that fenced the zombie.
    assert!(dom.contains("data-producer=\"4001\""));
    assert!(dom.contains("class=\"marker abort\" data-offset=\"16\""));

    // The screenshot, kept as an artifact.
    let png = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("html-report.png");
    let _ = std::fs::remove_file(&png);
    run_chromium(
        &bin,
        &work.path().join("profile-shot"),
        &[
            format!("--screenshot={}", png.display()),
            "--window-size=1280,1100".into(),
        ],
        &page,
    );
    let bytes = std::fs::read(&png).expect("screenshot written");
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    let width = u32::from_be_bytes(bytes[16..20].try_into().unwrap());
    let height = u32::from_be_bytes(bytes[20..24].try_into().unwrap());
    assert_eq!((width, height), (1280, 1100));
    assert!(bytes.len() > 20_000, "a blank page compresses to less");
    eprintln!("screenshot: {}", png.display());
}

/// The timelines drawn on demand keep their labels inside their pictures too: clean
/// partitions asked for by `--timeline`, and the per-producer view on its time axis.
#[test]
fn chromium_keeps_the_labels_of_asked_for_and_producer_timelines_inside() {
    let Some(bin) = chromium_or_skip() else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    for (k, args) in [
        &["--timeline", "codec-*,legacy-0"][..],
        &["--producer-id", "4001,4002"],
    ]
    .iter()
    .enumerate()
    {
        let page = work.path().join(format!("report-{k}.html"));
        let report = html_report(args).replace("</body>", &format!("{MEASURE}</body>"));
        let svgs = report.matches("<svg class=\"timeline").count();
        assert!(svgs >= 2, "{args:?}: {svgs} timelines");
        std::fs::write(&page, report).unwrap();
        let dom = run_chromium(
            &bin,
            &work.path().join(format!("profile-{k}")),
            &["--dump-dom".into()],
            &page,
        );
        assert!(dom.contains("</html>"), "no DOM from chromium: {dom}");
        assert_labels_inside(&dom, &format!("{args:?}"));
    }
}

//! The library gives the CLI's answer: `request::run`'s report, serialized by the same JSON
//! renderer, is byte-equal to `klogscan scan --format json` — on testdata, on every
//! repository of the real data, on an archive and on a filtered run. No normalisation: a
//! field that differed between the two would be a defect of the request API.

use assert_cmd::Command;
use klogscan::report::filter::Filter;
use klogscan::request::{self, Request};
use std::path::{Path, PathBuf};

fn cli_json(args: &[&std::ffi::OsStr]) -> Vec<u8> {
    let out = Command::cargo_bin("klogscan")
        .unwrap()
        .arg("scan")
        .args(args)
        .args(["--format", "json", "--color", "never"])
        .output()
        .unwrap();
    // Exit 2 (a repository with no partition directory) still prints the report.
    assert!(
        out.status.code().is_some_and(|c| c <= 2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn lib_json(req: &Request) -> Vec<u8> {
    let answer = request::run(req).unwrap();
    let mut out = Vec::new();
    klogscan::report::json::write_scan(
        &answer.report,
        &mut klogscan::escape::JsonWriter::new(&mut out),
    )
    .unwrap();
    out
}

fn assert_same(paths: &[PathBuf], extra: &[&str], req: Request) {
    let mut args: Vec<&std::ffi::OsStr> = paths.iter().map(|p| p.as_os_str()).collect();
    args.extend(extra.iter().map(|s| std::ffi::OsStr::new(*s)));
    let cli = cli_json(&args);
    let lib = lib_json(&req);
    assert!(cli.starts_with(b"{"), "{}", String::from_utf8_lossy(&cli));
    assert!(
        cli == lib,
        "library and CLI differ for {paths:?} {extra:?}:\n--- cli\n{}\n--- lib\n{}",
        String::from_utf8_lossy(&cli),
        String::from_utf8_lossy(&lib)
    );
}

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/broker-1")
}

#[test]
fn testdata_library_equals_cli() {
    assert_same(&[testdata()], &[], Request::new([testdata()]));
}

#[test]
fn filtered_library_equals_cli() {
    let filter = Filter {
        topics: vec!["payments*".into()],
        min_severity: Some(klogscan::Severity::Warning),
        ..Default::default()
    };
    assert_same(
        &[testdata()],
        &["--topic", "payments*", "--min-severity", "warning"],
        Request::new([testdata()]).with_filter(filter),
    );
    // A producer filter keeps the producers' states (the CLI turns that on).
    let filter = Filter {
        producer_ids: vec![4001],
        ..Default::default()
    };
    assert_same(
        &[testdata()],
        &["--producer-id", "4001"],
        Request::new([testdata()]).with_filter(filter),
    );
}

#[test]
fn archive_library_equals_cli() {
    let t = tempfile::tempdir().unwrap();
    let tar = t.path().join("broker-1.tar");
    let f = std::fs::File::create(&tar).unwrap();
    let mut b = tar::Builder::new(f);
    b.append_dir_all("broker-1", testdata()).unwrap();
    b.finish().unwrap();
    drop(b);
    assert_same(std::slice::from_ref(&tar), &[], Request::new([tar.clone()]));
}

#[test]
fn real_data_library_equals_cli() {
    let Some(rd) = crate::common::real_data() else {
        return;
    };
    let mut repos: Vec<PathBuf> = std::fs::read_dir(rd.join("broker"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    repos.sort();
    assert!(!repos.is_empty());
    for repo in repos {
        assert_same(
            std::slice::from_ref(&repo),
            &[],
            Request::new([repo.clone()]),
        );
    }
}

/// Scan options built with the `with_*` setters (the only way outside the crate:
/// `ScanOptions` is `#[non_exhaustive]`) give the answer of the matching CLI flags.
#[test]
fn options_library_equals_cli() {
    use klogscan::results::ScanOptions;
    let opts = ScanOptions::default()
        .with_deep(true)
        .with_check_crc(false)
        .with_now_ms(1_700_000_000_000)
        .with_hanging_after_ms(120_000)
        .with_max_bytes(4096)
        .with_compacted_topics(["payments"]);
    assert_same(
        &[testdata()],
        &[
            "--deep",
            "--no-crc",
            "--now",
            "1700000000000",
            "--hanging-after",
            "2m",
            "--max-bytes",
            "4096",
            "--compacted",
            "payments",
        ],
        Request::new([testdata()]).with_options(opts),
    );
}

//! Shared helpers of the integration tests.
#![allow(dead_code)]

pub mod cases;
pub mod huge;
pub mod kraft;
pub mod one_log_dir;
#[cfg(target_os = "linux")]
pub mod peak;
pub mod quiet;
pub mod run;
pub mod small_batch;

use std::path::PathBuf;

/// `../shared/real-data`, read in place (never copied into the project).
///
/// When it is absent (a clone without the project's shared data), real-data tests say so on
/// stderr and skip. CI sets `KLOGSCAN_REQUIRE_REAL_DATA=1`, which turns an absent directory
/// into a failure, so CI can never pass without the real data.
pub fn real_data() -> Option<PathBuf> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/real-data");
    if p.is_dir() {
        return Some(p.canonicalize().unwrap());
    }
    if std::env::var_os("KLOGSCAN_REQUIRE_REAL_DATA").is_some() {
        panic!(
            "{} not found and KLOGSCAN_REQUIRE_REAL_DATA is set",
            p.display()
        );
    }
    eprintln!(
        "SKIPPED (real data): {} not found; set KLOGSCAN_REQUIRE_REAL_DATA=1 to make this fail",
        p.display()
    );
    None
}

/// Every file under `dir` (recursively) whose name ends with `suffix`, sorted.
pub fn files_with_suffix(dir: &std::path::Path, suffix: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.file_name().unwrap().to_string_lossy().ends_with(suffix) {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The findings of `kind` in a JSON report (`scan --format json`).
pub fn findings_of<'a>(report: &'a serde_json::Value, kind: &str) -> Vec<&'a serde_json::Value> {
    report["findings"]
        .as_array()
        .expect("a report's findings")
        .iter()
        .filter(|f| f["kind"] == kind)
        .collect()
}

/// Make `path` a FIFO (whatever was there is removed first).
#[cfg(unix)]
pub fn mkfifo(path: &std::path::Path) {
    use std::os::unix::ffi::OsStrExt;
    let _ = std::fs::remove_file(path);
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path; mkfifo only creates the node.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0, "mkfifo");
}

/// The `scan --format json` document of `r` (clients' error classes filled in, as the
/// command prints it).
pub fn json(mut r: klogscan::results::ScanReport) -> String {
    klogscan::report::client::fill(&mut r.findings);
    let mut out = Vec::new();
    klogscan::report::json::write_scan(&r, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

/// Into the log dir `logs`: a classic group `app` in `__consumer_offsets-0`, and a KRaft
/// metadata log creating `orders` with partition 0 led by broker 1 (the log dir the
/// special-file and unreadable-file campaigns damage file by file).
#[cfg(feature = "testkit")]
pub fn group_and_orders_metadata(logs: &std::path::Path) {
    use klogscan::read::format::metadata::{MetaRecord, PartitionRecord};
    use klogscan::testkit::group_scenarios::{self as sc, GroupLog};
    let mut g = GroupLog::new();
    sc::classic_group(&mut g, "app");
    g.write(logs, 0).unwrap();
    let tid = klogscan::testkit::files::topic_id_for("orders");
    let mut m = klogscan::testkit::metadata::MetadataLogBuilder::new(1_700_000_000_000);
    m.batch(&[
        MetaRecord::Topic {
            name: "orders".into(),
            topic_id: tid,
        },
        MetaRecord::Partition(PartitionRecord {
            partition_id: 0,
            topic_id: tid,
            replicas: vec![1],
            isr: vec![1],
            leader: 1,
            ..Default::default()
        }),
    ]);
    m.write(logs).unwrap();
}

/// A xorshift generator from `seed` (not 0): the same numbers on every run, for the
/// campaigns whose inputs must be reproducible from the test alone.
pub fn xorshift(seed: u64) -> impl FnMut() -> u64 {
    let mut s = seed;
    move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    }
}

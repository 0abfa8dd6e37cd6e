//! What the "quiet" audits (`kafka_quiet_*_cases`) share: a log dir scanned (plain and
//! `--deep`) and verified, held to nothing at warning or above and a clean start.

use klogscan::finding::{Finding, Severity};
use klogscan::request::{self, Request};
use klogscan::results::{ScanOptions, ScanReport};
use klogscan::testkit::LogDirManifest;
use klogscan::verify::VerifyReport;
use std::path::Path;

/// `scan` (with `--deep` when `deep`) of `dir` through the library's front door; no input
/// error.
pub(crate) fn scan_dir(dir: &Path, deep: bool) -> ScanReport {
    let opts = ScanOptions::default().with_deep(deep);
    let r = request::run(&Request::new([dir]).with_options(opts))
        .unwrap()
        .report;
    assert!(r.errors.is_empty(), "{:?}", r.errors);
    r
}

/// `verify` of `dir` for a current broker; no input error.
pub(crate) fn verify_dir(dir: &Path) -> VerifyReport {
    let v = request::verify(&Request::new([dir]), None).unwrap().report;
    assert!(v.errors.is_empty(), "{:?}", v.errors);
    v
}

/// One line per finding: severity, kind, partition, offset, message.
pub(crate) fn lines<'a>(fs: impl IntoIterator<Item = &'a Finding>) -> Vec<String> {
    fs.into_iter()
        .map(|f| {
            format!(
                "{} {} {}-{} @{:?}: {}",
                f.severity.as_str(),
                f.kind,
                f.topic,
                f.partition,
                f.offset,
                f.message
            )
        })
        .collect()
}

/// The findings at warning or above, one line each.
pub(crate) fn loud<'a>(fs: impl IntoIterator<Item = &'a Finding>) -> Vec<String> {
    lines(fs.into_iter().filter(|f| f.severity >= Severity::Warning))
}

/// Nothing at warning or above from `scan`, `scan --deep` or `verify`.
pub(crate) fn assert_silent(scan: &ScanReport, deep: &ScanReport, verify: &VerifyReport) {
    let s = loud(&scan.findings);
    let d = loud(&deep.findings);
    let v = loud(verify.findings());
    assert!(
        s.is_empty() && d.is_empty() && v.is_empty(),
        "scan: {s:#?}\nscan --deep: {d:#?}\nverify: {v:#?}\n(all deep findings: {:#?})",
        lines(&deep.findings)
    );
}

/// `verify` predicts the start after a clean shutdown (`LogLoader.load` with
/// `hadCleanShutdown`) for every partition `manifest` wrote: nothing recovered, truncated or
/// deleted, no load failure, no leftover but snapshots below a moved log start, the log end
/// kept.
pub(crate) fn assert_clean_start(verify: &VerifyReport, manifest: &LogDirManifest) {
    assert_eq!(verify.partitions.len(), manifest.partitions.len());
    for p in &verify.partitions {
        let pr = &p.prediction;
        let name = format!("{}-{}", p.topic, p.partition);
        assert_eq!(pr.clean_shutdown, Some(true), "{name}");
        assert!(pr.recovered_segments.is_empty(), "{name}: {pr:#?}");
        assert!(pr.truncation.is_none(), "{name}: {pr:#?}");
        assert!(pr.deleted_segments.is_empty(), "{name}: {pr:#?}");
        assert!(pr.unrecovered_corruption.is_empty(), "{name}: {pr:#?}");
        assert!(pr.load_failure.is_none(), "{name}: {pr:#?}");
        assert!(
            pr.leftovers
                .iter()
                .all(|l| l.kind == "snapshot_below_log_start"),
            "{name}: {:#?}",
            pr.leftovers
        );
        let m = (manifest.partitions.iter())
            .find(|m| m.topic == p.topic && m.partition == p.partition)
            .unwrap();
        assert_eq!(pr.log_end_offset_after, Some(m.log_end_offset), "{name}");
    }
}

/// Set the modification time of log dir `dir`'s files a running broker rewrites (the four
/// offset checkpoints, `.kafka_cleanshutdown`) to `ms`: a copy that kept the broker's
/// times (`cp -p`, `rsync -a`, `tar`) of a broker that stopped then. The testkit writes
/// them at the test's own time.
pub(crate) fn set_broker_file_times(dir: &Path, ms: i64) {
    let at = std::time::UNIX_EPOCH + std::time::Duration::from_millis(ms as u64);
    let mut set = 0;
    for name in [
        "recovery-point-offset-checkpoint",
        "log-start-offset-checkpoint",
        "replication-offset-checkpoint",
        "cleaner-offset-checkpoint",
        ".kafka_cleanshutdown",
    ] {
        let p = dir.join(name);
        if p.is_file() {
            let f = std::fs::File::options().write(true).open(&p).unwrap();
            f.set_modified(at).unwrap();
            set += 1;
        }
    }
    assert!(set > 0, "no broker file in {}", dir.display());
}

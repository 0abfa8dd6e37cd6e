//! `truncation_below_high_watermark` through bundles: a scan of every broker's dirs on one
//! machine and the merge of per-broker bundles give the same lost-data findings (the
//! recovery plan of a truncating partition travels in its bundle frame).

use klogscan::bundle;
use klogscan::cluster::lost::LostRange;
use klogscan::finding::{Kind, Severity};
use klogscan::partition::scan::ScanOptions;
use klogscan::results::ScanReport;
use klogscan::testkit::brokers;
use std::path::{Path, PathBuf};

type Writer = fn(&Path) -> std::io::Result<Vec<Vec<PathBuf>>>;

/// The one-machine scan of a scenario's brokers and the merge of their bundles.
fn scan_and_merge(write: Writer) -> (ScanReport, ScanReport) {
    let data = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let brokers = write(data.path()).unwrap();
    let all: Vec<PathBuf> = brokers.iter().flatten().cloned().collect();
    let scanned = klogscan::pipeline::scan(&all, &ScanOptions::default());
    let files: Vec<PathBuf> = brokers
        .iter()
        .enumerate()
        .map(|(i, dirs)| {
            let f = out.path().join(format!("{i}.klb"));
            let w = std::io::BufWriter::new(std::fs::File::create(&f).unwrap());
            bundle::collect(dirs, &ScanOptions::default(), w).unwrap();
            f
        })
        .collect();
    data.close().unwrap();
    let merged = bundle::merge(&files, &ScanOptions::default()).unwrap();
    (scanned, merged.report)
}

/// The lost-data findings: (topic, severity, evidence, caused_by).
fn lost(r: &ScanReport) -> Vec<(String, Severity, LostRange, Vec<String>)> {
    r.findings
        .iter()
        .filter(|f| f.kind == Kind::TruncationBelowHighWatermark)
        .map(|f| {
            let e = LostRange::of(f).expect("typed evidence");
            (f.topic.clone(), f.severity, e, f.caused_by.clone())
        })
        .collect()
}

#[test]
fn merge_gives_the_lost_data_findings_of_the_one_machine_scan() {
    let (scanned, merged) = scan_and_merge(brokers::lost_data);
    let (a, b) = (lost(&scanned), lost(&merged));
    assert_eq!(a, b);
    // orders-0: broker 2's copy holds 8..19 (a warning naming it); payments-0: no copy.
    let by_topic = |t: &str| a.iter().find(|l| l.0 == t).expect(t);
    let (_, sev, e, cause) = by_topic("orders");
    assert_eq!(*sev, Severity::Warning);
    assert_eq!((e.first_lost_offset, e.high_watermark), (8, 20));
    assert_eq!(e.offsets_lost_at_least, 12);
    assert!(e.intact_copy.as_deref().unwrap().contains("broker-2"));
    assert_eq!(cause.len(), 1, "linked to the CRC mismatch");
    let (_, sev, e, _) = by_topic("payments");
    assert_eq!(*sev, Severity::Error);
    assert_eq!(e.intact_copy, None);
    assert_eq!(a.len(), 2);
}

#[test]
fn no_lost_data_finding_through_bundles_where_the_scan_has_none() {
    // Damage, elections, replicas: no truncation below a checkpointed high watermark.
    for write in [
        brokers::replica_divergence as Writer,
        brokers::unclean_election,
        brokers::non_live_copy,
    ] {
        let (scanned, merged) = scan_and_merge(write);
        assert!(lost(&scanned).is_empty());
        assert!(lost(&merged).is_empty());
        assert_eq!(scanned.findings.len(), merged.findings.len());
    }
}

/// `lost_data` with broker 1's `log-start-offset-checkpoint` a FIFO (klogscan does not
/// read it): the loss rests on the log start, and the merge says so as the scan does.
fn lost_data_log_start_unread(root: &Path) -> std::io::Result<Vec<Vec<PathBuf>>> {
    let brokers = brokers::lost_data(root)?;
    let ckpt = brokers[0][0].join("log-start-offset-checkpoint");
    let _ = std::fs::remove_file(&ckpt);
    crate::common::mkfifo(&ckpt);
    Ok(brokers)
}

#[test]
fn merge_says_what_a_loss_rests_on_as_the_scan_does() {
    let (scanned, merged) = scan_and_merge(lost_data_log_start_unread);
    let (a, b) = (lost(&scanned), lost(&merged));
    assert_eq!(a, b);
    assert_eq!(a.len(), 2, "{a:#?}");
    for (topic, sev, e, _) in &a {
        assert!(e.assumes.is_some(), "{topic}: {e:?}");
        assert_eq!(*sev, Severity::Warning, "{topic}");
    }
}

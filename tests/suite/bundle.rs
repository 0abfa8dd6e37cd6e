//! `collect` + `merge`: per-broker bundles merged give, byte for byte, the JSON report of
//! `scan` over all the brokers' directories on one machine; bad bundles are input errors.

use crate::common::json;
use klogscan::bundle;
use klogscan::finding::{CopyKind, Kind};
use klogscan::partition::scan::ScanOptions;
use klogscan::results::ScanReport;
use klogscan::testkit::brokers::{self, SCENARIOS};
use std::path::{Path, PathBuf};

/// Collect each broker's log dirs into `<out>/<i>.klb`.
fn collect_all(brokers: &[Vec<PathBuf>], out: &Path) -> Vec<PathBuf> {
    brokers
        .iter()
        .enumerate()
        .map(|(i, dirs)| {
            let f = out.join(format!("{i}.klb"));
            let w = std::fs::File::create(&f).unwrap();
            bundle::collect(dirs, &ScanOptions::default(), std::io::BufWriter::new(w)).unwrap();
            f
        })
        .collect()
}

/// The scan of every broker's dirs, then the merge of their bundles once the dirs are
/// gone (nothing of them is read by the merge).
fn scan_and_merge(
    write: fn(&Path) -> std::io::Result<Vec<Vec<PathBuf>>>,
) -> (ScanReport, ScanReport) {
    let data = tempfile::tempdir().unwrap();
    let bundles = tempfile::tempdir().unwrap();
    let brokers = write(data.path()).unwrap();
    let all: Vec<PathBuf> = brokers.iter().flatten().cloned().collect();
    let scanned = klogscan::pipeline::scan(&all, &ScanOptions::default());
    let files = collect_all(&brokers, bundles.path());
    data.close().unwrap();
    let merged = bundle::merge(&files, &ScanOptions::default()).unwrap();
    (scanned, merged.report)
}

fn kinds(r: &ScanReport) -> Vec<Kind> {
    r.findings.iter().map(|f| f.kind).collect()
}

#[test]
fn merge_equals_scan_on_every_multi_broker_scenario() {
    for (name, write) in SCENARIOS {
        let (scanned, merged) = scan_and_merge(*write);
        assert!(!scanned.findings.is_empty(), "{name}: nothing to compare");
        let (a, b) = (json(scanned), json(merged));
        if a != b {
            let line = a.lines().zip(b.lines()).position(|(x, y)| x != y);
            panic!("{name}: merge differs from scan at line {line:?}\nscan:\n{a}\nmerge:\n{b}");
        }
    }
}

#[test]
fn the_scenarios_hold_the_cross_broker_findings_they_are_for() {
    let (r, _) = scan_and_merge(brokers::replica_divergence);
    assert_eq!(
        kinds(&r)
            .iter()
            .filter(|k| **k == Kind::ReplicaDivergence)
            .count(),
        2
    );
    let (r, _) = scan_and_merge(brokers::cross_broker_txn);
    let hanging: Vec<_> = r
        .findings
        .iter()
        .filter(|f| f.kind == Kind::HangingTransaction)
        .collect();
    assert!(!hanging.is_empty(), "{:#?}", r.findings);
    // The coordinator's log is on broker 3, the data on brokers 1 and 2.
    assert!(
        hanging
            .iter()
            .any(|f| f.evidence["coordinator"]["verdict"].is_string()
                && f.evidence["coordinator"]["verdict"] != "unavailable"),
        "{hanging:#?}"
    );
    let (r, _) = scan_and_merge(brokers::groups);
    assert!(
        kinds(&r).contains(&Kind::GroupDeletionUnfinished),
        "{:#?}",
        r.findings
    );
    let (r, _) = scan_and_merge(brokers::non_live_copy);
    assert!(r.findings.iter().any(|f| f.source.copy == CopyKind::Future));
    assert!(r.findings.iter().any(|f| f.source.copy == CopyKind::Delete));
    // The KRaft metadata log on broker 2 and broker 1's checkpointed high watermark.
    let (r, _) = scan_and_merge(brokers::unclean_election);
    let unclean: Vec<_> = r
        .findings
        .iter()
        .filter(|f| f.kind == Kind::UncleanLeaderElection)
        .collect();
    assert_eq!(unclean.len(), 1, "{:#?}", r.findings);
    assert_eq!(
        unclean[0].evidence["old_leader_copy"]["lost_below_high_watermark"],
        15
    );
    // The remote log metadata, the log-start-offset checkpoint and the local segments.
    let (r, _) = scan_and_merge(brokers::tiered);
    assert!(
        kinds(&r).contains(&Kind::RemoteSegmentGap),
        "{:#?}",
        r.findings
    );
    let (r, _) = scan_and_merge(brokers::two_clusters);
    // Cluster B's copies differ; A's copies are never compared with B's.
    assert_eq!(
        kinds(&r)
            .iter()
            .filter(|k| **k == Kind::ReplicaDivergence)
            .count(),
        1
    );
}

/// A copy damaged in the lost range holds nothing, in a merge as in the scan: the bundles
/// carry every damaged batch (local ones too since format 6).
#[test]
fn a_damaged_copy_holds_nothing_in_a_merge_too() {
    let (r, m) = scan_and_merge(brokers::lost_data_damaged_copy);
    let why = |r: &ScanReport| -> Vec<String> {
        r.findings
            .iter()
            .filter(|f| f.kind == Kind::TruncationBelowHighWatermark)
            .flat_map(|f| {
                f.evidence["copies"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|c| c["not_holding"].as_str().unwrap_or("").to_string())
            })
            .collect()
    };
    let w = why(&r);
    assert!(
        w.iter().any(|w| w.starts_with("damaged_at:")),
        "{:#?}",
        r.findings
    );
    assert_eq!(w, why(&m));
}

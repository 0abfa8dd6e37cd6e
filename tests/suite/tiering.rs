//! Tiered storage (`cluster::tiering`): the `__remote_log_metadata` replay against each
//! replica, on partitions written by the testkit's `TieredLog` (a broker log dir with the
//! local segments, its checkpoints and the metadata partition, and the remote segments in
//! `LocalTieredStorage`'s layout). Each finding has a scenario that raises it and a
//! healthy tiered partition (rolling copies, retention deletes) raises none.
#![cfg(feature = "testkit")]

use klogscan::finding::{Finding, Kind};
use klogscan::partition::scan::ScanOptions;
use klogscan::testkit::PartitionBuilder;
use klogscan::testkit::remote_log::{TieredLog, TieredManifest};
use std::path::Path;

const TIERED: &[Kind] = &[
    Kind::RemoteSegmentGap,
    Kind::RemoteCopyUnfinished,
    Kind::RemoteDeleteUnfinished,
    Kind::RemoteSegmentAbandonedLineage,
    Kind::RemoteLogStartMismatch,
    Kind::RemoteSegmentMissing,
    Kind::RemoteSegmentMismatch,
    Kind::RemoteMetadataUndecodable,
];

/// Five segments of 20 offsets: [0,19] [20,39] epoch 0; [40,59] epoch 1; [60,79] epoch 1
/// then 2 at 70; [80,99] epoch 2 (the active segment).
fn history() -> PartitionBuilder {
    klogscan::testkit::brokers::tiered_history()
}

/// Segments 0 and 1 copied, then segment 0 deleted by retention.
pub(crate) fn rolled() -> TieredLog {
    let mut t = TieredLog::new(history());
    let r0 = t.copy(0);
    t.copy(1);
    t.delete(r0);
    t
}

/// Segments 0–3 copied with retention deleting segment 0 in between (rolling), the local
/// log from segment 3: log start 20, local log start 60.
pub(crate) fn healthy() -> TieredLog {
    let mut t = rolled();
    t.copy(2);
    t.copy(3);
    t.local_from(3);
    t
}

fn scan(m: &TieredManifest, remote: bool) -> Vec<Finding> {
    let opts = ScanOptions::default().with_remote_storage(remote.then(|| m.remote_root.clone()));
    let root = m.log_dir.parent().unwrap().to_path_buf();
    klogscan::pipeline::scan(&[root], &opts).findings
}

fn write(t: TieredLog, dir: &Path) -> TieredManifest {
    t.write(dir).unwrap()
}

/// The `.log` of the remote segment starting at `start`.
pub(crate) fn remote_log(m: &TieredManifest, start: i64) -> std::path::PathBuf {
    let prefix = format!("{start:020}-");
    std::fs::read_dir(&m.remote_partition_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            let n = p.file_name().unwrap().to_string_lossy().into_owned();
            n.starts_with(&prefix) && n.ends_with(".log")
        })
        .unwrap()
}

fn of(f: &[Finding], k: Kind) -> Vec<&Finding> {
    f.iter().filter(|f| f.kind == k).collect()
}

#[test]
fn healthy_tiered_partition_has_no_finding() {
    let d = tempfile::tempdir().unwrap();
    let m = write(healthy(), d.path());
    assert_eq!((m.log_start_offset, m.local_log_start_offset), (20, 60));
    let f = scan(&m, true);
    assert!(f.is_empty(), "{f:#?}");
}

/// The only tiered findings of a scan, as `(kind, topic, partition, offset)`.
fn tiered(f: &[Finding]) -> Vec<(Kind, String, i32, Option<i64>)> {
    f.iter()
        .filter(|f| TIERED.contains(&f.kind))
        .map(|f| (f.kind, f.topic.clone(), f.partition, f.offset))
        .collect()
}

fn orders(k: Kind, offset: i64) -> (Kind, String, i32, Option<i64>) {
    (k, "orders".into(), 0, Some(offset))
}

#[test]
fn gap_between_remote_segments() {
    let d = tempfile::tempdir().unwrap();
    let mut t = rolled();
    t.copy(3);
    t.local_from(3);
    let f = scan(&write(t, d.path()), false);
    assert_eq!(tiered(&f), vec![orders(Kind::RemoteSegmentGap, 40)]);
    let g = &of(&f, Kind::RemoteSegmentGap)[0];
    assert_eq!(g.evidence["last_missing_offset"], 59);
    assert_eq!(g.evidence["log_start_offset"], 20);
}

/// A checkpoint written before the retention run that deleted the first segment leaves
/// the log start below the remote segments: the deleted segment held those offsets.
#[test]
fn stale_log_start_below_deleted_segments_is_no_gap() {
    let d = tempfile::tempdir().unwrap();
    let mut t = healthy();
    t.log_start(0);
    let f = scan(&write(t, d.path()), false);
    assert!(tiered(&f).is_empty(), "{f:#?}");
}

#[test]
fn gap_below_the_first_segment_without_deletion() {
    let d = tempfile::tempdir().unwrap();
    let mut t = healthy();
    t.log_start(10);
    let f = scan(&write(t, d.path()), false);
    // Offsets 10..=19 were in the deleted segment 0: explained; none missing.
    assert!(tiered(&f).is_empty(), "{f:#?}");
    let d = tempfile::tempdir().unwrap();
    let mut t = TieredLog::new(history());
    t.copy(1);
    t.copy(2);
    t.copy(3);
    t.local_from(3);
    t.log_start(0);
    let f = scan(&write(t, d.path()), false);
    assert_eq!(tiered(&f), vec![orders(Kind::RemoteSegmentGap, 0)]);
}

#[test]
fn copy_started_then_retried() {
    let d = tempfile::tempdir().unwrap();
    let mut t = rolled();
    t.copy_started(2); // the broker died or the upload failed: never finished
    t.copy(2); // retried under a new segment id
    t.copy(3);
    t.local_from(3);
    let f = scan(&write(t, d.path()), true);
    assert_eq!(tiered(&f), vec![orders(Kind::RemoteCopyUnfinished, 40)]);
    let u = &of(&f, Kind::RemoteCopyUnfinished)[0];
    assert_eq!(u.evidence["retried_by"].as_array().unwrap().len(), 1);
}

/// The partition's last event a COPY_SEGMENT_STARTED: a copy in flight, not reported.
#[test]
fn copy_in_flight_is_not_reported() {
    let d = tempfile::tempdir().unwrap();
    let mut t = healthy();
    t.copy_started(4);
    let f = scan(&write(t, d.path()), false);
    assert!(tiered(&f).is_empty(), "{f:#?}");
}

/// A copy still uploading while expiration deletes older segments (3.9+, KAFKA-16853:
/// copying and expiration are separate tasks): deletions after it are no sign the broker
/// moved on — only a later copy of the partition is.
#[test]
fn a_copy_in_flight_during_deletions_is_not_reported() {
    let d = tempfile::tempdir().unwrap();
    let mut t = TieredLog::new(history());
    let r0 = t.copy(0);
    t.copy(1);
    t.copy_started(2);
    t.delete(r0);
    let f = scan(&write(t, d.path()), false);
    assert!(
        !tiered(&f).iter().any(|x| x.0 == Kind::RemoteCopyUnfinished),
        "{f:#?}"
    );
}

/// Segment 0's delete started and never finished, segments 1–3 copied after it, the local
/// log from segment 3, the log start 20.
pub(crate) fn delete_unfinished() -> TieredLog {
    let mut t = TieredLog::new(history());
    let r0 = t.copy(0);
    let r1 = t.copy(1);
    t.delete_started(r0);
    t.copy(2);
    t.copy(3);
    // A later cleanup deletes [20,39] without retrying [0,19]: left behind.
    t.delete(r1);
    t.local_from(3);
    t.log_start(40);
    t
}

#[test]
fn delete_started_never_finished() {
    let d = tempfile::tempdir().unwrap();
    let f = scan(&write(delete_unfinished(), d.path()), false);
    assert_eq!(tiered(&f), vec![orders(Kind::RemoteDeleteUnfinished, 0)]);
    // The same delete as the partition's last event: in flight.
    let d = tempfile::tempdir().unwrap();
    let mut t = TieredLog::new(history());
    let r0 = t.copy(0);
    t.copy(1);
    t.copy(2);
    t.copy(3);
    t.delete_started(r0);
    t.local_from(3);
    t.log_start(20);
    let f = scan(&write(t, d.path()), false);
    assert!(tiered(&f).is_empty(), "{f:#?}");
}

/// A finished segment carrying an epoch above the partition's lineage (an abandoned
/// leader's copy of offsets 40..=59): retention never deletes it with this lineage.
///
/// Finished after the good [40,59], the stray also takes its place in epoch 1's offset map
/// (`RemoteLogLeaderEpochState.handleSegmentWithCopySegmentFinishedState`: the same start
/// offset, 40), but its part in epoch 1 ends at 49. The replica's lineage puts 50..=59 in
/// epoch 1, where the lookup (`RemoteLogMetadataCache.remoteLogSegmentMetadata`) finds the
/// stray and stops at 49: those offsets are a gap, both segments unserved there.
#[test]
fn segment_of_an_abandoned_lineage() {
    let d = tempfile::tempdir().unwrap();
    let mut t = healthy();
    let mut stray = t.remote_segment(2);
    stray.leader_epochs = vec![(1, 40), (3, 50)];
    let r = t.copy_started_as(stray, 2);
    t.copy_finished(r);
    // Metadata only: the testkit's objects for it are segment 2's own batches.
    let f = scan(&write(t, d.path()), false);
    assert_eq!(
        tiered(&f),
        vec![
            orders(Kind::RemoteSegmentAbandonedLineage, 40),
            orders(Kind::RemoteSegmentGap, 50)
        ]
    );
    let a = &of(&f, Kind::RemoteSegmentAbandonedLineage)[0];
    assert_eq!(a.evidence["reason"], "last_epoch_out_of_bounds");
    let g = &of(&f, Kind::RemoteSegmentGap)[0].evidence;
    assert_eq!(g["last_missing_offset"], 59);
    assert_eq!(
        g["previous_segment"]["leader_epochs"],
        serde_json::json!([[1, 40], [3, 50]])
    );
    assert_eq!(g["unserved_segments"].as_array().unwrap().len(), 2);
}

/// A segment of an abandoned lineage that is the only copy of its offsets is still read:
/// `RemoteLogManager.read` applies no lineage check — it looks 40 up in epoch 1, finds the
/// stray (its epoch-1 part, 40..=49) and returns its batches from there to its end. The
/// producer-state replay reads it the same way (not skipped as the lineage filter of
/// retention would), so the replayed history has no hole at 40..=59.
#[test]
fn the_only_copy_of_an_abandoned_lineage_is_replayed_as_a_fetch_reads_it() {
    let d = tempfile::tempdir().unwrap();
    let mut t = rolled();
    let mut stray = t.remote_segment(2);
    stray.leader_epochs = vec![(1, 40), (3, 50)];
    let r = t.copy_started_as(stray, 2);
    t.copy_finished(r);
    t.copy(3);
    t.local_from(3);
    let m = write(t, d.path());
    let opts = ScanOptions::default().with_remote_storage(Some(m.remote_root.clone()));
    let root = m.log_dir.parent().unwrap().to_path_buf();
    let report = klogscan::pipeline::scan(&[root], &opts);
    let replayed = report
        .partitions
        .iter()
        .find_map(|p| p.tiered.as_ref().and_then(|t| t.replayed.clone()))
        .expect("a remote replay");
    assert_eq!(replayed.segments, 2, "{replayed:#?}");
    assert_eq!(
        (replayed.first_offset, replayed.last_offset),
        (Some(20), Some(59))
    );
    assert!(replayed.unread.is_empty(), "{replayed:#?}");
    assert!(
        of(&report.findings, Kind::OffsetGap).is_empty(),
        "{:#?}",
        report.findings
    );
    let a = of(&report.findings, Kind::RemoteSegmentAbandonedLineage);
    assert_eq!(a.len(), 1, "{:#?}", report.findings);
    assert!(
        a[0].message
            .contains("a fetch of an offset its epochs serve reads it"),
        "{}",
        a[0].message
    );
}

/// The twin: the stray finished before the good [40,59], which then replaces it at 40 in
/// epoch 1's map (it reaches the epoch's highest offset, 59): 40..=59 are served, only the
/// lineage finding remains.
#[test]
fn segment_of_an_abandoned_lineage_replaced_by_a_later_copy() {
    let d = tempfile::tempdir().unwrap();
    let mut t = rolled();
    let mut stray = t.remote_segment(2);
    stray.leader_epochs = vec![(1, 40), (3, 50)];
    let r = t.copy_started_as(stray, 2);
    t.copy_finished(r);
    t.copy(2);
    t.copy(3);
    t.local_from(3);
    let f = scan(&write(t, d.path()), false);
    assert_eq!(
        tiered(&f),
        vec![orders(Kind::RemoteSegmentAbandonedLineage, 40)]
    );
}

/// The checkpointed log start is the local log start while finished remote segments hold
/// offsets below it, none being deleted and the epoch cache truncated at the log start: a
/// retention run that had not begun deleting, or a reset (KAFKA-15351) — both readings said
/// (`tiering_expiry.rs` holds the others).
#[test]
fn log_start_reset_to_the_local_log_start() {
    let d = tempfile::tempdir().unwrap();
    let mut t = healthy();
    t.log_start(60);
    let f = scan(&write(t, d.path()), false);
    assert_eq!(tiered(&f), vec![orders(Kind::RemoteLogStartMismatch, 20)]);
    let m = &of(&f, Kind::RemoteLogStartMismatch)[0];
    assert_eq!(m.evidence["reading"], "retention_window_or_reset");
    // A log start moved by retention past a segment its next run deletes: not reported.
    let d = tempfile::tempdir().unwrap();
    let mut t = healthy();
    t.log_start(40);
    let f = scan(&write(t, d.path()), false);
    assert!(tiered(&f).is_empty(), "{f:#?}");
}

#[test]
fn finished_segment_missing_from_remote_storage() {
    let d = tempfile::tempdir().unwrap();
    let mut t = rolled();
    let r2 = t.copy(2);
    t.copy(3);
    t.lose_objects(r2);
    t.local_from(3);
    let m = write(t, d.path());
    assert_eq!(
        tiered(&scan(&m, true)),
        vec![orders(Kind::RemoteSegmentMissing, 40)]
    );
    // Without the remote storage, the metadata alone is consistent.
    assert!(tiered(&scan(&m, false)).is_empty());
}

#[test]
fn remote_segment_differs_from_its_metadata() {
    let d = tempfile::tempdir().unwrap();
    let m = write(healthy(), d.path());
    let log = remote_log(&m, 60);
    let bytes = std::fs::read(&log).unwrap();
    // Keep the first of its two batches.
    let first = 12 + i32::from_be_bytes(bytes[8..12].try_into().unwrap()) as usize;
    std::fs::write(&log, &bytes[..first]).unwrap();
    let f = scan(&m, true);
    assert_eq!(tiered(&f), vec![orders(Kind::RemoteSegmentMismatch, 60)]);
    let x = &of(&f, Kind::RemoteSegmentMismatch)[0];
    assert_eq!(
        x.evidence["differences"],
        serde_json::json!(["size", "end_offset"])
    );
}

#[test]
fn undecodable_metadata_record() {
    let d = tempfile::tempdir().unwrap();
    let mut t = healthy();
    t.raw_event(b"corrupted".to_vec());
    let f = scan(&write(t, d.path()), false);
    let u = of(&f, Kind::RemoteMetadataUndecodable);
    assert_eq!(u.len(), 1, "{f:#?}");
    assert_eq!(
        (u[0].topic.as_str(), u[0].partition),
        ("__remote_log_metadata", 0)
    );
    assert!(u[0].message.contains("unknown frame version 99"));
    assert_eq!(tiered(&f).len(), 1);
}

/// `scan` shows where a tiered partition's history lives: the JSON report's
/// `tiered` object and a line under the table.
#[test]
fn report_shows_remote_and_local_ranges() {
    let d = tempfile::tempdir().unwrap();
    let m = write(healthy(), d.path());
    let root = m.log_dir.parent().unwrap().to_path_buf();
    let r = klogscan::pipeline::scan(&[root], &ScanOptions::default());
    let p = r.partitions.iter().find(|p| p.topic == "orders").unwrap();
    assert_eq!(
        p.tiered.as_deref(),
        Some(&klogscan::results::TieredRanges {
            log_start_offset: Some(20),
            remote: vec![(20, 39), (40, 59), (60, 79)],
            local_log_start_offset: Some(60),
            log_end_offset: Some(100),
            replayed: None,
        })
    );
    let json = serde_json::to_value(p).unwrap();
    assert_eq!(json["tiered"]["remote"][0], serde_json::json!([20, 39]));
    let meta = r
        .partitions
        .iter()
        .find(|p| p.topic == "__remote_log_metadata")
        .unwrap();
    assert!(serde_json::to_value(meta).unwrap().get("tiered").is_none());
    let mut out = Vec::new();
    klogscan::report::table::write_scan(&r, &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.contains("log start 20; remote 20..=79 (3 segments); local 60..=99"),
        "{text}"
    );
}

/// The batches' partitionLeaderEpoch (outside the CRC) disagrees with the epochs the
/// metadata recorded for the segment.
#[test]
fn remote_segment_epochs_differ_from_its_metadata() {
    let d = tempfile::tempdir().unwrap();
    let m = write(healthy(), d.path());
    let log = remote_log(&m, 60);
    let mut bytes = std::fs::read(&log).unwrap();
    let second = 12 + i32::from_be_bytes(bytes[8..12].try_into().unwrap()) as usize;
    bytes[second + 12..second + 16].copy_from_slice(&1i32.to_be_bytes());
    std::fs::write(&log, &bytes).unwrap();
    let f = scan(&m, true);
    assert_eq!(tiered(&f), vec![orders(Kind::RemoteSegmentMismatch, 60)]);
    let x = &of(&f, Kind::RemoteSegmentMismatch)[0];
    assert_eq!(
        x.evidence["differences"],
        serde_json::json!(["leader_epochs"])
    );
    assert_eq!(
        x.evidence["walked"]["leader_epochs"],
        serde_json::json!([[1, 60]])
    );
}

/// The HTML report draws a tiered partition's remote segments and local log under the
/// offset axis, and says where its history lives.
#[test]
fn html_timeline_shows_remote_and_local_ranges() {
    let d = tempfile::tempdir().unwrap();
    let mut t = rolled();
    t.copy(3);
    t.local_from(3);
    let m = write(t, d.path());
    let root = m.log_dir.parent().unwrap().to_path_buf();
    let o = ScanOptions::default().with_collect_timelines(true);
    let r = klogscan::pipeline::scan(&[root], &o);
    let tl: Vec<_> = r.partitions.iter().map(|p| p.timeline().cloned()).collect();
    let mut out = Vec::new();
    klogscan::report::html::write_scan(&r, &tl, &mut out).unwrap();
    let html = String::from_utf8(out).unwrap();
    assert!(
        html.contains("tiered: log start 20; remote 20..=39, 60..=79 (2 segments); local 60..=99")
    );
    assert!(html.contains("class=\"remote\" data-first=\"20\" data-last=\"39\""));
    assert!(html.contains("class=\"local\" data-first=\"60\" data-last=\"99\""));
}

/// `scan` and `verify` take `--remote-storage DIR`; `dump --remote-log-metadata-decoder`
/// decodes the metadata partition's segment.
#[test]
fn cli_remote_storage_and_decoder() {
    use crate::common::run::klogscan;
    let d = tempfile::tempdir().unwrap();
    let mut t = rolled();
    let r2 = t.copy(2);
    t.copy(3);
    t.lose_objects(r2);
    t.local_from(3);
    let m = write(t, d.path());
    let root = m.log_dir.parent().unwrap().display().to_string();
    let remote = m.remote_root.display().to_string();
    for cmd in ["scan", "verify"] {
        let r = klogscan(
            &[
                cmd,
                root.as_str(),
                "--remote-storage",
                remote.as_str(),
                "--format",
                "json",
            ],
            None,
            120,
        );
        assert!(
            r.out.contains("remote_segment_missing"),
            "{cmd}: {}\n{}",
            r.out,
            r.err
        );
    }
    let seg = m
        .metadata_dir
        .join("00000000000000000000.log")
        .display()
        .to_string();
    let r = klogscan(
        &["dump", "--remote-log-metadata-decoder", seg.as_str()],
        None,
        60,
    );
    assert!(
        r.out
            .contains("payload: RemoteLogSegmentMetadata{remoteLogSegmentId=")
    );
    assert!(r.out.contains("state=DELETE_SEGMENT_FINISHED"));
}

/// A `remote_log_snapshot` lists a segment once per leader epoch it spans
/// (`FileBasedRemoteLogMetadataCache.flushToFile` walks the epoch entries): segment 3
/// ([60,79], epochs 1 and 2) is written twice. Restored, it is one segment — one range, no
/// repeated finding.
#[test]
fn a_snapshot_listing_a_segment_per_epoch_restores_it_once() {
    let d = tempfile::tempdir().unwrap();
    let mut t = TieredLog::new(history());
    t.copy(1);
    t.copy(3);
    t.local_from(4);
    t.log_start(20);
    t.remote_log_snapshot(false);
    let m = write(t, d.path());
    let opts = ScanOptions::default();
    let root = m.log_dir.parent().unwrap().to_path_buf();
    let report = klogscan::pipeline::scan(&[root], &opts);
    let ranges = report
        .partitions
        .iter()
        .find_map(|p| p.tiered.as_ref())
        .expect("tiered ranges");
    assert_eq!(ranges.remote, vec![(20, 39), (60, 79)], "{ranges:#?}");
    let gaps = of(&report.findings, Kind::RemoteSegmentGap);
    assert_eq!(gaps.len(), 1, "{:#?}", report.findings);
    assert_eq!(gaps[0].offset, Some(40));
}

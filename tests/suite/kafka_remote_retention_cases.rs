//! Audit of the tiered-storage retention model against what Kafka's
//! `RemoteLogManager.RLMExpirationTask.cleanupExpiredRemoteLogSegments` can see: it never
//! walks the cache's segments as a whole, only per leader epoch
//! (`RemoteLogMetadataManager.listRemoteLogSegments(tp, epoch)` for the lineage's epochs,
//! then for the remote epochs below the cache's earliest), and a per-epoch listing is
//! `RemoteLogLeaderEpochState.listAllRemoteLogSegments`: the epoch's offset map
//! (`offsetToId`) plus its unreferenced set. A finished segment in neither of them for any
//! of its epochs is never listed, so no retention rule ever deletes it.
//!
//! `RemoteLogLeaderEpochState.handleSegmentWithCopySegmentFinishedState` moves the entries at
//! or above the new segment's start to the unreferenced set only while the new segment
//! reaches the epoch's highest offset; then it `put`s the new one under its start offset.
//! When a shorter copy finishes after a longer one at the same start in the same epoch, the
//! loop removes nothing and the `put` overwrites the longer one's entry: the longer segment
//! is then in neither set of that epoch (`RemoteLogLeaderEpochStateTest.
//! handleSegmentWithCopySegmentFinishedStateForSegmentsWithSameStartOffset` tests the other
//! order, where the longer one finishes last and the shorter lands in the unreferenced set).
//! It stays in `idToSegmentMetadata` (`listRemoteLogSegments(tp)`, used only for the
//! metrics and `epochsSet`, and by partition deletion).
//!
//! The shape arises from an unclean election: leader A in epoch 0 copies [0,99]; B, out of
//! sync with offsets up to 49, becomes leader in epoch 1 at 50 and copies its own segment
//! [0,99] with epochs {0:0, 1:50} (`findHighestRemoteOffset` gives 49: B's end of epoch 0
//! is at or below the remote highest offset of epoch 0). In epoch 0's map B's copy ends at
//! 49 < 99, so A's copy is overwritten at key 0 and lost from epoch 0, its only epoch.
//!
//! klogscan's replay keeps the offset maps but not the unreferenced sets
//! (`cluster::tiering::epochs`: "reads never consult it"), and `cluster::tiering::expiry` /
//! `checks::log_start_mismatch` assume every finished segment is listed in each of its
//! epochs: so A's copy is said to go "once the log start reaches 100", and once the log
//! start is past it, to be the next run's (nothing reported), while Kafka never deletes it.
#![cfg(feature = "testkit")]

use klogscan::finding::{Finding, Kind};
use klogscan::partition::scan::ScanOptions;
use klogscan::testkit::PartitionBuilder;
use klogscan::testkit::remote_log::{TieredLog, TieredManifest};
use klogscan::testkit::scenario::{Batch, Producer};

/// `orders-0`: [0,99] with epoch 0 to 49 and epoch 1 from 50 (the new leader's segment),
/// [100,199] epoch 1, [200,249] epoch 1. Lineage (0,0) (1,50).
fn history() -> PartitionBuilder {
    let mut p = PartitionBuilder::new("orders", 0);
    for (i, seg) in [&[(0, 50), (1, 50)][..], &[(1, 100)], &[(1, 50)]]
        .iter()
        .enumerate()
    {
        if i > 0 {
            p.roll();
        }
        for &(epoch, n) in seg.iter() {
            p.append(Batch::new(Producer::PLAIN).records(n).leader_epoch(epoch));
        }
    }
    p
}

fn scan(t: TieredLog) -> (TieredManifest, Vec<Finding>) {
    let d = tempfile::tempdir().unwrap();
    let m = t.write(d.path()).unwrap();
    let root = m.log_dir.parent().unwrap().to_path_buf();
    let f = klogscan::pipeline::scan(&[root], &ScanOptions::default()).findings;
    (m, f)
}

/// The abandoned leader's copy [0,99] (epoch 0 alone) finished, then the new leader's
/// [0,99] (epochs {0:0, 1:50}) and [100,199]; the local log from 200; the log start
/// `log_start`.
fn unclean(log_start: i64) -> TieredLog {
    let mut t = TieredLog::new(history());
    let mut a = t.remote_segment(0);
    a.leader_epochs = vec![(0, 0)];
    let r = t.copy_started_as(a, 0);
    t.copy_finished(r);
    t.copy(0);
    t.copy(1);
    t.local_from(2);
    t.log_start(log_start);
    t
}

/// The log start 0: A's copy [0,99] is outside the lineage (epoch 0 ends at 49 there) and
/// klogscan says it is deleted "once the log start offset reaches 100". In Kafka it is in
/// no epoch's listing (epoch 0's map holds B's copy at 0, its unreferenced set is empty), so
/// neither `isSegmentBreachByLogStartOffset` nor `deleteLogSegmentsDueToLeaderEpochCacheTruncation`
/// ever sees it: no log start deletes it.
#[test]
fn copy_hidden_at_the_same_start_is_never_listed_for_retention() {
    let (_, f) = scan(unclean(0));
    let a: Vec<&Finding> = f
        .iter()
        .filter(|f| f.kind == Kind::RemoteSegmentAbandonedLineage)
        .collect();
    assert_eq!(a.len(), 1, "{f:#?}");
    assert_eq!(
        a[0].evidence["segment"]["leader_epochs"],
        serde_json::json!([[0, 0]])
    );
    let when = a[0].evidence["expiry"]["when"].as_str().unwrap_or("");
    assert!(
        when != "log_start_reaches" && when != "next_run",
        "Kafka's expiration never lists this segment (lost from epoch 0's offset map and \
         unreferenced set), but klogscan says: {} / {}",
        a[0].evidence["expiry"],
        a[0].message
    );
}

/// The log start 100 (the local log start 200): B's [0,99] goes on the next run by the
/// log-start rule (listed in epochs 0 and 1, all its epochs at or below the cache's first,
/// 1). A's [0,99] is listed in no epoch and stays in remote storage for ever. klogscan
/// counts both as the next run's and reports nothing; Kafka's answer for A is "not
/// deletable" (`remote_log_start_mismatch`, reading `not_deletable`).
#[test]
fn copy_hidden_at_the_same_start_below_the_log_start_stays() {
    let (_, f) = scan(unclean(100));
    let m: Vec<&Finding> = f
        .iter()
        .filter(|f| f.kind == Kind::RemoteLogStartMismatch)
        .collect();
    assert_eq!(
        m.len(),
        1,
        "A's [0,99] is below the log start and no retention rule will ever list it: {f:#?}"
    );
    assert_eq!(m[0].evidence["reading"], "not_deletable");
}

/// `RemoteLogLeaderEpochStateTest.handleSegmentWithCopySegmentFinishedStateForSegmentsWithSameStartOffset`'s
/// order: the new leader's [0,99] (epoch 0 to 49) finished first, the abandoned leader's
/// [0,99] (epoch 0 to 99, the longer in epoch 0) last. The longer one reaches the epoch's
/// highest offset, so the shorter moves to epoch 0's unreferenced set: both stay listed, and
/// the verdicts are those of every listed segment.
fn longer_last(log_start: i64) -> TieredLog {
    let mut t = TieredLog::new(history());
    t.copy(0);
    let mut a = t.remote_segment(0);
    a.leader_epochs = vec![(0, 0)];
    let r = t.copy_started_as(a, 0);
    t.copy_finished(r);
    t.copy(1);
    t.local_from(2);
    t.log_start(log_start);
    t
}

fn abandoned_expiry(f: &[Finding]) -> Vec<serde_json::Value> {
    f.iter()
        .filter(|f| f.kind == Kind::RemoteSegmentAbandonedLineage)
        .map(|f| f.evidence["expiry"].clone())
        .collect()
}

#[test]
fn longer_copy_finishing_last_at_the_same_start_keeps_the_verdicts() {
    // The abandoned copy (epoch 0 only) goes once the cache starts at epoch 1, a log start
    // of 50 (`deleteLogSegmentsDueToLeaderEpochCacheTruncation` asks nothing of its end).
    let (_, f) = scan(longer_last(0));
    assert_eq!(
        abandoned_expiry(&f),
        vec![
            serde_json::json!({"when": "log_start_reaches", "log_start_offset": 50, "first_epoch": 1})
        ],
        "{f:#?}"
    );
    // Below the log start 100 both go on the next run: the new leader's by the log-start
    // rule (listed in epoch 1's map), the abandoned one by the truncation rule (listed in
    // epoch 0's map, its epoch below the cache's earliest, 1).
    let (_, f) = scan(longer_last(100));
    assert!(
        !f.iter().any(|f| f.kind == Kind::RemoteLogStartMismatch),
        "{f:#?}"
    );
}

/// An overlapping copy at another start offset: the abandoned leader's [20,99] of epoch 0
/// finished, then the new leader's [0,99] (epoch 0 to 49). The new one ends below epoch 0's
/// highest offset, so nothing moves, and its entry goes in at 0, beside the abandoned one's
/// at 20: both listed, verdicts unchanged.
fn overlapping(log_start: i64) -> TieredLog {
    let mut t = TieredLog::new(history());
    let mut a = t.remote_segment(0);
    a.start_offset = 20;
    a.leader_epochs = vec![(0, 20)];
    let r = t.copy_started_as(a, 0);
    t.copy_finished(r);
    t.copy(0);
    t.copy(1);
    t.local_from(2);
    t.log_start(log_start);
    t
}

#[test]
fn overlapping_copy_at_another_start_keeps_the_verdicts() {
    let (_, f) = scan(overlapping(0));
    assert_eq!(
        abandoned_expiry(&f),
        vec![
            serde_json::json!({"when": "log_start_reaches", "log_start_offset": 50, "first_epoch": 1})
        ],
        "{f:#?}"
    );
    let (_, f) = scan(overlapping(100));
    assert!(
        !f.iter().any(|f| f.kind == Kind::RemoteLogStartMismatch),
        "{f:#?}"
    );
}

/// The hidden copy's finding names it and says why: `unlisted` (warning), the segment's id
/// in `unlisted_segments` below the log start.
#[test]
fn hidden_copy_findings_name_it() {
    let (_, f) = scan(unclean(0));
    assert_eq!(
        abandoned_expiry(&f),
        vec![serde_json::json!({"when": "unlisted"})]
    );
    let a = f
        .iter()
        .find(|f| f.kind == Kind::RemoteSegmentAbandonedLineage)
        .unwrap();
    assert_eq!(a.severity, klogscan::finding::Severity::Warning);
    let id = a.evidence["segment"]["segment_id"].clone();
    let (_, f) = scan(unclean(100));
    let m = f
        .iter()
        .find(|f| f.kind == Kind::RemoteLogStartMismatch)
        .unwrap();
    assert_eq!(m.evidence["unlisted_segments"], serde_json::json!([id]));
    assert_eq!(m.evidence["segments"].as_array().map(Vec::len), Some(2));
}

/// The log start at the local log start (200): A's [0,99] is not "retention in progress" or
/// "the next run's": no run ever lists it.
#[test]
fn hidden_copy_at_the_local_log_start_is_not_deletable() {
    let (_, f) = scan(unclean(200));
    let m: Vec<&Finding> = f
        .iter()
        .filter(|f| f.kind == Kind::RemoteLogStartMismatch)
        .collect();
    assert_eq!(m.len(), 1, "{f:#?}");
    assert_eq!(m[0].evidence["reading"], "not_deletable");
    // the longer copy finishing last: both listed, the window reading as before
    let (_, f) = scan(longer_last(200));
    let m: Vec<&Finding> = f
        .iter()
        .filter(|f| f.kind == Kind::RemoteLogStartMismatch)
        .collect();
    assert_eq!(m.len(), 1, "{f:#?}");
    assert_eq!(m[0].evidence["reading"], "retention_window_or_reset");
}

//! Tiered storage (KIP-405) on a replicated partition: the leader copied the rolled segments
//! to remote storage and recorded them in `__remote_log_metadata`, remote retention deleted
//! the oldest, and local retention deleted local segments already copied, on each replica
//! at its own pace.

use super::{Brokers, CLUSTER};
use klogscan::finding::Kind;
use klogscan::partition::scan::ScanOptions;
use klogscan::testkit::brokers::tiered_history;
use klogscan::testkit::remote_log::TieredLog;
use std::path::{Path, PathBuf};

/// The leader's (broker 1's) events: segments 0 and 1 copied (`RemoteLogManager.copyLogSegment`:
/// COPY_SEGMENT_STARTED, the objects, COPY_SEGMENT_FINISHED), segment 0 then deleted by
/// remote retention (`RemoteLogManager.RLMExpirationTask`/`deleteRemoteLogSegment`), segments
/// 2 and 3 copied; the active segment (4) never is. Every replica's local log keeps what its
/// local retention (`UnifiedLog.deleteOldSegments` with `local.retention.*`, only segments
/// below the highest copied offset: `UnifiedLog.deletableSegments`) has not deleted:
/// segments from `local_from`.
fn tiered(local_from: usize) -> TieredLog {
    let mut t = TieredLog::new(tiered_history());
    t.broker(1);
    let r0 = t.copy(0);
    t.copy(1);
    t.delete(r0);
    t.copy(2);
    t.copy(3);
    t.local_from(local_from);
    t
}

/// Write broker `id`'s log dir from `t` (written under `scratch`) as `<root>/broker-<id>/data`,
/// with its `meta.properties` naming it and the cluster. Returns the remote storage root.
fn place(b: &mut Brokers, id: i32, t: TieredLog, scratch: &Path) -> PathBuf {
    let m = t.write(scratch).unwrap();
    let dir = b.path(id, "data");
    std::fs::create_dir_all(dir.parent().unwrap()).unwrap();
    std::fs::rename(&m.log_dir, &dir).unwrap();
    std::fs::write(
        dir.join("meta.properties"),
        format!("#\nversion=0\nbroker.id={id}\ncluster.id={CLUSTER}\n"),
    )
    .unwrap();
    b.add(dir);
    m.remote_root
}

/// `orders-0` on brokers 1 (leader), 2 and 3, each with its replica of the
/// `__remote_log_metadata` partition the leader wrote (its replication factor is 3 by
/// default: `remote.log.metadata.topic.replication.factor`). The leader's local log starts at
/// 60; follower 2's local retention has deleted less (from 40), follower 3's as much as the
/// leader's; the log start offset, 20, is the same on all (the followers take the leader's:
/// `ReplicaFetcherThread.processPartitionData` → `maybeIncrementLogStartOffset`). Scanned
/// with and without the remote storage.
#[test]
fn tiered_partition_replicated_with_local_retention_at_each_replicas_pace() {
    let scratch = tempfile::tempdir().unwrap();
    let mut b = Brokers::new();
    let remote = place(&mut b, 1, tiered(3), &scratch.path().join("1"));
    place(&mut b, 2, tiered(2), &scratch.path().join("2"));
    place(&mut b, 3, tiered(3), &scratch.path().join("3"));
    b.check().assert_quiet();
    let opts = ScanOptions::default().with_remote_storage(Some(remote));
    b.check_with(opts).assert_quiet();
}

/// Near miss of the above: the leader never copied segment 2 (40–59) while its local
/// retention deleted it: `remote_segment_gap`, so the remote metadata was read.
#[test]
fn a_segment_neither_copied_nor_local_is_a_gap() {
    let scratch = tempfile::tempdir().unwrap();
    let mut b = Brokers::new();
    let mut t = TieredLog::new(tiered_history());
    t.broker(1);
    t.copy(0);
    t.copy(1);
    t.copy(3);
    t.local_from(3);
    place(&mut b, 1, t, scratch.path());
    let v = b.check();
    assert!(
        (v.scan.findings.iter()).any(|f| f.kind == Kind::RemoteSegmentGap),
        "{:#?}",
        super::lines(&v.scan.findings)
    );
}

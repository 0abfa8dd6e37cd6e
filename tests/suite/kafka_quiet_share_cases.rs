//! No alarm on healthy share groups (KIP-932, queues for Kafka): what clusters running share
//! groups leave on disk — `__share_group_state` over share partitions' lives (initialize,
//! ShareUpdate records, a ShareSnapshot every few updates, leader and state epochs rising,
//! the share coordinator moving, a share partition deleted, the log pruned below the latest
//! snapshots), the share group records of `__consumer_offsets` (types 10–15) beside classic
//! and consumer groups, and the data partitions a share group consumes without committing
//! offsets.
//!
//! `scan` (plain and `--deep`) and `verify` must report nothing at warning or above, and
//! `verify` must predict a clean start. Each healthy case has a twin that differs by the one
//! fact that makes it wrong and must be reported. A case where klogscan disagrees with Kafka
//! is `#[ignore = "divergence: …"]` and fails when run with `--ignored`.
//!
//! Kafka sources read (share-group facts from the 2025-10 tree, `wtmxxx/kafka-se-homework`,
//! as released in 4.x): `share-coordinator/.../ShareCoordinatorShard` (`replay`,
//! `handleShareSnapshot`, `handleShareUpdate`, `generateShareStateRecord`,
//! `generateInitializeStateRecord`, `maybeGetWriteStateError`), `ShareCoordinatorOffsetsManager`
//! (`updateState`, `lastRedundantOffset`), `ShareCoordinatorService`
//! (`shareGroupStateTopicConfigs`, `setupRecordPruning`), `PersisterStateBatchCombiner`,
//! `ShareGroupOffset.fromRequest`; `core/.../server/share/SharePartition` (`maybeInitialize`,
//! `startOffsetDuringInitialization`, `updateCacheAndOffsets`) and `ShareFetchUtils.
//! processFetchResponse`; `group-coordinator/.../GroupMetadataManager` (share replay,
//! `shareGroupFenceMember`), `modern/share/ShareGroup` (`createGroupTombstoneRecords`,
//! `validateOffsetCommit`). Their tests: `ShareCoordinatorShardTest`,
//! `ShareCoordinatorServiceTest`, `ShareCoordinatorOffsetsManagerTest`,
//! `PersisterStateBatchCombinerTest`, `GroupMetadataManagerTest`, `ShareGroupTest`,
//! `SharePartitionTest`. Only facts are written here.
//!
//! Modules: `share_state` (`__share_group_state`), `groups` (`__consumer_offsets` with every
//! group type), `data` (the consumed partitions and the share-partition start offset).
#![cfg(feature = "testkit")]

use crate::common::quiet::{assert_clean_start, assert_silent, lines, scan_dir, verify_dir};
use klogscan::finding::{Finding, Kind, Severity};
use klogscan::results::ScanReport;
use klogscan::testkit::files::{topic_id_for, uuid_text};
use klogscan::testkit::groups::{record, share_record};
use klogscan::testkit::{Batch, LogDirBuilder, LogDirManifest, Producer, Rec};
use klogscan::verify::VerifyReport;
use serde_json::{Value, json};
use tempfile::TempDir;

mod data;
mod groups;
mod share_state;

pub(crate) const T0: i64 = klogscan::testkit::scenario::DEFAULT_START_MS;
pub(crate) const MIN: i64 = 60_000;
pub(crate) const STATE: &str = "__share_group_state";
pub(crate) const OFFSETS: &str = "__consumer_offsets";

/// `RecordState` ids as persisted (`SharePartition`'s in-flight states).
pub(crate) const AVAILABLE: i8 = 0;
pub(crate) const ACKNOWLEDGED: i8 = 2;
pub(crate) const ARCHIVED: i8 = 4;

/// Key and value bytes of one coordinator record (`None`: a tombstone).
pub(crate) type Raw = (Vec<u8>, Option<Vec<u8>>);

/// The topic id the testkit writes into `topic`'s `partition.metadata`, as Kafka prints it.
pub(crate) fn tid(topic: &str) -> String {
    uuid_text(&topic_id_for(topic))
}

fn share_key(group: &str, topic: &str, partition: i32) -> Value {
    json!({"groupId": group, "topicId": tid(topic), "partition": partition})
}

/// One persisted state batch: `(first, last, state, delivery count)`.
pub(crate) type StateBatch = (i64, i64, i8, i16);

fn batches(b: &[StateBatch]) -> Value {
    Value::Array(
        b.iter()
            .map(|(f, l, s, c)| {
                json!({"firstOffset": f, "lastOffset": l, "deliveryState": s, "deliveryCount": c})
            })
            .collect(),
    )
}

/// A share partition's identity: group, data topic, data partition.
#[derive(Clone, Copy)]
pub(crate) struct Sp(pub &'static str, pub &'static str, pub i32);

impl Sp {
    /// A ShareSnapshot (`ShareCoordinatorRecordHelpers.newShareSnapshotRecord`):
    /// `(snapshot epoch, state epoch, leader epoch)`, the start offset (SPSO), the batches.
    pub(crate) fn snapshot(
        self,
        epochs: (i32, i32, i32),
        start: i64,
        b: &[StateBatch],
        ts: i64,
    ) -> Raw {
        let v = json!({"snapshotEpoch": epochs.0, "stateEpoch": epochs.1, "leaderEpoch": epochs.2,
            "startOffset": start, "createTimestamp": ts, "writeTimestamp": ts, "stateBatches": batches(b)});
        share_record(0, share_key(self.0, self.1, self.2), Some((0, v)))
    }

    /// A ShareUpdate (`newShareUpdateRecord`): the last snapshot's epoch, the leader epoch,
    /// the start offset (-1: unchanged), the changed batches.
    pub(crate) fn update(
        self,
        snapshot_epoch: i32,
        leader: i32,
        start: i64,
        b: &[StateBatch],
    ) -> Raw {
        let v = json!({"snapshotEpoch": snapshot_epoch, "leaderEpoch": leader, "startOffset": start,
            "stateBatches": batches(b)});
        share_record(1, share_key(self.0, self.1, self.2), Some((0, v)))
    }

    /// `newShareStateTombstoneRecord`: a ShareSnapshot key with a null value.
    pub(crate) fn deleted(self) -> Raw {
        (
            share_record(0, share_key(self.0, self.1, self.2), None).0,
            None,
        )
    }

    /// A ShareUpdate key with a null value (never written by the coordinator).
    pub(crate) fn update_tombstone(self) -> Raw {
        (
            share_record(1, share_key(self.0, self.1, self.2), None).0,
            None,
        )
    }
}

/// A group coordinator record (`(type, key, value)`, as `testkit::groups::record`).
pub(crate) type Coord = (i16, Value, Option<(i16, Value)>);

pub(crate) fn coord_raw(recs: Vec<Coord>) -> Vec<Raw> {
    recs.into_iter().map(|(t, k, v)| record(t, k, v)).collect()
}

/// A batch as a coordinator runtime writes it (`CoordinatorRuntime`: no producer id, every
/// record at the append time).
pub(crate) fn coordinator_batch(recs: Vec<Raw>, ts: i64) -> Batch {
    let mut b = Batch::new(Producer::PLAIN).at(ts);
    for (k, v) in recs {
        b = b.record(
            match v {
                Some(v) => Rec::kv(k, v),
                None => Rec::tombstone(k),
            }
            .at(ts),
        );
    }
    b
}

// ----- checking -----------------------------------------------------------------------------

/// A written log dir and what `scan`, `scan --deep` and `verify` say of it.
pub(crate) struct Quiet {
    pub dir: TempDir,
    pub manifest: LogDirManifest,
    pub scan: ScanReport,
    pub deep: ScanReport,
    pub verify: VerifyReport,
}

pub(crate) fn check(ld: LogDirBuilder) -> Quiet {
    let dir = tempfile::tempdir().unwrap();
    let manifest = ld.write(dir.path()).unwrap();
    Quiet {
        scan: scan_dir(dir.path(), false),
        deep: scan_dir(dir.path(), true),
        verify: verify_dir(dir.path()),
        dir,
        manifest,
    }
}

impl Quiet {
    /// Nothing at warning or above, and a clean start predicted.
    pub(crate) fn assert_quiet(&self) {
        assert_silent(&self.scan, &self.deep, &self.verify);
        assert_clean_start(&self.verify, &self.manifest);
    }

    /// The first `kind` at `severity` or above on `topic` in the plain scan.
    pub(crate) fn reported(&self, kind: Kind, severity: Severity, topic: &str) -> &Finding {
        (self.scan.findings.iter())
            .find(|f| f.kind == kind && f.severity >= severity && f.topic == topic)
            .unwrap_or_else(|| {
                panic!(
                    "no {kind} >= {} on {topic}: {:#?}",
                    severity.as_str(),
                    lines(&self.scan.findings)
                )
            })
    }

    /// Any finding at warning or above on `topic` (plain scan or verify).
    pub(crate) fn loud_on(&self, topic: &str) -> Vec<String> {
        let v = self.verify.findings();
        lines(
            (self.scan.findings.iter().chain(v))
                .filter(|f| f.topic == topic && f.severity >= Severity::Warning),
        )
    }
}

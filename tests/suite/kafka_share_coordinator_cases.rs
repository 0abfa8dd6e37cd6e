//! The share coordinator's state log `__share_group_state` (KIP-932) as klogscan replays it,
//! held against what Kafka's share coordinator and share-partition leader do with the state
//! a load leaves: how a ShareUpdate's batches combine with the snapshot's
//! (`PersisterStateBatchCombiner`, `ShareCoordinatorShard.merge`), the state and leader epochs
//! a replay keeps and the writes they fence (`ShareCoordinatorShard.replay`,
//! `maybeGetWriteStateError`), the pruning offset (`ShareCoordinatorOffsetsManager`), and what
//! `SharePartition.maybeInitialize` makes of the served state against the data partition
//! (start offset, state batches, a start offset past the data log's end).
//!
//! Each case writes the bytes on disk with the testkit, then runs `scan` (plain and `--deep`)
//! and `verify`. A case where klogscan disagrees with Kafka is `#[ignore = "divergence: …"]`
//! and fails when run with `--ignored`.
//!
//! Kafka sources read (the 2025-10 tree, `wtmxxx/kafka-se-homework`): `share-coordinator/…/
//! ShareCoordinatorShard`, `ShareGroupOffset`, `PersisterStateBatchCombiner`,
//! `ShareCoordinatorOffsetsManager`; `core/…/server/share/SharePartition`, `ShareFetchUtils`;
//! their tests `PersisterStateBatchCombinerTest`, `ShareCoordinatorShardTest`,
//! `ShareCoordinatorOffsetsManagerTest`, `SharePartitionTest`. Only facts are written here.
//!
//! Modules: `combined` (a snapshot's batches after updates), `coordinator` (epochs, deletion,
//! pruning), `spso` (the start offset against the data log).
#![cfg(feature = "testkit")]

use crate::common::quiet::{assert_clean_start, assert_silent, lines, scan_dir, verify_dir};
use klogscan::finding::{Finding, Kind, Severity};
use klogscan::results::ScanReport;
use klogscan::testkit::files::{topic_id_for, uuid_text};
use klogscan::testkit::groups::share_record;
use klogscan::testkit::{Batch, LogDirBuilder, LogDirManifest, PartitionBuilder, Producer, Rec};
use klogscan::verify::VerifyReport;
use serde_json::{Value, json};
use tempfile::TempDir;

mod combined;
mod coordinator;
mod spso;

pub(crate) const T0: i64 = klogscan::testkit::scenario::DEFAULT_START_MS;
pub(crate) const MIN: i64 = 60_000;
pub(crate) const STATE: &str = "__share_group_state";
pub(crate) const ORDERS: &str = "orders";

/// `RecordState` ids as persisted.
pub(crate) const AVAILABLE: i8 = 0;
pub(crate) const ACQUIRED: i8 = 1;
pub(crate) const ACKNOWLEDGED: i8 = 2;
pub(crate) const ARCHIVED: i8 = 4;

/// Key and value bytes of one record (`None`: a tombstone).
pub(crate) type Raw = (Vec<u8>, Option<Vec<u8>>);

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

/// A share partition: group, data topic, data partition.
#[derive(Clone, Copy)]
pub(crate) struct Sp(pub &'static str, pub &'static str, pub i32);

impl Sp {
    fn key(self) -> Value {
        json!({"groupId": self.0, "topicId": uuid_text(&topic_id_for(self.1)), "partition": self.2})
    }

    /// A ShareSnapshot: `(snapshot epoch, state epoch, leader epoch)`, start offset, batches.
    pub(crate) fn snapshot(self, epochs: (i32, i32, i32), start: i64, b: &[StateBatch]) -> Raw {
        let v = json!({"snapshotEpoch": epochs.0, "stateEpoch": epochs.1, "leaderEpoch": epochs.2,
            "startOffset": start, "createTimestamp": T0, "writeTimestamp": T0, "stateBatches": batches(b)});
        share_record(0, self.key(), Some((0, v)))
    }

    /// A ShareUpdate: the last snapshot's epoch, the leader epoch, the start offset (-1:
    /// unchanged), the batches.
    pub(crate) fn update(
        self,
        snapshot_epoch: i32,
        leader: i32,
        start: i64,
        b: &[StateBatch],
    ) -> Raw {
        let v = json!({"snapshotEpoch": snapshot_epoch, "leaderEpoch": leader, "startOffset": start,
            "stateBatches": batches(b)});
        share_record(1, self.key(), Some((0, v)))
    }

    /// `ShareCoordinatorRecordHelpers.newShareStateTombstoneRecord`: a ShareSnapshot key, no value.
    pub(crate) fn deleted(self) -> Raw {
        (share_record(0, self.key(), None).0, None)
    }
}

/// `__share_group_state-0` from offset `first`: one coordinator batch per record (no producer
/// id, as `CoordinatorRuntime` appends), a minute apart, at coordinator leader epoch 3.
pub(crate) fn state_log(first: i64, recs: Vec<Raw>) -> PartitionBuilder {
    let mut p = PartitionBuilder::new(STATE, 0)
        .start_offset(first)
        .leader_epoch(3)
        .start_time(T0);
    for (i, (k, v)) in recs.into_iter().enumerate() {
        let ts = T0 + i as i64 * MIN;
        let r = match v {
            Some(v) => Rec::kv(k, v),
            None => Rec::tombstone(k),
        };
        p.append(Batch::new(Producer::PLAIN).at(ts).record(r.at(ts)));
    }
    p
}

/// A data partition of `orders` holding `start..end`, in batches of 20 from an idempotent
/// producer.
pub(crate) fn orders(partition: i32, start: i64, end: i64) -> PartitionBuilder {
    let mut p = PartitionBuilder::new(ORDERS, partition)
        .start_offset(start)
        .start_time(T0);
    for _ in 0..(end - start) / 20 {
        p.append(Batch::new(Producer::idempotent(7000 + partition as i64, 0)).records(20));
    }
    p
}

/// A log dir of broker 1 with `parts`; `log_start`: the checkpointed log start of
/// `__share_group_state-0`.
pub(crate) fn log_dir(parts: Vec<PartitionBuilder>, log_start: Option<i64>) -> LogDirBuilder {
    let mut ld = LogDirBuilder::new(1).cluster_id("c1");
    for p in parts {
        ld = ld.partition(p);
    }
    match log_start {
        Some(s) => ld.log_start_offset(STATE, 0, s),
        None => ld,
    }
}

/// A written log dir and what `scan`, `scan --deep` and `verify` say of it.
pub(crate) struct Run {
    #[allow(dead_code)]
    pub dir: TempDir,
    pub manifest: LogDirManifest,
    pub scan: ScanReport,
    pub deep: ScanReport,
    pub verify: VerifyReport,
}

pub(crate) fn run(ld: LogDirBuilder) -> Run {
    let dir = tempfile::tempdir().unwrap();
    let manifest = ld.write(dir.path()).unwrap();
    Run {
        scan: scan_dir(dir.path(), false),
        deep: scan_dir(dir.path(), true),
        verify: verify_dir(dir.path()),
        dir,
        manifest,
    }
}

impl Run {
    /// Nothing at warning or above, and a clean start predicted.
    pub(crate) fn assert_quiet(&self) {
        assert_silent(&self.scan, &self.deep, &self.verify);
        assert_clean_start(&self.verify, &self.manifest);
    }

    /// The only `kind` finding of the plain scan; it is at `severity`.
    pub(crate) fn one(&self, kind: Kind, severity: Severity) -> &Finding {
        let found: Vec<&Finding> = (self.scan.findings.iter())
            .filter(|f| f.kind == kind)
            .collect();
        assert_eq!(found.len(), 1, "{:#?}", lines(&self.scan.findings));
        assert_eq!(found[0].severity, severity, "{:#?}", found[0]);
        found[0]
    }

    /// The findings of `scan` and `verify` at `severity` or above on `topic`.
    pub(crate) fn at_least(&self, severity: Severity, topic: &str) -> Vec<&Finding> {
        (self.scan.findings.iter())
            .chain(self.verify.findings())
            .filter(|f| f.severity >= severity && f.topic == topic)
            .collect()
    }
}

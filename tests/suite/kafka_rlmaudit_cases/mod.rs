//! Kafka test audit: the `__remote_log_metadata` records and their replay into
//! `RemoteLogMetadataCache`, the test methods no klogscan test cited before (apache/kafka trunk
//! of 2024-10, storage/src/test/java/org/apache/kafka/server/log/remote/metadata/storage/:
//! `RemoteLogMetadataSerdeTest`, `RemoteLogMetadataTransformTest`,
//! `serialization/RemoteLogSegmentMetadataTransformTest`,
//! `serialization/RemoteLogSegmentMetadataUpdateTransformTest`,
//! `serialization/RemoteLogSegmentMetadataSnapshotTransformTest`,
//! `RemoteLogLeaderEpochStateTest`, `TopicBasedRemoteLogMetadataManagerTest`; and
//! `RemotePartitionMetadataStoreTest`, a later file of the same folder).
//!
//! Kafka's tests round-trip one object through the serde, or drive one epoch state or one
//! manager in memory. Each case here writes the records that object stands for on
//! `__remote_log_metadata-0` (testkit `TieredLog`: the records, the user partition `orders-0`
//! on broker 0 and its remote segments in `LocalTieredStorage`'s layout), runs `scan`,
//! `scan --remote-storage`, `verify` and `verify --remote-storage` (`kafka_quiet_tiered_cases::
//! check`) and asserts what a broker's metadata consumer would make of them: which segments
//! the cache holds as copied (`partitions[].tiered.remote`), which offsets a fetch from remote
//! is served (`remote_segment_gap`, and what the whole-history replay read,
//! `tiered.replayed`), where the consumer stops (`remote_metadata_undecodable`,
//! `remote_metadata_consumer_stopped`); and a near miss that flips the answer.
//!
//! What the cases hold klogscan to (storage/src/main/java/…/metadata/storage/):
//! * `RemoteLogMetadataSerde.deserialize` reads a frame (version 1, api key, version) and a
//!   version-0 message of api key 0–3, nothing after it; the classes it builds reject a
//!   negative start, an end before the start, no leader epochs, an unknown state.
//!   `ConsumerTask.processConsumerRecord` deserializes every record, then asks it for its user
//!   partition (`shouldProcess`) before anything else: a record failing either closes the
//!   consumer task (`ingestRecords`) of every broker consuming that metadata partition.
//! * `RemoteLogMetadataCache.updateRemoteLogSegmentMetadata` applies an update through
//!   `RemoteLogSegmentMetadata.createWithUpdates`, which takes the update's broker, time,
//!   state and custom metadata (absent or not).
//! * `RemoteLogLeaderEpochState.handleSegmentWithCopySegmentFinishedState` moves the epoch's
//!   entries at or above a finished copy's start out of the offset map only when the copy
//!   reaches the epoch's highest offset; reads take the floor entry.
//!
//! A test marked `#[ignore = "divergence: …"]` would assert Kafka's answer where klogscan gives
//! another; none is left (the two found are fixed, see `docs/testing.md`).
#![cfg(feature = "testkit")]

use crate::kafka_quiet_tiered_cases::{Checked, check};
use klogscan::finding::{Finding, Kind, Severity};
use klogscan::testkit::files::{topic_id_for, uuid_text};
use klogscan::testkit::remote_log::{RemoteSegment, TieredLog};
use klogscan::testkit::{Batch, LogDirBuilder, PartitionBuilder, Producer};
use std::path::Path;

mod epoch_state;
mod manager;
mod serde;

// ----- helpers ----------------------------------------------------------------------------

/// The kinds only `--remote-storage` can give (the objects read).
const STORAGE: &[Kind] = &[
    Kind::RemoteSegmentMissing,
    Kind::RemoteSegmentMismatch,
    Kind::RemoteSegmentCorrupt,
    Kind::RemoteSegmentUnreadable,
    Kind::RemoteTxnIndexHidden,
    Kind::RemoteTxnIndexIncomplete,
    Kind::RemoteTxnIndexExtra,
];

/// `(kind, offset, severity)` of the tiered-storage findings among `fs`, sorted.
pub(crate) fn remote_kinds<'a>(
    fs: impl IntoIterator<Item = &'a Finding>,
) -> Vec<(Kind, i64, Severity)> {
    let mut v: Vec<(Kind, i64, Severity)> = (fs.into_iter())
        .filter(|f| f.kind.id().starts_with("remote_"))
        .map(|f| (f.kind, f.offset.unwrap_or(-1), f.severity))
        .collect();
    v.sort_by_key(|(k, o, _)| (k.id(), *o));
    v
}

/// The metadata's findings: the same in `scan`, `verify` and (less the storage kinds) both
/// runs with `--remote-storage`; `scan`'s.
pub(crate) fn metadata(c: &Checked) -> Vec<(Kind, i64, Severity)> {
    let scan = remote_kinds(&c.scan.findings);
    let not_storage = |v: Vec<(Kind, i64, Severity)>| -> Vec<(Kind, i64, Severity)> {
        v.into_iter().filter(|f| !STORAGE.contains(&f.0)).collect()
    };
    assert_eq!(remote_kinds(c.verify.findings()), scan, "verify");
    assert_eq!(
        not_storage(remote_kinds(&c.remote.findings)),
        scan,
        "remote"
    );
    let vr = not_storage(remote_kinds(c.verify_remote.findings()));
    assert_eq!(vr, scan, "verify --remote-storage");
    scan
}

/// The storage findings of `scan --remote-storage` (and the same of `verify
/// --remote-storage`).
pub(crate) fn storage(c: &Checked) -> Vec<(Kind, i64, Severity)> {
    let only = |v: Vec<(Kind, i64, Severity)>| -> Vec<(Kind, i64, Severity)> {
        v.into_iter().filter(|f| STORAGE.contains(&f.0)).collect()
    };
    let r = only(remote_kinds(&c.remote.findings));
    assert_eq!(only(remote_kinds(c.verify_remote.findings())), r);
    r
}

/// The one finding of `kind` in `scan`.
pub(crate) fn one(c: &Checked, kind: Kind) -> &Finding {
    let v: Vec<&Finding> = c.scan.findings.iter().filter(|f| f.kind == kind).collect();
    assert_eq!(v.len(), 1, "{kind}: {:#?}", c.scan.findings);
    v[0]
}

/// `[start, end]` of the segments broker 0's cache holds as copied (COPY_SEGMENT_FINISHED).
/// None when no record of `orders-0` was applied (its replica is not known to be tiered).
pub(crate) fn copied(c: &Checked) -> Vec<(i64, i64)> {
    let t = c.part(0, false).tiered.as_ref();
    t.map(|t| t.remote.clone()).unwrap_or_default()
}

/// `(segments, first offset, last offset)` the whole-history replay read from remote
/// storage before the local log (`scan --remote-storage`): what a consumer fetching from the
/// log start is served from remote.
pub(crate) fn replayed(c: &Checked) -> (u64, Option<i64>, Option<i64>) {
    let t = c.part(0, true).tiered.as_ref().expect("a tiered partition");
    (t.replayed.as_ref()).map_or((0, None, None), |r| {
        (r.segments, r.first_offset, r.last_offset)
    })
}

/// The gap's `(first, last)` missing offsets.
pub(crate) fn gap(c: &Checked) -> (i64, i64) {
    let g = one(c, Kind::RemoteSegmentGap);
    let e = &g.evidence;
    (
        e["first_missing_offset"].as_i64().unwrap(),
        e["last_missing_offset"].as_i64().unwrap(),
    )
}

/// The bytes of one segment `.log` of `orders-0` from offset `start`: one plain batch per
/// `(leader epoch, records)` of `layout`.
pub(crate) fn log_bytes(start: i64, layout: &[(i32, usize)]) -> Vec<u8> {
    let d = tempfile::tempdir().unwrap();
    let mut p = PartitionBuilder::new("orders", 0).start_offset(start);
    for &(epoch, n) in layout {
        p.append(Batch::new(Producer::PLAIN).records(n).leader_epoch(epoch));
    }
    let m = LogDirBuilder::new(9).partition(p).write(d.path()).unwrap();
    std::fs::read(m.partitions[0].dir.join(format!("{start:020}.log"))).unwrap()
}

/// A copy another leader rolled where the history did not: offsets from `start`, one batch
/// per `(leader epoch, records)` of `layout`, with a `.log` object of its own
/// ([`place`] writes it; its other files are local segment 0's).
pub(crate) struct OwnCopy {
    pub(crate) seg: RemoteSegment,
    bytes: Vec<u8>,
}

impl OwnCopy {
    pub(crate) fn new(t: &mut TieredLog, start: i64, layout: &[(i32, usize)]) -> OwnCopy {
        let bytes = log_bytes(start, layout);
        let mut seg = t.remote_segment(0);
        let mut at = start;
        seg.leader_epochs.clear();
        for &(epoch, n) in layout {
            if seg.leader_epochs.last().is_none_or(|l| l.0 != epoch) {
                seg.leader_epochs.push((epoch, at));
            }
            at += n as i64;
        }
        (seg.start_offset, seg.end_offset) = (start, at - 1);
        seg.size = bytes.len() as i32;
        OwnCopy { seg, bytes }
    }

    /// COPY_SEGMENT_STARTED, then (with `finish`) COPY_SEGMENT_FINISHED: its index.
    pub(crate) fn copy(&self, t: &mut TieredLog, finish: bool) -> usize {
        let r = t.copy_started_as(self.seg.clone(), 0);
        if finish {
            t.copy_finished(r);
        }
        r
    }
}

/// Write each copy's own `.log` object over the one `TieredLog` wrote (under `dir`'s
/// `remote/`).
pub(crate) fn place(dir: &Path, copies: &[&OwnCopy]) {
    let remote = dir
        .join("remote/kafka-tiered-storage")
        .join(format!("orders-0-{}", uuid_text(&topic_id_for("orders"))));
    for c in copies {
        let name = format!("{:020}-{}.log", c.seg.start_offset, uuid_text(&c.seg.id));
        std::fs::write(remote.join(name), &c.bytes).unwrap();
    }
}

/// Check `t` alone, its own copies placed.
pub(crate) fn check_own(t: TieredLog, copies: &[&OwnCopy]) -> Checked {
    check(vec![t], |d| place(d, copies))
}

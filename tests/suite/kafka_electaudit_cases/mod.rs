//! KRaft leader elections and partition change records as the controller and brokers replay
//! them, for the Kafka tests no earlier klogscan test cited (apache/kafka trunk of 2024-10):
//! `PartitionChangeBuilderTest`, `ReplicationControlManagerTest` (elections, unclean
//! elections, ELR), `PartitionRegistrationTest`, `ClusterControlManagerTest` (fencing,
//! unfencing, registration) and `LeaderRecoveryStateTest` (metadata/src/test/java/org/apache/
//! kafka/controller/ and …/metadata/), and `UncleanLeaderElectionTest`
//! (core/src/test/scala/unit/kafka/integration/).
//!
//! Kafka's load path, read before any verdict: the controller replays every committed record
//! (`ReplicationControlManager.replay`, `ClusterControlManager.replay`) under a fatal fault
//! handler; a broker's metadata loader replays each record into the image's deltas
//! (`TopicDelta.replay`, `ClusterDelta.replay`), catching what one throws
//! (`MetadataBatchLoader.loadBatch`: logged, the record skipped). Both build a partition's
//! registration through `PartitionRegistration` (the constructor for a `PartitionRecord`,
//! `merge` for a change), which refuses a leader recovery state outside the enum, and both
//! need a fenced, unfenced or changed broker registered at the record's epoch.
//!
//! Each case writes the brokers' log dirs (`kafka_quiet_cluster_cases`' writers: the
//! metadata log beside the data) and runs `scan`, `verify` and the merge of the brokers'
//! bundles, with the replayed history, and asserts what Kafka's nodes do with the bytes, with
//! a near miss that flips the answer. Where klogscan disagreed the case says so (fixed).
#![cfg(feature = "testkit")]

mod changes;
mod elections;
mod elr;
mod refused;
pub(crate) mod unclean;

use crate::kafka_imgaudit_cases::{all_lines, brokers_with, of_kind};
use crate::kafka_quiet_cluster_cases::kraft::MetaLog;
use crate::kafka_quiet_cluster_cases::{Brokers, Verdict, replica};
use klogscan::finding::{Finding, Kind};

/// Brokers 1–3, each with its copy of `m` and a replica of `orders-0` (two batches at leader
/// epoch 0).
pub(crate) fn cluster_of(m: &MetaLog) -> Brokers {
    brokers_with(m, &[1, 2, 3], |_| vec![replica("orders", 0, &[(0, 2)])])
}

/// The one `metadata_record_rejected` of scan, verify and the merge alike (scan's), which
/// names `record`.
pub(crate) fn refused<'v>(v: &'v Verdict, record: &str) -> &'v Finding {
    let found = of_kind(v, Kind::MetadataRecordRejected);
    for f in &found {
        assert_eq!(f.len(), 1, "{}", all_lines(v));
        assert_eq!(f[0].evidence["record"], record, "{}", all_lines(v));
        assert_eq!(f[0].offset, found[0][0].offset);
    }
    found[0][0]
}

//! Kafka-test audit of the group coordinator's load of `__consumer_offsets`, for the test
//! methods of `GroupMetadataManagerTest`, `GroupCoordinatorShardTest`, `ClassicGroupTest`
//! (`group-coordinator`) present in the 2026-08 trunk (confluentinc/kafka: Apache trunk with
//! Confluent's merges) and not in the 2024-10 trunk, that no klogscan test cited before and
//! that leave records a loading coordinator replays: a classic group whose member's
//! subscription does not read (KAFKA-20570), current assignments whose release records the
//! log cleaner dropped (KAFKA-19862, consumer and streams groups), each share and streams
//! group record type replayed on its own, the resolved regular expressions of a consumer
//! group (type 16), and the assignment timestamp KAFKA-20266 added to the target assignment
//! metadata records.
//!
//! Each case writes the records the Kafka test replays as the group's `__consumer_offsets`
//! partition of one broker with the testkit (`kafka_groupaudit_cases::Coord`), reads them
//! back as `klogscan groups` does (deleted groups included) and runs `scan`, `verify` and the
//! merge of the broker's `collect` bundle, and asserts what the newer Kafka's load holds; each
//! has a near miss that flips the answer.
//!
//! Kafka sources read: confluentinc/kafka trunk of 2026-08 and its 4.0–4.4 branches
//! (`group-coordinator/src/{main,test}/java/org/apache/kafka/coordinator/group/`:
//! `GroupMetadataManager.replay(...)`, `classic/ClassicGroup.computeSubscribedTopics`,
//! `modern/consumer/ConsumerGroup.addPartitionEpochs`, `streams/StreamsGroup.addTaskProcessId`;
//! `clients/.../consumer/internals/ConsumerProtocol`; the `common/message/*Value.json`
//! schemas), apache/kafka trunk of 2024-10 for the comparison. Only facts are written here.
#![cfg(feature = "testkit")]

mod compaction;
mod metadata;
mod replay;
pub(crate) mod subscriptions;
mod topic_ids;

use crate::kafka_groupaudit_cases::Loaded;
use klogscan::finding::{Finding, Kind};

/// The `group_load_failure` findings of `scan` and of the merge (which read the partitions
/// alike), each report's list.
fn load_failures(l: &Loaded) -> Vec<(&'static str, Vec<&Finding>)> {
    l.reports()
        .into_iter()
        .filter(|(name, _)| *name != "verify")
        .map(|(name, fs)| {
            let f = fs
                .into_iter()
                .filter(|f| f.kind == Kind::GroupLoadFailure)
                .collect();
            (name, f)
        })
        .collect()
}

/// The one `group_load_failure` of `scan` and of the merge, which must be the same record;
/// `scan`'s is returned.
fn one_load_failure(l: &Loaded) -> &Finding {
    let all = load_failures(l);
    for (name, f) in &all {
        assert_eq!(f.len(), 1, "{name}: {f:#?}");
    }
    assert_eq!(all[0].1[0].offset, all[1].1[0].offset);
    all[0].1[0]
}

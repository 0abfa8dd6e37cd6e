//! The group coordinator's load of `__consumer_offsets` by a stated 3.x release
//! (`verify --broker-version`, `partition/groups/release.rs`), and the Kafka-test audit of the
//! group model classes of the 2026-08 trunk (`ConsumerGroupTest`, `StreamsGroupTest`).
//!
//! `release`: a 3.x release's own group coordinator (the Scala
//! `GroupMetadataManager.doLoadGroupsAndOffsets` of apache/kafka's 3.x tags) reads key
//! versions 0–2 alone. Before KAFKA-14869 (KIP-915: 3.4.1, 3.5.0 and later) `readMessageKey`
//! throws at the first record of another key version, and the value readers at a value
//! version above 3; since, such keys are skipped unread and value version 4 is read. 3.6–3.9
//! can run the new group coordinator instead (the broker's configuration decides), so the
//! release alone does not say there.
//!
//! Each case writes one group's `__consumer_offsets` partition of one broker with the testkit
//! (`kafka_groupaudit_cases::Coord`) and runs `verify` with and without a release, `scan` and
//! the merge of the broker's `collect` bundle; each has a near miss that flips the answer.
//! Kafka sources read: apache/kafka tags 3.0.0–3.8.0 and branch 3.9
//! (`core/src/main/scala/kafka/coordinator/group/GroupMetadataManager.scala`,
//! `KafkaConfig.isNewGroupCoordinatorEnabled`, the `*Key.json`/`*Value.json` schemas);
//! confluentinc/kafka 4.0–4.4 branches (`GroupCoordinatorRecordHelpers.offsetCommitValueVersion`).
//! Only facts are written here.
#![cfg(feature = "testkit")]

mod consumer;
mod release;
mod share;
mod streams;

use crate::kafka_groupaudit_cases::Coord;
use klogscan::partition::groups::{Group, GroupType};
use klogscan::testkit::group_scenarios::Spec;

/// The group the model cases replay.
pub(crate) const G: &str = "foo";

/// `recs` as one batch each in `G`'s partition.
pub(crate) fn coord(recs: &[Spec]) -> Coord {
    let mut c = Coord::new();
    for r in recs {
        c.batch(G, vec![r.clone()]);
    }
    c
}

/// `G` as the load leaves it after `recs`, which give no group finding.
pub(crate) fn loaded(recs: &[Spec]) -> Group {
    let l = coord(recs).load();
    l.assert_no_group_finding();
    l.group(G).clone()
}

/// Kafka's state of a consumer, share or streams group after its records are replayed
/// (`ConsumerGroup`/`ShareGroup`/`StreamsGroup.maybeUpdateGroupState`), from what
/// `klogscan groups` holds: no member Empty; a share group with members Stable whatever its
/// epochs; a streams group without topology NotReady (with
/// one, readiness also needs the metadata image, which no record holds); a group epoch above
/// the target assignment epoch Assigning; a member whose epoch is not the target's or whose
/// state is not `stable` Reconciling; else Stable.
pub(crate) fn kafka_state(g: &Group, stable: i8) -> &'static str {
    if g.members.is_empty() {
        "Empty"
    } else if g.group_type == GroupType::Share {
        "Stable"
    } else if g.group_type == GroupType::Streams && g.topology.is_none() {
        "NotReady"
    } else if g.epoch > g.assignment_epoch {
        "Assigning"
    } else if (g.members.values())
        .any(|m| m.member_epoch != g.assignment_epoch || m.state != stable)
    {
        "Reconciling"
    } else {
        "Stable"
    }
}

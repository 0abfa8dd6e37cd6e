//! Kafka-test audit of group conversions between the classic and the consumer (KIP-848)
//! protocols, as the new group coordinator writes them to `__consumer_offsets` and a
//! loading coordinator replays them, for the methods no klogscan test cited before:
//! `GroupMetadataManagerTest` (online upgrade: a consumer-protocol member joining a classic
//! group; online downgrade: the last consumer-protocol member leaving, fenced or replaced;
//! an empty group of one type given to the other; classic-protocol members joining a
//! consumer group), `ConsumerGroupTest.testFromClassicGroup` and
//! `ClassicGroupTest.testFromConsumerGroup*` (the conversions whose records those tests
//! write), and the old coordinator's `GroupMetadataTest` (core, Scala).
//!
//! Each case writes what the tested method appends — the classic group's `GroupMetadata`
//! tombstone and the consumer group's member, epoch, target and current assignment records
//! on an upgrade (`GroupMetadataManager.convertToConsumerGroup`:
//! `ClassicGroup.createGroupTombstoneRecords`, `ConsumerGroup.createConsumerGroupRecords`),
//! the consumer group's tombstones and the classic group's record on a downgrade
//! (`convertToClassicGroup`: `ConsumerGroup.createGroupTombstoneRecords[WithReplacedMember]`,
//! `ClassicGroup.createClassicGroupRecords`), the offsets committed before — in the
//! group's `__consumer_offsets` partition with the testkit (`kafka_groupaudit_cases::Coord`),
//! then reads it back as `klogscan groups` does and runs `scan`, `verify` and the merge of
//! the broker's `collect` bundle. The load is `GroupCoordinatorShard.replay` →
//! `GroupMetadataManager.replay(...)` per record type (a `GroupMetadata` tombstone removes
//! whatever group the id holds; a consumer record meets a classic group that is not simple:
//! "Group … is not a consumer group"; a consumer tombstone out of
//! `createGroupTombstoneRecords`' order throws) and `OffsetMetadataManager.replay` (offsets
//! are kept per group id, across a conversion). Every case has a near miss that flips the
//! answer.
//!
//! Kafka sources read: apache/kafka trunk of 2024-10 (`group-coordinator/src/{main,test}/
//! java/org/apache/kafka/coordinator/group/`: `GroupMetadataManager`, `classic/ClassicGroup`,
//! `modern/consumer/ConsumerGroup`, `modern/consumer/ConsumerGroupBuilder` and the tests
//! named; `core/src/{main,test}/scala/kafka/coordinator/group/GroupMetadata*`). Only facts
//! are written here.
#![cfg(feature = "testkit")]

mod compaction;
mod downgrade;
mod empty;
mod joining;
mod members;
mod old_coordinator;
mod streams;
mod upgrade;

use crate::kafka_groupaudit_cases::{BAR_ID, FOO_ID, T, gm, parts};
use crate::kafka_valid_data_quiet_cases::coordinators::{assignment, subscription};
use klogscan::testkit::group_scenarios::Spec;
use serde_json::{Value, json};

/// The group every case converts.
const GROUP: &str = "group-id";

/// `(topic name, topic id)` of the two topics the groups consume.
const FOO: (&str, &str) = ("foo", FOO_ID);
const BAR: (&str, &str) = ("bar", BAR_ID);

/// One classic member as the group record holds it: id, static instance id, the topics it
/// subscribes to, and its assignment (one topic's partitions).
struct ClassicMember<'a> {
    id: &'a str,
    instance: Option<&'a str>,
    topics: &'a [&'a str],
    assigned: (&'a str, &'a [i32]),
}

fn cm<'a>(id: &'a str, topics: &'a [&'a str], assigned: (&'a str, &'a [i32])) -> ClassicMember<'a> {
    ClassicMember {
        id,
        instance: None,
        topics,
        assigned,
    }
}

/// `GroupCoordinatorRecordHelpers.newGroupMetadataRecord` (value version 3) of a classic
/// group of protocol type `consumer` at `generation`: protocol `range` and the first member
/// as leader when it has members (an Empty group has neither).
fn classic(group: &str, generation: i32, members: &[ClassicMember<'_>]) -> Spec {
    classic_typed(group, "consumer", generation, members)
}

/// [`classic`] with protocol type `protocol_type` (`""`: the group record of a group
/// created without one, which loads as a simple group).
fn classic_typed(
    group: &str,
    protocol_type: &str,
    generation: i32,
    members: &[ClassicMember<'_>],
) -> Spec {
    let ms: Vec<Value> = members
        .iter()
        .map(|m| {
            json!({"memberId": m.id, "groupInstanceId": m.instance, "clientId": "client-id",
                   "clientHost": "client-host", "rebalanceTimeout": 10000, "sessionTimeout": 5000,
                   "subscription": subscription(m.topics),
                   "assignment": assignment(m.assigned.0, m.assigned.1)})
        })
        .collect();
    let (protocol, leader) = match members.first() {
        Some(m) => (json!("range"), json!(m.id)),
        None => (Value::Null, Value::Null),
    };
    (
        2,
        json!({"group": group}),
        Some((
            3,
            json!({"protocolType": protocol_type, "generation": generation, "protocol": protocol,
                   "leader": leader, "currentStateTimestamp": T, "members": ms}),
        )),
    )
}

/// A consumer group member's subscription (type 5): `classic` gives it the
/// `ClassicMemberMetadata` a member using the classic protocol carries (a member converted
/// from a classic group, or one that joined with JoinGroup): its session timeout and its
/// supported protocol `range` with the subscription's bytes.
fn member_meta(
    group: &str,
    m: &str,
    instance: Option<&str>,
    topics: &[&str],
    classic: bool,
) -> Spec {
    let mut v = json!({"instanceId": instance, "rackId": null, "clientId": "client-id",
        "clientHost": "client-host", "subscribedTopicNames": topics, "subscribedTopicRegex": null,
        "rebalanceTimeoutMs": 10000, "serverAssignor": if classic { Value::Null } else { json!("range") }});
    if classic {
        v["classicMemberMetadata"] = json!({"sessionTimeoutMs": 5000,
            "supportedProtocols": [{"name": "range", "metadata": subscription(topics)}]});
    }
    (5, gm(group, m), Some((0, v)))
}

/// A member's current assignment (type 8): `(epoch, previous epoch, state)`, what it holds
/// and what it still revokes.
fn current_with(
    group: &str,
    m: &str,
    (epoch, prev, state): (i32, i32, i8),
    held: &[(&str, &[i32])],
    revoking: &[(&str, &[i32])],
) -> Spec {
    (
        8,
        gm(group, m),
        Some((
            0,
            json!({"memberEpoch": epoch, "previousMemberEpoch": prev, "state": state,
                   "assignedPartitions": parts(held), "partitionsPendingRevocation": parts(revoking)}),
        )),
    )
}

/// `ConsumerGroup.createGroupTombstoneRecords` for `members` (in that order):
/// current assignments, target assignments, the target assignment metadata, subscriptions,
/// the subscription (partition) metadata, the group epoch.
fn consumer_tombstones(group: &str, members: &[&str]) -> Vec<Spec> {
    use crate::kafka_groupaudit_cases::{g, tombstone};
    let mut v: Vec<Spec> = Vec::new();
    v.extend(members.iter().map(|m| tombstone(8, gm(group, m))));
    v.extend(members.iter().map(|m| tombstone(7, gm(group, m))));
    v.push(tombstone(6, g(group)));
    v.extend(members.iter().map(|m| tombstone(5, gm(group, m))));
    v.push(tombstone(4, g(group)));
    v.push(tombstone(3, g(group)));
    v
}

/// The three records that tombstone one member (`replaceMember`, a member leaving or
/// fenced): current assignment, target assignment, subscription.
fn member_tombstones(group: &str, m: &str) -> Vec<Spec> {
    use crate::kafka_groupaudit_cases::tombstone;
    vec![
        tombstone(8, gm(group, m)),
        tombstone(7, gm(group, m)),
        tombstone(5, gm(group, m)),
    ]
}

/// Member ids and epochs of a loaded group, in id order.
fn epochs(g: &klogscan::partition::groups::Group) -> Vec<(String, i32)> {
    g.members
        .values()
        .map(|m| (m.member_id.clone(), m.member_epoch))
        .collect()
}

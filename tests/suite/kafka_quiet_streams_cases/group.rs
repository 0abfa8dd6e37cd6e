//! The application's consumer group under the classic protocol: protocol type `consumer`,
//! protocol `stream` (`StreamsPartitionAssignor.name`), every member's subscription carrying
//! the Streams assignor's `SubscriptionInfo` as user data and its assignment the
//! `AssignmentInfo`.

use super::{
    APP, CoordRecord, LogDirBuilder, REPARTITION, T0, commit, coordinator_batch, offsets_partition,
    write_and_check,
};
use klogscan::finding::{Kind, Severity};
use klogscan::testkit::{PartitionBuilder, Producer};
use serde_json::json;

/// The application's input topic.
pub(crate) const INPUT: &str = "text-lines";

fn string(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(&(s.len() as i16).to_be_bytes());
    out.extend_from_slice(s.as_bytes());
}

/// A Streams `SubscriptionInfo` (`SubscriptionInfoData` v11 as `SubscriptionInfo.encode`
/// writes it: version, latest supported version, process id, an empty endpoint, the task
/// offset sums of one task, the unique field, the error code), opaque to the consumer
/// protocol.
fn subscription_info(process: u8) -> Vec<u8> {
    let mut b = Vec::new();
    b.extend_from_slice(&11i32.to_be_bytes());
    b.extend_from_slice(&11i32.to_be_bytes());
    b.extend_from_slice(&[process; 16]);
    b.extend_from_slice(&0i32.to_be_bytes()); // userEndPoint: empty bytes
    b.extend_from_slice(&1i32.to_be_bytes()); // taskOffsetSums: one subtopology
    b.extend_from_slice(&1i32.to_be_bytes()); // topicGroupId 1
    b.extend_from_slice(&1i32.to_be_bytes()); // one partition
    b.extend_from_slice(&0i32.to_be_bytes()); // partition 0
    b.extend_from_slice(&4_711i64.to_be_bytes()); // offset sum
    b.push(0); // uniqueField
    b.extend_from_slice(&0i32.to_be_bytes()); // errorCode
    b.extend_from_slice(&0i32.to_be_bytes()); // clientTags: none
    b
}

/// `ConsumerProtocolSubscription` v3 (`ConsumerProtocol.serializeSubscription` of a 3.x
/// consumer): the topics, the user data, owned partitions, generation, no rack. `short`
/// makes the user data's length claim `short` bytes more than it holds.
pub(crate) fn subscription(process: u8, generation: i32, short: i32) -> Vec<u8> {
    let mut b = 3i16.to_be_bytes().to_vec();
    b.extend_from_slice(&2i32.to_be_bytes());
    string(&mut b, INPUT);
    string(&mut b, REPARTITION);
    let ud = subscription_info(process);
    b.extend_from_slice(&(ud.len() as i32 + short).to_be_bytes());
    b.extend_from_slice(&ud);
    b.extend_from_slice(&1i32.to_be_bytes()); // ownedPartitions
    string(&mut b, INPUT);
    b.extend_from_slice(&1i32.to_be_bytes());
    b.extend_from_slice(&(process as i32 % 2).to_be_bytes());
    b.extend_from_slice(&(generation - 1).to_be_bytes());
    b.extend_from_slice(&(-1i16).to_be_bytes()); // rackId null
    b
}

/// `ConsumerProtocolAssignment` v3 with a Streams `AssignmentInfo` as user data.
fn assignment(partition: i32) -> Vec<u8> {
    let mut b = 3i16.to_be_bytes().to_vec();
    b.extend_from_slice(&2i32.to_be_bytes());
    for t in [INPUT, REPARTITION] {
        string(&mut b, t);
        b.extend_from_slice(&1i32.to_be_bytes());
        b.extend_from_slice(&partition.to_be_bytes());
    }
    let ud = [&11i32.to_be_bytes()[..], &11i32.to_be_bytes(), &[0u8; 12]].concat();
    b.extend_from_slice(&(ud.len() as i32).to_be_bytes());
    b.extend_from_slice(&ud);
    b
}

/// The application's `GroupMetadataValue` v3: two instances (one stream thread each),
/// protocol `stream`, stable at `generation`. `short`: see [`subscription`] (second member).
pub(crate) fn streams_group(generation: i32, ts: i64, short: i32) -> CoordRecord {
    let b64 = |b: Vec<u8>| base64_std(&b);
    let members: Vec<_> = (0..2u8)
        .map(|i| {
            json!({"memberId": format!("{APP}-{i}-StreamThread-1-consumer-{i}f3c"),
                "groupInstanceId": null, "clientId": format!("{APP}-{i}-StreamThread-1-consumer"),
                "clientHost": format!("/10.0.0.{i}"), "rebalanceTimeout": 300000,
                "sessionTimeout": 45000,
                "subscription": b64(subscription(i + 1, generation, if i == 1 { short } else { 0 })),
                "assignment": b64(assignment(i as i32))})
        })
        .collect();
    let v = json!({"protocolType": "consumer", "generation": generation, "protocol": "stream",
        "leader": members[0]["memberId"], "currentStateTimestamp": ts, "members": members});
    (2, json!({"group": APP}), Some((3, v)))
}

fn base64_std(b: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(b)
}

/// The application's `__consumer_offsets` partition: the group stored at generation 4, then
/// offset commits every 30 s (`commit.interval.ms`) on the input and the repartition topic
/// (`TaskManager.commit` → `KafkaConsumer.commitSync`); `last` is the last commit on the
/// repartition partition 0 (leader epoch 3, its leader's).
pub(crate) fn group_log(last: i64, short: i32) -> PartitionBuilder {
    let mut p = PartitionBuilder::new("__consumer_offsets", offsets_partition(APP));
    let rec = streams_group(4, T0, short);
    p.append(coordinator_batch(Producer::PLAIN, T0, vec![rec]));
    for k in 1..=3i64 {
        let ts = T0 + k * 30_000;
        let off = if k == 3 { last } else { last - 10 * (3 - k) };
        let recs = vec![
            commit(APP, (INPUT, 0), 100 * k, 0, ts),
            commit(APP, (REPARTITION, 0), off, 3, ts),
        ];
        p.append(coordinator_batch(Producer::PLAIN, ts, recs));
    }
    p
}

/// The classic group of a Streams application as the 3.x coordinator stores it
/// (`GroupMetadataManager.storeGroup`; in 4.x `GroupCoordinatorShard` with the classic
/// group records): members whose subscriptions are 3.x consumer-protocol v3 structs
/// carrying the assignor's `SubscriptionInfo` (`StreamsPartitionAssignor.subscriptionUserData`)
/// and assignments carrying `AssignmentInfo`. The load reads the subscriptions for the
/// subscribed topics (`GroupMetadata.computeSubscribedTopics` →
/// `ConsumerProtocol.deserializeSubscription`), which reads the user data as opaque bytes:
/// it loads. Nothing at warning or above.
/// Twin: the second member's user data claims 1,000 bytes more than its subscription holds —
/// `deserializeSubscription` throws and the load fails: a `group_load_failure`.
#[test]
fn streams_assignor_user_data_in_a_classic_group() {
    for short in [0, 1_000] {
        let q = write_and_check(LogDirBuilder::new(1).partition(group_log(40, short)));
        if short == 0 {
            q.assert_quiet();
        } else {
            let f = q.assert_reported(
                Kind::GroupLoadFailure,
                Severity::Error,
                "__consumer_offsets",
            );
            assert!(f.message.contains("user data"), "{}", f.message);
        }
    }
}

//! `__consumer_offsets`: what the load of a classic group record checks of its members —
//! their consumer protocol subscriptions (`ClassicGroupTest.testSubscribedTopics`,
//! `testIsSubscribedToTopic`; core `GroupMetadataManagerTest.
//! testLoadConsumerGroupWithFaultyConsumerProtocol`) and their static instance ids
//! (`ClassicGroupTest.testCannotAddStaticMemberIfAlreadyPresent`), as the 4.x
//! (`GroupMetadataManager.replay(GroupMetadataKey, …)`) and 3.x (`GroupMetadata.loadGroup`)
//! loads read them.

use super::groups::*;
use super::*;
use base64::Engine;
use klogscan::finding::Kind;
use klogscan::testkit::group_scenarios::GroupLog;
use serde_json::{Value, json};

/// A classic group of `members` (protocol type `protocol_type`, protocol "range").
fn classic_with(protocol_type: &str, protocol: Option<&str>, members: Value) -> GroupLog {
    let mut log = GroupLog::new();
    log.batch(vec![(
        2,
        json!({"group": GROUP}),
        Some((
            3,
            json!({"protocolType": protocol_type, "generation": 1, "protocol": protocol,
                   "leader": "m1", "currentStateTimestamp": 1, "members": members}),
        )),
    )]);
    log
}

/// A member whose subscription is `subscription` (the consumer protocol's bytes).
fn member(id: &str, instance: Option<&str>, subscription: &[u8]) -> Value {
    json!({"memberId": id, "groupInstanceId": instance, "clientId": "c", "clientHost": "h",
           "rebalanceTimeout": 60000, "sessionTimeout": 10000,
           "subscription": base64::engine::general_purpose::STANDARD.encode(subscription),
           "assignment": ""})
}

/// Version `v` header, then the parts.
fn sub(v: i16, parts: &[&[u8]]) -> Vec<u8> {
    let mut b = v.to_be_bytes().to_vec();
    for p in parts {
        b.extend_from_slice(p);
    }
    b
}

fn load_failures(r: &ScanReport) -> Vec<&Finding> {
    r.findings
        .iter()
        .filter(|f| f.kind == Kind::GroupLoadFailure)
        .collect()
}

/// The load reads each member's subscription as the consumer protocol's version 0 (the
/// prefix of every version) and catches only a `SchemaException` (bytes that end early):
/// a negative topic count, a count above the bytes left, a null topic name, a name or
/// user data running past the end throw and fail the load, in 3.x and 4.x (the two
/// length checks since 3.3).
#[test]
fn a_subscription_the_reader_throws_on_fails_the_load() {
    let one = 1i32.to_be_bytes();
    for (bytes, message, since_3_3) in [
        (
            sub(0, &[&(-1i32).to_be_bytes()]),
            "non-nullable field topics was serialized as null",
            false,
        ),
        (
            sub(1, &[&9i32.to_be_bytes(), &[0, 1, b'x']]),
            "Tried to allocate a collection of size 9, but there are only 3 bytes remaining.",
            true,
        ),
        (
            sub(0, &[&one, &[0xff, 0xff]]),
            "non-nullable field topics element was serialized as null",
            false,
        ),
        (
            sub(0, &[&one, &[0, 5], b"fo"]),
            "Error reading byte array of 5 byte(s): only 2 byte(s) available",
            true,
        ),
        (
            sub(3, &[&one, &[0, 2], b"fo", &8i32.to_be_bytes()]),
            "newLimit > capacity: (8 > 0)",
            false,
        ),
    ] {
        let log = classic_with(
            "consumer",
            Some("range"),
            json!([
                member("m1", None, &sub(0, &[&one, &[0, 1], b"t"])),
                member("m2", None, &bytes)
            ]),
        );
        let (groups, r) = load(&log);
        let f = load_failures(&r);
        assert_eq!(f.len(), 1, "{message}: {:#?}", r.findings);
        let e = &f[0].evidence;
        assert_eq!(
            (e["member_id"].as_str(), e["kafka_message"].as_str()),
            (Some("m2"), Some(message))
        );
        assert_eq!(e["load_fails_in"], "kafka_3_and_4_before_kafka_20570");
        assert_eq!(e.get("fails_since").is_some(), since_3_3, "{e}");
        // Both coordinators are named: ≤ 3.x serves the partition without its groups.
        assert!(
            f[0].broker_behaviour.contains("Kafka ≤ 3.x")
                && f[0].broker_behaviour.contains("auto.offset.reset"),
            "{}",
            f[0].broker_behaviour
        );
        // The replay goes on with the group (4.x holds it when it throws).
        assert_eq!(live(&groups).unwrap().members.len(), 2);
    }
}

/// What the load tolerates: bytes that end early (empty, a header alone, a count or a name
/// length cut off: a buffer underflow), the fields of versions above 0 unread (a
/// version-3 subscription whose owned partitions do not decode), a group of another
/// protocol type or without a protocol (not parsed at all).
#[test]
fn subscriptions_the_load_tolerates_or_never_reads() {
    let one = 1i32.to_be_bytes();
    let broken = sub(0, &[&(-1i32).to_be_bytes()]);
    let v3 = sub(
        3,
        &[
            &one,
            &[0, 1],
            b"t",
            &(-1i32).to_be_bytes(),
            &7i32.to_be_bytes(),
        ],
    );
    let cases = [
        ("consumer", Some("range"), Vec::new()),
        ("consumer", Some("range"), sub(2, &[])),
        ("consumer", Some("range"), sub(0, &[&[0, 0]])),
        ("consumer", Some("range"), sub(0, &[&one, &[0]])),
        ("consumer", Some("range"), v3),
        ("connect", Some("sessioned"), broken.clone()),
        ("consumer", None, broken),
    ];
    for (protocol_type, protocol, bytes) in cases {
        let log = classic_with(protocol_type, protocol, json!([member("m1", None, &bytes)]));
        let (groups, r) = load(&log);
        assert_clean(&r);
        assert_eq!(live(&groups).unwrap().members.len(), 1);
    }
}

/// `ClassicGroupTest.testCannotAddStaticMemberIfAlreadyPresent`: the load adds the members
/// of a group record one by one (`ClassicGroup.add`, 4.x; `GroupMetadata.add` from
/// `loadGroup`, 3.x) and throws on a second member with an instance id already taken, in
/// both. The record is skipped: the group stays as the record before left it.
#[test]
fn two_members_with_one_static_instance_id_fail_the_load() {
    let empty = sub(0, &[&0i32.to_be_bytes()]);
    let mut log = classic_with(
        "consumer",
        Some("range"),
        json!([member("m1", Some("i1"), &empty)]),
    );
    let twice = json!([
        member("m1", Some("i1"), &empty),
        member("m2", Some("i1"), &empty)
    ]);
    log.batch(vec![(
        2,
        json!({"group": GROUP}),
        Some((
            3,
            json!({"protocolType": "consumer", "generation": 2, "protocol": "range",
                   "leader": "m1", "currentStateTimestamp": 1, "members": twice}),
        )),
    )]);
    let (groups, r) = load(&log);
    let f = load_failures(&r);
    assert_eq!(f.len(), 1, "{:#?}", r.findings);
    assert_eq!(f[0].offset, Some(1));
    assert_eq!(
        f[0].evidence["kafka_message"],
        "Static member with groupInstanceId=i1 cannot be added to group foo since it is already a member."
    );
    assert_eq!(f[0].evidence["load_fails_in"], "kafka_3_and_4");
    let g = live(&groups).unwrap();
    assert_eq!((g.epoch, g.members.len()), (1, 1));
}

/// The static members the coordinator writes load clean: distinct instance ids beside
/// dynamic members (none), and an instance id moving to a new member id from one record
/// to the next (a static member rejoining: `ClassicGroup.replaceStaticMember`).
#[test]
fn distinct_or_replaced_static_members_load_clean() {
    let empty = sub(0, &[&0i32.to_be_bytes()]);
    let mut log = classic_with(
        "consumer",
        Some("range"),
        json!([
            member("m1", Some("i1"), &empty),
            member("m2", Some("i2"), &empty),
            member("m3", None, &empty),
            member("m4", None, &empty)
        ]),
    );
    log.batch(vec![(
        2,
        json!({"group": GROUP}),
        Some((
            3,
            json!({"protocolType": "consumer", "generation": 2, "protocol": "range",
                   "leader": "m5", "currentStateTimestamp": 1,
                   "members": [member("m5", Some("i1"), &empty), member("m2", Some("i2"), &empty)]}),
        )),
    )]);
    let (groups, r) = load(&log);
    assert_clean(&r);
    let g = live(&groups).unwrap();
    assert_eq!(g.members["m5"].instance_id.as_deref(), Some("i1"));
}

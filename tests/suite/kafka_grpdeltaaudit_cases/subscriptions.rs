//! A classic `consumer` group whose member's subscription bytes do not read as the consumer
//! protocol (`ClassicGroupTest.testComputeSubscribedTopicsHandlesMalformedMemberMetadata`,
//! KAFKA-20570).

use super::one_load_failure;
use crate::kafka_groupaudit_cases::{Coord, T, commit, tp};
use klogscan::partition::groups::GroupType;
use klogscan::testkit::group_scenarios::Spec;
use serde_json::json;

const GROUP: &str = "groupId";

/// The poison bytes of the Kafka test: version 1, then a topic count of -1.
pub(crate) const POISON: [u8; 6] = [0, 1, 0xff, 0xff, 0xff, 0xff];

/// `GroupMetadataValue` v3 of a Stable classic group of protocol type `protocol_type`,
/// protocol `range`, generation 1, one member whose subscription is `subscription`.
pub(crate) fn classic(protocol_type: &str, subscription: &[u8]) -> Spec {
    use base64::Engine;
    let b64 = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
    let m = json!({"memberId": "poisonMember", "groupInstanceId": null, "clientId": "client",
        "clientHost": "/127.0.0.1", "rebalanceTimeout": 10000, "sessionTimeout": 5000,
        "subscription": b64(subscription), "assignment": b64(&[])});
    (
        2,
        json!({"group": GROUP}),
        Some((
            3,
            json!({"protocolType": protocol_type, "generation": 1, "protocol": "range",
                   "leader": "poisonMember", "currentStateTimestamp": T, "members": [m]}),
        )),
    )
}

/// `ClassicGroupTest.testComputeSubscribedTopicsHandlesMalformedMemberMetadata`: a member
/// whose protocol metadata is version 1 with a topic count of -1. Since KAFKA-20570
/// (`ConsumerProtocol` wraps every error of the read in the `SchemaException`
/// `ClassicGroup.computeSubscribedTopics` catches: 4.2.2, 4.3.2, 4.4.0) the group loads
/// without its subscribed topics; before it (3.x, 4.0.x, 4.1.x, 4.2.0–4.2.1, 4.3.0–4.3.1)
/// the reader's "non-nullable field topics was serialized as null" escapes
/// `GroupMetadataManager.replay(GroupMetadataKey, …)` and the load fails.
/// klogscan: the group listed with its member and no topic, the offset committed after it
/// kept; one `group_load_failure` at the record, scoped to the releases before KAFKA-20570
/// (was `kafka_3_and_4`, every release).
/// Near miss: the same bytes cut inside the count (a buffer underflow every release
/// tolerates): no finding at all.
#[test]
fn a_malformed_subscription_fails_the_load_only_before_kafka_20570() {
    let mut c = Coord::new();
    c.batch(GROUP, vec![classic("consumer", &POISON)]);
    c.batch(GROUP, vec![commit(GROUP, "foo", 0, 42)]);
    let l = c.load();
    let g = l.group(GROUP);
    assert_eq!(g.group_type, GroupType::Classic);
    assert_eq!(g.protocol.as_deref(), Some("range"));
    let m = &g.members["poisonMember"];
    assert!(m.subscribed_topics.is_empty(), "{m:#?}");
    assert_eq!(l.offsets(GROUP), [tp("foo", 0, 42)]);
    let f = one_load_failure(&l);
    assert_eq!(f.offset, Some(0));
    assert_eq!(f.evidence["member_id"], "poisonMember");
    assert_eq!(
        f.evidence["kafka_message"],
        "non-nullable field topics was serialized as null"
    );
    assert_eq!(
        f.evidence["load_fails_in"],
        "kafka_3_and_4_before_kafka_20570"
    );
    for release in ["KAFKA-20570", "4.2.2", "4.3.2", "4.4.0", "Kafka ≤ 3.x"] {
        assert!(f.broker_behaviour.contains(release), "{release}: {f:#?}");
    }

    // Near miss: the count cut after two of its bytes: an underflow, tolerated by every
    // release (the group loads without its topics).
    let mut c = Coord::new();
    c.batch(GROUP, vec![classic("consumer", &POISON[..4])]);
    c.batch(GROUP, vec![commit(GROUP, "foo", 0, 42)]);
    let l = c.load();
    assert!(
        l.group(GROUP).members["poisonMember"]
            .subscribed_topics
            .is_empty()
    );
    l.assert_no_group_finding();
    l.assert_no_alarm();
}

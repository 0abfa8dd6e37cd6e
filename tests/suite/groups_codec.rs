//! The testkit's coordinator-record encoder (its own schema notation) against the format
//! layer's decoder (its own schema tables) and the dump's JSON renderer: every record type
//! of `__consumer_offsets` and `__share_group_state`, every value version, random values.
#![cfg(feature = "testkit")]

use klogscan::dump::coordinator_json;
use klogscan::read::format::groups::{self, Outcome, Topic};
use klogscan::testkit::groups::{self as enc, Rng, Spec};
use proptest::prelude::*;
use serde_json::{Value, json};

fn round_trip(topic: Topic, s: &Spec, version: i16, seed: u64) {
    let mut rng = Rng(seed);
    let key_fields = enc::parse(s.key);
    let value_fields = enc::parse(s.value);
    let key = enc::random_object(&key_fields, 0, false, &mut rng, 0);
    let flex = version >= s.flexible_from;
    let mut value = enc::random_object(&value_fields, version, flex, &mut rng, 0);
    if s.id == 2 && topic == Topic::ConsumerOffsets {
        // Not "consumer": the member bytes then print as base64.
        value["protocolType"] = json!("sr");
    }
    let kb = enc::encode_key(s, &key);
    let vb = enc::encode_value(s, version, &value);
    // The decoder reads it, the validator agrees, the renderer prints what was encoded.
    assert_eq!(groups::validate(topic, Some(&kb), Some(&vb)), Ok(None));
    match groups::decode(topic, Some(&kb), Some(&vb)).unwrap() {
        Outcome::Record(d) => {
            assert_eq!(d.rtype.id, s.id);
            assert_eq!(d.value.as_ref().unwrap().0, version);
        }
        other => panic!("{other:?}"),
    }
    let (k, v) = coordinator_json::record(topic, Some(&kb), Some(&vb), 7);
    if matches!(
        groups::schema::lookup(topic.table(), s.id).map(|r| r.status),
        Some(groups::Status::Retired | groups::Status::Poc)
    ) {
        // Types Kafka removed (9, 18) or never released (24): the 4.1+ dump tool does not
        // know them, so neither does the dump (the decoder above still reads them).
        let unknown = format!("Unknown record type {} at offset 7, skipping.", s.id);
        assert_eq!((k.as_deref(), v), (Some(unknown.as_str()), None));
        return;
    }
    let k: Value = serde_json::from_str(&k.unwrap()).unwrap();
    let v: Value = serde_json::from_str(&v.unwrap()).unwrap();
    assert_eq!(
        k,
        json!({"type": s.id.to_string(), "data": key}),
        "type {}",
        s.id
    );
    assert_eq!(
        v,
        json!({"version": version.to_string(), "data": value}),
        "type {} v{version}",
        s.id
    );
    // Every truncation is an error, never a panic; tombstones print <DELETE>.
    for cut in 0..vb.len() {
        let _ = groups::decode(topic, Some(&kb), Some(&vb[..cut]));
        let _ = groups::validate(topic, Some(&kb), Some(&vb[..cut]));
    }
    assert_eq!(
        coordinator_json::record(topic, Some(&kb), None, 7)
            .1
            .as_deref(),
        Some("<DELETE>")
    );
}

fn all() -> Vec<(Topic, &'static Spec, i16)> {
    let mut out = Vec::new();
    for (topic, table) in [
        (Topic::ConsumerOffsets, enc::CONSUMER_OFFSETS),
        (Topic::ShareGroupState, enc::SHARE_GROUP_STATE),
    ] {
        for s in table {
            for v in 0..=s.max_version {
                out.push((topic, s, v));
            }
        }
    }
    out
}

#[test]
fn every_type_and_version_is_covered() {
    // 0–24 in __consumer_offsets (types 0..=24, 1 and 2 with versions 0–4), 0–1 in
    // __share_group_state; both sides define the same ids.
    let n = all().len();
    assert_eq!(n, 25 + 4 + 4 + 2, "{n}");
    for (topic, s, _) in all() {
        assert!(
            topic.table().iter().any(|t| t.id == s.id),
            "decoder lacks type {}",
            s.id
        );
    }
    for t in groups::CONSUMER_OFFSETS {
        assert!(enc::CONSUMER_OFFSETS.iter().any(|s| s.id == t.id));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    #[test]
    fn encoder_and_decoder_agree_on_random_values(seed in any::<u64>()) {
        for (topic, s, v) in all() {
            round_trip(topic, s, v, seed);
        }
    }

    #[test]
    fn noise_never_panics(key in proptest::collection::vec(any::<u8>(), 0..40),
                          value in proptest::collection::vec(any::<u8>(), 0..80),
                          t in 0u8..26) {
        let mut key = key;
        if key.len() >= 2 { key[0] = 0; key[1] = t; }
        for topic in [Topic::ConsumerOffsets, Topic::ShareGroupState] {
            let _ = groups::decode(topic, Some(&key), Some(&value));
            let _ = groups::validate(topic, Some(&key), Some(&value));
            let _ = coordinator_json::record(topic, Some(&key), Some(&value), 0);
        }
    }
}

#[test]
fn golden_lines_of_the_newest_dump_tool() {
    // DumpLogSegmentsTest.testOffsetsMessageParser, written with the testkit's encoder.
    let (k, v) = enc::record(
        3,
        json!({"groupId": "group"}),
        Some((0, json!({"epoch": 10}))),
    );
    assert_eq!(
        coordinator_json::record(Topic::ConsumerOffsets, Some(&k), v.as_deref(), 0),
        (
            Some(r#"{"type":"3","data":{"groupId":"group"}}"#.into()),
            Some(r#"{"version":"0","data":{"epoch":10}}"#.into())
        )
    );
    // GroupMetadataValue v4 of a consumer group: the embedded protocol decodes to JSON.
    let mut sub = 3i16.to_be_bytes().to_vec();
    sub.extend_from_slice(&1i32.to_be_bytes());
    sub.extend_from_slice(&[0, 3, b'f', b'o', b'o']);
    sub.extend_from_slice(&(-1i32).to_be_bytes()); // userData null
    sub.extend_from_slice(&1i32.to_be_bytes());
    sub.extend_from_slice(&[0, 3, b'f', b'o', b'o']);
    sub.extend_from_slice(&1i32.to_be_bytes());
    sub.extend_from_slice(&0i32.to_be_bytes());
    sub.extend_from_slice(&0i32.to_be_bytes()); // generationId 0
    sub.extend_from_slice(&[0, 4, b'r', b'a', b'c', b'k']);
    let mut asg = 3i16.to_be_bytes().to_vec();
    asg.extend_from_slice(&1i32.to_be_bytes());
    asg.extend_from_slice(&[0, 3, b'f', b'o', b'o']);
    asg.extend_from_slice(&1i32.to_be_bytes());
    asg.extend_from_slice(&0i32.to_be_bytes());
    asg.extend_from_slice(&(-1i32).to_be_bytes());
    use base64::Engine;
    let b = |x: &[u8]| base64::engine::general_purpose::STANDARD.encode(x);
    let member = |s: &str, a: &str| {
        json!({"memberId":"member","groupInstanceId":"instance","clientId":"client","clientHost":"host",
               "rebalanceTimeout":1000,"sessionTimeout":100,"subscription":s,"assignment":a})
    };
    let value = |m: Value| {
        json!({"protocolType":"consumer","generation":10,"protocol":"range","leader":"member",
               "currentStateTimestamp":-1,"members":[m]})
    };
    let (k, v) = enc::record(
        2,
        json!({"group":"group"}),
        Some((4, value(member(&b(&sub), &b(&asg))))),
    );
    let (ks, vs) = coordinator_json::record(Topic::ConsumerOffsets, Some(&k), v.as_deref(), 0);
    assert_eq!(ks.unwrap(), r#"{"type":"2","data":{"group":"group"}}"#);
    assert_eq!(
        vs.unwrap(),
        r#"{"version":"4","data":{"protocolType":"consumer","generation":10,"protocol":"range","leader":"member","currentStateTimestamp":-1,"members":[{"memberId":"member","groupInstanceId":"instance","clientId":"client","clientHost":"host","rebalanceTimeout":1000,"sessionTimeout":100,"subscription":{"topics":["foo"],"userData":null,"ownedPartitions":[{"topic":"foo","partitions":[0]}],"generationId":0,"rackId":"rack"},"assignment":{"assignedPartitions":[{"topic":"foo","partitions":[0]}],"userData":null}}]}}"#
    );
    // Bytes that are not a consumer protocol payload stay base64.
    let (k, v) = enc::record(
        2,
        json!({"group":"group"}),
        Some((4, value(member(&b(b"Subscription"), &b(b"Assignment"))))),
    );
    assert_eq!(
        coordinator_json::record(Topic::ConsumerOffsets, Some(&k), v.as_deref(), 0)
            .1
            .unwrap(),
        r#"{"version":"4","data":{"protocolType":"consumer","generation":10,"protocol":"range","leader":"member","currentStateTimestamp":-1,"members":[{"memberId":"member","groupInstanceId":"instance","clientId":"client","clientHost":"host","rebalanceTimeout":1000,"sessionTimeout":100,"subscription":"U3Vic2NyaXB0aW9u","assignment":"QXNzaWdubWVudA=="}]}}"#
    );
    // The error line: ConsumerGroupMetadataKey with an empty ConsumerGroupMemberMetadataValue.
    let empty_member = enc::encode_value(
        enc::spec(enc::CONSUMER_OFFSETS, 5),
        0,
        &json!({"instanceId":"","rackId":"","subscribedTopicRegex":"","serverAssignor":"","rebalanceTimeoutMs":-1}),
    );
    let (k, _) = enc::record(3, json!({"groupId":"group"}), None);
    assert_eq!(
        coordinator_json::record(Topic::ConsumerOffsets, Some(&k), Some(&empty_member), 0),
        (
            Some("Error at offset 0, skipping. Could not read record with version 0 from value's buffer due to: Error reading byte array of 536870911 byte(s): only 1 byte(s) available.".into()),
            None
        )
    );
    // testShareGroupStateMessageParser.
    let key = json!({"groupId":"gs1","topicId":"Uj5wn_FqTXirEASvVZRY1w","partition":0});
    let batches = json!([{"firstOffset":0,"lastOffset":4,"deliveryState":2,"deliveryCount":1}]);
    let (k, v) = enc::share_record(
        0,
        key.clone(),
        Some((
            0,
            json!({"createTimestamp": 1234, "writeTimestamp": 1235, "stateBatches": batches}),
        )),
    );
    assert_eq!(
        coordinator_json::record(Topic::ShareGroupState, Some(&k), v.as_deref(), 0),
        (
            Some(r#"{"type":"0","data":{"groupId":"gs1","topicId":"Uj5wn_FqTXirEASvVZRY1w","partition":0}}"#.into()),
            Some(r#"{"version":"0","data":{"snapshotEpoch":0,"stateEpoch":0,"leaderEpoch":0,"startOffset":0,"createTimestamp":1234,"writeTimestamp":1235,"stateBatches":[{"firstOffset":0,"lastOffset":4,"deliveryState":2,"deliveryCount":1}]}}"#.into())
        )
    );
    let (k, v) = enc::share_record(1, key.clone(), Some((0, json!({"stateBatches": batches}))));
    assert_eq!(
        coordinator_json::record(Topic::ShareGroupState, Some(&k), v.as_deref(), 0)
            .1
            .unwrap(),
        r#"{"version":"0","data":{"snapshotEpoch":0,"leaderEpoch":0,"startOffset":0,"stateBatches":[{"firstOffset":0,"lastOffset":4,"deliveryState":2,"deliveryCount":1}]}}"#
    );
    let empty_snapshot = enc::encode_value(enc::spec(enc::SHARE_GROUP_STATE, 0), 0, &json!({}));
    assert_eq!(
        coordinator_json::record(Topic::ShareGroupState, Some(&k), Some(&empty_snapshot), 0)
            .0
            .unwrap(),
        "Error at offset 0, skipping. Could not read record with version 0 from value's buffer due to: non-nullable field stateBatches was serialized as null."
    );
    assert_eq!(
        coordinator_json::record(Topic::ConsumerOffsets, None, Some(&empty_snapshot), 0)
            .0
            .unwrap(),
        "Failed to decode message at offset 0 using the specified decoder (message had a missing key)"
    );
}

//! `GroupCoordinatorShard.replay`'s routing of each record type to its group type, and the
//! classic group record's load (`GroupCoordinatorShardTest`, `GroupMetadataManagerTest`).

use super::*;

/// `GroupCoordinatorShardTest.testReplayGroupMetadata` and
/// `GroupMetadataManagerTest.testReplayGroupMetadataRecords`: a classic group record
/// loads as a classic group with the record's generation, protocol type, protocol and
/// leader, and each member with its static instance id, client id and host (subscribed
/// topics read from the consumer protocol bytes).
#[test]
fn a_classic_group_record_loads_the_group_and_its_static_members() {
    let mut c = Coord::new();
    c.batch(
        "group-id",
        vec![classic(
            "group-id",
            1,
            &[
                ("member-0", Some("group-instance-id-0")),
                ("member-1", Some("group-instance-id-1")),
            ],
        )],
    );
    let l = c.load();
    let grp = l.group("group-id");
    assert_eq!(grp.group_type, GroupType::Classic);
    assert_eq!(grp.epoch, 1);
    assert_eq!(grp.protocol_type.as_deref(), Some("consumer"));
    assert_eq!(grp.protocol.as_deref(), Some("range"));
    assert_eq!(grp.leader.as_deref(), Some("member-0"));
    assert_eq!(grp.current_state_timestamp, Some(T));
    assert!(!grp.simple);
    let members: Vec<_> = (grp.members.values())
        .map(|m| {
            (
                m.member_id.as_str(),
                m.instance_id.as_deref(),
                m.client_id.as_str(),
                m.client_host.as_str(),
                m.subscribed_topics.clone(),
            )
        })
        .collect();
    let foo = vec!["foo".to_string()];
    assert_eq!(
        members,
        vec![
            (
                "member-0",
                Some("group-instance-id-0"),
                "client-0",
                "host-0",
                foo.clone()
            ),
            (
                "member-1",
                Some("group-instance-id-1"),
                "client-1",
                "host-1",
                foo
            ),
        ]
    );
    l.assert_no_group_finding();
    l.assert_no_alarm();

    // Near miss: a later record of the group replaces it whole (here: Empty, generation 2).
    let mut c = Coord::new();
    c.batch(
        "group-id",
        vec![classic(
            "group-id",
            1,
            &[("member-0", Some("group-instance-id-0"))],
        )],
    );
    c.batch("group-id", vec![classic("group-id", 2, &[])]);
    let l = c.load();
    let grp = l.group("group-id");
    assert_eq!((grp.epoch, grp.members.len()), (2, 0));
}

/// `GroupCoordinatorShardTest.testReplayConsumerGroupMetadata` (the shard's routing; the
/// manager's own test is cited elsewhere), `GroupCoordinatorShardTest.testReplayShareGroupMetadata`
/// and `GroupCoordinatorShardTest.testReplayShareGroupMemberMetadata`, with the routing of
/// the other consumer group types (`kafka_groupaudit_cases::replay`): each record
/// type reaches the replay of its own group type (types 3–8 a consumer group, 10–14 a share
/// group, 2 a classic group), so records of the three types of groups side by side load
/// as three groups of their types.
#[test]
fn each_record_type_reaches_the_group_of_its_type() {
    let mut c = Coord::new();
    c.batch("classic-g", vec![classic("classic-g", 3, &[("c1", None)])]);
    c.batch(
        "consumer-g",
        vec![
            member("consumer-g", "k1"),
            group_epoch("consumer-g", 4),
            partition_metadata("consumer-g"),
            target("consumer-g", "k1", &[(BAR_ID, &[0])]),
            target_epoch("consumer-g", 4),
            current("consumer-g", "k1", 4, 3, 0, &[(BAR_ID, &[0])]),
        ],
    );
    c.batch(
        "share-g",
        vec![
            (
                10,
                gm("share-g", "s1"),
                Some((
                    0,
                    json!({"clientId": "c", "clientHost": "/h", "subscribedTopicNames": ["bar"]}),
                )),
            ),
            (11, g("share-g"), Some((0, json!({"epoch": 5})))),
            (
                13,
                gm("share-g", "s1"),
                Some((0, json!({"topicPartitions": parts(&[(BAR_ID, &[0, 1])])}))),
            ),
            (12, g("share-g"), Some((0, json!({"assignmentEpoch": 5})))),
            (
                14,
                gm("share-g", "s1"),
                Some((
                    0,
                    json!({"memberEpoch": 5, "previousMemberEpoch": 4, "state": 0,
                                "assignedPartitions": parts(&[(BAR_ID, &[0, 1])])}),
                )),
            ),
        ],
    );
    let l = c.load();
    let kinds: Vec<_> = ["classic-g", "consumer-g", "share-g"]
        .iter()
        .map(|id| {
            let g = l.group(id);
            (g.group_type, g.epoch, g.members.len())
        })
        .collect();
    assert_eq!(
        kinds,
        vec![
            (GroupType::Classic, 3, 1),
            (GroupType::Consumer, 4, 1),
            (GroupType::Share, 5, 1)
        ]
    );
    assert_eq!(l.group("share-g").members["s1"].member_epoch, 5);
    assert_eq!(l.group("consumer-g").assignment_epoch, 4);
    l.assert_no_group_finding();
    l.assert_no_alarm();

    // Near miss: a share group record for the consumer group's id is for a group of
    // another type: the load throws.
    let mut c = Coord::new();
    c.batch("consumer-g", vec![group_epoch("consumer-g", 4)]);
    c.batch(
        "consumer-g",
        vec![(11, g("consumer-g"), Some((0, json!({"epoch": 5}))))],
    );
    let l = c.load();
    assert_eq!(l.group("consumer-g").group_type, GroupType::Consumer);
    l.assert_reported(Kind::GroupLoadFailure, "consumer-g");
}

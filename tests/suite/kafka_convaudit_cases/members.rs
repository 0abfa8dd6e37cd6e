//! Classic-protocol members of a consumer group that leave, are fenced, or are replaced by
//! a consumer-protocol member, while consumer-protocol members stay: no conversion, the
//! group stays a consumer group (`GroupMetadataManager.classicGroupLeaveToConsumerGroup`,
//! `consumerGroupFenceMember`, `replaceMember`).

use super::{BAR, FOO, GROUP, current_with, epochs, member_meta, member_tombstones};
use crate::kafka_groupaudit_cases::{
    Coord, commit, gm, group_epoch, partition_metadata, target, target_epoch, tombstone, tp,
};
use klogscan::finding::Kind;
use klogscan::partition::groups::GroupType;
use klogscan::testkit::group_scenarios::Spec;

/// A member of [`group_at_10`]: its id, whether it uses the classic protocol, and the
/// partitions of one topic (id) it holds.
type Seed<'a> = (&'a str, bool, (&'a str, &'a [i32]));

/// A consumer group at epoch 10 (assignment epoch 10, all reconciled at 10): `classic`
/// members using the classic protocol (static `instance-<id>`), then `consumer` members
/// using the consumer protocol, each holding the partitions given; an offset.
fn group_at_10(members: &[Seed<'_>]) -> Coord {
    let mut recs: Vec<Spec> = Vec::new();
    for (m, classic, _) in members {
        let instance = format!("instance-{m}");
        recs.push(member_meta(
            GROUP,
            m,
            Some(&instance),
            &["foo", "bar"],
            *classic,
        ));
    }
    recs.push(partition_metadata(GROUP));
    recs.push(group_epoch(GROUP, 10));
    for (m, _, held) in members {
        recs.push(target(GROUP, m, &[*held]));
    }
    recs.push(target_epoch(GROUP, 10));
    for (m, _, held) in members {
        recs.push(current_with(GROUP, m, (10, 9, 0), &[*held], &[]));
    }
    let mut c = Coord::new();
    c.batch(GROUP, recs);
    c.batch(GROUP, vec![commit(GROUP, "bar", 0, 8)]);
    c
}

/// `GroupMetadataManagerTest.testConsumerGroupMemberUsingClassicProtocolBatchLeaveGroup`
/// (two classic-protocol members leave in one LeaveGroup; a consumer-protocol member
/// stays), `…FencedWhenSessionTimeout` and `…FencedWhenJoinTimeout` (one classic-protocol
/// member fenced): each member's current assignment, target assignment and subscription
/// tombstoned in that order, then the group epoch bumped to 11. The load keeps a consumer
/// group at epoch 11 with the member that stayed; no finding.
/// Near miss: a member's subscription tombstoned before its current assignment
/// (`replay(ConsumerGroupMemberMetadataKey, null)` throws: the member's epoch is not the
/// leave epoch -1 yet): the load fails.
#[test]
fn classic_protocol_members_leave_a_consumer_group_that_stays() {
    let members: &[Seed<'_>] = &[
        ("member-1", true, (FOO.1, &[0])),
        ("member-2", true, (FOO.1, &[1])),
        ("member-3", false, (BAR.1, &[0])),
    ];
    let build = |leaving: &[&str], in_order: bool| {
        let mut c = group_at_10(members);
        let mut recs = Vec::new();
        for m in leaving {
            if in_order {
                recs.extend(member_tombstones(GROUP, m));
            } else {
                recs.extend([
                    tombstone(5, gm(GROUP, m)),
                    tombstone(8, gm(GROUP, m)),
                    tombstone(7, gm(GROUP, m)),
                ]);
            }
        }
        recs.push(group_epoch(GROUP, 11));
        c.batch(GROUP, recs);
        c.load()
    };
    for leaving in [&["member-1", "member-2"][..], &["member-2"][..]] {
        let l = build(leaving, true);
        l.assert_no_alarm();
        l.assert_no_group_finding();
        let g = l.group(GROUP);
        assert_eq!(
            (g.group_type, g.epoch, g.assignment_epoch),
            (GroupType::Consumer, 11, 10)
        );
        let stay: Vec<&str> = g.members.keys().map(String::as_str).collect();
        let want: Vec<&str> = ["member-1", "member-2", "member-3"]
            .into_iter()
            .filter(|m| !leaving.contains(m))
            .collect();
        assert_eq!(stay, want);
        assert_eq!(l.offsets(GROUP), vec![tp("bar", 0, 8)]);
    }

    let l = build(&["member-1", "member-2"], false);
    l.assert_reported(Kind::GroupTombstonesIncomplete, GROUP);
}

/// `GroupMetadataManagerTest.testConsumerGroupHeartbeatFromExistingClassicStaticMember`
/// (and `testJoiningConsumerGroupReplacingExistingStaticMember`, where the new id joins with
/// the classic protocol again: its last subscription keeps the `ClassicMemberMetadata`):
/// static member-1 of a consumer group uses the classic protocol; it comes back with the
/// consumer protocol under a new member id. `replaceMember` tombstones the old id and
/// writes the new one (its subscription still with the `ClassicMemberMetadata`, the old
/// target, its current assignment at epoch 0), then the new id's consumer-protocol
/// subscription and its current assignment at epoch 10. The load keeps the consumer group
/// with the new id holding foo-0; no finding.
/// Near miss: the new id written before the old id's tombstones: its current assignment
/// claims foo-0, which the old id holds at epoch 10, from epoch 0
/// (`ConsumerGroup.updateMember` → `addPartitionEpochs` throws, a claim from a lower epoch
/// in every release): the load fails.
#[test]
fn a_classic_static_member_of_a_consumer_group_comes_back_with_the_consumer_protocol() {
    let members: &[Seed<'_>] = &[
        ("member-1", true, (FOO.1, &[0])),
        ("member-2", false, (BAR.1, &[0])),
    ];
    let foo0: &[(&str, &[i32])] = &[(FOO.1, &[0])];
    let build = |tombstones_first: bool, final_classic: bool| {
        let mut c = group_at_10(members);
        let new: Vec<Spec> = vec![
            member_meta(
                GROUP,
                "new-member-1",
                Some("instance-member-1"),
                &["foo", "bar"],
                true,
            ),
            target(GROUP, "new-member-1", foo0),
            current_with(GROUP, "new-member-1", (0, 0, 0), foo0, &[]),
        ];
        let mut recs = Vec::new();
        if tombstones_first {
            recs.extend(member_tombstones(GROUP, "member-1"));
            recs.extend(new);
        } else {
            recs.extend(new);
            recs.extend(member_tombstones(GROUP, "member-1"));
        }
        recs.extend([
            member_meta(
                GROUP,
                "new-member-1",
                Some("instance-member-1"),
                &["foo", "bar"],
                final_classic,
            ),
            current_with(GROUP, "new-member-1", (10, 0, 0), foo0, &[]),
        ]);
        c.batch(GROUP, recs);
        c.load()
    };
    for final_classic in [false, true] {
        let l = build(true, final_classic);
        l.assert_no_alarm();
        l.assert_no_group_finding();
        let g = l.group(GROUP);
        assert_eq!((g.group_type, g.epoch), (GroupType::Consumer, 10));
        let want = vec![
            ("member-2".to_string(), 10),
            ("new-member-1".to_string(), 10),
        ];
        assert_eq!(epochs(g), want);
        assert_eq!(
            g.members["new-member-1"].assigned,
            vec![format!("{}:0", FOO.1)]
        );
    }

    let l = build(false, false);
    l.assert_reported(Kind::GroupLoadFailure, GROUP);
}

/// `member_meta` subscribing by `regex` (no topic names) instead.
fn regex_member_meta(m: &str, instance: Option<&str>, regex: &str, classic: bool) -> Spec {
    let (t, k, v) = member_meta(GROUP, m, instance, &[], classic);
    let (version, mut v) = v.unwrap();
    v["subscribedTopicRegex"] = serde_json::json!(regex);
    (t, k, Some((version, v)))
}

/// `GroupMetadataManagerTest.testConsumerMemberWithRegexReplacedByClassicMemberWithChangedSubscription`
/// (and `…WithSameSubscription`; a later trunk): static member-1 subscribes with the regular
/// expression `foo*` (resolved to foo: a type 16 record), member-2 to foo by name. A
/// classic-protocol member with member-1's instance id replaces it (the old id's
/// tombstones, the new id copied with the regex at epoch 0) and subscribes to bar by name:
/// its subscription rewritten without the regex, the regex's tombstone
/// (`newConsumerGroupRegularExpressionTombstone`, no member subscribes to it any more), the
/// group at epoch 11 with the new target, the new id's current assignment. The load gives
/// the consumer group at epoch 11 with no resolved regular expression; no finding.
/// Near miss: without the regex's tombstone the load keeps `foo*` resolved in the group
/// though no member subscribes to it (`replay(ConsumerGroupRegularExpressionKey, …)`
/// refuses nothing), which klogscan shows and does not report.
#[test]
fn a_regex_member_replaced_by_a_classic_member_drops_the_regex() {
    let build = |regex_tombstone: bool| {
        let foo012: &[(&str, &[i32])] = &[(FOO.1, &[0, 1, 2])];
        let foo345: &[(&str, &[i32])] = &[(FOO.1, &[3, 4, 5])];
        let mut c = Coord::new();
        c.batch(
            GROUP,
            vec![
                regex_member_meta("member-1", Some("instance-id"), "foo*", false),
                member_meta(GROUP, "member-2", None, &["foo"], false),
                (
                    16,
                    serde_json::json!({"groupId": GROUP, "regularExpression": "foo*"}),
                    Some((
                        0,
                        serde_json::json!({"topics": ["foo"], "version": 0, "timestamp": 0}),
                    )),
                ),
                group_epoch(GROUP, 10),
                target(GROUP, "member-1", foo012),
                target(GROUP, "member-2", foo345),
                target_epoch(GROUP, 10),
                current_with(GROUP, "member-1", (10, 10, 0), foo012, &[]),
                current_with(GROUP, "member-2", (10, 10, 0), foo345, &[]),
            ],
        );
        let mut recs = member_tombstones(GROUP, "member-1");
        recs.extend([
            regex_member_meta("new-member-1", Some("instance-id"), "foo*", true),
            target(GROUP, "new-member-1", foo012),
            current_with(GROUP, "new-member-1", (0, 0, 0), foo012, &[]),
            member_meta(GROUP, "new-member-1", Some("instance-id"), &["bar"], true),
        ]);
        if regex_tombstone {
            recs.push((
                16,
                serde_json::json!({"groupId": GROUP, "regularExpression": "foo*"}),
                None,
            ));
        }
        recs.extend([
            group_epoch(GROUP, 11),
            target(GROUP, "new-member-1", &[]),
            target(GROUP, "member-2", &[]),
            target_epoch(GROUP, 11),
            current_with(GROUP, "new-member-1", (11, 0, 0), &[], &[]),
        ]);
        c.batch(GROUP, recs);
        c.load()
    };
    let l = build(true);
    l.assert_no_alarm();
    l.assert_no_group_finding();
    let g = l.group(GROUP);
    assert_eq!(
        (g.group_type, g.epoch, g.assignment_epoch),
        (GroupType::Consumer, 11, 11)
    );
    let want = vec![
        ("member-2".to_string(), 10),
        ("new-member-1".to_string(), 11),
    ];
    assert_eq!(epochs(g), want);
    assert!(
        g.regular_expressions.is_empty(),
        "{:?}",
        g.regular_expressions
    );

    let l = build(false);
    l.assert_no_alarm();
    l.assert_no_group_finding();
    let g = l.group(GROUP);
    assert_eq!(g.regular_expressions["foo*"], vec!["foo".to_string()]);
}

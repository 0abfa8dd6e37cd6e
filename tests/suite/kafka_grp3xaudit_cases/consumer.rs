//! `ConsumerGroupTest` (`group-coordinator/.../modern/consumer/`, 2026-08 trunk): the state a
//! consumer group is in after its records are replayed, its members, subscriptions, regular
//! expressions and its deletion's tombstones.

use super::{G, coord, kafka_state, loaded};
use crate::kafka_groupaudit_cases::{
    BAR_ID, Coord, FOO_ID, current, g, gm, group_epoch, member, target, target_epoch, tombstone,
};
use klogscan::finding::Kind;
use klogscan::testkit::group_scenarios::Spec;
use serde_json::json;

/// `MemberState` (modern consumer groups): STABLE 0, UNREVOKED_PARTITIONS 1.
const STABLE: i8 = 0;
const UNREVOKED: i8 = 1;

/// Member metadata (type 5) of `m` with its own subscription and static instance id.
fn member_with(m: &str, topics: &[&str], instance: Option<&str>) -> Spec {
    (
        5,
        gm(G, m),
        Some((
            0,
            json!({"rackId": null, "instanceId": instance, "clientId": "c", "clientHost": "h",
                   "subscribedTopicNames": topics, "serverAssignor": "range", "rebalanceTimeoutMs": 5000}),
        )),
    )
}

/// A member's departure (`GroupMetadataManager.removeMember`): current assignment, target
/// assignment, then member tombstones.
fn leave(m: &str) -> Vec<Spec> {
    vec![
        tombstone(8, gm(G, m)),
        tombstone(7, gm(G, m)),
        tombstone(5, gm(G, m)),
    ]
}

/// `testGroupState`: the test's steps as records — member1 at epoch 2 and the group at 2
/// (Assigning), member2 and the group at 3 (Assigning), the target assignment at 3
/// (Reconciling), member1 at 3 (Reconciling), member2 at 3 but revoking (Reconciling),
/// member2 stable (Stable), both members gone (Empty). After each step the group klogscan
/// loads holds the epochs, member epochs and states that give Kafka's state. The states
/// flip along the way (each one the near miss of the next).
#[test]
fn group_state_after_each_record() {
    let mut recs = vec![
        member(G, "member1"),
        current(G, "member1", 2, 0, STABLE, &[]),
        group_epoch(G, 2),
    ];
    let mut seen = Vec::new();
    let mut step = |recs: &[Spec]| {
        let l = coord(recs).load();
        l.assert_no_group_finding();
        let g = l.group(G);
        let epochs: Vec<i32> = g.members.values().map(|m| m.member_epoch).collect();
        seen.push((kafka_state(g, STABLE), g.epoch, g.assignment_epoch, epochs));
    };
    step(&recs);
    recs.extend([
        member(G, "member2"),
        current(G, "member2", 2, 0, STABLE, &[]),
        group_epoch(G, 3),
    ]);
    step(&recs);
    recs.push(target_epoch(G, 3));
    step(&recs);
    recs.push(current(G, "member1", 3, 2, STABLE, &[]));
    step(&recs);
    recs.push(current(G, "member2", 3, 2, UNREVOKED, &[]));
    step(&recs);
    recs.push(current(G, "member2", 3, 2, STABLE, &[]));
    step(&recs);
    recs.extend(leave("member1"));
    recs.extend(leave("member2"));
    step(&recs);
    assert_eq!(
        seen,
        [
            ("Assigning", 2, 0, vec![2]),
            ("Assigning", 3, 0, vec![2, 2]),
            ("Reconciling", 3, 3, vec![2, 2]),
            ("Reconciling", 3, 3, vec![3, 2]),
            ("Reconciling", 3, 3, vec![3, 3]),
            ("Stable", 3, 3, vec![3, 3]),
            ("Empty", 3, 3, vec![]),
        ]
    );
}

/// The records of a group of three members (member3 subscribed by the regular expression
/// `foo*`, resolved), each with a target assignment, at epoch 10.
fn three_members() -> Vec<Spec> {
    let regex = (
        16,
        json!({"groupId": G, "regularExpression": "foo*"}),
        Some((
            0,
            json!({"topics": ["foo", "fooo"], "version": 10, "timestamp": 12345}),
        )),
    );
    let mut recs = vec![
        member_with("member1", &["foo", "bar", "zar"], None),
        member_with("member2", &["foo", "bar"], None),
        member_with("member3", &[], Some("instance3")),
        regex,
        group_epoch(G, 10),
    ];
    for (m, t) in [
        ("member1", FOO_ID),
        ("member2", BAR_ID),
        ("member3", FOO_ID),
    ] {
        let p: &[i32] = if m == "member3" { &[3] } else { &[0, 1, 2] };
        recs.push(target(G, m, &[(t, p)]));
    }
    recs.push(target_epoch(G, 10));
    for (m, t) in [
        ("member1", FOO_ID),
        ("member2", BAR_ID),
        ("member3", FOO_ID),
    ] {
        let p: &[i32] = if m == "member3" { &[3] } else { &[0, 1, 2] };
        recs.push(current(G, m, 10, 9, STABLE, &[(t, p)]));
    }
    recs
}

/// `ConsumerGroup.createGroupTombstoneRecords(WithReplacedMember)`'s order for `members`:
/// current assignments, target assignments, target metadata, members, the regular
/// expression, the subscription metadata, the group epoch.
fn group_tombstones(members: &[&str]) -> Vec<Spec> {
    let mut t: Vec<Spec> = members.iter().map(|m| tombstone(8, gm(G, m))).collect();
    t.extend(members.iter().map(|m| tombstone(7, gm(G, m))));
    t.push(tombstone(6, g(G)));
    t.extend(members.iter().map(|m| tombstone(5, gm(G, m))));
    t.push(tombstone(
        16,
        json!({"groupId": G, "regularExpression": "foo*"}),
    ));
    t.push(tombstone(4, g(G)));
    t.push(tombstone(3, g(G)));
    t
}

/// `testCreateGroupTombstoneRecords`: the group's records, then its tombstones in that
/// order: the load removes the group (deleted, no member, no regular expression), no group
/// finding. Before them the group is Stable with its three members' subscriptions and the
/// resolved expression (`testComputeSubscribedTopicNames`, `testComputeSubscribedRegularExpressions`).
/// Near miss: member3's member tombstone missing: the group's tombstone finds a member left
/// and the load throws (`group_tombstones_incomplete`, load fails).
#[test]
fn group_tombstone_records_delete_the_group() {
    let live = coord(&three_members()).load();
    live.assert_no_group_finding();
    let g0 = live.group(G);
    assert_eq!(kafka_state(g0, STABLE), "Stable");
    let subs: Vec<Vec<String>> = g0
        .members
        .values()
        .map(|m| m.subscribed_topics.clone())
        .collect();
    assert_eq!(
        subs,
        [vec!["foo", "bar", "zar"], vec!["foo", "bar"], vec![]]
    );
    assert_eq!(g0.regular_expressions["foo*"], ["foo", "fooo"]);

    let mut recs = three_members();
    recs.extend(group_tombstones(&["member1", "member2", "member3"]));
    let l = coord(&recs).load();
    l.assert_no_group_finding();
    assert!(l.live(G).is_none());
    let d = l.deleted(G).expect("deleted");
    assert!(
        d.members.is_empty() && d.regular_expressions.is_empty(),
        "{d:#?}"
    );

    let mut recs = three_members();
    let mut t = group_tombstones(&["member1", "member2", "member3"]);
    t.retain(|(ty, k, _)| !(*ty == 5 && k["memberId"] == "member3"));
    recs.extend(t);
    let l = coord(&recs).load();
    l.assert_reported(Kind::GroupTombstonesIncomplete, G);
}

/// `testCreateGroupTombstoneRecordsWithReplacedMember` (the downgrade to a classic group when
/// a static member, member4 with member3's instance id, replaces member3:
/// `GroupMetadataManager.convertToClassicGroup`): member3's records are replaced first
/// (its tombstones, member4's records), then the group's tombstones name member4 in
/// member3's place. The load removes the consumer group, no group finding
/// (`testGetStaticMemberByInstanceId`, `testRemoveStaticMember`: member4 holds instance3
/// until then). Near miss: tombstones naming member3 (as without the replacement) leave
/// member4 live and the group's tombstone throws.
#[test]
fn group_tombstones_with_a_replaced_static_member() {
    let mut recs = three_members();
    recs.extend(leave("member3"));
    recs.extend([
        member_with("member4", &[], Some("instance3")),
        target(G, "member4", &[(FOO_ID, &[3])]),
        current(G, "member4", 10, 9, STABLE, &[(FOO_ID, &[3])]),
    ]);
    let l = coord(&recs).load();
    l.assert_no_group_finding();
    let g0 = l.group(G);
    let ids: Vec<(&str, Option<&str>)> = (g0.members.values())
        .map(|m| (m.member_id.as_str(), m.instance_id.as_deref()))
        .collect();
    assert_eq!(
        ids,
        [
            ("member1", None),
            ("member2", None),
            ("member4", Some("instance3"))
        ]
    );
    assert_eq!(kafka_state(g0, STABLE), "Stable");

    let mut replaced = recs.clone();
    replaced.extend(group_tombstones(&["member1", "member2", "member4"]));
    let l = coord(&replaced).load();
    l.assert_no_group_finding();
    assert!(l.live(G).is_none() && l.deleted(G).is_some());

    let mut naive = recs;
    naive.extend(group_tombstones(&["member1", "member2", "member3"]));
    coord(&naive)
        .load()
        .assert_reported(Kind::GroupTombstonesIncomplete, G);
}

/// A third topic id.
const ZAR_ID: &str = "AAAAAAAAAAAAAAAAAAAAAw";
/// `MemberState.UNRELEASED_PARTITIONS`.
const UNRELEASED: i8 = 2;

/// Current assignment (type 8) of `m` with partitions pending revocation.
fn holding(
    m: &str,
    (epoch, state): (i32, i8),
    assigned: &[(&str, &[i32])],
    pending: &[(&str, &[i32])],
) -> Spec {
    use crate::kafka_groupaudit_cases::parts;
    (
        8,
        gm(G, m),
        Some((
            0,
            json!({"memberEpoch": epoch, "previousMemberEpoch": epoch - 1, "state": state,
                   "assignedPartitions": parts(assigned), "partitionsPendingRevocation": parts(pending)}),
        )),
    )
}

/// The group-load failures (offset, `load_fails_in`) of `scan`.
fn failures(c: &Coord) -> Vec<(Option<i64>, serde_json::Value)> {
    let l = c.load();
    let [(_, scan), ..] = l.reports();
    (scan.iter())
        .filter(|f| f.kind == Kind::GroupLoadFailure)
        .map(|f| {
            (
                f.offset,
                f.evidence
                    .get("load_fails_in")
                    .cloned()
                    .unwrap_or(json!(null)),
            )
        })
        .collect()
}

/// `testUpdatingMemberUpdatesPartitionEpoch` and `testRemovePartitionEpochs`: member A holds
/// foo-1..3 and revokes bar-4..6 at epoch 10, then holds bar-1..3 and revokes zar-4..6 at
/// epoch 11 (its update replaces its own partitions: no clash); member B at epoch 11 then
/// takes foo-1, which A's update released: the load goes on, no finding. Near miss: B at 11
/// takes zar-4, which A still revokes at 11: every release's load throws (`kafka_4`).
#[test]
fn a_members_update_moves_its_partition_epochs() {
    let recs = |b_takes: (&'static str, i32)| {
        vec![
            member(G, "A"),
            member(G, "B"),
            holding(
                "A",
                (10, STABLE),
                &[(FOO_ID, &[1, 2, 3])],
                &[(BAR_ID, &[4, 5, 6])],
            ),
            holding(
                "A",
                (11, UNREVOKED),
                &[(BAR_ID, &[1, 2, 3])],
                &[(ZAR_ID, &[4, 5, 6])],
            ),
            holding("B", (11, STABLE), &[(b_takes.0, &[b_takes.1])], &[]),
        ]
    };
    assert_eq!(failures(&coord(&recs((FOO_ID, 1)))), []);
    assert_eq!(
        failures(&coord(&recs((ZAR_ID, 4)))),
        [(Some(4), json!("kafka_4"))]
    );
}

/// `testWaitingOnUnreleasedPartition`: member1's target holds zar-7, which member2 still
/// revokes; member1 waits (UNRELEASED_PARTITIONS, zar-7 not in its current assignment): the
/// load goes on, the group is Reconciling. Near miss: member1's current assignment claims
/// zar-7 at member2's epoch: the load throws (`kafka_4`).
#[test]
fn a_member_waiting_on_an_unreleased_partition() {
    let recs = |claims: bool| {
        let mine: Vec<(&str, &[i32])> = match claims {
            true => vec![(FOO_ID, &[1, 2, 3]), (ZAR_ID, &[7])],
            false => vec![(FOO_ID, &[1, 2, 3])],
        };
        vec![
            member(G, "member1"),
            member(G, "member2"),
            group_epoch(G, 10),
            target(G, "member1", &[(FOO_ID, &[1, 2, 3]), (ZAR_ID, &[7, 8, 9])]),
            target_epoch(G, 10),
            holding("member2", (10, UNREVOKED), &[], &[(ZAR_ID, &[7])]),
            holding("member1", (10, UNRELEASED), &mine, &[(BAR_ID, &[4, 5, 6])]),
        ]
    };
    let l = coord(&recs(false)).load();
    l.assert_no_group_finding();
    assert_eq!(kafka_state(l.group(G), STABLE), "Reconciling");
    assert_eq!(failures(&coord(&recs(true))), [(Some(6), json!("kafka_4"))]);
}

/// A resolved regular expression (type 16) of the group, or its tombstone.
fn regex(re: &str, topics: Option<&[&str]>) -> Spec {
    let k = json!({"groupId": G, "regularExpression": re});
    let v = topics.map(|t| (0, json!({"topics": t, "version": 10, "timestamp": 12345})));
    (16, k, v)
}

/// `testUpdateAndRemoveRegularExpression`, `testSubscribedRegularExpressionCount`,
/// `testComputeSubscribedTopicNamesWithoutDeletedMembers`: members subscribed to
/// foo/bar/zar and foo/bar, then the resolved expression `foo|bar` (the group holds it and
/// its topics), its tombstone (gone), member2's departure (its subscription gone with it).
/// Each step flips what the previous one showed.
#[test]
fn regular_expressions_and_subscriptions_added_and_removed() {
    let mut recs = vec![
        member_with("member1", &["foo", "bar", "zar"], None),
        member_with("member2", &["foo", "bar"], None),
        group_epoch(G, 1),
    ];
    let shown = |recs: &[Spec]| {
        let l = coord(recs).load();
        l.assert_no_group_finding();
        let g = l.group(G);
        let subs: Vec<(String, Vec<String>)> = (g.members.values())
            .map(|m| (m.member_id.clone(), m.subscribed_topics.clone()))
            .collect();
        (subs, g.regular_expressions.clone())
    };
    let (subs, re) = shown(&recs);
    assert_eq!(subs.len(), 2);
    assert!(re.is_empty());
    recs.push(regex("foo|bar", Some(&["foo", "bar"])));
    let (_, re) = shown(&recs);
    assert_eq!(re.get("foo|bar").map(Vec::len), Some(2), "{re:?}");
    recs.push(regex("foo|bar", None));
    let (_, re) = shown(&recs);
    assert!(re.is_empty(), "{re:?}");
    recs.extend(leave("member2"));
    let (subs, _) = shown(&recs);
    assert_eq!(
        subs,
        [(
            "member1".to_string(),
            vec!["foo".to_string(), "bar".into(), "zar".into()]
        )]
    );
}

/// `testGetOrCreateMember`, `testUpdateMember`, `testNoStaticMember`,
/// `testGetStaticMemberByInstanceId`, `testRemoveMember`, `testRemoveStaticMember`: a dynamic
/// member and a static one (instance id `instance`) are listed with their instance ids; an
/// update keeps the member and replaces its subscription; the static member's departure
/// removes it and its instance id.
#[test]
fn dynamic_and_static_members() {
    let mut recs = vec![
        member_with("member", &["foo"], None),
        member_with("static", &["foo", "bar"], Some("instance")),
        member_with("member", &["bar"], None),
        group_epoch(G, 1),
    ];
    let members = |recs: &[Spec]| -> Vec<(String, Option<String>, Vec<String>)> {
        (loaded(recs).members.values())
            .map(|m| {
                (
                    m.member_id.clone(),
                    m.instance_id.clone(),
                    m.subscribed_topics.clone(),
                )
            })
            .collect()
    };
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    assert_eq!(
        members(&recs),
        [
            ("member".into(), None, s(&["bar"])),
            ("static".into(), Some("instance".into()), s(&["foo", "bar"])),
        ]
    );
    recs.extend(leave("static"));
    assert_eq!(members(&recs), [("member".into(), None, s(&["bar"]))]);
}

/// `testGroupTypeFromString`: a group type parses whatever its case (`groups --type`);
/// Kafka's `UNKNOWN` for anything else is klogscan's refusal.
#[test]
fn group_type_from_string() {
    use klogscan::partition::groups::GroupType;
    assert_eq!(GroupType::parse("classic"), Some(GroupType::Classic));
    assert_eq!(GroupType::parse("Consumer"), Some(GroupType::Consumer));
    assert_eq!(GroupType::parse("Invalid"), None);
}

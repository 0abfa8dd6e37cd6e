//! `DescribeConsumerGroupTest` (and `ConsumerGroupServiceTest`'s describe): what
//! `--describe` prints of groups whose records the coordinator holds.

use super::*;
use crate::kafka_groupaudit_cases::commit;

/// foo-0: 12 records, of which 10 are below the checkpointed high watermark.
fn foo_0() -> Broker {
    let mut c = Coord::new();
    // A classic group of one member (range assignor) that read everything below the high
    // watermark, and a KIP-848 consumer group of one member that read 6.
    c.batch("g1", vec![classic_group("g1", 1, "range", &[("m1", &[0])])]);
    c.batch("g1", vec![commit("g1", "foo", 0, 10)]);
    c.batch("g2", consumer_group("g2", "m2", 1, &[0]));
    c.batch("g2", vec![commit("g2", "foo", 0, 6)]);
    Broker::write(vec![data("foo", 0, 12)], &[("foo", 0, 10)], &c)
}

/// `DescribeConsumerGroupTest.testDescribeExistingGroup`, `testDescribeExistingGroups`,
/// `testDescribeAllExistingGroups`, `testDescribeMembersOfExistingGroup`,
/// `testDescribeStateOfExistingGroup` (both protocols): each group's committed partition is
/// one row whose LOG-END-OFFSET is what `ListOffsets` answers for the latest offset under
/// the admin's default `READ_UNCOMMITTED` — the high watermark, not the log end — and LAG
/// that minus the commit; `--group` selects one group, no `--group` (all
/// groups) both; the state shows one member holding the partition, the classic group's
/// assignor (`range`), the consumer group's epoch. Near miss: with the high watermark
/// checkpointed at the log end (12) the same commits lag by 2 more.
#[test]
fn a_stable_groups_rows_lag_behind_the_high_watermark() {
    let b = foo_0();
    let all = b.consumers(&[]);
    assert_eq!(
        describe(&all, "g1"),
        [row("foo", 0, Some(10), Some(10), Some(0))]
    );
    assert_eq!(
        describe(&all, "g2"),
        [row("foo", 0, Some(6), Some(10), Some(4))]
    );
    assert!(kinds(&all).is_empty(), "{all:#}");
    let one = b.consumers(&["--group", "g2"]);
    assert_eq!(rows(&one).len(), 1);
    assert_eq!(
        describe(&one, "g2"),
        [row("foo", 0, Some(6), Some(10), Some(4))]
    );
    let groups = b.groups(&[]);
    let g1 = group(&groups, "g1").unwrap();
    assert_eq!(
        (
            g1["type"].as_str(),
            g1["protocol"].as_str(),
            g1["simple"].as_bool()
        ),
        (Some("classic"), Some("range"), Some(false))
    );
    assert_eq!(members(g1), [("m1".to_string(), vec!["foo-0".to_string()])]);
    // Stable (`ConsumerGroup.updateState`): the target assignment at the group's epoch, its
    // one member reconciled at it.
    let g2 = group(&groups, "g2").unwrap();
    assert_eq!(
        (
            g2["type"].as_str(),
            g2["epoch"].as_i64(),
            g2["assignment_epoch"].as_i64()
        ),
        (Some("consumer"), Some(1), Some(1))
    );
    assert_eq!(g2["members"]["m2"]["member_epoch"], 1);
    assert_eq!(
        members(g2),
        [("m2".to_string(), vec![format!("{FOO_ID}:0")])]
    );

    // Near miss: the high watermark at the log end.
    let mut c = Coord::new();
    c.batch("g1", vec![classic_group("g1", 1, "range", &[("m1", &[0])])]);
    c.batch("g1", vec![commit("g1", "foo", 0, 10)]);
    c.batch("g2", consumer_group("g2", "m2", 1, &[0]));
    c.batch("g2", vec![commit("g2", "foo", 0, 6)]);
    let b = Broker::write(vec![data("foo", 0, 12)], &[("foo", 0, 12)], &c);
    let all = b.consumers(&[]);
    assert_eq!(
        describe(&all, "g1"),
        [row("foo", 0, Some(10), Some(12), Some(2))]
    );
    assert_eq!(
        describe(&all, "g2"),
        [row("foo", 0, Some(6), Some(12), Some(6))]
    );
}

/// `DescribeConsumerGroupTest.testDescribeExistingGroupWithNoMembers`,
/// `testDescribeOffsetsOfExistingGroupWithNoMembers`,
/// `testDescribeMembersOfExistingGroupWithNoMembers`,
/// `testDescribeStateOfExistingGroupWithNoMembers`: once the only consumer closed, the
/// classic group is stored again without members (generation 2, no protocol: Empty) and
/// the KIP-848 group's member is tombstoned (current assignment, target, member; the epoch
/// bumped); the describe still prints the committed row with its lag (no consumer), and
/// no member. Near miss: before the consumer closed, one member each.
#[test]
fn a_group_whose_consumer_closed_keeps_its_rows_without_members() {
    let build = |closed: bool| {
        let mut c = Coord::new();
        c.batch("g1", vec![classic_group("g1", 1, "range", &[("m1", &[0])])]);
        c.batch("g1", vec![commit("g1", "foo", 0, 10)]);
        c.batch("g2", consumer_group("g2", "m2", 1, &[0]));
        c.batch("g2", vec![commit("g2", "foo", 0, 10)]);
        if closed {
            c.batch("g1", vec![classic_group("g1", 2, "range", &[])]);
            c.batch(
                "g2",
                vec![
                    (8, gm("g2", "m2"), None),
                    (7, gm("g2", "m2"), None),
                    (5, gm("g2", "m2"), None),
                    group_epoch("g2", 2),
                    target_epoch("g2", 2),
                ],
            );
        }
        Broker::write(vec![data("foo", 0, 10)], &[("foo", 0, 10)], &c)
    };
    for closed in [true, false] {
        let b = build(closed);
        let v = b.consumers(&[]);
        for id in ["g1", "g2"] {
            assert_eq!(
                describe(&v, id),
                [row("foo", 0, Some(10), Some(10), Some(0))],
                "{id} closed: {closed}"
            );
        }
        let groups = b.groups(&[]);
        for id in ["g1", "g2"] {
            let g = group(&groups, id).unwrap();
            assert_eq!(members(g).len(), usize::from(!closed), "{id}: {g:#}");
            assert_eq!(g["state"], "live");
            assert_eq!(g["simple"], false, "{id}");
            assert_eq!(g["epoch"], if closed { 2 } else { 1 }, "{id}");
        }
        assert_eq!(
            group(&groups, "g1").unwrap()["protocol"].as_str(),
            (!closed).then_some("range")
        );
    }
}

/// `DescribeConsumerGroupTest.testDescribeWithConsumersWithoutAssignedPartitions` (and its
/// `Offsets`, `Members`, `State` variants) and
/// `testDescribeWithMultiPartitionTopicAndMultipleConsumers` (and its variants), each the
/// other's near miss: two consumers of a one-partition topic — one member holds foo-0, the
/// other nothing, one committed row; two consumers of a two-partition topic — one
/// partition each, two committed rows.
#[test]
fn two_members_with_one_or_two_partitions() {
    for two_partitions in [false, true] {
        let mut c = Coord::new();
        let m2: &[i32] = if two_partitions { &[1] } else { &[] };
        c.batch(
            "g",
            vec![classic_group("g", 1, "range", &[("m1", &[0]), ("m2", m2)])],
        );
        let mut commits = vec![commit("g", "foo", 0, 10)];
        let mut parts = vec![data("foo", 0, 10)];
        let mut hw = vec![("foo", 0, 10)];
        if two_partitions {
            commits.push(commit("g", "foo", 1, 3));
            parts.push(data("foo", 1, 5));
            hw.push(("foo", 1, 5));
        }
        c.batch("g", commits);
        let b = Broker::write(parts, &hw, &c);
        let v = b.consumers(&[]);
        let mut want = vec![row("foo", 0, Some(10), Some(10), Some(0))];
        if two_partitions {
            want.push(row("foo", 1, Some(3), Some(5), Some(2)));
        }
        assert_eq!(describe(&v, "g"), want);
        let groups = b.groups(&[]);
        let m2_holds: Vec<String> = m2.iter().map(|p| format!("foo-{p}")).collect();
        assert_eq!(
            members(group(&groups, "g").unwrap()),
            [
                ("m1".to_string(), vec!["foo-0".to_string()]),
                ("m2".to_string(), m2_holds)
            ]
        );
    }
}

/// `DescribeConsumerGroupTest.testDescribeSimpleConsumerGroup`: a consumer that assigns
/// itself foo-0 and foo-1 and commits leaves only offset commits, which make a *simple*
/// classic group (no protocol type, no member: `ClassicGroup.isSimpleGroup`, state Empty);
/// the describe prints both partitions. Near miss: the same commits of a group that
/// subscribed (a group record with a member) are not a simple group.
#[test]
fn a_simple_groups_commits_are_described() {
    for subscribed in [false, true] {
        let mut c = Coord::new();
        if subscribed {
            c.batch(
                "g",
                vec![classic_group("g", 1, "range", &[("m1", &[0, 1])])],
            );
        }
        c.batch(
            "g",
            vec![commit("g", "foo", 0, 4), commit("g", "foo", 1, 5)],
        );
        let b = Broker::write(
            vec![data("foo", 0, 10), data("foo", 1, 5)],
            &[("foo", 0, 10), ("foo", 1, 5)],
            &c,
        );
        assert_eq!(
            describe(&b.consumers(&[]), "g"),
            [
                row("foo", 0, Some(4), Some(10), Some(6)),
                row("foo", 1, Some(5), Some(5), Some(0))
            ]
        );
        let groups = b.groups(&[]);
        let g = group(&groups, "g").unwrap();
        assert_eq!(g["type"], "classic");
        assert_eq!(g["simple"], !subscribed);
        assert_eq!(members(g).len(), usize::from(subscribed));
    }
}

/// `DescribeConsumerGroupTest.testDescribeNonOffsetCommitGroup` (both protocols): a
/// consumer with `enable.auto.commit=false` that never commits leaves the group's records
/// (its member holding foo-0) and no offset commit: the tool's row has no CURRENT-OFFSET and no LAG.
/// klogscan's `consumers` lists committed offsets only, so the group has no row there (its
/// summary counts no commit), and `groups` shows the member and its partition. Near miss:
/// one commit gives the row.
#[test]
fn a_group_that_never_committed_has_no_committed_row() {
    for (classic, committed) in [(true, false), (true, true), (false, false), (false, true)] {
        let mut c = Coord::new();
        match classic {
            true => c.batch("g", vec![classic_group("g", 1, "range", &[("m1", &[0])])]),
            false => c.batch("g", consumer_group("g", "m1", 1, &[0])),
        };
        if committed {
            c.batch("g", vec![commit("g", "foo", 0, 7)]);
        }
        let b = Broker::write(vec![data("foo", 0, 10)], &[("foo", 0, 10)], &c);
        let v = b.consumers(&[]);
        let want = match committed {
            true => vec![row("foo", 0, Some(7), Some(10), Some(3))],
            false => vec![],
        };
        assert_eq!(describe(&v, "g"), want);
        let summary = v["consumers"]["groups"]
            .as_array()
            .unwrap()
            .iter()
            .find(|g| g["group_id"] == "g")
            .unwrap_or_else(|| panic!("{v:#}"));
        assert_eq!(summary["commits"], usize::from(committed));
        let groups = b.groups(&[]);
        let foo_0 = if classic {
            "foo-0".to_string()
        } else {
            format!("{FOO_ID}:0")
        };
        assert_eq!(
            members(group(&groups, "g").unwrap()),
            [("m1".to_string(), vec![foo_0])]
        );
    }
}

/// `DescribeConsumerGroupTest.testDescribeNonExistingGroup`,
/// `testDescribeOffsetsOfNonExistingGroup`, `testDescribeMembersOfNonExistingGroup`,
/// `testDescribeStateOfNonExistingGroup`: a group id the coordinator holds no record of is
/// Dead with nothing to print, beside a group that exists. Near miss: the existing id.
#[test]
fn a_group_without_records_is_not_described() {
    let b = foo_0();
    let v = b.consumers(&["--group", "missing.group"]);
    assert!(rows(&v).is_empty(), "{v:#}");
    assert_eq!(v["consumers"]["groups"], json!([]));
    assert_eq!(b.groups(&["--group", "missing.group"])["groups"], json!([]));
    assert_eq!(rows(&b.consumers(&["--group", "g1"])).len(), 1);
    assert!(group(&b.groups(&["--group", "g1"]), "g1").is_some());
}

/// `DescribeConsumerGroupTest.testDescribeStateOfExistingGroupWithNonDefaultAssignor`
/// (classic protocol): the state's ASSIGNMENT-STRATEGY is the protocol the classic group
/// record stores, `roundrobin` for a group of `RoundRobinAssignor` consumers. Near miss:
/// the default `range`. (The consumer protocol's server assignor is a member field klogscan
/// does not list.)
#[test]
fn the_classic_groups_assignor_is_its_protocol() {
    for assignor in ["roundrobin", "range"] {
        let mut c = Coord::new();
        c.batch("g", vec![classic_group("g", 1, assignor, &[("m1", &[0])])]);
        let b = Broker::write(vec![data("foo", 0, 10)], &[("foo", 0, 10)], &c);
        let groups = b.groups(&[]);
        assert_eq!(group(&groups, "g").unwrap()["protocol"], assignor);
    }
}

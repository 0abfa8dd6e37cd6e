//! A share group's records for a group or member the load does not hold yet: what Kafka
//! 4.0's load throws on and 4.1+ accepts (KAFKA-19453, apache/kafka PRs #20076 and #20100,
//! July 2025, in 4.1.0 and later; `GroupMetadataManagerTest.
//! testShareGroupRecordsNoExceptionOnReplay`). In 4.0.x the share replays of
//! `GroupMetadataManager` ask `getOrMaybeCreatePersistedShareGroup` for the group without
//! creating it (every tombstone; target and current assignment values too) and
//! `ShareGroup.getOrMaybeCreateMember` for the member (current assignment, member
//! tombstone), and catch neither exception. The cleaner makes such logs: the values before
//! a member's or a group's tombstones go at its first pass, the tombstones only past
//! `delete.retention.ms`. klogscan reports the 4.0 failure (`load_fails_in:
//! kafka_4_before_kafka_19453`) and rebuilds the groups as 4.1+ does. A share record under
//! a group of another type fails every 4.x release (4.0: `GroupIdNotFoundException`, which
//! its replays do not catch; 4.1+: `IllegalStateException`, which KAFKA-19453's catch lets
//! through). Facts read at the 4.0.0–4.0.2 and 4.1.0, 4.1.1, 4.2.0, 4.3.0, 4.3.1 release
//! commits and trunk of August 2026.

use super::*;

const SG: &str = "share-app";

pub(crate) fn share_member(group: &str, m: &str) -> Spec {
    (
        10,
        gm(group, m),
        Some((
            0,
            json!({"clientId": "c", "clientHost": "/h", "subscribedTopicNames": ["foo"]}),
        )),
    )
}

/// Share group metadata (type 11): the group epoch.
pub(crate) fn share_epoch(group: &str, epoch: i32) -> Spec {
    (
        11,
        g(group),
        Some((0, json!({"epoch": epoch, "metadataHash": 7}))),
    )
}

fn share_target(group: &str, m: &str, p: &[i32]) -> Spec {
    (
        13,
        gm(group, m),
        Some((0, json!({"topicPartitions": parts(&[(FOO_ID, p)])}))),
    )
}

fn share_target_epoch(group: &str, epoch: i32) -> Spec {
    (12, g(group), Some((0, json!({"assignmentEpoch": epoch}))))
}

fn share_current(group: &str, m: &str, epoch: i32, prev: i32, p: &[i32]) -> Spec {
    (
        14,
        gm(group, m),
        Some((
            0,
            json!({"memberEpoch": epoch, "previousMemberEpoch": prev, "state": 0,
                   "assignedPartitions": parts(&[(FOO_ID, p)])}),
        )),
    )
}

/// Share group state partition metadata (type 15), which only 4.1+ coordinators write.
fn share_state(group: &str) -> Spec {
    (
        15,
        g(group),
        Some((
            0,
            json!({"initializingTopics": [], "deletingTopics": [],
                   "initializedTopics": [{"topicId": FOO_ID, "topicName": "foo", "partitions": [0, 1]}]}),
        )),
    )
}

/// A member's departure as the 4.0 coordinator writes it: current assignment, target
/// assignment and member metadata tombstones.
fn share_leave(group: &str, m: &str) -> Vec<Spec> {
    vec![
        tombstone(14, gm(group, m)),
        tombstone(13, gm(group, m)),
        tombstone(10, gm(group, m)),
    ]
}

/// `c` after the cleaner's first pass: only the last record of each key, tombstones kept.
fn cleaned(c: &Coord) -> Coord {
    Coord {
        logs: (c.logs.iter())
            .map(|(n, log)| (*n, log.compacted(false)))
            .collect(),
    }
}

/// The `group_load_failure` of `scan` and `merge` (one each), which must be there.
fn load_failures(l: &Loaded) -> Vec<(&'static str, Finding)> {
    let mut out = Vec::new();
    for (name, fs) in l.reports() {
        if name == "verify" {
            continue;
        }
        let f: Vec<&Finding> = (fs.into_iter())
            .filter(|f| f.kind == Kind::GroupLoadFailure)
            .collect();
        assert_eq!(f.len(), 1, "{name}: {:#?}", lines(f));
        out.push((name, f[0].clone()));
    }
    out
}

/// The 4.0-only failure at `offset`, with `kafka_message`, and `rejected` records the
/// 4.0 load would throw on in all.
fn assert_fails_before_19453(l: &Loaded, offset: i64, kafka_message: &str, rejected: u64) {
    for (name, f) in load_failures(l) {
        let e = &f.evidence;
        assert_eq!(f.offset, Some(offset), "{name}: {f:#?}");
        assert_eq!(e["load_fails_in"], "kafka_4_before_kafka_19453", "{name}");
        assert_eq!(e["kafka_message"], kafka_message, "{name}");
        assert_eq!(e["rejected_records"], rejected, "{name}");
        assert_eq!(e["group_type"], "share", "{name}");
        assert!(f.message.contains("KAFKA-19453"), "{name}: {}", f.message);
    }
}

/// A single-instance share consumer restarted: member `s1` leaves (its three tombstones,
/// the group's new epochs) and `s2` joins (new epochs again). After the cleaner's first
/// pass the group's surviving records start with `s1`'s current assignment tombstone (its
/// values and the epochs written before it were all superseded): 4.0's load throws there
/// ("Share group … not found.", and again at the two tombstones after it); 4.1+ ignores
/// the three and loads `s2`'s group. Near misses: the same log before the cleaner — `s1`'s
/// values come first — loads in every release; the cleaned log with the share group state
/// partition metadata a 4.1+ coordinator writes once the group's partitions are
/// initialized is a 4.1+ coordinator's copy (4.0 writes no such record and cannot replay
/// one): nothing to report.
#[test]
fn a_departed_share_member_cleaned_to_its_tombstones_fails_kafka_4_0_only() {
    let c = restarted_consumer();
    let check = |l: &Loaded| {
        let g = l.group(SG);
        assert_eq!((g.group_type, g.epoch), (GroupType::Share, 3));
        assert_eq!(g.members.keys().collect::<Vec<_>>(), ["s2"]);
    };

    let l = cleaned(&c).load();
    assert_fails_before_19453(&l, 5, &format!("Share group {SG} not found."), 3);
    check(&l);

    let l = c.load();
    l.assert_no_group_finding();
    l.assert_no_alarm();
    check(&l);

    let mut written_by_4_1 = c.clone();
    written_by_4_1.batch(SG, vec![share_state(SG)]);
    let l = cleaned(&written_by_4_1).load();
    l.assert_no_group_finding();
    l.assert_no_alarm();
    check(&l);
}

/// The share group of [`a_departed_share_member_cleaned_to_its_tombstones_fails_kafka_4_0_only`]:
/// `s1` leaves, `s2` joins.
fn restarted_consumer() -> Coord {
    let mut c = Coord::new();
    c.batch(
        SG,
        vec![
            share_member(SG, "s1"),
            share_epoch(SG, 1),
            share_target(SG, "s1", &[0, 1]),
            share_target_epoch(SG, 1),
            share_current(SG, "s1", 1, 0, &[0, 1]),
        ],
    );
    let mut leave = share_leave(SG, "s1");
    leave.extend([share_epoch(SG, 2), share_target_epoch(SG, 2)]);
    c.batch(SG, leave);
    c.batch(
        SG,
        vec![
            share_member(SG, "s2"),
            share_epoch(SG, 3),
            share_target(SG, "s2", &[0, 1]),
            share_target_epoch(SG, 3),
            share_current(SG, "s2", 3, 0, &[0, 1]),
        ],
    );
    c
}

/// The cleaned log of the first case in a KRaft cluster whose metadata log finalizes
/// `metadata.version` 4.1-IV0 (level 26): no 4.0 broker joins such a cluster
/// (`ClusterControlManager.registerBroker` refuses a broker that does not support the
/// finalized level), so no load throws and nothing is reported; 4.1+ loads `s2`'s group.
/// Near miss: the same log at 4.0-IV3 (level 25), which 4.0 and 4.1 brokers alike may run:
/// the 4.0 failure stays.
#[test]
fn a_cluster_at_metadata_version_4_1_meets_no_kafka_4_0_share_failure() {
    use crate::kafka_quiet_cluster_cases::kraft::metadata_version;
    use crate::kafka_quiet_kraft_cases::{Step, copy, data};
    let c = restarted_consumer();
    let at = |level: i16| {
        let steps = vec![
            Step::Elect {
                leader: 3000,
                voters: vec![3000],
                granting: vec![3000],
            },
            data(vec![metadata_version(level)]),
        ];
        cleaned(&c).load_with(Some(copy(&steps, 0)))
    };

    let l = at(26);
    l.assert_no_group_finding();
    assert_eq!(l.group(SG).members.keys().collect::<Vec<_>>(), ["s2"]);

    let l = at(25);
    assert_fails_before_19453(&l, 5, &format!("Share group {SG} not found."), 3);
}

/// Two members, `s1` leaves: `s2`'s member metadata value (never rewritten) keeps the group
/// before `s1`'s tombstones once the cleaner has run, but `s1` itself is gone: 4.0's load
/// throws at its current assignment tombstone ("Member s1 is not a member of group …") and
/// at its member tombstone, not at its target assignment tombstone (that replay asks for
/// the group alone): two rejected records. 4.1+ ignores them. Near miss: the log before the
/// cleaner, where `s1`'s values come before its tombstones.
#[test]
fn a_departed_member_of_a_cleaned_share_group_fails_kafka_4_0_only() {
    let mut c = Coord::new();
    c.batch(
        SG,
        vec![
            share_member(SG, "s1"),
            share_member(SG, "s2"),
            share_epoch(SG, 1),
            share_target(SG, "s1", &[0]),
            share_target(SG, "s2", &[1]),
            share_target_epoch(SG, 1),
            share_current(SG, "s1", 1, 0, &[0]),
            share_current(SG, "s2", 1, 0, &[1]),
        ],
    );
    let mut leave = share_leave(SG, "s1");
    leave.extend([
        share_epoch(SG, 2),
        share_target(SG, "s2", &[0, 1]),
        share_target_epoch(SG, 2),
        share_current(SG, "s2", 2, 1, &[0, 1]),
    ]);
    c.batch(SG, leave);
    let check = |l: &Loaded| {
        let g = l.group(SG);
        assert_eq!((g.group_type, g.epoch), (GroupType::Share, 2));
        assert_eq!(g.members.keys().collect::<Vec<_>>(), ["s2"]);
    };

    let l = cleaned(&c).load();
    let message = format!("Member s1 is not a member of group {SG}.");
    assert_fails_before_19453(&l, 8, &message, 2);
    check(&l);

    let l = c.load();
    l.assert_no_group_finding();
    l.assert_no_alarm();
    check(&l);
}

/// A share group deleted by the 4.0 coordinator (`ShareGroup.createGroupTombstoneRecords`:
/// current assignments, target assignment members and metadata, members, group metadata;
/// the retired partition metadata tombstone, type 9, left out as klogscan skips it) and
/// cleaned once: only its tombstones are left, and 4.0's load throws at the first ("Share
/// group … not found.", five rejected records); 4.1+ ignores them all and holds no group.
/// Near misses: the log before the cleaner (the group deleted, no finding), and after the
/// cleaner's pass past `delete.retention.ms` (nothing left, no finding).
#[test]
fn a_deleted_share_group_cleaned_to_its_tombstones_fails_kafka_4_0_only() {
    let mut c = Coord::new();
    c.batch(
        SG,
        vec![
            share_member(SG, "s1"),
            share_epoch(SG, 1),
            share_target(SG, "s1", &[0, 1]),
            share_target_epoch(SG, 1),
            share_current(SG, "s1", 1, 0, &[0, 1]),
        ],
    );
    c.batch(
        SG,
        vec![
            tombstone(14, gm(SG, "s1")),
            tombstone(13, gm(SG, "s1")),
            tombstone(12, g(SG)),
            tombstone(10, gm(SG, "s1")),
            tombstone(11, g(SG)),
        ],
    );

    let l = cleaned(&c).load();
    assert_fails_before_19453(&l, 5, &format!("Share group {SG} not found."), 5);
    assert!(!l.knows(SG), "{:#?}", l.groups);

    let l = c.load();
    l.assert_no_group_finding();
    l.assert_no_alarm();
    assert_eq!(l.deleted(SG).unwrap().group_type, GroupType::Share);

    let past_horizon = Coord {
        logs: (c.logs.iter())
            .map(|(n, log)| (*n, log.compacted(true)))
            .filter(|(_, log)| !log.batches.is_empty())
            .collect(),
    };
    let l = past_horizon.load();
    l.assert_no_group_finding();
    assert!(!l.knows(SG), "{:#?}", l.groups);
}

/// Near miss of another kind: a share group metadata tombstone under a consumer group's id
/// fails every 4.x release's load, KAFKA-19453 or not (its catch takes only the not-found
/// case): the finding must not carry the 4.0-only scope.
#[test]
fn a_share_tombstone_under_a_consumer_group_fails_every_4x_release() {
    let cg = "consumer-app";
    let mut c = Coord::new();
    c.batch(cg, vec![group_epoch(cg, 1)]);
    c.batch(cg, vec![tombstone(11, g(cg))]);
    let l = c.load();
    for (name, f) in load_failures(&l) {
        assert_eq!(f.offset, Some(1), "{name}: {f:#?}");
        assert_eq!(f.evidence["existing_group_type"], "consumer", "{name}");
        assert_eq!(f.evidence["record_group_type"], "share", "{name}");
        let scope = f.evidence.get("load_fails_in").and_then(Value::as_str);
        assert!(matches!(scope, None | Some("kafka_4")), "{name}: {f:#?}");
    }
}

//! The group replay and its findings on coordinator partitions written by the testkit:
//! every group type, KIP-1331 deletions (complete, held back, crashed after the barrier),
//! compaction, and the damaged logs behind each finding; plus the real broker data.
#![cfg(feature = "testkit")]

use klogscan::finding::{Finding, Kind, Severity};
use klogscan::partition::groups::{GroupState, GroupType, GroupsOptions, list_groups};
use klogscan::partition::scan::ScanOptions;
use klogscan::pipeline::scan;
use klogscan::testkit::group_scenarios::{self as sc, GroupLog};
use serde_json::json;

fn run(
    log: &GroupLog,
) -> (
    tempfile::TempDir,
    Vec<Finding>,
    Vec<klogscan::partition::groups::Group>,
) {
    let dir = tempfile::tempdir().unwrap();
    log.write(dir.path(), 5).unwrap();
    let report = scan(&[dir.path().to_path_buf()], &ScanOptions::default());
    let inv = klogscan::discover::layout::discover(&[dir.path().to_path_buf()]);
    let groups = list_groups(
        &inv,
        &GroupsOptions {
            include_deleted: true,
            ..Default::default()
        },
    );
    (dir, report.findings, groups)
}

fn of(f: &[Finding], k: Kind) -> Vec<&Finding> {
    f.iter().filter(|x| x.kind == k).collect()
}

const GROUP_KINDS: [Kind; 4] = [
    Kind::GroupLoadFailure,
    Kind::GroupDeletionUnfinished,
    Kind::GroupTombstonesIncomplete,
    Kind::GroupEpochRegression,
];

fn assert_clean(f: &[Finding]) {
    assert!(f.is_empty(), "{f:#?}");
}

#[test]
fn every_group_type_replays_clean() {
    let (_d, f, groups) = run(&sc::all_types());
    assert_clean(&f);
    let by = |id: &str| groups.iter().find(|g| g.group_id == id).unwrap();
    let c = by("classic-app");
    assert_eq!(
        (c.group_type, c.epoch, c.members.len(), c.offsets.len()),
        (GroupType::Classic, 1, 1, 2)
    );
    let k = by("consumer-app");
    assert_eq!(
        (k.group_type, k.epoch, k.assignment_epoch),
        (GroupType::Consumer, 3, 3)
    );
    assert_eq!(k.members.keys().collect::<Vec<_>>(), ["m1"]);
    // m1 gave partition 1 up to m2 (who left since) and holds 0.
    assert_eq!(k.members["m1"].assigned, ["AAAAAAAAAAAAAAAAAAAAAQ:0"]);
    assert_eq!(k.offsets.len(), 1);
    let s = by("share-app");
    assert_eq!(
        (
            s.group_type,
            s.epoch,
            s.members.len(),
            s.target_assignment.len()
        ),
        (GroupType::Share, 1, 1, 1)
    );
    let t = by("streams-app");
    assert_eq!(
        (t.group_type, t.epoch, t.assignment_epoch, t.state),
        (GroupType::Streams, 2, 2, GroupState::Live)
    );
    assert_eq!(
        t.topology
            .as_ref()
            .map(|t| (t.epoch, t.source_topics.clone())),
        Some((1, vec!["input".to_string()]))
    );
    assert_eq!((t.description.stored, t.description.failed), (1, -1));
    assert!(t.members.is_empty());
}

#[test]
fn groups_filters_by_id_and_type() {
    let dir = tempfile::tempdir().unwrap();
    sc::all_types().write(dir.path(), 0).unwrap();
    let inv = klogscan::discover::layout::discover(&[dir.path().to_path_buf()]);
    let only = |o: GroupsOptions| {
        list_groups(&inv, &o)
            .into_iter()
            .map(|g| g.group_id)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        only(GroupsOptions {
            group_type: Some(GroupType::Share),
            ..Default::default()
        }),
        ["share-app"]
    );
    assert_eq!(
        only(GroupsOptions {
            group: Some("classic-app".into()),
            ..Default::default()
        }),
        ["classic-app"]
    );
    assert_eq!(only(GroupsOptions::default()).len(), 4);
}

#[test]
fn full_kip1331_deletion_is_clean_and_the_group_is_gone() {
    let (_d, f, groups) = run(&sc::streams_deleted("app"));
    assert_clean(&f);
    assert_eq!(groups.len(), 1);
    assert_eq!(groups[0].state, GroupState::Deleted);
    assert!(groups[0].deleted_at.is_some());
}

#[test]
fn consumer_and_share_deletions_in_the_coordinators_order_are_clean() {
    for log in [sc::consumer_deleted("cg"), sc::share_deleted("sg")] {
        let (_d, f, groups) = run(&log);
        assert_clean(&f);
        assert_eq!(groups.len(), 1);
        assert_eq!(groups[0].state, GroupState::Deleted);
        // compacted, with or without the tombstones: nothing left, nothing reported
        for drop in [false, true] {
            let (_d, f, groups) = run(&log.compacted(drop));
            assert_clean(&f);
            assert!(
                groups.iter().all(|g| g.state == GroupState::Deleted),
                "{groups:#?}"
            );
        }
    }
    // near miss: the consumer group's metadata tombstoned before its regular expression,
    // which stays live.
    let mut log = sc::consumer_deleted("cg");
    log.batches
        .last_mut()
        .unwrap()
        .retain(|(k, _, _)| k[1] != 16);
    let t = of(&run(&log).1, Kind::GroupTombstonesIncomplete)
        .iter()
        .map(|f| f.evidence["records"][0]["record"].clone())
        .collect::<Vec<_>>();
    assert_eq!(t, [json!("ConsumerGroupRegularExpression")]);
}

#[test]
fn held_back_and_crashed_deletions_are_unfinished() {
    for (log, writes) in [
        (sc::streams_held_back("app"), 2),
        (sc::streams_crash_after_barrier("app"), 1),
    ] {
        let (_d, f, groups) = run(&log);
        let u = of(&f, Kind::GroupDeletionUnfinished);
        assert_eq!(u.len(), 1, "{f:#?}");
        assert_eq!(u[0].severity, Severity::Warning);
        assert_eq!(u[0].evidence["barrier_writes"], writes);
        assert_eq!(u[0].evidence["group_id"], "app");
        assert_eq!(u[0].evidence["deletion"], true);
        assert_eq!(f.len(), 1, "{f:#?}");
        assert_eq!(groups[0].state, GroupState::DeletionUnfinished);
        assert_eq!(groups[0].description.stored, -2);
    }
}

#[test]
fn uncertain_epoch_on_a_group_with_members_is_a_push_barrier() {
    // The push path writes -2 before the plugin's setTopology: left without an outcome on
    // a live group, it is reported as info, not as a deletion.
    let mut log = GroupLog::new();
    sc::streams_group(&mut log, "app");
    log.batch(vec![
        (
            19,
            json!({"groupId": "app", "memberId": "w2"}),
            Some((0, json!({"topologyEpoch": 1, "processId": "p"}))),
        ),
        (
            17,
            json!({"groupId": "app"}),
            Some((0, json!({"epoch": 3, "storedDescriptionTopologyEpoch": -2}))),
        ),
    ]);
    let (_d, f, groups) = run(&log);
    assert_eq!(f.len(), 1, "{f:#?}");
    assert_eq!(
        (f[0].kind, f[0].severity),
        (Kind::GroupDeletionUnfinished, Severity::Info)
    );
    assert_eq!(f[0].evidence["deletion"], false);
    assert!(f[0].broker_behaviour.contains("re-solicits"), "{f:#?}");
    assert_eq!(groups[0].state, GroupState::Live);
    // The push's outcome (stored epoch 1) clears it.
    log.batch(vec![(
        17,
        json!({"groupId": "app"}),
        Some((0, json!({"epoch": 3, "storedDescriptionTopologyEpoch": 1}))),
    )]);
    assert_clean(&run(&log).1);
}

#[test]
fn compaction_keeps_the_same_groups_and_no_finding() {
    let mut log = sc::all_types();
    sc::streams_group(&mut log, "other-streams");
    let (_d, _f, before) = run(&log);
    for drop_tombstones in [false, true] {
        let (_d, f, after) = run(&log.compacted(drop_tombstones));
        assert_clean(&f);
        let live = |g: &[klogscan::partition::groups::Group]| {
            g.iter()
                .filter(|g| g.state == GroupState::Live)
                .map(|g| {
                    (
                        g.group_id.clone(),
                        g.group_type,
                        g.epoch,
                        g.assignment_epoch,
                        g.members.len(),
                        g.offsets.len(),
                    )
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(live(&after), live(&before));
    }
    // The held-back group after compaction still sits at the barrier.
    let (_d, f, _g) = run(&sc::streams_held_back("app").compacted(true));
    assert_eq!(of(&f, Kind::GroupDeletionUnfinished).len(), 1, "{f:#?}");
    // A completed deletion compacts to nothing.
    let (_d, f, g) = run(&sc::streams_deleted("app").compacted(true));
    assert_clean(&f);
    assert!(g.is_empty(), "{g:#?}");
}

#[test]
fn a_record_for_a_group_of_another_type_fails_the_load() {
    let mut log = GroupLog::new();
    sc::consumer_group(&mut log, "shared-id");
    log.batch(vec![(
        17,
        json!({"groupId": "shared-id"}),
        Some((0, json!({"epoch": 1}))),
    )]);
    let (_d, f, _) = run(&log);
    let l = of(&f, Kind::GroupLoadFailure);
    assert_eq!(l.len(), 1, "{f:#?}");
    assert_eq!(l[0].severity, Severity::Error);
    assert_eq!(l[0].evidence["existing_group_type"], "consumer");
    assert_eq!(l[0].evidence["load_fails"], true);
    // near miss: the streams group under its own id
    let mut log = GroupLog::new();
    sc::consumer_group(&mut log, "shared-id");
    log.batch(vec![(
        17,
        json!({"groupId": "other-id"}),
        Some((0, json!({"epoch": 1}))),
    )]);
    assert_clean(&run(&log).1);
}

#[test]
fn an_undecodable_record_fails_the_load_and_links_to_rule_32() {
    let mut log = GroupLog::new();
    sc::classic_group(&mut log, "g");
    // A ConsumerGroupMetadataKey with a value cut short.
    log.raw(vec![(vec![0, 3, 0, 1, b'g'], Some(vec![0, 0, 0, 0]))]);
    let (_d, f, _) = run(&log);
    let l = of(&f, Kind::GroupLoadFailure);
    let r = of(&f, Kind::OffsetsRecordUndecodable);
    assert_eq!((l.len(), r.len()), (1, 1), "{f:#?}");
    assert_eq!(l[0].caused_by, vec![r[0].id.clone()]);
    assert!(
        l[0].message.contains("ConsumerGroupMetadataValue"),
        "{}",
        l[0].message
    );
}

#[test]
fn tombstones_out_of_order_or_missing() {
    // The consumer group's metadata tombstoned while its member lives: the load throws.
    let mut log = GroupLog::new();
    sc::consumer_group(&mut log, "cg");
    log.batch(vec![
        (6, json!({"groupId": "cg"}), None),
        (3, json!({"groupId": "cg"}), None),
    ]);
    let (_d, f, _) = run(&log);
    let t = of(&f, Kind::GroupTombstonesIncomplete);
    assert!(!t.is_empty(), "{f:#?}");
    assert_eq!(t[0].severity, Severity::Error);
    assert_eq!(t[0].evidence["load_fails"], true);
    // A member tombstoned before its current assignment: the load throws.
    let mut log = GroupLog::new();
    sc::share_group(&mut log, "sg");
    log.batch(vec![(10, json!({"groupId": "sg", "memberId": "s1"}), None)]);
    let t = of(&run(&log).1, Kind::GroupTombstonesIncomplete).len();
    assert_eq!(t, 1);
    // A streams group deleted without its topology tombstone: the topology stays live.
    let mut log = GroupLog::new();
    sc::streams_group(&mut log, "app");
    log.batch(vec![(
        1,
        json!({"group": "app", "topic": "input", "partition": 0}),
        None,
    )]);
    log.batch(vec![
        (20, json!({"groupId": "app"}), None),
        (17, json!({"groupId": "app"}), None),
    ]);
    let (_d, f, _) = run(&log);
    let t = of(&f, Kind::GroupTombstonesIncomplete);
    assert_eq!(t.len(), 1, "{f:#?}");
    assert_eq!(t[0].evidence["load_fails"], false);
    assert_eq!(
        t[0].evidence["records"][0]["record"],
        "StreamsGroupTopology"
    );
    // near miss: the coordinator's full order (streams_deleted) is clean, see above.
    assert_clean(&run(&sc::streams_deleted("app")).1);
}

#[test]
fn epochs_that_go_down() {
    let mut log = GroupLog::new();
    sc::consumer_group(&mut log, "cg");
    log.batch(vec![(
        3,
        json!({"groupId": "cg"}),
        Some((0, json!({"epoch": 2}))),
    )]);
    let (_d, f, _) = run(&log);
    let e = of(&f, Kind::GroupEpochRegression);
    assert_eq!(e.len(), 1, "{f:#?}");
    assert_eq!(
        (
            e[0].evidence["epoch"].clone(),
            e[0].evidence["previous_epoch"].clone()
        ),
        (json!(2), json!(3))
    );
    // A target assignment epoch above the group epoch.
    let mut log = GroupLog::new();
    sc::share_group(&mut log, "sg");
    log.batch(vec![(
        12,
        json!({"groupId": "sg"}),
        Some((0, json!({"assignmentEpoch": 9}))),
    )]);
    let e = of(&run(&log).1, Kind::GroupEpochRegression).len();
    assert_eq!(e, 1);
    // A member epoch above the target assignment epoch.
    let mut log = GroupLog::new();
    sc::consumer_group(&mut log, "cg");
    log.batch(vec![(
        8,
        json!({"groupId": "cg", "memberId": "m1"}),
        Some((0, json!({"memberEpoch": 7, "previousMemberEpoch": 3}))),
    )]);
    let e = run(&log).1;
    let e = of(&e, Kind::GroupEpochRegression);
    assert_eq!(
        (e.len(), e[0].evidence["member_epoch"].clone()),
        (1, json!(7))
    );
    // near miss: a deletion in between resets the epochs (its target assignment metadata
    // tombstone first: the group starts at assignment epoch 0, which only that sets to -1).
    let mut log = GroupLog::new();
    log.batch(vec![(
        11,
        json!({"groupId": "sg"}),
        Some((0, json!({"epoch": 5}))),
    )]);
    log.batch(vec![
        (12, json!({"groupId": "sg"}), None),
        (11, json!({"groupId": "sg"}), None),
    ]);
    log.batch(vec![(
        11,
        json!({"groupId": "sg"}),
        Some((0, json!({"epoch": 1}))),
    )]);
    assert_clean(&run(&log).1);
}

#[test]
fn group_kinds_are_absent_from_the_real_data_and_groups_are_listed() {
    let Some(rd) = crate::common::real_data() else {
        return;
    };
    let broker = rd.join("broker");
    let report = scan(std::slice::from_ref(&broker), &ScanOptions::default());
    let offsets: Vec<&Finding> = report
        .findings
        .iter()
        .filter(|f| f.topic == "__consumer_offsets")
        .collect();
    assert!(offsets.is_empty(), "{offsets:#?}");
    assert!(
        !report
            .findings
            .iter()
            .any(|f| GROUP_KINDS.contains(&f.kind))
    );
    let inv = klogscan::discover::layout::discover(&[broker]);
    let groups = list_groups(&inv, &GroupsOptions::default());
    assert!(groups.len() >= 10, "{}", groups.len());
    assert!(groups.iter().all(|g| g.group_type == GroupType::Classic));
    assert!(
        groups
            .iter()
            .any(|g| g.group_id == "schema-registry" && !g.members.is_empty())
    );
    assert!(groups.iter().map(|g| g.offsets.len()).sum::<usize>() > 20);
    // Classic consumer members: their embedded assignments decode to topic-partitions.
    let assigned: Vec<&String> = groups
        .iter()
        .flat_map(|g| g.members.values())
        .flat_map(|m| m.assigned.iter())
        .collect();
    assert!(!assigned.is_empty());
    assert!(
        assigned.iter().all(|a| a
            .rsplit_once('-')
            .is_some_and(|(_, p)| p.parse::<i32>().is_ok())),
        "{assigned:?}"
    );
}

#[test]
fn transactional_offset_commits_wait_for_their_marker() {
    let commit = |g: &str, p: i32, o: i64| {
        (
            1,
            json!({"group": g, "topic": "t", "partition": p}),
            Some((
                3,
                json!({"offset": o, "leaderEpoch": 0, "commitTimestamp": 1}),
            )),
        )
    };
    let mut log = GroupLog::new();
    log.txn_batch(7, vec![commit("committed", 0, 10)]);
    log.txn_batch(8, vec![commit("aborted", 0, 20)]);
    log.txn_batch(9, vec![commit("open", 0, 30)]);
    log.marker(7, true);
    log.marker(8, false);
    let (_d, _f, groups) = run(&log);
    let offsets = |id: &str| {
        groups
            .iter()
            .find(|g| g.group_id == id)
            .map(|g| g.offsets.iter().map(|c| c.offset).collect::<Vec<_>>())
    };
    assert_eq!(offsets("committed"), Some(vec![10]));
    assert_eq!(offsets("aborted"), Some(vec![]));
    assert_eq!(offsets("open"), Some(vec![]));
    // The aborted commit is no leftover when its group is deleted later; a committed one
    // that was never tombstoned is.
    log.batch(vec![(2, json!({"group": "aborted"}), None)]);
    let f = run(&log).1;
    assert!(!f.iter().any(|x| GROUP_KINDS.contains(&x.kind)), "{f:#?}");
    log.batch(vec![(2, json!({"group": "committed"}), None)]);
    let t = of(&run(&log).1, Kind::GroupTombstonesIncomplete)
        .iter()
        .map(|f| f.evidence["group_id"].clone())
        .collect::<Vec<_>>();
    assert_eq!(t, [json!("committed")]);
}

/// `OffsetMetadataManagerTest.testReplayTransactionEndMarkerKeepsTheMostRecentCommittedOffset`:
/// a transactional commit of 100, a regular commit of 101, then the transaction's COMMIT —
/// the group keeps 101 (`OffsetMetadataManager.replayEndTransactionMarker` applies a pending
/// offset only when its record is newer). Without the regular commit the COMMIT applies 100.
#[test]
fn end_marker_keeps_the_most_recent_committed_offset() {
    let commit = |o: i64| {
        (
            1,
            json!({"group": "foo", "topic": "bar", "partition": 0}),
            Some((
                3,
                json!({"offset": o, "leaderEpoch": 0, "commitTimestamp": 1}),
            )),
        )
    };
    for regular in [true, false] {
        let mut log = GroupLog::new();
        log.txn_batch(10, vec![commit(100)]);
        if regular {
            log.batch(vec![commit(101)]);
        }
        log.marker(10, true);
        let (_d, f, groups) = run(&log);
        assert_clean(&f);
        let g = groups.iter().find(|g| g.group_id == "foo").unwrap();
        let held: Vec<i64> = g.offsets.iter().map(|c| c.offset).collect();
        assert_eq!(held, vec![if regular { 101 } else { 100 }]);
    }
}

#[test]
fn protocol_upgrade_and_downgrade_are_clean() {
    // Classic → consumer (online upgrade): the classic group's tombstone, then the
    // consumer group's records; consumer → classic (downgrade): the consumer group's
    // tombstones in order, then the classic group metadata.
    let mut log = GroupLog::new();
    sc::classic_group(&mut log, "app");
    log.batch(vec![(2, json!({"group": "app"}), None)]);
    sc::consumer_group(&mut log, "app");
    log.batch(vec![
        (8, json!({"groupId": "app", "memberId": "m1"}), None),
        (7, json!({"groupId": "app", "memberId": "m1"}), None),
        (5, json!({"groupId": "app", "memberId": "m1"}), None),
        (6, json!({"groupId": "app"}), None),
        (3, json!({"groupId": "app"}), None),
        (
            2,
            json!({"group": "app"}),
            Some((
                3,
                json!({"protocolType": "consumer", "generation": 4, "members": []}),
            )),
        ),
    ]);
    let (_d, f, groups) = run(&log);
    // The offsets committed before each conversion belong to the group id: not leftovers.
    assert_clean(&f);
    let g = groups.iter().find(|g| g.state == GroupState::Live).unwrap();
    assert_eq!((g.group_type, g.epoch), (GroupType::Classic, 4));
}

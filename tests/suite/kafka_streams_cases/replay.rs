//! The replay of one streams group's records: a group caught mid-reconciliation, tasks
//! changing hands, each tombstone, a group created by whichever of its records comes first,
//! and values the load cannot read.

use super::*;
use klogscan::finding::Severity;
use klogscan::partition::groups::GroupType;

/// The group `foo` of `GroupMetadataManagerTest.testOnLoadedWithStreamsGroup`, on disk:
/// group and target assignment epoch 10; `foo-1` still at epoch 9 revoking tasks 3–5
/// (UNREVOKED_TASKS) that the target gives `foo-2`, which waits at epoch 10 with nothing
/// (UNRELEASED_TASKS). Both members run in one process (`process-id`).
fn mid_reconciliation() -> Vec<Spec> {
    vec![
        topology("foo", 1, &["foo"], &[]),
        member("foo", "foo-1", "process-id"),
        member("foo", "foo-2", "process-id"),
        meta("foo", 10),
        target("foo", "foo-1", &[0, 1, 2]),
        target("foo", "foo-2", &[3, 4, 5]),
        target_epoch("foo", 10),
        current("foo", "foo-1", (9, 9, UNREVOKED), &[0, 1, 2], &[3, 4, 5]),
        current("foo", "foo-2", (10, 10, UNRELEASED), &[], &[]),
    ]
}

/// `GroupMetadataManagerTest.testOnLoadedWithStreamsGroup` (a group loaded mid-reconciliation)
/// and `StreamsGroupTest.testAsListedGroup` (listed with type `streams`): the load replays it
/// without a throw — `StreamsGroup.updateMember` gives tasks 0–5 to `process-id` once each.
/// klogscan: no finding; the group is listed as a streams group at epochs 10/10 with both
/// members, their epochs, states and tasks (3–5 pending revocation on `foo-1`).
#[test]
fn a_group_loaded_mid_reconciliation_is_quiet_and_listed() {
    let mut log = GroupLog::new();
    log.batch(mid_reconciliation());
    let l = load(&log);
    l.assert_clean();
    let foo = l.live("foo");
    assert_eq!(
        (foo.group_type, foo.epoch, foo.assignment_epoch),
        (GroupType::Streams, 10, 10)
    );
    let m1 = &foo.members["foo-1"];
    assert_eq!(
        (m1.member_epoch, m1.previous_member_epoch, m1.state),
        (9, 9, UNREVOKED)
    );
    assert_eq!(m1.assigned, [task(0), task(1), task(2)]);
    assert_eq!(m1.pending_revocation, [task(3), task(4), task(5)]);
    assert_eq!(m1.process_id.as_deref(), Some("process-id"));
    let m2 = &foo.members["foo-2"];
    assert_eq!((m2.member_epoch, m2.state), (10, UNRELEASED));
    assert!(m2.assigned.is_empty());
    assert_eq!(foo.target_assignment["foo-2"], [task(3), task(4), task(5)]);
}

/// Twin: `foo-1`'s record lists task 3 both as active and as pending revocation.
/// `StreamsGroup.maybeUpdateTaskProcessId` adds the assigned tasks then the pending ones, and
/// the second `addTaskProcessId` of one task throws (`StreamsGroupTest.testAddTaskProcessIds`):
/// the load fails at that record — `group_load_failure`, an error.
#[test]
fn twin_a_task_both_active_and_revoking_in_one_record_fails_the_load() {
    let mut recs = mid_reconciliation();
    recs[7] = current("foo", "foo-1", (9, 9, UNREVOKED), &[0, 1, 2, 3], &[3, 4, 5]);
    let mut log = GroupLog::new();
    log.batch(recs);
    let l = load(&log);
    let f = l.load_failure();
    assert_eq!((f.severity, f.offset), (Severity::Error, Some(7)));
    assert_eq!(f.evidence["load_fails"], true);
    assert_eq!(f.evidence["member_id"], "foo-1");
}

/// Two members, `m1` (process `p1`) and `m2` (`p2`): epoch 1 gives `m1` tasks 0 and 1;
/// epoch 2 moves task 1 to `m2`, which `m1` revokes then releases before `m2` takes it
/// (`take_early`: `m2`'s claim comes while `m1` still revokes it).
fn handover(take_early: bool) -> GroupLog {
    let mut log = GroupLog::new();
    log.batch(vec![
        topology(APP, 1, &["input"], &[]),
        member(APP, "m1", "p1"),
        member(APP, "m2", "p2"),
        meta(APP, 1),
        target(APP, "m1", &[0, 1]),
        target(APP, "m2", &[]),
        target_epoch(APP, 1),
        current(APP, "m1", (1, 0, STABLE), &[0, 1], &[]),
        current(APP, "m2", (1, 0, STABLE), &[], &[]),
    ]);
    log.batch(vec![
        meta(APP, 2),
        target(APP, "m1", &[0]),
        target(APP, "m2", &[1]),
        target_epoch(APP, 2),
    ]);
    log.batch(vec![current(APP, "m1", (2, 1, UNREVOKED), &[0], &[1])]);
    if take_early {
        log.batch(vec![current(APP, "m2", (2, 1, STABLE), &[1], &[])]);
    }
    log.batch(vec![current(APP, "m1", (2, 1, STABLE), &[0], &[])]);
    log.batch(vec![current(APP, "m2", (2, 1, STABLE), &[1], &[])]);
    log
}

/// `StreamsGroupTest.testUpdatingMemberUpdatesTaskProcessIdWhenPartitionIsReassignedBeforeBeingRevoked`,
/// `testUpdatingMemberUpdatesProcessId` and `testDeletingMemberRemovesProcessId`, as the
/// replay meets them: a task revoked, released, then taken by another process; a member's
/// metadata rewritten with a new process id (its tasks move to it); a member removed by
/// `removeStreamsMember`'s tombstones, its tasks then given to the other. Every
/// `updateMember` / `removeMember` of the load finds each active task free: no throw.
/// klogscan: no finding; `m2` holds both tasks at epoch 3.
#[test]
fn tasks_released_then_reassigned_and_a_departed_member_s_tasks_are_quiet() {
    let mut log = handover(false);
    log.batch(vec![member(APP, "m1", "p1-restarted")]);
    log.batch([leave(APP, "m1"), vec![meta(APP, 3)]].concat());
    log.batch(vec![
        target(APP, "m2", &[0, 1]),
        target_epoch(APP, 3),
        current(APP, "m2", (3, 2, STABLE), &[0, 1], &[]),
    ]);
    let l = load(&log);
    l.assert_clean();
    let app = l.live(APP);
    assert_eq!(app.members.keys().collect::<Vec<_>>(), ["m2"]);
    assert_eq!(app.members["m2"].assigned, [task(0), task(1)]);
    assert_eq!((app.epoch, app.assignment_epoch), (3, 3));
}

/// Twin: `m2`'s current assignment claims task 1 while `m1`'s still lists it as pending
/// revocation (`maybeUpdateTaskProcessId` adds pending tasks too): `addTaskProcessId`
/// throws ("Cannot set the process ID of 0-1 to p2 because the partition is still owned by
/// process ID p1") — the load fails there.
#[test]
fn twin_a_task_taken_before_its_revocation_ends_fails_the_load() {
    let l = load(&handover(true));
    let f = l.load_failure();
    assert_eq!((f.severity, f.offset), (Severity::Error, Some(14)));
    assert_eq!(
        f.evidence["kafka_message"],
        "Cannot set the process ID of 0-1 to p2 because the partition is still owned by process ID p1"
    );
}

/// `GroupMetadataManagerTest.testReplayStreamsGroupCurrentMemberAssignmentTombstoneExisting`,
/// `…TargetAssignmentMemberTombstoneExisting`, `…MemberMetadataTombstoneExisting` and
/// `…TargetAssignmentMetadataTombstoneExisting`, one stage at a time on a group of two
/// members where `m1` leaves: the current assignment's tombstone keeps `m1` at epoch -1
/// with no task; the target assignment member's tombstone removes `m1`'s target only; the
/// member's tombstone removes `m1`. After `m2` leaves too, the target assignment metadata's
/// tombstone sets the target assignment epoch to -1 and the group stays, empty, until
/// its own tombstone. No stage fails the load.
#[test]
fn each_streams_tombstone_removes_what_kafka_s_replay_removes() {
    let mut log = handover(false);
    let stage = |log: &mut GroupLog, t: i16| {
        log.batch(vec![tomb(t, gm(APP, "m1"))]);
        let l = load(log);
        l.assert_clean();
        l
    };
    let l = stage(&mut log, 22);
    let m1 = &l.live(APP).members["m1"];
    assert_eq!((m1.member_epoch, m1.previous_member_epoch), (-1, -1));
    assert!(m1.assigned.is_empty() && m1.pending_revocation.is_empty());
    let l = stage(&mut log, 21);
    let app = l.live(APP);
    assert_eq!(app.target_assignment.keys().collect::<Vec<_>>(), ["m2"]);
    assert!(app.members.contains_key("m1"));
    let l = stage(&mut log, 19);
    assert_eq!(l.live(APP).members.keys().collect::<Vec<_>>(), ["m2"]);

    log.batch([leave(APP, "m2"), vec![meta(APP, 3), tomb(20, g(APP))]].concat());
    let l = load(&log);
    l.assert_clean();
    let app = l.live(APP);
    assert!(app.members.is_empty() && app.target_assignment.is_empty());
    assert_eq!((app.epoch, app.assignment_epoch), (3, -1));
    log.batch(vec![tomb(17, g(APP)), tomb(23, g(APP))]);
    let l = load(&log);
    l.assert_clean();
    assert!(!l.is_live(APP));
}

/// `replay(StreamsGroupMemberMetadataKey, value)`, `…CurrentMemberAssignmentKey`,
/// `…TargetAssignmentMemberKey` and `…TopologyKey` each create the group when it is missing
/// (`getOrMaybeCreatePersistedStreamsGroup(groupId, true)`): after the cleaner, whose
/// records keep only each key's last write, a group whose metadata was rewritten last
/// (epoch 5) starts with its member's records, at epoch 0, and reaches epoch 5 at the end.
/// The load takes every record as it is. klogscan: no finding (no epoch regression from
/// the lazily created group's 0), the group listed at epochs 5/5 with its member and tasks.
#[test]
fn a_member_s_records_before_the_group_s_metadata_create_the_group() {
    let mut log = GroupLog::new();
    log.batch(vec![member(APP, "m1", "p1")]);
    log.batch(vec![current(APP, "m1", (5, 4, STABLE), &[0, 1], &[])]);
    log.batch(vec![target(APP, "m1", &[0, 1])]);
    log.batch(vec![topology(APP, 1, &["input"], &[])]);
    log.batch(vec![target_epoch(APP, 5)]);
    log.batch(vec![meta(APP, 5)]);
    let l = load(&log);
    l.assert_clean();
    let app = l.live(APP);
    assert_eq!(
        (app.group_type, app.epoch, app.assignment_epoch),
        (GroupType::Streams, 5, 5)
    );
    assert_eq!(app.members["m1"].assigned, [task(0), task(1)]);
    assert_eq!(app.topology.as_ref().map(|t| t.epoch), Some(1));
}

/// A streams record key (`CoordinatorRecordType` id, then the group id as a string).
fn raw_key(t: i16, id: &str) -> Vec<u8> {
    let mut k = t.to_be_bytes().to_vec();
    k.extend((id.len() as i16).to_be_bytes());
    k.extend(id.as_bytes());
    k
}

/// `StreamsGroupMetadataValue` v0 bytes at epoch 2 (hash 7), with `tagged` as its tagged
/// fields section (count, then tag, size, bytes each).
fn raw_meta_value(tagged: &[u8]) -> Vec<u8> {
    let mut v = 0i16.to_be_bytes().to_vec();
    v.extend(2i32.to_be_bytes());
    v.extend(7i64.to_be_bytes());
    v.extend(tagged);
    v
}

/// `StreamsGroupMetadataValue` is flexible from version 0: a tagged field the reader does
/// not know is kept aside (`_unknownTaggedFields`, `GroupCoordinatorRecordSerde`'s generated
/// `read`), not an error — a newer writer's field does not fail the load. klogscan: no
/// finding, the epoch read. Twin: the same value cut inside its fixed fields (the hash
/// 4 bytes short): `CoordinatorRecordSerde.readMessage` throws ("Could not read record with
/// version 0 from value's buffer"), the load fails — `group_load_failure`, an error,
/// caused by the `offsets_record_undecodable` record, naming the value's type.
#[test]
fn an_unknown_tagged_field_loads_and_a_cut_streams_value_fails_the_load() {
    let mut log = GroupLog::new();
    log.batch(vec![meta(APP, 1)]);
    log.raw(vec![(
        raw_key(17, APP),
        Some(raw_meta_value(&[1, 9, 2, 0xab, 0xcd])),
    )]);
    let l = load(&log);
    l.assert_clean();
    assert_eq!(l.live(APP).epoch, 2);

    let mut cut = raw_meta_value(&[0]);
    cut.truncate(10);
    log.raw(vec![(raw_key(17, APP), Some(cut))]);
    log.batch(vec![meta(APP, 3)]);
    let l = load(&log);
    let f = l.load_failure();
    assert_eq!((f.severity, f.offset), (Severity::Error, Some(2)));
    assert!(
        f.message.contains("StreamsGroupMetadataValue"),
        "{}",
        f.message
    );
    let u = l.of(Kind::OffsetsRecordUndecodable);
    assert_eq!(u.len(), 1, "{:#?}", l.findings);
    assert_eq!(f.caused_by, [u[0].id.clone()]);
}

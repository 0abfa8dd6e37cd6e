//! Regular offset commits and their tombstones (`OffsetMetadataManagerTest`).

use super::*;

/// `OffsetMetadataManagerTest.testSimpleGroupOffsetCommit`: an offset commit for a group
/// id the coordinator does not know is accepted; the record it writes is a plain offset
/// commit (no group record), and replaying it creates an empty classic group without
/// protocol type (a "simple" group) that holds the offset.
#[test]
fn an_offset_commit_without_a_group_creates_a_simple_group() {
    let mut c = Coord::new();
    c.batch("foo", vec![commit("foo", "bar", 0, 100)]);
    let l = c.load();
    let foo = l.group("foo");
    assert_eq!(foo.group_type, GroupType::Classic);
    assert!(foo.simple, "{foo:#?}");
    assert!(foo.members.is_empty() && foo.protocol_type.is_none());
    assert_eq!(l.offsets("foo"), vec![tp("bar", 0, 100)]);
    l.assert_no_group_finding();
    l.assert_no_alarm();

    // Near miss: a classic group record with a protocol type and a member before the
    // commit makes a real classic group, which the commit does not replace.
    let mut c = Coord::new();
    c.batch("foo", vec![classic("foo", 1, &[("member", None)])]);
    c.batch("foo", vec![commit("foo", "bar", 0, 100)]);
    let l = c.load();
    let foo = l.group("foo");
    assert!(!foo.simple, "{foo:#?}");
    assert_eq!(foo.protocol_type.as_deref(), Some("consumer"));
    assert_eq!(foo.epoch, 1);
    assert_eq!(l.offsets("foo"), vec![tp("bar", 0, 100)]);
    l.assert_no_alarm();
}

/// `OffsetMetadataManagerTest.testGenericGroupOffsetCommitWithRetentionTime`: a classic
/// group's commit that carries a retention time is written with an expire timestamp
/// (commit time plus the retention), which only value version 1 can hold; the loaded
/// offset keeps that expire timestamp.
#[test]
fn a_commit_with_a_retention_time_keeps_its_expire_timestamp() {
    let mut c = Coord::new();
    c.batch(
        "foo",
        vec![classic("foo", 1, &[("member", Some("new-instance-id"))])],
    );
    c.batch("foo", vec![commit_v1("foo", "bar", 0, 100, T + 1234)]);
    let l = c.load();
    let foo = l.group("foo");
    assert_eq!(
        foo.members["member"].instance_id.as_deref(),
        Some("new-instance-id")
    );
    let held: Vec<_> = foo
        .offsets
        .iter()
        .map(|o| (o.offset, o.commit_timestamp, o.expire_timestamp))
        .collect();
    assert_eq!(held, vec![(100, T, Some(T + 1234))]);
    l.assert_no_group_finding();
    l.assert_no_alarm();

    // Near miss: the same commit without a retention time (value version 3) has none.
    let mut c = Coord::new();
    c.batch(
        "foo",
        vec![classic("foo", 1, &[("member", Some("new-instance-id"))])],
    );
    c.batch("foo", vec![commit("foo", "bar", 0, 100)]);
    let l = c.load();
    let held: Vec<_> = (l.group("foo").offsets.iter())
        .map(|o| (o.offset, o.expire_timestamp))
        .collect();
    assert_eq!(held, vec![(100, None)]);
}

/// `OffsetMetadataManagerTest.testOnPartitionsDeleted`: when topic partitions are deleted
/// the coordinator writes an offset tombstone for each of them in every group that has an
/// offset for it, pending transactional ones included; the offsets of the partitions not
/// deleted stay, and a later COMMIT marker of the transaction brings none of the
/// tombstoned pending offsets back.
#[test]
fn offsets_of_deleted_partitions_are_tombstoned_in_every_group() {
    let write = |tombstone_pending: bool| {
        let mut c = Coord::new();
        c.batch(
            "grp-0",
            (1..=3)
                .map(|p| commit("grp-0", "foo", p, 100 * i64::from(p)))
                .collect(),
        );
        c.batch(
            "grp-1",
            (1..=3)
                .map(|p| commit("grp-1", "bar", p, 100 * i64::from(p)))
                .collect(),
        );
        c.txn(
            100,
            "grp-2",
            (1..=3)
                .map(|p| commit("grp-2", "foo", p, 100 * i64::from(p)))
                .collect(),
        );
        // The deletion of foo-1..3 and bar-1: one tombstone per group and partition.
        c.batch(
            "grp-0",
            (1..=3)
                .map(|p| offset_tombstone("grp-0", "foo", p))
                .collect(),
        );
        c.batch("grp-1", vec![offset_tombstone("grp-1", "bar", 1)]);
        if tombstone_pending {
            c.batch(
                "grp-2",
                (1..=3)
                    .map(|p| offset_tombstone("grp-2", "foo", p))
                    .collect(),
            );
        }
        c.marker(100, "grp-2", true);
        c.load()
    };
    let l = write(true);
    assert_eq!(l.offsets("grp-0"), vec![]);
    assert_eq!(
        l.offsets("grp-1"),
        vec![tp("bar", 2, 200), tp("bar", 3, 300)]
    );
    assert_eq!(l.offsets("grp-2"), vec![]);
    assert_eq!(l.pending, vec![]);
    l.assert_no_group_finding();
    l.assert_no_alarm();

    // Near miss: without grp-2's tombstones the marker commits its pending offsets.
    let l = write(false);
    assert_eq!(
        l.offsets("grp-2"),
        vec![tp("foo", 1, 100), tp("foo", 2, 200), tp("foo", 3, 300)]
    );
    assert_eq!(l.offsets("grp-0"), vec![]);
}

//! `DeleteOffsetsConsumerGroupCommandIntegrationTest` (`--delete-offsets`) and
//! `DeleteConsumerGroupsTest` (`--delete`): the tombstones a deletion writes, and what the
//! describe and the listing show after them.

use super::*;
use crate::kafka_groupaudit_cases::{classic_tombstone, commit, g, offset_tombstone, tombstone};

/// A group of either protocol that consumed foo-0 and foo-1 and committed 10 on each; its
/// consumer closed (Empty) unless `stable`.
fn consumed(c: &mut Coord, id: &str, classic: bool, stable: bool) {
    if classic {
        c.batch(id, vec![classic_group(id, 1, "range", &[("m1", &[0, 1])])]);
    } else {
        c.batch(id, consumer_group(id, "m1", 1, &[0, 1]));
    }
    c.batch(id, vec![commit(id, "foo", 0, 10), commit(id, "foo", 1, 10)]);
    if stable {
        return;
    }
    if classic {
        c.batch(id, vec![classic_group(id, 2, "range", &[])]);
    } else {
        c.batch(
            id,
            vec![
                (8, gm(id, "m1"), None),
                (7, gm(id, "m1"), None),
                (5, gm(id, "m1"), None),
                group_epoch(id, 2),
                target_epoch(id, 2),
            ],
        );
    }
}

fn foo(c: &Coord) -> Broker {
    Broker::write(
        vec![data("foo", 0, 10), data("foo", 1, 10)],
        &[("foo", 0, 10), ("foo", 1, 10)],
        c,
    )
}

/// `DeleteOffsetsConsumerGroupCommandIntegrationTest.testDeleteOffsetsOfEmptyConsumerGroupWithTopicPartition`
/// and `testDeleteOffsetsOfEmptyConsumerGroupWithTopicOnly` (both protocols): the
/// coordinator writes one offset tombstone per partition named (`OffsetMetadataManager.
/// deleteOffsets`; a topic alone names every partition the group committed) and leaves the
/// group: the describe no longer lists those partitions, and the group stays (Empty, no
/// member). Near miss: the tombstone of another topic's partition deletes nothing.
#[test]
fn deleted_offsets_leave_the_describe() {
    for classic in [true, false] {
        for (deleted, left) in [
            (vec![("foo", 0)], vec![1]),
            (vec![("foo", 0), ("foo", 1)], vec![]),
            (vec![("bar", 0)], vec![0, 1]),
        ] {
            let mut c = Coord::new();
            consumed(&mut c, "g", classic, false);
            let tombstones = (deleted.iter())
                .map(|&(t, p)| offset_tombstone("g", t, p))
                .collect();
            c.batch("g", tombstones);
            let b = foo(&c);
            let want: Vec<Row> = (left.iter())
                .map(|&p| row("foo", p, Some(10), Some(10), Some(0)))
                .collect();
            let v = b.consumers(&[]);
            assert_eq!(describe(&v, "g"), want, "classic {classic}: {deleted:?}");
            let groups = b.groups(&[]);
            let g = group(&groups, "g").unwrap_or_else(|| panic!("{groups:#}"));
            assert_eq!(g["state"], "live");
            assert_eq!(g["offsets"].as_array().unwrap().len(), left.len());
            assert!(members(g).is_empty());
        }
    }
}

/// `DeleteOffsetsConsumerGroupCommandIntegrationTest.testDeleteOffsetsOfStableConsumerGroupWithTopicPartition`,
/// `testDeleteOffsetsOfStableConsumerGroupWithTopicOnly` (refused with
/// GROUP_SUBSCRIBED_TO_TOPIC: the group's member subscribes the topic),
/// `testDeleteOffsetsOfStableConsumerGroupWithUnknownTopicPartition`,
/// `testDeleteOffsetsOfStableConsumerGroupWithUnknownTopicOnly`,
/// `testDeleteOffsetsOfEmptyConsumerGroupWithUnknownTopicPartition`,
/// `testDeleteOffsetsOfEmptyConsumerGroupWithUnknownTopicOnly` (refused with
/// UNKNOWN_TOPIC_OR_PARTITION before the coordinator): a refused deletion writes nothing,
/// so the describe keeps every row and the stable group its member. Near miss: the
/// tombstones a successful deletion would write remove the rows.
#[test]
fn a_refused_offset_deletion_leaves_every_row() {
    for classic in [true, false] {
        for stable in [true, false] {
            for written in [false, true] {
                let mut c = Coord::new();
                consumed(&mut c, "g", classic, stable);
                if written {
                    c.batch(
                        "g",
                        vec![
                            offset_tombstone("g", "foo", 0),
                            offset_tombstone("g", "foo", 1),
                        ],
                    );
                }
                let b = foo(&c);
                let want = match written {
                    true => vec![],
                    false => vec![
                        row("foo", 0, Some(10), Some(10), Some(0)),
                        row("foo", 1, Some(10), Some(10), Some(0)),
                    ],
                };
                assert_eq!(describe(&b.consumers(&[]), "g"), want);
                let groups = b.groups(&[]);
                assert_eq!(
                    members(group(&groups, "g").unwrap()).len(),
                    usize::from(stable)
                );
            }
        }
    }
}

/// What `GroupCoordinatorShard.deleteGroups` writes for an Empty group, in one batch: the
/// tombstones of all its offsets (`OffsetMetadataManager.deleteAllOffsets`), then the
/// group's (`GroupMetadataManager.createGroupTombstoneRecords`: a classic group's one
/// metadata tombstone; a consumer group's target assignment metadata, subscription
/// metadata and epoch, its members being gone).
fn delete_group(c: &mut Coord, id: &str, classic: bool) {
    let mut recs = vec![
        offset_tombstone(id, "foo", 0),
        offset_tombstone(id, "foo", 1),
    ];
    if classic {
        recs.push(classic_tombstone(id));
    } else {
        recs.extend([
            tombstone(6, g(id)),
            tombstone(4, g(id)),
            tombstone(3, g(id)),
        ]);
    }
    c.batch(id, recs);
}

/// `DeleteConsumerGroupsTest.testDeleteEmptyGroup`, `testDeleteCmdAllGroups`,
/// `testDeleteCmdWithMixOfSuccessAndError`, `testDeleteWithMixOfSuccessAndError` (both
/// protocols): the Empty groups deleted are gone — no row, not listed, listed as deleted
/// only with `--deleted` — while the missing group id of the mixed deletion was never
/// there. `testDeleteNonEmptyGroup` is the near miss: a group with a member is refused
/// (NON_EMPTY_GROUP), nothing is written, and it stays with its rows and member.
#[test]
fn deleted_groups_are_gone_and_a_non_empty_one_stays() {
    for classic in [true, false] {
        let mut c = Coord::new();
        for id in ["g1", "g2", "g3"] {
            consumed(&mut c, id, classic, false);
            delete_group(&mut c, id, classic);
        }
        consumed(&mut c, "busy", classic, true);
        let b = foo(&c);
        let v = b.consumers(&[]);
        let groups: Vec<&str> = (v["consumers"]["groups"].as_array().unwrap().iter())
            .map(|g| g["group_id"].as_str().unwrap())
            .collect();
        assert_eq!(groups, ["busy"], "classic {classic}: {v:#}");
        assert_eq!(
            describe(&v, "busy"),
            [
                row("foo", 0, Some(10), Some(10), Some(0)),
                row("foo", 1, Some(10), Some(10), Some(0))
            ]
        );
        let live = b.groups(&[]);
        let ids: Vec<&str> = (live["groups"].as_array().unwrap().iter())
            .map(|g| g["group_id"].as_str().unwrap())
            .collect();
        assert_eq!(ids, ["busy"]);
        assert_eq!(members(group(&live, "busy").unwrap()).len(), 1);
        let all = b.groups(&["--deleted"]);
        for id in ["g1", "g2", "g3"] {
            let g = group(&all, id).unwrap();
            assert_eq!(g["state"], "deleted", "{id}");
            assert_eq!(g["type"], if classic { "classic" } else { "consumer" });
            assert_eq!(g["offsets"], json!([]), "{id}");
        }
        assert!(group(&all, "missing.group").is_none());
        assert!(kinds(&v).is_empty(), "{v:#}");
    }
}

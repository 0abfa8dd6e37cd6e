//! The offsets a topic's deletion tombstones since commits carry topic ids
//! (`OffsetMetadataManagerTest.testOnTopicsDeletedWith*TopicId`: `OffsetMetadataManager.
//! onPartitionsDeleted` tombstones a group's offsets of a deleted topic only when their
//! commit named that topic's id or none — the zero id of a commit by name).

use crate::consumers::topic_ids::commit_v4;
use crate::consumers::{Cluster, consumer_findings, healthy_orders, offsets_partition, row};
use klogscan::finding::Kind;
use klogscan::testkit::files::topic_id_for;
use klogscan::testkit::group_scenarios::GroupLog;
use serde_json::json;

/// `testOnTopicsDeletedWithMatchingTopicId`, `…WithZeroTopicId`, `…WithMixedTopicIds`: the
/// earlier `orders` (id X) had commits naming X (orders-0 at 40) and none (orders-1 at 3);
/// its deletion tombstones both; the recreated `orders` (the data partitions' id) gets a
/// commit naming its id on orders-1. The load holds orders-1 at 3 with the new id, nothing
/// on orders-0: klogscan finds nothing. Near miss: the deletion's tombstones missing (not
/// written, e.g. the coordinator failed over before): orders-0's commit of the other
/// incarnation stays, `committed_offset_topic_id_mismatch`.
#[test]
fn a_deleted_topics_offsets_by_its_id_or_none_are_tombstoned() {
    let (earlier, current) = (topic_id_for("orders (deleted)"), topic_id_for("orders"));
    let build = |tombstoned: bool| {
        let mut log = GroupLog::new();
        log.batch(vec![commit_v4(0, 40, Some(earlier)), commit_v4(1, 3, None)]);
        if tombstoned {
            let key = |p: i32| json!({"group": "app", "topic": "orders", "partition": p});
            log.batch(vec![(1, key(0), None), (1, key(1), None)]);
        }
        log.batch(vec![commit_v4(1, 3, Some(current))]);
        let c = Cluster::new(healthy_orders(), &log, offsets_partition("app"), &[]);
        c.run(None)
    };
    let (f, v) = build(true);
    assert!(consumer_findings(&f).is_empty(), "{f:#?}");
    assert!(
        !v.rows
            .iter()
            .any(|r| r.group_id == "app" && r.partition == 0)
    );
    let r = row(&v, "app", "orders", 1);
    assert_eq!(r.committed_offset, 3);
    assert!(r.commit_topic_id.is_some());

    // Near miss: no tombstone: orders-0's commit names the earlier incarnation.
    let (f, _) = build(false);
    let found = consumer_findings(&f);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(
        (found[0].kind, found[0].partition, found[0].offset),
        (Kind::CommittedOffsetTopicIdMismatch, 0, Some(40))
    );
}

/// `testOnTopicsDeletedWithMismatchedTopicId`: commits naming the recreated topic's id
/// survive the deletion of the earlier incarnation (no tombstone written: their id is not
/// the deleted one). The load holds them; they name the data partitions' id: nothing found.
/// Near miss: the same offsets committed under the earlier id (what the deletion would have
/// tombstoned): both reported as another incarnation's.
#[test]
fn offsets_naming_the_recreated_topic_survive_the_earlier_ones_deletion() {
    let (earlier, current) = (topic_id_for("orders (deleted)"), topic_id_for("orders"));
    let build = |id: [u8; 16]| {
        let mut log = GroupLog::new();
        log.batch(vec![commit_v4(0, 10, Some(id)), commit_v4(1, 2, Some(id))]);
        let c = Cluster::new(healthy_orders(), &log, offsets_partition("app"), &[]);
        c.run(None)
    };
    let (f, v) = build(current);
    assert!(consumer_findings(&f).is_empty(), "{f:#?}");
    assert_eq!(row(&v, "app", "orders", 0).committed_offset, 10);
    assert_eq!(row(&v, "app", "orders", 1).committed_offset, 2);

    let (f, _) = build(earlier);
    let found = consumer_findings(&f);
    assert_eq!(found.len(), 2, "{found:#?}");
    assert!(
        found
            .iter()
            .all(|f| f.kind == Kind::CommittedOffsetTopicIdMismatch)
    );
}

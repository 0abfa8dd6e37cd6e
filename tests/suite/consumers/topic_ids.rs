//! Commits that name their topic by id (`OffsetCommitValue.topicId`, value version 4) held
//! against the data partition's `partition.metadata`: `OffsetMetadataManagerTest.
//! testFetchOffsetsWithRecreatedTopic` — the coordinator answers a fetch naming another
//! topic id with no offset, so a commit of another incarnation of the topic (deleted and
//! created again) is not this log's.

use super::*;
use klogscan::testkit::files::{topic_id_for, uuid_text};

/// A version-4 commit of `offset` on orders-`partition` naming `topic_id` (`None`: the
/// zero id, what a commit by name writes).
pub(crate) fn commit_v4(
    partition: i32,
    offset: i64,
    topic_id: Option<[u8; 16]>,
) -> (i16, Value, Option<(i16, Value)>) {
    let mut v = json!({"offset": offset, "leaderEpoch": 0, "metadata": "", "commitTimestamp": DEFAULT_START_MS});
    if let Some(id) = topic_id {
        v["topicId"] = json!(uuid_text(&id));
    }
    (
        1,
        json!({"group": "app", "topic": "orders", "partition": partition}),
        Some((4, v)),
    )
}

/// A commit naming another topic id than the partition's is `committed_offset_topic_id_mismatch`
/// (and only that: its offset beyond this log's end says nothing of this log). The same
/// commit naming the partition's id, the zero id, or written by a version without the field
/// is judged as usual: clean here.
#[test]
fn a_commit_of_another_incarnation_of_the_topic_is_reported() {
    let earlier = topic_id_for("orders (deleted)");
    let current = topic_id_for("orders");
    let mut log = GroupLog::new();
    log.batch(vec![
        commit_v4(0, 40, Some(earlier)),
        commit_v4(1, 3, Some(current)),
    ]);
    let c = Cluster::new(healthy_orders(), &log, offsets_partition("app"), &[]);
    let (f, v) = c.run(None);
    let found = consumer_findings(&f);
    assert_eq!(found.len(), 1, "{found:#?}");
    let m = found[0];
    assert_eq!(
        (m.kind, m.partition, m.offset, m.severity),
        (
            Kind::CommittedOffsetTopicIdMismatch,
            0,
            Some(40),
            Severity::Warning
        )
    );
    assert_eq!(m.evidence["commit_topic_id"], uuid_text(&earlier));
    assert_eq!(m.evidence["partition_topic_id"], uuid_text(&current));
    let mut filled = vec![m.clone()];
    klogscan::report::client::fill(&mut filled);
    let client = filled[0].client_error.clone().unwrap_or_default();
    assert!(client.contains("auto.offset.reset"), "{client}");
    let r = row(&v, "app", "orders", 0);
    assert_eq!(
        r.commit_topic_id.as_deref(),
        Some(uuid_text(&earlier).as_str())
    );
    assert_eq!(
        r.data.as_ref().and_then(|d| d.topic_id.clone()),
        Some(uuid_text(&current))
    );

    let mut log = GroupLog::new();
    log.batch(vec![commit_v4(0, 5, Some(current)), commit_v4(1, 3, None)]);
    log.batch(vec![commit("app", "orders", 0, 6, Some(0))]);
    let c = Cluster::new(healthy_orders(), &log, offsets_partition("app"), &[]);
    let (f, v) = c.run(None);
    assert!(consumer_findings(&f).is_empty(), "{f:#?}");
    assert_eq!(row(&v, "app", "orders", 1).commit_topic_id, None);
    // The commit by name (v3) replaced the v4 one: no topic id kept.
    assert_eq!(row(&v, "app", "orders", 0).commit_topic_id, None);
}

//! A share group state partition metadata record (`__consumer_offsets` type 15) as the
//! 4.1+ group coordinator replays it: `GroupMetadataManager.replay(
//! ShareGroupStatePartitionMetadataKey, …Value)` collects `InitializingTopics`, then
//! `InitializedTopics`, into maps by topic id without a merge function, so a topic id twice
//! in one list throws `IllegalStateException` and the load of the partition fails
//! (`GroupMetadataManagerTest.testReplayShareGroupStatePartitionMetadata*` write each list
//! from a map: one entry a topic id). The same id once in each list, twice in
//! `DeletingTopics` (a set), or a tombstone, loads.
#![cfg(feature = "testkit")]

use klogscan::finding::{Finding, Kind, Severity};
use klogscan::partition::scan::ScanOptions;
use klogscan::testkit::group_scenarios::{self as sc, GroupLog};
use serde_json::{Value, json};

const ORDERS: &str = "AAAAAAAAAAAAAAAAAAAAAQ";
const AUDIT: &str = "AAAAAAAAAAAAAAAAAAAAAg";

fn topic(id: &str, name: &str) -> Value {
    json!({"topicId": id, "topicName": name, "partitions": [0, 1]})
}

/// A live share group `sg`, then its type-15 value `value` (offset 6).
fn log(value: Option<Value>) -> GroupLog {
    let mut log = GroupLog::new();
    sc::share_group(&mut log, "sg");
    log.batch(vec![(15, json!({"groupId": "sg"}), value.map(|v| (0, v)))]);
    log
}

fn load_failures(log: &GroupLog) -> Vec<Finding> {
    let d = tempfile::tempdir().unwrap();
    log.write(d.path(), 0).unwrap();
    let r = klogscan::pipeline::scan(&[d.path().to_path_buf()], &ScanOptions::default());
    (r.findings.into_iter())
        .filter(|f| f.kind == Kind::GroupLoadFailure)
        .collect()
}

#[test]
fn a_topic_id_twice_in_one_list_fails_the_load() {
    for list in ["initializingTopics", "initializedTopics"] {
        let v = json!({ list: [topic(ORDERS, "orders"), topic(AUDIT, "audit"), topic(ORDERS, "orders")] });
        let f = load_failures(&log(Some(v)));
        assert_eq!(f.len(), 1, "{list}: {f:#?}");
        assert_eq!(f[0].severity, Severity::Error);
        assert_eq!(f[0].offset, Some(6), "{:#?}", f[0]);
        let want = if list == "initializingTopics" {
            "InitializingTopics"
        } else {
            "InitializedTopics"
        };
        assert_eq!(f[0].evidence["list"], want);
        assert_eq!(f[0].evidence["topic_id"], ORDERS);
        assert!(f[0].message.contains("Duplicate key"), "{}", f[0].message);
    }
    // Duplicates in both lists: the load throws at the first (InitializingTopics).
    let v = json!({
        "initializingTopics": [topic(AUDIT, "audit"), topic(AUDIT, "audit")],
        "initializedTopics": [topic(ORDERS, "orders"), topic(ORDERS, "orders")],
    });
    let f = load_failures(&log(Some(v)));
    assert_eq!(f.len(), 1, "{f:#?}");
    assert_eq!(
        (
            f[0].evidence["list"].as_str(),
            f[0].evidence["topic_id"].as_str()
        ),
        (Some("InitializingTopics"), Some(AUDIT))
    );
}

#[test]
fn near_misses_load() {
    let cases = [
        // The coordinator's own shape (the scenario's record alone).
        None,
        // One id in each list: two maps, one key each.
        Some(Some(json!({
            "initializingTopics": [topic(ORDERS, "orders")],
            "initializedTopics": [topic(ORDERS, "orders")],
        }))),
        // Twice in DeletingTopics: collected into a set.
        Some(Some(json!({
            "deletingTopics": [{"topicId": ORDERS, "topicName": "orders"}, {"topicId": ORDERS, "topicName": "orders"}],
        }))),
        // Two ids, one entry each.
        Some(Some(
            json!({"initializedTopics": [topic(ORDERS, "orders"), topic(AUDIT, "audit")]}),
        )),
        // A tombstone.
        Some(None),
    ];
    for c in cases {
        let l = match c.clone() {
            None => {
                let mut l = GroupLog::new();
                sc::share_group(&mut l, "sg");
                l
            }
            Some(v) => log(v),
        };
        let f = load_failures(&l);
        assert!(f.is_empty(), "{c:?}: {f:#?}");
    }
}

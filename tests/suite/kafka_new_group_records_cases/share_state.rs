//! `__share_group_state` (the share coordinator): `ShareCoordinatorRecordSerde`, its load
//! through `CoordinatorLoaderImpl`, `ShareCoordinatorShard.replay`, and
//! `kafka-dump-log --share-group-state-decoder` (`DumpLogSegments.ShareGroupStateMessageParser`).

use super::{FOO, dump_records};
use klogscan::finding::{Finding, Kind, Severity};
use klogscan::partition::scan::ScanOptions;
use klogscan::pipeline::scan;
use klogscan::testkit::groups::share_record;
use klogscan::testkit::{Batch, PartitionBuilder, Producer, Rec};
use serde_json::{Value, json};

type Raw = (Vec<u8>, Option<Vec<u8>>);

fn key() -> Value {
    json!({"groupId": "gs1", "topicId": FOO, "partition": 0})
}

fn snapshot(epoch: i32, start: i64) -> Raw {
    share_record(
        0,
        key(),
        Some((
            0,
            json!({"snapshotEpoch": epoch, "stateEpoch": 0, "leaderEpoch": 3,
        "startOffset": start, "deliveryCompleteCount": 2, "createTimestamp": 10, "writeTimestamp": 11,
        "stateBatches": [{"firstOffset": start, "lastOffset": start + 9, "deliveryState": 2, "deliveryCount": 1}]}),
        )),
    )
}

fn update(epoch: i32, start: i64) -> Raw {
    share_record(
        1,
        key(),
        Some((
            0,
            json!({"snapshotEpoch": epoch, "leaderEpoch": 3, "startOffset": start,
        "stateBatches": [{"firstOffset": start, "lastOffset": start, "deliveryState": 0, "deliveryCount": 1}]}),
        )),
    )
}

/// `records` as `__share_group_state-0` (one batch); the dump of its segment and the
/// scan's findings of at least `warning`.
fn write(records: Vec<Raw>) -> (Vec<(String, Option<String>)>, Vec<Finding>) {
    let dir = tempfile::tempdir().unwrap();
    let mut p = PartitionBuilder::new("__share_group_state", 0);
    let mut b = Batch::new(Producer::PLAIN);
    for (k, v) in &records {
        b = b.record(match v {
            Some(v) => Rec::kv(k, v),
            None => Rec::tombstone(k),
        });
    }
    p.append(b);
    p.write(dir.path()).unwrap();
    let seg = dir
        .path()
        .join("__share_group_state-0/00000000000000000000.log");
    let lines = dump_records(&seg, true);
    let report = scan(&[dir.path().to_path_buf()], &ScanOptions::default());
    let serious = report
        .findings
        .into_iter()
        .filter(|f| f.severity >= Severity::Warning)
        .collect();
    (lines, serious)
}

/// `ShareCoordinatorRecordSerdeTest.testDeserialize`, `…WithTombstoneForValue` and
/// `…WithInvalidRecordType`, printed as `DumpLogSegmentsTest.testShareGroupStateMessageParser`
/// expects: a snapshot (its tagged `deliveryCompleteCount` printed, not at its default -1),
/// an update, a snapshot tombstone (`ShareCoordinatorRecordHelpers.newShareStateTombstoneRecord`
/// writes a ShareSnapshot key) and an unknown type. `ShareCoordinatorShardTest.testReplayWithShareSnapshot`
/// and `testDeleteStateSuccess`: such a log loads; klogscan reports nothing of weight.
#[test]
fn share_state_records_dump_and_a_healthy_log_is_clean() {
    let tomb = (snapshot(0, 0).0, None);
    let (lines, serious) = write(vec![
        snapshot(0, 0),
        update(0, 10),
        snapshot(1, 11),
        tomb,
        (vec![0, 255, 1], Some(vec![0; 8])),
    ]);
    let k =
        r#"{"type":"0","data":{"groupId":"gs1","topicId":"AAAAAAAAAAAAAAAAAAAAAQ","partition":0}}"#;
    assert_eq!(lines[0].0, k);
    let v: Value = serde_json::from_str(lines[0].1.as_deref().unwrap()).unwrap();
    assert_eq!(v["version"], "0");
    assert_eq!(v["data"]["deliveryCompleteCount"], 2);
    assert_eq!(
        v["data"]["stateBatches"][0],
        json!({"firstOffset": 0, "lastOffset": 9, "deliveryState": 2, "deliveryCount": 1})
    );
    let u: Value = serde_json::from_str(lines[1].1.as_deref().unwrap()).unwrap();
    assert!(lines[1].0.starts_with(r#"{"type":"1","#), "{}", lines[1].0);
    assert_eq!(
        u["data"].get("deliveryCompleteCount"),
        None,
        "default -1 is not printed"
    );
    assert_eq!(
        (lines[3].0.as_str(), lines[3].1.as_deref()),
        (k, Some("<DELETE>"))
    );
    assert_eq!(
        lines[4],
        (
            "Unknown record type 255 at offset 4, skipping.".to_string(),
            None
        )
    );
    assert!(serious.is_empty(), "{serious:#?}");
}

/// `CoordinatorLoaderImplTest.testDeserializationErrorFailsTheLoading` with the share
/// coordinator's serde (`ShareCoordinatorRecordSerdeTest.testDeserializeWithInvalidValueBytes`:
/// a ShareSnapshot value cut short throws a plain `RuntimeException`): the share
/// coordinator's load of the partition fails, so the share groups whose state it holds
/// cannot be read or written. The dump shows the error; the scan should report it as it
/// does for `__consumer_offsets` (rule 32).
#[test]

fn an_undecodable_share_state_record_fails_the_share_coordinators_load() {
    let (k, _) = snapshot(0, 0);
    let (lines, serious) = write(vec![snapshot(0, 0), (k, Some(vec![0, 0, 0, 0]))]);
    assert!(lines[1].0.starts_with("Error at offset 1, skipping. Could not read record with version 0 from value's buffer due to"), "{lines:?}");
    assert!(
        serious
            .iter()
            .any(|f| f.severity >= Severity::Error && f.offset == Some(1)),
        "{serious:#?}"
    );
    let kinds: Vec<(Kind, Option<i64>)> = serious.iter().map(|f| (f.kind, f.offset)).collect();
    assert_eq!(kinds, [(Kind::ShareStateRecordUndecodable, Some(1))]);
}

/// `ShareCoordinatorShard.replay` → `handleShareUpdate` reads the value's leader epoch
/// without a null check: a ShareUpdate tombstone (the coordinator writes tombstones only
/// with a ShareSnapshot key, `ShareCoordinatorRecordHelpers.newShareStateTombstoneRecord`)
/// throws, and `CoordinatorLoaderImpl` fails the load on a record whose replay throws.
#[test]

fn a_share_update_tombstone_fails_the_share_coordinators_load() {
    let (k, _) = update(0, 0);
    let (lines, serious) = write(vec![snapshot(0, 0), (k, None)]);
    assert_eq!(lines[1].1.as_deref(), Some("<DELETE>"));
    assert!(
        serious
            .iter()
            .any(|f| f.severity >= Severity::Error && f.offset == Some(1)),
        "{serious:#?}"
    );
    let kinds: Vec<(Kind, Option<i64>)> = serious.iter().map(|f| (f.kind, f.offset)).collect();
    assert_eq!(kinds, [(Kind::ShareStateRecordUndecodable, Some(1))]);
}

/// A non-live copy (`-delete`) of `__share_group_state-0` with the same ShareUpdate
/// tombstone: no share coordinator loads it (`LogManager` loads no `-delete` directory as
/// the partition), so the finding stays (the bytes are what they are) but says no live
/// verdict — its broker text names the copy, and no client reads it. The live twin is
/// [`a_share_update_tombstone_fails_the_share_coordinators_load`].
#[test]
fn a_non_live_copy_of_the_share_state_log_gives_no_live_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let (k, _) = update(0, 0);
    let mut p = PartitionBuilder::new("__share_group_state", 0);
    p.append(
        Batch::new(Producer::PLAIN)
            .record(Rec::kv(snapshot(0, 0).0, snapshot(0, 0).1.unwrap()))
            .record(Rec::tombstone(k)),
    );
    p.write(dir.path()).unwrap();
    std::fs::rename(
        dir.path().join("__share_group_state-0"),
        dir.path()
            .join("__share_group_state-0.0123456789abcdef0123456789abcdef-delete"),
    )
    .unwrap();
    let report = scan(&[dir.path().to_path_buf()], &ScanOptions::default());
    let f: Vec<&Finding> = report
        .findings
        .iter()
        .filter(|f| f.kind == Kind::ShareStateRecordUndecodable)
        .collect();
    assert_eq!(f.len(), 1, "{:#?}", report.findings);
    assert!(
        f[0].broker_behaviour
            .starts_with("no share coordinator loads this copy"),
        "{}",
        f[0].broker_behaviour
    );
    assert!(
        f[0].client_error
            .as_deref()
            .is_some_and(|c| c.starts_with("none: no client reads this copy")),
        "{:?}",
        f[0].client_error
    );
}

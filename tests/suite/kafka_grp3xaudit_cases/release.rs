//! KAFKA-14869 decides a stated 3.x release's load (see the module doc).

use crate::kafka_groupaudit_cases::{FOO_ID, commit, current, group_epoch};
use crate::kafka_grpdeltaaudit_cases::subscriptions::{POISON, classic};
use crate::kafka_grpverdict_cases::{assert_certain, shape, unstated, verify_at, write};
use crate::kafka_quiet_cluster_cases::lines;
use klogscan::finding::Finding;
use klogscan::testkit::group_scenarios::Spec;
use serde_json::json;

/// The group of `subscriptions::classic`.
const G: &str = "groupId";

/// A consumer protocol subscription (version 0) to `foo`, no user data: one that reads.
const FOO: [u8; 15] = [
    0, 0, 0, 0, 0, 1, 0, 3, b'f', b'o', b'o', 0xff, 0xff, 0xff, 0xff,
];

const SCOPE: &str = "kafka_3_before_kafka_14869";

/// The only failure is every 4.x load's at `offset`, in its 4.x wording (no release decided
/// it).
fn assert_4x(f: &[Finding], offset: i64) {
    assert_eq!(
        shape(f),
        [(Some(offset), json!(null), json!(null))],
        "{:#?}",
        lines(f)
    );
    assert!(
        f[0].broker_behaviour.contains("Kafka 4.x"),
        "{}",
        f[0].broker_behaviour
    );
    assert!(!f[0].message.contains("--broker-version"));
}

/// A 3.x release without KAFKA-14869 throws at `offset` (3.x broker text, the partition
/// served without its groups).
fn assert_3x_throws(f: &[Finding], offset: i64, v: &str, kafka_message: &str) {
    assert_certain(f, offset, SCOPE, v, "KAFKA-14869");
    assert_eq!(f[0].evidence["kafka_message"], kafka_message);
    assert!(
        f[0].broker_behaviour.contains("Kafka ≤ 3.x"),
        "{}",
        f[0].broker_behaviour
    );
    assert!(!f[0].broker_behaviour.contains("NOT_COORDINATOR"));
}

/// A classic `consumer` group with a member (not simple), then a consumer group's epoch for
/// it (offset `n + 1`): "Group groupId is not a consumer group", a failure of every 4.x load
/// (`kafka_4`), after `n` offset commits (key 1, value version 3).
/// 3.0.0, 3.3.2, 3.4.0 (before KAFKA-14869): the first record of key version 3 is that one,
/// so the certain stop is there, in the 3.x wording; 3.4.1, 3.5.2: the record is skipped, no
/// failure at all; 3.6.0, 3.9.0 (the new coordinator may be configured), 2.8.0 and 4.2.0 and
/// no release: unchanged, the 4.x failure.
#[test]
fn a_kafka_4_failure_decided_by_a_3x_release() {
    let b = write(
        G,
        vec![
            commit(G, "foo", 0, 42),
            classic("consumer", &FOO),
            group_epoch(G, 3),
        ],
    );
    for v in ["3.0.0", "3.3.2", "3.4.0"] {
        let f = verify_at(&b, v);
        assert_3x_throws(&f, 2, v, "Unknown group metadata message version: 3");
        assert_eq!(f[0].evidence["key_version"], 3);
        assert_eq!(f[0].evidence["group_id"], G);
        assert_eq!(f[0].evidence["rejected_records"], 1);
    }
    for v in ["3.4.1", "3.5.2"] {
        assert_eq!(shape(&verify_at(&b, v)), []);
    }
    for v in ["2.8.0", "3.6.0", "3.9.0", "4.2.0"] {
        assert_4x(&verify_at(&b, v), 2);
    }
    assert_4x(&unstated(&b), 2);
}

/// Near miss: a consumer group record that every 4.x load replays (the group's epoch, offset
/// 0) before the same classic record and failing one. 3.3.2 stops at offset 0 — its first
/// record of key version 3 — not at the 4.x failure (offset 2), which it never reaches;
/// 3.5.0 skips both; no release: the 4.x failure alone.
#[test]
fn a_3x_load_before_kafka_14869_stops_at_its_first_new_key() {
    let b = write(
        G,
        vec![
            group_epoch(G, 1),
            classic("consumer", &FOO),
            group_epoch(G, 3),
        ],
    );
    assert_3x_throws(
        &verify_at(&b, "3.3.2"),
        0,
        "3.3.2",
        "Unknown group metadata message version: 3",
    );
    assert_eq!(shape(&verify_at(&b, "3.5.0")), []);
    assert_4x(&unstated(&b), 2);
    // Without any failing record: 3.3.2 still throws at the first consumer group record.
    let b = write(G, vec![commit(G, "foo", 0, 42), group_epoch(G, 1)]);
    assert_3x_throws(
        &verify_at(&b, "3.3.2"),
        1,
        "3.3.2",
        "Unknown group metadata message version: 3",
    );
    for v in ["3.4.1", "3.9.0", "4.0.0"] {
        assert_eq!(shape(&verify_at(&b, v)), [], "{v}");
    }
    assert_eq!(shape(&unstated(&b)), []);
}

/// An offset commit of value version 4 (what Kafka 4.1 and later write,
/// `GroupCoordinatorRecordHelpers.offsetCommitValueVersion`): 3.0.0–3.4.0 know versions 0–3
/// alone (`readOffsetMessageValue`: "Unknown offset message version: 4"); 3.4.1 (KIP-915's
/// second part) and every later release read it. Near miss: the same commit at value
/// version 3 fails no release.
#[test]
fn an_offset_commit_value_of_version_4_by_release() {
    let v4: Spec = (
        1,
        json!({"group": G, "topic": "foo", "partition": 0}),
        Some((
            4,
            json!({"offset": 42, "metadata": "", "commitTimestamp": 0, "leaderEpoch": -1, "topicId": FOO_ID}),
        )),
    );
    let b = write(G, vec![commit(G, "foo", 1, 7), v4]);
    let f = verify_at(&b, "3.2.3");
    assert_3x_throws(&f, 1, "3.2.3", "Unknown offset message version: 4");
    assert_eq!(f[0].evidence["value_version"], 4);
    for v in ["3.4.1", "3.7.0", "4.1.0"] {
        assert_eq!(shape(&verify_at(&b, v)), [], "{v}");
    }
    assert_eq!(shape(&unstated(&b)), []);
    let b = write(G, vec![commit(G, "foo", 1, 7), commit(G, "foo", 0, 42)]);
    assert_eq!(shape(&verify_at(&b, "3.2.3")), []);
}

/// A failure scoped before a 4.x fix at a consumer group record (KAFKA-19862: member B claims
/// foo-0 at epoch 12 while A holds it at 11, offset 1): 3.1.2 stops at A's record (offset 0,
/// its first of key version 8); 3.5.1 skips both; 3.8.0 (new coordinator possible) and no
/// release: the scoped failure, unchanged.
#[test]
fn a_scoped_4x_failure_decided_by_a_3x_release() {
    const C: &str = "fooup";
    let b = write(
        C,
        vec![
            current(C, "memberIdA", 11, 10, 0, &[(FOO_ID, &[0])]),
            current(C, "memberIdB", 12, 11, 0, &[(FOO_ID, &[0])]),
        ],
    );
    let f = verify_at(&b, "3.1.2");
    assert_3x_throws(&f, 0, "3.1.2", "Unknown group metadata message version: 8");
    assert_eq!(f[0].evidence["rejected_records"], 1);
    assert_eq!(shape(&verify_at(&b, "3.5.1")), []);
    let scoped = [(Some(1), json!("kafka_4_before_kafka_19862"), json!(null))];
    assert_eq!(shape(&verify_at(&b, "3.8.0")), scoped);
    assert_eq!(shape(&unstated(&b)), scoped);
}

/// A failure every 3.x load meets (KAFKA-20570's malformed subscription, classic record at
/// offset 1) after a consumer group record (offset 0): 3.3.2 stops at offset 0 and never
/// reaches the subscription; 3.4.1 skips offset 0 and throws at the subscription (certain,
/// without KAFKA-20570); no release: the subscription's scoped failure alone (4.x replays
/// offset 0).
#[test]
fn a_3x_failure_after_a_new_key_by_release() {
    let b = write(G, vec![group_epoch(G, 1), classic("consumer", &POISON)]);
    assert_3x_throws(
        &verify_at(&b, "3.3.2"),
        0,
        "3.3.2",
        "Unknown group metadata message version: 3",
    );
    assert_certain(
        &verify_at(&b, "3.4.1"),
        1,
        "kafka_3_and_4_before_kafka_20570",
        "3.4.1",
        "KAFKA-20570",
    );
    let scoped = [(
        Some(1),
        json!("kafka_3_and_4_before_kafka_20570"),
        json!(null),
    )];
    assert_eq!(shape(&unstated(&b)), scoped);
}

/// The consumer verdicts of a group whose offsets partition a stated release cannot load are
/// qualified by that release's stop (`cluster::consumers`, `load_failure_of`): a consumer
/// group's epoch (offset 0) and its commit of orders-0 at 12, past the log's end (10).
/// 3.3.2: the load stops at offset 0, so the beyond-end verdict is a warning naming that
/// `group_load_failure`; 3.4.1 and no release: nothing stops the load, an error.
#[test]
fn a_3x_stop_qualifies_the_consumer_verdicts() {
    use crate::consumers::{Cluster, offsets_partition};
    use klogscan::finding::{Kind, Severity};
    use klogscan::partition::scan::ScanOptions;
    use klogscan::testkit::group_scenarios::GroupLog;
    use klogscan::testkit::{Batch, PartitionBuilder, Producer};
    let mut p = PartitionBuilder::new("orders", 0);
    p.append(Batch::new(Producer::PLAIN).records(10));
    let mut log = GroupLog::new();
    log.batch(vec![group_epoch("g", 1)]);
    log.batch(vec![commit("g", "orders", 0, 12)]);
    let c = Cluster::new(vec![p], &log, offsets_partition("g"), &[("orders", 0, 12)]);
    let run = |v: Option<&str>| {
        let mut opts = ScanOptions::default();
        opts.broker_version = v.map(|v| v.parse().unwrap());
        let inv = klogscan::discover::layout::discover(&[c.path().to_path_buf()]);
        klogscan::pipeline::analyse(&inv, &opts).findings
    };
    let f = run(Some("3.3.2"));
    let stop: Vec<&Finding> = f
        .iter()
        .filter(|f| f.kind == Kind::GroupLoadFailure)
        .collect();
    assert_eq!(
        shape(&stop.iter().map(|f| (*f).clone()).collect::<Vec<_>>()),
        [(Some(0), json!(SCOPE), json!("3.3.2"))]
    );
    let beyond: Vec<&Finding> = f
        .iter()
        .filter(|f| f.kind == Kind::CommittedOffsetBeyondLogEnd)
        .collect();
    assert_eq!(beyond.len(), 1, "{:#?}", lines(f.iter()));
    assert_eq!(beyond[0].severity, Severity::Warning);
    assert_eq!(
        beyond[0].evidence["coordinator_load_fails"],
        stop[0].id.as_str()
    );
    for v in [Some("3.4.1"), None] {
        let f = run(v);
        assert!(f.iter().all(|f| f.kind != Kind::GroupLoadFailure), "{v:?}");
        let beyond: Vec<&Finding> = f
            .iter()
            .filter(|f| f.kind == Kind::CommittedOffsetBeyondLogEnd)
            .collect();
        assert_eq!(beyond.len(), 1, "{v:?}");
        assert_eq!(beyond[0].severity, Severity::Error, "{v:?}");
    }
}

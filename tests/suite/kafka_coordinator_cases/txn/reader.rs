//! What `TransactionLog.readTxnRecordValue` refuses in a value that decodes by its schema:
//! each refusal throws, and `TransactionStateManager.loadTransactionMetadata`'s handler ends
//! the load there (the ids keep the values read before it; a later id is unknown).

use super::*;

/// `a` Ongoing at offset 0, `b` with value `v` at 1, `c` Empty at 2: the view a load
/// leaves, and the anomalies of the scan.
fn load_around(v: &TxnValue) -> (CoordinatorView, ScanReport) {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        0,
        vec![
            val("a", &at(1, 0, ONGOING).partitions(&[("orders", &[0])])),
            val("b", v),
            val("c", &at(3, 0, EMPTY)),
        ],
    );
    (load_view(d.path()), scan(d.path()))
}

/// The load stops at `b` (offset 1): `a` loaded, `b` and `c` unknown, one error naming
/// `why`, one `undecodable_record` at offset 1. Returns that finding.
fn stops_at_b(v: &TxnValue, why: &str) -> Finding {
    let (view, r) = load_around(v);
    let ids: Vec<&String> = view.ids.keys().collect();
    assert_eq!(ids, ["a"], "{v:?}");
    assert_eq!(view.load_stops.len(), 1, "{v:?}");
    assert_eq!(view.load_stops[0].1, 1);
    assert_eq!(view.errors.len(), 1, "{:?}", view.errors);
    assert!(view.errors[0].1.contains(why), "{why}: {:?}", view.errors);
    assert_eq!(anomalies(&r), [("undecodable_record".to_string(), 1)]);
    let f = r
        .findings
        .into_iter()
        .find(|f| f.kind == Kind::TransactionStateAnomaly)
        .unwrap();
    assert_eq!(f.severity, Severity::Error);
    assert!(f.message.contains(why), "{}", f.message);
    f
}

/// The load reads `b` and goes on: every id loaded, no error, no anomaly.
fn loads_b(v: &TxnValue) -> CoordinatorTxn {
    let (view, r) = load_around(v);
    let ids: Vec<&String> = view.ids.keys().collect();
    assert_eq!(ids, ["a", "b", "c"], "{v:?}: {:?}", view.errors);
    assert!(view.errors.is_empty() && view.load_stops.is_empty());
    assert_eq!(anomalies(&r), []);
    view.ids["b"].clone()
}

/// `TransactionLog.valueToBytes` writes a null partition list for Empty only (an empty one
/// for every other state, a Complete record's included), and `readTxnRecordValue` reads
/// the list of every state but Empty: a null list there fails (a NullPointerException).
/// The generated `TransactionLogValue` reader refuses a null topic or a null partition id
/// array in any state, Empty included (neither field is nullable), flexible or not.
/// Negative twins: what Kafka writes — Empty with a null list, Complete* with an empty
/// one — and an Empty value with an empty list load clean.
#[test]
fn null_partitions_where_kafka_reads_them_stop_the_load() {
    let tp: &[(&str, &[i32])] = &[("orders", &[0])];
    let null_list = "a null partition list";
    for status in [
        ONGOING,
        PREPARE_COMMIT,
        PREPARE_ABORT,
        COMPLETE_COMMIT,
        COMPLETE_ABORT,
    ] {
        stops_at_b(&at(2, 0, status).null_partitions(), null_list);
        stops_at_b(&at(2, 0, status).null_partitions().v1(-1, -1, 2), null_list);
    }
    let null_topic = "non-nullable field topic was serialized as null";
    let null_ids = "non-nullable field partitionIds was serialized as null";
    for status in [EMPTY, ONGOING, PREPARE_COMMIT] {
        for flexible in [false, true] {
            let v = |v: TxnValue| if flexible { v.v1(-1, -1, 0) } else { v };
            stops_at_b(&v(at(2, 0, status).partitions(tp).null_topic()), null_topic);
            stops_at_b(
                &v(at(2, 0, status).partitions(tp).null_partition_ids()),
                null_ids,
            );
        }
    }
    let empty = at(2, 0, EMPTY);
    assert_eq!(empty.partitions, None);
    assert_eq!(loads_b(&empty).state, TxnState::Empty);
    for status in [COMPLETE_COMMIT, COMPLETE_ABORT] {
        let done = at(2, 0, status);
        assert_eq!(done.partitions, Some(vec![]));
        assert!(loads_b(&done).partitions.is_empty());
        assert!(loads_b(&done.v1(-1, -1, 2)).partitions.is_empty());
    }
    assert!(
        loads_b(&at(2, 0, EMPTY).partitions(&[]))
            .partitions
            .is_empty()
    );
}

/// `TransactionLog.readTxnRecordValue` maps ClientTransactionVersion through
/// `TransactionVersion.fromFeatureLevel`, which throws (IllegalArgumentException, from
/// `Features.fromFeatureLevel`) for a level it does not know: `TV_0`–`TV_2` are all there
/// are, in every release and in trunk. A level outside them is a newer broker's value or
/// corruption, and the load stops there. Negative twins: levels 0, 1 and 2 load.
#[test]
fn an_unknown_client_transaction_version_stops_the_load() {
    for level in [3, 7, i16::MAX, -1] {
        let v = at(2, 0, COMPLETE_COMMIT).v1(-1, -1, level);
        let f = stops_at_b(&v, &format!("ClientTransactionVersion {level} "));
        assert!(
            f.message.contains("a newer broker's value, or corruption"),
            "{}",
            f.message
        );
        let fix = f.remediation.unwrap();
        assert!(fix.contains("newer broker's transaction version"), "{fix}");
    }
    for level in [0, 1, 2] {
        let b = loads_b(&at(2, 0, COMPLETE_COMMIT).v1(-1, -1, level));
        assert_eq!(b.client_transaction_version, level);
    }
}

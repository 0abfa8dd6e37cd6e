//! `ControlRecordTypeTest`: the key of a control record as `ControlRecordType.parse` reads
//! it — in a data partition's marker (the load's producer-state update) and in the KRaft
//! metadata log (`RecordsIterator.decodeControlRecord`).

use super::{clean, crashed, key, marker_case, raft_control, txn, txn_then_control, value, write};
use crate::kafka_quiet_kraft_cases::{kraft_version, leader_change, voters_record};
use klogscan::finding::Kind;
use klogscan::testkit::metadata::{snapshot_footer_value, snapshot_header_value};
use klogscan::testkit::{Batch, PartitionBuilder, Producer};

/// `ControlRecordTypeTest.testParseUnknownType`: key version 0, type 337 parses as UNKNOWN,
/// which readers ignore. On disk: a control batch of type 337 without a producer id in
/// `orders-0` — the load does not decode it (`LogSegment.updateProducerState` only takes
/// batches with a producer id), consumers skip control records: nothing is raised, the
/// load is clean, and `dump` prints `controlType: UNKNOWN(337)` as `DumpLogSegments` does.
/// Near miss: the same batch with producer 9809 — its producer-state update calls
/// `EndTransactionMarker.deserialize`, which refuses UNKNOWN (`IllegalArgumentException`):
/// the load fails.
#[test]
fn an_unknown_control_type_without_a_producer_id_is_ignored() {
    let w = write(
        crashed(),
        txn_then_control(Producer::PLAIN, key(0, 337, &[]), Some(vec![])),
    );
    w.assert_quiet();
    let lines = w.dump_records();
    assert!(
        lines[2].ends_with(" controlType: UNKNOWN(337)"),
        "{lines:#?}"
    );
    let near = marker_case(key(0, 337, &[]), Some(vec![]));
    assert_eq!(
        near.load_failure(),
        Some(("IllegalArgumentException".to_string(), Some(2)))
    );
}

/// `ControlRecordTypeTest.testParseUnknownVersion`: a key of version 5 with four bytes after
/// the type is read as version 0 — ABORT. On disk: the ABORT of 9809's transaction 0–1 with
/// that key aborts it (the replay's aborted transaction 0–2), `dump` prints `endTxnMarker:
/// ABORT`, and nothing is raised. Near miss: key version -1 is `InvalidRecordException`
/// ("may indicate data corruption"): the recovery keeps the batch and truncates after it,
/// and the final rebuild throws.
#[test]
fn a_newer_key_version_is_read_as_version_0() {
    let w = marker_case(key(5, 0, &23432i32.to_be_bytes()), value(0, 3, &[]));
    w.assert_quiet();
    let a = crate::common::cases::aborted(&w.state());
    assert_eq!(
        a.iter().map(|a| (a.0, a.1, a.2)).collect::<Vec<_>>(),
        [(9809, 0, 2)]
    );
    let lines = w.dump_records();
    assert!(
        lines[2].ends_with(" endTxnMarker: ABORT coordinatorEpoch: 3"),
        "{lines:#?}"
    );
    let near = marker_case(key(-1, 0, &[]), value(0, 3, &[]));
    assert_eq!(near.truncation(), Some((3, Some(3))));
    assert_eq!(
        near.load_failure(),
        Some(("InvalidRecordException".to_string(), Some(2)))
    );
    let m = near.messages(Kind::InvalidBatch);
    assert!(
        m.len() == 1 && m[0].contains("key.version at byte 160: value -1 is out of range"),
        "{m:#?}"
    );
}

/// `__cluster_metadata-0` holding one control batch per KRaft type (LEADER_CHANGE,
/// SNAPSHOT_HEADER, KRAFT_VERSION, KRAFT_VOTERS, SNAPSHOT_FOOTER) at epoch 5, then one of
/// type `last` if given.
fn metadata_log(last: Option<i16>) -> PartitionBuilder {
    let mut p = PartitionBuilder::new("__cluster_metadata", 0);
    let mut records = vec![
        (2, leader_change(1, &[1], &[1])),
        (3, snapshot_header_value(1_700_000_000_000)),
        (5, kraft_version(1)),
        (6, voters_record(&[1])),
        (4, snapshot_footer_value()),
    ];
    records.extend(last.map(|t| (t, snapshot_footer_value())));
    for (i, (type_id, value)) in records.into_iter().enumerate() {
        p.append_spec(raft_control(i as i64, 5, type_id, value));
    }
    p
}

/// `ControlRecordTypeTest.testRoundTrip`: every type written at key version 0 parses back
/// as itself. On disk: ABORT and COMMIT of two transactions in `orders-0`, and a control
/// batch of each KRaft type in the metadata log — `dump` names each type as
/// `DumpLogSegments` does, and neither partition raises anything. Near miss: type 7 in the
/// metadata log parses as UNKNOWN (`controlType: UNKNOWN(7)`), which
/// `RecordsIterator.decodeControlRecord` refuses (`IllegalArgumentException`):
/// `metadata_log_unreadable`.
#[test]
fn every_control_type_reads_back_as_itself() {
    let mut p = PartitionBuilder::new(super::TOPIC, 0);
    p.append(Batch::new(txn()).records(1));
    p.abort(txn(), 0);
    p.append(Batch::new(txn()).records(1));
    p.commit(txn(), 0);
    let w = write(clean(), p);
    w.assert_quiet();
    let lines = w.dump_records();
    assert!(lines[1].contains(" endTxnMarker: ABORT "), "{lines:#?}");
    assert!(lines[3].contains(" endTxnMarker: COMMIT "), "{lines:#?}");
    let w = write(clean(), metadata_log(None));
    w.assert_quiet();
    let lines = w.dump_records();
    let names = [
        " LeaderChange: {",
        " SnapshotHeader {",
        " KRaftVersion {",
        " KRaftVoters {",
        " SnapshotFooter {",
    ];
    for (line, name) in lines.iter().zip(names) {
        assert!(line.contains(name), "{name}: {lines:#?}");
    }
    let near = write(clean(), metadata_log(Some(7)));
    let lines = near.dump_records();
    assert!(lines[5].ends_with(" controlType: UNKNOWN(7)"), "{lines:#?}");
    let m = near.messages(Kind::MetadataLogUnreadable);
    assert!(m.len() == 1 && m[0].contains("UNKNOWN (7)"), "{m:#?}");
}

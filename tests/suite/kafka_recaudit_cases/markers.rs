//! `EndTransactionMarkerTest`: the value of a COMMIT/ABORT record as the load's
//! producer-state update decodes it (`EndTransactionMarker.deserialize`).

use super::{clean, key, marker_case, txn, value, write};
use klogscan::finding::Kind;
use klogscan::testkit::{Batch, PartitionBuilder};

/// The load's answer to a marker at offset 2 whose record does not decode: recovery keeps
/// the batch and truncates after it (the plain record at 3 is removed), and the next
/// replay that reads it throws `InvalidRecordException`; `scan` reports the batch.
fn assert_kept_then_thrown(w: &super::Written, needle: &str) {
    assert_eq!(w.truncation(), Some((3, Some(3))));
    assert_eq!(
        w.load_failure(),
        Some(("InvalidRecordException".to_string(), Some(2)))
    );
    let m = w.messages(Kind::InvalidBatch);
    assert!(m.len() == 1 && m[0].contains(needle), "{m:#?}");
}

/// `EndTransactionMarkerTest.testUnknownControlTypeNotAllowed` and
/// `EndTransactionMarkerTest.testCannotDeserializeUnknownControlType`: a marker of type
/// UNKNOWN is refused before its value is read (`ensureTransactionMarkerControlType`:
/// `IllegalArgumentException`, even for an empty value). On disk: a control batch of
/// producer 9809 whose key says type 337 (or UNKNOWN's own id, -1) and whose value is
/// empty. The recovery's producer-state update throws `IllegalArgumentException`, which
/// `LogSegment.recover` does not catch: nothing is truncated and the load fails at offset 2.
/// Near miss: the same empty value under COMMIT throws `InvalidRecordException` instead,
/// which the recovery catches (it keeps the batch, truncates the record after it) before
/// the final rebuild throws it again.
#[test]
fn an_unknown_type_is_refused_before_its_value_is_read() {
    for type_id in [337, -1] {
        let w = marker_case(key(0, type_id, &[]), Some(vec![]));
        assert_eq!(w.truncation(), None, "type {type_id}");
        assert_eq!(
            w.load_failure(),
            Some(("IllegalArgumentException".to_string(), Some(2))),
            "type {type_id}"
        );
        let m = w.messages(Kind::InvalidBatch);
        assert!(
            m.len() == 1 && m[0].contains(&format!("control record of type {type_id}")),
            "{m:#?}"
        );
    }
    let near = marker_case(key(0, 1, &[]), Some(vec![]));
    assert_kept_then_thrown(&near, "needs 6 bytes but only 0 remain");
}

/// `EndTransactionMarkerTest.testIllegalNegativeVersion`: an ABORT value of version -1
/// (the test's two bytes; and six, with a coordinator epoch) is `InvalidRecordException`
/// "may indicate data corruption". On disk the recovery keeps the ABORT and truncates
/// after it, and the load fails in the final rebuild. Near miss: version 0 — the
/// transaction 0–1 is aborted, the load is clean.
#[test]
fn a_negative_marker_version_is_invalid() {
    let w = marker_case(key(0, 0, &[]), Some(vec![0xff, 0xff]));
    assert_kept_then_thrown(&w, "needs 6 bytes but only 2 remain");
    let w = marker_case(key(0, 0, &[]), value(-1, 5, &[]));
    assert_kept_then_thrown(&w, "version at byte 160: value -1 is out of range");
    let near = marker_case(key(0, 0, &[]), value(0, 5, &[]));
    near.assert_quiet();
    let a = crate::common::cases::aborted(&near.state());
    assert_eq!(
        a.iter().map(|a| (a.0, a.1, a.2)).collect::<Vec<_>>(),
        [(9809, 0, 2)]
    );
}

/// `EndTransactionMarkerTest.testNotEnoughBytes`: a COMMIT value shorter than 6 bytes is
/// `InvalidRecordException` (kept by the recovery, thrown by the final rebuild). A null
/// value is not checked at all: `deserializeValue` reads its size and throws
/// `NullPointerException`, which the recovery does not catch — nothing is truncated and
/// the load fails in the recovery itself (klogscan took it for the short value before).
/// Near miss: the 6 bytes of a version-0 value commit the transaction (last stable offset
/// 4) and the load is clean.
#[test]
fn a_marker_value_under_six_bytes_is_invalid_and_a_null_one_fails_the_load() {
    for len in [0usize, 5] {
        let w = marker_case(key(0, 1, &[]), Some(vec![0; len]));
        assert_kept_then_thrown(&w, &format!("needs 6 bytes but only {len} remain"));
    }
    let null = marker_case(key(0, 1, &[]), None);
    assert_eq!(null.truncation(), None);
    assert_eq!(
        null.load_failure(),
        Some(("NullPointerException".to_string(), Some(2)))
    );
    let m = null.messages(Kind::InvalidBatch);
    assert!(m.len() == 1 && m[0].contains("null value"), "{m:#?}");
    let near = marker_case(key(0, 1, &[]), value(0, 0, &[]));
    near.assert_quiet();
    assert_eq!(crate::common::cases::lso(&near.state()), Some(4));
}

/// A null key is read the same way (`ControlRecordType.parseTypeId` reads its size):
/// `NullPointerException`, not caught by the recovery. Near miss: a key of 3 bytes is
/// `InvalidRecordException` (kept, then thrown by the final rebuild).
#[test]
fn a_null_marker_key_fails_the_load_where_a_short_one_is_kept() {
    let w = marker_case(None, value(0, 0, &[]));
    assert_eq!(w.truncation(), None);
    assert_eq!(
        w.load_failure(),
        Some(("NullPointerException".to_string(), Some(2)))
    );
    let near = marker_case(Some(vec![0, 0, 1]), value(0, 0, &[]));
    assert_kept_then_thrown(&near, "needs 4 bytes but only 3 remain");
    // `dump --print-data-log`: kafka-dump-log's deep iteration throws the same
    // `NullPointerException` at the marker and stops; klogscan's dump never aborts on bad
    // bytes (src/dump/log): the record's metadata, the error on stderr, the dump goes on
    // with offset 3, exit 1. Near miss: a COMMIT key prints the marker, exit 0.
    let dump = |w: &super::Written| {
        let seg = w.m.dir.join(format!("{:020}.log", 0));
        let args = [
            "dump".as_ref(),
            seg.as_os_str(),
            "--print-data-log".as_ref(),
        ];
        crate::common::run::klogscan(&args, None, 60)
    };
    let run = dump(&w);
    assert!(
        run.out.contains("| offset: 2 ") && run.out.contains("| offset: 3 "),
        "{}",
        run.out
    );
    assert!(
        run.err.contains("Error in batch at position 99 of ") && run.err.contains("null key"),
        "{}",
        run.err
    );
    assert_eq!(run.status.code(), Some(1));
    let run = dump(&marker_case(key(0, 1, &[]), value(0, 0, &[])));
    assert!(
        run.out
            .contains(" endTxnMarker: COMMIT coordinatorEpoch: 0"),
        "{}",
        run.out
    );
    assert_eq!((run.err.as_str(), run.status.code()), ("", Some(0)));
}

/// `EndTransactionMarkerTest.testSerde`: a COMMIT of coordinator epoch 79 reads back 79.
/// On disk: the partition's COMMIT at 2 — `dump` prints `endTxnMarker: COMMIT
/// coordinatorEpoch: 79`, the producer's state keeps 79, nothing is raised. Near miss: the
/// producer's next transaction committed at coordinator epoch 78, which the leader refuses
/// (`ProducerAppendInfo.checkCoordinatorEpoch`: `TransactionCoordinatorFencedException`)
/// — `coordinator_epoch_regression`.
#[test]
fn a_markers_coordinator_epoch_is_read_back() {
    let two = |second: Option<i32>| {
        let mut p = PartitionBuilder::new(super::TOPIC, 0);
        p.append(Batch::new(txn()).records(2));
        p.commit(txn(), 79);
        if let Some(e) = second {
            p.append(Batch::new(txn()).records(1));
            p.commit(txn(), e);
        }
        write(clean(), p)
    };
    let w = two(None);
    w.assert_quiet();
    let lines = w.dump_records();
    assert!(
        lines[2].ends_with(" endTxnMarker: COMMIT coordinatorEpoch: 79"),
        "{lines:#?}"
    );
    assert_eq!(
        crate::common::cases::state(&w.state(), 9809).coordinator_epoch,
        79
    );
    assert!(w.messages(Kind::CoordinatorEpochRegression).is_empty());
    let near = two(Some(78));
    let m = near.messages(Kind::CoordinatorEpochRegression);
    assert_eq!(m.len(), 1, "{m:#?}");
}

/// `EndTransactionMarkerTest.testDeserializeNewerVersion`: a value of version 5 with two
/// bytes after the coordinator epoch is read as version 0 — epoch 79, the rest ignored. On
/// disk the COMMIT commits (last stable offset 4), `dump` prints coordinator epoch 79, and
/// the load is clean. Near miss: version 5 in a value of 4 bytes — the size check comes
/// first, whatever the version: `InvalidRecordException`.
#[test]
fn a_newer_marker_version_is_read_as_version_0() {
    let w = marker_case(key(0, 1, &[]), value(5, 79, &[0, 0]));
    w.assert_quiet();
    assert_eq!(crate::common::cases::lso(&w.state()), Some(4));
    let lines = w.dump_records();
    assert!(
        lines[2].ends_with(" endTxnMarker: COMMIT coordinatorEpoch: 79"),
        "{lines:#?}"
    );
    let near = marker_case(key(0, 1, &[]), Some(vec![0, 5, 0, 0]));
    assert_kept_then_thrown(&near, "needs 6 bytes but only 4 remain");
}

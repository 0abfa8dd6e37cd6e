//! `__transaction_state`: `TransactionStateManagerTest` (partition loading),
//! `TransactionLogTest` (value versions, tagged fields, tombstones, unknown keys) and the
//! on-disk shapes of `TransactionMetadataTest`'s transitions.

use super::*;
use klogscan::cluster::coordinator::{CoordinatorTxn, CoordinatorView};
use klogscan::finding::Kind;
use klogscan::read::format::txnlog::TxnState;
use klogscan::testkit::txnlog::{TxnValue, key, key_version, state::*};
use klogscan::testkit::{Batch, PartitionBuilder, Producer, Rec};
use std::collections::BTreeSet;

mod reader;
mod releases;
mod retries;

/// The coordinator's append time of every record written here: a minute before `NOW`.
const T: i64 = NOW - 60_000;
const PARTITION: i32 = 7;

type Raw = (Vec<u8>, Option<Vec<u8>>);

fn val(id: &str, v: &TxnValue) -> Raw {
    (key(id), Some(v.encode()))
}

/// `records` as one batch of `__transaction_state-7` from offset `start` (Kafka's tests
/// build one `MemoryRecords.withRecords` batch the same way).
fn write(dir: &Path, start: i64, records: Vec<Raw>) {
    write_batches_from(dir, start, vec![records]);
}

/// `batches` of `__transaction_state-7`, one after the other from offset `start`.
fn write_batches_from(dir: &Path, start: i64, batches: Vec<Vec<Raw>>) {
    let mut p = PartitionBuilder::new("__transaction_state", PARTITION)
        .start_offset(start)
        .start_time(T);
    for records in batches {
        let mut b = Batch::new(Producer::PLAIN);
        for (k, v) in records {
            b = b.record(match v {
                Some(v) => Rec::kv(k, v),
                None => Rec::tombstone(k),
            });
        }
        p.append(b);
    }
    p.write(dir).unwrap();
}

/// The coordinator's view of `dir`: each transactional id's latest value, as
/// `TransactionStateManager.loadTransactionMetadata` keeps it.
fn load_view(dir: &Path) -> CoordinatorView {
    let inv = request::discover(&[dir.to_path_buf()], &opts()).unwrap();
    CoordinatorView::load(&inv, &opts())
}

fn set(tps: &[(&str, &[i32])]) -> BTreeSet<(String, i32)> {
    tps.iter()
        .flat_map(|(t, ps)| ps.iter().map(move |p| (t.to_string(), *p)))
        .collect()
}

fn parts(t: &CoordinatorTxn) -> BTreeSet<(String, i32)> {
    t.partitions.iter().cloned().collect()
}

/// `(sub-id, offset)` of every `transaction_state_anomaly`.
fn anomalies(r: &ScanReport) -> Vec<(String, i64)> {
    r.findings
        .iter()
        .filter(|f| f.kind == Kind::TransactionStateAnomaly)
        .map(|f| {
            (
                f.evidence["anomaly"].as_str().unwrap().to_string(),
                f.offset.unwrap(),
            )
        })
        .collect()
}

fn at(pid: i64, epoch: i16, status: u8) -> TxnValue {
    TxnValue::new(pid, epoch, status).times(T, T)
}

/// `TransactionStateManagerTest.testLoadAndRemoveTransactionsForPartition`: two ids' traces
/// from offset 15 (any start offset works); each id loads as its latest value — "one" in
/// PrepareCommit with the five partitions its two Ongoing records added, "two" back to
/// Empty with none after Ongoing → PrepareAbort → CompleteAbort.
#[test]
fn load_and_remove_transactions_for_partition() {
    let d = tempfile::tempdir().unwrap();
    let p1: &[(&str, &[i32])] = &[("topic1", &[0, 1])];
    let p1b: &[(&str, &[i32])] = &[("topic1", &[0, 1]), ("topic2", &[0, 1, 2])];
    let p2: &[(&str, &[i32])] = &[("topic3", &[0, 1, 2])];
    let v = |pid, st, ps: &[(&str, &[i32])]| at(pid, 0, st).partitions(ps).v1(-1, -1, 0);
    write(
        d.path(),
        15,
        vec![
            val("one", &v(1, ONGOING, p1)),
            val("one", &v(1, ONGOING, p1b)),
            val("one", &v(1, PREPARE_COMMIT, p1b)),
            val("two", &v(2, ONGOING, p2)),
            val("two", &v(2, PREPARE_ABORT, p2)),
            val("two", &v(2, COMPLETE_ABORT, p2)),
            val("two", &v(2, EMPTY, &[])),
        ],
    );
    let view = load_view(d.path());
    assert_eq!(view.partitions_read, BTreeSet::from([PARTITION]));
    assert!(view.errors.is_empty() && view.unread.is_empty(), "{view:?}");
    assert_eq!(view.ids.len(), 2);
    let one = &view.ids["one"];
    assert_eq!(
        (
            one.state,
            one.producer_id,
            one.producer_epoch,
            one.source.offset
        ),
        (TxnState::PrepareCommit, 1, 0, 17)
    );
    assert_eq!(parts(one), set(p1b));
    let two = &view.ids["two"];
    assert_eq!(
        (two.state, two.producer_id, two.source.offset),
        (TxnState::Empty, 2, 21)
    );
    assert!(two.partitions.is_empty());
    assert!(one.tombstoned.is_none() && two.tombstoned.is_none());
    let r = scan(d.path());
    assert!(serious(&r).is_empty(), "{:#?}", serious(&r));
    assert_eq!(anomalies(&r), []);
}

/// `TransactionStateManagerTest.testIgnoreUnknownRecordType` and
/// `TransactionLogTest.testReadTxnRecordKeyCanReadUnknownMessage`: a record whose key has
/// version `Short.MAX_VALUE` (key and value both that message) is skipped, and the id
/// after it loads as written. klogscan notes the skipped record as an info
/// `unknown_key_version` anomaly and nothing more.
#[test]
fn unknown_record_type_is_ignored() {
    let d = tempfile::tempdir().unwrap();
    let unknown = key_version(i16::MAX, "");
    let ps: &[(&str, &[i32])] = &[("topic1", &[0, 1])];
    write(
        d.path(),
        0,
        vec![
            (unknown.clone(), Some(unknown)),
            val(
                "one",
                &at(1, 0, PREPARE_COMMIT).partitions(ps).v1(-1, -1, 0),
            ),
        ],
    );
    let view = load_view(d.path());
    assert!(view.errors.is_empty(), "{:?}", view.errors);
    assert_eq!(view.ids.keys().collect::<Vec<_>>(), ["one"]);
    let one = &view.ids["one"];
    assert_eq!(
        (one.state, one.producer_id, one.previous_producer_id),
        (TxnState::PrepareCommit, 1, -1)
    );
    assert_eq!((one.producer_epoch, one.timeout_ms), (0, 60_000));
    assert_eq!(parts(one), set(ps));
    let r = scan(d.path());
    assert!(serious(&r).is_empty(), "{:#?}", serious(&r));
    assert_eq!(anomalies(&r), [("unknown_key_version".to_string(), 0)]);
}

/// `TransactionStateManagerTest.testLoadTransactionMetadataWithCorruptedLog`: the log's
/// start offset is below its end but no record is left to read (on disk: the only
/// segment, empty, starts at the log end offset 10, as after retention removed every
/// record): the load ends with no transactional id and no error.
#[test]
fn load_of_a_log_with_no_record_left() {
    let d = tempfile::tempdir().unwrap();
    let pdir = d.path().join(format!("__transaction_state-{PARTITION}"));
    std::fs::create_dir_all(&pdir).unwrap();
    std::fs::write(pdir.join(format!("{:020}.log", 10)), b"").unwrap();
    let view = load_view(d.path());
    assert_eq!(view.partitions_read, BTreeSet::from([PARTITION]));
    assert!(view.ids.is_empty() && view.errors.is_empty() && view.unread.is_empty());
    let r = scan(d.path());
    assert!(serious(&r).is_empty(), "{:#?}", serious(&r));
    assert_eq!(anomalies(&r), []);
}

/// `TransactionLogTest.shouldReadWriteMessages`: six ids in the six persisted states
/// (flexible values, as `valueToBytes` writes them under TV_2); each reads back with its
/// producer id, epoch, timeout, state, and the five partitions (none for Empty).
#[test]
fn read_write_messages() {
    let d = tempfile::tempdir().unwrap();
    let ps: &[(&str, &[i32])] = &[("topic1", &[0, 1]), ("topic2", &[0, 1, 2])];
    let ids = [
        ("zero", EMPTY, TxnState::Empty),
        ("one", ONGOING, TxnState::Ongoing),
        ("two", PREPARE_COMMIT, TxnState::PrepareCommit),
        ("three", COMPLETE_COMMIT, TxnState::CompleteCommit),
        ("four", PREPARE_ABORT, TxnState::PrepareAbort),
        ("five", COMPLETE_ABORT, TxnState::CompleteAbort),
    ];
    let records = ids
        .iter()
        .enumerate()
        .map(|(pid, (id, st, _))| {
            let v = at(pid as i64, 0, *st).timeout(1000).v1(-1, -1, 0);
            val(id, &if *st == EMPTY { v } else { v.partitions(ps) })
        })
        .collect();
    write(d.path(), 0, records);
    let view = load_view(d.path());
    assert_eq!(view.ids.len(), 6);
    for (pid, (id, _, state)) in ids.iter().enumerate() {
        let t = &view.ids[*id];
        assert_eq!(
            (t.producer_id, t.producer_epoch, t.timeout_ms, t.state),
            (pid as i64, 0, 1000, *state),
            "{id}"
        );
        let want = if *state == TxnState::Empty {
            BTreeSet::new()
        } else {
            set(ps)
        };
        assert_eq!(parts(t), want, "{id}");
    }
    assert_eq!(anomalies(&scan(d.path())), []);
}

/// `TransactionLogTest.testTransactionMetadataTombstoneParsing`, with the load's reading of
/// a tombstone (`TransactionStateManager.loadTransactionMetadata` removes the id): a
/// completed id then its tombstone is removed (klogscan keeps the last value, marked
/// `tombstoned` at the tombstone's offset); a value after the tombstone brings the id back.
#[test]
fn tombstone_removes_the_id_and_a_later_value_restores_it() {
    let d = tempfile::tempdir().unwrap();
    let done = val("id", &at(1, 0, COMPLETE_COMMIT));
    write(d.path(), 0, vec![done.clone(), (key("id"), None)]);
    let view = load_view(d.path());
    let t = &view.ids["id"];
    assert_eq!(t.state, TxnState::CompleteCommit);
    assert_eq!(t.tombstoned.as_ref().map(|s| s.offset), Some(1));
    assert_eq!(anomalies(&scan(d.path())), []);

    let d = tempfile::tempdir().unwrap();
    let back = val("id", &at(2, 0, EMPTY));
    write(d.path(), 0, vec![done, (key("id"), None), back]);
    let view = load_view(d.path());
    let t = &view.ids["id"];
    assert_eq!(
        (t.state, t.producer_id, t.source.offset),
        (TxnState::Empty, 2, 2)
    );
    assert!(t.tombstoned.is_none());
    assert_eq!(anomalies(&scan(d.path())), []);
}

/// `TransactionLogTest.testSerializeTransactionLogValueToHighestNonFlexibleVersion` and
/// `testSerializeTransactionLogValueToFlexibleVersion`: the same CompleteCommit written as
/// value version 0 (TV_0) and version 1 (TV_2, with the previous/next producer id and the
/// client's transaction version as tagged fields) loads the same; only version 1 carries
/// the tagged fields.
#[test]
fn non_flexible_and_flexible_values_load_the_same() {
    let d = tempfile::tempdir().unwrap();
    let v = TxnValue::new(1, 1, COMPLETE_COMMIT)
        .timeout(1000)
        .times(500, 500)
        .partitions(&[]);
    write(
        d.path(),
        0,
        vec![val("v0", &v), val("v1", &v.clone().v1(1, 1, 2))],
    );
    let view = load_view(d.path());
    for id in ["v0", "v1"] {
        let t = &view.ids[id];
        assert_eq!(
            (t.state, t.producer_id, t.producer_epoch, t.timeout_ms),
            (TxnState::CompleteCommit, 1, 1, 1000),
            "{id}"
        );
        assert_eq!((t.start_ms, t.last_update_ms), (500, 500), "{id}");
    }
    let (v0, v1) = (&view.ids["v0"], &view.ids["v1"]);
    assert_eq!(
        (
            v0.previous_producer_id,
            v0.next_producer_id,
            v0.client_transaction_version
        ),
        (-1, -1, 0)
    );
    assert_eq!(
        (
            v1.previous_producer_id,
            v1.next_producer_id,
            v1.client_transaction_version
        ),
        (1, 1, 2)
    );
    assert_eq!(anomalies(&scan(d.path())), []);
}

/// `TransactionLogTest.testDeserializeHighestSupportedTransactionLogValue`: a version-1
/// value without tagged fields.
#[test]
fn highest_supported_value_version() {
    let d = tempfile::tempdir().unwrap();
    let v = TxnValue::new(100, 50, COMPLETE_COMMIT)
        .times(1000, 750)
        .timeout(500)
        .partitions(&[("topic", &[0])])
        .v1(-1, -1, 0);
    write(d.path(), 0, vec![val("transactionId", &v)]);
    let view = load_view(d.path());
    let t = &view.ids["transactionId"];
    assert_eq!(
        (t.producer_id, t.producer_epoch, t.state),
        (100, 50, TxnState::CompleteCommit)
    );
    assert_eq!(
        (t.start_ms, t.last_update_ms, t.timeout_ms),
        (750, 1000, 500)
    );
    assert_eq!(parts(t), set(&[("topic", &[0])]));
}

/// A flexible `TransactionLogValue` with unknown tagged fields 100 (a string) and 101 (an
/// int32) in the value and in its partition entry, as a future version would write.
fn future_value() -> Vec<u8> {
    let tags = |v: &mut Vec<u8>| {
        v.extend_from_slice(&[2, 100, 5, 0, 3]);
        v.extend_from_slice(b"foo");
        v.extend_from_slice(&[101, 4]);
        v.extend_from_slice(&4000i32.to_be_bytes());
    };
    let mut v = vec![0, 1];
    v.extend_from_slice(&1000i64.to_be_bytes());
    v.extend_from_slice(&100i16.to_be_bytes());
    v.extend_from_slice(&1000i32.to_be_bytes());
    v.push(COMPLETE_COMMIT);
    v.extend_from_slice(&[2, 6]); // one partition entry; topic of five bytes
    v.extend_from_slice(b"topic");
    v.push(2); // one partition id
    v.extend_from_slice(&1i32.to_be_bytes());
    tags(&mut v);
    v.extend_from_slice(&2000i64.to_be_bytes());
    v.extend_from_slice(&3000i64.to_be_bytes());
    tags(&mut v);
    v
}

/// `TransactionLogTest.testDeserializeFutureTransactionLogValue`: unknown tagged fields
/// are read and ignored, in the value and in each partition entry.
#[test]
fn future_value_with_unknown_tagged_fields() {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        0,
        vec![(key("transaction-id"), Some(future_value()))],
    );
    let view = load_view(d.path());
    assert!(view.errors.is_empty(), "{:?}", view.errors);
    let t = &view.ids["transaction-id"];
    assert_eq!(
        (t.producer_id, t.producer_epoch, t.timeout_ms, t.state),
        (1000, 100, 1000, TxnState::CompleteCommit)
    );
    assert_eq!(parts(t), set(&[("topic", &[1])]));
    assert_eq!((t.last_update_ms, t.start_ms), (2000, 3000));
    assert_eq!(
        (
            t.previous_producer_id,
            t.next_producer_id,
            t.client_transaction_version
        ),
        (-1, -1, 0)
    );
    assert_eq!(anomalies(&scan(d.path())), []);
}

/// One id's values in offset order: its latest value, and the anomalies of its history.
fn history(values: &[TxnValue]) -> (CoordinatorTxn, Vec<(String, i64)>) {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), 0, values.iter().map(|v| val("app", v)).collect());
    let latest = load_view(d.path()).ids["app"].clone();
    (latest, anomalies(&scan(d.path())))
}

/// The on-disk shapes of `TransactionMetadataTest`'s accepted transitions: each history
/// loads clean with the values Kafka's test asserts.
/// - `testInitializeEpoch`, `testNormalEpochBump`: Empty at epoch 0, then at epoch 1.
/// - `testTolerateUpdateTimeShiftDuringEpochBump`: the bump's update time is earlier.
/// - `testTolerateTimeShiftDuringAddPartitions`, `…DuringPrepareCommit`,
///   `…DuringCompleteCommit`, `…DuringPrepareAbort`, `…DuringCompleteAbort`: every
///   transition's update time goes back by 1 ms; the start time stays (1 ms here).
/// - `testRotateProducerId`, `testTolerateUpdateTimeResetDuringProducerIdRotation`: at the
///   exhausted epoch (`Short.MAX_VALUE - 1`) the id moves to a new producer id at epoch 0
///   with the old one as previous producer id, its update time reset.
/// - `testFenceProducerAfterEpochsExhausted`: Ongoing at the exhausted epoch, fenced to
///   `Short.MAX_VALUE`, written as PrepareAbort at that epoch, then CompleteAbort.
/// - `testEpochBumpOnEndTxn`: a TV_0 Ongoing ends under TV_2 with the epoch bumped once
///   for both the Prepare and the Complete record.
#[test]
fn accepted_transitions_load_clean() {
    let e = |pid, epoch, st, upd: i64| TxnValue::new(pid, epoch, st).times(T + upd, 1);
    let (t, a) = history(&[e(5, 0, EMPTY, 0), e(5, 1, EMPTY, -1)]);
    assert_eq!(
        (t.producer_id, t.producer_epoch, t.state),
        (5, 1, TxnState::Empty)
    );
    assert_eq!(a, []);

    let tp: &[(&str, &[i32])] = &[("topic1", &[0])];
    for (prepare, complete, end) in [
        (PREPARE_COMMIT, COMPLETE_COMMIT, TxnState::CompleteCommit),
        (PREPARE_ABORT, COMPLETE_ABORT, TxnState::CompleteAbort),
    ] {
        let (t, a) = history(&[
            e(5, 1, EMPTY, 0),
            e(5, 1, ONGOING, -1).partitions(tp),
            e(5, 1, prepare, -2).partitions(tp),
            e(5, 1, complete, -3),
        ]);
        assert_eq!((t.state, t.producer_epoch), (end, 1));
        assert_eq!((t.start_ms, t.last_update_ms), (1, T - 3));
        assert_eq!(a, []);
    }

    let exhausted = i16::MAX - 1;
    let (t, a) = history(&[
        e(5, exhausted, EMPTY, 0).v1(-1, -1, 0),
        e(9893, 0, EMPTY, -1000).v1(5, -1, 0),
    ]);
    assert_eq!(
        (t.producer_id, t.previous_producer_id, t.producer_epoch),
        (9893, 5, 0)
    );
    assert_eq!(a, []);

    let (t, a) = history(&[
        e(5, exhausted, ONGOING, 0).partitions(tp),
        e(5, i16::MAX, PREPARE_ABORT, 0).partitions(tp),
        e(5, i16::MAX, COMPLETE_ABORT, 1),
    ]);
    assert_eq!((t.producer_id, t.producer_epoch), (5, i16::MAX));
    assert_eq!(a, []);

    let (t, a) = history(&[
        e(5, 10, ONGOING, 0).partitions(tp),
        e(5, 11, PREPARE_COMMIT, -1).partitions(tp).v1(-1, -1, 2),
        e(5, 11, COMPLETE_COMMIT, 0).v1(-1, -1, 2),
    ]);
    assert_eq!(
        (t.producer_epoch, t.client_transaction_version, t.state),
        (11, 2, TxnState::CompleteCommit)
    );
    assert_eq!(a, []);
}

/// The negative twins of the transitions above: what `TransactionMetadataTest` shows the
/// coordinator refuses in memory (`testRotateProducerIdInOngoingState`: no producer id
/// rotation while a transaction is in progress; `prepareTransitionTo` refuses a state
/// whose `validPreviousStates` lacks the current one, e.g. CompleteCommit after Ongoing;
/// an epoch never goes down under the same producer id) is an anomaly when found on disk.
#[test]
fn refused_transitions_are_anomalies() {
    let e = |pid, epoch, st| at(pid, epoch, st).partitions(&[("topic1", &[0])]);
    let (_, a) = history(&[e(5, 1, ONGOING), e(6, 0, ONGOING)]);
    assert_eq!(a, [("pid_change".to_string(), 1)]);
    let (_, a) = history(&[e(5, 1, ONGOING), e(5, 1, COMPLETE_COMMIT)]);
    assert_eq!(a, [("invalid_transition".to_string(), 1)]);
    let (_, a) = history(&[e(5, 3, ONGOING), e(5, 2, PREPARE_COMMIT)]);
    assert_eq!(a, [("epoch_regression".to_string(), 1)]);
}

/// `TransactionMetadataTest.testTransactionStateIdAndNameMapping` and
/// `testAllTransactionStatesAreMapped`: every status byte 0..=7 reads as Kafka's state of
/// that id and name; 8 is no state (the load fails: `unknown_state`). The transient states
/// (6 Dead, 7 PrepareEpochFence) load as written, and klogscan notes them
/// (`invalid_transition`: the coordinator never writes them).
#[test]
fn every_state_byte_maps_to_its_state() {
    let names = [
        "Empty",
        "Ongoing",
        "PrepareCommit",
        "PrepareAbort",
        "CompleteCommit",
        "CompleteAbort",
        "Dead",
        "PrepareEpochFence",
    ];
    for (b, name) in names.iter().enumerate() {
        let (t, a) = history(&[at(1, 0, b as u8)]);
        assert_eq!(t.state.name(), *name);
        assert_eq!(TxnState::from_byte(b as i8), Some(t.state));
        let want: &[(&str, i64)] = if b >= 6 {
            &[("invalid_transition", 0)]
        } else {
            &[]
        };
        let want: Vec<(String, i64)> = want.iter().map(|(s, o)| (s.to_string(), *o)).collect();
        assert_eq!(a, want, "{name}");
    }
    let d = tempfile::tempdir().unwrap();
    write(d.path(), 0, vec![val("app", &at(1, 0, 8))]);
    assert!(!load_view(d.path()).ids.contains_key("app"));
    assert_eq!(
        anomalies(&scan(d.path())),
        [("unknown_state".to_string(), 0)]
    );
}

/// `TransactionLogTest.testTransactionMetadataParsing` and
/// `testTransactionMetadataTombstoneParsing`: `kafka-dump-log --transaction-log-decoder`
/// (the Scala formatter, `TransactionLog.formatRecordKeyAndValue`) prints the key as
/// `transaction_metadata::transactionalId=id` and the value as Kafka's test expects, or
/// `<DELETE>` for the tombstone.
#[test]
fn dump_prints_the_formatter_text() {
    use klogscan::dump::{DumpOptions, dump_log};
    let d = tempfile::tempdir().unwrap();
    let v = TxnValue::new(1334, 0, ONGOING)
        .timeout(1000)
        .times(0, 0)
        .partitions(&[("topic", &[0])])
        .v1(-1, -1, 0);
    write(d.path(), 0, vec![val("id", &v), (key("id"), None)]);
    let seg = d
        .path()
        .join(format!("__transaction_state-{PARTITION}"))
        .join(format!("{:020}.log", 0));
    let data = std::fs::read(&seg).unwrap();
    let opts = DumpOptions {
        transaction_log_decoder: true,
        ..Default::default()
    };
    let (mut out, mut err) = (Vec::new(), Vec::new());
    dump_log(&seg, &data, &opts, &mut out, &mut err).unwrap();
    let out = String::from_utf8(out).unwrap();
    let key = "key: transaction_metadata::transactionalId=id payload: ";
    let lines: Vec<&str> = out
        .lines()
        .filter_map(|l| l.split_once(key).map(|(_, p)| p))
        .collect();
    assert_eq!(
        lines,
        [
            "producerId:1334,producerEpoch:0,state=Ongoing,partitions=[topic-0],txnLastUpdateTimestamp=0,txnTimeoutMs=1000",
            "<DELETE>"
        ],
        "{out}"
    );
}

/// `TransactionStateManager.loadTransactionMetadata`: the read loop's error handler logs the
/// failure and returns the ids loaded so far, which the coordinator then serves. So a record
/// the load cannot read ends the load there — an unknown state byte, a value or key that
/// does not decode, a null transactional id, and the unreadable records of
/// `TransactionCoordinatorRecordSerdeTest.testDeserializeWithKeyEmptyBuffer`,
/// `…WithValueEmptyBuffer`, `…WithInvalidKeyBytes` and `…WithInvalidValueBytes`: the ids keep the values read before it
/// ("a" stays Ongoing, its later PrepareCommit is never loaded) and an id written only after
/// it ("c") is unknown. The negative twin: a key of another version is skipped, and the load
/// goes on past it.
#[test]
fn the_load_stops_at_the_first_record_it_cannot_read() {
    let tp: &[(&str, &[i32])] = &[("orders", &[0])];
    let mut bad_state = at(2, 0, COMPLETE_COMMIT).encode();
    bad_state[16] = 9;
    let good = at(2, 0, COMPLETE_COMMIT).encode();
    let null_id = vec![0, 0, 0xff, 0xff];
    let cases: Vec<(Raw, Option<&str>)> = vec![
        ((key("b"), Some(bad_state)), Some("unknown_state")),
        (
            (key("b"), Some(good[..good.len() - 3].to_vec())),
            Some("undecodable_record"),
        ),
        (
            (vec![0, 0, 0, 9, b'b'], Some(good.clone())),
            Some("undecodable_record"),
        ),
        ((null_id, Some(good.clone())), Some("undecodable_record")),
        ((vec![], Some(good.clone())), Some("undecodable_record")),
        ((key("b"), Some(vec![])), Some("undecodable_record")),
        ((key("b"), Some(vec![0, 0])), Some("undecodable_record")),
        ((key_version(3, "b"), Some(good)), None),
    ];
    for ((k, v), stops) in cases {
        let d = tempfile::tempdir().unwrap();
        write(
            d.path(),
            0,
            vec![
                val("a", &at(1, 0, ONGOING).partitions(tp)),
                val("b", &at(2, 0, COMPLETE_COMMIT)),
                (k, v),
                val("a", &at(1, 0, PREPARE_COMMIT).partitions(tp)),
                val("c", &at(3, 0, EMPTY)),
            ],
        );
        let view = load_view(d.path());
        let r = scan(d.path());
        let a = &view.ids["a"];
        assert_eq!(view.ids["b"].state, TxnState::CompleteCommit);
        let found = anomalies(&r);
        match stops {
            Some(anomaly) => {
                assert_eq!(
                    (a.state, a.source.offset),
                    (TxnState::Ongoing, 0),
                    "{anomaly}"
                );
                assert!(!view.ids.contains_key("c"), "{anomaly}: {view:?}");
                assert_eq!(view.errors.len(), 1, "{anomaly}: {:?}", view.errors);
                // Records follow the stop: the view names it (a coordinator that loaded
                // before the record holds them).
                assert_eq!(view.load_stops.len(), 1, "{anomaly}");
                assert_eq!(view.load_stops[0].1, 2, "{anomaly}");
                assert_eq!(found.first(), Some(&(anomaly.to_string(), 2)), "{found:?}");
                let f = r
                    .findings
                    .iter()
                    .find(|f| f.kind == Kind::TransactionStateAnomaly)
                    .unwrap();
                assert!(
                    f.broker_behaviour
                        .contains("stops at the first record it cannot read"),
                    "{}",
                    f.broker_behaviour
                );
            }
            None => {
                assert_eq!((a.state, a.source.offset), (TxnState::PrepareCommit, 3));
                assert_eq!(view.ids["c"].producer_id, 3);
                assert!(view.errors.is_empty(), "{:?}", view.errors);
                assert!(view.load_stops.is_empty());
                assert_eq!(found, [("unknown_key_version".to_string(), 2)]);
            }
        }
    }
}

/// `TransactionLogTest.shouldThrowExceptionWriteInvalidTxn`: the coordinator refuses to write
/// an Empty value with partitions; one found on disk loads without them
/// (`TransactionLog.readTxnRecordValue` reads the partitions of non-Empty values only). The
/// negative twin: the same partitions in an Ongoing value are loaded.
#[test]
fn an_empty_value_loads_without_its_partitions() {
    let ps: &[(&str, &[i32])] = &[("topic1", &[0, 1])];
    for (status, listed) in [(EMPTY, false), (ONGOING, true)] {
        let d = tempfile::tempdir().unwrap();
        write(
            d.path(),
            0,
            vec![val("id", &at(1, 0, status).partitions(ps))],
        );
        let t = &load_view(d.path()).ids["id"];
        let want = if listed { set(ps) } else { BTreeSet::new() };
        assert_eq!(parts(t), want, "status {status}");
    }
}

/// `TransactionStateManager.loadTransactionMetadata` moves its read position
/// (`currOffset = batch.nextOffset`) only for a record of the current key version. A log
/// that ends with a batch holding only a record of another key version is read again
/// and again from the same offset: the load never completes (the partition stays loading,
/// `COORDINATOR_LOAD_IN_PROGRESS`). Negative twins: the same unknown record followed by a
/// transaction record (the read returns both: the position moves, as in
/// `testIgnoreUnknownRecordType`), in the same batch as the last transaction record (the
/// position is already past it), or after a record the load fails on (it ended there).
#[test]
fn a_log_ending_in_batches_of_unknown_keys_never_finishes_loading() {
    let unknown = || {
        let k = key_version(i16::MAX, "");
        (k.clone(), Some(k))
    };
    let one = || val("one", &at(1, 0, EMPTY).v1(-1, -1, 0));
    type Case = (Vec<Vec<Raw>>, Vec<(&'static str, i64)>);
    let cases: Vec<Case> = vec![
        (
            vec![vec![one()], vec![unknown()], vec![unknown()]],
            vec![("load_never_completes", 1), ("unknown_key_version", 2)],
        ),
        (vec![vec![unknown()]], vec![("load_never_completes", 0)]),
        (
            vec![vec![one()], vec![unknown()], vec![one()]],
            vec![("unknown_key_version", 1)],
        ),
        (
            vec![vec![one(), unknown()]],
            vec![("unknown_key_version", 1)],
        ),
        (
            vec![
                vec![one()],
                vec![(key("bad"), Some(vec![0, 9]))],
                vec![unknown()],
            ],
            vec![("undecodable_record", 1), ("unknown_key_version", 2)],
        ),
    ];
    for (i, (batches, want)) in cases.into_iter().enumerate() {
        let d = tempfile::tempdir().unwrap();
        write_batches_from(d.path(), 0, batches);
        let r = scan(d.path());
        let want: Vec<(String, i64)> = want.iter().map(|(k, o)| (k.to_string(), *o)).collect();
        assert_eq!(anomalies(&r), want, "case {i}");
        let hang = r
            .findings
            .iter()
            .find(|f| f.evidence["anomaly"] == "load_never_completes");
        if let Some(f) = hang {
            assert_eq!(f.severity, Severity::Error);
            assert!(f.message.contains("never completes"), "{}", f.message);
        }
    }
    // A `-delete` copy of the first log is loaded by no coordinator: its records stay
    // skipped ones.
    let d = tempfile::tempdir().unwrap();
    write_batches_from(d.path(), 0, vec![vec![one()], vec![unknown()]]);
    let live = d.path().join(format!("__transaction_state-{PARTITION}"));
    let gone = d.path().join(format!(
        "__transaction_state-{PARTITION}.0123456789abcdef0123456789abcdef-delete"
    ));
    std::fs::rename(&live, &gone).unwrap();
    let r = scan(d.path());
    assert_eq!(anomalies(&r), [("unknown_key_version".to_string(), 1)]);
    // Read with `--max-bytes` up to the end of the unknown batch of a log that goes on
    // with a transaction record: how the log ends is not known, so nothing is said of it.
    let d = tempfile::tempdir().unwrap();
    write_batches_from(d.path(), 0, vec![vec![one()], vec![unknown()]]);
    let log = live_log(d.path());
    let cut = std::fs::metadata(&log).unwrap().len();
    std::fs::remove_dir_all(log.parent().unwrap()).unwrap();
    write_batches_from(d.path(), 0, vec![vec![one()], vec![unknown()], vec![one()]]);
    let opts = opts().with_max_bytes(cut);
    let r = request::run(&Request::new([d.path()]).with_options(opts))
        .unwrap()
        .report;
    assert_eq!(anomalies(&r), [("unknown_key_version".to_string(), 1)]);
}

/// The segment of `__transaction_state-7` written under `dir`.
fn live_log(dir: &Path) -> std::path::PathBuf {
    dir.join(format!("__transaction_state-{PARTITION}"))
        .join(format!("{:020}.log", 0))
}

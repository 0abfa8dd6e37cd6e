//! Review of session 25's changes: `8976605` (an open transaction's idleness runs from the
//! broker's clock a marker or LogAppendTime batch before its last batch proves,
//! `Replay::broker_clock`, `OpenTxnState::clock_floor`) and the merge of `tv2` (30c3251,
//! 1aff323: `invalid_first_sequence` for a transactions-v2 producer's first batch above
//! sequence 0, `cluster::txns::first_sequence`). Reproducers of defects are `#[ignore =
//! "defect: …"]` (they fail with `--ignored`); the others pin what was checked and found
//! right.
#![cfg(feature = "testkit")]

use crate::kafka_quiet_clients_cases::{lines, write_and_check};
use klogscan::finding::{Finding, Kind};
use klogscan::partition::scan::ScanOptions;
use klogscan::pipeline;
use klogscan::results::ScanReport;
use klogscan::testkit::scenario::DEFAULT_START_MS;
use klogscan::testkit::txnlog::{TxnValue, key, state};
use klogscan::testkit::{Batch, FaultKind, LogDirBuilder, PartitionBuilder, Producer, Rec, Target};
use std::path::Path;

const MINUTE: i64 = 60_000;
const DAY: i64 = 86_400_000;

fn of_kind(r: &ScanReport, k: Kind) -> Vec<&Finding> {
    r.findings.iter().filter(|f| f.kind == k).collect()
}

fn scan(dir: &Path) -> ScanReport {
    pipeline::scan(&[dir.to_path_buf()], &ScanOptions::default())
}

// ----- 1. the broker's clock as the floor of an open transaction's idleness -------------

/// `enriched-0`: producer 9300's transactions whose records carry event times `age` ms
/// old, COMMIT markers at the broker's time (one every 5 minutes), the last transaction
/// open since a minute before the 16th minute; `enriched-1`: current writes until minute
/// 16 (the shutdown). The shape of `timestamps::event_time_log_dir`, with the age a
/// parameter.
fn event_time_dir(age: i64) -> LogDirBuilder {
    let t0 = DEFAULT_START_MS;
    let txn = Producer::transactional(9300, 0);
    let mut p0 = PartitionBuilder::new("enriched", 0);
    for k in 0..4 {
        let broker_now = t0 + k * 5 * MINUTE;
        p0.append(Batch::new(txn).records(3).at(broker_now - age));
        if k < 3 {
            let cur = p0.now();
            p0.advance_time(broker_now + 4 * MINUTE - cur);
            p0.commit(txn, 0);
        }
    }
    let mut p1 = PartitionBuilder::new("enriched", 1);
    for k in 0..=16 {
        p1.append(Batch::new(Producer::PLAIN).records(1).at(t0 + k * MINUTE));
    }
    LogDirBuilder::new(1).partition(p0).partition(p1)
}

/// Defect: the floor is kept as whole minutes past the transaction's first timestamp in
/// a `u16` (`OpenTxnState::clock_min`, `clock_minutes`), so it saturates 45.5 days after
/// that timestamp. Event times older than that — a backfill or a Streams reprocessing of
/// history, which `LogValidator.validateTimestamp` accepts under the default
/// `log.message.timestamp.before.max.ms` (`Long.MAX_VALUE`), and which time retention keeps
/// because the markers make each segment's largest timestamp recent — get a floor weeks
/// before the COMMIT the transaction follows: the transaction opened a minute before the
/// shutdown is still a `hanging_transaction` error, idle ~14.5 days, the exact false alarm
/// `8976605` set out to close. The coordinator times it from its own start
/// (`TransactionStateManager.timedOutTransactions`): a minute.
#[test]
fn event_times_older_than_45_days_still_take_the_brokers_clock() {
    let q = write_and_check(event_time_dir(60 * DAY));
    let open = of_kind(&q.scan, Kind::OpenTransaction);
    assert_eq!(open.len(), 1, "{:#?}", lines(&q.scan.findings));
    assert_eq!(
        open[0].evidence["broker_clock_floor_ms"],
        DEFAULT_START_MS + 14 * MINUTE
    );
    assert!(of_kind(&q.scan, Kind::HangingTransaction).is_empty());
}

/// Checked right: with event times 40 days old (under the saturation) the floor is the
/// last COMMIT's time and the transaction is an `open_transaction`, the same verdict in a
/// merge of the log dir's bundle as in the scan (the finding is the partition stage's;
/// `collect` + `merge` carry it whole, its `broker_clock_floor_ms` included).
#[test]
fn event_time_floor_is_the_same_through_a_bundle() {
    use klogscan::bundle;
    let q = write_and_check(event_time_dir(40 * DAY));
    let open = of_kind(&q.scan, Kind::OpenTransaction);
    assert_eq!(open.len(), 1, "{:#?}", lines(&q.scan.findings));
    assert_eq!(
        open[0].evidence["broker_clock_floor_ms"],
        DEFAULT_START_MS + 14 * MINUTE
    );
    let out = tempfile::tempdir().unwrap();
    let f = out.path().join("b.klb");
    let w = std::fs::File::create(&f).unwrap();
    bundle::collect(
        &[q.dir.path().to_path_buf()],
        &ScanOptions::default(),
        std::io::BufWriter::new(w),
    )
    .unwrap();
    let merged = bundle::merge(&[f], &ScanOptions::default()).unwrap().report;
    let m = of_kind(&merged, Kind::OpenTransaction);
    assert_eq!(m.len(), 1, "{:#?}", lines(&merged.findings));
    assert_eq!(m[0].evidence, open[0].evidence);
    assert_eq!(m[0].message, open[0].message);
}

/// Defect: `Replay::apply` raises `broker_clock` from every marker and LogAppendTime
/// batch, CRC-bad ones included (the `DamageTracker` replays damaged batches with their
/// header fields, as the broker's producer-state rebuild reads them — but a damaged
/// timestamp proves no time; the reference time already takes CRC-valid batches only,
/// `partition::scan::newest_segment_timestamp`). One flipped bit in producer 100's COMMIT
/// marker's baseTimestamp (2^41 ms, ~70 years ahead) makes every later open transaction's
/// floor its first timestamp + 45.5 days: producer 200's transaction, intact, opened a
/// minute after that COMMIT and idle for a day at the reference time (the log dir's
/// newest trusted timestamp), gets a negative idleness and is an `open_transaction` (info)
/// instead of a `hanging_transaction`. The verdict the bytes prove is lost to bytes that
/// prove nothing.
#[test]
fn a_damaged_markers_timestamp_does_not_hide_a_hanging_transaction() {
    let t0 = DEFAULT_START_MS;
    let a = Producer::transactional(100, 0);
    let b = Producer::transactional(200, 0);
    let mut p = PartitionBuilder::new("payments", 0).start_time(t0);
    p.append(Batch::new(a).records(2).at(t0));
    p.roll();
    p.commit(a, 0); // alone in segment 1, at position 0
    p.roll();
    p.append(Batch::new(b).records(2).at(t0 + MINUTE));
    // baseTimestamp is bytes 27..35 of a v2 batch; byte 29 holds bits 40..47 (0x01 there
    // for 2019 times: bit 41 set adds 2^41 ms)
    p.fault(
        Target::Log(1),
        FaultKind::FlipByte {
            position: 29,
            mask: 0x02,
        },
    );
    let mut other = PartitionBuilder::new("payments", 1);
    for h in 0..=24 {
        other.append(
            Batch::new(Producer::PLAIN)
                .records(1)
                .at(t0 + h * 60 * MINUTE),
        );
    }
    let dir = tempfile::tempdir().unwrap();
    LogDirBuilder::new(1)
        .partition(p)
        .partition(other)
        .write(dir.path())
        .unwrap();
    let r = scan(dir.path());
    assert!(
        !of_kind(&r, Kind::CrcMismatch).is_empty(),
        "{:#?}",
        lines(&r.findings)
    );
    let hanging: Vec<_> = of_kind(&r, Kind::HangingTransaction)
        .into_iter()
        .filter(|f| f.producer_id == Some(200))
        .collect();
    assert_eq!(hanging.len(), 1, "{:#?}", lines(&r.findings));
    assert!(hanging[0].evidence["idle_ms"].as_i64().unwrap() > 23 * 60 * MINUTE);
}

/// Checked right: a LogAppendTime batch is broker-stamped (`LogValidator` sets its
/// maxTimestamp to the leader's `now` and its attribute to LOG_APPEND_TIME whatever the
/// client sent; the cleaner keeps `originalBatch.maxTimestamp()` as the rebuilt batch's
/// logAppendTime, `MemoryRecords.filterTo` → `buildRetainedRecordsInto`), and so is a
/// COMMIT marker the cleaner rewrote with a delete horizon (its control record keeps its
/// timestamp; the horizon goes to baseTimestamp, the record's delta goes negative): both
/// floor the idleness of a transaction of event-time data appended after them.
#[test]
fn log_append_time_and_cleaned_markers_floor_the_idleness() {
    let t0 = DEFAULT_START_MS;
    let old = t0 - 3 * DAY;
    let txn = Producer::transactional(9400, 0);
    let build = |lat: bool| {
        let mut p = PartitionBuilder::new("mixed", 0).start_time(t0);
        if lat {
            // another producer's batch, broker-stamped at minute 10
            p.append(
                Batch::new(Producer::idempotent(9401, 0))
                    .records(1)
                    .at(t0 + 10 * MINUTE)
                    .log_append_time(),
            );
        } else {
            // the previous transaction's COMMIT at minute 10, cleaned: delete horizon set
            p.append(Batch::new(txn).records(1).at(old));
            let mut m = klogscan::testkit::encode::end_txn_marker(
                p.next_offset(),
                9400,
                0,
                true,
                0,
                t0 + 10 * MINUTE,
                0,
            );
            let horizon = t0 + 10 * MINUTE + DAY;
            m.delete_horizon = true;
            m.base_timestamp = horizon;
            for r in &mut m.records {
                r.timestamp_delta = t0 + 10 * MINUTE + r.timestamp_delta - horizon;
            }
            p.append_spec(m);
        }
        p.append(Batch::new(txn).records(2).at(old + MINUTE));
        let mut o = PartitionBuilder::new("mixed", 1);
        for k in 0..=12 {
            o.append(Batch::new(Producer::PLAIN).records(1).at(t0 + k * MINUTE));
        }
        LogDirBuilder::new(1).partition(p).partition(o)
    };
    for lat in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        build(lat).write(dir.path()).unwrap();
        let r = scan(dir.path());
        let open = of_kind(&r, Kind::OpenTransaction);
        assert_eq!(open.len(), 1, "lat {lat}: {:#?}", lines(&r.findings));
        assert!(of_kind(&r, Kind::HangingTransaction).is_empty());
        let floor = open[0].evidence["broker_clock_floor_ms"].as_i64().unwrap();
        assert!(
            floor <= t0 + 10 * MINUTE && floor > t0 + 8 * MINUTE,
            "lat {lat}: {floor}"
        );
    }
}

/// Checked right: the floor cannot hide a KAFKA-9144 zombie. Producer 9500's transaction
/// (epoch 0) timed out; the coordinator fenced it and wrote the ABORT at epoch 1 70 s
/// later (the leader's clock); the producer's delayed write, stamped 5 s after its first,
/// was appended after the ABORT (a leader before 2.5 accepted the lower epoch). The
/// floor moves the idleness' start from the zombie's stamp to the ABORT's time — later,
/// and no later than the real append — and half an hour on the transaction is a
/// `hanging_transaction` with the zombie root cause.
#[test]
fn a_zombie_after_an_abort_still_hangs_from_the_aborts_time() {
    let t0 = DEFAULT_START_MS;
    let p0 = Producer::transactional(9500, 0);
    let mut p = PartitionBuilder::new("ledger", 0).start_time(t0);
    p.append(Batch::new(p0).records(2).at(t0));
    p.advance_time(70_000);
    let abort_at = p.now();
    p.abort(p0.with_epoch(1), 0);
    p.append(Batch::new(p0).records(1).at(t0 + 5_000).sequence(2));
    let mut o = PartitionBuilder::new("ledger", 1);
    for k in 0..=30 {
        o.append(Batch::new(Producer::PLAIN).records(1).at(t0 + k * MINUTE));
    }
    let dir = tempfile::tempdir().unwrap();
    LogDirBuilder::new(1)
        .partition(p)
        .partition(o)
        .write(dir.path())
        .unwrap();
    let r = scan(dir.path());
    let h = of_kind(&r, Kind::HangingTransaction);
    assert_eq!(h.len(), 1, "{:#?}", lines(&r.findings));
    let floor = h[0].evidence["broker_clock_floor_ms"].as_i64().unwrap();
    assert!(floor <= abort_at && floor > abort_at - MINUTE, "{floor}");
    assert!(
        h[0].evidence["root_cause"]
            .as_str()
            .is_some_and(|c| c.contains("9144")),
        "{:#?}",
        h[0].evidence
    );
}

// ----- 2. a TV2 producer's first batch above sequence 0 ----------------------------------

const T0: i64 = 1_700_000_000_000;

/// `__transaction_state-1` (where `app` lives among 50 partitions) holding `values`.
fn coordinator_log(values: &[TxnValue]) -> PartitionBuilder {
    let mut c = PartitionBuilder::new("__transaction_state", 1);
    for (i, v) in values.iter().enumerate() {
        let t = T0 + 10 * i as i64;
        let v = v.clone().times(t, T0);
        c.append(
            Batch::new(Producer::PLAIN)
                .record(Rec::kv(key("app"), v.encode()))
                .at(t),
        );
    }
    c
}

fn tv2_ongoing(pid: i64, epoch: i16) -> TxnValue {
    TxnValue::new(pid, epoch, state::ONGOING)
        .partitions(&[("orders", &[0])])
        .v1(-1, -1, 2)
}

fn first_seq_case(values: &[TxnValue], p: PartitionBuilder) -> ScanReport {
    let dir = tempfile::tempdir().unwrap();
    coordinator_log(values).write(dir.path()).unwrap();
    LogDirBuilder::new(1)
        .partition(p)
        .write(dir.path())
        .unwrap();
    scan(dir.path())
}

/// Defect: the candidate's "whole history" is only "the first batch is at offset 0, no
/// log-start checkpoint above 0, no seeding snapshot, not compacted". Offsets missing
/// between offset 0 and the producer's first batch — here offsets 1–3, exactly producer
/// 23's sequences 0–2 — are batches the replay never saw: a cleaner that removed a whole
/// batch on a topic whose policy the inputs do not state (the very reason the rule is
/// silent on compacted topics), a segment lost from the copy, an unreadable stretch. The
/// replay reports the hole (`offset_gap`) and then keeps producer 23's batch at sequence 3
/// as a first batch with "producer_state: none (… log held from offset 0)", and the join
/// claims a TV2 leader held no state for it. The leader may well have held sequences 0–2:
/// the bytes do not prove the claim. A candidate needs no gap (nor damaged batch) before it.
#[test]
fn an_offset_gap_before_the_first_batch_is_not_the_whole_history() {
    let mut p = PartitionBuilder::new("orders", 0).start_time(T0 + 100);
    p.append(Batch::new(Producer::PLAIN).records(1));
    p.skip_offsets(3);
    p.append(
        Batch::new(Producer::transactional(23, 1))
            .records(2)
            .sequence(3),
    );
    let r = first_seq_case(&[tv2_ongoing(23, 1)], p);
    assert!(
        !of_kind(&r, Kind::OffsetGap).is_empty(),
        "{:#?}",
        lines(&r.findings)
    );
    let f = of_kind(&r, Kind::InvalidFirstSequence);
    assert!(f.is_empty(), "{:#?}", lines(&r.findings));
}

/// Defect: the same with a damaged batch instead of a hole. Producer 23's first batch
/// (sequences 0–2, offset 0) has a bit flipped in its producer id (CRC-bad; the replay
/// takes it as producer 87's). Its next batch, sequence 3, is then the "first" of producer
/// 23 and the join reports `invalid_first_sequence` — a cluster finding the damage links
/// (`partition::causes`) never reach: no `caused_by`, and "producer_state: none". The
/// leader that appended sequence 3 held sequences 0–2.
#[test]
fn a_damaged_batch_before_the_first_batch_is_not_the_whole_history() {
    let mut p = PartitionBuilder::new("orders", 0).start_time(T0 + 100);
    let tp = Producer::transactional(23, 1);
    p.append(Batch::new(tp).records(3).sequence(0));
    p.append(Batch::new(tp).records(2).sequence(3));
    // producerId is bytes 43..51 of a v2 batch: its low byte, 23 → 87
    p.fault(
        Target::Log(0),
        FaultKind::FlipByte {
            position: 50,
            mask: 0x40,
        },
    );
    let r = first_seq_case(&[tv2_ongoing(23, 1)], p);
    assert!(
        !of_kind(&r, Kind::CrcMismatch).is_empty(),
        "{:#?}",
        lines(&r.findings)
    );
    for f in of_kind(&r, Kind::InvalidFirstSequence) {
        assert!(
            !f.caused_by.is_empty(),
            "an unlinked claim over damaged history: {:#?}",
            f
        );
    }
}

/// Checked right: the intact twin of the case above (sequences 0–2 then 3) is silent, and
/// so is a producer whose first batch is at 0 then continues in sequence.
#[test]
fn an_intact_history_from_sequence_zero_is_silent() {
    let mut p = PartitionBuilder::new("orders", 0).start_time(T0 + 100);
    let tp = Producer::transactional(23, 1);
    p.append(Batch::new(tp).records(3).sequence(0));
    p.append(Batch::new(tp).records(2).sequence(3));
    let r = first_seq_case(&[tv2_ongoing(23, 1)], p);
    assert!(of_kind(&r, Kind::InvalidFirstSequence).is_empty());
}

/// Checked right: TV2 epoch exhaustion rotates the producer id (the coordinator's
/// PrepareCommit at epoch 32767 names the next id, `TransactionMetadata.prepareAbortOrCommit`;
/// the client takes it from the EndTxn response and `resetSequenceNumbers`,
/// `TransactionManager.EndTxnHandler`). The new id's first batch is judged by the new id's
/// own TV2 record: at sequence 2 it is refused (a 2025 leader has no state for the new
/// id), at 0 silent; the old id's records never match the new id's batch.
#[test]
fn a_rotated_producer_id_is_judged_by_its_own_record() {
    for (seq, refused) in [(2, true), (0, false)] {
        let old = Producer::transactional(23, 32766);
        let mut p = PartitionBuilder::new("orders", 0).start_time(T0 + 100);
        p.append(Batch::new(old).records(2).sequence(0));
        p.commit(old.with_epoch(32767), 0);
        p.append(
            Batch::new(Producer::transactional(24, 0))
                .records(2)
                .sequence(seq),
        );
        let values = [
            tv2_ongoing(23, 32766),
            TxnValue::new(23, 32767, state::PREPARE_COMMIT)
                .partitions(&[("orders", &[0])])
                .v1(-1, 24, 2),
            TxnValue::new(24, 0, state::COMPLETE_COMMIT).v1(23, -1, 2),
            tv2_ongoing(24, 0),
        ];
        let r = first_seq_case(&values, p);
        let f: Vec<_> = of_kind(&r, Kind::InvalidFirstSequence)
            .iter()
            .map(|f| (f.producer_id, f.offset))
            .collect();
        if refused {
            assert_eq!(f, vec![(Some(24), Some(3))], "{:#?}", lines(&r.findings));
        } else {
            assert!(f.is_empty(), "{f:?}");
        }
    }
}

/// Producer 23 (TV2: its record says ClientTransactionVersion 2) commits at epoch 1, the
/// marker bumping it to 2, and `gap` later writes its next transaction's first batch at
/// epoch 2 from sequence 5.
fn after_bumped_marker(gap: i64) -> ScanReport {
    let tp = Producer::transactional(23, 1);
    let mut p = PartitionBuilder::new("orders", 0).start_time(T0 + 100);
    p.append(Batch::new(tp).records(2).sequence(0).at(T0 + 100));
    p.commit(tp.with_epoch(2), 0);
    p.append(
        Batch::new(tp.with_epoch(2))
            .records(2)
            .sequence(5)
            .at(T0 + gap),
    );
    first_seq_case(&[tv2_ongoing(23, 2)], p)
}

/// Checked right: a minute after the bumped marker the leader still holds the producer,
/// its batch metadata cleared by the epoch change (`ProducerStateEntry.maybeUpdateProducerEpoch`
/// from `appendEndTxnMarker`), so every release refuses sequence 5 at the new epoch
/// (`ProducerAppendInfo.checkSequence`: `inSequence(NO_SEQUENCE, 5)` is false): the
/// replay's own rule reports it, once — the cluster rule adds no second finding (the batch
/// is not the producer's first).
#[test]
fn within_the_expiry_the_replays_rule_reports_it_once() {
    let r = after_bumped_marker(MINUTE);
    let f = of_kind(&r, Kind::InvalidFirstSequence);
    assert_eq!(f.len(), 1, "{:#?}", lines(&r.findings));
    assert_eq!(f[0].offset, Some(3));
}

/// Defect: two days later the replay takes producer 23 as expired
/// (`ProducerStateManager.removeExpiredProducers`, `producer.id.expiration.ms` one day:
/// `partition::state::producer_expired`) and skips the sequence rules, and the cluster rule
/// only looks at a producer's first batch in the partition — so nothing is reported. Yet
/// the verdict holds in both readings of the simulated expiry: a leader that still held
/// the producer refuses sequence 5 at the marker's epoch (the case above, every release),
/// one that expired it holds no state for a producer the coordinator records TV2 and
/// refuses it under KAFKA-18202 (`checkSequence`'s `currentEntry.isEmpty()`), the rule's
/// own premise. `docs/findings.md` ("Not raised for a producer the replay takes as
/// expired … the expiry is a simulation") drops a verdict the uncertainty cannot change.
/// Fix: when the replay skips a transactional batch above sequence 0 for `expired` on a
/// complete history, keep it as a `FirstTxnBatch` too (its `producer_state` saying
/// "expired"), for the join's TV2 record to decide.
#[test]
fn after_the_simulated_expiry_a_tv2_record_still_decides() {
    let r = after_bumped_marker(2 * DAY);
    let f = of_kind(&r, Kind::InvalidFirstSequence);
    assert_eq!(f.len(), 1, "{:#?}", lines(&r.findings));
}

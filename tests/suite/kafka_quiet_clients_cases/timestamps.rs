//! Record timestamps an application chooses (sarama's `ProducerMessage.Timestamp`, franz-go's
//! `Record.Timestamp`, librdkafka's `RD_KAFKA_V_TIMESTAMP`, kafka-python's `timestamp_ms`,
//! kafka-go's `Message.Time`): every client passes them through as the records' CreateTime,
//! and a leader accepts any of them under its default `log.message.timestamp.before.max.ms`
//! and `after.max.ms` (`LogValidator.validateTimestamp`; both `Long.MAX_VALUE` in trunk of
//! 2024-10, `after` one hour in the 2025-10 tree), whatever its own clock says.

use super::{loud, write_and_check, write_and_check_with};
use klogscan::finding::Kind;
use klogscan::request::{self, Request};
use klogscan::results::ScanOptions;
use klogscan::testkit::files::encode_snapshot;
use klogscan::testkit::{Batch, LogDirBuilder, PartitionBuilder, Producer, Rec};

const MINUTE: i64 = 60_000;

/// A log dir stopped while a transaction was in progress: the transactional producer wrote
/// its last batch a minute before the shutdown, other producers wrote until the shutdown.
/// One of them stamps its records with the time an event is due, 20 minutes ahead (sarama:
/// IBM/sarama `produce_set.go`, `produceSet.add` keeps `msg.Timestamp` unless zero; franz-go:
/// `pkg/kgo/producer.go`, `ProduceSync`/`Produce` keep a set `Record.Timestamp`; librdkafka:
/// `rd_kafka_producev` with `RD_KAFKA_V_TIMESTAMP`), which the leader accepts (20 minutes is
/// within even the 2025-10 one-hour default of `log.message.timestamp.after.max.ms`). The
/// transaction coordinator times transactions out by its own clock
/// (`TransactionStateManager.timedOutTransactions`: `now - txnStartTimestamp >
/// txnTimeoutMs`, the default `transaction.timeout.ms` one minute, at most
/// `transaction.max.timeout.ms`, 15 minutes): nothing in the log says this transaction is
/// past its timeout — it had been idle for a minute at the shutdown.
///
/// klogscan takes the newest batch timestamp of the whole log dir as the reference time
/// (docs/findings.md, "Reference time") unless the broker's own clock bounds it: the copy
/// kept the times the broker last wrote its checkpoints (`ReplicaManager.
/// checkpointHighWatermarks` every 5 s, the recovery-point and log-start checkpoints every
/// minute, `.kafka_cleanshutdown` at the shutdown), and the newest timestamp is more than a
/// minute past them while the markers the broker stamped are not. Then the reference is that
/// bound (`evidence.reference_time.newest_batch_timestamp` keeps the client's): the
/// transaction is a minute or two idle, an `open_transaction`. (Before: 21 minutes idle, a
/// `hanging_transaction` error.)
#[test]
fn a_client_timestamp_ahead_of_the_brokers_clock_does_not_make_transactions_hang() {
    let t0 = klogscan::testkit::scenario::DEFAULT_START_MS;
    let q = write_and_check_with(ahead_log_dir(20 * MINUTE), |d| {
        crate::common::quiet::set_broker_file_times(d, t0 + 10 * MINUTE)
    });
    q.assert_quiet();
    let open = (q.scan.findings.iter()).find(|f| f.kind == Kind::OpenTransaction);
    let r = &open.expect("the open transaction").evidence["reference_time"];
    assert_eq!(r["ms"], t0 + 11 * MINUTE, "{r}");
    assert_eq!(r["newest_batch_timestamp"], t0 + 30 * MINUTE, "{r}");
    assert!(
        r["source"]
            .as_str()
            .unwrap()
            .starts_with("replication-offset-checkpoint"),
        "{r}"
    );
}

/// Twins of the case above. (a) The checkpoints' times are not the broker's (a copy that
/// did not keep them: the testkit's own time, later than every batch): nothing bounds the
/// client's clock, and the newest timestamp is the reference as before — the
/// `hanging_transaction` error. (b) The times were set back before the broker's own COMMIT
/// marker (an archive's default time): they cannot be the broker's last writes, and are not
/// taken. (c) Kept times, but the transaction really idle: opened 14 minutes before the
/// stop, idle past `--hanging-after` by the broker's clock — still `hanging_transaction`.
#[test]
fn checkpoint_times_bound_the_reference_only_when_they_are_the_brokers() {
    let t0 = klogscan::testkit::scenario::DEFAULT_START_MS;
    let q = write_and_check(ahead_log_dir(20 * MINUTE));
    let l = loud(&q.scan.findings);
    assert_eq!(l.len(), 1, "{l:#?}");
    assert!(
        l[0].starts_with("error hanging_transaction payments-0"),
        "{l:#?}"
    );
    let q = write_and_check_with(ahead_log_dir(20 * MINUTE), |d| {
        crate::common::quiet::set_broker_file_times(d, t0 - 86_400_000)
    });
    let l = loud(&q.scan.findings);
    assert_eq!(l.len(), 1, "{l:#?}");
    assert!(
        l[0].starts_with("error hanging_transaction payments-0"),
        "{l:#?}"
    );
    let q = write_and_check_with(ahead_log_dir(20 * MINUTE), |d| {
        crate::common::quiet::set_broker_file_times(d, t0 + 25 * MINUTE)
    });
    let hanging = (q.scan.findings.iter()).find(|f| f.kind == Kind::HangingTransaction);
    let r = &hanging.expect("hanging by the broker's clock").evidence["reference_time"];
    assert_eq!(r["ms"], t0 + 26 * MINUTE, "{r}");
}

/// The log dir of the case above: `payments-0` holds a transaction of producer 9000 opened a
/// minute before the shutdown, `payments-1` plain writes until the shutdown, `reminders-0` one
/// batch whose records are stamped `ahead` ms past the shutdown.
fn ahead_log_dir(ahead: i64) -> LogDirBuilder {
    let t0 = klogscan::testkit::scenario::DEFAULT_START_MS;
    let txn = Producer::transactional(9000, 0);
    let mut pay0 = PartitionBuilder::new("payments", 0);
    pay0.append(Batch::new(txn).records(2).at(t0));
    pay0.commit(txn, 0);
    pay0.append(Batch::new(txn).records(3).at(t0 + 9 * MINUTE));
    let mut pay1 = PartitionBuilder::new("payments", 1);
    for i in 0..=10 {
        pay1.append(Batch::new(Producer::PLAIN).records(1).at(t0 + i * MINUTE));
    }
    let mut rem = PartitionBuilder::new("reminders", 0);
    let due = t0 + 10 * MINUTE + ahead;
    rem.append(
        Batch::new(Producer::idempotent(9100, 0))
            .record(Rec::kv("invoice-17", "due").at(due))
            .at(due),
    );
    LogDirBuilder::new(1)
        .partition(pay0)
        .partition(pay1)
        .partition(rem)
}

/// Near miss of the divergence above: with no client clock ahead (the reminder stamped at
/// the shutdown), the same transaction is an `open_transaction` (info), and with the
/// broker's clock given (`--now`, `ScanOptions::now_ms`) it is one too. What makes the
/// difference is the future CreateTime alone.
#[test]
fn without_the_future_timestamp_the_open_transaction_is_info() {
    let q = write_and_check(ahead_log_dir(0));
    q.assert_quiet();
    let open: Vec<_> = q
        .scan
        .findings
        .iter()
        .filter(|f| f.kind == Kind::OpenTransaction)
        .collect();
    assert_eq!(open.len(), 1, "{:#?}", super::lines(&q.scan.findings));
    // the broker's clock at the shutdown given (`--now`): the same verdict despite the
    // future timestamp
    let q = write_and_check(ahead_log_dir(20 * MINUTE));
    let mut opts = ScanOptions::default();
    opts.now_ms = Some(klogscan::testkit::scenario::DEFAULT_START_MS + 10 * MINUTE + 5_000);
    let r = request::run(&Request::new([q.dir.path()]).with_options(opts))
        .unwrap()
        .report;
    assert!(loud(&r.findings).is_empty(), "{:#?}", loud(&r.findings));
    assert!(r.findings.iter().any(|f| f.kind == Kind::OpenTransaction));
    // without it, the divergence as klogscan reports it today
    let hanging = loud(&q.scan.findings);
    assert_eq!(hanging.len(), 1, "{hanging:#?}");
    assert!(hanging[0].starts_with("error hanging_transaction payments-0 @Some(3)"));
}

/// A backfill job replays a day-old events with their event times as CreateTime (any of the
/// clients above; `log.message.timestamp.before.max.ms` is `Long.MAX_VALUE` in every release)
/// through an idempotent producer. The leader keeps each batch's maxTimestamp as the
/// producer's `lastTimestamp` (`ProducerAppendInfo.appendDataBatch`) and its periodic check
/// compares that with its own clock (`ProducerStateManager.removeExpiredProducers` →
/// `isProducerExpired`: `currentTimeMs - lastTimestamp >= producer.id.expiration.ms`, every
/// `producer.id.expiration.check.interval.ms`, 10 minutes): the producer's entry is dropped
/// within ten minutes of each of its writes, so neither the snapshot of the roll nor the one
/// of the shutdown (`ProducerStateManager.takeSnapshot`) holds it, although it wrote minutes
/// before both. Its batches stay in sequence (the client never learnt anything was dropped).
#[test]
fn backfilled_event_times_expire_the_producer_at_once() {
    // klogscan reports no snapshot omission of a producer without an open transaction
    // (docs/findings.md, `snapshot_mismatch`: "legitimate omissions"), so this is quiet
    // whichever producer the snapshots leave out; the event times change no other verdict
    backfill(9201).assert_quiet();
}

/// An exactly-once pipeline re-processing two-day-old events keeps their event times as the
/// records' CreateTime — franz-go's `GroupTransactSession` producing what it consumed
/// (`pkg/kgo/txn.go`; the client keeps a set `Record.Timestamp`), a librdkafka transactional
/// producer given `RD_KAFKA_V_TIMESTAMP` (`src/rdkafka_msg.c`, `rd_kafka_msg_new0` keeps a
/// non-zero timestamp), Kafka Streams forwarding input timestamps. Its transactions commit
/// every few minutes; the COMMIT markers carry the partition leader's clock
/// (`KafkaApis.handleWriteTxnMarkersRequest` → `MemoryRecords.withEndTransactionMarker`:
/// `System.currentTimeMillis()`), the data the event times. The broker stopped a minute
/// into its next transaction. The coordinator times a transaction out from its own start
/// time (`TransactionMetadata.txnStartTimestamp`, set by the coordinator's clock at
/// `AddPartitionsToTxn`; `TransactionStateManager.timedOutTransactions`), never from record
/// timestamps: this transaction is a minute old, like the others it commits in time.
///
/// klogscan measured the open transaction's idleness from its batches' CreateTime (two days
/// before the reference time) and reported a `hanging_transaction` error, although the
/// markers before it show the broker's clock two days past its data's timestamps. Now the
/// idleness runs from the broker's clock the last marker before its last batch proves (the
/// batch was appended after it): two minutes, an `open_transaction`. (The broker's
/// `PartitionsWithLateTransactionsCount` metric shares the CreateTime basis,
/// `ProducerStateManager.hasLateTransaction`; no transaction is aborted or LSO held on it:
/// `late_by_broker_metric` stays true.)
#[test]
fn event_time_transactions_open_at_shutdown_do_not_hang() {
    let q = write_and_check(event_time_log_dir(16));
    q.assert_quiet();
    let open: Vec<_> = (q.scan.findings.iter())
        .filter(|f| f.kind == Kind::OpenTransaction)
        .collect();
    assert_eq!(open.len(), 1, "{:#?}", super::lines(&q.scan.findings));
    let floor = klogscan::testkit::scenario::DEFAULT_START_MS + 14 * MINUTE;
    assert_eq!(open[0].evidence["broker_clock_floor_ms"], floor);
    assert_eq!(open[0].evidence["idle_ms"], 2 * MINUTE);
    assert_eq!(open[0].evidence["late_by_broker_metric"], true);
    assert!(
        open[0].message.contains("stamped 48 hours earlier"),
        "{}",
        open[0].message
    );
}

/// Near miss: the same transaction with the rest of the log dir written for an hour after
/// its last marker. The broker's clock then proves it idle for 61 minutes whatever its
/// records say: `hanging_transaction` (an error), measured from the marker.
#[test]
fn event_time_transaction_idle_past_the_brokers_clock_still_hangs() {
    let q = write_and_check(event_time_log_dir(75));
    let hanging = loud(&q.scan.findings);
    assert_eq!(hanging.len(), 1, "{hanging:#?}");
    assert!(hanging[0].starts_with("error hanging_transaction enriched-0 @Some(12)"));
    let f = (q.scan.findings.iter())
        .find(|f| f.kind == Kind::HangingTransaction)
        .unwrap();
    assert_eq!(f.evidence["idle_ms"], 61 * MINUTE);
}

/// Near miss: the broker's clock comes from broker-stamped batches only. The same
/// transaction whose earlier transactions were closed by markers stamped with the same
/// event times (no broker clock in the log, as the client's data) keeps the CreateTime
/// basis: two days idle, `hanging_transaction`, no floor in the evidence.
#[test]
fn only_broker_stamped_batches_raise_the_clock() {
    let t0 = klogscan::testkit::scenario::DEFAULT_START_MS;
    let day = 86_400_000;
    let txn = Producer::transactional(9300, 0);
    let mut p0 = PartitionBuilder::new("enriched", 0);
    for k in 0..4 {
        p0.append(Batch::new(txn).records(3).at(t0 + k * 5 * MINUTE - 2 * day));
        if k < 3 {
            p0.commit(txn, 0);
        }
    }
    let mut p1 = PartitionBuilder::new("enriched", 1);
    p1.append(Batch::new(Producer::PLAIN).records(1).at(t0 + 16 * MINUTE));
    let q = write_and_check(LogDirBuilder::new(1).partition(p0).partition(p1));
    let f = (q.scan.findings.iter())
        .find(|f| f.kind == Kind::HangingTransaction)
        .unwrap_or_else(|| panic!("{:#?}", super::lines(&q.scan.findings)));
    assert!(f.evidence.get("broker_clock_floor_ms").is_none(), "{f:#?}");
}

/// `enriched-0`: producer 9300's transactions, data stamped two days back, markers at the
/// broker's time (one every 5 minutes), the last transaction open since a minute before
/// the 16th minute; `enriched-1`: current writes until minute `until` (the shutdown).
fn event_time_log_dir(until: i64) -> LogDirBuilder {
    let t0 = klogscan::testkit::scenario::DEFAULT_START_MS;
    let day = 86_400_000;
    let txn = Producer::transactional(9300, 0);
    let mut p0 = PartitionBuilder::new("enriched", 0);
    for k in 0..4 {
        let broker_now = t0 + k * 5 * MINUTE;
        let event = broker_now - 2 * day;
        p0.append(Batch::new(txn).records(3).at(event));
        if k < 3 {
            let cur = p0.now();
            p0.advance_time(broker_now + 4 * MINUTE - cur);
            p0.commit(txn, 0);
        }
    }
    let mut p1 = PartitionBuilder::new("enriched", 1);
    for k in 0..=until {
        p1.append(Batch::new(Producer::PLAIN).records(1).at(t0 + k * MINUTE));
    }
    LogDirBuilder::new(1).partition(p0).partition(p1)
}

/// The partition of the case above, its snapshots written without producer `dropped`.
fn backfill(dropped: i64) -> super::Quiet {
    let day = 86_400_000;
    let live = Producer::idempotent(9200, 0);
    let backfill = Producer::idempotent(9201, 0);
    let mut p = PartitionBuilder::new("events", 0).time_step(MINUTE);
    let mut roll = (0, Vec::new());
    for i in 0..6 {
        let now = p.now();
        p.append(Batch::new(live).records(2).at(now));
        p.append(Batch::new(backfill).records(3).at(now - 2 * day));
        let cur = p.now();
        p.advance_time(now + 15 * MINUTE - cur);
        if i == 2 {
            roll = (p.next_offset(), p.producer_state());
            p.roll();
        }
    }
    p.append(Batch::new(live).records(1));
    let end = (p.next_offset(), p.producer_state());
    write_and_check_with(LogDirBuilder::new(1).partition(p), |dir| {
        // the broker's snapshots: the backfilling producer dropped by the periodic check
        for (offset, entries) in [roll, end] {
            let kept: Vec<_> = entries
                .into_iter()
                .filter(|e| e.producer_id != dropped)
                .collect();
            assert_eq!(kept.len(), 1);
            let path = dir.join(format!("events-0/{offset:020}.snapshot"));
            std::fs::write(path, encode_snapshot(&kept)).unwrap();
        }
    })
}

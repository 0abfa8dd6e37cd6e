//! Transactions as a cluster writes them: TV2 markers one epoch above the data,
//! transactions spanning segment rolls with the `.txnindex` the leader writes, overlapping
//! aborted transactions, and the coordinator's `__transaction_state` log of complete
//! transactions beside the data partitions.

use super::write_and_check;
use klogscan::discover::identity::transaction_partition_for;
use klogscan::finding::{Kind, Severity};
use klogscan::testkit::txnlog::{TxnValue, key, state};
use klogscan::testkit::{
    Batch, Damage, LogDirBuilder, PartitionBuilder, PartitionFileOptions, Producer, Rec,
};

/// How one transaction ends, as the coordinator and the markers record it.
#[derive(Clone, Copy)]
enum End {
    Commit,
    Abort,
}

/// The coordinator's log (`__transaction_state-N`, N the partition owning `id` among 50)
/// and the data partitions of a run of transactions of one producer, in the order
/// `TransactionCoordinator` writes them: `Empty` (InitProducerId), then per transaction
/// `Ongoing` (AddPartitionsToTxn, the partitions listed), the data, `Prepare*`, one marker
/// per partition (`TransactionMarkerChannelManager`), `Complete*` with no partitions
/// (`TransactionMetadata.prepareComplete`). Under TV2 (`tv2`) the values are flexible with
/// `ClientTransactionVersion` 2 and `Prepare*` bumps the epoch
/// (`TransactionMetadata.prepareAbortOrCommit`), which the markers and the next
/// transaction carry.
struct TxnRun {
    id: &'static str,
    producer: Producer,
    tv2: bool,
    clock: i64,
    coordinator: PartitionBuilder,
    topics: Vec<(&'static str, i32)>,
    data: Vec<PartitionBuilder>,
}

impl TxnRun {
    fn new(
        id: &'static str,
        producer: Producer,
        topics: &[(&'static str, i32)],
        tv2: bool,
    ) -> TxnRun {
        let n = transaction_partition_for(id, 50);
        let clock = klogscan::testkit::scenario::DEFAULT_START_MS;
        let mut run = TxnRun {
            id,
            producer,
            tv2,
            clock,
            coordinator: PartitionBuilder::new("__transaction_state", n),
            topics: topics.to_vec(),
            data: topics
                .iter()
                .map(|(t, p)| PartitionBuilder::new(t, *p))
                .collect(),
        };
        let empty = run.value(producer.epoch, state::EMPTY, false, -1);
        run.coord(empty);
        run
    }

    fn value(&self, epoch: i16, status: u8, listed: bool, start: i64) -> TxnValue {
        self.value_of(self.producer.id, epoch, status, listed, start)
    }

    fn value_of(&self, pid: i64, epoch: i16, status: u8, listed: bool, start: i64) -> TxnValue {
        let mut by_topic: Vec<(&str, Vec<i32>)> = Vec::new();
        for &(m, n) in &self.topics {
            match by_topic.iter_mut().find(|(t, _)| *t == m) {
                Some((_, ps)) => ps.push(n),
                None => by_topic.push((m, vec![n])),
            }
        }
        let refs: Vec<(&str, &[i32])> = by_topic.iter().map(|(t, p)| (*t, p.as_slice())).collect();
        let mut v = TxnValue::new(pid, epoch, status).times(self.clock, start);
        if listed {
            v = v.partitions(&refs);
        }
        if self.tv2 {
            v = v.v1(-1, -1, 2);
        }
        v
    }

    fn coord(&mut self, v: TxnValue) {
        let rec = Rec::kv(key(self.id), v.encode());
        self.coordinator
            .append(Batch::new(Producer::PLAIN).record(rec).at(self.clock));
        self.clock += 5;
    }

    /// `Ongoing` and the data of one transaction; returns its start time.
    fn open(&mut self, records: usize) -> i64 {
        let start = self.clock;
        let v = self.value(self.producer.epoch, state::ONGOING, true, start);
        self.coord(v);
        for d in &mut self.data {
            d.append(Batch::new(self.producer).records(records).at(self.clock));
            self.clock += 10;
        }
        start
    }

    /// `Prepare*` at `marker`'s epoch, the markers, and `Complete*` naming `complete_pid`
    /// at `complete_epoch`.
    fn close(&mut self, start: i64, end: End, marker: Producer, complete: (i64, i16)) {
        let (prepare, done) = match end {
            End::Commit => (state::PREPARE_COMMIT, state::COMPLETE_COMMIT),
            End::Abort => (state::PREPARE_ABORT, state::COMPLETE_ABORT),
        };
        let v = self.value(marker.epoch, prepare, true, start);
        self.coord(v);
        for d in &mut self.data {
            let now = d.now();
            d.advance_time(self.clock - now);
            d.end_txn(marker, matches!(end, End::Commit), 0);
            self.clock += 10;
        }
        let v = self.value_of(complete.0, complete.1, done, false, start);
        self.coord(v);
        self.clock += 1000;
    }

    /// One transaction of `records` records per partition, ended by `end`.
    fn txn(&mut self, records: usize, end: End) {
        let start = self.open(records);
        let e = self.producer.epoch;
        let marker = self.producer.with_epoch(if self.tv2 { e + 1 } else { e });
        self.close(start, end, marker, (marker.id, marker.epoch));
        self.producer = marker;
    }

    /// The transaction times out: the coordinator fences the producer's epoch and aborts at
    /// `epoch + 1` whatever the transaction version
    /// (`TransactionCoordinator.abortTimedOutTransactions` →
    /// `TransactionMetadata.prepareFenceProducerEpoch`), and the application's new producer gets
    /// `epoch + 2` from `InitProducerId` (`prepareIncrementProducerEpoch`), its `Empty`.
    fn timed_out(&mut self, records: usize) {
        let start = self.open(records);
        self.clock += 60_000;
        let fenced = self.producer.bumped();
        self.close(start, End::Abort, fenced, (fenced.id, fenced.epoch));
        self.producer = fenced.bumped();
        let v = self.value(self.producer.epoch, state::EMPTY, false, -1);
        self.coord(v);
    }

    /// A TV2 commit at an exhausted epoch: the markers carry `Short.MAX_VALUE` and the
    /// coordinator moves the transactional id to the new producer id `next` at epoch 0 when
    /// it completes (`TransactionMetadata.prepareAbortOrCommit` with `nextProducerId`,
    /// `prepareComplete`).
    fn commit_rotating_to(&mut self, records: usize, next: i64) {
        let start = self.open(records);
        let marker = self.producer.with_epoch(i16::MAX);
        self.close(start, End::Commit, marker, (next, 0));
        self.producer = Producer::transactional(next, 0);
    }

    fn log_dir(self) -> LogDirBuilder {
        let mut ld = LogDirBuilder::new(1).partition(self.coordinator);
        for d in self.data {
            ld = ld.partition(d);
        }
        ld
    }
}

/// Transaction version 2 (KIP-890): each `EndTxn` bumps the epoch, so every marker sits one epoch
/// above its data and the next transaction starts there at sequence 0
/// (`TransactionMetadata.prepareAbortOrCommit` with `supportEpochBump`,
/// `ProducerAppendInfo.appendEndTxnMarker` accepting the higher epoch and `checkSequence` a new
/// epoch at 0; `TransactionMetadataTest.testEpochBumpOnEndTxn`). Two partitions, commits and an
/// abort, the coordinator's flexible values.
#[test]
fn tv2_markers_one_epoch_above_the_data() {
    let mut run = TxnRun::new(
        "orders-app",
        Producer::transactional(4000, 0),
        &[("orders", 0), ("payments", 1)],
        true,
    );
    run.txn(2, End::Commit);
    run.txn(3, End::Abort);
    run.txn(1, End::Commit);
    run.txn(2, End::Commit);
    let q = write_and_check(run.log_dir(), |_| {});
    q.assert_quiet();
}

/// The same run under TV0/1: markers at the data's epoch, and the coordinator's v0 values.
#[test]
fn tv1_transactions_with_their_coordinator_log() {
    let mut run = TxnRun::new(
        "legacy-app",
        Producer::transactional(4100, 7),
        &[("orders", 0), ("orders", 1), ("payments", 0)],
        false,
    );
    run.txn(2, End::Commit);
    run.txn(1, End::Abort);
    run.txn(4, End::Commit);
    let q = write_and_check(run.log_dir(), |_| {});
    q.assert_quiet();
}

/// Transactions open across segment rolls, two of them aborted, with the `.txnindex` each
/// abort leaves in the segment that holds its marker: `UnifiedLog.append` passes every
/// completed transaction to `LogSegment.updateTxnIndex` of the active segment with
/// `ProducerStateManager.lastStableOffset(completedTxn)` (the first offset of the oldest
/// other open transaction, else the marker's offset + 1), and only aborted ones are indexed
/// (`ProducerAppendInfo.appendEndTxnMarker`: an empty transaction completes nothing). The
/// snapshots of the rolls hold the open transactions' first offsets
/// (`ProducerStateManager.takeSnapshot`). `UnifiedLogTest.testTransactionIndexUpdated`,
/// `LogSegmentTest.testRecoverTransactionIndex`; `UnifiedLog.collectAbortedTransactions`
/// reads these entries back for `read_committed` fetches.
#[test]
fn transactions_spanning_rolls_with_their_txnindex() {
    let a = Producer::transactional(1, 0);
    let b = Producer::transactional(2, 0);
    let c = Producer::transactional(3, 5);
    let idem = Producer::idempotent(9, 0);
    let mut p = PartitionBuilder::new("ledger", 0);
    p.append(Batch::new(a).records(3)); // 0-2: a opens at 0
    p.append(Batch::new(idem).records(2)); // 3-4
    p.roll(); // snapshot at 5: a open from 0
    p.append(Batch::new(b).records(2)); // 5-6: b opens at 5
    p.append(Batch::new(a).records(1)); // 7
    p.roll(); // snapshot at 8: a from 0, b from 5
    p.abort(a, 3); // 8: aborted (a, 0, 8), lso 5 (b open) → 8.txnindex
    p.append(Batch::new(idem).records(1)); // 9
    p.abort(a, 3); // 10: an empty transaction: not indexed
    p.commit(b, 3); // 11
    p.roll();
    p.append(Batch::new(c).records(2)); // 12-13: c opens at 12
    p.append(Batch::new(b).records(1)); // 14: b opens at 14
    p.abort(c, 3); // 15: aborted (c, 12, 15), lso 14 (b open) → 12.txnindex
    p.commit(b, 3); // 16
    p.append(Batch::new(idem).records(1)); // 17
    let aborted = p.aborted_txns();
    assert_eq!(aborted.len(), 2);
    assert_eq!((aborted[0].first_offset, aborted[0].last_offset), (0, 8));
    assert_eq!(aborted[0].last_stable_offset, 5);
    assert_eq!(aborted[1].last_stable_offset, 14);
    let q = write_and_check(LogDirBuilder::new(1).partition(p), |_| {});
    q.assert_quiet();
    let d = &q.manifest.partitions[0].dir;
    assert!(d.join("00000000000000000008.txnindex").is_file());
    assert!(d.join("00000000000000000012.txnindex").is_file());
    assert_eq!(q.scan.partitions[0].last_stable_offset, Some(18));
}

/// Near miss of the above: the `.txnindex` entry of the first abort left out
/// (`Damage::DropTxnIndexEntry`) is what `verify` reports (`LogSegment.updateTxnIndex`
/// would have written it), so the quiet verdict above is not vacuous.
#[test]
fn a_missing_txnindex_entry_is_reported() {
    let a = Producer::transactional(1, 0);
    let b = Producer::transactional(2, 0);
    let opts = PartitionFileOptions::default().damage(Damage::DropTxnIndexEntry {
        segment: 1,
        entry: 0,
    });
    let mut p = PartitionBuilder::new("ledger", 0).broker_files(opts);
    p.append(Batch::new(a).records(3));
    p.append(Batch::new(b).records(2));
    p.roll();
    p.abort(a, 3);
    p.commit(b, 3);
    let q = write_and_check(LogDirBuilder::new(1).partition(p), |_| {});
    let kinds: Vec<_> = q.verify.findings().map(|f| (f.kind, f.severity)).collect();
    assert!(
        kinds.contains(&(Kind::TxnindexMismatch, Severity::Error)),
        "{kinds:?}"
    );
}

/// A transaction that timed out under TV1: data at epoch 2, the coordinator's abort at
/// epoch 3 (markers included), the next producer instance at epoch 4 from sequence 0
/// (`TransactionCoordinatorTest.shouldAbortExpiredTransactionsInOngoingStateAndBumpEpoch`,
/// `ProducerStateManagerTest.testAppendTxnMarkerWithNoProducerState`-style markers above
/// the data's epoch, which `ProducerAppendInfo.checkProducerEpoch` accepts).
#[test]
fn tv1_timed_out_transaction_aborted_one_epoch_up() {
    let mut run = TxnRun::new(
        "slow-app",
        Producer::transactional(4300, 2),
        &[("orders", 0), ("payments", 0)],
        false,
    );
    run.timed_out(2);
    run.txn(3, End::Commit);
    run.txn(1, End::Commit);
    let q = write_and_check(run.log_dir(), |_| {});
    q.assert_quiet();
}

/// TV2 at an exhausted epoch: the producer writes at 32766, the commit markers at 32767
/// (`Short.MAX_VALUE`, `TransactionMetadata.isEpochExhausted`), and the transactional id
/// continues as a new producer id at epoch 0 (`TransactionCoordinator.handleEndTransaction`
/// allocating `nextProducerId`, `TransactionMetadata.prepareComplete` switching to it;
/// `TransactionMetadataTest.testEpochBumpOnEndTxnOverflow`; 2025-10:
/// `TransactionCoordinatorTest.shouldReturnOkOnEndTxnV2IfEndTxnV2RetryEpochOverflow`). Under TV2
/// every transaction bumps the epoch, so a producer committing a few times a second rotates
/// every few hours: this is routine. `TransactionLog.valueToBytes` writes no
/// `PreviousProducerId` (trunk 2024-10 and the 2025-10 tree alike), so the CompleteCommit
/// record names producer 4401 with previous -1 — and the records after it (`Ongoing` of
/// 4401 at epoch 0, its markers) show the client received the new producer id in its
/// EndTxn answer, so no EndTxn retry (the only request `TransactionCoordinator.endTransaction`'s
/// `retryOnOverflow` would answer INVALID_PRODUCER_ID_MAPPING) can follow.
#[test]
fn tv2_epoch_exhaustion_moves_to_a_new_producer_id() {
    let mut run = TxnRun::new(
        "long-lived-app",
        Producer::transactional(4400, 32_765),
        &[("orders", 2)],
        true,
    );
    run.txn(2, End::Commit); // 32765 → markers at 32766
    run.commit_rotating_to(2, 4401); // 32766 → markers at 32767, then 4401/0
    run.txn(2, End::Commit); // 4401: 0 → 1
    run.txn(1, End::Abort);
    let q = write_and_check(run.log_dir(), |_| {});
    q.assert_quiet();
}

//! One transactional id across the `transaction.version` upgrades: its coordinator's values
//! v0 (pre-4.0, and 4.0 at TV 0), v1 once the cluster's `transaction.version` reached 1
//! (flexible, `ClientTransactionVersion` tagged), and a client on TV2 after the feature moved
//! to 2, whose every `EndTxn` bumps the epoch — beside the data partition holding all of its
//! transactions.

use super::check;
use klogscan::discover::identity::transaction_partition_for;
use klogscan::finding::Kind;
use klogscan::testkit::txnlog::{TxnValue, key, state};
use klogscan::testkit::{Batch, LogDirBuilder, PartitionBuilder, Producer, Rec};

const ID: &str = "billing";
const PID: i64 = 7000;
const T2024: i64 = 1_704_067_200_000;

/// The log format each value is written in (`TransactionVersion.transactionLogValueVersion`)
/// and the client's transaction version (`ClientTransactionVersion`, TV2 for `EndTxn` v5).
#[derive(Clone, Copy, PartialEq)]
enum Era {
    /// Before `transaction.version` 1: v0 values.
    V0,
    /// `transaction.version` 1: v1 values, client TV 0 (tag 2 not written).
    V1,
    /// `transaction.version` 2 and a TV2 client: v1 values with `ClientTransactionVersion` 2.
    Tv2,
}

struct Run {
    coordinator: PartitionBuilder,
    data: PartitionBuilder,
    producer: Producer,
    clock: i64,
}

impl Run {
    fn new() -> Run {
        let n = transaction_partition_for(ID, 50);
        let mut r = Run {
            coordinator: PartitionBuilder::new("__transaction_state", n).start_time(T2024),
            data: PartitionBuilder::new("invoices", 0).start_time(T2024),
            producer: Producer::transactional(PID, 0),
            clock: T2024,
        };
        r.coord(Era::V0, 0, state::EMPTY, false, -1);
        r
    }

    fn coord(&mut self, era: Era, epoch: i16, status: u8, listed: bool, start: i64) {
        let mut v = TxnValue::new(PID, epoch, status).times(self.clock, start);
        if listed {
            v = v.partitions(&[("invoices", &[0])]);
        }
        match era {
            Era::V0 => {}
            Era::V1 => v = v.v1(-1, -1, 0),
            Era::Tv2 => v = v.v1(-1, -1, 2),
        }
        let rec = Rec::kv(key(ID), v.encode());
        let now = self.coordinator.now();
        self.coordinator.advance_time(self.clock - now);
        self.coordinator
            .append(Batch::new(Producer::PLAIN).record(rec).at(self.clock));
        self.clock += 10;
    }

    /// `InitProducerId` of a restarted producer: `Empty` one epoch up
    /// (`TransactionMetadata.prepareIncrementProducerEpoch`).
    fn init(&mut self, era: Era) {
        self.producer = self.producer.bumped();
        self.coord(era, self.producer.epoch, state::EMPTY, false, -1);
    }

    /// One transaction of `n` records ending in a commit (`commit`) or an abort; under TV2 the
    /// `Prepare*` value, the marker and the `Complete*` value carry the epoch one up
    /// (`TransactionMetadata.prepareAbortOrCommit` with `supportEpochBump`), and the next
    /// transaction runs at it.
    fn txn(&mut self, era: Era, n: usize, commit: bool) {
        self.txn_across(era, era, n, commit);
    }

    /// [`Self::txn`] whose `Ongoing` is written in `open`'s format and whose `Prepare*` and
    /// `Complete*` in `era`'s (the feature level changed while the transaction was open).
    fn txn_across(&mut self, open: Era, era: Era, n: usize, commit: bool) {
        let start = self.clock;
        let e = self.producer.epoch;
        self.coord(open, e, state::ONGOING, true, start);
        let now = self.data.now();
        self.data.advance_time(self.clock - now);
        self.data
            .append(Batch::new(self.producer).records(n).at(self.clock));
        let end = if era == Era::Tv2 {
            self.producer.bumped()
        } else {
            self.producer
        };
        let (prep, done) = match commit {
            true => (state::PREPARE_COMMIT, state::COMPLETE_COMMIT),
            false => (state::PREPARE_ABORT, state::COMPLETE_ABORT),
        };
        self.coord(era, end.epoch, prep, true, start);
        self.data.end_txn(end, commit, 0);
        self.coord(era, end.epoch, done, false, start);
        self.producer = end;
        self.clock += 60_000;
    }

    fn log_dir(self) -> LogDirBuilder {
        LogDirBuilder::new(1)
            .cluster_id(super::CLUSTER)
            .cluster_id(super::CLUSTER)
            .partition(self.coordinator)
            .partition(self.data)
    }
}

/// The life of one transactional id: two transactions under TV0 (epoch 0, v0 values), one
/// open while `kafka-features upgrade --feature transaction.version=1` ran (`Ongoing` v0, its
/// `Prepare*`/`Complete*` v1: `TransactionLog.valueToBytes` takes the level at each write),
/// one after (v1 values, same epoch: no bump without TV2 —
/// `TransactionVersion.supportsEpochBump`), then the application restarted on a TV2
/// client (`InitProducerId`: epoch 1) and three transactions each one epoch up, markers
/// included (`TransactionMetadata.prepareAbortOrCommit`; `ProducerAppendInfo.appendEndTxnMarker`
/// accepts a marker one epoch above the data, and `checkSequence` a new epoch at sequence 0).
/// The coordinator reads v0 and v1 values of one id alike (`TransactionLog.readTxnRecordValue`).
/// Nothing at warning or above.
#[test]
fn one_transactional_id_from_v0_values_to_tv2() {
    let mut r = Run::new();
    r.txn(Era::V0, 2, true);
    r.txn(Era::V0, 1, false);
    r.txn_across(Era::V0, Era::V1, 2, true);
    r.txn(Era::V1, 3, true);
    r.init(Era::V1);
    r.txn(Era::Tv2, 2, true);
    r.txn(Era::Tv2, 1, false);
    r.txn(Era::Tv2, 2, true);
    assert_eq!(r.producer.epoch, 4);
    let q = check(r.log_dir(), |_| {}, &[Some("3.9.0"), Some("4.0.0"), None]);
    q.assert_quiet();
}

/// The twin: the last TV2 transaction's marker never reached `invoices-0` although the
/// coordinator wrote `CompleteCommit` (the marker write is what lets it complete:
/// `TransactionMarkerChannelManager` waits for every partition). The transaction is left
/// open in the data: reported.
#[test]
fn twin_a_tv2_transaction_completed_without_its_marker_is_reported() {
    let mut r = Run::new();
    r.txn(Era::V0, 2, true);
    r.txn(Era::V1, 3, true);
    r.init(Era::V1);
    r.txn(Era::Tv2, 2, true);
    // the last transaction: data and coordinator values, but no marker
    let start = r.clock;
    r.coord(Era::Tv2, 2, state::ONGOING, true, start);
    let now = r.data.now();
    r.data.advance_time(r.clock - now);
    r.data.append(Batch::new(r.producer).records(2).at(r.clock));
    r.coord(Era::Tv2, 3, state::PREPARE_COMMIT, true, start);
    r.coord(Era::Tv2, 3, state::COMPLETE_COMMIT, false, start);
    let q = check(r.log_dir(), |_| {}, &[None]);
    q.assert_reported(Kind::TransactionMarkerMissing);
}

//! Acceptance of the cross-partition transaction join on clusters written by a second,
//! independent encoder (`world`), step by step as Kafka's transaction coordinator writes
//! them: producers in tight loops (the next transaction's data stamped before the previous
//! markers and before its own Ongoing record), partitions added one AddPartitionsToTxn at a
//! time, aborts, a transaction the coordinator times out, a fenced instance (with the
//! InitProducerId records), coordinator failovers before the Prepare record, between the
//! markers and before the Complete record, producer id rotation at epoch exhaustion, an
//! expired transactional id reused, partitions spread over two brokers; under TV0/1 and TV2,
//! with and without `__transaction_state`. Healthy forms raise nothing above info; each has
//! corrupted twins (a split outcome, a lost marker, a partition never listed, a coordinator
//! stuck in Prepare*) that are still found, with the right kind on the right partition.

use klogscan::finding::{Finding, Kind, Severity};
use klogscan::partition::scan::ScanOptions;
use klogscan::pipeline;
use klogscan::read::format::metadata::{MetaRecord, RESOURCE_TOPIC};
use klogscan::results::ScanReport;
use klogscan::testkit::metadata::encode;
use klogscan::testkit::{Batch, PartitionBuilder, Producer, Rec};

mod world;
use world::{ID_EXPIRATION_MS, Meta, Tp, World};

const A0: Tp = ("orders", 0);
const A1: Tp = ("orders", 1);
const P0: Tp = ("payments", 0);
const U2: Tp = ("audit", 2);
const B0: Tp = ("billing", 0);

/// A corrupted twin: how one transaction goes wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fault {
    None,
    /// This partition gets the other marker type.
    Flip(Tp),
    /// This partition's marker is lost (the coordinator still completes).
    Skip(Tp),
    /// Data on this partition that no AddPartitionsToTxn listed (no marker).
    Unlisted(Tp),
    /// The coordinator never gets past the Prepare record.
    StuckInPrepare,
}

impl Fault {
    /// The kind and partition a scan must report for this fault.
    fn expected(self, tps: &[Tp]) -> Option<(Kind, Tp)> {
        match self {
            Fault::None => None,
            Fault::Flip(tp) => Some((Kind::TransactionOutcomeMismatch, tp)),
            Fault::Skip(tp) => Some((Kind::TransactionMarkerMissing, tp)),
            Fault::Unlisted(tp) => Some((Kind::TransactionPartitionUnlisted, tp)),
            Fault::StuckInPrepare => Some((Kind::TransactionStuckInPrepare, tps[0])),
        }
    }
}

/// When the coordinator partition changes leader during a transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Failover {
    None,
    /// Between the Ongoing and the Prepare record.
    BeforePrepare,
    /// After this many markers.
    AfterMarkers(usize),
    /// After every marker, before the Complete record.
    BeforeComplete,
}

/// One producer (transactional id) in a tight loop.
struct Loop {
    m: Meta,
    /// When the client stamps its next transaction's data: right after the previous
    /// EndTxn answer, before the markers land.
    stamp: i64,
}

impl Loop {
    fn new(w: &mut World, id: &'static str) -> Loop {
        let m = w.init(id);
        Loop { stamp: w.now, m }
    }

    /// A producer whose id's earlier records were compacted away.
    fn at(w: &mut World, id: &'static str, pid: i64, epoch: i16) -> Loop {
        let m = w.init_at(id, pid, epoch);
        Loop { stamp: w.now, m }
    }

    /// One transaction on `tps`: the first partition added and written, then the rest
    /// (a second Ongoing record), EndTxn, markers, Complete. The next transaction's data is
    /// stamped 1 ms after the EndTxn answer; its AddPartitionsToTxn succeeds only after
    /// the Complete record (CONCURRENT_TRANSACTIONS before).
    fn txn(&mut self, w: &mut World, tps: &[Tp], commit: bool, fault: Fault) {
        self.txn_with(w, tps, commit, fault, Failover::None);
    }

    /// [`Loop::txn`] with the coordinator partition changing leader at `failover`.
    fn txn_with(
        &mut self,
        w: &mut World,
        tps: &[Tp],
        commit: bool,
        fault: Fault,
        failover: Failover,
    ) {
        let listed: Vec<Tp> = tps
            .iter()
            .copied()
            .filter(|tp| fault != Fault::Unlisted(*tp))
            .collect();
        self.begin(w, tps, &listed);
        w.tick(10);
        if failover == Failover::BeforePrepare {
            // the new coordinator loads the Ongoing transaction and takes the EndTxn
            w.failover();
            w.tick(3_000);
        }
        w.prepare(&mut self.m, commit);
        let answered = w.now;
        if fault == Fault::StuckInPrepare {
            return;
        }
        w.tick(2);
        let cut = match failover {
            Failover::AfterMarkers(n) => n,
            _ => listed.len(),
        };
        self.markers(w, &listed[..cut], commit, fault);
        if matches!(
            failover,
            Failover::AfterMarkers(_) | Failover::BeforeComplete
        ) {
            // the new coordinator finds PrepareCommit/PrepareAbort on load and sends every
            // listed partition's marker again (`TransactionStateManager.loadTransactionsForTxnTopicPartition`
            // hands them to `TransactionMarkerChannelManager.addTxnMarkersToSend`)
            w.failover();
            w.tick(3_000);
            self.markers(w, &listed, commit, fault);
        }
        w.complete(&mut self.m);
        self.stamp = answered + 1;
        w.tick(20);
    }

    fn markers(&self, w: &mut World, tps: &[Tp], commit: bool, fault: Fault) {
        for &tp in tps {
            if fault != Fault::Skip(tp) {
                w.markers(&self.m, &[tp], commit != (fault == Fault::Flip(tp)));
            }
        }
    }

    /// The coordinator aborts this producer's Ongoing transaction on `tps` itself (a
    /// timeout, or a new instance's InitProducerId): `prepareFenceProducerEpoch`, then
    /// PrepareAbort, the ABORT markers (with `fault`) and CompleteAbort.
    fn coordinator_abort(&mut self, w: &mut World, tps: &[Tp], fault: Fault) {
        w.fence(&mut self.m);
        w.tick(2);
        self.markers(w, tps, false, fault);
        w.complete(&mut self.m);
    }

    /// AddPartitionsToTxn of `listed` in two steps and the data of `tps`.
    fn begin(&mut self, w: &mut World, tps: &[Tp], listed: &[Tp]) {
        w.add(&mut self.m, &listed[..1]);
        w.send(&self.m, tps[0], self.stamp);
        w.tick(2);
        w.add(&mut self.m, listed);
        for (i, &tp) in tps.iter().enumerate().skip(1) {
            w.send(&self.m, tp, self.stamp + i as i64);
        }
    }

    /// A loop of `n` transactions alternating between `sets`, aborting every fourth; the
    /// transaction numbered `at` gets `fault`.
    fn run(&mut self, w: &mut World, sets: [&[Tp]; 2], n: usize, at: usize, fault: Fault) {
        for i in 0..n {
            let f = if i == at { fault } else { Fault::None };
            self.txn(w, sets[i % 2], i % 4 != 3, f);
        }
    }
}

/// Scan `w` with its partitions split over two brokers (`on_first` picks broker 1's;
/// the coordinator's partition is on broker 1).
fn scan(w: &World, with_coordinator: bool, on_first: fn(Tp) -> bool) -> ScanReport {
    scan_policies(w, with_coordinator, on_first, false)
}

/// With `delete_policy`, broker 1 also holds the cluster's KRaft metadata log, which
/// sets `cleanup.policy=delete` on every data topic: the topics are known not compacted.
/// Without, their cleanup policy is unknown (it lives in the brokers' configuration).
fn scan_policies(
    w: &World,
    with_coordinator: bool,
    on_first: fn(Tp) -> bool,
    delete_policy: bool,
) -> ScanReport {
    let dir = tempfile::tempdir().unwrap();
    let dirs = [dir.path().join("b1"), dir.path().join("b2")];
    let paths = w.write_to(&dirs, on_first, with_coordinator);
    if delete_policy {
        let mut p = PartitionBuilder::new("__cluster_metadata", 0);
        let mut topics = w.topics();
        topics.extend([A0.0, P0.0, U2.0, B0.0]);
        for topic in topics {
            let r = MetaRecord::Config {
                resource_type: RESOURCE_TOPIC,
                resource_name: topic.into(),
                name: "cleanup.policy".into(),
                value: Some("delete".into()),
            };
            p.append(Batch::new(Producer::PLAIN).record(Rec::value(encode(&r))));
        }
        p.write(&dirs[0]).unwrap();
    }
    let paths: Vec<_> = paths.into_iter().filter(|p| p.exists()).collect();
    pipeline::scan(&paths, &ScanOptions::default())
}

fn everywhere_first(_: Tp) -> bool {
    true
}

fn above_info(r: &ScanReport) -> Vec<&Finding> {
    r.findings
        .iter()
        .filter(|f| f.severity > Severity::Info)
        .collect()
}

/// Healthy: nothing above info, with and without the coordinator's log (and with the data
/// topics known not compacted).
fn assert_healthy(name: &str, w: &World, on_first: fn(Tp) -> bool) {
    for (with_coordinator, delete_policy) in [(true, false), (false, false), (true, true)] {
        let r = scan_policies(w, with_coordinator, on_first, delete_policy);
        let bad = above_info(&r);
        assert!(
            bad.is_empty(),
            "{name} tv2 {} coordinator {with_coordinator} delete policy {delete_policy}: {bad:#?}",
            w.tv2
        );
    }
}

/// A twin: with the coordinator's log the fault's kind is reported on its partition, at
/// warning or above. Returns what is wrong, for the caller to collect.
fn found(
    name: &str,
    w: &World,
    fault: Fault,
    tps: &[Tp],
    on_first: fn(Tp) -> bool,
) -> Option<String> {
    let (kind, tp) = fault.expected(tps).unwrap();
    // Where a lost marker is proven only by order, an unknown cleanup policy leaves it at
    // info (the cleaner may have removed an empty transaction's marker); it is still said.
    let unknown = scan(w, true, on_first);
    let said = unknown.findings.iter().any(|f| {
        f.kind == kind
            && (kind == Kind::TransactionStuckInPrepare || (f.topic.as_str(), f.partition) == tp)
    });
    if !said {
        return Some(format!(
            "{name} tv2 {} {fault:?}: want {kind:?} on {tp:?} at any severity with the cleanup policy unknown",
            w.tv2
        ));
    }
    let r = scan_policies(w, true, on_first, true);
    let hit = r.findings.iter().find(|f| {
        f.kind == kind
            && f.severity >= Severity::Warning
            && (kind == Kind::TransactionStuckInPrepare || (f.topic.as_str(), f.partition) == tp)
    });
    if hit.is_some() {
        return None;
    }
    let got: Vec<String> = r
        .findings
        .iter()
        .filter(|f| f.severity > Severity::Info)
        .map(|f| {
            format!(
                "{:?} {:?} {}-{}: {}",
                f.severity, f.kind, f.topic, f.partition, f.message
            )
        })
        .collect();
    Some(format!(
        "{name} tv2 {} {fault:?}: want {kind:?} on {tp:?}, got {got:#?}",
        w.tv2
    ))
}

fn assert_none_missed(missed: Vec<String>) {
    assert!(missed.is_empty(), "{}", missed.join("\n"));
}

/// Reference time well past the last transaction (40 min of plain traffic later).
fn settle(w: &mut World) {
    w.tick(40 * 60_000);
    w.plain(B0);
    w.plain(A0);
}

const SETS: [&[Tp]; 2] = [&[A0, A1], &[P0, U2, A1]];
const SETS2: [&[Tp]; 2] = [&[P0, U2], &[A0, P0]];

/// Two producers in tight loops, interleaved transaction by transaction, on overlapping
/// partition sets; `fault` on transaction `at` of the first.
fn two_loops(tv2: bool, at: usize, fault: Fault) -> World {
    two_loops_on(SETS, tv2, at, fault)
}

/// [`two_loops`] with the first producer's partition sets `sets`.
fn two_loops_on(sets: [&[Tp]; 2], tv2: bool, at: usize, fault: Fault) -> World {
    two_loops_in(World::new(tv2), sets, at, fault)
}

/// [`two_loops_on`], in `w` as the caller prepared it.
fn two_loops_in(mut w: World, sets: [&[Tp]; 2], at: usize, fault: Fault) -> World {
    let mut a = Loop::new(&mut w, "app-0");
    let mut b = Loop::new(&mut w, "app-1");
    for i in 0..12 {
        let f = if i == at { fault } else { Fault::None };
        a.txn(&mut w, sets[i % 2], i % 4 != 3, f);
        if f != Fault::StuckInPrepare {
            b.txn(&mut w, SETS2[i % 2], i % 3 != 2, Fault::None);
        }
        if f == Fault::StuckInPrepare {
            break;
        }
    }
    settle(&mut w);
    w
}

#[test]
fn two_tight_loops_raise_nothing_above_info() {
    for tv2 in [false, true] {
        assert_healthy(
            "two loops",
            &two_loops(tv2, 99, Fault::None),
            everywhere_first,
        );
    }
}

#[test]
fn two_tight_loops_faults_are_found() {
    let mut missed = Vec::new();
    for tv2 in [false, true] {
        for (at, fault) in [
            (11, Fault::Flip(A1)),
            (6, Fault::Flip(A1)),
            (11, Fault::Skip(P0)),
            // lost in the middle: the next transaction on the partition closes the data
            (6, Fault::Skip(A1)),
            (if tv2 { 5 } else { 11 }, Fault::Unlisted(U2)),
            (11, Fault::Unlisted(U2)),
            (11, Fault::StuckInPrepare),
        ] {
            let w = two_loops(tv2, at, fault);
            missed.extend(found(
                "two loops",
                &w,
                fault,
                SETS[at % 2],
                everywhere_first,
            ));
        }
    }
    assert_none_missed(missed);
}

/// A partition whose cleanup policy no input states but whose batches carry the log
/// cleaner's traces (here its first batch, rebuilt by a cleaning pass with one record kept
/// of two: `MemoryRecords.filterTo` keeps the batch's offsets) is treated as compacted, as
/// the producer-state replay treats it (`PartitionReport::compaction`): the cleaner may have
/// removed an empty transaction's marker there (`LogCleaner`), so a marker missing in the
/// middle of a TV0/1 loop proves nothing by order and no finding is given, as on a topic
/// stated compacted. The twin without the trace keeps the info finding of an unknown policy.
#[test]
fn cleaner_traces_give_a_lost_marker_no_order_proof() {
    const X1: Tp = ("events", 1);
    let sets: [&[Tp]; 2] = [&[A0, X1], &[P0, U2, X1]];
    for traces in [true, false] {
        let mut w = World::new(false);
        if traces {
            w.cleaned_plain(X1);
        } else {
            w.plain(X1);
        }
        let w = two_loops_in(w, sets, 6, Fault::Skip(X1));
        let r = scan(&w, true, everywhere_first);
        let on_x: Vec<_> = r
            .findings
            .iter()
            .filter(|f| f.kind == Kind::TransactionMarkerMissing && f.topic == X1.0)
            .collect();
        if traces {
            assert!(on_x.is_empty(), "{on_x:#?}");
        } else {
            assert_eq!(on_x.len(), 1, "{on_x:#?}");
            assert_eq!(on_x[0].severity, Severity::Info, "{on_x:#?}");
            assert_eq!(on_x[0].evidence["compacted"], serde_json::Value::Null);
        }
    }
}

/// A user topic whose name starts with `__` is no internal topic: known not compacted
/// (`cleanup.policy=delete`), a marker lost in the middle of a TV0/1 loop is proven by the
/// order of its transactions (`LogCleaner` removes markers only from compacted logs), as
/// on any other topic; with its policy unknown it is still said, at info.
#[test]
fn a_user_topic_named_like_an_internal_one_is_not_taken_for_compacted() {
    const X1: Tp = ("__x", 1);
    let sets: [&[Tp]; 2] = [&[A0, X1], &[P0, U2, X1]];
    let w = two_loops_on(sets, false, 6, Fault::Skip(X1));
    assert_none_missed(
        found("user __x", &w, Fault::Skip(X1), sets[0], everywhere_first)
            .into_iter()
            .collect(),
    );
    let r = scan_policies(&w, true, everywhere_first, true);
    let f = r
        .findings
        .iter()
        .find(|f| f.kind == Kind::TransactionMarkerMissing && f.topic == "__x")
        .expect("the lost marker on __x-1");
    assert_eq!(f.severity, Severity::Warning, "{f:#?}");
    assert_eq!(f.evidence["proven_by_epoch"], false, "{f:#?}");
    assert_eq!(f.evidence["compacted"], false, "{f:#?}");
    // A later marker closed the part: nothing on the partition is stuck.
    assert!(
        f.broker_behaviour
            .contains("until the later transaction's marker closed it")
            && !f.broker_behaviour.contains("stuck"),
        "{}",
        f.broker_behaviour
    );
    // Healthy, the same topic raises nothing above info.
    assert_healthy(
        "user __x",
        &two_loops_on(sets, false, 99, Fault::None),
        everywhere_first,
    );
}

/// A producer's transaction times out: the coordinator fences its epoch and aborts it
/// (`TransactionCoordinator.abortTimedOutTransactions`: PrepareAbort at epoch + 1 under
/// TV0/1, + 2 under TV2), the producer, fenced, is initialised again (an Empty record one
/// epoch up) and loops on. `abort_fault` goes to the coordinator's ABORT markers, `fault` to
/// the last transaction.
fn timed_out(tv2: bool, abort_fault: Fault, fault: Fault) -> World {
    let mut w = World::new(tv2);
    let mut a = Loop::new(&mut w, "app");
    a.run(&mut w, SETS, 5, 99, Fault::None);
    a.begin(&mut w, SETS[1], SETS[1]);
    w.tick(60_000 + 10_000);
    a.coordinator_abort(&mut w, SETS[1], abort_fault);
    w.tick(700);
    w.reinit(&mut a.m);
    a.stamp = w.now;
    a.run(&mut w, SETS, 6, 5, fault);
    settle(&mut w);
    w
}

/// A second instance of the application starts while the first has a transaction open on
/// A0 and A1 (data on A1 only): its InitProducerId fences and aborts that transaction
/// (`TransactionCoordinator.handleInitProducerId` on Ongoing), then, retried, bumps the
/// epoch (Empty); the new instance loops on at once, its data stamped before the retry.
fn fenced_instance(tv2: bool, abort_fault: Fault, fault: Fault) -> World {
    let mut w = World::new(tv2);
    let mut a = Loop::new(&mut w, "app");
    a.run(&mut w, SETS, 5, 99, Fault::None);
    w.add(&mut a.m, &[A0, A1]);
    w.send(&a.m, A1, a.stamp);
    w.tick(300);
    a.coordinator_abort(&mut w, &[A0, A1], abort_fault);
    let asked = w.now;
    w.tick(100);
    w.reinit(&mut a.m);
    a.stamp = asked;
    a.run(&mut w, SETS, 6, 5, fault);
    settle(&mut w);
    w
}

#[test]
fn timed_out_and_fenced_producers_raise_nothing_above_info() {
    for tv2 in [false, true] {
        let w = timed_out(tv2, Fault::None, Fault::None);
        assert_healthy("timed out", &w, everywhere_first);
        let w = fenced_instance(tv2, Fault::None, Fault::None);
        assert_healthy("fenced instance", &w, everywhere_first);
    }
}

#[test]
fn timed_out_and_fenced_producers_faults_are_found() {
    let mut missed = Vec::new();
    for tv2 in [false, true] {
        for (abort_fault, fault) in [
            (Fault::Flip(A1), Fault::None),
            (Fault::Skip(A1), Fault::None),
            (Fault::None, Fault::Flip(U2)),
            (Fault::None, Fault::Skip(P0)),
            (Fault::None, Fault::Unlisted(U2)),
            (Fault::None, Fault::StuckInPrepare),
        ] {
            let f = if abort_fault == Fault::None {
                fault
            } else {
                abort_fault
            };
            let w = timed_out(tv2, abort_fault, fault);
            missed.extend(found("timed out", &w, f, SETS[1], everywhere_first));
            let w = fenced_instance(tv2, abort_fault, fault);
            missed.extend(found("fenced instance", &w, f, SETS[1], everywhere_first));
        }
    }
    assert_none_missed(missed);
}

/// A tight loop across three coordinator failovers: between a transaction's Ongoing and
/// Prepare records, after the first of its markers (the new coordinator re-sends all of
/// them: a duplicate marker at a higher coordinator epoch), and after all of its markers
/// before the Complete record (every marker twice).
fn failovers(tv2: bool, fault_at: usize, fault: Fault) -> World {
    let mut w = World::new(tv2);
    let mut a = Loop::new(&mut w, "app");
    for i in 0..12 {
        let failover = match i {
            2 => Failover::BeforePrepare,
            5 => Failover::AfterMarkers(1),
            8 => Failover::BeforeComplete,
            _ => Failover::None,
        };
        let f = if i == fault_at { fault } else { Fault::None };
        a.txn_with(&mut w, SETS[i % 2], i % 4 != 3, f, failover);
        if f == Fault::StuckInPrepare {
            break;
        }
    }
    settle(&mut w);
    w
}

#[test]
fn coordinator_failovers_raise_nothing_above_info() {
    for tv2 in [false, true] {
        assert_healthy(
            "failovers",
            &failovers(tv2, 99, Fault::None),
            everywhere_first,
        );
    }
}

#[test]
fn coordinator_failovers_faults_are_found() {
    let mut missed = Vec::new();
    for tv2 in [false, true] {
        for (at, fault) in [
            (5, Fault::Flip(A1)),
            (8, Fault::Flip(A0)),
            (11, Fault::Skip(U2)),
            (11, Fault::Unlisted(U2)),
            (11, Fault::StuckInPrepare),
        ] {
            let w = failovers(tv2, at, fault);
            missed.extend(found(
                "failovers",
                &w,
                fault,
                SETS[at % 2],
                everywhere_first,
            ));
        }
    }
    assert_none_missed(missed);
}

/// A producer at the end of its epochs. TV2: every EndTxn bumps the epoch; at 32766 the
/// coordinator allocates the next producer id into the Prepare record, writes the markers
/// at 32767 and moves to the new id at epoch 0 in the Complete record
/// (`TransactionMetadata.prepareComplete`). TV0/1: InitProducerId at 32766 rotates the
/// producer id (`prepareProducerIdRotation`).
fn exhausted(tv2: bool, fault_at: usize, fault: Fault) -> World {
    let mut w = World::new(tv2);
    let mut a = Loop::at(&mut w, "app", 7000, if tv2 { 32760 } else { 32765 });
    if tv2 {
        a.run(&mut w, SETS, 10, fault_at, fault);
    } else {
        a.run(&mut w, SETS, 3, 99, Fault::None);
        w.reinit(&mut a.m);
        a.run(&mut w, SETS, 3, 99, Fault::None);
        w.rotate(&mut a.m);
        a.run(&mut w, SETS, 6, fault_at.saturating_sub(4), fault);
    }
    settle(&mut w);
    w
}

#[test]
fn producer_id_rotation_raises_nothing_above_info() {
    for tv2 in [false, true] {
        assert_healthy(
            "exhausted",
            &exhausted(tv2, 99, Fault::None),
            everywhere_first,
        );
    }
}

#[test]
fn producer_id_rotation_faults_are_found() {
    let mut missed = Vec::new();
    for tv2 in [false, true] {
        for (at, fault) in [
            (6, Fault::Flip(A1)),
            (6, Fault::Skip(A1)),
            // TV0/1: unlisted data in the middle of a loop at one epoch is closed by the
            // next transaction listing the partition, and only CreateTime would tell
            // which transaction wrote it: found only at the end of the loop.
            (if tv2 { 7 } else { 9 }, Fault::Unlisted(U2)),
            (9, Fault::Skip(P0)),
            (9, Fault::StuckInPrepare),
        ] {
            let w = exhausted(tv2, at, fault);
            missed.extend(found(
                "exhausted",
                &w,
                fault,
                SETS[at % 2],
                everywhere_first,
            ));
        }
    }
    assert_none_missed(missed);
}

fn orders_on_first(tp: Tp) -> bool {
    tp.0 == "orders"
}

const ONE_BROKER: [&[Tp]; 2] = [&[A0, A1], &[A1, A0]];
const TWO_BROKERS: [&[Tp]; 2] = [&[A0, B0], &[P0, A1, B0]];

/// A transactional id whose transactions all stay on broker 1's partitions expires (seven
/// days after its last Complete record the coordinator writes a tombstone,
/// `TransactionStateManager.removeExpiredTransactionalIds`) and is used again: a new
/// producer id at epoch 0, now spreading over both brokers.
fn expired_and_reused(tv2: bool, fault: Fault) -> World {
    let mut w = World::new(tv2);
    let mut a = Loop::new(&mut w, "app");
    a.run(&mut w, ONE_BROKER, 6, 99, Fault::None);
    w.tick(ID_EXPIRATION_MS + 3_600_000);
    w.expire(&a.m);
    w.tick(60_000);
    let mut b = Loop::new(&mut w, "app");
    b.run(&mut w, TWO_BROKERS, 6, 5, fault);
    settle(&mut w);
    w
}

#[test]
fn expired_id_reused_raises_nothing_above_info() {
    for tv2 in [false, true] {
        let w = expired_and_reused(tv2, Fault::None);
        assert_healthy("expired", &w, orders_on_first);
    }
}

#[test]
fn expired_id_reused_faults_are_found() {
    let mut missed = Vec::new();
    for tv2 in [false, true] {
        for fault in [
            Fault::Flip(B0),
            Fault::Skip(A1),
            Fault::Unlisted(B0),
            Fault::StuckInPrepare,
        ] {
            let w = expired_and_reused(tv2, fault);
            missed.extend(found("expired", &w, fault, TWO_BROKERS[1], orders_on_first));
        }
    }
    assert_none_missed(missed);
}

/// A part absorbed into a later transaction and never listed by the transaction that
/// wrote it rests on the absence of a record listing it: with a batch of the
/// coordinator's log not read (its records do not parse), a later record of that
/// transaction may list it, so the finding is unconfirmed (and no error); with every
/// batch read it is confirmed.
#[test]
fn an_absorbed_unlisted_part_rests_on_every_coordinator_batch_read() {
    use klogscan::testkit::BatchSpec;
    use klogscan::testkit::encode::{HeaderOverrides, RecordSpec};
    let w = two_loops(true, 5, Fault::Unlisted(U2));
    let dir = tempfile::tempdir().unwrap();
    let dirs = [dir.path().join("b1"), dir.path().join("b2")];
    let paths: Vec<_> = w
        .write_to(&dirs, everywhere_first, true)
        .into_iter()
        .filter(|p| p.exists())
        .collect();
    let unlisted = |r: &ScanReport| {
        r.findings
            .iter()
            .find(|f| {
                f.kind == Kind::TransactionPartitionUnlisted
                    && (f.topic.as_str(), f.partition) == U2
                    && f.evidence.get("earlier_transaction").is_some()
            })
            .cloned()
            .expect("the absorbed part never listed")
    };
    let all_read = unlisted(&pipeline::scan(&paths, &ScanOptions::default()));
    assert_eq!(all_read.evidence["confirmed"], true, "{all_read:#?}");
    let coordinator = std::fs::read_dir(&dirs[0])
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("__transaction_state-")
        })
        .expect("the coordinator's partition");
    // A batch that says it holds 3 records but holds 1: its records do not parse.
    let unparsable = BatchSpec {
        base_offset: 99_999_999,
        base_timestamp: w.now,
        records: vec![RecordSpec {
            key: Some(klogscan::testkit::txnlog::key("app-0")),
            value: Some(vec![0; 8]),
            ..RecordSpec::default()
        }],
        overrides: HeaderOverrides {
            records_count: Some(3),
            ..HeaderOverrides::default()
        },
        ..BatchSpec::default()
    };
    std::fs::write(
        coordinator.join("00000000000099999999.log"),
        unparsable.encode(),
    )
    .unwrap();
    let f = unlisted(&pipeline::scan(&paths, &ScanOptions::default()));
    assert!(
        f.severity < Severity::Error && f.severity <= all_read.severity,
        "{f:#?}"
    );
    assert_eq!(f.evidence["confirmed"], false, "{f:#?}");
    assert!(f.message.contains("unconfirmed"), "{}", f.message);
}

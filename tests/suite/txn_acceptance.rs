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
use klogscan::results::ScanReport;

mod world;
use world::{Meta, Tp, World};

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

    /// One transaction on `tps`: the first partition added and written, then the rest
    /// (a second Ongoing record), EndTxn, markers, Complete. The next transaction's data is
    /// stamped 1 ms after the EndTxn answer; its AddPartitionsToTxn succeeds only after
    /// the Complete record (CONCURRENT_TRANSACTIONS before).
    fn txn(&mut self, w: &mut World, tps: &[Tp], commit: bool, fault: Fault) {
        let listed: Vec<Tp> = tps
            .iter()
            .copied()
            .filter(|tp| fault != Fault::Unlisted(*tp))
            .collect();
        self.begin(w, tps, &listed);
        w.tick(10);
        w.prepare(&mut self.m, commit);
        let answered = w.now;
        if fault == Fault::StuckInPrepare {
            return;
        }
        w.tick(2);
        for &tp in &listed {
            if fault == Fault::Skip(tp) {
                continue;
            }
            w.markers(&self.m, &[tp], commit != (fault == Fault::Flip(tp)));
        }
        w.complete(&mut self.m);
        self.stamp = answered + 1;
        w.tick(20);
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
    let dir = tempfile::tempdir().unwrap();
    let dirs = [dir.path().join("b1"), dir.path().join("b2")];
    let paths = w.write_to(&dirs, on_first, with_coordinator);
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

/// Healthy: nothing above info, with and without the coordinator's log.
fn assert_healthy(name: &str, w: &World, on_first: fn(Tp) -> bool) {
    for with_coordinator in [true, false] {
        let r = scan(w, with_coordinator, on_first);
        let bad = above_info(&r);
        assert!(
            bad.is_empty(),
            "{name} tv2 {} coordinator {with_coordinator}: {bad:#?}",
            w.tv2
        );
    }
}

/// A twin: with the coordinator's log the fault's kind is reported on its partition.
fn assert_found(name: &str, w: &World, fault: Fault, tps: &[Tp], on_first: fn(Tp) -> bool) {
    let (kind, tp) = fault.expected(tps).unwrap();
    let r = scan(w, true, on_first);
    let hits: Vec<&Finding> = r.findings.iter().filter(|f| f.kind == kind).collect();
    let ctx = format!("{name} tv2 {} {fault:?}: {:#?}", w.tv2, r.findings);
    assert!(!hits.is_empty(), "{ctx}");
    let hit = if kind == Kind::TransactionStuckInPrepare {
        hits[0]
    } else {
        let on = |f: &&&Finding| (f.topic.as_str(), f.partition) == tp;
        *hits.iter().find(on).unwrap_or_else(|| panic!("{ctx}"))
    };
    assert!(hit.severity >= Severity::Warning, "{ctx}");
}

/// Reference time well past the last transaction (40 min of plain traffic later).
fn settle(w: &mut World) {
    w.tick(40 * 60_000);
    w.plain(B0);
}

const SETS: [&[Tp]; 2] = [&[A0, A1], &[P0, U2, A1]];
const SETS2: [&[Tp]; 2] = [&[P0, U2], &[A0, P0]];

/// Two producers in tight loops, interleaved transaction by transaction, on overlapping
/// partition sets; `fault` on transaction `at` of the first.
fn two_loops(tv2: bool, at: usize, fault: Fault) -> World {
    let mut w = World::new(tv2);
    let mut a = Loop::new(&mut w, "app-0");
    let mut b = Loop::new(&mut w, "app-1");
    for i in 0..12 {
        let f = if i == at { fault } else { Fault::None };
        a.txn(&mut w, SETS[i % 2], i % 4 != 3, f);
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
        assert_healthy("two loops", &two_loops(tv2, 99, Fault::None), everywhere_first);
    }
}

#[test]
fn two_tight_loops_faults_are_found() {
    for tv2 in [false, true] {
        for (at, fault) in [
            (11, Fault::Flip(A1)),
            (6, Fault::Flip(A1)),
            (11, Fault::Skip(P0)),
            (11, Fault::Unlisted(U2)),
            (11, Fault::StuckInPrepare),
        ] {
            let w = two_loops(tv2, at, fault);
            assert_found("two loops", &w, fault, SETS[at % 2], everywhere_first);
        }
    }
}

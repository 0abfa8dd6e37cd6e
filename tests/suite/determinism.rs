//! `scan` output does not depend on the number of threads: the JSON report for
//! `--threads 1`, `2` and `4` is byte-identical, with and without `--deep`, on
//! testkit-built multi-segment partitions that carry findings of every family
//! (integrity, producer sequence/epoch, transactions, file tails).

#![cfg(feature = "testkit")]

use klogscan::Kind;
use klogscan::partition::scan::ScanOptions;
use klogscan::pipeline::scan;
use klogscan::report::json;
use klogscan::results::ScanReport;
use klogscan::testkit::{
    Batch, Codec, FaultKind, LogDirBuilder, PartitionBuilder, Producer, Target,
};
use std::path::{Path, PathBuf};

/// A log dir with three multi-segment partitions and known anomalies.
fn build(dir: &Path) {
    let codecs = [
        Codec::None,
        Codec::Lz4,
        Codec::Zstd,
        Codec::SnappyXerial,
        Codec::Gzip,
    ];

    // events-0: idempotent producers over many small segments, a sequence gap, a zombie
    // write (KAFKA-9144), a leader change, a CRC mismatch in a middle segment.
    let a = Producer::idempotent(100, 0);
    let b = Producer::idempotent(101, 2);
    let t = Producer::transactional(200, 5);
    let mut ev = PartitionBuilder::new("events", 0).segment_bytes(2_000);
    for i in 0..120 {
        let p = if i % 3 == 0 { b } else { a };
        ev.append(
            Batch::new(p)
                .records(1 + i % 7)
                .codec(codecs[i % codecs.len()]),
        );
        if i == 40 {
            ev.set_leader_epoch(1);
        }
        if i == 60 {
            ev.append(Batch::new(b).records(2).sequence(10_000)); // sequence gap
        }
        if i == 80 {
            ev.append(Batch::new(t).records(2));
            ev.abort(t.bumped(), 9); // TV2 marker one epoch up
            ev.append(Batch::new(t).records(1)); // zombie: data at the fenced epoch
        }
    }
    ev.fault(
        Target::Log(5),
        FaultKind::FlipByte {
            position: 200,
            mask: 0x40,
        },
    );

    // payments-0: interleaved transactions across segments, one left hanging.
    let mut pay = PartitionBuilder::new("payments", 0).segment_bytes(1_500);
    let tx: Vec<Producer> = (0..4)
        .map(|i| Producer::transactional(300 + i, 1))
        .collect();
    pay.append(Batch::new(tx[3]).records(1)); // never closed: hanging
    for round in 0..30 {
        for (k, p) in tx[..3].iter().enumerate() {
            pay.append(
                Batch::new(*p)
                    .records(1 + (round + k) % 4)
                    .codec(codecs[(round + k) % 3]),
            );
        }
        for (k, p) in tx[..3].iter().enumerate() {
            if (round + k) % 5 == 0 {
                pay.abort(*p, 4);
            } else {
                pay.commit(*p, 4);
            }
        }
    }
    pay.advance_time(3_600_000);
    pay.append(Batch::new(Producer::PLAIN).records(1));

    // tail-0: segments rolled by hand, a partial batch at the end of the active segment.
    let mut tail = PartitionBuilder::new("tail", 0);
    for i in 0..40 {
        if i % 8 == 7 {
            tail.roll();
        }
        tail.append(Batch::new(Producer::idempotent(400, 0)).records(3));
    }
    tail.fault(Target::LastLog, FaultKind::Truncate { len: 100 });

    LogDirBuilder::new(1)
        .partition(ev)
        .partition(pay)
        .partition(tail)
        .write(dir)
        .unwrap();
}

fn run(dir: &Path, threads: usize, deep: bool) -> (String, ScanReport) {
    let opts = ScanOptions::default().with_threads(threads).with_deep(deep);
    let report = scan(&[dir.to_path_buf()], &opts);
    let mut out = Vec::new();
    json::write_scan(&report, &mut out).unwrap();
    (String::from_utf8(out).unwrap(), report)
}

fn kinds(r: &ScanReport) -> Vec<Kind> {
    r.findings.iter().map(|f| f.kind).collect()
}

#[test]
fn json_report_is_identical_for_1_2_and_4_threads() {
    let tmp = tempfile::tempdir().unwrap();
    let dir: PathBuf = tmp.path().join("broker-1");
    build(&dir);
    for deep in [false, true] {
        let (one, report) = run(&dir, 1, deep);
        // The data is what the test claims: several segments per partition, findings
        // from every family.
        assert_eq!(report.partitions.len(), 3);
        for p in &report.partitions {
            assert!(p.segments >= 4, "{} has {} segments", p.topic, p.segments);
        }
        let k = kinds(&report);
        for want in [
            Kind::CrcMismatch,
            Kind::SequenceGap,
            Kind::ZombieWrite,
            Kind::HangingTransaction,
            Kind::TruncatedBatch,
        ] {
            assert!(k.contains(&want), "deep={deep}: no {want:?} in {k:?}");
        }
        assert!(report.partitions.iter().any(|p| p.transactions.aborted > 0));
        for threads in [2, 4] {
            let (n, _) = run(&dir, threads, deep);
            assert!(
                one == n,
                "deep={deep}: --threads {threads} differs from --threads 1"
            );
        }
    }
}

/// Transactions of many producer ids spanning two partitions (some aborted on one and
/// committed on the other, some never closed on one): the cluster-wide join, which groups
/// producer ids and checks transactions in parallel, gives the same transactions,
/// statistics and findings for any thread count.
#[test]
fn cluster_transactions_are_identical_for_1_2_and_4_threads() {
    let tmp = tempfile::tempdir().unwrap();
    let dir: PathBuf = tmp.path().join("broker-1");
    let mut a = PartitionBuilder::new("orders", 0).segment_bytes(4_000);
    let mut b = PartitionBuilder::new("orders", 1).segment_bytes(4_000);
    let producers: Vec<Producer> = (0..40)
        .map(|i| Producer::transactional(1_000 + i, 0))
        .collect();
    for round in 0..10 {
        for (i, p) in producers.iter().enumerate() {
            a.append(Batch::new(*p).records(1 + (round + i) % 3));
            b.append(Batch::new(*p).records(1 + i % 2));
            if round == 9 && i % 13 == 0 {
                a.commit(*p, 1); // b never gets its marker
            } else if (round + i) % 17 == 0 {
                a.commit(*p, 1);
                b.abort(*p, 1); // outcome mismatch
            } else {
                a.commit(*p, 1);
                b.commit(*p, 1);
            }
        }
    }
    a.advance_time(3_600_000);
    b.advance_time(3_600_000);
    a.append(Batch::new(Producer::PLAIN).records(1));
    b.append(Batch::new(Producer::PLAIN).records(1));
    LogDirBuilder::new(1)
        .partition(a)
        .partition(b)
        .write(&dir)
        .unwrap();
    let cluster = |threads: usize| {
        let (doc, report) = run(&dir, threads, false);
        let mut txns = Vec::new();
        json::write_cluster_txns(&report, &Default::default(), &mut txns).unwrap();
        (doc, String::from_utf8(txns).unwrap(), report)
    };
    let (doc, txns, report) = cluster(1);
    let joined = report.transactions.as_ref().unwrap();
    assert!(
        joined.transactions.len() >= 400,
        "{}",
        joined.transactions.len()
    );
    assert!(joined.transactions.iter().any(|t| t.partitions.len() == 2));
    assert!(kinds(&report).contains(&Kind::HangingTransaction));
    for threads in [2, 4] {
        let (d, t, _) = cluster(threads);
        assert!(d == doc, "--threads {threads}: scan report differs");
        assert!(
            t == txns,
            "--threads {threads}: cluster transactions differ"
        );
    }
}

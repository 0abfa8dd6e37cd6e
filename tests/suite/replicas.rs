//! Replica comparison (rule 33): `klogscan::cluster::replicas::compare` over broker log dirs
//! written by the testkit, and over the real broker data.

use std::path::Path;

use klogscan::cluster::replicas;
use klogscan::discover::layout;
use klogscan::finding::Kind;
use klogscan::partition::scan::ScanOptions;
use klogscan::results::ScanReport;
use klogscan::testkit::files::LogDirBuilder;
use klogscan::testkit::scenario::{Batch, PartitionBuilder, Producer};

const T0: i64 = 1_700_000_000_000;

fn base() -> PartitionBuilder {
    PartitionBuilder::new("orders", 0)
        .start_time(T0)
        .leader_epoch(3)
}

fn scan_compare(dir: &Path) -> ScanReport {
    let opts = ScanOptions::default();
    let inv = layout::discover(&[dir.to_path_buf()]);
    let mut r = klogscan::pipeline::scan_partitions(&inv, &opts);
    replicas::compare(&mut r, &inv, &opts);
    r
}

fn divergences(r: &ScanReport) -> Vec<&klogscan::finding::Finding> {
    r.findings
        .iter()
        .filter(|f| f.kind == Kind::ReplicaDivergence)
        .collect()
}

/// Two brokers' log dirs `root/broker-1`, `root/broker-2` holding `a` and `b`.
fn two_brokers(
    root: &Path,
    cluster: (Option<&str>, Option<&str>),
    a: PartitionBuilder,
    b: PartitionBuilder,
) {
    for (id, c, p, name) in [(1, cluster.0, a, "broker-1"), (2, cluster.1, b, "broker-2")] {
        let mut l = LogDirBuilder::new(id);
        if let Some(c) = c {
            l = l.cluster_id(c);
        }
        l.partition(p).write(&root.join(name)).unwrap();
    }
}

/// `n` batches of 2 plain records each, the batch at `odd` (if any) with other values.
fn plain(n: usize, odd: Option<usize>) -> PartitionBuilder {
    let mut p = base();
    for i in 0..n {
        let v = if Some(i) == odd { "other" } else { "value" };
        p.append(Batch::new(Producer::PLAIN).values([format!("{v}-{i}a"), format!("{v}-{i}b")]));
        if i == 3 {
            p.roll();
        }
    }
    p
}

fn check_consistent(r: &ScanReport) {
    let mut n = 0;
    for (i, _) in r.partitions.iter().enumerate() {
        n += r.partition_findings(i).len();
    }
    assert!(n <= r.findings.len());
    let c = r.summary.findings;
    assert_eq!((c.error + c.warning + c.info) as usize, r.findings.len());
}

#[test]
fn identical_copies_do_not_diverge() {
    let d = tempfile::tempdir().unwrap();
    two_brokers(
        d.path(),
        (Some("c1"), Some("c1")),
        plain(6, None),
        plain(6, None),
    );
    let r = scan_compare(d.path());
    assert_eq!(r.partitions.len(), 2);
    let inv = layout::discover(&[d.path().to_path_buf()]);
    assert_eq!(
        replicas::replica_pairs(&r, &inv).len(),
        1,
        "the copies are paired"
    );
    assert!(divergences(&r).is_empty(), "{:#?}", r.findings);
}

#[test]
fn a_lagging_or_truncated_copy_does_not_diverge() {
    let d = tempfile::tempdir().unwrap();
    two_brokers(
        d.path(),
        (Some("c1"), Some("c1")),
        plain(6, None),
        plain(3, None),
    );
    let r = scan_compare(d.path());
    assert!(divergences(&r).is_empty(), "{:#?}", r.findings);

    // Retention deleted the first segment of one copy: it starts later.
    let d = tempfile::tempdir().unwrap();
    two_brokers(
        d.path(),
        (Some("c1"), Some("c1")),
        plain(6, None),
        plain(6, None),
    );
    let seg = d.path().join("broker-2/orders-0/00000000000000000000.log");
    std::fs::remove_file(&seg).unwrap();
    let r = scan_compare(d.path());
    let p2 = r
        .partitions
        .iter()
        .find(|p| p.path.contains("broker-2"))
        .unwrap();
    assert_eq!(
        p2.first_offset(),
        Some(8),
        "the copy starts at the second segment"
    );
    assert!(divergences(&r).is_empty(), "{:#?}", r.findings);
}

#[test]
fn a_different_batch_is_reported_at_its_offset() {
    let d = tempfile::tempdir().unwrap();
    two_brokers(
        d.path(),
        (Some("c1"), Some("c1")),
        plain(6, None),
        plain(5, Some(4)),
    );
    let r = scan_compare(d.path());
    check_consistent(&r);
    let f = divergences(&r);
    assert_eq!(f.len(), 1, "{:#?}", r.findings);
    let f = f[0];
    assert_eq!(f.offset, Some(8), "batch 4 holds offsets 8-9");
    assert_eq!(f.topic, "orders");
    let e = &f.evidence;
    assert_eq!(e["common_range"]["first_offset"], 0);
    assert_eq!(e["common_range"]["last_offset"], 9);
    assert_eq!(e["differing_batches"], 1);
    assert_eq!(e["compaction_explainable"], false);
    let [x, y] = [
        &e["first_difference"]["batches"][0],
        &e["first_difference"]["batches"][1],
    ];
    assert_eq!(x["base_offset"], 8);
    assert_eq!(y["base_offset"], 8);
    assert_eq!(x["last_offset"], y["last_offset"]);
    assert_eq!(x["size"], y["size"], "same-size records, different bytes");
    assert_ne!(x["crc"], y["crc"]);
    let copies = e["copies"].as_array().unwrap();
    assert!(
        copies
            .iter()
            .any(|c| c.as_str().unwrap().contains("broker-1"))
    );
    assert!(
        copies
            .iter()
            .any(|c| c.as_str().unwrap().contains("broker-2"))
    );
    // The finding belongs to one of the partition copies.
    let owner = (0..r.partitions.len()).find(|&i| {
        r.partition_findings(i)
            .iter()
            .any(|g| g.kind == Kind::ReplicaDivergence)
    });
    assert!(owner.is_some());
}

#[test]
fn a_missing_commit_marker_is_listed() {
    let txn = Producer::transactional(77, 2);
    let build = |with_marker: bool| {
        let mut p = base();
        p.append(Batch::new(Producer::PLAIN).values(["a", "b"]));
        p.append(Batch::new(txn).records(2));
        if with_marker {
            p.commit(txn, 5);
        }
        p.append(Batch::new(Producer::PLAIN).values(["after-1", "after-2"]));
        p.append(Batch::new(Producer::PLAIN).values(["tail"]));
        p
    };
    let d = tempfile::tempdir().unwrap();
    two_brokers(
        d.path(),
        (Some("c1"), Some("c1")),
        build(true),
        build(false),
    );
    let r = scan_compare(d.path());
    check_consistent(&r);
    let f = divergences(&r);
    assert_eq!(f.len(), 1, "{:#?}", r.findings);
    let e = &f[0].evidence;
    assert_eq!(
        f[0].offset,
        Some(4),
        "the COMMIT at offset 4 vs the plain batch"
    );
    assert_eq!(
        e["compaction_explainable"], false,
        "a marker vs a data batch"
    );
    let (only_1, only_2) = if e["copies"][0].as_str().unwrap().contains("broker-1") {
        (&e["markers_only_in"][0], &e["markers_only_in"][1])
    } else {
        (&e["markers_only_in"][1], &e["markers_only_in"][0])
    };
    assert_eq!(only_1.as_array().unwrap().len(), 1);
    assert_eq!(only_1[0]["offset"], 4);
    assert_eq!(only_1[0]["producer_id"], 77);
    assert_eq!(only_1[0]["producer_epoch"], 2);
    assert_eq!(only_1[0]["type"], "COMMIT");
    assert!(only_2.as_array().unwrap().is_empty());
}

#[test]
fn copies_of_different_clusters_are_not_compared() {
    let d = tempfile::tempdir().unwrap();
    two_brokers(
        d.path(),
        (Some("c1"), Some("c2")),
        plain(6, None),
        plain(6, Some(2)),
    );
    let r = scan_compare(d.path());
    assert!(divergences(&r).is_empty(), "{:#?}", r.findings);
}

#[test]
fn without_cluster_ids_broker_siblings_are_compared_and_others_not() {
    let d = tempfile::tempdir().unwrap();
    two_brokers(d.path(), (None, None), plain(6, None), plain(6, Some(2)));
    let r = scan_compare(d.path());
    assert_eq!(divergences(&r).len(), 1, "broker-1 / broker-2 are siblings");

    let d = tempfile::tempdir().unwrap();
    for (name, p) in [("projA", plain(6, None)), ("projB", plain(6, Some(2)))] {
        LogDirBuilder::new(1)
            .partition(p)
            .write(&d.path().join(name).join("data"))
            .unwrap();
    }
    let r = scan_compare(d.path());
    assert_eq!(r.partitions.len(), 2);
    assert!(
        divergences(&r).is_empty(),
        "projA / projB are unrelated: {:#?}",
        r.findings
    );
}

#[test]
fn broker_sibling_rule() {
    use replicas::broker_siblings as s;
    assert!(s(Path::new("/x/broker1/t-0"), Path::new("/x/broker2/t-0")));
    assert!(s(
        Path::new("/x/kafka-1/data/t-0"),
        Path::new("/x/kafka-3/data/t-0")
    ));
    assert!(!s(
        Path::new("/x/kafka-1/data/t-0"),
        Path::new("/x/kafka-3/logs/t-0")
    ));
    assert!(!s(Path::new("/x/repoA/t-0"), Path::new("/x/repoB/t-0")));
    assert!(!s(Path::new("/x/broker1/t-0"), Path::new("/x/node2/t-0")));
    assert!(!s(
        Path::new("/x/b1/t-0"),
        Path::new("/x/b1/t-0.abc-future")
    ));
}

#[test]
fn real_broker_data_has_no_replica_pairs_and_no_divergence() {
    let Some(real) = crate::common::real_data() else {
        return;
    };
    let dir = real.join("broker");
    let opts = ScanOptions::default();
    let inv = layout::discover(std::slice::from_ref(&dir));
    let mut r = klogscan::pipeline::scan_partitions(&inv, &opts);
    // Several repositories hold unrelated partitions of the same name.
    let same_name = r
        .partitions
        .iter()
        .filter(|p| p.topic == "_schemas" && p.partition == 0)
        .count();
    assert!(
        same_name >= 2,
        "real data holds {same_name} _schemas-0 copies"
    );
    let pairs = replicas::replica_pairs(&r, &inv);
    assert!(
        pairs.is_empty(),
        "unrelated copies paired: {:?}",
        pairs
            .iter()
            .map(|((_, a), (_, b))| (&a.path, &b.path))
            .collect::<Vec<_>>()
    );
    replicas::compare(&mut r, &inv, &opts);
    assert!(divergences(&r).is_empty());
    check_consistent(&r);
}

/// Each broker's cleaner compacts its own copy on its own schedule (`LogCleaner`), and
/// nothing reconciles the copies: on a compacted partition a batch one copy's cleaner has
/// removed is no divergence. The same difference on a partition not known to be
/// compacted is reported, as cleaning could explain it (the twin).
#[test]
fn independent_cleaning_of_a_compacted_partition_is_no_divergence() {
    let cleaned = || {
        let mut p = base();
        for i in 0..6 {
            if i == 2 {
                p.skip_offsets(2);
                continue;
            }
            p.append(
                Batch::new(Producer::PLAIN)
                    .values([format!("value-{i}a"), format!("value-{i}b")])
                    .at(T0 + i * 1000),
            );
        }
        p
    };
    let plain_six = || {
        let mut p = base();
        for i in 0..6 {
            p.append(
                Batch::new(Producer::PLAIN)
                    .values([format!("value-{i}a"), format!("value-{i}b")])
                    .at(T0 + i * 1000),
            );
        }
        p
    };
    for compacted in [true, false] {
        let d = tempfile::tempdir().unwrap();
        two_brokers(d.path(), (Some("c1"), Some("c1")), plain_six(), cleaned());
        let mut opts = ScanOptions::default();
        if compacted {
            opts = opts.with_compacted_topics(["orders"]);
        }
        let inv = layout::discover(&[d.path().to_path_buf()]);
        let mut r = klogscan::pipeline::scan_partitions(&inv, &opts);
        replicas::compare(&mut r, &inv, &opts);
        let found = divergences(&r);
        assert_eq!(found.len(), usize::from(!compacted), "{found:#?}");
        if let Some(f) = found.first() {
            assert_eq!(f.evidence["compaction_explainable"], true);
        }
    }
}

/// [`independent_cleaning_of_a_compacted_partition_is_no_divergence`] with the cleanup policy
/// unknown (no `--compacted`, no checkpoint, no metadata log): one copy's cleaner rebuilt the
/// batch at 2–3, keeping one record (`MemoryRecords.filterTo` keeps the batch's base and last
/// offset), which is a cleaner trace, so the partition is treated as compacted as the
/// producer-state replay treats it (`PartitionReport::compaction`) and the difference is no
/// divergence. The twin, the same copy with the batch simply gone (no trace left), keeps the
/// divergence: nothing says the topic is compacted.
#[test]
fn cleaner_traces_make_independent_cleaning_no_divergence_policy_unknown() {
    // Six batches of two records; the batch at 2 whole, rebuilt with its second record
    // only, or gone.
    let copy = |at_2: Option<bool>| {
        let mut p = base();
        for i in 0..6 {
            let b = Batch::new(Producer::PLAIN).at(T0 + i * 1000);
            match (i, at_2) {
                (2, Some(true)) => {
                    let rec = klogscan::testkit::Rec::value(format!("value-{i}b")).offset_delta(1);
                    p.append(
                        b.record(rec)
                            .tweak(|s| s.overrides.last_offset_delta = Some(1)),
                    );
                }
                (2, None) => {
                    p.skip_offsets(2);
                }
                _ => {
                    p.append(b.values([format!("value-{i}a"), format!("value-{i}b")]));
                }
            }
        }
        p
    };
    for rebuilt in [true, false] {
        let d = tempfile::tempdir().unwrap();
        let cleaned = copy(if rebuilt { Some(true) } else { None });
        two_brokers(
            d.path(),
            (Some("c1"), Some("c1")),
            copy(Some(false)),
            cleaned,
        );
        let r = scan_compare(d.path());
        assert!(r.partitions.iter().all(|p| p.compacted.is_none()));
        let found = divergences(&r);
        assert_eq!(found.len(), usize::from(!rebuilt), "{found:#?}");
        if let Some(f) = found.first() {
            assert_eq!(f.evidence["compaction_explainable"], true);
        }
    }
}

/// Offsets 0..=9 at leader epoch 0, one batch each with fixed timestamps: the same bytes in
/// every copy built with it.
fn agreed_head() -> PartitionBuilder {
    let mut p = base().leader_epoch(0);
    for i in 0..10i64 {
        p.append(
            Batch::new(Producer::PLAIN)
                .values([format!("v{i}")])
                .at(T0 + i * 1000),
        );
    }
    p
}

/// `AbstractFetcherThreadTest.testDivergingEpochs` on disk: two replicas agree up to offset
/// 10 (epoch 0); from there broker 1 holds epoch 1 and broker 2 epoch 2. Broker 1 is behind
/// in epochs: following broker 2 it truncates to 10 and the divergence disappears. From its
/// checkpointed high watermark (10) on, the periodic checkpoint cannot tell whether the tail
/// was acknowledged: a warning saying the truncation removes it. With its high watermark at
/// 15 the records at [10, 15) were acknowledged and are replaced: error. Without a
/// checkpoint: a warning.
#[test]
fn a_divergence_the_replica_behind_in_epochs_truncates_away() {
    let copy = |tail_epoch: i32, tail: i64| {
        let mut p = agreed_head();
        p.set_leader_epoch(tail_epoch);
        for i in 0..tail {
            p.append(
                Batch::new(Producer::PLAIN)
                    .values([format!("e{tail_epoch}-{i}")])
                    .at(T0 + 100_000 + i * 1000),
            );
        }
        p
    };
    for (hw, severity) in [
        (Some(10), Some(klogscan::finding::Severity::Warning)),
        (Some(15), Some(klogscan::finding::Severity::Error)),
        (None, Some(klogscan::finding::Severity::Warning)),
    ] {
        let d = tempfile::tempdir().unwrap();
        let mut b1 = LogDirBuilder::new(1).cluster_id("c1").partition(copy(1, 5));
        if let Some(h) = hw {
            b1 = b1.high_watermark("orders", 0, h);
        }
        b1.write(&d.path().join("broker-1")).unwrap();
        if hw.is_none() {
            // The builder checkpoints the log end by default: no checkpoint at all here.
            let _ = std::fs::remove_file(d.path().join("broker-1/replication-offset-checkpoint"));
        }
        LogDirBuilder::new(2)
            .cluster_id("c1")
            .partition(copy(2, 10))
            .write(&d.path().join("broker-2"))
            .unwrap();
        let r = scan_compare(d.path());
        let found = divergences(&r);
        assert_eq!(found.len(), 1, "{found:#?}");
        let f = found[0];
        assert_eq!(Some(f.severity), severity, "hw {hw:?}: {f:#?}");
        assert_eq!(f.offset, Some(10));
        assert_eq!(
            f.evidence["truncation"]["to_offset"], 10,
            "{:#}",
            f.evidence
        );
        assert!(
            f.evidence["truncation"]["replica"]
                .as_str()
                .is_some_and(|p| p.contains("broker-1")),
            "{:#}",
            f.evidence
        );
    }
}

/// A batch of one copy that starts in the common range and ends past it (broker 2's one
/// batch of 10..19 against broker 1's batches ending at 14) has boundaries the other copy's
/// batches lack: never what cleaning does (`compaction_explainable: false`), and it is what
/// broker 2 holds at offset 10 (not `null`).
#[test]
fn a_batch_crossing_the_common_range_end_is_shown_and_not_cleaning() {
    let head = agreed_head;
    let mut a = head();
    a.set_leader_epoch(1);
    for i in 0..5i64 {
        a.append(
            Batch::new(Producer::PLAIN)
                .values([format!("a{i}")])
                .at(T0 + 50_000 + i),
        );
    }
    let mut b = head();
    b.set_leader_epoch(2);
    b.append(Batch::new(Producer::PLAIN).records(10).at(T0 + 60_000));
    let d = tempfile::tempdir().unwrap();
    two_brokers(d.path(), (Some("c1"), Some("c1")), a, b);
    let r = scan_compare(d.path());
    let found = divergences(&r);
    assert_eq!(found.len(), 1, "{found:#?}");
    let e = &found[0].evidence;
    assert_eq!(e["compaction_explainable"], false, "{e:#}");
    assert_eq!(e["first_difference"]["offset"], 10);
    let batches = e["first_difference"]["batches"].as_array().unwrap();
    assert!(batches.iter().all(|b| !b.is_null()), "{e:#}");
    assert_eq!(batches[1]["last_offset"], 19, "{e:#}");
}

/// A batch that fails its CRC in one copy (a flipped bit of its stored CRC) is that copy's
/// own damage, reported by its integrity finding: no `replica_divergence` at it. A batch with
/// other records is one (`a_different_batch_is_reported_at_its_offset`, the twin).
#[test]
fn a_copys_own_damaged_batch_is_no_divergence() {
    use klogscan::testkit::scenario::{FaultKind, Target};
    let mut damaged = plain(6, None);
    damaged.fault(
        Target::LastLog,
        FaultKind::FlipByte {
            position: 18,
            mask: 0x01,
        },
    );
    let d = tempfile::tempdir().unwrap();
    two_brokers(d.path(), (Some("c1"), Some("c1")), damaged, plain(6, None));
    let r = scan_compare(d.path());
    assert!(
        r.findings.iter().any(|f| f.kind == Kind::CrcMismatch),
        "{:#?}",
        r.findings
    );
    assert!(divergences(&r).is_empty(), "{:#?}", divergences(&r));
}

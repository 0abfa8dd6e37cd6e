//! Hostile coordinator logs on the path where the cluster stage reads a
//! `__transaction_state` partition again, streaming (the walk kept none of its records:
//! `ScanOptions::keep_coordinator_bytes(0)`), and in the transaction join that reads it:
//! flipped, truncated and zero-filled bytes, absurd declared lengths and counts, a
//! coordinator log cut into one segment per batch, segments that are not regular files,
//! segments that change between the walk and the re-read, and coordinator values with
//! absurd fields. No panic (debug builds check overflow), no hang, and the re-read gives
//! the same reports as the records the walk kept.
#![cfg(feature = "testkit")]

use crate::coordinator_stream::{faulty, reports};
use klogscan::discover::layout;
use klogscan::partition::scan::ScanOptions;
use klogscan::pipeline;
// A deterministic xorshift stream (every run mutates the same way).
use klogscan::testkit::groups::Rng;
use std::path::{Path, PathBuf};

fn opts() -> ScanOptions {
    ScanOptions::default().with_keep_cluster_txns(true)
}

/// The reports with the records kept by the walk and read again must be equal.
fn assert_same_read_again(dir: &Path, what: &str) {
    let kept = reports(dir, &opts().with_keep_coordinator_bytes(u64::MAX));
    let again = reports(dir, &opts().with_keep_coordinator_bytes(0));
    assert!(
        kept == again,
        "{what}: the re-read changed the reports\nkept:  {}\nagain: {}",
        kept.0,
        again.0
    );
}

/// The faulty cluster written under a fresh temp dir: (temp dir, the coordinator
/// partition's directory, its one segment's path, the segment's bytes).
fn seeded() -> (tempfile::TempDir, PathBuf, PathBuf, Vec<u8>) {
    let dir = tempfile::tempdir().unwrap();
    let data = faulty(None).write(dir.path(), 1).unwrap();
    let part = data.join("__transaction_state-4");
    let logs: Vec<PathBuf> = std::fs::read_dir(&part)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .collect();
    assert_eq!(logs.len(), 1, "{logs:?}");
    let bytes = std::fs::read(&logs[0]).unwrap();
    (dir, part, logs[0].clone(), bytes)
}

/// The positions of the v2 batches framed in `seg` (each `baseOffset`, `batchLength`).
fn batch_starts(seg: &[u8]) -> Vec<usize> {
    let mut out = Vec::new();
    let mut at = 0;
    while at + 12 <= seg.len() {
        out.push(at);
        let len = i32::from_be_bytes(seg[at + 8..at + 12].try_into().unwrap());
        at += 12 + len.max(0) as usize;
    }
    out
}

/// One mutation of a segment image, by number: flips, a cut, a zero-filled range, or an
/// absurd `batchLength` / `recordsCount` / `partitionLeaderEpoch` in one batch.
fn mutate(seed: &[u8], starts: &[usize], rng: &mut Rng, i: usize) -> Vec<u8> {
    let mut d = seed.to_vec();
    let batch = starts[rng.pick(starts.len())];
    let put = |d: &mut Vec<u8>, at: usize, b: &[u8]| {
        if at + b.len() <= d.len() {
            d[at..at + b.len()].copy_from_slice(b);
        }
    };
    match i % 7 {
        0 => {
            for _ in 0..1 + rng.pick(8) {
                let at = rng.pick(d.len());
                d[at] = rng.next_u64() as u8;
            }
        }
        1 => d.truncate(rng.pick(d.len() + 1)),
        2 => {
            let at = rng.pick(d.len());
            let end = (at + 1 + rng.pick(200)).min(d.len());
            d[at..end].fill(0);
        }
        3 => put(&mut d, batch + 8, &i32::MAX.to_be_bytes()),
        4 => {
            let n = [i32::MAX, -1, i32::MIN, 1 << 24][rng.pick(4)];
            put(&mut d, batch + 57, &n.to_be_bytes());
        }
        5 => {
            let e = [i32::MAX, -1, i32::MIN][rng.pick(3)];
            put(&mut d, batch + 12, &e.to_be_bytes());
        }
        _ => {
            // From the end of one batch on, zeros (a preallocated tail).
            let at = starts[rng.pick(starts.len())];
            d[at..].fill(0);
        }
    }
    d
}

/// Mutated copies of a coordinator log give the same reports whether the walk kept its
/// records or the cluster stage read them again, and neither path panics.
#[test]
fn mutated_coordinator_logs_read_again_give_the_same_reports() {
    let (dir, _part, seg, bytes) = seeded();
    let starts = batch_starts(&bytes);
    assert!(starts.len() > 20, "{}", starts.len());
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    for i in 0..280 {
        let d = mutate(&bytes, &starts, &mut rng, i);
        std::fs::write(&seg, &d).unwrap();
        assert_same_read_again(dir.path(), &format!("mutation {i}"));
    }
}

/// The coordinator log cut into one segment per batch (each named by its base offset):
/// many tiny segments read again give the same reports.
#[test]
fn a_coordinator_log_of_one_segment_per_batch_reads_again_the_same() {
    let (dir, part, seg, bytes) = seeded();
    let starts = batch_starts(&bytes);
    std::fs::remove_file(&seg).unwrap();
    for (i, &at) in starts.iter().enumerate() {
        let end = starts.get(i + 1).copied().unwrap_or(bytes.len());
        let base = i64::from_be_bytes(bytes[at..at + 8].try_into().unwrap());
        std::fs::write(part.join(format!("{base:020}.log")), &bytes[at..end]).unwrap();
    }
    assert_same_read_again(dir.path(), "one segment per batch");
    // And each of them damaged in turn (its batch cut in half).
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for (i, &at) in starts.iter().enumerate().step_by(3) {
        let end = starts.get(i + 1).copied().unwrap_or(bytes.len());
        let base = i64::from_be_bytes(bytes[at..at + 8].try_into().unwrap());
        let path = part.join(format!("{base:020}.log"));
        let cut = at + rng.pick(end - at);
        std::fs::write(&path, &bytes[at..cut]).unwrap();
        assert_same_read_again(dir.path(), &format!("segment {base} cut"));
        std::fs::write(&path, &bytes[at..end]).unwrap();
    }
}

/// Segments that are not regular files: a directory named like a segment, a symlink
/// loop, a symlink to a directory, a dangling symlink: each is reported or skipped the
/// same way on both paths, none panics or hangs.
#[cfg(unix)]
#[test]
fn segments_that_are_not_files_read_again_the_same() {
    use std::os::unix::fs::symlink;
    let (dir, part, _seg, _bytes) = seeded();
    let name = |n: u64| part.join(format!("{n:020}.log"));
    std::fs::create_dir(name(5_000)).unwrap();
    assert_same_read_again(dir.path(), "a directory named like a segment");
    symlink(name(6_001), name(6_000)).unwrap();
    symlink(name(6_000), name(6_001)).unwrap();
    assert_same_read_again(dir.path(), "a symlink loop");
    symlink(&part, name(7_000)).unwrap();
    assert_same_read_again(dir.path(), "a symlink to the partition directory");
    symlink(part.join("nowhere"), name(8_000)).unwrap();
    assert_same_read_again(dir.path(), "a dangling symlink");
}

/// The scan's walk, then the coordinator's segment changed, then the cluster stage (which
/// reads it again): the scan's JSON, and the scan's JSON before the change with the
/// records kept by the walk.
fn changed_between_walk_and_reread(change: impl FnOnce(&Path, &[u8])) -> (String, String) {
    let (dir, _part, seg, bytes) = seeded();
    let (kept, _) = reports(dir.path(), &opts().with_keep_coordinator_bytes(u64::MAX));
    let inv = layout::discover(&[dir.path().to_path_buf()]);
    let opts = opts().with_keep_coordinator_bytes(0);
    let mut report = pipeline::scan_partitions(&inv, &opts);
    change(&seg, &bytes);
    pipeline::run_cluster_checks(&mut report, &inv, &opts);
    let mut out = Vec::new();
    klogscan::report::json::write_scan(&report, &mut out).unwrap();
    (String::from_utf8(out).unwrap(), kept)
}

/// A coordinator segment the walk could not read (gone between the discovery and the
/// walk), readable again when the cluster stage reads the partition again: the scan kept
/// none of its records, so the re-read does not replay them either; it names the segment
/// as not read.
#[test]
fn a_coordinator_segment_the_walk_could_not_read_is_not_replayed_later() {
    let (dir, part, seg, bytes) = seeded();
    // A second segment, after the first: the walk finds it gone, the re-read finds it back.
    let later = part.join("00000000000000005000.log");
    std::fs::write(&later, &bytes).unwrap();
    let inv = layout::discover(&[dir.path().to_path_buf()]);
    std::fs::remove_file(&later).unwrap();
    let opts = opts().with_keep_coordinator_bytes(0);
    let mut report = pipeline::scan_partitions(&inv, &opts);
    std::fs::write(&later, &bytes).unwrap();
    pipeline::run_cluster_checks(&mut report, &inv, &opts);
    let mut out = Vec::new();
    klogscan::report::json::write_scan(&report, &mut out).unwrap();
    let scan = String::from_utf8(out).unwrap();
    assert!(
        scan.contains("00000000000000005000.log: changed since the scan read it"),
        "not named: {scan}"
    );
    // The first segment, read as the walk read it, is not named.
    let first = seg.file_name().unwrap().to_string_lossy().into_owned();
    assert!(!scan.contains(&format!("{first}: changed since")), "{scan}");
}

/// A coordinator segment cut, grown or removed after the walk (which kept none of its
/// records) is named as not read by the cluster stage rather than replayed silently from
/// other bytes than the scan saw; the same bytes written again change nothing.
#[cfg(unix)]
#[test]
fn a_coordinator_segment_changed_after_the_walk_is_named() {
    let changed = "00000000000000000000.log: changed since the scan read it";
    let half =
        changed_between_walk_and_reread(|seg, b| std::fs::write(seg, &b[..b.len() / 2]).unwrap());
    let grown = changed_between_walk_and_reread(|seg, b| {
        let mut d = b.to_vec();
        d.extend_from_slice(b);
        std::fs::write(seg, &d).unwrap()
    });
    let gone = changed_between_walk_and_reread(|seg, _| std::fs::remove_file(seg).unwrap());
    let dir = changed_between_walk_and_reread(|seg, _| {
        std::fs::remove_file(seg).unwrap();
        std::fs::create_dir(seg).unwrap();
    });
    let fifo = changed_between_walk_and_reread(|seg, _| {
        std::fs::remove_file(seg).unwrap();
        crate::common::mkfifo(seg);
    });
    for (what, (scan, _)) in [
        ("cut", &half),
        ("grown", &grown),
        ("removed", &gone),
        ("a directory now", &dir),
        ("a FIFO now", &fifo),
    ] {
        assert!(scan.contains(changed), "{what}: not named: {scan}");
    }
    // Rewritten with the same bytes: nothing said, the report read again as kept.
    let (same, kept) = changed_between_walk_and_reread(|seg, b| std::fs::write(seg, b).unwrap());
    assert!(same == kept, "{same}\n{kept}");
}

/// Transactions and coordinator values at the edges of their fields: epochs at
/// `i16::MAX`, -1 and `i16::MIN`, producer ids -1 and `i64::MAX`, timestamps at
/// `i64::MIN`/`i64::MAX`, a start after the last update, partition lists naming
/// partitions that do not exist or the same partition several times.
fn edge_values(tv2: bool) -> klogscan::testkit::txns::Cluster {
    use klogscan::testkit::Producer;
    use klogscan::testkit::txnlog::{TxnValue, state};
    use klogscan::testkit::txns::{Cluster, Tp, Txn};
    const A: Tp = ("orders", 0);
    const B: Tp = ("orders", 1);
    let c = Cluster::new(Some("c1"));
    let mut c = if tv2 { c.tv2() } else { c }.coordinator(4);
    for (i, (pid, epoch)) in [
        (7, i16::MAX),
        (-1, 0),
        (i64::MAX, -1),
        (9, i16::MIN),
        (10, 0),
    ]
    .into_iter()
    .enumerate()
    {
        let id = format!("edge{i}");
        let t = Txn::new(&id, Producer::transactional(pid, epoch), &[A, A, B]);
        let t = match i {
            1 => t.marker_epoch(-1),
            2 => t.marker_epoch(i16::MAX),
            3 => t.abort().marker_epoch(i16::MIN),
            _ => t,
        };
        c.run(&t);
    }
    // A transaction that wrote no marker to A, its data there closed by the next one's
    // marker (the join's absorbed part), at the top of the epoch range.
    for (id, pid) in [("edgeabs", 11), ("edgeneg", -1)] {
        let mut p = Producer::transactional(pid, i16::MAX - 1);
        for i in 0..3 {
            let t = Txn::new(id, p, &[A, B]);
            p = c.run(&if i == 0 { t.skip_marker_on(A) } else { t });
        }
    }
    let v = |pid: i64, epoch: i16, status: u8| TxnValue::new(pid, epoch, status);
    let odd = [
        v(7, i16::MAX, state::ONGOING).times(i64::MAX, i64::MIN),
        v(7, i16::MAX, state::PREPARE_COMMIT).times(i64::MIN, i64::MAX),
        v(7, i16::MAX, state::COMPLETE_COMMIT).times(i64::MAX, i64::MAX),
        v(-1, -1, state::ONGOING)
            .partitions(&[
                ("orders", &[0, 0, 0]),
                ("orders", &[0]),
                ("nope", &[-1, i32::MAX]),
            ])
            .times(0, i64::MAX),
        v(-1, -1, state::PREPARE_ABORT).times(i64::MIN, i64::MIN),
        v(10, 0, state::ONGOING)
            .partitions(&[("orders", &[1, 1]), ("", &[i32::MIN])])
            .times(1, i64::MAX)
            .timeout(i32::MIN),
        v(10, 0, state::COMPLETE_ABORT)
            .v1(i64::MAX, -1, i16::MAX)
            .next_epoch(i16::MAX),
        v(i64::MIN, i16::MAX, state::PREPARE_EPOCH_FENCE).times(-1, -1),
    ];
    for (i, val) in odd.into_iter().enumerate() {
        let id = ["edge0", "edge1", "edge4", "edge9"][i % 4];
        c.coordinator_record(id, Some(val));
    }
    c.advance(40 * 60_000);
    let mut p = Producer::transactional(10, 0);
    for _ in 0..3 {
        p = c.run(&Txn::new("edge4", p, &[A, B]));
    }
    c.plain(A, 1);
    c
}

/// A raw value whose partition array (or one topic's id array) declares 2^31 - 1 entries.
fn absurd_counts() -> Vec<Vec<u8>> {
    use klogscan::testkit::txnlog::{TxnValue, state};
    let v = TxnValue::new(7, 0, state::ONGOING).partitions(&[("orders", &[0])]);
    let flat = v.encode();
    // v0: version, producerId, producerEpoch, timeout, status, then the i32 array count;
    // one topic: an i16 name length, the name, the i32 count of its ids.
    let (topics_at, ids_at) = (17, 17 + 4 + 2 + "orders".len());
    let mut out = Vec::new();
    for at in [topics_at, ids_at] {
        let mut b = flat.clone();
        b[at..at + 4].copy_from_slice(&i32::MAX.to_be_bytes());
        out.push(b);
    }
    // v1 (compact arrays): a uvarint count of 2^31 - 1 + 1.
    let mut b = v.clone().v1(-1, -1, 2).encode();
    b.splice(17..18, [0x80, 0x80, 0x80, 0x80, 0x08]);
    out.push(b);
    out
}

/// A segment of coordinator records with `values`, written after the others.
fn append_values(part: &Path, base: i64, values: &[Vec<u8>]) {
    use klogscan::testkit::BatchSpec;
    use klogscan::testkit::encode::RecordSpec;
    let mut seg = Vec::new();
    for (i, v) in values.iter().enumerate() {
        seg.extend(
            BatchSpec {
                base_offset: base + i as i64,
                base_timestamp: 1_700_000_000_000,
                records: vec![RecordSpec {
                    key: Some(klogscan::testkit::txnlog::key("edge0")),
                    value: Some(v.clone()),
                    ..RecordSpec::default()
                }],
                ..BatchSpec::default()
            }
            .encode(),
        );
    }
    std::fs::write(part.join(format!("{base:020}.log")), seg).unwrap();
}

/// Coordinator values at the edges of their fields, and absurd declared array counts,
/// joined with the partitions' transactions: no panic or overflow (debug builds check),
/// the same reports read again as kept, and the absurd counts named as undecodable.
#[test]
fn edge_coordinator_values_join_without_panic() {
    for tv2 in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let data = edge_values(tv2).write(dir.path(), 1).unwrap();
        append_values(
            &data.join("__transaction_state-4"),
            10_000,
            &absurd_counts(),
        );
        assert_same_read_again(dir.path(), &format!("edge values (tv2 {tv2})"));
        let (scan, txns) = reports(dir.path(), &opts().with_keep_coordinator_bytes(0));
        assert!(scan.contains("edge4") && txns.contains("edge4"), "{txns}");
        assert!(scan.contains("transactionPartitions"), "{scan}");
        // Under TV2 the absorbed part was found by its epochs (its earlier transaction
        // named); TV1's proof by order needs exact windows the other values disturb.
        if tv2 {
            assert!(scan.contains("earlier_transaction"), "{scan}");
        }
    }
}

/// Random coordinator records (valid batches, every field drawn from its edge values and
/// from the ids, producers and partitions of the faulty cluster) interleaved with its
/// transactions: the join never panics, and reads again as kept.
#[test]
fn random_coordinator_records_join_without_panic() {
    use klogscan::testkit::Producer;
    use klogscan::testkit::txnlog::TxnValue;
    use klogscan::testkit::txns::Txn;
    let mut rng = Rng(0x5851_f42d_4c95_7f2d);
    let ids = [
        "app", "flip", "lost", "unlisted", "stuck", "failover", "gone", "new",
    ];
    let pids = [7, 8, 9, 10, 11, 12, 13, -1, i64::MAX, i64::MIN];
    let epochs = [0, 1, 2, -1, i16::MAX, i16::MAX - 1, i16::MIN];
    let topics = ["orders", "payments", "nope", ""];
    let parts = [0, 1, -1, i32::MAX, i32::MIN];
    for round in 0..24 {
        let mut c = faulty(None);
        let base = c.now();
        for _ in 0..12 {
            let time = |rng: &mut Rng| match rng.pick(6) {
                0 => i64::MIN,
                1 => i64::MAX,
                2 => -1,
                3 => 0,
                _ => base + rng.pick(4_000_000) as i64 - 2_000_000,
            };
            let mut v = TxnValue::new(
                pids[rng.pick(pids.len())],
                epochs[rng.pick(epochs.len())],
                rng.pick(9) as u8,
            )
            .times(time(&mut rng), time(&mut rng));
            if rng.pick(4) > 0 {
                let n = rng.pick(4);
                let list: Vec<(String, Vec<i32>)> = (0..n)
                    .map(|_| {
                        let k = 1 + rng.pick(3);
                        let ids = (0..k).map(|_| parts[rng.pick(parts.len())]).collect();
                        (topics[rng.pick(topics.len())].to_string(), ids)
                    })
                    .collect();
                v.partitions = Some(list);
            }
            if rng.pick(3) == 0 {
                v = v.v1(pids[rng.pick(pids.len())], -1, rng.pick(3) as i16);
            }
            c.coordinator_record(ids[rng.pick(ids.len())], Some(v));
            if rng.pick(3) == 0 {
                let p = Producer::transactional(pids[rng.pick(7)], epochs[rng.pick(epochs.len())]);
                let t = Txn::new(
                    ids[rng.pick(ids.len())],
                    p,
                    &[("orders", 0), ("payments", 0)],
                );
                c.run(&if rng.pick(2) == 0 {
                    t.skip_marker_on(("orders", 0))
                } else {
                    t
                });
            }
        }
        let dir = tempfile::tempdir().unwrap();
        c.write(dir.path(), 1).unwrap();
        assert_same_read_again(dir.path(), &format!("round {round}"));
    }
}

/// A walk cut by `--max-bytes` reads its segments to the same length again: nothing is
/// taken for a change, the reports are the same as kept.
#[test]
fn a_coordinator_log_cut_by_max_bytes_reads_again_the_same() {
    let (dir, ..) = seeded();
    for max in [1, 700, 2_000, 4_000] {
        let mut o = opts();
        o.max_bytes = Some(max);
        let kept = reports(dir.path(), &o.clone().with_keep_coordinator_bytes(u64::MAX));
        let again = reports(dir.path(), &o.with_keep_coordinator_bytes(0));
        assert!(kept == again, "max {max}: {}\n{}", kept.0, again.0);
        assert!(!again.0.contains("changed since the scan"), "{}", again.0);
    }
}

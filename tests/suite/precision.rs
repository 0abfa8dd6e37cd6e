//! Verdicts that never outrun their evidence (issue "verdicts that hold on real clusters"):
//! follow-on findings link to their root cause, the user's read limit is not damage, a
//! partial batch names its base offset, and filters do not move the reference time.
#![cfg(feature = "testkit")]

use klogscan::Kind;
use klogscan::finding::Finding;
use klogscan::partition::scan::ScanOptions;
use klogscan::pipeline::scan;
use klogscan::results::ScanReport;
use klogscan::testkit::{Batch, FaultKind, Manifest, PartitionBuilder, Producer, Target};
use std::path::{Path, PathBuf};

const T0: i64 = 1_700_000_000_000;

fn write(p: &PartitionBuilder) -> (tempfile::TempDir, Manifest) {
    let dir = tempfile::tempdir().unwrap();
    let m = p.write(dir.path()).unwrap();
    (dir, m)
}

fn run(dir: &Path, opts: &ScanOptions) -> ScanReport {
    scan(&[dir.to_path_buf()], opts)
}

fn of(r: &ScanReport, k: Kind) -> Vec<&Finding> {
    r.findings.iter().filter(|f| f.kind == k).collect()
}

/// Producer 5 writes 4 batches of 4 records: sequences 0.., 4.., 8.., 12...
fn four_batches() -> PartitionBuilder {
    let pr = Producer::idempotent(5, 0);
    let mut p = PartitionBuilder::new("crc", 0).start_time(T0);
    for _ in 0..4 {
        p.append(Batch::new(pr).records(4));
    }
    p
}

#[test]
fn crc_damage_in_the_records_raises_no_sequence_gap_after_it() {
    let p0 = four_batches();
    let (_d, m) = write(&p0);
    let b = m.batches[1].clone();
    let mut p = four_batches();
    // a bit flip inside the records of batch 1 (sequences 4..7): its header is intact
    p.fault(
        Target::Log(0),
        FaultKind::FlipByte {
            position: b.position + b.size - 2,
            mask: 0x04,
        },
    );
    let (d, _m) = write(&p);
    let r = run(d.path(), &ScanOptions::default());
    assert_eq!(of(&r, Kind::CrcMismatch).len(), 1);
    assert!(
        of(&r, Kind::SequenceGap).is_empty(),
        "the broker's rebuild reads the header: no sequence is missing: {:#?}",
        r.findings
    );
    assert_eq!(r.partitions[0].producers, 1);
}

#[test]
fn findings_derived_from_a_damaged_header_link_to_the_crc_mismatch() {
    let p0 = four_batches();
    let (_d, m) = write(&p0);
    let b = m.batches[1].clone();
    let mut p = four_batches();
    // flip the low byte of batch 1's baseSequence (bytes 53..57 of a v2 batch): 4 → 4^0x10
    p.fault(
        Target::Log(0),
        FaultKind::FlipByte {
            position: b.position + 56,
            mask: 0x10,
        },
    );
    let (d, _m) = write(&p);
    let r = run(d.path(), &ScanOptions::default());
    let crc = of(&r, Kind::CrcMismatch);
    assert_eq!(crc.len(), 1);
    let gaps = of(&r, Kind::SequenceGap);
    assert!(!gaps.is_empty(), "{:#?}", r.findings);
    for g in gaps {
        assert_eq!(
            g.caused_by,
            vec![crc[0].id.clone()],
            "{} should follow from the damage",
            g.id
        );
    }
    // the cause itself has no cause
    assert!(crc[0].caused_by.is_empty());
}

#[test]
fn zombie_chain_is_linked_on_the_sample() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata/broker-1");
    let r = run(&dir, &ScanOptions::default());
    let reg = of(&r, Kind::ProducerEpochRegression);
    let zombie = of(&r, Kind::ZombieWrite);
    let hanging = of(&r, Kind::HangingTransaction);
    assert_eq!((reg.len(), zombie.len(), hanging.len()), (1, 1, 1));
    // testdata/broker-1 is broker 1 (meta.properties): ids carry the broker
    assert_eq!(zombie[0].id, "b1:zombie_write:payments-3@21:p4001");
    assert_eq!(zombie[0].caused_by, vec![reg[0].id.clone()]);
    assert_eq!(hanging[0].caused_by, vec![zombie[0].id.clone()]);
    assert!(reg[0].caused_by.is_empty());
    // ids are unique
    let mut ids: Vec<&str> = r.findings.iter().map(|f| f.id.as_str()).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), r.findings.len());
}

#[test]
fn a_clean_transaction_links_nothing() {
    let txn = Producer::transactional(3, 0);
    let mut p = PartitionBuilder::new("t", 0).start_time(T0);
    p.append(Batch::new(txn).records(2));
    p.commit(txn, 0);
    p.append(Batch::new(txn).records(2));
    let (d, _m) = write(&p);
    let r = run(
        d.path(),
        &ScanOptions::default().with_now_ms(T0 + 10 * 86_400_000),
    );
    let h = of(&r, Kind::HangingTransaction);
    assert_eq!(h.len(), 1);
    assert!(
        h[0].caused_by.is_empty(),
        "a plain open transaction has no cause here"
    );
}

#[test]
fn truncated_batch_names_its_base_offset() {
    let p0 = four_batches();
    let (_d, m) = write(&p0);
    let last = m.batches[3].clone();
    let mut p = four_batches();
    p.fault(
        Target::LastLog,
        FaultKind::Truncate {
            len: last.position + 20,
        },
    );
    let (d, _m) = write(&p);
    let r = run(d.path(), &ScanOptions::default());
    let t = of(&r, Kind::TruncatedBatch);
    assert_eq!(t.len(), 1);
    assert_eq!(t[0].offset, Some(last.base_offset));
    assert_eq!(t[0].evidence["base_offset"], last.base_offset);
    let tr = r.partitions[0].truncation.as_ref().unwrap();
    assert_eq!(tr.offset, Some(last.base_offset));
}

#[test]
fn max_bytes_is_a_read_limit_not_damage() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata/broker-1");
    let r = run(&dir, &ScanOptions::default().with_max_bytes(100));
    assert!(!r.partitions.is_empty());
    for p in &r.partitions {
        assert!(p.partially_read, "{} was cut at 100 bytes", p.path);
        assert_eq!(p.truncation, None);
        assert_eq!(p.last_stable_offset, None);
    }
    assert!(
        r.findings.iter().all(|f| !matches!(
            f.kind,
            Kind::TruncatedBatch
                | Kind::TrailingBytes
                | Kind::HangingTransaction
                | Kind::OpenTransaction
        )),
        "{:#?}",
        r.findings
    );
    // A limit above every segment's size changes nothing.
    let full = run(&dir, &ScanOptions::default());
    let big = run(&dir, &ScanOptions::default().with_max_bytes(1 << 30));
    assert!(big.partitions.iter().all(|p| !p.partially_read));
    assert_eq!(full.findings.len(), big.findings.len());
}

#[test]
fn topic_filter_does_not_move_the_reference_time() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata/broker-1");
    let hanging_after = ScanOptions::default().with_hanging_after_ms(30 * 60_000);
    let all = run(&dir, &hanging_after);
    let only = run(&dir, &hanging_after.clone().with_topic("payments"));
    let h_all = of(&all, Kind::HangingTransaction);
    let h_only = of(&only, Kind::HangingTransaction);
    assert_eq!((h_all.len(), h_only.len()), (1, 1), "{:#?}", only.findings);
    assert!(of(&only, Kind::OpenTransaction).is_empty());
    assert_eq!(
        h_all[0].evidence["reference_time"],
        h_only[0].evidence["reference_time"]
    );
    let p = only
        .partitions
        .iter()
        .find(|p| p.topic == "payments")
        .unwrap();
    let q = all
        .partitions
        .iter()
        .find(|p| p.topic == "payments")
        .unwrap();
    assert_eq!(p.ref_time, q.ref_time);
    let src = h_only[0].evidence["reference_time"]["source"]
        .as_str()
        .unwrap();
    assert!(src.starts_with("newest batch timestamp: "), "{src}");
}

/// A real Kafka 3.6 time index whose entries point inside two-record coordinator batches
/// (the offset of the record with the max timestamp): kafka-dump-log lists them as "not
/// found", and the one rule says they are right — dump exits 0, `verify` reports nothing.
#[test]
fn one_time_index_rule_on_a_real_3_6_file() {
    let Some(rd) = crate::common::real_data() else {
        return;
    };
    let dir = rd.join("broker/rjmfernandes__flink-on-prem/data/__consumer_offsets-36");
    let ti = dir.join("00000000000000000000.timeindex");
    assert!(ti.is_file());
    let bin = env!("CARGO_BIN_EXE_klogscan");
    let out = std::process::Command::new(bin)
        .arg("dump")
        .arg(&ti)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("The following indexed offsets are not found in the log."));
    assert!(err.contains("Indexed offset: 1434, found log offset: 1435"));
    assert_eq!(out.status.code(), Some(0), "{err}");
    let vio = std::process::Command::new(bin)
        .args(["dump", "--verify-index-only"])
        .arg(&ti)
        .output()
        .unwrap();
    assert_eq!(vio.status.code(), Some(0));
    let v = klogscan::verify::verify(&[dir], &klogscan::verify::VerifyOptions::default());
    assert!(
        v.findings()
            .all(|f| f.kind != Kind::TimeindexMismatch && f.kind != Kind::IndexMismatch),
        "{:#?}",
        v.findings().collect::<Vec<_>>()
    );
}

/// Retention deleted segment 0 (log start inside segment 1): an aborted transaction whose
/// data was in segment 0 and whose ABORT is in segment 1, and a producer whose last data
/// batch was in segment 0 with only its marker left. Neither the `.txnindex` entry nor the
/// snapshot entry is wrong: before the log start is unknown.
#[test]
fn verify_does_not_judge_what_only_deleted_segments_could_confirm() {
    use klogscan::testkit::LogDirBuilder;
    let a = Producer::transactional(1, 0);
    let b = Producer::transactional(2, 0);
    let mut p = PartitionBuilder::new("ret", 0).start_time(T0);
    p.append(Batch::new(a).records(2)); // 0-1: A's aborted transaction starts
    p.append(Batch::new(b).records(2)); // 2-3: B's transaction
    p.roll(); // segment 4
    p.append(Batch::new(Producer::PLAIN).records(2)); // 4-5
    p.abort(a, 0); // 6
    p.commit(b, 0); // 7
    p.append(Batch::new(Producer::PLAIN).records(2)); // 8-9
    let dir = tempfile::tempdir().unwrap();
    let ld = LogDirBuilder::new(1)
        .clean_shutdown(true)
        .log_start_offset("ret", 0, 5)
        .partition(p);
    let m = ld.write(dir.path()).unwrap();
    let part = &m.partitions[0];
    // retention: segment 0 and its indexes are gone
    for f in std::fs::read_dir(&part.dir).unwrap() {
        let f = f.unwrap().path();
        let n = f.file_name().unwrap().to_string_lossy().into_owned();
        if n.starts_with("00000000000000000000.") {
            std::fs::remove_file(&f).unwrap();
        }
    }
    let v = klogscan::verify::verify(
        &[dir.path().to_path_buf()],
        &klogscan::verify::VerifyOptions::default(),
    );
    let bad: Vec<_> = v
        .findings()
        .filter(|f| matches!(f.kind, Kind::TxnindexMismatch | Kind::SnapshotMismatch))
        .collect();
    assert!(bad.is_empty(), "{bad:#?}");

    // Negative: a .txnindex entry for a transaction before the log start whose lastOffset
    // is a data batch, not a marker, is still wrong.
    let txi = part.dir.join("00000000000000000004.txnindex");
    let mut bytes = std::fs::read(&txi).unwrap_or_default();
    let mut e = Vec::new();
    e.extend_from_slice(&0i16.to_be_bytes());
    e.extend_from_slice(&3i64.to_be_bytes()); // producer 3
    e.extend_from_slice(&0i64.to_be_bytes()); // first offset, deleted
    e.extend_from_slice(&9i64.to_be_bytes()); // last offset: a data batch ends at 9
    e.extend_from_slice(&0i64.to_be_bytes()); // last stable offset
    bytes.extend_from_slice(&e);
    std::fs::write(&txi, &bytes).unwrap();
    let v = klogscan::verify::verify(
        &[dir.path().to_path_buf()],
        &klogscan::verify::VerifyOptions::default(),
    );
    assert!(
        v.findings().any(|f| f.kind == Kind::TxnindexMismatch),
        "{:#?}",
        v.findings().collect::<Vec<_>>()
    );
}

fn remove_files(dir: &Path, suffixes: &[&str]) {
    for f in std::fs::read_dir(dir).unwrap() {
        let f = f.unwrap().path();
        let n = f.file_name().unwrap().to_string_lossy().into_owned();
        if suffixes.iter().any(|s| n.ends_with(s)) {
            std::fs::remove_file(&f).unwrap();
        }
    }
}

fn verify_kinds(root: &Path) -> Vec<Kind> {
    klogscan::verify::verify(
        &[root.to_path_buf()],
        &klogscan::verify::VerifyOptions::default(),
    )
    .findings()
    .map(|f| f.kind)
    .collect()
}

/// A segment given without any index file is recovered at load (missing offset index),
/// which rebuilds its transaction index from the markers: no `.txnindex` entry is missing.
/// With the offset index present and the `.txnindex` gone, entries are missing.
#[test]
fn a_missing_txnindex_is_judged_only_when_the_segment_is_not_rebuilt() {
    let txn = Producer::transactional(4, 0);
    let mut p = PartitionBuilder::new("ab", 0)
        .start_time(T0)
        .broker_files(klogscan::testkit::PartitionFileOptions::default());
    p.append(Batch::new(txn).records(3));
    p.abort(txn, 0);
    p.append(Batch::new(Producer::PLAIN).records(1));
    let (d, m) = write(&p);
    remove_files(&m.dir, &[".txnindex", ".index", ".timeindex", ".snapshot"]);
    assert!(!verify_kinds(d.path()).contains(&Kind::TxnindexMismatch));
    let (d, m) = write(&p);
    remove_files(&m.dir, &[".txnindex"]);
    assert!(verify_kinds(d.path()).contains(&Kind::TxnindexMismatch));
}

/// "No snapshot although transactions are open" matters only after a clean shutdown (the
/// broker then skips the rebuild); with the shutdown state unknown or unclean it replays the
/// log and finds them.
#[test]
fn no_snapshot_with_open_transactions_matters_only_after_a_clean_shutdown() {
    use klogscan::testkit::LogDirBuilder;
    let txn = Producer::transactional(4, 0);
    let part = || {
        let mut p = PartitionBuilder::new("open", 0).start_time(T0);
        p.append(Batch::new(txn).records(3));
        p
    };
    for clean in [Some(true), Some(false), None] {
        let p = part();
        let dir = tempfile::tempdir().unwrap();
        let m = match clean {
            Some(c) => {
                let ld = LogDirBuilder::new(1).clean_shutdown(c).partition(p);
                ld.write(dir.path()).unwrap().partitions.remove(0)
            }
            None => p.write(dir.path()).unwrap(),
        };
        remove_files(&m.dir, &[".snapshot"]);
        let kinds = verify_kinds(dir.path());
        assert_eq!(
            kinds.contains(&Kind::SnapshotMismatch),
            clean == Some(true),
            "clean shutdown {clean:?}: {kinds:?}"
        );
    }
}

/// Partitions of a directory without any broker file (copies handed over together, taken
/// at different times) do not share a reference time; partitions of a broker's log dir do.
#[test]
fn only_a_broker_log_dir_shares_a_reference_time() {
    use klogscan::testkit::LogDirBuilder;
    let txn = Producer::transactional(4, 0);
    let mut old = PartitionBuilder::new("old", 0).start_time(T0);
    old.append(Batch::new(txn).records(3));
    let mut new = PartitionBuilder::new("new", 0).start_time(T0 + 3_600_000);
    new.append(Batch::new(Producer::PLAIN).records(1));
    // a bare directory holding the two partition dirs
    let bare = tempfile::tempdir().unwrap();
    old.write(bare.path()).unwrap();
    new.write(bare.path()).unwrap();
    let r = run(bare.path(), &ScanOptions::default());
    assert!(
        of(&r, Kind::HangingTransaction).is_empty(),
        "{:#?}",
        r.findings
    );
    assert_eq!(of(&r, Kind::OpenTransaction).len(), 1);
    // the same two partitions in one broker log dir
    let ld = tempfile::tempdir().unwrap();
    LogDirBuilder::new(1)
        .partition(old)
        .partition(new)
        .write(ld.path())
        .unwrap();
    let r = run(ld.path(), &ScanOptions::default());
    assert_eq!(
        of(&r, Kind::HangingTransaction).len(),
        1,
        "{:#?}",
        r.findings
    );
}

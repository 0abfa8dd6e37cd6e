//! Review of session 23's fixes (`git diff d4fe4cd..e2cbe27 -- src crates docs`), held
//! against Kafka's classes: the defects found (ignored tests, failing with `--ignored`) and
//! the risky near misses checked (passing tests).
#![cfg(all(feature = "testkit", target_os = "linux"))]

use klogscan::Kind;
use klogscan::finding::Finding;
use klogscan::partition::scan::ScanOptions;
use klogscan::pipeline::scan;
use klogscan::request::{self, Request};
use klogscan::results::ScanReport;
use klogscan::testkit::files::{LogDirBuilder, PartitionFileOptions, topic_id_for};
use klogscan::testkit::{Batch, FaultKind, PartitionBuilder, Producer, Target};
use std::os::unix::fs::FileExt;
use std::path::Path;

const T0: i64 = 1_700_000_000_000;

fn kinds(r: &ScanReport) -> Vec<(Kind, Option<i64>)> {
    r.findings.iter().map(|f| (f.kind, f.offset)).collect()
}

fn of(r: &ScanReport, k: Kind) -> Vec<&Finding> {
    r.findings.iter().filter(|f| f.kind == k).collect()
}

// ----- 1. entries of a magic outside 0–2, read in chunks ------------------------------------

/// 100 MiB: over `BIG_ENTRY` (64 MiB), the size at which the chunked walk streams an entry.
const HUGE: i32 = 100 << 20;

/// A partition of two batches, then at `garbage` a header declaring `HUGE` bytes with magic
/// `magic` (its CRC cannot hold: the body is a hole), the file extended sparsely past the
/// declared end. Returns the partition directory and the garbage header's position.
fn unknown_magic_header(root: &Path, magic: u8, size: i32) -> (std::path::PathBuf, u64) {
    let mut b = PartitionBuilder::new("huge", 0).start_time(T0);
    b.append(Batch::new(Producer::PLAIN).values(["a", "b"]));
    b.append(Batch::new(Producer::PLAIN).values(["c"]));
    let log = b.write(root).unwrap().segments[0].1.clone();
    let at = std::fs::metadata(&log).unwrap().len();
    let mut head = vec![0u8; 61];
    head[..8].copy_from_slice(&2i64.to_be_bytes());
    head[8..12].copy_from_slice(&size.to_be_bytes());
    head[16] = magic;
    head[17..21].copy_from_slice(&0x1234_5678u32.to_be_bytes());
    let f = std::fs::OpenOptions::new().write(true).open(&log).unwrap();
    f.write_all_at(&head, at).unwrap();
    f.set_len(at + size as u64 + 12 + (50 << 20)).unwrap();
    (log.parent().unwrap().to_path_buf(), at)
}

/// The trailing-bytes finding at `at`, if any, and the log end the scan gives.
fn garbage_at(r: &ScanReport, at: u64) -> (bool, Option<i64>) {
    let trailing = of(r, Kind::TrailingBytes)
        .iter()
        .any(|f| f.position == Some(at));
    (trailing, r.partitions[0].outcome().log_end_offset)
}

/// `FileLogInputStream.nextBatch` frames the entry (it checks no magic), and
/// `LogSegment.recover` calls `ensureValid` on it: the legacy reader for a magic below 2
/// (negative too: `LegacyRecord.ensureValid`, CRC-32 from the magic on), the v2 reader from
/// 2 up (`DefaultRecordBatch.ensureValid`, CRC-32C from the attributes on). Either CRC fails
/// here: `CorruptRecordException`, caught by `recover`, which truncates the segment at the
/// header (everything from it is gone). The map walk (`Entries::new`) says so
/// (`kept_unknown_magic` fails: garbage); the chunked walk defers judging an unknown magic
/// until the entry is whole, but `Window::read_unfinished` hands an entry over `BIG_ENTRY`
/// to `bigentry::read_big` unjudged — an `Item::Big` whose classification
/// (`LegacyMessage::new` refuses magic −126) the scan's `Walker::big` drops silently
/// (`Classified::Invalid(_) => return`), and the walk goes on after the bogus 100 MiB.
#[test]
fn a_huge_header_of_unknown_magic_is_garbage_as_recovery_finds_it() {
    for magic in [0x82u8, 0x41] {
        for size in [4096, HUGE] {
            let t = tempfile::tempdir().unwrap();
            let (dir, at) = unknown_magic_header(t.path(), magic, size);
            let r = scan(&[dir], &ScanOptions::default().with_now_ms(T0));
            assert_eq!(
                garbage_at(&r, at),
                (true, Some(3)),
                "magic {magic:#x}, size {size}: {:#?}",
                kinds(&r)
            );
        }
    }
}

// ----- 2. offset and sequence findings withdrawn at the first cleaner trace ------------------

/// Producer 5 at offset 0; a plain batch at 5 (offsets 1–4 missing: an `offset_gap`, the
/// policy unknown); producer 77 at 6, its CRC broken when `damaged`; producer 5 again at 7,
/// a batch the cleaner rebuilt (one record, last offset delta 2: fewer records than
/// offsets, the first cleaner trace).
fn gap_damage_then_cleaner_trace(damaged: bool) -> ScanReport {
    let build = || {
        let mut p = PartitionBuilder::new("trace", 0).start_time(T0);
        p.append(Batch::new(Producer::idempotent(5, 0)).records(1));
        p.skip_offsets(4);
        p.append(Batch::new(Producer::PLAIN).records(1));
        p.append(Batch::new(Producer::idempotent(77, 0)).records(1));
        p.append(
            Batch::new(Producer::idempotent(5, 0))
                .sequence(1)
                .records(1)
                .tweak(|s| s.overrides.last_offset_delta = Some(2)),
        );
        p
    };
    let clean = tempfile::tempdir().unwrap();
    let m = build().write(clean.path()).unwrap();
    let mut p = build();
    if damaged {
        // The last byte of producer 77's batch (its record's value): CRC broken, header whole.
        let b = &m.batches[2];
        p.fault(
            Target::Log(0),
            FaultKind::FlipByte {
                position: b.position + b.size - 1,
                mask: 0x10,
            },
        );
    }
    let d = tempfile::tempdir().unwrap();
    p.write(d.path()).unwrap();
    scan(
        &[d.path().to_path_buf()],
        &ScanOptions::default().with_now_ms(T0),
    )
}

/// Near miss, agrees: with every batch intact the gap found before the first cleaner trace
/// is withdrawn (`Cleaner.cleanInto` removes whole batches anywhere it ran: the log reads
/// as compacted throughout), and nothing else is said of it.
#[test]
fn the_gap_before_the_first_cleaner_trace_is_withdrawn() {
    let r = gap_damage_then_cleaner_trace(false);
    assert!(of(&r, Kind::OffsetGap).is_empty(), "{:#?}", kinds(&r));
    assert!(r.errors.is_empty(), "{:?}", r.errors);
}

/// `Replay::apply` withdraws the earlier findings (`findings.retain`) inside
/// `DamageTracker::apply`, which took `findings.len()` before the call and reads
/// `findings[before..]` after it: with a damaged batch before (producer 77's CRC broken: a
/// new producer id, so the next intact batch of producer 5 is checked for a verdict) and a
/// withdrawn `offset_gap`, the vector is shorter than `before` and the slice panics. Kafka
/// has nothing to say against such a log (`LogSegment.recover` truncates at the CRC
/// failure; the scan reports it): the scan must finish, with the `crc_mismatch` and without
/// the withdrawn gap.
#[test]
fn a_cleaner_trace_after_damage_withdraws_the_gap_without_panicking() {
    let r = std::panic::catch_unwind(|| gap_damage_then_cleaner_trace(true));
    let r = r.expect("the scan panicked");
    assert_eq!(of(&r, Kind::CrcMismatch).len(), 1, "{:#?}", kinds(&r));
    assert!(of(&r, Kind::OffsetGap).is_empty(), "{:#?}", kinds(&r));
}

// ----- 3. two directories of one partition in one log dir ----------------------------------

const CLUSTER: &str = "MkU3OEVBNTcwNTJENDM2Qg";

/// Log dir `ld` of node 1 (`meta.properties` of `version`) holding orders-0 (3 records).
fn one_log_dir(ld: &Path, version: u8) {
    let mut p = PartitionBuilder::new("orders", 0).broker_files(PartitionFileOptions {
        topic_id: Some(topic_id_for("orders")),
        ..Default::default()
    });
    for _ in 0..3 {
        p.append(Batch::new(Producer::PLAIN).records(1));
    }
    LogDirBuilder::new(1)
        .cluster_id(CLUSTER)
        .partition(p)
        .write(ld)
        .unwrap();
    let id = if version == 1 { "node.id" } else { "broker.id" };
    std::fs::write(
        ld.join("meta.properties"),
        format!("version={version}\n{id}=1\ncluster.id={CLUSTER}\n"),
    )
    .unwrap();
}

fn duplicates_of(inputs: &[&Path]) -> Vec<Finding> {
    let a = request::run(&Request::new(inputs.iter().copied())).unwrap();
    a.report
        .findings
        .into_iter()
        .filter(|f| f.kind == Kind::DuplicateLogDirectories)
        .collect()
}

/// Near miss, agrees: one directory reached twice — the log dir given twice, the log dir
/// and its partition directory, the log dir and a symlink to it — is one directory, which
/// `LogManager.loadLogs` lists once (`dir.listFiles`): no `duplicate_log_directories`
/// (the same-log-dir rule needs two names in one listing).
#[test]
fn one_directory_reached_twice_is_no_duplicate() {
    for version in [0u8, 1] {
        let d = tempfile::tempdir().unwrap();
        let ld = d.path().join("d1");
        one_log_dir(&ld, version);
        let link = d.path().join("again");
        std::os::unix::fs::symlink(&ld, &link).unwrap();
        let part = ld.join("orders-0");
        for inputs in [
            vec![ld.as_path(), ld.as_path()],
            vec![ld.as_path(), part.as_path()],
            vec![ld.as_path(), link.as_path()],
            vec![d.path()],
        ] {
            let f = duplicates_of(&inputs);
            assert!(f.is_empty(), "v{version} {inputs:?}: {f:#?}");
        }
    }
}

/// Near miss, agrees: beside `orders-0`, names `loadLog` does not hold as a second current
/// log of partition 0 — `-delete` (queued for deletion), `-stray` (loaded aside), a
/// `-future` (the future-log map), `orders-00.bak`-like names that are no partition's
/// (`orders-0x`) — make no `duplicate_log_directories`; `orders-00` (the positive twin)
/// does.
#[test]
fn deleted_stray_and_future_names_beside_the_partition_are_no_duplicate() {
    for second in [
        "orders-00.0123456789abcdef0123456789abcdef-delete",
        "orders-00.0123456789abcdef0123456789abcdef-stray",
        "orders-00.0123456789abcdef0123456789abcdef-future",
        "orders-0x",
        "orders-00",
    ] {
        let d = tempfile::tempdir().unwrap();
        let ld = d.path().join("d1");
        one_log_dir(&ld, 0);
        let other = tempfile::tempdir().unwrap();
        one_log_dir(other.path(), 0);
        std::fs::rename(other.path().join("orders-0"), ld.join(second)).unwrap();
        let f = duplicates_of(&[d.path()]);
        assert_eq!(
            f.len(),
            usize::from(second == "orders-00"),
            "{second}: {f:#?}"
        );
    }
}

//! `klogscan dump` held against `kafka-dump-log.sh` (`kafka.tools.DumpLogSegments`,
//! core/src/main/scala/kafka/tools/DumpLogSegments.scala) and `DumpLogSegmentsTest`
//! (core/src/test/scala/unit/kafka/tools/), for what `kafka_dump_cases`, the golden tests
//! (`dump_golden`, `dump_sample_golden`, `groups_dump`, `tiered_dump`, `verify_dump_text`) and
//! `index_files` do not pin: the index and time-index verification reports, the transaction
//! index, the paths the reports name, and the record-line quirks of the option combinations.
//!
//! Kafka versions: "trunk" is apache/kafka trunk of 2024-10 (Scala `DumpLogSegments`, Java
//! `TransactionIndex`), "4.x" the 2025-10 tree; where a rule is the same in both it says so.
//! Every test marked `divergence` fails on klogscan today and asserts what Kafka prints (audit
//! branch `audit-dumptool`).
#![cfg(feature = "testkit")]

use klogscan::dump::{DumpOptions, dump_paths};
use klogscan::testkit::files::{AbortedTxn, encode_txn_index};
use klogscan::testkit::{BatchSpec, HeaderOverrides, RecordSpec};
use std::path::{Path, PathBuf};

/// `kafka-dump-log --files <paths>` with `opts`: (stdout, stderr).
fn run(paths: &[PathBuf], opts: &DumpOptions) -> (String, String) {
    let mut out = Vec::new();
    let mut err = Vec::new();
    dump_paths(paths, opts, &mut out, &mut err).unwrap();
    (
        String::from_utf8(out).unwrap(),
        String::from_utf8(err).unwrap(),
    )
}

/// A v2 batch at `base` with one record per `(timestamp delta, key, value)`, base timestamp
/// `ts`; `max_ts` overrides the header's maxTimestamp (the CRC still covers it).
fn batch(
    base: i64,
    ts: i64,
    recs: &[(i64, Option<&str>, Option<&str>)],
    max_ts: Option<i64>,
) -> Vec<u8> {
    BatchSpec {
        base_offset: base,
        partition_leader_epoch: 0,
        base_timestamp: ts,
        records: recs
            .iter()
            .enumerate()
            .map(|(i, (d, k, v))| RecordSpec {
                timestamp_delta: *d,
                offset_delta: i as i32,
                key: k.map(|k| k.as_bytes().to_vec()),
                value: v.map(|v| v.as_bytes().to_vec()),
                ..RecordSpec::default()
            })
            .collect(),
        overrides: HeaderOverrides {
            max_timestamp: max_ts,
            ..HeaderOverrides::default()
        },
        ..BatchSpec::default()
    }
    .encode()
}

/// Offset-index bytes: `(relative offset, position)` entries.
fn offset_index(entries: &[(i32, i32)]) -> Vec<u8> {
    let mut v = Vec::new();
    for (rel, pos) in entries {
        v.extend_from_slice(&rel.to_be_bytes());
        v.extend_from_slice(&pos.to_be_bytes());
    }
    v
}

/// Time-index bytes: `(timestamp, relative offset)` entries.
fn time_index(entries: &[(i64, i32)]) -> Vec<u8> {
    let mut v = Vec::new();
    for (ts, rel) in entries {
        v.extend_from_slice(&ts.to_be_bytes());
        v.extend_from_slice(&rel.to_be_bytes());
    }
    v
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

/// `File.getAbsolutePath()` of an absolute path: the path itself, `.` components kept.
fn java_abs(p: &Path) -> String {
    assert!(p.is_absolute());
    p.display().to_string()
}

const SEG: &str = "00000000000000000000";

/// The four batches of `DumpLogSegmentsTest.addSimpleRecords` (keys and values; keys only;
/// values only; neither), 2 records each instead of 10/20/20/10, timestamps 1 000 apart.
fn simple_records_log() -> (Vec<u8>, Vec<(i64, i64, usize)>) {
    let mut log = Vec::new();
    let mut batches = Vec::new();
    let shapes: [(bool, bool); 4] = [(true, true), (true, false), (false, true), (false, false)];
    for (b, (k, v)) in shapes.iter().enumerate() {
        let base = 2 * b as i64;
        let keys = [
            format!("message key {base}"),
            format!("message key {}", base + 1),
        ];
        let vals = [
            format!("message value {base}"),
            format!("message value {}", base + 1),
        ];
        let recs: Vec<(i64, Option<&str>, Option<&str>)> = (0..2)
            .map(|i| {
                let key = k.then_some(keys[i].as_str());
                let val = v.then_some(vals[i].as_str());
                (i as i64 * 7, key, val)
            })
            .collect();
        let bytes = batch(base, 1_000 * (b as i64 + 1), &recs, None);
        batches.push((base + 1, 1_000 * (b as i64 + 1) + 7, log.len()));
        log.extend_from_slice(&bytes);
    }
    (log, batches)
}

/// `DumpLogSegmentsTest.testDumpIndexMismatches` and `testDumpTimeIndexErrors` (trunk and
/// 4.x): a log flushed but not closed, so its `.index` and `.timeindex` keep the broker's
/// zero tail (`entry.offset == baseOffset && i > 0` ends `dumpIndex`/`dumpTimeIndex`), checked
/// with `--verify-index-only`: no mismatch, no time-index error, no entry line. Without
/// `--verify-index-only` only the used entries print.
#[test]
fn untrimmed_indexes_of_a_healthy_log_verify_clean() {
    let dir = tempfile::tempdir().unwrap();
    let (log, batches) = simple_records_log();
    write(dir.path(), &format!("{SEG}.log"), &log);
    // An entry per batch after the first (index.interval.bytes small), then the zero tail.
    let idx: Vec<(i32, i32)> = batches[1..]
        .iter()
        .map(|(last, _, pos)| (*last as i32, *pos as i32))
        .collect();
    let mut ib = offset_index(&idx);
    ib.resize(ib.len() + 8 * 16, 0);
    let index = write(dir.path(), &format!("{SEG}.index"), &ib);
    let ts: Vec<(i64, i32)> = batches[1..]
        .iter()
        .map(|(last, max, _)| (*max, *last as i32))
        .collect();
    let mut tb = time_index(&ts);
    tb.resize(tb.len() + 12 * 16, 0);
    let tindex = write(dir.path(), &format!("{SEG}.timeindex"), &tb);

    let verify = DumpOptions {
        verify_index_only: true,
        ..Default::default()
    };
    let (out, err) = run(&[index.clone(), tindex.clone()], &verify);
    assert_eq!(
        out,
        format!(
            "Dumping {}\nDumping {}\n",
            index.display(),
            tindex.display()
        )
    );
    assert_eq!(err, "");

    let (out, err) = run(&[index.clone(), tindex.clone()], &DumpOptions::default());
    let mut want = format!("Dumping {}\n", index.display());
    for (rel, pos) in &idx {
        want += &format!("offset: {rel} position: {pos}\n");
    }
    want += &format!("Dumping {}\n", tindex.display());
    for (t, rel) in &ts {
        want += &format!("timestamp: {t} offset: {rel}\n");
    }
    assert_eq!(out, want);
    assert_eq!(err, "");
}

/// `DumpLogSegmentsTest.testDumpEmptyIndex` (trunk and 4.x): a 0-byte `.index` prints
/// `<file> is empty.` — before any sanity check (`dumpIndex` tests `index.entries == 0`
/// first). `dumpTimeIndex` has no such line: an empty `.timeindex` prints no entry, and
/// passes `--index-sanity-check` (`TimeIndex.sanityCheck` only looks at a non-empty file).
#[test]
fn an_empty_index_says_so_and_an_empty_time_index_prints_nothing() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), &format!("{SEG}.log"), &[]);
    let index = write(dir.path(), &format!("{SEG}.index"), &[]);
    let tindex = write(dir.path(), &format!("{SEG}.timeindex"), &[]);
    let paths = [index.clone(), tindex.clone()];
    let (out, err) = run(&paths, &DumpOptions::default());
    let (i, t) = (index.display(), tindex.display());
    assert_eq!(out, format!("Dumping {i}\n{i} is empty.\nDumping {t}\n"));
    assert_eq!(err, "");
    let sanity = DumpOptions {
        index_sanity_check: true,
        ..Default::default()
    };
    let (out, err) = run(&paths, &sanity);
    assert_eq!(
        out,
        format!("Dumping {i}\n{i} is empty.\nDumping {t}\n{t} passed sanity check.\n")
    );
    assert_eq!(err, "");
}

/// `DumpLogSegments.dumpTimeIndex` (trunk and 4.x) takes the log's timestamp for an entry as
/// the largest `record.timestamp` of the batch ending at the entry's offset (it iterates the
/// batch's records), not the batch header's maxTimestamp. A CRC-valid batch whose header
/// maxTimestamp (5 000) is above its records' (1 000, 1 001) and a time index naming the
/// header's value: Kafka prints `Index timestamp: 5000, log timestamp: 1001`.
///
/// klogscan compares with the header (`klogscan-format` `index/log_check.rs`:
/// `EntryFold::batch` keeps `v.max_timestamp()`, `time_checks` compares with it) and reports
/// nothing.
#[test]
fn time_index_timestamp_is_checked_against_the_records() {
    let dir = tempfile::tempdir().unwrap();
    let log = batch(
        0,
        1_000,
        &[(0, None, Some("a")), (1, None, Some("b"))],
        Some(5_000),
    );
    write(dir.path(), &format!("{SEG}.log"), &log);
    write(
        dir.path(),
        &format!("{SEG}.index"),
        &offset_index(&[(1, 0)]),
    );
    let tindex = write(
        dir.path(),
        &format!("{SEG}.timeindex"),
        &time_index(&[(5_000, 1)]),
    );
    let (_, err) = run(std::slice::from_ref(&tindex), &DumpOptions::default());
    assert_eq!(
        err,
        format!(
            "Found timestamp mismatch in :{}\n  Index timestamp: 5000, log timestamp: 1001\n",
            java_abs(&tindex)
        )
    );
}

/// The other side of `time_index_timestamp_is_checked_against_the_records` (where klogscan
/// agrees): header and records agree, the time index names a smaller timestamp; and two
/// entries with the same timestamp are out of order (`prevTimestamp >= entry.timestamp`).
#[test]
fn time_index_mismatch_and_equal_timestamps_out_of_order() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = batch(
        0,
        1_000,
        &[(0, None, Some("a")), (5, None, Some("b"))],
        None,
    );
    let p1 = log.len() as i32;
    log.extend(batch(2, 2_000, &[(0, None, Some("c"))], None));
    write(dir.path(), &format!("{SEG}.log"), &log);
    write(
        dir.path(),
        &format!("{SEG}.index"),
        &offset_index(&[(1, 0), (2, p1)]),
    );
    let tindex = write(
        dir.path(),
        &format!("{SEG}.timeindex"),
        &time_index(&[(1_004, 1), (1_004, 2)]),
    );
    let (out, err) = run(std::slice::from_ref(&tindex), &DumpOptions::default());
    assert!(
        out.ends_with("timestamp: 1004 offset: 1\ntimestamp: 1004 offset: 2\n"),
        "{out}"
    );
    let abs = java_abs(&tindex);
    assert_eq!(
        err,
        format!(
            "Found timestamp mismatch in :{abs}\n  Index timestamp: 1004, log timestamp: 1005\n  \
             Index timestamp: 1004, log timestamp: 2000\n\
             Found out of order timestamp in :{abs}\n  Index timestamp: 1004, Previously indexed timestamp: 1004\n"
        )
    );
}

/// `DumpLogSegments.dumpIndex` (trunk and 4.x) keeps an index file's mismatches in a Scala
/// `List` it prepends to (`misMatchesSeq ::= (entry.offset, firstBatchLastOffset)`): they print
/// newest entry first, one line per entry, duplicates included. An index whose entries
/// `(3 @ 0)`, `(1 @ p1)`, `(1 @ p1)` all miss (batches 0–1 at 0, 2–3 at p1) prints
/// `1/3`, `1/3`, `3/1` in that order.
///
/// klogscan sorts them by index offset, descending, and merges equal offsets
/// (`src/dump/files.rs`, `dump_index`: `sort_by_key(Reverse)` + `dedup_by_key`, commented as
/// "the Java tool keeps mismatches in a TreeMap" — no Kafka version has a Java
/// DumpLogSegments): it prints `3/1`, `1/3`.
#[test]
fn index_mismatches_print_last_entry_first_without_merging() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = batch(
        0,
        1_000,
        &[(0, None, Some("a")), (1, None, Some("b"))],
        None,
    );
    let p1 = log.len() as i32;
    log.extend(batch(
        2,
        2_000,
        &[(0, None, Some("c")), (1, None, Some("d"))],
        None,
    ));
    write(dir.path(), &format!("{SEG}.log"), &log);
    let index = write(
        dir.path(),
        &format!("{SEG}.index"),
        &offset_index(&[(3, 0), (1, p1), (1, p1)]),
    );
    let (_, err) = run(std::slice::from_ref(&index), &DumpOptions::default());
    assert_eq!(
        err,
        format!(
            "Mismatches in :{}\n  Index offset: 1, log offset: 3\n  Index offset: 1, log offset: 3\n  \
             Index offset: 3, log offset: 1\n",
            java_abs(&index)
        )
    );
}

/// The case where sorting and Kafka's reversed list agree: a well-ordered index with two
/// wrong entries prints them highest offset (= last entry) first.
#[test]
fn ordered_index_mismatches_print_last_entry_first() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = batch(
        0,
        1_000,
        &[(0, None, Some("a")), (1, None, Some("b"))],
        None,
    );
    let p1 = log.len() as i32;
    log.extend(batch(
        2,
        2_000,
        &[(0, None, Some("c")), (1, None, Some("d"))],
        None,
    ));
    let p2 = log.len() as i32;
    log.extend(batch(4, 3_000, &[(0, None, Some("e"))], None));
    write(dir.path(), &format!("{SEG}.log"), &log);
    let index = write(
        dir.path(),
        &format!("{SEG}.index"),
        &offset_index(&[(2, 0), (3, p1), (5, p2)]),
    );
    let (out, err) = run(std::slice::from_ref(&index), &DumpOptions::default());
    assert!(
        out.ends_with(&format!(
            "offset: 2 position: 0\noffset: 3 position: {p1}\noffset: 5 position: {p2}\n"
        )),
        "{out}"
    );
    assert_eq!(
        err,
        format!(
            "Mismatches in :{}\n  Index offset: 5, log offset: 4\n  Index offset: 2, log offset: 1\n",
            java_abs(&index)
        )
    );
}

/// `DumpLogSegments.dumpTxnIndex` (trunk and 4.x) prints `TransactionIndex.allAbortedTxns`,
/// which reads the whole file into a list before anything is printed; its iterator throws
/// `KafkaException("Unexpected aborted transaction version …")` on an entry whose version
/// byte is above 0. So a `.txnindex` whose second entry has version 1 prints no entry line at
/// all (only `Dumping <file>`, then the tool dies with that message).
///
/// klogscan prints the entries before the bad one, then the message (`src/dump/files.rs`,
/// `dump_txnindex`, which checks each entry as it prints it; `index_files::
/// dump_crafted_txnindex` pins that). Kafka's tool dying is a deliberate difference; printing
/// entries Kafka never prints is not.
#[test]
fn a_txn_index_with_an_unknown_version_prints_no_entry() {
    let dir = tempfile::tempdir().unwrap();
    let entry = |pid| AbortedTxn {
        producer_id: pid,
        first_offset: 3,
        last_offset: 9,
        last_stable_offset: 3,
    };
    let mut b = encode_txn_index(&[entry(7), entry(8)]);
    b[34] = 1; // the second entry's version byte
    let p = write(dir.path(), &format!("{SEG}.txnindex"), &b);
    let (out, err) = run(std::slice::from_ref(&p), &DumpOptions::default());
    assert!(
        err.contains(&format!(
            "Unexpected aborted transaction version 1 in transaction index {}, current version is 0",
            java_abs(&p)
        )),
        "{err}"
    );
    assert_eq!(out, format!("Dumping {}\n", p.display()));
}

/// `AbortedTxn.version()` is `buffer.get(0)`: one signed byte, so `0xff..` prints as version
/// -1 and is not "above 0" (the iterator does not throw, before 4.4); a trailing fragment
/// shorter than 34 bytes is not an entry (`hasNext` needs 34 more bytes). klogscan agrees.
#[test]
fn a_txn_index_version_is_one_signed_byte_and_fragments_are_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let mut b = encode_txn_index(&[AbortedTxn {
        producer_id: 7,
        first_offset: 3,
        last_offset: 9,
        last_stable_offset: 10,
    }]);
    b[0] = 0xff;
    b[1] = 0x05;
    b.extend_from_slice(&[1; 33]);
    let p = write(dir.path(), &format!("{SEG}.txnindex"), &b);
    let (out, err) = run(std::slice::from_ref(&p), &DumpOptions::default());
    assert_eq!(
        out,
        format!(
            "Dumping {}\nversion: -1 producerId: 7 firstOffset: 3 lastOffset: 9 lastStableOffset: 10\n",
            p.display()
        )
    );
    // since 4.4 (KAFKA-19562) the whole int16 (-251) is read and refused: said on stderr
    // (`kafka_rixdumpaudit_cases::dump`)
    assert!(
        err.contains("Unexpected aborted transaction version -251 in transaction index"),
        "{err}"
    );
}

/// The reports after the dump name each file by `File.getAbsolutePath` (`Mismatches in :`,
/// `Non-consecutive offsets in `, trunk and 4.x), which prefixes a relative path with the
/// working directory and keeps `.` components: `kafka-dump-log --files ./0….index` reports
/// `Mismatches in :/cwd/./0….index`. Here the path is `<tmp>/./0…` (already absolute, so
/// Java returns it unchanged).
///
/// klogscan uses `std::path::absolute`, which drops `.` components (`src/dump/files.rs`
/// `abs`, `src/dump/log/mod.rs` `write_non_consecutive`): it prints `<tmp>/0…`.
#[test]
fn report_paths_keep_dot_components_as_get_absolute_path_does() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = batch(
        0,
        1_000,
        &[(0, None, Some("a")), (1, None, Some("b"))],
        None,
    );
    // A compacted-away offset: 2 is missing.
    log.extend(batch(3, 2_000, &[(0, None, Some("c"))], None));
    write(dir.path(), &format!("{SEG}.log"), &log);
    write(
        dir.path(),
        &format!("{SEG}.index"),
        &offset_index(&[(2, 0)]),
    );
    let dotted = dir.path().join(".");
    let index = dotted.join(format!("{SEG}.index"));
    let seg = dotted.join(format!("{SEG}.log"));
    let deep = DumpOptions {
        deep_iteration: true,
        ..Default::default()
    };
    let (_, err) = run(&[index.clone(), seg.clone()], &deep);
    let (i, l) = (java_abs(&index), java_abs(&seg));
    assert!(i.contains("/./"), "{i}");
    assert_eq!(
        err,
        format!(
            "Mismatches in :{i}\n  Index offset: 2, log offset: 1\n\
             Non-consecutive offsets in {l}\n  1 is followed by 3\n"
        )
    );
}

/// `DumpLogSegments.main` prints `Dumping $file` for `new File(arg)`, and `java.io.File`
/// normalises the path it is given (repeated separators collapse: `UnixFileSystem.normalize`),
/// so `--files <dir>//0….log` prints `Dumping <dir>/0….log` (trunk and 4.x).
///
/// klogscan prints the argument as given (`src/dump/log/mod.rs` `dump_log_walk`,
/// `crate::escape::path(path)`): `Dumping <dir>//0….log`.
#[test]
fn dumping_line_collapses_repeated_separators_as_java_io_file_does() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        &format!("{SEG}.log"),
        &batch(0, 1_000, &[(0, None, Some("a"))], None),
    );
    let typed = PathBuf::from(format!("{}//{SEG}.log", dir.path().display()));
    let (out, _) = run(&[typed], &DumpOptions::default());
    let first = out.lines().next().unwrap_or_default();
    assert_eq!(
        first,
        format!(
            "Dumping {}",
            dir.path().join(format!("{SEG}.log")).display()
        )
    );
}

/// `DumpLogSegments.dumpLog` (trunk and 4.x) with `--skip-record-metadata --print-data-log`:
/// the record-line prefix `| ` is only printed with the metadata or before a key, and the
/// payload is always appended as ` payload: …`. A record without a key therefore prints
/// ` payload: v` (leading space, no `|`); one with a key `| key: k payload: v`; one with
/// neither an empty line. klogscan agrees.
#[test]
fn skip_record_metadata_lines_without_a_key_start_with_a_space() {
    let dir = tempfile::tempdir().unwrap();
    let log = batch(
        0,
        1_000,
        &[
            (0, Some("k"), Some("v")),
            (1, None, Some("w")),
            (2, Some("j"), None),
            (3, None, None),
        ],
        None,
    );
    let seg = write(dir.path(), &format!("{SEG}.log"), &log);
    let opts = DumpOptions {
        print_data_log: true,
        skip_record_metadata: true,
        ..Default::default()
    };
    let (out, err) = run(std::slice::from_ref(&seg), &opts);
    let lines: Vec<&str> = out.lines().skip(3).collect();
    assert_eq!(
        lines,
        ["| key: k payload: v", " payload: w", "| key: j", ""]
    );
    assert_eq!(err, "");
}

/// `DumpLogSegmentsTest.testPrintDataLogPartialBatches` (trunk and 4.x): `--max-bytes` set
/// to the size of the first two of the four `addSimpleRecords` batches prints exactly two
/// batches, one byte less prints one; either way no `Found N invalid bytes` line (`dumpLog`
/// prints it only when `maxBytes == Integer.MAX_VALUE`). klogscan agrees.
#[test]
fn max_bytes_prints_only_whole_batches_inside_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    let (log, batches) = simple_records_log();
    let seg = write(dir.path(), &format!("{SEG}.log"), &log);
    let two = batches[2].2 as u64;
    for (max, want) in [(two, 2), (two - 1, 1)] {
        let opts = DumpOptions {
            max_bytes: Some(max),
            ..Default::default()
        };
        let (out, err) = run(std::slice::from_ref(&seg), &opts);
        assert_eq!(out.matches("baseOffset:").count(), want, "{out}");
        assert!(!out.contains("invalid bytes"), "{out}");
        assert_eq!(err, "");
    }
    // Kafka's default (Integer.MAX_VALUE) given explicitly still reports trailing bytes.
    let mut cut = log.clone();
    cut.extend_from_slice(&[0; 17]);
    std::fs::write(&seg, &cut).unwrap();
    let opts = DumpOptions {
        max_bytes: Some(i32::MAX as u64),
        ..Default::default()
    };
    let (out, _) = run(std::slice::from_ref(&seg), &opts);
    assert!(
        out.ends_with(&format!("Found 17 invalid bytes at the end of {SEG}.log\n")),
        "{out}"
    );
}

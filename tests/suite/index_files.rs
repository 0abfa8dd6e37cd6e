//! Offset and time indexes of real broker data: every file parses, passes the structural
//! and Kafka sanity checks, and every entry points at the right batch of its `.log`
//! (broker/PROVENANCE.md: 3 837/3 837 offset-index entries, 3 878/3 878 time-index entries).

use klogscan::dump::{DumpFormat, DumpOptions, files};
use klogscan::read::format::index::{
    LogBatches, OffsetCheck, OffsetIndex, TimeCheck, TimeIndex, TxnIndex, check_offset_index,
    check_time_index,
};
use std::path::{Path, PathBuf};

fn base_of(p: &Path) -> i64 {
    let name = p.file_name().unwrap().to_str().unwrap();
    name.split('.').next().unwrap().parse().unwrap()
}

fn log_of(p: &Path) -> PathBuf {
    p.with_file_name(format!("{:020}.log", base_of(p)))
}

fn read(p: &Path) -> Vec<u8> {
    std::fs::read(p).unwrap()
}

#[test]
fn every_real_offset_index_agrees_with_its_log() {
    let Some(root) = crate::common::real_data() else {
        return;
    };
    let files = crate::common::files_with_suffix(&root.join("broker"), ".index");
    assert!(!files.is_empty());
    let (mut total, mut exact, mut unchecked) = (0usize, 0usize, 0usize);
    for f in &files {
        let bytes = read(f);
        let idx = OffsetIndex::new(&bytes, base_of(f));
        assert_eq!(idx.check(), Ok(()), "{}", f.display());
        assert_eq!(idx.sanity_check(), Ok(()), "{}", f.display());
        assert!(idx.layout().is_trimmed(), "{}", f.display());
        if !log_of(f).exists() {
            // PROVENANCE: this segment's .log was too large to copy; nothing to check against.
            unchecked += idx.layout().used;
            continue;
        }
        let log = LogBatches::from_log(&read(&log_of(f)));
        let checks = check_offset_index(&idx, &log);
        assert_eq!(checks.len(), idx.layout().used);
        for c in &checks {
            total += 1;
            // Independently: the batch at the position ends exactly at the entry offset.
            let b = log
                .at_position(c.entry.position as u64)
                .expect("a batch starts there");
            assert!(b.base_offset <= c.entry.offset && c.entry.offset <= b.last_offset);
            if c.check == OffsetCheck::Exact {
                exact += 1;
            } else {
                panic!("{}: {:?}", f.display(), c);
            }
        }
    }
    // The one index whose .log is absent: PROVENANCE lists it with entries=1081.
    assert_eq!(unchecked, 1081);
    assert_eq!((exact, total), (4052, 4052));
}

#[test]
fn every_real_time_index_agrees_with_its_log() {
    let Some(root) = crate::common::real_data() else {
        return;
    };
    let files = crate::common::files_with_suffix(&root.join("broker"), ".timeindex");
    assert!(!files.is_empty());
    let (mut total, mut exact, mut unchecked) = (0usize, 0usize, 0usize);
    let mut inside = 0usize;
    for f in &files {
        let bytes = read(f);
        let idx = TimeIndex::new(&bytes, base_of(f));
        assert_eq!(idx.check(), Ok(()), "{}", f.display());
        assert_eq!(idx.sanity_check(), Ok(()), "{}", f.display());
        assert!(idx.layout().is_trimmed(), "{}", f.display());
        if !log_of(f).exists() {
            unchecked += idx.layout().used;
            continue;
        }
        let log = LogBatches::from_log(&read(&log_of(f)));
        for c in check_time_index(&idx, &log) {
            total += 1;
            assert_eq!(c.out_of_order_after, None, "{}", f.display());
            match c.check {
                TimeCheck::Exact => exact += 1,
                // §7.2: older append paths indexed the record offset inside the batch; the
                // timestamp must still be that batch's max timestamp.
                TimeCheck::InsideBatch {
                    log_timestamp: Some(ts),
                    ..
                } if ts == c.entry.timestamp => inside += 1,
                other => panic!("{}: {:?} {:?}", f.display(), c.entry, other),
            }
        }
    }
    // The one time index whose .log is absent: PROVENANCE lists it with entries=1083.
    assert_eq!(unchecked, 1083);
    assert_eq!((exact + inside, total), (4095, 4095));
    assert!(
        exact > inside,
        "the modern rule (lastOffset) dominates: {exact} vs {inside}"
    );
}

#[test]
fn no_real_txnindex_but_reader_handles_absence() {
    let Some(root) = crate::common::real_data() else {
        return;
    };
    // broker/PROVENANCE.md: no aborted transactions, so no .txnindex was ever created.
    let files = crate::common::files_with_suffix(&root.join("broker"), ".txnindex");
    for f in &files {
        let bytes = read(f);
        let idx = TxnIndex::new(&bytes, base_of(f));
        assert_eq!(idx.check(), Ok(()));
        assert!(idx.sanity_check().is_ok());
    }
}

fn dump<R>(
    f: fn(
        &Path,
        &DumpOptions,
        &mut dyn std::io::Write,
        &mut dyn std::io::Write,
    ) -> std::io::Result<R>,
    path: &Path,
    format: DumpFormat,
) -> (String, String) {
    let opts = DumpOptions {
        format,
        ..Default::default()
    };
    let (mut out, mut err) = (Vec::new(), Vec::new());
    f(path, &opts, &mut out, &mut err).unwrap();
    (
        String::from_utf8(out).unwrap(),
        String::from_utf8(err).unwrap(),
    )
}

fn niloufar_offsets_dir(root: &Path) -> PathBuf {
    root.join("broker/Niloufar1171__LDI-POC/__consumer_offsets-6")
}

#[test]
fn dump_real_offset_index_text_and_json() {
    let Some(root) = crate::common::real_data() else {
        return;
    };
    let path = niloufar_offsets_dir(&root).join("00000000000000000000.index");
    let bytes = read(&path);
    // Expected lines straight from the bytes: (relative i32, position i32) per 8 bytes.
    let mut expected = format!("Dumping {}\n", path.display());
    for e in bytes.chunks_exact(8) {
        let rel = i32::from_be_bytes(e[..4].try_into().unwrap());
        let pos = i32::from_be_bytes(e[4..].try_into().unwrap());
        expected += &format!("offset: {rel} position: {pos}\n");
    }
    let (out, err) = dump(files::dump_index, &path, DumpFormat::Text);
    assert_eq!(out, expected);
    assert_eq!(out.lines().count(), 3); // PROVENANCE: entries=2
    assert_eq!(err, "");
    let (out, err) = dump(files::dump_index, &path, DumpFormat::Json);
    assert_eq!(err, "");
    let objs: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(objs.len(), 2);
    assert_eq!(objs[1]["offset"], 7);
    assert_eq!(objs[1]["position"], 9571);
    assert_eq!(objs[1]["check"]["kind"], "exact");
}

#[test]
fn dump_real_time_index() {
    let Some(root) = crate::common::real_data() else {
        return;
    };
    let path = niloufar_offsets_dir(&root).join("00000000000000000000.timeindex");
    let bytes = read(&path);
    let mut expected = format!("Dumping {}\n", path.display());
    for e in bytes.chunks_exact(12) {
        let ts = i64::from_be_bytes(e[..8].try_into().unwrap());
        let rel = i32::from_be_bytes(e[8..].try_into().unwrap());
        expected += &format!("timestamp: {ts} offset: {rel}\n");
    }
    let (out, err) = dump(files::dump_timeindex, &path, DumpFormat::Text);
    assert_eq!(out, expected);
    // PROVENANCE: first entry (1769791783399, 3), last (1769793578176, 12)
    assert!(out.contains("timestamp: 1769791783399 offset: 3\n"));
    assert!(out.ends_with("timestamp: 1769793578176 offset: 12\n"));
    assert_eq!(err, "");
}

/// A 61-byte v2 batch header without records: enough for the index checks.
fn v2_batch(base: i64, last_delta: i32, max_ts: i64) -> Vec<u8> {
    let mut b = vec![0u8; 61];
    b[..8].copy_from_slice(&base.to_be_bytes());
    b[8..12].copy_from_slice(&49i32.to_be_bytes());
    b[16] = 2;
    b[23..27].copy_from_slice(&last_delta.to_be_bytes());
    b[35..43].copy_from_slice(&max_ts.to_be_bytes());
    b
}

#[test]
fn dump_crafted_index_mismatches_zero_tail_and_empty() {
    let dir = tempfile::tempdir().unwrap();
    let base = 100i64;
    let mut log = v2_batch(100, 1, 1000); // pos 0: 100..101
    log.extend(v2_batch(102, 2, 2000)); // pos 61: 102..104
    log.extend(v2_batch(105, 0, 3000)); // pos 122: 105
    std::fs::write(dir.path().join(format!("{base:020}.log")), &log).unwrap();
    // entries: (104 @61) ok, (105 @61) follower/mismatch, (105 @122) ok, then a zero tail
    let mut idx = Vec::new();
    for (rel, pos) in [(4i32, 61i32), (5, 61), (6, 500)] {
        idx.extend_from_slice(&rel.to_be_bytes());
        idx.extend_from_slice(&pos.to_be_bytes());
    }
    idx.resize(idx.len() + 8 * 4, 0);
    let path = dir.path().join(format!("{base:020}.index"));
    std::fs::write(&path, &idx).unwrap();
    let (out, err) = dump(files::dump_index, &path, DumpFormat::Text);
    assert_eq!(
        out,
        format!(
            "Dumping {}\noffset: 104 position: 61\noffset: 105 position: 61\noffset: 106 position: 500\n",
            path.display()
        )
    );
    // The last entry first: `dumpIndex` prepends each mismatch to its list.
    assert_eq!(
        err,
        format!(
            "Mismatches in :{}\n  Index offset: 106, log offset: -1\n  Index offset: 105, log offset: 104\n",
            std::path::absolute(&path).unwrap().display()
        )
    );

    // time index: exact, timestamp mismatch, out of order, not found
    let mut ti = Vec::new();
    for (ts, rel) in [(2000i64, 4i32), (1500, 5), (9000, 9)] {
        ti.extend_from_slice(&ts.to_be_bytes());
        ti.extend_from_slice(&rel.to_be_bytes());
    }
    let tpath = dir.path().join(format!("{base:020}.timeindex"));
    std::fs::write(&tpath, &ti).unwrap();
    let (out, err) = dump(files::dump_timeindex, &tpath, DumpFormat::Text);
    assert_eq!(out.lines().count(), 4);
    let abs = std::path::absolute(&tpath).unwrap().display().to_string();
    // `dumpTimeIndex` compares with the largest *record* timestamp of the batch ending at
    // the offset: these header-only batches hold no record, so it is -1 for both entries
    // found (the header's 2000 would have matched the first).
    assert_eq!(
        err,
        format!(
            "Found timestamp mismatch in :{abs}\n  Index timestamp: 2000, log timestamp: -1\n  Index timestamp: 1500, log timestamp: -1\n\
             Found out of order timestamp in :{abs}\n  Index timestamp: 1500, Previously indexed timestamp: 2000\n\
             The following indexed offsets are not found in the log.\nIndexed offset: 109, found log offset: -1\n"
        )
    );

    // empty index
    let epath = dir.path().join("00000000000000000200.index");
    std::fs::write(&epath, b"").unwrap();
    let (out, err) = dump(files::dump_index, &epath, DumpFormat::Text);
    assert_eq!(
        out,
        format!("Dumping {p}\n{p} is empty.\n", p = epath.display())
    );
    assert_eq!(err, "");
}

#[test]
fn dump_crafted_txnindex() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("00000000000000000100.txnindex");
    let mut b = Vec::new();
    for (pid, first, last, lso) in [(7i64, 90i64, 120i64, 121i64), (8, 95, 130, 96)] {
        b.extend_from_slice(&0i16.to_be_bytes());
        for x in [pid, first, last, lso] {
            b.extend_from_slice(&x.to_be_bytes());
        }
    }
    b.extend_from_slice(&[0; 5]); // trailing fragment: ignored, as Kafka does
    std::fs::write(&path, &b).unwrap();
    let (out, err) = dump(files::dump_txnindex, &path, DumpFormat::Text);
    assert_eq!(
        out,
        format!(
            "Dumping {}\nversion: 0 producerId: 7 firstOffset: 90 lastOffset: 120 lastStableOffset: 121\n\
             version: 0 producerId: 8 firstOffset: 95 lastOffset: 130 lastStableOffset: 96\n",
            path.display()
        )
    );
    assert_eq!(err, "");
    // the high byte of the version is what Kafka checks
    b[34] = 1;
    std::fs::write(&path, &b).unwrap();
    let (out, err) = dump(files::dump_txnindex, &path, DumpFormat::Text);
    // `allAbortedTxns` reads every entry before the tool prints one: only `Dumping`.
    assert_eq!(out.lines().count(), 1);
    assert!(err.starts_with("Unexpected aborted transaction version 1 in transaction index "));
}

#[test]
fn dump_index_sanity_check_and_verify_only() {
    use klogscan::dump::dump_paths;
    let dir = tempfile::tempdir().unwrap();
    let base = 100i64;
    let mut log = v2_batch(100, 1, 1000); // pos 0: 100..101
    log.extend(v2_batch(102, 2, 2000)); // pos 61: 102..104
    std::fs::write(dir.path().join(format!("{base:020}.log")), &log).unwrap();
    let entries = |pairs: &[(i32, i32)]| {
        let mut v = Vec::new();
        for (a, b) in pairs {
            v.extend_from_slice(&a.to_be_bytes());
            v.extend_from_slice(&b.to_be_bytes());
        }
        v
    };
    let good = dir.path().join(format!("{base:020}.index"));
    std::fs::write(&good, entries(&[(1, 0), (4, 99)])).unwrap(); // 104 @99: a mismatch
    // A last entry below the base offset (relative -3), and a time index of 13 bytes.
    let below = dir.path().join("00000000000000000200.index");
    std::fs::write(&below, entries(&[(1, 0), (-3, 61)])).unwrap();
    let odd = dir.path().join("00000000000000000200.timeindex");
    std::fs::write(&odd, [7u8; 13]).unwrap();
    let run = |opts: &DumpOptions, paths: &[&Path]| {
        let paths: Vec<PathBuf> = paths.iter().map(|p| p.to_path_buf()).collect();
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let status = dump_paths(&paths, opts, &mut out, &mut err).unwrap();
        (
            String::from_utf8(out).unwrap(),
            String::from_utf8(err).unwrap(),
            status,
        )
    };
    let abs = |p: &Path| std::path::absolute(p).unwrap().display().to_string();

    let sanity = DumpOptions {
        index_sanity_check: true,
        ..Default::default()
    };
    let (out, err, status) = run(&sanity, &[&good, &below, &odd]);
    assert_eq!(
        out,
        format!(
            "Dumping {g}\n{g} passed sanity check.\nDumping {b}\nDumping {o}\n",
            g = good.display(),
            b = below.display(),
            o = odd.display()
        )
    );
    assert_eq!(
        err,
        format!(
            "Corrupt index found, index file {} has non-zero size but the last offset is 197 which is less than the base offset 200\n\
             Time index file {} is corrupt, found 13 bytes which is neither positive nor a multiple of 12\n",
            abs(&below),
            abs(&odd)
        )
    );
    assert_eq!((status.files, status.files_with_problems), (3, 2));

    // --verify-index-only: no entry lines, the mismatch block still printed.
    let verify = DumpOptions {
        verify_index_only: true,
        ..Default::default()
    };
    let (out, err, status) = run(&verify, &[&good]);
    assert_eq!(out, format!("Dumping {}\n", good.display()));
    assert_eq!(
        err,
        format!(
            "Mismatches in :{}\n  Index offset: 104, log offset: -1\n",
            abs(&good)
        )
    );
    assert_eq!(status.files_with_problems, 1);
}

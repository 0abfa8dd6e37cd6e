//! Issue 15's table, the rest: terminal injection through names and record data,
//! offsets near i64::MAX, `--threads 10000`, legacy wrappers whose inner offsets do not
//! increase, and file names that are not UTF-8.
#![cfg(all(feature = "testkit", unix))]

use crate::common::run;

use klogscan::testkit::{
    Batch, BatchSpec, Codec, HeaderOverrides, LegacySpec, PartitionBuilder, Producer, Rec,
    RecordSpec,
};
use run::klogscan;
use std::path::Path;

/// Bytes that must never reach a terminal raw: ESC, BEL, CR, DEL and the C1 CSI (U+009B).
fn assert_no_controls(what: &str, s: &str) {
    for (i, c) in s.char_indices() {
        assert!(
            !(klogscan::escape::is_control(c) && c != '\n'),
            "{what}: raw {c:?} at {i}: {}",
            &s[i.saturating_sub(80)..(i + 40).min(s.len())]
        );
    }
    assert!(
        !s.lines().any(|l| l.starts_with("| offset: 999")),
        "{what}: a forged record line"
    );
}

const EVIL_KEY: &[u8] = b"k\x1b]52;c;QUFBQQ==\x07";
const EVIL_VALUE: &[u8] = b"v\r\n| offset: 999 forged\x1b[2J";
const EVIL_HEADER: &str = "h\x1b[31m\u{9b}0m\x7f";

fn evil_partition(root: &Path, topic: &str) -> std::path::PathBuf {
    let mut b = PartitionBuilder::new(topic, 0);
    b.append(
        Batch::new(Producer::idempotent(5, 0))
            .record(Rec::kv(EVIL_KEY, EVIL_VALUE).header(EVIL_HEADER, Some(b"x"))),
    );
    b.append(Batch::new(Producer::PLAIN).values(["ok"]));
    b.write(root).unwrap().segments[0].1.clone()
}

#[test]
fn control_characters_from_names_and_data_never_reach_text_output() {
    let t = tempfile::tempdir().unwrap();
    // A topic name (parsed) and a directory name with a newline (not a topic name: an
    // unnamed partition dir, shown by its path).
    let log = evil_partition(t.path(), "evil\x1b]0;owned\x07\u{9b}31m");
    let forged = t.path().join("fake\nERROR line-0");
    std::fs::create_dir_all(&forged).unwrap();
    std::fs::copy(&log, forged.join("00000000000000000000.log")).unwrap();
    // A CRC flip in the forged dir's copy makes a finding whose message names the file.
    let mut bytes = std::fs::read(forged.join("00000000000000000000.log")).unwrap();
    bytes[70] ^= 1;
    std::fs::write(forged.join("00000000000000000000.log"), &bytes).unwrap();
    let root = t.path().as_os_str();
    for cmd in ["scan", "producers", "txns", "verify"] {
        let r = klogscan(&[cmd.as_ref(), root], None, 60);
        r.code();
        assert_no_controls(&format!("{cmd} stdout"), &r.out);
        assert_no_controls(&format!("{cmd} stderr"), &r.err);
        assert!(
            r.out.contains("\\x1b"),
            "{cmd}: escaped form shown: {}",
            r.out
        );
    }
    let r = klogscan(
        &[
            "dump".as_ref(),
            "--print-data-log".as_ref(),
            log.as_os_str(),
        ],
        None,
        60,
    );
    assert_eq!(r.code(), 0, "{r:?}");
    assert_no_controls("dump", &r.out);
    assert!(
        r.out.contains(
            "key: k\\x1b]52;c;QUFBQQ==\\x07 payload: v\\r\\n| offset: 999 forged\\x1b[2J"
        ),
        "{}",
        r.out
    );
    assert!(
        r.out.contains("headerKeys: [h\\x1b[31m\\u{9b}0m\\x7f]"),
        "{}",
        r.out
    );
    // JSON stays exact (JSON escapes): the raw topic name round-trips.
    let r = klogscan(
        &["scan".as_ref(), "--format".as_ref(), "json".as_ref(), root],
        None,
        60,
    );
    let doc: serde_json::Value = serde_json::from_str(&r.out).unwrap();
    assert!(
        doc["partitions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["topic"] == "evil\x1b]0;owned\x07\u{9b}31m")
    );
    assert_no_controls("json", &r.out);
}

#[test]
fn plain_names_and_data_print_unchanged() {
    let t = tempfile::tempdir().unwrap();
    let mut b = PartitionBuilder::new("plain", 0);
    b.append(Batch::new(Producer::PLAIN).record(Rec::kv("kéy", "välue ✓").header("hdr", None)));
    let log = b.write(t.path()).unwrap().segments[0].1.clone();
    let r = klogscan(
        &[
            "dump".as_ref(),
            "--print-data-log".as_ref(),
            log.as_os_str(),
        ],
        None,
        60,
    );
    assert!(
        r.out
            .contains("headerKeys: [hdr] key: kéy payload: välue ✓"),
        "{}",
        r.out
    );
    let r = klogscan(&["scan".as_ref(), t.path().as_os_str()], None, 60);
    assert!(r.out.contains("plain-0"), "{}", r.out);
    assert!(!r.out.contains('\\'), "{}", r.out);
}

fn write_log(root: &Path, dir: &str, data: &[u8]) -> std::path::PathBuf {
    let d = root.join(dir);
    std::fs::create_dir_all(&d).unwrap();
    let p = d.join("00000000000000000000.log");
    std::fs::write(&p, data).unwrap();
    p
}

fn scan_json(path: &Path, deep: bool) -> (i32, serde_json::Value) {
    let mut args = vec!["scan".as_ref(), "--format".as_ref(), "json".as_ref()];
    if deep {
        args.push("--deep".as_ref());
    }
    args.push(path.as_os_str());
    let r = klogscan(&args, None, 60);
    (r.code(), serde_json::from_str(&r.out).unwrap())
}

fn kinds(doc: &serde_json::Value) -> Vec<(String, String)> {
    doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["kind"].as_str().unwrap().to_string(),
                f["message"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn offsets_near_i64_max_are_checked_never_wrapped() {
    let batch = |base: i64, delta: i32| {
        BatchSpec {
            base_offset: base,
            base_timestamp: 1_700_000_000_000,
            records: vec![RecordSpec {
                value: Some(b"v".to_vec()),
                ..Default::default()
            }],
            overrides: HeaderOverrides {
                last_offset_delta: Some(delta),
                ..Default::default()
            },
            ..Default::default()
        }
        .encode()
    };
    let t = tempfile::tempdir().unwrap();
    // Overflowing: baseOffset + lastOffsetDelta > i64::MAX.
    let bad = write_log(t.path(), "big-0", &batch(i64::MAX - 5, 2_147_000_000));
    let (_, doc) = scan_json(bad.parent().unwrap(), false);
    let leo = doc["partitions"][0]["log_end_offset"].as_i64().unwrap();
    assert!(leo >= 0, "LEO {leo} wrapped");
    assert!(
        kinds(&doc)
            .iter()
            .any(|(k, m)| k == "invalid_batch" && m.contains("overflows a 64-bit offset")),
        "{:?}",
        kinds(&doc)
    );
    // Just below: no overflow finding, the exact LEO.
    let ok = write_log(t.path(), "near-0", &batch(i64::MAX - 300, 200));
    let (_, doc) = scan_json(ok.parent().unwrap(), false);
    assert_eq!(doc["partitions"][0]["log_end_offset"], i64::MAX - 99);
    assert!(!kinds(&doc).iter().any(|(_, m)| m.contains("overflows")));
}

#[test]
fn threads_are_capped_with_a_warning() {
    let t = tempfile::tempdir().unwrap();
    let log = evil_partition(t.path(), "t");
    let dir = log.parent().unwrap();
    let one = klogscan(
        &[
            "scan".as_ref(),
            "--format".as_ref(),
            "json".as_ref(),
            "--threads".as_ref(),
            "1".as_ref(),
            dir.as_os_str(),
        ],
        None,
        60,
    );
    let many = klogscan(
        &[
            "scan".as_ref(),
            "--format".as_ref(),
            "json".as_ref(),
            "--threads".as_ref(),
            "100000".as_ref(),
            dir.as_os_str(),
        ],
        None,
        120,
    );
    assert_eq!(many.code(), one.code());
    assert_eq!(many.out, one.out);
    assert!(
        many.err.contains(&format!(
            "--threads 100000 capped at {}",
            klogscan::partition::scan::MAX_THREADS
        )),
        "{}",
        many.err
    );
    assert!(!one.err.contains("capped"));
    let r = klogscan(
        &[
            "dump".as_ref(),
            "--threads".as_ref(),
            "5000".as_ref(),
            log.as_os_str(),
        ],
        None,
        60,
    );
    assert_eq!(r.code(), 0);
    assert!(r.err.contains("capped at"), "{}", r.err);
}

/// A magic-1 gzip wrapper whose inner messages carry the relative offsets `inner`.
fn legacy_wrapper(inner: &[i64]) -> Vec<u8> {
    let mut set = Vec::new();
    for &o in inner {
        set.extend(
            LegacySpec {
                offset: o,
                magic: 1,
                attributes: 0,
                timestamp: 1_700_000_000_000,
                key: None,
                value: Some(b"m".to_vec()),
                crc: None,
            }
            .encode(),
        );
    }
    LegacySpec {
        offset: inner.len() as i64 - 1,
        magic: 1,
        attributes: Codec::Gzip.id(),
        timestamp: 1_700_000_000_000,
        key: None,
        value: Some(klogscan::testkit::encode::compress(Codec::Gzip, &set)),
        crc: None,
    }
    .encode()
}

#[test]
fn legacy_wrappers_with_repeating_inner_offsets_are_invalid_batches() {
    let t = tempfile::tempdir().unwrap();
    let bad = write_log(t.path(), "repeat-0", &legacy_wrapper(&[0, 0, 0]));
    let (code, doc) = scan_json(bad.parent().unwrap(), true);
    assert_eq!(code, 1);
    assert!(
        kinds(&doc)
            .iter()
            .any(|(k, m)| k == "invalid_batch" && m.contains("inner offset repeats")),
        "{:?}",
        kinds(&doc)
    );
    let down = write_log(t.path(), "down-0", &legacy_wrapper(&[0, 2, 1]));
    let (_, doc) = scan_json(down.parent().unwrap(), true);
    assert!(
        kinds(&doc)
            .iter()
            .any(|(_, m)| m.contains("inner offset is below"))
    );
    let good = write_log(t.path(), "good-0", &legacy_wrapper(&[0, 1, 2]));
    let (code, doc) = scan_json(good.parent().unwrap(), true);
    assert_eq!(code, 0, "{:?}", kinds(&doc));
    assert_eq!(doc["summary"]["records"], 3);
}

#[test]
fn a_log_name_that_is_not_utf8_is_a_finding() {
    use std::os::unix::ffi::OsStrExt;
    let t = tempfile::tempdir().unwrap();
    let log = evil_partition(t.path(), "t");
    let dir = log.parent().unwrap();
    let (code, _) = scan_json(dir, false);
    assert_eq!(code, 0);
    let odd = dir.join(std::ffi::OsStr::from_bytes(b"0000000000000000\xff100.log"));
    std::fs::write(&odd, b"").unwrap();
    let r = klogscan(
        &[
            "scan".as_ref(),
            "--format".as_ref(),
            "json".as_ref(),
            dir.as_os_str(),
        ],
        None,
        60,
    );
    assert_eq!(r.code(), 2, "{r:?}");
    let doc: serde_json::Value = serde_json::from_str(&r.out).unwrap();
    assert!(
        kinds(&doc)
            .iter()
            .any(|(k, m)| k == "unreadable_file" && m.contains("not valid UTF-8")),
        "{:?}",
        kinds(&doc)
    );
    assert!(r.err.contains("not valid UTF-8"), "{}", r.err);
}

/// `t-0` with `n` zstd batches whose single record decompresses to 1 MiB.
fn zstd_partition(root: &Path, n: i64) -> std::path::PathBuf {
    let data: Vec<u8> = (0..n)
        .flat_map(|i| {
            BatchSpec {
                base_offset: i,
                codec: Codec::Zstd,
                base_timestamp: 1_700_000_000_000,
                records: vec![RecordSpec {
                    value: Some(vec![b'z'; 1 << 20]),
                    ..Default::default()
                }],
                ..Default::default()
            }
            .encode()
        })
        .collect();
    write_log(root, "zz-0", &data)
}

#[test]
fn the_per_segment_decompression_budget_is_a_finding_when_spent() {
    let t = tempfile::tempdir().unwrap();
    let log = zstd_partition(t.path(), 12);
    let dir = log.parent().unwrap();
    let run = |budget: &str| {
        let r = klogscan(
            &[
                "scan".as_ref(),
                "--deep".as_ref(),
                "--format".as_ref(),
                "json".as_ref(),
                "--max-decompressed-per-file".as_ref(),
                budget.as_ref(),
                dir.as_os_str(),
            ],
            None,
            60,
        );
        (
            r.code(),
            serde_json::from_str::<serde_json::Value>(&r.out).unwrap(),
        )
    };
    // 4 MiB: batches 0..=3 are decompressed, 8 are not.
    let (code, doc) = run("4194304");
    assert_eq!(code, 0, "a warning");
    let f = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["kind"] == "decompression_budget_exceeded")
        .unwrap_or_else(|| panic!("{doc}"));
    assert_eq!(f["offset"], 4);
    assert_eq!(f["evidence"]["skipped_batches"], 8);
    assert_eq!(f["severity"], "warning");
    // The default budget: everything decompressed, no finding.
    let (code, doc) =
        run(&klogscan::partition::scan::DEFAULT_MAX_DECOMPRESSED_PER_FILE.to_string());
    assert_eq!(code, 0);
    assert!(doc["findings"].as_array().unwrap().is_empty(), "{doc}");
}

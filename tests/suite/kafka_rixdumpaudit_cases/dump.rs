//! `dump` of a `.txnindex` whose entries' version the releases read differently.
//!
//! `DumpLogSegments.dumpTxnIndex` prints `TransactionIndex.allAbortedTxns`, which reads every
//! entry through the index's iterator before the first line. Before 4.4 the iterator took an
//! entry's version from its first byte (the hand-written `AbortedTxn.version()`) and threw
//! `KafkaException` above 0, and the tool printed that byte; since 4.4 (KAFKA-19562, the
//! generated `AbortedTxn`) it reads the whole int16 and throws for anything but 0, and the
//! tool prints `AbortedTxn.HIGHEST_SUPPORTED_VERSION` (0). `dump` takes no broker version,
//! so where the readings differ it says what each gives.

use crate::common::run::klogscan;
use klogscan::testkit::files::{AbortedTxn, encode_txn_index};
use std::path::{Path, PathBuf};

/// `00000000000000000000.txnindex` in `dir` holding the two aborted transactions of
/// `DumpLogSegmentsTest.testDumpTxnIndex`, the version bytes of the first set to `version`.
fn index(dir: &Path, version: [u8; 2]) -> PathBuf {
    let entry = |pid, first, last| AbortedTxn {
        producer_id: pid,
        first_offset: first,
        last_offset: last,
        last_stable_offset: last + 1,
    };
    let mut b = encode_txn_index(&[entry(1, 0, 10), entry(2, 15, 25)]);
    b[..2].copy_from_slice(&version);
    let p = dir.join("00000000000000000000.txnindex");
    std::fs::write(&p, b).unwrap();
    p
}

/// `dump` of `p` (text, or `--format json`): exit code, stdout, stderr.
fn dump(p: &Path, json: bool) -> (Option<i32>, String, String) {
    let mut args: Vec<&std::ffi::OsStr> = vec![std::ffi::OsStr::new("dump"), p.as_os_str()];
    if json {
        args.extend([
            std::ffi::OsStr::new("--format"),
            std::ffi::OsStr::new("json"),
        ]);
    }
    let r = klogscan(&args, None, 60);
    (r.status.code(), r.out, r.err)
}

const LINES: [&str; 2] = [
    "producerId: 1 firstOffset: 0 lastOffset: 10 lastStableOffset: 11",
    "producerId: 2 firstOffset: 15 lastOffset: 25 lastStableOffset: 26",
];

/// `DumpLogSegmentsTest.testDumpTxnIndex` (every release): two entries of version 0 print as
/// `version: 0 producerId: 1 firstOffset: 0 lastOffset: 10 lastStableOffset: 11` and the
/// same for producer 2. klogscan prints the same two lines, nothing on stderr (text and
/// JSON), exit 0: both readings agree, nothing more is said.
#[test]
fn a_version_0_index_dumps_without_a_word_on_the_releases() {
    let dir = tempfile::tempdir().unwrap();
    let p = index(dir.path(), [0, 0]);
    let (code, out, err) = dump(&p, false);
    assert_eq!(code, Some(0), "{out}{err}");
    assert_eq!(
        out,
        format!(
            "Dumping {}\nversion: 0 {}\nversion: 0 {}\n",
            p.display(),
            LINES[0],
            LINES[1]
        )
    );
    assert_eq!(err, "");
    let (code, out, err) = dump(&p, true);
    assert_eq!((code, err.as_str()), (Some(0), ""));
    assert_eq!(out.lines().count(), 2, "{out}");
}

/// `TransactionIndexTest.testBinaryCompatibilityWithHandWrittenClass` (KAFKA-19562, 4.4)
/// pins that version 0 is `00 00`; an entry whose version int16 is `00 01` (1) or `ff 00`
/// (-256) reads as version 0 and -1 before 4.4 (its first byte: loaded, printed), and is
/// refused since (`Unexpected aborted transaction version 1 … supported version range is 0
/// to 0`, the tool dies before printing an entry).
///
/// klogscan prints the entries as releases before 4.4 do (`version: 0`, `version: -1`),
/// then on stderr what 4.4 says, with the entry's first byte, and exits 0 (the dump is
/// sound for the releases before 4.4); `--format json`: a `note` object on stderr. It
/// printed only the earlier reading. Near misses: the plain v0 index of the case above (no
/// note); `01 00` (first byte 1), refused by both: no entry, the earlier message then
/// 4.4's (version 256), exit 1.
#[test]
fn a_version_only_4_4_refuses_is_dumped_with_what_4_4_says() {
    let dir = tempfile::tempdir().unwrap();
    for (bytes, first, whole) in [([0, 1], 0, 1), ([0xff, 0], -1, -256)] {
        let p = index(dir.path(), bytes);
        let (code, out, err) = dump(&p, false);
        assert_eq!(code, Some(0), "{out}{err}");
        assert_eq!(
            out,
            format!(
                "Dumping {}\nversion: {first} {}\nversion: 0 {}\n",
                p.display(),
                LINES[0],
                LINES[1]
            )
        );
        let want = format!(
            "releases before 4.4 read each entry's version from its first byte (entry 0: {first}) and print the entries above; Kafka 4.4 and later (KAFKA-19562) read the whole int16 and refuse the index: Unexpected aborted transaction version {whole} in transaction index {}, supported version range is 0 to 0\n",
            p.display()
        );
        assert_eq!(err, want);
        let (code, out, err) = dump(&p, true);
        assert_eq!(code, Some(0), "{out}{err}");
        assert_eq!(out.lines().count(), 2, "{out}");
        let note: serde_json::Value = serde_json::from_str(err.trim()).unwrap();
        assert_eq!(note["type"], "note");
        assert_eq!(note["note"].as_str().unwrap(), want.trim_end());
    }

    // near miss: a first byte above 0, refused by every release
    let p = index(dir.path(), [1, 0]);
    let (code, out, err) = dump(&p, false);
    assert_eq!(code, Some(1), "{out}{err}");
    assert_eq!(out, format!("Dumping {}\n", p.display()));
    let abs = p.display();
    assert_eq!(
        err,
        format!(
            "Unexpected aborted transaction version 1 in transaction index {abs}, current version is 0\n\
             Kafka 4.4 and later (KAFKA-19562) read the version as a whole int16: Unexpected aborted transaction version 256 in transaction index {abs}, supported version range is 0 to 0\n"
        )
    );
}

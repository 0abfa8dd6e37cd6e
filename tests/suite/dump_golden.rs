//! Golden tests of `klogscan dump` against real kafka-dump-log output.
//!
//! Every segment under `real-data/rebuilt/` is dumped with the options its real dump used
//! and compared with the batch and record lines kafka-dump-log printed
//! (`real-data/dumps/`, pairing rules in `real-data/README.md`):
//! * 3.x+ shape (ableasdale, Kafka/Confluent 7.x): header, batch and record lines IDENTICAL;
//! * 3.0/3.1 shape (tombentley klog tests: `Starting offset:`, no `deleteHorizonMs`):
//!   record lines identical, batch lines identical once our `deleteHorizonMs:
//!   OptionalLong.empty` field is removed, header compared by value.
//!
//! Over every `.log` and KRaft `.checkpoint` under `real-data/broker/` we assert properties
//! instead (every batch valid, one batch line per framed entry, KRaft control records
//! decoded).

use klogscan::dump::{DumpFormat, DumpOptions, dump_log, dump_paths};
use std::path::{Path, PathBuf};

fn dump_text(
    path: &Path,
    opts: &DumpOptions,
) -> (Vec<String>, String, klogscan::dump::LogDumpSummary) {
    let data = std::fs::read(path).unwrap();
    let mut out = Vec::new();
    let mut err = Vec::new();
    let s = dump_log(path, &data, opts, &mut out, &mut err).unwrap();
    let out = String::from_utf8(out).unwrap();
    (
        out.lines().map(str::to_string).collect(),
        String::from_utf8(err).unwrap(),
        s,
    )
}

/// Lines of block `n` of an extracted README dump file.
fn block(text: &str, n: u32) -> Vec<String> {
    let marker = format!("# ---- block {n} ----");
    let start = text.find(&marker).unwrap() + marker.len();
    let rest = &text[start..];
    let end = rest.find("# ---- block ").unwrap_or(rest.len());
    rest[..end].lines().map(str::to_string).collect()
}

fn is_dump_line(l: &str) -> bool {
    l.starts_with("baseOffset: ")
        || l.starts_with("| ")
        || l.starts_with("Log starting offset: ")
        || l.starts_with("Starting offset: ")
        || l.starts_with("Found ")
}

fn dump_lines(lines: &[String]) -> Vec<String> {
    lines.iter().filter(|l| is_dump_line(l)).cloned().collect()
}

fn deep_print() -> DumpOptions {
    DumpOptions {
        deep_iteration: true,
        print_data_log: true,
        ..Default::default()
    }
}

fn txn_decoder() -> DumpOptions {
    DumpOptions {
        transaction_log_decoder: true,
        ..Default::default()
    }
}

#[test]
fn ableasdale_dumps_identical() {
    let Some(rd) = crate::common::real_data() else {
        return;
    };
    let readme =
        std::fs::read_to_string(rd.join("dumps/ableasdale__kafka-transactions/README.dump.txt"))
            .unwrap();
    let rebuilt = rd.join("rebuilt/ableasdale__kafka-transactions");
    // Every rebuilt directory must be covered by this table.
    let cases: &[(&str, u32, DumpOptions)] = &[
        ("dump01_transaction-topic-0", 1, deep_print()),
        ("dump02_transaction2-topic-0", 2, deep_print()),
        ("dump03_transaction4-topic-0", 3, deep_print()),
        ("dump08_transaction-topic-0", 8, deep_print()),
        ("dump10_transaction-topic-0", 10, deep_print()),
        ("dump11_transaction-topic-0", 11, deep_print()),
        ("readme-block09___transaction_state-0", 9, txn_decoder()),
        ("readme-block12___transaction_state-0", 12, txn_decoder()),
    ];
    let mut dirs: Vec<String> = std::fs::read_dir(&rebuilt)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    dirs.sort();
    let mut listed: Vec<String> = cases.iter().map(|c| c.0.to_string()).collect();
    listed.sort();
    assert_eq!(dirs, listed, "a rebuilt segment has no golden case");

    for (dir, n, opts) in cases {
        let seg = rebuilt.join(dir).join("00000000000000000000.log");
        let (ours, err, summary) = dump_text(&seg, opts);
        assert!(err.is_empty(), "{dir}: unexpected stderr {err}");
        assert!(!summary.has_problems(), "{dir}: {summary:?}");
        assert_eq!(ours[0], format!("Dumping {}", seg.display()));
        let theirs = dump_lines(&block(&readme, *n));
        let ours = dump_lines(&ours);
        assert!(theirs.len() >= 3, "{dir}: block {n} has too few lines");
        assert_eq!(ours, theirs, "{dir} vs README block {n}");
    }
}

/// Remove the 3.2+ field so a 3.0/3.1 batch line can be compared exactly.
fn strip_delete_horizon(l: &str) -> String {
    l.replace(" deleteHorizonMs: OptionalLong.empty", "")
}

fn compare_pre_3_2(seg: &Path, dump: &Path, opts: &DumpOptions) {
    let (ours, err, summary) = dump_text(seg, opts);
    assert!(err.is_empty(), "{}: unexpected stderr {err}", seg.display());
    assert!(!summary.has_problems());
    let text = std::fs::read_to_string(dump).unwrap();
    let theirs: Vec<String> = dump_lines(&text.lines().map(str::to_string).collect::<Vec<_>>());
    let ours = dump_lines(&ours);
    assert_eq!(ours.len(), theirs.len(), "{}", dump.display());
    for (o, t) in ours.iter().zip(&theirs) {
        if let Some(rest) = t.strip_prefix("Starting offset: ") {
            // header by value
            assert_eq!(o, &format!("Log starting offset: {rest}"));
        } else if t.starts_with("baseOffset: ") {
            assert!(o.contains(" deleteHorizonMs: OptionalLong.empty "), "{o}");
            assert_eq!(strip_delete_horizon(o), *t);
        } else {
            assert_eq!(o, t);
        }
    }
}

#[test]
fn tombentley_dumps_match() {
    let Some(rd) = crate::common::real_data() else {
        return;
    };
    let dumps = rd.join("dumps/tombentley__klog");
    let foo = rd.join("rebuilt/tombentley__klog/foo-0/00000000000000000000.log");
    compare_pre_3_2(
        &foo,
        &dumps.join("SegmentDumpReaderTest__testWithDeepIterationAndPayload.txt"),
        &deep_print(),
    );
    // The same segment was dumped with two other option sets.
    compare_pre_3_2(
        &foo,
        &dumps.join("SegmentDumpReaderTest__testWithDeepIteration.txt"),
        &DumpOptions {
            deep_iteration: true,
            ..Default::default()
        },
    );
    compare_pre_3_2(
        &foo,
        &dumps.join("SegmentDumpReaderTest__testWithoutDeepIteration.txt"),
        &DumpOptions::default(),
    );
    compare_pre_3_2(
        &rd.join("rebuilt/tombentley__klog/__transaction_state-4/00000000000000000000.log"),
        &dumps.join("SegmentDumpReaderTest__testWithTransactionLogDecoder.txt"),
        &txn_decoder(),
    );
}

#[test]
fn skip_record_metadata_and_max_bytes() {
    let Some(rd) = crate::common::real_data() else {
        return;
    };
    let seg = rd.join("rebuilt/ableasdale__kafka-transactions/dump01_transaction-topic-0/00000000000000000000.log");
    let (full, _, _) = dump_text(&seg, &deep_print());
    let (skip, _, _) = dump_text(
        &seg,
        &DumpOptions {
            skip_record_metadata: true,
            ..deep_print()
        },
    );
    // Data record lines keep only `| key: … payload: …`; the control record line is empty.
    for (f, s) in full.iter().zip(&skip) {
        if f.starts_with("| ") && f.contains(" key: ") {
            let kp = &f[f.find(" key: ").unwrap() + 1..];
            assert_eq!(s, &format!("| {kp}"));
        } else if f.starts_with("| ") {
            assert!(f.contains("endTxnMarker: COMMIT"));
            assert_eq!(s, "");
        } else {
            assert_eq!(f, s);
        }
    }
    // Cut inside the second batch: one batch, no "Found … invalid bytes" with --max-bytes,
    // but the same cut without the option reports the partial entry.
    let data = std::fs::read(&seg).unwrap();
    let cut = &data[..200];
    let opts = DumpOptions {
        max_bytes: Some(200),
        ..Default::default()
    };
    let mut out = Vec::new();
    let s = dump_log(&seg, cut, &opts, &mut out, &mut Vec::new()).unwrap();
    let out = String::from_utf8(out).unwrap();
    assert_eq!(s.batches, 1);
    assert_eq!(s.invalid_bytes, 54);
    assert!(!out.contains("invalid bytes"));
    let mut out = Vec::new();
    dump_log(
        &seg,
        cut,
        &DumpOptions::default(),
        &mut out,
        &mut Vec::new(),
    )
    .unwrap();
    let out = String::from_utf8(out).unwrap();
    assert!(
        out.ends_with("Found 54 invalid bytes at the end of 00000000000000000000.log\n"),
        "{out}"
    );
}

#[test]
fn corrupt_batches_do_not_stop_the_dump() {
    let Some(rd) = crate::common::real_data() else {
        return;
    };
    let seg = rd.join("rebuilt/ableasdale__kafka-transactions/dump01_transaction-topic-0/00000000000000000000.log");
    let mut data = std::fs::read(&seg).unwrap();
    // Flip a byte inside the first record's key of batch 1: CRC fails, the record
    // section becomes unparseable; the COMMIT batch after it must still be printed.
    data[61 + 1] = 0x7f; // first record's attributes → length stays, body changes
    data[61 + 4] = 0x7f; // keyLength varint → huge key
    let mut out = Vec::new();
    let mut err = Vec::new();
    let s = dump_log(&seg, &data, &deep_print(), &mut out, &mut err).unwrap();
    let out = String::from_utf8(out).unwrap();
    let err = String::from_utf8(err).unwrap();
    assert_eq!(s.batches, 2);
    assert_eq!(s.invalid_batches, 1);
    assert_eq!(s.errors, 1, "{err}");
    assert!(err.starts_with("Error in batch at position 0 of "), "{err}");
    assert!(out.contains("position: 0 CreateTime: 1681906496697 size: 146 magic: 2 compresscodec: none crc: 2067214322 isvalid: false"));
    assert!(out.contains("endTxnMarker: COMMIT coordinatorEpoch: 0"));
    assert!(s.has_problems());
}

#[test]
fn non_consecutive_offsets_on_stderr() {
    let Some(rd) = crate::common::real_data() else {
        return;
    };
    // Two segments of different partitions dumped together: the second one's first record
    // follows the first one's last only within its own file, so no pair crosses files.
    let dir = rd.join("rebuilt/ableasdale__kafka-transactions");
    let a = dir.join("dump01_transaction-topic-0/00000000000000000000.log");
    let mut out = Vec::new();
    let mut err = Vec::new();
    let st = dump_paths(
        &[a.clone(), PathBuf::from("/nonexistent/x.foo")],
        &deep_print(),
        &mut out,
        &mut err,
    )
    .unwrap();
    let err = String::from_utf8(err).unwrap();
    assert_eq!(st.files, 1);
    assert_eq!(st.unknown_files, 1);
    assert_eq!(err, "Ignoring unknown file /nonexistent/x.foo\n");
    // Splice batch 2 of dump01 (offset 5) after itself: offsets 5 then 5 again.
    let data = std::fs::read(&a).unwrap();
    let mut twice = data.clone();
    twice.extend_from_slice(&data[146..]);
    let mut err = Vec::new();
    dump_log(
        &a,
        &twice,
        &DumpOptions {
            deep_iteration: true,
            ..Default::default()
        },
        &mut Vec::new(),
        &mut err,
    )
    .unwrap();
    let err = String::from_utf8(err).unwrap();
    let abs = std::path::absolute(&a).unwrap();
    assert_eq!(
        err,
        format!(
            "Non-consecutive offsets in {}\n  5 is followed by 5\n",
            abs.display()
        )
    );
}

/// A framing walk written independently of the library: number of whole entries.
fn count_entries(data: &[u8]) -> u64 {
    let mut pos = 0usize;
    let mut n = 0;
    while pos + 17 <= data.len() {
        let size = i32::from_be_bytes(data[pos + 8..pos + 12].try_into().unwrap());
        if size < 14 || pos + 12 + size as usize > data.len() {
            break;
        }
        n += 1;
        pos += 12 + size as usize;
    }
    n
}

#[test]
fn broker_logs_batch_lines() {
    let Some(rd) = crate::common::real_data() else {
        return;
    };
    let logs = crate::common::files_with_suffix(&rd.join("broker"), ".log");
    assert!(logs.len() > 20);
    let mut total = 0;
    for log in &logs {
        let (lines, err, s) = dump_text(log, &DumpOptions::default());
        let data = std::fs::read(log).unwrap();
        let batch_lines: Vec<&String> = lines
            .iter()
            .filter(|l| l.starts_with("baseOffset: ") || l.starts_with("offset: "))
            .collect();
        assert_eq!(
            batch_lines.len() as u64,
            count_entries(&data),
            "{}",
            log.display()
        );
        assert_eq!(s.batches, batch_lines.len() as u64);
        for l in &batch_lines {
            assert!(l.ends_with(" isvalid: true"), "{}: {l}", log.display());
        }
        assert!(err.is_empty(), "{}: {err}", log.display());
        assert_eq!(lines[1].split_once(": ").unwrap().0, "Log starting offset");
        total += batch_lines.len();
    }
    assert!(total > 1000, "{total}");
}

#[test]
fn kraft_checkpoints_decode_control_records() {
    let Some(rd) = crate::common::real_data() else {
        return;
    };
    let cps: Vec<PathBuf> = crate::common::files_with_suffix(&rd.join("broker"), ".checkpoint")
        .into_iter()
        .filter(|p| {
            let n = p.file_name().unwrap().to_string_lossy();
            n == "bootstrap.checkpoint" || n.contains('-') && n.starts_with("000")
        })
        .collect();
    assert!(cps.len() >= 10, "{cps:?}");
    for cp in &cps {
        let (lines, err, s) = dump_text(
            cp,
            &DumpOptions {
                deep_iteration: true,
                ..Default::default()
            },
        );
        let name = cp.file_name().unwrap().to_string_lossy();
        assert!(err.is_empty(), "{}: {err}", cp.display());
        assert_eq!(s.errors, 0);
        assert_eq!(s.invalid_batches, 0);
        if name == "bootstrap.checkpoint" {
            assert_eq!(lines[1], "KRaft bootstrap snapshot");
        } else {
            let (o, e) = name
                .trim_end_matches(".checkpoint")
                .split_once('-')
                .unwrap();
            assert_eq!(
                lines[1],
                format!(
                    "Snapshot end offset: {}, epoch: {}",
                    o.parse::<i64>().unwrap(),
                    e.parse::<i32>().unwrap()
                )
            );
        }
        // A snapshot starts with a SnapshotHeader record and ends with a SnapshotFooter.
        let recs: Vec<&String> = lines.iter().filter(|l| l.starts_with("| ")).collect();
        assert!(
            recs[0].contains(" SnapshotHeader {\"version\":0,\"lastContainedLogTimestamp\":"),
            "{}",
            recs[0]
        );
        assert!(
            recs.last()
                .unwrap()
                .ends_with(" SnapshotFooter {\"version\":0}"),
            "{}",
            recs.last().unwrap()
        );
        assert_eq!(recs.len() as u64, s.records);
    }
}

#[test]
fn json_lines_shape() {
    let Some(rd) = crate::common::real_data() else {
        return;
    };
    let seg = rd.join("rebuilt/ableasdale__kafka-transactions/dump01_transaction-topic-0/00000000000000000000.log");
    let data = std::fs::read(&seg).unwrap();
    let mut out = Vec::new();
    let opts = DumpOptions {
        format: DumpFormat::Json,
        ..deep_print()
    };
    dump_log(
        Path::new("00000000000000000000.log"),
        &data,
        &opts,
        &mut out,
        &mut Vec::new(),
    )
    .unwrap();
    let out = String::from_utf8(out).unwrap();
    let vals: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(vals.len(), 4);
    assert_eq!(vals[0]["type"], "file");
    assert_eq!(vals[1]["crc"], 2067214322u64);
    assert_eq!(vals[1]["records"][4]["value"]["text"], "138158768");
    assert_eq!(vals[2]["records"][0]["control"]["type"], "COMMIT");
    assert_eq!(vals[3]["type"], "summary");
    insta::assert_snapshot!("dump01_json", out);
}

/// Deep iteration over every broker `.log`: after each uncompressed v2 batch line come
/// exactly `count` record lines with the batch's consecutive offsets. A compressed batch
/// either prints `count` lines or reports its error on stderr with its position (the
/// outcome depends on codec support, not on the dump). Legacy entries are not checked here.
#[test]
fn broker_logs_deep_record_lines() {
    let Some(rd) = crate::common::real_data() else {
        return;
    };
    let opts = DumpOptions {
        deep_iteration: true,
        ..Default::default()
    };
    let mut checked = 0u64;
    for log in crate::common::files_with_suffix(&rd.join("broker"), ".log") {
        let (lines, err, _) = dump_text(&log, &opts);
        let mut i = 0;
        while i < lines.len() {
            let l = &lines[i];
            i += 1;
            if !l.starts_with("baseOffset: ") {
                continue;
            }
            let field = |k: &str| -> String {
                let at = l
                    .find(&format!(" {k}: "))
                    .map(|p| p + 1)
                    .unwrap_or_else(|| l.find(&format!("{k}: ")).unwrap());
                l[at + k.len() + 2..].split(' ').next().unwrap().to_string()
            };
            let count: usize = field("count").parse().unwrap();
            let base: i64 = field("baseOffset").parse().unwrap();
            let pos = field("position");
            let recs: Vec<&String> = lines[i..]
                .iter()
                .take_while(|r| r.starts_with("| "))
                .collect();
            i += recs.len();
            if field("compresscodec") == "none" {
                assert_eq!(recs.len(), count, "{} batch at {pos}", log.display());
                for (k, r) in recs.iter().enumerate() {
                    let want = format!("| offset: {} ", base + k as i64);
                    // compaction may leave gaps, so only the first offset is exact
                    if k == 0 {
                        assert!(r.starts_with(&want), "{r}");
                    }
                }
                checked += count as u64;
            } else if recs.len() != count {
                assert!(recs.is_empty());
                assert!(
                    err.contains(&format!(
                        "Error in batch at position {pos} of {}",
                        log.display()
                    )),
                    "{} batch at {pos}: no records and no error",
                    log.display()
                );
            }
        }
    }
    assert!(checked > 10_000, "{checked}");
}

#[test]
fn offsets_decoder_decodes_every_real_consumer_offsets_record() {
    let Some(rd) = crate::common::real_data() else {
        return;
    };
    let opts = DumpOptions {
        offsets_decoder: true,
        legacy_decoder_text: true,
        deep_iteration: true,
        print_data_log: true,
        ..Default::default()
    };
    let (mut commits, mut groups, mut files) = (0, 0, 0);
    for f in crate::common::files_with_suffix(&rd.join("broker"), ".log") {
        if !f.to_string_lossy().contains("__consumer_offsets") {
            continue;
        }
        files += 1;
        let (lines, err, s) = dump_text(&f, &opts);
        assert_eq!(s.errors, 0, "{}: {err}", f.display());
        let mut control = false;
        for l in &lines {
            if l.starts_with("baseOffset: ") {
                control = l.contains("isControl: true");
            } else if l.starts_with("| offset: ") && !control {
                let decoded = l.contains(" key: offset_commit::group=")
                    || l.contains(" key: group_metadata::group=");
                assert!(decoded && l.contains(" payload: "), "{}: {l}", f.display());
                if l.contains("offset_commit::") {
                    assert!(
                        l.contains(" payload: offset=") || l.ends_with("payload: <DELETE>"),
                        "{l}"
                    );
                    commits += 1;
                } else {
                    groups += 1;
                }
            }
        }
    }
    // The real broker dirs hold 12 non-empty __consumer_offsets segments.
    assert!(files >= 10, "{files} files");
    assert!(
        commits > 3000 && groups > 100,
        "{commits} commits, {groups} groups"
    );
}

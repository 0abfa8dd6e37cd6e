//! Dump of index, time index, transaction index and producer snapshot files, in
//! kafka-dump-log's shapes (`DumpLogSegments`; the Java `DumpLogSegments` of
//! Kafka 3.5+/4.x where the Scala and Java tools differ).
//!
//! Text mode prints exactly what kafka-dump-log prints for one file: `Dumping <path>`, the
//! entry lines on `out`, and the verification summaries on `err` (kafka-dump-log prints them
//! after all files; here they follow each file). JSON mode prints one object per entry on
//! `out` (with its verification verdict for `.index`/`.timeindex`) and one object per
//! problem on `err`; every object carries the file path under `"file"`.
//!
//! Where kafka-dump-log would crash (an index position past the end of the log, a missing
//! `.log`), we report and carry on: an entry whose position has no batch is a mismatch with
//! log offset `-1`, and a missing `.log` is reported on `err` and the entries are printed
//! unverified.

use super::{DumpFormat, DumpOptions};
use crate::escape;
use crate::read::format::index::{
    LogBatches, OffsetCheck, OffsetIndex, TimeCheck, TimeIndex, TxnIndex, check_offset_index,
    check_time_index,
};
use crate::read::format::snapshot::{self, ProducerSnapshot};
use crate::read::segment::{FileClass, load};
use serde_json::json;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// The segment base offset from a file name (`00000000000000000042.index` → 42), as
/// kafka-dump-log parses it (everything before the first dot).
fn base_offset_of(path: &Path) -> Option<i64> {
    let name = path.file_name()?.to_str()?;
    name.split('.').next()?.parse().ok()
}

/// The sibling file with the same base name and another suffix (`.log`).
fn sibling(path: &Path, suffix: &str) -> Option<PathBuf> {
    let name = path.file_name()?.to_str()?;
    let stem = name.split('.').next()?;
    Some(path.with_file_name(format!("{stem}{suffix}")))
}

/// `File.getAbsolutePath()`: absolute, not canonicalised, `.` and `..` kept
/// ([`super::java_absolute`]).
fn abs(path: &Path) -> String {
    super::java_absolute(path).display().to_string()
}

fn json_line(w: &mut dyn Write, v: serde_json::Value) -> io::Result<()> {
    writeln!(w, "{v}")
}

/// A file's error on `err`: Kafka's message as the tool prints it (text), or an error
/// object naming the file (JSON).
fn error_line(opts: &DumpOptions, err: &mut dyn Write, file: &str, msg: &str) -> io::Result<()> {
    match opts.format {
        DumpFormat::Text => writeln!(err, "{}", escape::text(msg)),
        DumpFormat::Json => json_line(err, json!({"type": "error", "file": file, "error": msg})),
    }
}

/// Start a dump: the `Dumping` line (text), then the file's base offset, or an error line
/// when the name carries none.
fn begin(
    path: &Path,
    opts: &DumpOptions,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> io::Result<Option<i64>> {
    if opts.format == DumpFormat::Text {
        writeln!(out, "Dumping {}", escape::path(path))?;
    }
    let base = base_offset_of(path);
    if base.is_none() {
        let msg = format!(
            "Cannot parse a base offset from the file name of {}",
            path.display()
        );
        error_line(opts, err, &path.display().to_string(), &msg)?;
    }
    Ok(base)
}

/// Read the sibling `.log` and walk it; `None` (after reporting on `err`) when unreadable.
fn load_log(
    path: &Path,
    opts: &DumpOptions,
    err: &mut dyn Write,
) -> io::Result<Option<LogBatches>> {
    Ok(load_log_bytes(path, opts, err)?.map(|(l, _)| l))
}

/// `--index-sanity-check`: `<file> passed sanity check.` on `out`, or the broker's
/// `CorruptIndexException` message on `err` (Kafka's tool dies with it; we go on with the
/// next file). Returns whether the check passed.
fn sanity_result(
    path: &Path,
    result: Result<(), crate::read::format::index::IndexSanityError>,
    opts: &DumpOptions,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> io::Result<bool> {
    let file = path.display().to_string();
    match (result, opts.format) {
        (Ok(()), DumpFormat::Text) => {
            writeln!(out, "{} passed sanity check.", escape::text(&file))?
        }
        (Ok(()), DumpFormat::Json) => json_line(
            out,
            json!({"type": "sanity_check", "file": file, "sanity_check": "passed"}),
        )?,
        (Err(e), DumpFormat::Text) => {
            writeln!(err, "{}", escape::text(&e.kafka_message(&abs(path))))?
        }
        (Err(e), DumpFormat::Json) => json_line(
            err,
            json!({"type": "sanity_check", "file": file, "sanity_check": "failed", "error": e.kafka_message(&abs(path))}),
        )?,
    }
    Ok(result.is_ok())
}

/// Dump an offset index (`.index`), verifying entries against the sibling `.log`.
/// Entry lines go to `out`, mismatch summaries to `err` (as kafka-dump-log does). With
/// `--index-sanity-check` only the sanity check runs; with `--verify-index-only` the
/// entries are checked but not printed. Returns `false` when the sanity check failed or an
/// entry does not match the log, or when the name carries no base offset and nothing is
/// dumped (the dump's exit status is then 1; kafka-dump-log exits 0 on mismatches and dies
/// on a failed sanity check and on such a name).
pub fn dump_index(
    path: &Path,
    opts: &DumpOptions,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> io::Result<bool> {
    let Some(base) = begin(path, opts, out, err)? else {
        // Nothing dumped: kafka-dump-log dies with `NumberFormatException` (it reads the
        // name's text before the first `.` as the base offset), e.g. on `RemoteIndexCache`'s
        // `<start>_<uuid>.index`; the dump goes on, and exits 1.
        return Ok(false);
    };
    let data = load(path, FileClass::Index, opts.mmap, None)?;
    let index = OffsetIndex::new(&data, base);
    if index.layout().slots == 0 {
        match opts.format {
            DumpFormat::Text => writeln!(out, "{} is empty.", escape::path(path))?,
            DumpFormat::Json => json_line(
                out,
                json!({"type": "empty", "file": path.display().to_string(), "empty": true}),
            )?,
        }
        return Ok(true);
    }
    if opts.index_sanity_check {
        return sanity_result(path, index.sanity_check(), opts, out, err);
    }
    let file = path.display().to_string();
    let log = load_log(path, opts, err)?;
    let checks = log.as_ref().map(|l| check_offset_index(&index, l));
    let mut mismatches: Vec<(i64, i64)> = Vec::new();
    for (i, e) in index.entries().enumerate() {
        let check = checks.as_ref().and_then(|c| c.get(i));
        if let Some(c) = check
            && c.check != OffsetCheck::Exact
        {
            mismatches.push((e.offset, c.log_offset()));
        }
        if opts.verify_index_only {
            continue;
        }
        match opts.format {
            DumpFormat::Text => writeln!(out, "offset: {} position: {}", e.offset, e.position)?,
            DumpFormat::Json => json_line(
                out,
                json!({"type": "index_entry", "file": file, "offset": e.offset, "position": e.position,
                       "check": check.map(|c| c.check)}),
            )?,
        }
    }
    // `dumpIndex` prepends each mismatch to a list (`misMatchesSeq ::= …`): the last
    // entry's first, every entry kept (an offset indexed twice is listed twice).
    mismatches.reverse();
    if !mismatches.is_empty() {
        let abs_path = abs(path);
        match opts.format {
            DumpFormat::Text => {
                writeln!(err, "Mismatches in :{}", escape::text(&abs_path))?;
                for (index_offset, log_offset) in &mismatches {
                    writeln!(
                        err,
                        "  Index offset: {index_offset}, log offset: {log_offset}"
                    )?;
                }
            }
            DumpFormat::Json => {
                for (index_offset, log_offset) in &mismatches {
                    json_line(
                        err,
                        json!({"type": "mismatch", "file": abs_path, "mismatch": {"index_offset": index_offset, "log_offset": log_offset}}),
                    )?;
                }
            }
        }
    }
    Ok(mismatches.is_empty())
}

/// Dump a time index (`.timeindex`), verifying entries against the sibling `.log` (options
/// and result as [`dump_index`]).
pub fn dump_timeindex(
    path: &Path,
    opts: &DumpOptions,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> io::Result<bool> {
    let Some(base) = begin(path, opts, out, err)? else {
        // Nothing dumped: kafka-dump-log dies with `NumberFormatException` (it reads the
        // name's text before the first `.` as the base offset), e.g. on `RemoteIndexCache`'s
        // `<start>_<uuid>.index`; the dump goes on, and exits 1.
        return Ok(false);
    };
    let data = load(path, FileClass::Index, opts.mmap, None)?;
    let index = TimeIndex::new(&data, base);
    if opts.index_sanity_check {
        return sanity_result(path, index.sanity_check(), opts, out, err);
    }
    let file = path.display().to_string();
    let log = if index.layout().slots > 0 {
        load_log_bytes(path, opts, err)?
    } else {
        None
    };
    let checks = log.as_ref().map(|(l, _)| check_time_index(&index, l));
    let mut dec = crate::read::format::Decompressor::new(
        opts.max_decompressed
            .unwrap_or(crate::read::format::codec::DEFAULT_MAX_DECOMPRESSED),
    );
    let mut ts_mismatch: Vec<(i64, i64)> = Vec::new();
    let mut out_of_order: Vec<(i64, i64)> = Vec::new();
    let mut not_found: Vec<(i64, i64)> = Vec::new();
    // What kafka-dump-log prints is printed as it prints it; whether the file is wrong (the
    // exit status) follows the one rule `verify` uses (`TimeEntryCheck::is_problem`).
    let mut problems = 0usize;
    for (i, e) in index.entries().enumerate() {
        let check = checks.as_ref().and_then(|c| c.get(i));
        if check.is_some_and(|c| c.is_problem()) {
            problems += 1;
        }
        if let Some(c) = check {
            // DumpLogSegments checks the order only when a batch ends at the offset, and
            // the timestamp against its records' largest (not the header's).
            let mut records_max = |header: i64| {
                log.as_ref().map_or(header, |(l, data)| {
                    records_max_timestamp(l, data, e.offset, &mut dec).unwrap_or(header)
                })
            };
            let found = match c.check {
                TimeCheck::Exact | TimeCheck::TimestampMismatch { .. } => {
                    let header = match c.check {
                        TimeCheck::TimestampMismatch { log_timestamp } => log_timestamp,
                        _ => e.timestamp,
                    };
                    let log_timestamp = records_max(header);
                    if log_timestamp != e.timestamp {
                        ts_mismatch.push((e.timestamp, log_timestamp));
                    }
                    true
                }
                TimeCheck::InsideBatch {
                    batch_last_offset, ..
                } => {
                    not_found.push((e.offset, batch_last_offset));
                    false
                }
                TimeCheck::NotFound { found_log_offset } => {
                    not_found.push((e.offset, found_log_offset));
                    false
                }
            };
            if found && let Some(prev) = c.out_of_order_after {
                out_of_order.push((e.timestamp, prev));
            }
        }
        if opts.verify_index_only {
            continue;
        }
        match opts.format {
            DumpFormat::Text => writeln!(out, "timestamp: {} offset: {}", e.timestamp, e.offset)?,
            DumpFormat::Json => json_line(
                out,
                json!({"type": "timeindex_entry", "file": file, "timestamp": e.timestamp, "offset": e.offset,
                       "check": check.map(|c| c.check),
                       "out_of_order_after": check.and_then(|c| c.out_of_order_after)}),
            )?,
        }
    }
    let abs_path = abs(path);
    match opts.format {
        DumpFormat::Text => {
            if !ts_mismatch.is_empty() {
                writeln!(
                    err,
                    "Found timestamp mismatch in :{}",
                    escape::text(&abs_path)
                )?;
                for (i, l) in &ts_mismatch {
                    writeln!(err, "  Index timestamp: {i}, log timestamp: {l}")?;
                }
            }
            if !out_of_order.is_empty() {
                writeln!(
                    err,
                    "Found out of order timestamp in :{}",
                    escape::text(&abs_path)
                )?;
                for (i, p) in &out_of_order {
                    writeln!(
                        err,
                        "  Index timestamp: {i}, Previously indexed timestamp: {p}"
                    )?;
                }
            }
            if !not_found.is_empty() {
                writeln!(
                    err,
                    "The following indexed offsets are not found in the log."
                )?;
                for (i, l) in &not_found {
                    writeln!(err, "Indexed offset: {i}, found log offset: {l}")?;
                }
            }
        }
        DumpFormat::Json => {
            for (i, l) in &ts_mismatch {
                json_line(
                    err,
                    json!({"type": "mismatch", "file": abs_path, "timestamp_mismatch": {"index_timestamp": i, "log_timestamp": l}}),
                )?;
            }
            for (i, p) in &out_of_order {
                json_line(
                    err,
                    json!({"type": "mismatch", "file": abs_path, "out_of_order": {"index_timestamp": i, "previous_timestamp": p}}),
                )?;
            }
            for (i, l) in &not_found {
                json_line(
                    err,
                    json!({"type": "mismatch", "file": abs_path, "offset_not_found": {"index_offset": i, "found_log_offset": l}}),
                )?;
            }
        }
    }
    Ok(problems == 0)
}

/// The largest record timestamp of the batch of `log` ending at `offset`, as
/// `DumpLogSegments.dumpTimeIndex` computes it (`max(record.timestamp)` over the batch's
/// records, -1 for a batch without any; under LogAppendTime every record's timestamp is
/// the batch's). `None` (the header's max timestamp stands) for a legacy entry or a batch
/// whose records do not decode (where the tool would throw).
fn records_max_timestamp(
    log: &LogBatches,
    data: &[u8],
    offset: i64,
    dec: &mut crate::read::format::Decompressor,
) -> Option<i64> {
    use crate::read::format::{Classified, Entries, TimestampType, classify};
    let b = log.first_ending_at_or_after(offset)?;
    let at = usize::try_from(b.position).ok()?;
    let entry = Entries::new(data.get(at..)?, b.position).next()?;
    let Classified::V2(v) = classify(entry) else {
        return None;
    };
    if v.records_count() <= 0 {
        return Some(-1);
    }
    if v.timestamp_type() == TimestampType::LogAppendTime {
        return Some(v.max_timestamp());
    }
    let base = v.base_timestamp();
    let mut max = -1i64;
    for r in crate::read::format::batch_records(&v, dec).ok()? {
        max = max.max(base.wrapping_add(r.ok()?.timestamp_delta));
    }
    Some(max)
}

/// The sibling `.log` of `path`, read, with its entries; `None` (after reporting on
/// `err`) when unreadable.
fn load_log_bytes(
    path: &Path,
    opts: &DumpOptions,
    err: &mut dyn Write,
) -> io::Result<Option<(LogBatches, crate::read::segment::FileData)>> {
    let Some(log_path) = sibling(path, ".log") else {
        return Ok(None);
    };
    match load(&log_path, FileClass::Log, opts.mmap, None) {
        Ok(data) => Ok(Some((LogBatches::from_log(&data), data))),
        Err(e) => {
            let msg = format!(
                "Cannot read {} ({e}); index entries not verified",
                abs(&log_path)
            );
            error_line(opts, err, &path.display().to_string(), &msg)?;
            Ok(None)
        }
    }
}

/// Dump a transaction index (`.txnindex`).
pub fn dump_txnindex(
    path: &Path,
    opts: &DumpOptions,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> io::Result<bool> {
    // Kafka takes the base offset from the name too; a name without one only loses the
    // sanity context, so dump with 0.
    if opts.format == DumpFormat::Text {
        writeln!(out, "Dumping {}", escape::path(path))?;
    }
    let base = base_offset_of(path).unwrap_or(0);
    let data = load(path, FileClass::Index, opts.mmap, None)?;
    let index = TxnIndex::new(&data, base);
    let file = path.display().to_string();
    // `TransactionIndex.allAbortedTxns` reads every entry before the tool prints one: an
    // entry of an unknown version anywhere throws first, and no entry is printed. Which
    // versions are unknown depends on the release (KAFKA-19562): before 4.4 the version is
    // the entry's first byte and anything above 0 throws; since 4.4 it is the whole int16
    // and anything but 0 throws (`00 01` and `ff 00` load before 4.4, not since). No
    // release is stated to `dump`: where the readings differ, both are told. (The checks
    // run from base `i64::MIN`, so only the version refuses.)
    let versions = TxnIndex::new(&data, i64::MIN);
    let before = versions.sanity_check().err();
    let since = versions.sanity_check_since_4_4().err();
    let abs_path = abs(path);
    let since_msg = since.map(|e| e.kafka_message(&abs_path));
    if let Some(e) = before {
        error_line(opts, err, &file, &e.kafka_message(&abs_path))?;
        // Every entry refused before 4.4 is refused since (a first byte above 0 is a
        // non-zero int16), maybe at an earlier entry and always in other words.
        if let Some(m) = since_msg {
            let msg =
                format!("Kafka 4.4 and later (KAFKA-19562) read the version as a whole int16: {m}");
            error_line(opts, err, &file, &msg)?;
        }
        return Ok(false);
    }
    for t in index.entries() {
        match opts.format {
            DumpFormat::Text => writeln!(
                out,
                "version: {} producerId: {} firstOffset: {} lastOffset: {} lastStableOffset: {}",
                t.version, t.producer_id, t.first_offset, t.last_offset, t.last_stable_offset
            )?,
            DumpFormat::Json => json_line(
                out,
                json!({"type": "txnindex_entry", "file": file, "version": t.version, "producerId": t.producer_id,
                       "firstOffset": t.first_offset, "lastOffset": t.last_offset,
                       "lastStableOffset": t.last_stable_offset}),
            )?,
        }
    }
    if let (Some(m), Some(e)) = (since_msg, since) {
        let msg = format!(
            "releases before 4.4 read each entry's version from its first byte (entry {}: {}) and print the entries above; Kafka 4.4 and later (KAFKA-19562) read the whole int16 and refuse the index: {m}",
            e.txn.slot, e.txn.version
        );
        note_line(opts, err, &file, &msg)?;
    }
    Ok(true)
}

/// A line on `err` that is no error under every release: the text, or a `note` object.
fn note_line(opts: &DumpOptions, err: &mut dyn Write, file: &str, msg: &str) -> io::Result<()> {
    match opts.format {
        DumpFormat::Text => writeln!(err, "{}", escape::text(msg)),
        DumpFormat::Json => json_line(err, json!({"type": "note", "file": file, "note": msg})),
    }
}

/// Dump a producer-state snapshot (`.snapshot`); false when it is corrupt (the run then
/// exits 1, as for any file printed as invalid).
pub fn dump_snapshot(
    path: &Path,
    opts: &DumpOptions,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> io::Result<bool> {
    if opts.format == DumpFormat::Text {
        writeln!(out, "Dumping {}", escape::path(path))?;
    }
    let data = load(path, FileClass::ProducerSnapshot, opts.mmap, None)?;
    let file = path.display().to_string();
    let snap = match ProducerSnapshot::parse(&data) {
        Ok(s) => s,
        Err(e) => {
            let msg = snapshot::kafka_message(&e);
            error_line(opts, err, &file, &msg)?;
            return Ok(false);
        }
    };
    for e in snap.entries() {
        match opts.format {
            DumpFormat::Text => {
                let txn = match e.open_txn_first_offset() {
                    Some(f) => format!("OptionalLong[{f}]"),
                    None => "OptionalLong.empty".to_string(),
                };
                write!(
                    out,
                    "producerId: {} producerEpoch: {} coordinatorEpoch: {} currentTxnFirstOffset: {} lastTimestamp: {} ",
                    e.producer_id, e.producer_epoch, e.coordinator_epoch, txn, e.timestamp
                )?;
                if e.has_batch() {
                    write!(
                        out,
                        "firstSequence: {} lastSequence: {} lastOffset: {} offsetDelta: {} timestamp: {}",
                        e.first_sequence(),
                        e.last_sequence,
                        e.last_offset,
                        e.offset_delta,
                        e.timestamp
                    )?;
                }
                writeln!(out)?;
            }
            DumpFormat::Json => {
                let mut v = json!({"type": "snapshot_entry", "file": file, "producerId": e.producer_id,
                    "producerEpoch": e.producer_epoch, "coordinatorEpoch": e.coordinator_epoch,
                    "currentTxnFirstOffset": e.open_txn_first_offset(),
                    "lastTimestamp": e.timestamp});
                if e.has_batch() {
                    v["firstSequence"] = json!(e.first_sequence());
                    v["lastSequence"] = json!(e.last_sequence);
                    v["lastOffset"] = json!(e.last_offset);
                    v["offsetDelta"] = json!(e.offset_delta);
                    v["timestamp"] = json!(e.timestamp);
                }
                json_line(out, v)?;
            }
        }
    }
    Ok(true)
}

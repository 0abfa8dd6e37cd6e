//! Dump of `.log` segments and KRaft `.checkpoint` snapshots, in kafka-dump-log's text
//! shape (`DumpLogSegments.dumpLog`, the 3.x+ Scala tool) or as JSON Lines
//! (`docs/dump-json.md`).
//!
//! Where this dump differs from kafka-dump-log on purpose (it never aborts on bad bytes):
//! * a batch whose records section or codec fails still prints its batch line and the
//!   records before the failure; the error goes to `err` as
//!   `Error in batch at position P of <path>: <error>` and the dump goes on with the next
//!   batch (Kafka throws and stops the whole dump);
//! * a control record that does not decode prints its metadata and the error goes to
//!   `err` the same way (a null key, or a COMMIT/ABORT with a null value, is where Kafka's
//!   deep iteration throws a `NullPointerException`);
//! * bytes that do not frame as an entry (entry size below 14, magic not 0–2, negative
//!   offset) end the walk and count as invalid trailing bytes (`Found N invalid bytes …`);
//!   Kafka throws on a size below 14 and would try to print the others. The reason goes
//!   to `err` as `Stopped at position P of <path>: <reason>`.
//! * `--transaction-log-decoder` prints a transaction's partitions in stored order (the
//!   Scala tool iterates a hash set).

use super::decoders;
use super::{DumpFormat, DumpOptions};
use crate::read::format::batch::{RawEntry, V2_HEADER_SIZE};
use crate::read::format::control::{parse_control_key, parse_end_txn_value};
use crate::read::format::{
    self, BatchView, Compression, ControlType, Decompressor, Entries, FormatError, LegacyMessage,
    Record, Records, Tail, TimestampType,
};
use base64::Engine;
use serde::Serialize;
use std::fmt::Write as _;
use std::io::{self, BufWriter, Write};
use std::path::Path;

mod dumper;
mod json_text;
mod records;
#[cfg(test)]
mod tests;

use dumper::Dumper;

/// What a log dump found, for exit codes and for the caller's own summary.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LogDumpSummary {
    /// Entries (v2 batches and legacy entries) printed.
    pub batches: u64,
    /// Records printed (deep iteration only; 0 otherwise).
    pub records: u64,
    /// Batches whose checksum does not match (`isvalid: false`).
    pub invalid_batches: u64,
    /// Batches whose header, records section, codec or control record failed to parse.
    pub errors: u64,
    /// Bytes covered by whole entries.
    pub valid_bytes: u64,
    /// Bytes after the last whole entry (what `Found N invalid bytes` reports).
    pub invalid_bytes: u64,
    /// Whether `--max-bytes` was given (the invalid-bytes line is then suppressed).
    pub max_bytes_set: bool,
    /// Whether `--max-bytes` cut the file short: the bytes after the last whole entry are
    /// then the cut, not a problem of the file.
    pub cut_by_max_bytes: bool,
    /// How the data ended.
    pub tail: Tail,
    /// Pairs of consecutive records whose offsets are not +1, in file order
    /// (deep iteration only): the first `NON_CONSECUTIVE_KEPT`.
    pub non_consecutive: Vec<(i64, i64)>,
    /// Further such pairs, counted but not kept (crafted batches can make every record
    /// one: 200 batches × 2 million records of offset delta 0 is 400 million pairs).
    /// In JSON only when not 0.
    #[serde(skip_serializing_if = "is_zero")]
    pub non_consecutive_more: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// How many non-consecutive offset pairs a dump keeps (and prints); the rest are counted.
pub const NON_CONSECUTIVE_KEPT: usize = 1000;

/// Text a parallel piece of a dump may buffer before it gives up and lets the sequential
/// walk (which writes as it goes) print that piece: printed payloads can be far larger
/// than the piece (decompression, escaping), and every thread holds one piece.
pub const PIECE_TEXT_CAP: usize = 64 << 20;

impl LogDumpSummary {
    /// True when anything was invalid: a bad checksum, a parse error or trailing bytes.
    pub fn has_problems(&self) -> bool {
        self.invalid_batches > 0
            || self.errors > 0
            || (self.invalid_bytes > 0 && !self.cut_by_max_bytes)
    }
}

/// What the file name says about the file (the line after `Dumping <path>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum LogFileKind {
    /// `<20-digit base offset>.log`; `None` when the name does not parse.
    Segment {
        #[serde(rename = "startOffset")]
        start_offset: Option<i64>,
    },
    /// `<20-digit end offset>-<10-digit epoch>.checkpoint`.
    Snapshot {
        #[serde(rename = "endOffset")]
        end_offset: Option<i64>,
        epoch: Option<i32>,
    },
    /// `bootstrap.checkpoint`.
    BootstrapSnapshot,
    /// Any other name (when [`dump_log`] is called directly).
    Other,
}

impl LogFileKind {
    /// Classify by file name, as kafka-dump-log does.
    pub fn of(path: &Path) -> Self {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if let Some(stem) = name.strip_suffix(".log") {
            let first = stem.split('.').next().unwrap_or("");
            LogFileKind::Segment {
                start_offset: first.parse().ok(),
            }
        } else if name == "bootstrap.checkpoint" {
            LogFileKind::BootstrapSnapshot
        } else if let Some(stem) = name.strip_suffix(".checkpoint") {
            let (o, e) = stem.split_once('-').unwrap_or((stem, ""));
            LogFileKind::Snapshot {
                end_offset: o.parse().ok(),
                epoch: e.parse().ok(),
            }
        } else {
            LogFileKind::Other
        }
    }
}

/// Dump one `.log` or `.checkpoint` image (`data`, already cut to `--max-bytes`), printing
/// `Dumping <path>` first and, with deep iteration, the `Non-consecutive offsets` block on
/// `err` at the end (text format).
pub fn dump_log(
    path: &Path,
    data: &[u8],
    opts: &DumpOptions,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> io::Result<LogDumpSummary> {
    let summary = dump_log_inner(path, data, opts, out, err)?;
    if opts.format == DumpFormat::Text {
        write_non_consecutive(
            path,
            &summary.non_consecutive,
            summary.non_consecutive_more,
            err,
        )?;
    }
    Ok(summary)
}

/// Keep a non-consecutive pair, or count it once [`NON_CONSECUTIVE_KEPT`] are kept.
fn push_pair(s: &mut LogDumpSummary, pair: (i64, i64)) {
    if s.non_consecutive.len() < NON_CONSECUTIVE_KEPT {
        s.non_consecutive.push(pair);
    } else {
        s.non_consecutive_more += 1;
    }
}

/// The `Non-consecutive offsets in <abs path>` block, newest pair first (the Scala tool
/// prepends to a list). Nothing when `pairs` is empty. `more`: pairs counted beyond the
/// kept ones (then a last line says how many; kafka-dump-log lists them all).
pub(crate) fn write_non_consecutive(
    path: &Path,
    pairs: &[(i64, i64)],
    more: u64,
    err: &mut dyn Write,
) -> io::Result<()> {
    if pairs.is_empty() {
        return Ok(());
    }
    let abs = crate::dump::java_absolute(path);
    writeln!(
        err,
        "Non-consecutive offsets in {}",
        crate::escape::path(&abs)
    )?;
    for (a, b) in pairs.iter().rev() {
        writeln!(err, "  {a} is followed by {b}")?;
    }
    if more > 0 {
        writeln!(
            err,
            "  ... and {more} more non-consecutive pairs after these (not listed)"
        )?;
    }
    Ok(())
}

/// [`dump_log`] without the final non-consecutive block (the multi-file driver prints
/// those after all files, as Kafka does).
pub(crate) fn dump_log_inner(
    path: &Path,
    data: &[u8],
    opts: &DumpOptions,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> io::Result<LogDumpSummary> {
    dump_log_walk(path, data.len() as u64, opts, out, err, |d, out, err| {
        let mut entries = Entries::new(data, 0);
        let mut walk = d.sequential(out, err);
        for entry in entries.by_ref() {
            if walk
                .entry(crate::read::segment::Item::Entry(entry))
                .is_break()
            {
                break;
            }
        }
        walk.finish()?;
        Ok(entries.tail().unwrap_or(Tail::Clean))
    })
}

/// Files at least twice this long are dumped in pieces of about this size, formatted in
/// parallel and written in order (see `dump_pieces`). Small enough that the formatted
/// text of the pieces in flight stays a few tens of MiB.
pub const DUMP_PIECE: usize = 4 << 20;

/// Why [`dump_log_file`] stopped early.
pub(crate) enum FileDumpError {
    /// The file could not be opened or read; `started` when the dump had begun printing.
    Read { error: io::Error, started: bool },
    /// Writing the dump failed.
    Write(io::Error),
}

/// [`dump_log_inner`] over a file read in [`crate::read::segment::CHUNK_SIZE`] pieces (the
/// scan's bounded `read()` path), not a whole-file image: memory stays bounded for a
/// 1 GiB segment, and the chunk the codec and the CRC read is still in cache. Read-only.
pub(crate) fn dump_log_file(
    path: &Path,
    opts: &DumpOptions,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<LogDumpSummary, FileDumpError> {
    let not_started = |error| FileDumpError::Read {
        error,
        started: false,
    };
    // One handle for every read of this dump: a path replaced meanwhile (the cleaner
    // swapping in a compacted segment) cannot mix two files into one dump.
    let (file, len) = crate::read::segment::open_regular(path).map_err(not_started)?;
    let len = opts.max_bytes.map_or(len, |m| m.min(len));
    let mut read_error = None;
    let summary = dump_log_walk(path, len, opts, out, err, |d, out, err| {
        let r = dump_pieces(&file, len, d, out, err);
        if let Err(FileDumpError::Read { error, .. }) = &r {
            read_error = Some(io::Error::new(error.kind(), error.to_string()));
        }
        r.map_err(|e| match e {
            FileDumpError::Read { error, .. } | FileDumpError::Write(error) => error,
        })
    });
    match (summary, read_error) {
        (_, Some(error)) => Err(FileDumpError::Read {
            error,
            started: true,
        }),
        (Ok(s), None) => Ok(s),
        (Err(e), None) => Err(FileDumpError::Write(e)),
    }
}

/// The entries of the file at `path` (`len` bytes of it) into `d`. With more than one
/// rayon thread and a file of at least two pieces ([`DumpOptions::piece_bytes`],
/// default [`DUMP_PIECE`]), the file is cut at batch
/// boundaries ([`crate::read::segment::read_sync_point`]) into pieces that are formatted in
/// parallel — each by a fresh [`Dumper`] into memory, `threads` pieces at a time — and
/// appended in file order ([`Dumper::absorb`]). A piece whose walk does not end exactly
/// where the next begins (a false sync point, damage, a file changing under us) is
/// dropped with everything after it, and the dump goes on sequentially from its start:
/// the output is always the sequential walk's, byte for byte.
fn dump_pieces(
    file: &crate::read::segment::Handle,
    len: u64,
    d: &mut Dumper<'_>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Tail, FileDumpError> {
    // Entries larger than `segment::BIG_ENTRY` arrive checked streaming (`Item::Big`),
    // never buffered whole: the dump holds at most that much of one entry.
    use crate::read::segment::{PieceEnd, read_sync_point, walk_read_piece_items};
    use rayon::prelude::*;
    let threads = rayon::current_num_threads();
    let piece_bytes = d.opts.piece_bytes.unwrap_or(DUMP_PIECE).max(1);
    let text_cap = d.opts.piece_text_cap.unwrap_or(PIECE_TEXT_CAP);
    let mut starts = vec![0usize];
    if threads > 1 && len >= 2 * piece_bytes as u64 {
        let len = usize::try_from(len).unwrap_or(usize::MAX);
        let mut window = Vec::new();
        for k in 1..len.div_ceil(piece_bytes) {
            match read_sync_point(file, k * piece_bytes, piece_bytes, len, &mut window) {
                Ok(Some(p)) if starts.last().is_some_and(|&last| p > last) => starts.push(p),
                Ok(_) => {}
                // Unreadable here: the sequential dump meets (and reports) it in order.
                Err(_) => {
                    starts.truncate(1);
                    break;
                }
            }
        }
    }
    /// The rest of the file from `start` on, sequentially into `d`.
    fn sequential_from(
        file: &crate::read::segment::Handle,
        len: u64,
        d: &mut Dumper<'_>,
        start: usize,
        out: &mut dyn Write,
        err: &mut dyn Write,
    ) -> Result<Tail, FileDumpError> {
        let mut walk = d.sequential(out, err);
        let end = walk_read_piece_items(file, start as u64, None, len, |e| walk.entry(e));
        // A write error stopped the walk (nothing was read after it): it comes first.
        walk.finish().map_err(FileDumpError::Write)?;
        let end = end.map_err(|error| FileDumpError::Read {
            error,
            started: true,
        })?;
        Ok(match end {
            PieceEnd::End(tail) => tail,
            PieceEnd::Chained | PieceEnd::Broken => Tail::Clean,
        })
    }
    if starts.len() < 2 {
        return sequential_from(file, len, d, 0, out, err);
    }
    // One slot per thread, reused wave after wave: output buffers (fresh pages for every
    // piece cost as much as the formatting saved) and a decompressor.
    struct Slot {
        out: Vec<u8>,
        err: Vec<u8>,
        dec: Decompressor,
    }
    let mut slots: Vec<Slot> = (0..threads.min(starts.len()))
        .map(|_| Slot {
            out: Vec::new(),
            err: Vec::new(),
            dec: d.decompressor(),
        })
        .collect();
    let mut k = 0;
    while k < starts.len() {
        let wave = k..(k + threads).min(starts.len());
        let proto: &Dumper<'_> = d;
        let printed: Vec<io::Result<(Dumper<'_>, PieceEnd)>> = slots
            .par_iter_mut()
            .zip(wave.clone().into_par_iter())
            .map(|(slot, i)| {
                let mut piece = Dumper::new(proto.opts, proto.path);
                slot.out.clear();
                slot.err.clear();
                let stop = starts.get(i + 1).map(|&s| s as u64);
                let end = walk_read_piece_items(file, starts[i] as u64, stop, len, |entry| {
                    // Too much text for memory: stop (the capped buffers refuse to grow past
                    // the cap, so one batch printing hundreds of MB is never held whole);
                    // the piece is then printed by the sequential walk, which streams it
                    // (`PieceEnd::Broken`).
                    let mut o = Capped::new(&mut slot.out, text_cap);
                    let mut e = Capped::new(&mut slot.err, text_cap);
                    let printed = piece.item(entry, &mut slot.dec, &mut o, &mut e);
                    if printed.is_err()
                        || slot.out.len() + slot.err.len() + piece.json_line.len() > text_cap
                    {
                        std::ops::ControlFlow::Break(())
                    } else {
                        std::ops::ControlFlow::Continue(())
                    }
                })?;
                piece.flush_json(&mut slot.out)?;
                Ok((piece, end))
            })
            .collect();
        for ((i, r), slot) in wave.clone().zip(printed).zip(&slots) {
            // A piece that could not be read is redone sequentially: the error (if it
            // persists) is then met and reported in file order.
            let (piece, end) = match r {
                Ok(r) => r,
                Err(_) => return sequential_from(file, len, d, starts[i], out, err),
            };
            match end {
                PieceEnd::Chained => d.absorb(piece, &slot.out, &slot.err, out, err),
                PieceEnd::End(tail) => {
                    d.absorb(piece, &slot.out, &slot.err, out, err)
                        .map_err(FileDumpError::Write)?;
                    return Ok(tail);
                }
                PieceEnd::Broken => return sequential_from(file, len, d, starts[i], out, err),
            }
            .map_err(FileDumpError::Write)?;
        }
        k = wave.end;
    }
    Ok(Tail::Clean)
}

/// A piece's in-memory output that refuses to grow past `cap` bytes (a write past it
/// fails and nothing of it is kept): the parallel dump's bound on the text one thread holds.
struct Capped<'a> {
    buf: &'a mut Vec<u8>,
    cap: usize,
}

impl<'a> Capped<'a> {
    fn new(buf: &'a mut Vec<u8>, cap: usize) -> Self {
        Capped { buf, cap }
    }
}

impl Write for Capped<'_> {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        if self.buf.len().saturating_add(b.len()) > self.cap {
            return Err(io::Error::other("piece text above its cap"));
        }
        self.buf.extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The dump of one log image of `len` bytes whose entries `walk` produces in file order
/// (calling its argument once per entry) before returning how the image ended.
fn dump_log_walk(
    path: &Path,
    len: u64,
    opts: &DumpOptions,
    out: &mut dyn Write,
    err: &mut dyn Write,
    walk: impl FnOnce(&mut Dumper<'_>, &mut dyn Write, &mut dyn Write) -> io::Result<Tail>,
) -> io::Result<LogDumpSummary> {
    let mut out = BufWriter::with_capacity(64 * 1024, out);
    let kind = LogFileKind::of(path);
    let json = opts.format == DumpFormat::Json;
    let path_s = if json {
        path.display().to_string()
    } else {
        crate::escape::path(path)
    };
    if json {
        #[derive(Serialize)]
        struct FileLine<'a> {
            #[serde(rename = "type")]
            t: &'static str,
            path: &'a str,
            #[serde(flatten)]
            kind: LogFileKind,
            bytes: u64,
        }
        serde_json::to_writer(
            &mut out,
            &FileLine {
                t: "file",
                path: &path_s,
                kind,
                bytes: len,
            },
        )?;
        writeln!(out)?;
    } else {
        writeln!(out, "Dumping {path_s}")?;
        match kind {
            LogFileKind::Segment {
                start_offset: Some(o),
            } => writeln!(out, "Log starting offset: {o}")?,
            LogFileKind::Snapshot {
                end_offset: Some(o),
                epoch: Some(e),
            } => writeln!(out, "Snapshot end offset: {o}, epoch: {e}")?,
            LogFileKind::BootstrapSnapshot => writeln!(out, "KRaft bootstrap snapshot")?,
            LogFileKind::Other => {}
            _ => writeln!(
                err,
                "Cannot read a starting offset from the file name of {path_s}"
            )?,
        }
    }

    let max_bytes_set = opts.max_bytes.is_some_and(|m| m != i32::MAX as u64);
    let mut d = Dumper::new(opts, &path_s);
    d.summary.max_bytes_set = max_bytes_set;
    d.summary.cut_by_max_bytes = max_bytes_set && opts.max_bytes.is_some_and(|m| len >= m);
    let tail = match walk(&mut d, &mut out, err) {
        Ok(tail) => tail,
        Err(e) => {
            // What was printed before a read error stays printed, JSON lines included.
            let _ = d.flush_json(&mut out);
            let _ = out.flush();
            return Err(e);
        }
    };
    d.summary.tail = tail;
    d.summary.invalid_bytes = len - d.summary.valid_bytes;
    if let Tail::Garbage {
        position, reason, ..
    }
    | Tail::CorruptEntry {
        position, reason, ..
    } = tail
        && !json
    {
        writeln!(err, "Stopped at position {position} of {path_s}: {reason}")?;
    }
    d.flush_json(&mut out)?;
    if json {
        #[derive(Serialize)]
        struct SummaryLine<'a> {
            #[serde(rename = "type")]
            t: &'static str,
            path: &'a str,
            #[serde(flatten)]
            s: &'a LogDumpSummary,
        }
        serde_json::to_writer(
            &mut out,
            &SummaryLine {
                t: "summary",
                path: &path_s,
                s: &d.summary,
            },
        )?;
        writeln!(out)?;
    } else if d.summary.invalid_bytes > 0 && !max_bytes_set {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        writeln!(
            out,
            "Found {} invalid bytes at the end of {name}",
            d.summary.invalid_bytes
        )?;
    }
    out.flush()?;
    Ok(d.summary)
}

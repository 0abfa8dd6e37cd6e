//! The [`Dumper`]: the state of one file's dump, entry by entry (batches in
//! [`super::records`]).

use super::json_text::*;
use super::*;

/// Pending JSON output is written once it reaches this size (larger than the 64 KiB
/// `BufWriter`, so it goes straight through).
pub(super) const JSON_BLOCK: usize = 256 * 1024;

pub(super) struct Dumper<'p> {
    pub(super) opts: &'p DumpOptions,
    pub(super) json: bool,
    pub(super) deep: bool,
    pub(super) print_data: bool,
    pub(super) path: &'p str,
    pub(super) line: String,
    /// JSON lines are written here and handed to the output in blocks of at least
    /// [`JSON_BLOCK`] bytes (serde_json's many small writes through `&mut dyn Write`
    /// were ≈ 16 % of a `--format json` dump; blocks larger than the `BufWriter` also
    /// skip its copy).
    pub(super) json_line: Vec<u8>,
    /// No record of the current batch has been written yet (no comma before the next).
    pub(super) rec_first: bool,
    pub(super) last_offset: i64,
    /// The first offset [`Dumper::track_offset`] saw (to join a piece to the one before).
    pub(super) first_tracked: Option<i64>,
    pub(super) summary: LogDumpSummary,
}

/// A sequential walk feeding one [`Dumper`]: the first write error stops the walk and
/// is returned by [`SeqWalk::finish`].
pub(super) struct SeqWalk<'d, 'p> {
    pub(super) d: &'d mut Dumper<'p>,
    pub(super) dec: Decompressor,
    pub(super) out: &'d mut dyn Write,
    pub(super) err: &'d mut dyn Write,
    pub(super) error: Option<io::Error>,
}

impl SeqWalk<'_, '_> {
    /// Print one entry; after a write error, stop the walk (`Break`).
    pub(super) fn entry(
        &mut self,
        entry: crate::read::segment::Item<'_>,
    ) -> std::ops::ControlFlow<()> {
        if self.error.is_none()
            && let Err(e) = self.d.item(entry, &mut self.dec, self.out, self.err)
        {
            self.error = Some(e);
        }
        if self.error.is_some() {
            std::ops::ControlFlow::Break(())
        } else {
            std::ops::ControlFlow::Continue(())
        }
    }

    pub(super) fn finish(self) -> io::Result<()> {
        self.error.map_or(Ok(()), Err)
    }
}

/// What a record contributes to its line after the metadata: a decoded control record.
pub(super) enum ControlText {
    None,
    Text(String),
}

impl<'p> Dumper<'p> {
    pub(super) fn new(opts: &'p DumpOptions, path: &'p str) -> Self {
        Dumper {
            opts,
            json: opts.format == DumpFormat::Json,
            deep: opts.deep_iteration
                || opts.print_data_log
                || opts.transaction_log_decoder
                || opts.offsets_decoder
                || opts.share_group_state_decoder
                || opts.cluster_metadata_decoder
                || opts.remote_log_metadata_decoder,
            print_data: opts.print_data_log
                || opts.transaction_log_decoder
                || opts.offsets_decoder
                || opts.share_group_state_decoder
                || opts.cluster_metadata_decoder
                || opts.remote_log_metadata_decoder,
            path,
            line: String::with_capacity(256),
            json_line: Vec::with_capacity(2 * JSON_BLOCK),
            rec_first: true,
            last_offset: -1,
            first_tracked: None,
            summary: LogDumpSummary {
                batches: 0,
                records: 0,
                invalid_batches: 0,
                errors: 0,
                valid_bytes: 0,
                invalid_bytes: 0,
                max_bytes_set: false,
                cut_by_max_bytes: false,
                tail: Tail::Clean,
                non_consecutive: Vec::new(),
                non_consecutive_more: 0,
            },
        }
    }

    pub(super) fn decompressor(&self) -> Decompressor {
        Decompressor::new(
            self.opts
                .max_decompressed
                .unwrap_or(format::codec::DEFAULT_MAX_DECOMPRESSED),
        )
    }

    /// Print one entry (v2 batch or legacy entry).
    pub(super) fn entry(
        &mut self,
        entry: RawEntry<'_>,
        dec: &mut Decompressor,
        out: &mut dyn Write,
        err: &mut dyn Write,
    ) -> io::Result<()> {
        self.summary.batches += 1;
        self.summary.valid_bytes = entry.position + entry.len() as u64;
        if entry.magic() >= 2 {
            self.v2(entry, None, dec, out, err)
        } else {
            self.legacy(entry, None, dec, out, err)
        }
    }

    /// Print one item of a walk: a whole entry, or one too large to hold
    /// (`segment::BigEntry`, checked streaming: its line from its header, its records not
    /// printed), so the dump's buffers stay bounded whatever an entry declares.
    pub(super) fn item(
        &mut self,
        item: crate::read::segment::Item<'_>,
        dec: &mut Decompressor,
        out: &mut dyn Write,
        err: &mut dyn Write,
    ) -> io::Result<()> {
        let big = match item {
            crate::read::segment::Item::Entry(e) => return self.entry(e, dec, out, err),
            crate::read::segment::Item::Big(big) => big,
        };
        self.summary.batches += 1;
        self.summary.valid_bytes = big.position + big.len;
        let head = big.header_only();
        let entry = RawEntry {
            position: big.position,
            bytes: &head,
        };
        if big.magic() >= 2 {
            self.v2(entry, Some(&big), dec, out, err)
        } else {
            self.legacy(entry, Some(&big), dec, out, err)
        }
    }

    pub(super) fn sequential<'d>(
        &'d mut self,
        out: &'d mut dyn Write,
        err: &'d mut dyn Write,
    ) -> SeqWalk<'d, 'p> {
        SeqWalk {
            dec: self.decompressor(),
            d: self,
            out,
            err,
            error: None,
        }
    }

    /// Append the dump of the next piece of the file — printed by `piece` (a fresh
    /// [`Dumper`] of the same file and options) into `piece_out` / `piece_err` — as if
    /// this dumper had printed its entries itself: the output in order, the counts added,
    /// and the offset pair across the boundary checked as the sequential walk checks it.
    pub(super) fn absorb(
        &mut self,
        piece: Dumper<'p>,
        piece_out: &[u8],
        piece_err: &[u8],
        out: &mut dyn Write,
        err: &mut dyn Write,
    ) -> io::Result<()> {
        self.flush_json(out)?;
        out.write_all(piece_out)?;
        err.write_all(piece_err)?;
        let p = piece.summary;
        let s = &mut self.summary;
        s.batches += p.batches;
        s.records += p.records;
        s.invalid_batches += p.invalid_batches;
        s.errors += p.errors;
        if p.batches > 0 {
            s.valid_bytes = p.valid_bytes;
        }
        if let Some(first) = piece.first_tracked {
            if self.first_tracked.is_none() {
                self.first_tracked = Some(first);
            }
            if self.last_offset != -1 && first != self.last_offset.wrapping_add(1) {
                push_pair(s, (self.last_offset, first));
            }
            self.last_offset = piece.last_offset;
        }
        for pair in p.non_consecutive {
            push_pair(s, pair);
        }
        s.non_consecutive_more += p.non_consecutive_more;
        Ok(())
    }

    /// Start a batch line (see [`JBatch::write_head`]).
    pub(super) fn begin_batch(&mut self, jb: &JBatch) {
        jb.write_head(&mut self.json_line);
        self.rec_first = true;
    }

    /// Finish a batch line and hand full blocks to `out`.
    pub(super) fn end_batch(
        &mut self,
        jb: &JBatch,
        error: Option<&str>,
        out: &mut dyn Write,
    ) -> io::Result<()> {
        jb.write_tail(&mut self.json_line, error);
        if self.json_line.len() >= JSON_BLOCK {
            self.flush_json(out)?;
        }
        Ok(())
    }

    /// After a record: once the pending text reaches a block, hand it to `out` even in
    /// the middle of a batch's line, so a batch whose records print hundreds of MB is
    /// streamed rather than held whole (the line is only ever appended to).
    pub(super) fn flush_long_line(&mut self, out: &mut dyn Write) -> io::Result<()> {
        if self.json_line.len() >= JSON_BLOCK {
            self.flush_json(out)?;
        }
        Ok(())
    }

    /// Write the pending JSON lines.
    pub(super) fn flush_json(&mut self, out: &mut dyn Write) -> io::Result<()> {
        out.write_all(&self.json_line)?;
        self.json_line.clear();
        Ok(())
    }

    pub(super) fn track_offset(&mut self, offset: i64) {
        if self.first_tracked.is_none() {
            self.first_tracked = Some(offset);
        }
        if self.last_offset == -1 {
            self.last_offset = offset;
        } else {
            if offset != self.last_offset.wrapping_add(1) {
                push_pair(&mut self.summary, (self.last_offset, offset));
            }
            self.last_offset = offset;
        }
    }

    pub(super) fn error(
        &mut self,
        err: &mut dyn Write,
        position: u64,
        e: &dyn std::fmt::Display,
    ) -> io::Result<String> {
        self.summary.errors += 1;
        let msg = e.to_string();
        if !self.json {
            writeln!(
                err,
                "Error in batch at position {position} of {}: {msg}",
                self.path
            )?;
        }
        Ok(msg)
    }

    /// Key and payload text for `--print-data-log` (default string decoder, or the
    /// transaction-log or offsets decoder).
    pub(super) fn data_strings(
        &self,
        offset: i64,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
    ) -> (Option<String>, Option<String>) {
        if self.opts.offsets_decoder && !self.opts.legacy_decoder_text {
            // Kafka 3.8+ (4.x): JSON keys and payloads of every record type.
            return crate::dump::coordinator_json::record(
                crate::read::format::groups::Topic::ConsumerOffsets,
                key,
                value,
                offset,
            );
        }
        // Kafka's order: offsets, transaction log, cluster metadata, remote log metadata,
        // share group state.
        if self.opts.cluster_metadata_decoder
            && !self.opts.offsets_decoder
            && !self.opts.transaction_log_decoder
        {
            return crate::dump::coordinator_json::metadata_record(value, offset);
        }
        if self.opts.remote_log_metadata_decoder
            && !self.opts.offsets_decoder
            && !self.opts.transaction_log_decoder
            && !self.opts.cluster_metadata_decoder
        {
            return crate::dump::remote_log_text::record(value, offset);
        }
        if self.opts.share_group_state_decoder
            && !self.opts.remote_log_metadata_decoder
            && !self.opts.offsets_decoder
            && !self.opts.transaction_log_decoder
            && !self.opts.cluster_metadata_decoder
        {
            return crate::dump::coordinator_json::record(
                crate::read::format::groups::Topic::ShareGroupState,
                key,
                value,
                offset,
            );
        }
        if self.opts.transaction_log_decoder || self.opts.offsets_decoder {
            // Kafka's option parsing checks --offsets-decoder first: it wins over
            // --transaction-log-decoder when both are given.
            let decoded = if self.opts.offsets_decoder {
                decoders::offsets(key, value, offset)
            } else if self.opts.transaction_log_json {
                return crate::dump::txnlog_json::transaction_log_json(key, value, offset);
            } else {
                decoders::transaction_log(key, value)
            };
            match decoded {
                Ok(kv) => kv,
                Err(e) => (
                    Some(format!("Error at offset {offset}, skipping. {e}")),
                    None,
                ),
            }
        } else {
            (
                key.map(|k| String::from_utf8_lossy(k).into_owned()),
                value.map(|v| String::from_utf8_lossy(v).into_owned()),
            )
        }
    }

    /// Append ` key: … payload: …` (or `| key: …` without metadata) to the line.
    pub(super) fn push_data(
        &mut self,
        prefix: &str,
        offset: i64,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
    ) {
        let (k, v) = self.data_strings(offset, key, value);
        let mut prefix = prefix;
        // Keys and payloads are escaped (`crate::escape`): kafka-dump-log prints them raw.
        if let Some(k) = k {
            let _ = write!(self.line, "{prefix}key: ");
            crate::escape::push(&mut self.line, &k);
            prefix = " ";
        }
        let _ = prefix;
        if let Some(v) = v {
            self.line.push_str(" payload: ");
            crate::escape::push(&mut self.line, &v);
        }
    }

    /// Append `,"key":…,"value":…` for `--print-data-log` (data objects, or the
    /// transaction-log decoder's text).
    pub(super) fn push_json_data(
        &self,
        buf: &mut Vec<u8>,
        offset: i64,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
    ) {
        if self.opts.transaction_log_decoder
            || self.opts.offsets_decoder
            || self.opts.share_group_state_decoder
            || self.opts.cluster_metadata_decoder
            || self.opts.remote_log_metadata_decoder
        {
            let (k, v) = self.data_strings(offset, key, value);
            push_opt_text(buf, b",\"key\":", k.as_deref());
            push_opt_text(buf, b",\"value\":", v.as_deref());
        } else {
            push_opt_data(buf, b",\"key\":", key);
            push_opt_data(buf, b",\"value\":", value);
        }
    }

    /// Decode a control record: text for the record line and a JSON value.
    pub(super) fn control(
        &self,
        rec: &Record<'_>,
    ) -> Result<(String, serde_json::Value), FormatError> {
        let key = parse_control_key(rec.key)?;
        let value = rec.value.unwrap_or(&[]);
        let kind = key.kind;
        let decoded = |f: fn(&[u8]) -> Result<String, FormatError>, label: &str| {
            let j = f(value)?;
            let v: serde_json::Value = serde_json::from_str(&j).unwrap_or(serde_json::Value::Null);
            Ok::<_, FormatError>((
                format!(" {label} {j}"),
                serde_json::json!({"type": kind.name(), "data": v}),
            ))
        };
        match kind {
            ControlType::Abort | ControlType::Commit => {
                let m = parse_end_txn_value(rec.value)?;
                Ok((
                    format!(
                        " endTxnMarker: {} coordinatorEpoch: {}",
                        kind.name(),
                        m.coordinator_epoch
                    ),
                    serde_json::json!({"type": kind.name(), "version": m.version,
                        "coordinatorEpoch": m.coordinator_epoch}),
                ))
            }
            ControlType::SnapshotHeader => {
                decoded(decoders::snapshot_header_json, "SnapshotHeader")
            }
            ControlType::SnapshotFooter => {
                decoded(decoders::snapshot_footer_json, "SnapshotFooter")
            }
            ControlType::KraftVersion => decoded(decoders::kraft_version_json, "KRaftVersion"),
            ControlType::KraftVoters => decoded(decoders::voters_json, "KRaftVoters"),
            // Kafka 4.1+ (`DumpLogSegments.printControlRecord`, KAFKA-19069) prints the
            // message as JSON after `LeaderChange:`; before, only its type. A value that
            // does not decode keeps the type line.
            ControlType::LeaderChange => {
                let text = decoders::leader_change_json(value).ok();
                let j = (text.as_deref())
                    .and_then(|j| serde_json::from_str::<serde_json::Value>(j).ok());
                let line = match &text {
                    Some(t) if j.is_some() => format!(" LeaderChange: {t}"),
                    _ => format!(" controlType: {}({})", kind.name(), kind.id()),
                };
                Ok((line, serde_json::json!({"type": kind.name(), "data": j})))
            }
            ControlType::Unknown(id) => Ok((
                format!(" controlType: UNKNOWN({id})"),
                serde_json::json!({"type": "UNKNOWN", "id": id}),
            )),
        }
    }
}

//! The lines of one batch and its records: v2 batches ([`Dumper::v2`], records in
//! [`Dumper::v2_record`]) and legacy message sets ([`Dumper::legacy`]).

use super::dumper::*;
use super::json_text::*;
use super::*;
use crate::read::segment::BigEntry;

/// Why the records of an entry too large to hold are not printed.
struct NotDecoded(u64);

impl std::fmt::Display for NotDecoded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the batch is {} bytes, more than the {} MiB klogscan holds in memory: its header and CRC were checked (streaming), its records were not printed",
            self.0,
            crate::read::segment::BIG_ENTRY >> 20
        )
    }
}

impl Dumper<'_> {
    /// One v2 batch. `big`: the entry is too large to hold (`entry` is then its
    /// header-only copy, `BigEntry::header_only`): the line shows its real size and the
    /// CRC verdict computed streaming; its records are not printed (said on `err`).
    pub(super) fn v2(
        &mut self,
        entry: RawEntry<'_>,
        big: Option<&BigEntry>,
        dec: &mut Decompressor,
        out: &mut dyn Write,
        err: &mut dyn Write,
    ) -> io::Result<()> {
        let b = match entry.as_v2() {
            Ok(b) => b,
            Err(e) => {
                let msg = self.error(err, entry.position, &e)?;
                if self.json {
                    let jb = JBatch {
                        t: "batch",
                        last_offset: entry.offset(),
                        position: entry.position,
                        size: entry.len(),
                        magic: entry.magic(),
                        timestamp_type: "unknown",
                        compresscodec: "unknown",
                        ..Default::default()
                    };
                    self.begin_batch(&jb);
                    self.end_batch(&jb, Some(&msg), out)?;
                }
                return Ok(());
            }
        };
        let valid = big.map_or_else(|| b.is_valid(), BigEntry::crc_valid);
        let size = big.map_or(b.size(), |g| g.len as usize);
        if !valid {
            self.summary.invalid_batches += 1;
        }
        // `DefaultRecordBatch.lastSequence()`, as the tool prints it: -1 for a base of -1
        // only, any other base through `incrementSequence` (-5 over two records is -4).
        let last_seq = b.last_sequence();
        let ts_type = b.timestamp_type();
        if !self.json {
            self.line.clear();
            let dh = match b.delete_horizon_ms() {
                Some(ms) => format!("OptionalLong[{ms}]"),
                None => "OptionalLong.empty".to_string(),
            };
            let _ = write!(
                self.line,
                "baseOffset: {} lastOffset: {} count: {} baseSequence: {} lastSequence: {} producerId: {} producerEpoch: {} partitionLeaderEpoch: {} isTransactional: {} isControl: {} deleteHorizonMs: {} position: {} {}: {} size: {} magic: {} compresscodec: {} crc: {} isvalid: {}",
                b.base_offset(),
                b.last_offset(),
                b.records_count(),
                b.base_sequence(),
                last_seq,
                b.producer_id(),
                b.producer_epoch(),
                b.partition_leader_epoch(),
                b.is_transactional(),
                b.is_control(),
                dh,
                b.position(),
                ts_type.name(),
                b.max_timestamp(),
                size,
                b.magic(),
                b.compression().name(),
                b.crc(),
                valid
            );
            writeln!(out, "{}", self.line)?;
        }
        let jb = self.json.then(|| JBatch {
            t: "batch",
            base_offset: Some(b.base_offset()),
            last_offset: b.last_offset(),
            count: Some(b.records_count()),
            base_sequence: Some(b.base_sequence()),
            last_sequence: Some(last_seq),
            producer_id: Some(b.producer_id()),
            producer_epoch: Some(b.producer_epoch()),
            partition_leader_epoch: Some(b.partition_leader_epoch()),
            is_transactional: Some(b.is_transactional()),
            is_control: Some(b.is_control()),
            delete_horizon_ms: Some(b.delete_horizon_ms()),
            position: b.position(),
            timestamp_type: ts_type.name(),
            max_timestamp: b.max_timestamp(),
            size,
            magic: b.magic(),
            compresscodec: b.compression().name(),
            crc: b.crc(),
            isvalid: valid,
            records: self.deep,
        });
        if let Some(jb) = &jb {
            self.begin_batch(jb);
        }
        let mut error = None;
        if let (true, Some(g)) = (self.deep, big) {
            error = Some(self.error(err, g.position, &NotDecoded(g.len))?);
        } else if self.deep {
            let recs = if b.compression() == Compression::None {
                Ok(Records::new(
                    b.records_bytes(),
                    b.records_count(),
                    b.position() + V2_HEADER_SIZE as u64,
                ))
            } else {
                format::batch_records(&b, dec)
            };
            match recs {
                Err(e) => error = Some(self.error(err, b.position(), &e)?),
                Ok(recs) => {
                    for r in recs {
                        match r {
                            Err(e) => {
                                error = Some(self.error(err, b.position(), &e)?);
                                break;
                            }
                            Ok(r) => {
                                if let Some(e) = self.v2_record(&b, ts_type, &r, out)? {
                                    error = Some(self.error(err, b.position(), &e)?);
                                }
                            }
                        }
                    }
                }
            }
        }
        if let Some(jb) = &jb {
            self.end_batch(jb, error.as_deref(), out)?;
        }
        Ok(())
    }

    /// Print (or collect) one v2 record. Returns a control-record decoding error, if any.
    pub(super) fn v2_record(
        &mut self,
        b: &BatchView<'_>,
        ts_type: TimestampType,
        r: &Record<'_>,
        out: &mut dyn Write,
    ) -> io::Result<Option<FormatError>> {
        self.summary.records += 1;
        let offset = b.base_offset().wrapping_add(r.offset_delta as i64);
        self.track_offset(offset);
        let ts = if ts_type == TimestampType::LogAppendTime {
            b.max_timestamp()
        } else {
            b.base_timestamp().wrapping_add(r.timestamp_delta)
        };
        let seq = if b.base_sequence() >= 0 {
            crate::read::format::bytes::increment_sequence(b.base_sequence(), r.offset_delta)
        } else {
            -1
        };
        let mut ctl_err = None;
        let control = if b.is_control() {
            match self.control(r) {
                Ok((t, j)) => Some((ControlText::Text(t), j)),
                Err(e) => {
                    ctl_err = Some(e);
                    Some((
                        ControlText::None,
                        serde_json::json!({"error": e.to_string()}),
                    ))
                }
            }
        } else {
            None
        };
        if self.json {
            let mut buf = std::mem::take(&mut self.json_line);
            if !std::mem::take(&mut self.rec_first) {
                buf.push(b',');
            }
            buf.extend_from_slice(b"{\"offset\":");
            push_i64(&mut buf, offset);
            buf.extend_from_slice(b",\"timestamp\":");
            push_i64(&mut buf, ts);
            buf.extend_from_slice(b",\"keySize\":");
            push_i64(&mut buf, i64::from(r.key_size()));
            buf.extend_from_slice(b",\"valueSize\":");
            push_i64(&mut buf, i64::from(r.value_size()));
            buf.extend_from_slice(b",\"sequence\":");
            push_i64(&mut buf, i64::from(seq));
            buf.extend_from_slice(b",\"headers\":[");
            for (i, h) in r.headers().enumerate() {
                if i > 0 {
                    buf.push(b',');
                }
                buf.extend_from_slice(b"{\"key\":");
                push_data(&mut buf, h.key);
                if self.print_data {
                    push_opt_data(&mut buf, b",\"value\":", h.value);
                }
                buf.push(b'}');
            }
            buf.push(b']');
            if let Some((_, j)) = &control {
                buf.extend_from_slice(b",\"control\":");
                // Writing into a Vec cannot fail.
                let _ = serde_json::to_writer(&mut buf, j);
            }
            if self.print_data && !b.is_control() {
                self.push_json_data(&mut buf, offset, r.key, r.value);
            }
            buf.push(b'}');
            self.json_line = buf;
            self.flush_long_line(out)?;
            return Ok(ctl_err);
        }
        self.line.clear();
        let mut prefix = "| ";
        if !self.opts.skip_record_metadata {
            let _ = write!(
                self.line,
                "| offset: {offset} {}: {ts} keySize: {} valueSize: {} sequence: {seq} headerKeys: [",
                ts_type.name(),
                r.key_size(),
                r.value_size()
            );
            for (i, h) in r.headers().enumerate() {
                if i > 0 {
                    self.line.push(',');
                }
                crate::escape::push(&mut self.line, &String::from_utf8_lossy(h.key));
            }
            self.line.push(']');
            if let Some((ControlText::Text(t), _)) = &control {
                self.line.push_str(t);
            }
            prefix = " ";
        }
        if self.print_data && !b.is_control() {
            self.push_data(prefix, offset, r.key, r.value);
        }
        writeln!(out, "{}", self.line)?;
        Ok(ctl_err)
    }

    /// One legacy entry; `big` as for [`Dumper::v2`].
    pub(super) fn legacy(
        &mut self,
        entry: RawEntry<'_>,
        big: Option<&BigEntry>,
        dec: &mut Decompressor,
        out: &mut dyn Write,
        err: &mut dyn Write,
    ) -> io::Result<()> {
        // Batch-level fields straight from the fixed header (the entry is ≥ 26 bytes).
        let bytes = entry.bytes;
        let magic = entry.magic();
        let crc = u32::from_be_bytes([bytes[12], bytes[13], bytes[14], bytes[15]]);
        let attr = bytes[17];
        let ts_type = if magic == 0 {
            TimestampType::NoTimestampType
        } else if attr & 0x08 != 0 {
            TimestampType::LogAppendTime
        } else {
            TimestampType::CreateTime
        };
        let ts = if magic == 0 {
            -1
        } else {
            i64::from_be_bytes(bytes[18..26].try_into().unwrap_or([0xff; 8]))
        };
        let valid = big.map_or_else(|| crc32fast::hash(&bytes[16..]) == crc, BigEntry::crc_valid);
        let size = big.map_or(entry.len(), |g| g.len as usize);
        if !valid {
            self.summary.invalid_batches += 1;
        }
        let codec = Compression::from_id(attr).name();
        if !self.json {
            writeln!(
                out,
                "offset: {} position: {} {}: {ts} size: {} magic: {magic} compresscodec: {codec} crc: {crc} isvalid: {valid}",
                entry.offset(),
                entry.position,
                ts_type.name(),
                size,
            )?;
        }
        let jb = self.json.then(|| JBatch {
            t: "batch",
            last_offset: entry.offset(),
            position: entry.position,
            timestamp_type: ts_type.name(),
            max_timestamp: ts,
            size,
            magic,
            compresscodec: codec,
            crc,
            isvalid: valid,
            records: self.deep,
            ..Default::default()
        });
        if let Some(jb) = &jb {
            self.begin_batch(jb);
        }
        let mut error = None;
        if let (true, Some(g)) = (self.deep, big) {
            error = Some(self.error(err, g.position, &NotDecoded(g.len))?);
        } else if self.deep {
            match LegacyMessage::new(entry) {
                Err(e) => error = Some(self.error(err, entry.position, &e)?),
                Ok(msg) => match msg.inner_messages(dec) {
                    Err(e) => error = Some(self.error(err, entry.position, &e)?),
                    Ok(inner) => {
                        for m in inner {
                            match m {
                                Err(e) => {
                                    error = Some(self.error(err, entry.position, &e)?);
                                    break;
                                }
                                Ok(m) => {
                                    self.summary.records += 1;
                                    self.track_offset(m.offset);
                                    let im = m.message;
                                    let key = im.key();
                                    let value = im.value();
                                    let ks = key.map_or(-1, |k| k.len() as i32);
                                    let vs = value.map_or(-1, |v| v.len() as i32);
                                    if self.json {
                                        let mut buf = std::mem::take(&mut self.json_line);
                                        if !std::mem::take(&mut self.rec_first) {
                                            buf.push(b',');
                                        }
                                        buf.extend_from_slice(b"{\"offset\":");
                                        push_i64(&mut buf, m.offset);
                                        buf.extend_from_slice(b",\"timestamp\":");
                                        push_i64(&mut buf, m.timestamp);
                                        buf.extend_from_slice(b",\"keySize\":");
                                        push_i64(&mut buf, i64::from(ks));
                                        buf.extend_from_slice(b",\"valueSize\":");
                                        push_i64(&mut buf, i64::from(vs));
                                        buf.extend_from_slice(b",\"isValid\":");
                                        push_bool(&mut buf, im.is_valid());
                                        buf.extend_from_slice(b",\"crc\":");
                                        push_u64(&mut buf, u64::from(im.crc()));
                                        if self.print_data {
                                            self.push_json_data(&mut buf, m.offset, key, value);
                                        }
                                        buf.push(b'}');
                                        self.json_line = buf;
                                        self.flush_long_line(out)?;
                                        continue;
                                    }
                                    self.line.clear();
                                    let mut prefix = "| ";
                                    if !self.opts.skip_record_metadata {
                                        let _ = write!(
                                            self.line,
                                            "| offset: {} {}: {} keySize: {ks} valueSize: {vs} isValid: {} crc: {}}}",
                                            m.offset,
                                            ts_type.name(),
                                            m.timestamp,
                                            im.is_valid(),
                                            im.crc()
                                        );
                                        prefix = " ";
                                    }
                                    if self.print_data {
                                        self.push_data(prefix, m.offset, key, value);
                                    }
                                    writeln!(out, "{}", self.line)?;
                                }
                            }
                        }
                    }
                },
            }
        }
        if let Some(jb) = &jb {
            self.end_batch(jb, error.as_deref(), out)?;
        }
        Ok(())
    }
}

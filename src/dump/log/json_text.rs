//! The JSON Lines of a log dump, written by hand (see the note below).

use super::*;

// ---- JSON text, written by hand ------------------------------------------------------
//
// serde_json's field-name escaping (`serialize_str` on every key) and the per-record
// `JRecord`/`JHeader`/`String` values were ≈ 17 % of a `--deep-iteration --format json`
// dump. The lines below are written directly; the bytes are the ones serde_json's compact
// writer produced (keys are plain ASCII names; strings needing escapes and the control
// record's `serde_json::Value` still go through serde_json; the dump goldens pin this).

/// Append the decimal text of `v` (what serde_json prints), by the `itoa` crate.
pub(super) fn push_u64(buf: &mut Vec<u8>, v: u64) {
    buf.extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
}

/// Append the decimal text of `v`, with a leading `-` when negative.
pub(super) fn push_i64(buf: &mut Vec<u8>, v: i64) {
    if v < 0 {
        buf.push(b'-');
    }
    push_u64(buf, v.unsigned_abs());
}

pub(super) fn push_bool(buf: &mut Vec<u8>, v: bool) {
    buf.extend_from_slice(if v { b"true" } else { b"false" });
}

/// Append `s` as a JSON string: verbatim between quotes when nothing needs escaping,
/// else serde_json's escaping.
pub(super) fn push_str(buf: &mut Vec<u8>, s: &str) {
    if s.bytes().all(|c| c >= 0x20 && c != b'"' && c != b'\\') {
        buf.reserve(s.len() + 2);
        buf.push(b'"');
        buf.extend_from_slice(s.as_bytes());
        buf.push(b'"');
    } else {
        // Writing into a Vec cannot fail.
        let _ = serde_json::to_writer(&mut *buf, s);
    }
}

/// Append bytes as `{"text": …}` when valid UTF-8, else `{"bytes": base64}`.
pub(super) fn push_data(buf: &mut Vec<u8>, b: &[u8]) {
    match std::str::from_utf8(b) {
        Ok(s) => push_text(buf, s),
        Err(_) => {
            buf.extend_from_slice(b"{\"bytes\":");
            push_str(buf, &base64::engine::general_purpose::STANDARD.encode(b));
            buf.push(b'}');
        }
    }
}

/// Append `{"text": s}`.
pub(super) fn push_text(buf: &mut Vec<u8>, s: &str) {
    buf.extend_from_slice(b"{\"text\":");
    push_str(buf, s);
    buf.push(b'}');
}

/// Append `,"name":` then `null` or the data object (`Option<Option<JData>>` semantics:
/// the caller skips the field entirely for `None`).
pub(super) fn push_opt_text(buf: &mut Vec<u8>, name: &[u8], v: Option<&str>) {
    buf.extend_from_slice(name);
    match v {
        None => buf.extend_from_slice(b"null"),
        Some(s) => push_text(buf, s),
    }
}

pub(super) fn push_opt_data(buf: &mut Vec<u8>, name: &[u8], v: Option<&[u8]>) {
    buf.extend_from_slice(name);
    match v {
        None => buf.extend_from_slice(b"null"),
        Some(b) => push_data(buf, b),
    }
}

/// One `"type":"batch"` line (fields in output order; `None` fields are left out).
#[derive(Default)]
pub(super) struct JBatch {
    pub(super) t: &'static str,
    pub(super) base_offset: Option<i64>,
    pub(super) last_offset: i64,
    pub(super) count: Option<i32>,
    pub(super) base_sequence: Option<i32>,
    pub(super) last_sequence: Option<i32>,
    pub(super) producer_id: Option<i64>,
    pub(super) producer_epoch: Option<i16>,
    pub(super) partition_leader_epoch: Option<i32>,
    pub(super) is_transactional: Option<bool>,
    pub(super) is_control: Option<bool>,
    pub(super) delete_horizon_ms: Option<Option<i64>>,
    pub(super) position: u64,
    pub(super) timestamp_type: &'static str,
    pub(super) max_timestamp: i64,
    pub(super) size: usize,
    pub(super) magic: i8,
    pub(super) compresscodec: &'static str,
    pub(super) crc: u32,
    pub(super) isvalid: bool,
    /// Whether a `records` array (the records buffer) follows.
    pub(super) records: bool,
}

impl JBatch {
    /// Append the line up to the records: every field before `records`, then
    /// `,"records":[` when `self.records`. [`JBatch::write_tail`] closes it.
    pub(super) fn write_head(&self, buf: &mut Vec<u8>) {
        buf.extend_from_slice(b"{\"type\":");
        push_str(buf, self.t);
        if let Some(v) = self.base_offset {
            buf.extend_from_slice(b",\"baseOffset\":");
            push_i64(buf, v);
        }
        buf.extend_from_slice(b",\"lastOffset\":");
        push_i64(buf, self.last_offset);
        let ints: [(&[u8], Option<i64>); 6] = [
            (b",\"count\":", self.count.map(i64::from)),
            (b",\"baseSequence\":", self.base_sequence.map(i64::from)),
            (b",\"lastSequence\":", self.last_sequence.map(i64::from)),
            (b",\"producerId\":", self.producer_id),
            (b",\"producerEpoch\":", self.producer_epoch.map(i64::from)),
            (
                b",\"partitionLeaderEpoch\":",
                self.partition_leader_epoch.map(i64::from),
            ),
        ];
        for (name, v) in ints {
            if let Some(v) = v {
                buf.extend_from_slice(name);
                push_i64(buf, v);
            }
        }
        if let Some(v) = self.is_transactional {
            buf.extend_from_slice(b",\"isTransactional\":");
            push_bool(buf, v);
        }
        if let Some(v) = self.is_control {
            buf.extend_from_slice(b",\"isControl\":");
            push_bool(buf, v);
        }
        if let Some(v) = self.delete_horizon_ms {
            buf.extend_from_slice(b",\"deleteHorizonMs\":");
            match v {
                Some(v) => push_i64(buf, v),
                None => buf.extend_from_slice(b"null"),
            }
        }
        buf.extend_from_slice(b",\"position\":");
        push_u64(buf, self.position);
        buf.extend_from_slice(b",\"timestampType\":");
        push_str(buf, self.timestamp_type);
        buf.extend_from_slice(b",\"maxTimestamp\":");
        push_i64(buf, self.max_timestamp);
        buf.extend_from_slice(b",\"size\":");
        push_u64(buf, self.size as u64);
        buf.extend_from_slice(b",\"magic\":");
        push_i64(buf, i64::from(self.magic));
        buf.extend_from_slice(b",\"compresscodec\":");
        push_str(buf, self.compresscodec);
        buf.extend_from_slice(b",\"crc\":");
        push_u64(buf, u64::from(self.crc));
        buf.extend_from_slice(b",\"isvalid\":");
        push_bool(buf, self.isvalid);
        if self.records {
            buf.extend_from_slice(b",\"records\":[");
        }
    }

    /// Close what [`JBatch::write_head`] opened: the records array, `error`, the line.
    pub(super) fn write_tail(&self, buf: &mut Vec<u8>, error: Option<&str>) {
        if self.records {
            buf.push(b']');
        }
        if let Some(e) = error {
            buf.extend_from_slice(b",\"error\":");
            push_str(buf, e);
        }
        buf.extend_from_slice(b"}\n");
    }
}

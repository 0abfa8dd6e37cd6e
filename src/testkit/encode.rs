//! The byte-level encoder: v2 record batches, control records, legacy (magic 0/1) messages
//! and compressed wrappers, and every codec framing Kafka stores on disk.
//!
//! This module is deliberately independent of `crate::read::format` (the reader): it shares no
//! code with it, so that the reader can be checked against it. Written from Kafka's
//! `DefaultRecordBatch`, `DefaultRecord`, `LegacyRecord` and the codecs' writers.

use std::io::Write;

// ---------------------------------------------------------------------------------------
// varints
// ---------------------------------------------------------------------------------------

/// Append `v` as a zigzag varint (protobuf `sint32`, `ByteUtils.writeVarint`).
pub fn write_varint(out: &mut Vec<u8>, v: i32) {
    write_unsigned_varint(out, ((v << 1) ^ (v >> 31)) as u32 as u64);
}

/// Append `v` as a zigzag varlong (protobuf `sint64`, `ByteUtils.writeVarlong`).
pub fn write_varlong(out: &mut Vec<u8>, v: i64) {
    write_unsigned_varint(out, ((v << 1) ^ (v >> 63)) as u64);
}

/// Append an unsigned base-128 varint (no zigzag).
pub fn write_unsigned_varint(out: &mut Vec<u8>, mut u: u64) {
    loop {
        if u < 0x80 {
            out.push(u as u8);
            return;
        }
        out.push((u as u8 & 0x7f) | 0x80);
        u >>= 7;
    }
}

fn write_nullable_varint_bytes(out: &mut Vec<u8>, b: Option<&[u8]>) {
    match b {
        None => write_varint(out, -1),
        Some(b) => {
            write_varint(out, b.len() as i32);
            out.extend_from_slice(b);
        }
    }
}

// ---------------------------------------------------------------------------------------
// codecs
// ---------------------------------------------------------------------------------------

/// A compression codec *and framing*, as a writer chooses it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Codec {
    /// No compression (id 0).
    None,
    /// RFC 1952 gzip (id 1).
    Gzip,
    /// snappy in xerial snappy-java stream framing (id 2): what the Java client writes.
    SnappyXerial,
    /// raw (unframed) snappy block (id 2): what librdkafka writes.
    SnappyRaw,
    /// Kafka's LZ4 frame (id 3) with the correct header checksum.
    Lz4,
    /// Kafka's LZ4 frame (id 3) with the broken KAFKA-3160 header checksum (magic 0 only).
    Lz4BrokenHc,
    /// zstd frame (id 4, v2 only).
    Zstd,
}

impl Codec {
    /// The codec id stored in attribute bits 0–2.
    pub fn id(self) -> u8 {
        match self {
            Codec::None => 0,
            Codec::Gzip => 1,
            Codec::SnappyXerial | Codec::SnappyRaw => 2,
            Codec::Lz4 | Codec::Lz4BrokenHc => 3,
            Codec::Zstd => 4,
        }
    }
    /// Short name used in manifests and the testdata README.
    pub fn name(self) -> &'static str {
        match self {
            Codec::None => "none",
            Codec::Gzip => "gzip",
            Codec::SnappyXerial => "snappy-xerial",
            Codec::SnappyRaw => "snappy-raw",
            Codec::Lz4 => "lz4",
            Codec::Lz4BrokenHc => "lz4-broken-hc",
            Codec::Zstd => "zstd",
        }
    }
}

/// Compress `data` with `codec` exactly as that codec's Kafka writer frames it
/// (`Compression.wrapForOutput`).
/// `Codec::None` returns the input unchanged.
pub fn compress(codec: Codec, data: &[u8]) -> Vec<u8> {
    match codec {
        Codec::None => data.to_vec(),
        Codec::Gzip => {
            // Deterministic: flate2 writes mtime 0 and OS 255 unless told otherwise.
            let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::new(6));
            enc.write_all(data).expect("writing to a Vec cannot fail");
            enc.finish().expect("writing to a Vec cannot fail")
        }
        Codec::SnappyXerial => snappy_xerial(data, XERIAL_BLOCK),
        Codec::SnappyRaw => snap::raw::Encoder::new()
            .compress_vec(data)
            .expect("snappy input within limits"),
        Codec::Lz4 => lz4_frame(data, false),
        Codec::Lz4BrokenHc => lz4_frame(data, true),
        Codec::Zstd => zstd::bulk::compress(data, 3).expect("zstd compression"),
    }
}

/// snappy-java's default block size, which Kafka keeps.
pub const XERIAL_BLOCK: usize = 32 * 1024;
/// The xerial stream header: magic `\x82SNAPPY\0`, version 1, min-compatible version 1.
pub const XERIAL_HEADER: [u8; 16] = [
    0x82, b'S', b'N', b'A', b'P', b'P', b'Y', 0, 0, 0, 0, 1, 0, 0, 0, 1,
];

/// xerial snappy-java framing: 16-byte header, then `[len i32 BE][raw snappy block]` chunks,
/// each compressing at most `block` input bytes (`SnappyCompression`).
pub fn snappy_xerial(data: &[u8], block: usize) -> Vec<u8> {
    let mut out = XERIAL_HEADER.to_vec();
    let mut enc = snap::raw::Encoder::new();
    for chunk in data.chunks(block.max(1)) {
        let c = enc.compress_vec(chunk).expect("snappy input within limits");
        out.extend_from_slice(&(c.len() as i32).to_be_bytes());
        out.extend_from_slice(&c);
    }
    out
}

/// xxHash32 (the LZ4 frame header checksum), the format layer's (the `twox-hash` crate).
pub fn xxh32(data: &[u8], seed: u32) -> u32 {
    crate::read::format::codec::xxhash32(data, seed)
}

/// LZ4 frame magic, little-endian on disk (`04 22 4D 18`).
pub const LZ4_MAGIC: [u8; 4] = [0x04, 0x22, 0x4D, 0x18];
/// Kafka's FLG: version 01, independent blocks, no checksums, no content size.
pub const LZ4_FLG: u8 = 0x60;
/// Kafka's BD: 64 KiB maximum block size.
pub const LZ4_BD: u8 = 0x40;
const LZ4_BLOCK: usize = 64 * 1024;

/// The frame-descriptor checksum byte. `broken` reproduces KAFKA-3160: the hash also
/// covers the 4 magic bytes.
pub fn lz4_header_checksum(flg: u8, bd: u8, broken: bool) -> u8 {
    let h = if broken {
        let mut d = LZ4_MAGIC.to_vec();
        d.extend_from_slice(&[flg, bd]);
        xxh32(&d, 0)
    } else {
        xxh32(&[flg, bd], 0)
    };
    ((h >> 8) & 0xff) as u8
}

/// Kafka's LZ4 frame: magic, FLG 0x60, BD 0x40, HC, then ≤64 KiB independent blocks
/// (compressed with `lz4_flex`, or stored raw with the high bit when that is smaller),
/// then the 4-byte zero end mark (`Lz4BlockOutputStream`).
pub fn lz4_frame(data: &[u8], broken_hc: bool) -> Vec<u8> {
    let mut out = LZ4_MAGIC.to_vec();
    out.push(LZ4_FLG);
    out.push(LZ4_BD);
    out.push(lz4_header_checksum(LZ4_FLG, LZ4_BD, broken_hc));
    for chunk in data.chunks(LZ4_BLOCK) {
        let c = lz4_flex::block::compress(chunk);
        if c.len() < chunk.len() {
            out.extend_from_slice(&(c.len() as u32).to_le_bytes());
            out.extend_from_slice(&c);
        } else {
            out.extend_from_slice(&(chunk.len() as u32 | 0x8000_0000).to_le_bytes());
            out.extend_from_slice(chunk);
        }
    }
    out.extend_from_slice(&0u32.to_le_bytes());
    out
}

// ---------------------------------------------------------------------------------------
// v2 records and batches
// ---------------------------------------------------------------------------------------

/// One v2 record, with every field explicit (`DefaultRecord`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RecordSpec {
    /// Record attributes byte (Kafka writes 0).
    pub attributes: i8,
    pub timestamp_delta: i64,
    pub offset_delta: i32,
    pub key: Option<Vec<u8>>,
    pub value: Option<Vec<u8>>,
    pub headers: Vec<(Vec<u8>, Option<Vec<u8>>)>,
}

/// Encode one record (length varint included).
pub fn encode_record(out: &mut Vec<u8>, r: &RecordSpec) {
    let mut body = Vec::with_capacity(32);
    body.push(r.attributes as u8);
    write_varlong(&mut body, r.timestamp_delta);
    write_varint(&mut body, r.offset_delta);
    write_nullable_varint_bytes(&mut body, r.key.as_deref());
    write_nullable_varint_bytes(&mut body, r.value.as_deref());
    write_varint(&mut body, r.headers.len() as i32);
    for (k, v) in &r.headers {
        write_varint(&mut body, k.len() as i32);
        body.extend_from_slice(k);
        write_nullable_varint_bytes(&mut body, v.as_deref());
    }
    write_varint(out, body.len() as i32);
    out.extend_from_slice(&body);
}

/// Control record type ids (`ControlRecordType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ControlKind {
    Abort,
    Commit,
    LeaderChange,
    SnapshotHeader,
    SnapshotFooter,
    KraftVersion,
    KraftVoters,
}

impl ControlKind {
    /// The `type` field of the control key.
    pub fn id(self) -> i16 {
        match self {
            ControlKind::Abort => 0,
            ControlKind::Commit => 1,
            ControlKind::LeaderChange => 2,
            ControlKind::SnapshotHeader => 3,
            ControlKind::SnapshotFooter => 4,
            ControlKind::KraftVersion => 5,
            ControlKind::KraftVoters => 6,
        }
    }
}

/// A control record with key `(version 0, type)` and the given raw value (KRaft types).
pub fn control_record_raw(type_id: i16, value: Option<Vec<u8>>) -> RecordSpec {
    let mut key = 0i16.to_be_bytes().to_vec();
    key.extend_from_slice(&type_id.to_be_bytes());
    RecordSpec {
        key: Some(key),
        value,
        ..RecordSpec::default()
    }
}

/// A COMMIT/ABORT control record: value `(version 0 i16, coordinatorEpoch i32)`.
pub fn end_txn_record(commit: bool, coordinator_epoch: i32) -> RecordSpec {
    let mut value = 0i16.to_be_bytes().to_vec();
    value.extend_from_slice(&coordinator_epoch.to_be_bytes());
    control_record_raw(
        if commit {
            ControlKind::Commit.id()
        } else {
            ControlKind::Abort.id()
        },
        Some(value),
    )
}

/// Raw overrides for the header fields that are normally derived. Applied after the
/// derived values are computed; `crc` last of all (so a wrong CRC can be stored).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct HeaderOverrides {
    pub batch_length: Option<i32>,
    pub magic: Option<i8>,
    pub crc: Option<u32>,
    /// The whole 16-bit attributes field (replaces codec and flag bits).
    pub attributes: Option<i16>,
    pub last_offset_delta: Option<i32>,
    pub max_timestamp: Option<i64>,
    pub records_count: Option<i32>,
}

/// Everything in a v2 batch (`DefaultRecordBatch`). Derived fields (batchLength, crc, attributes,
/// lastOffsetDelta, maxTimestamp, recordsCount) are computed unless overridden.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchSpec {
    pub base_offset: i64,
    pub partition_leader_epoch: i32,
    pub codec: Codec,
    /// Attribute bit 3.
    pub log_append_time: bool,
    /// Attribute bit 4.
    pub transactional: bool,
    /// Attribute bit 5.
    pub control: bool,
    /// Attribute bit 6: baseTimestamp holds the delete horizon.
    pub delete_horizon: bool,
    pub base_timestamp: i64,
    pub producer_id: i64,
    pub producer_epoch: i16,
    pub base_sequence: i32,
    pub records: Vec<RecordSpec>,
    pub overrides: HeaderOverrides,
}

impl Default for BatchSpec {
    fn default() -> Self {
        BatchSpec {
            base_offset: 0,
            partition_leader_epoch: -1,
            codec: Codec::None,
            log_append_time: false,
            transactional: false,
            control: false,
            delete_horizon: false,
            base_timestamp: -1,
            producer_id: -1,
            producer_epoch: -1,
            base_sequence: -1,
            records: Vec::new(),
            overrides: HeaderOverrides::default(),
        }
    }
}

impl BatchSpec {
    /// The attributes the flags and codec give.
    pub fn attributes(&self) -> i16 {
        if let Some(a) = self.overrides.attributes {
            return a;
        }
        let mut a = self.codec.id() as i16;
        if self.log_append_time {
            a |= 0x08;
        }
        if self.transactional {
            a |= 0x10;
        }
        if self.control {
            a |= 0x20;
        }
        if self.delete_horizon {
            a |= 0x40;
        }
        a
    }
    /// lastOffsetDelta: the override, else the largest record offsetDelta (0 when empty).
    pub fn last_offset_delta(&self) -> i32 {
        self.overrides.last_offset_delta.unwrap_or_else(|| {
            self.records
                .iter()
                .map(|r| r.offset_delta)
                .max()
                .unwrap_or(0)
        })
    }
    /// maxTimestamp: the override, else the largest record timestamp (CreateTime), or
    /// baseTimestamp for an empty batch.
    pub fn max_timestamp(&self) -> i64 {
        self.overrides.max_timestamp.unwrap_or_else(|| {
            self.records
                .iter()
                .map(|r| self.base_timestamp.wrapping_add(r.timestamp_delta))
                .max()
                .unwrap_or(self.base_timestamp)
        })
    }
    /// recordsCount: the override, else the number of records.
    pub fn records_count(&self) -> i32 {
        self.overrides
            .records_count
            .unwrap_or(self.records.len() as i32)
    }
    /// baseOffset + lastOffsetDelta.
    pub fn last_offset(&self) -> i64 {
        self.base_offset + self.last_offset_delta() as i64
    }

    /// Encode the batch: the whole log entry, `12 + batchLength` bytes.
    pub fn encode(&self) -> Vec<u8> {
        let mut recs = Vec::new();
        for r in &self.records {
            encode_record(&mut recs, r);
        }
        let payload = compress(self.codec, &recs);
        let mut b = Vec::with_capacity(61 + payload.len());
        b.extend_from_slice(&self.base_offset.to_be_bytes());
        let batch_length = self
            .overrides
            .batch_length
            .unwrap_or((49 + payload.len()) as i32);
        b.extend_from_slice(&batch_length.to_be_bytes());
        b.extend_from_slice(&self.partition_leader_epoch.to_be_bytes());
        b.push(self.overrides.magic.unwrap_or(2) as u8);
        b.extend_from_slice(&[0; 4]); // crc, filled below
        b.extend_from_slice(&self.attributes().to_be_bytes());
        b.extend_from_slice(&self.last_offset_delta().to_be_bytes());
        b.extend_from_slice(&self.base_timestamp.to_be_bytes());
        b.extend_from_slice(&self.max_timestamp().to_be_bytes());
        b.extend_from_slice(&self.producer_id.to_be_bytes());
        b.extend_from_slice(&self.producer_epoch.to_be_bytes());
        b.extend_from_slice(&self.base_sequence.to_be_bytes());
        b.extend_from_slice(&self.records_count().to_be_bytes());
        b.extend_from_slice(&payload);
        let crc = self
            .overrides
            .crc
            .unwrap_or_else(|| crc32c::crc32c(&b[21..]));
        b[17..21].copy_from_slice(&crc.to_be_bytes());
        b
    }
}

/// A COMMIT/ABORT marker batch as the coordinator writes it (always 78 bytes:
/// `MemoryRecords.withEndTransactionMarker`).
pub fn end_txn_marker(
    base_offset: i64,
    producer_id: i64,
    producer_epoch: i16,
    commit: bool,
    coordinator_epoch: i32,
    timestamp: i64,
    partition_leader_epoch: i32,
) -> BatchSpec {
    BatchSpec {
        base_offset,
        partition_leader_epoch,
        transactional: true,
        control: true,
        base_timestamp: timestamp,
        producer_id,
        producer_epoch,
        base_sequence: -1,
        records: vec![end_txn_record(commit, coordinator_epoch)],
        ..BatchSpec::default()
    }
}

// ---------------------------------------------------------------------------------------
// legacy messages (magic 0 and 1)
// ---------------------------------------------------------------------------------------

/// One legacy message (`LegacyRecord`). `crc` overrides the computed CRC-32.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LegacySpec {
    /// The entry's offset field.
    pub offset: i64,
    pub magic: u8,
    /// The attributes byte (codec bits 0–2, timestamp type bit 3 for magic 1).
    pub attributes: u8,
    /// Magic 1 only; ignored for magic 0.
    pub timestamp: i64,
    pub key: Option<Vec<u8>>,
    pub value: Option<Vec<u8>>,
    pub crc: Option<u32>,
}

fn write_nullable_i32_bytes(out: &mut Vec<u8>, b: Option<&[u8]>) {
    match b {
        None => out.extend_from_slice(&(-1i32).to_be_bytes()),
        Some(b) => {
            out.extend_from_slice(&(b.len() as i32).to_be_bytes());
            out.extend_from_slice(b);
        }
    }
}

impl LegacySpec {
    /// Encode the whole entry: `offset(8) size(4) crc(4) magic attributes [timestamp] key value`.
    pub fn encode(&self) -> Vec<u8> {
        let mut msg = vec![self.magic, self.attributes];
        if self.magic >= 1 {
            msg.extend_from_slice(&self.timestamp.to_be_bytes());
        }
        write_nullable_i32_bytes(&mut msg, self.key.as_deref());
        write_nullable_i32_bytes(&mut msg, self.value.as_deref());
        let crc = self.crc.unwrap_or_else(|| crc32fast::hash(&msg));
        let mut out = Vec::with_capacity(16 + msg.len());
        out.extend_from_slice(&self.offset.to_be_bytes());
        out.extend_from_slice(&((4 + msg.len()) as i32).to_be_bytes());
        out.extend_from_slice(&crc.to_be_bytes());
        out.extend_from_slice(&msg);
        out
    }
}

/// An inner message of a legacy compressed wrapper.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LegacyInner {
    pub timestamp: i64,
    pub key: Option<Vec<u8>>,
    pub value: Option<Vec<u8>>,
}

/// A compressed legacy wrapper holding `inner` (`AbstractLegacyRecordBatch`).
///
/// `first_offset` is the absolute offset of the first inner message. Magic 0: inner
/// offsets absolute; magic 1: relative 0..n−1. The wrapper's offset is the absolute last
/// offset; its key is null; for magic 1 (CreateTime) its timestamp is the max inner
/// timestamp, or every inner timestamp with `log_append_time`.
pub fn legacy_wrapper(
    magic: u8,
    codec: Codec,
    first_offset: i64,
    inner: &[LegacyInner],
    log_append_time: Option<i64>,
) -> LegacySpec {
    let ts_bit = if magic == 1 && log_append_time.is_some() {
        0x08
    } else {
        0
    };
    let mut set = Vec::new();
    for (i, m) in inner.iter().enumerate() {
        let off = if magic == 0 {
            first_offset + i as i64
        } else {
            i as i64
        };
        set.extend_from_slice(
            &LegacySpec {
                offset: off,
                magic,
                attributes: ts_bit,
                timestamp: log_append_time.unwrap_or(m.timestamp),
                key: m.key.clone(),
                value: m.value.clone(),
                crc: None,
            }
            .encode(),
        );
    }
    let wrapper_ts =
        log_append_time.unwrap_or_else(|| inner.iter().map(|m| m.timestamp).max().unwrap_or(-1));
    LegacySpec {
        offset: first_offset + inner.len() as i64 - 1,
        magic,
        attributes: codec.id() | ts_bit,
        timestamp: wrapper_ts,
        key: None,
        value: Some(compress(codec, &set)),
        crc: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_match_the_reference_examples() {
        let cases: [(i32, &[u8]); 7] = [
            (0, &[0x00]),
            (-1, &[0x01]),
            (1, &[0x02]),
            (-2, &[0x03]),
            (63, &[0x7e]),
            (64, &[0x80, 0x01]),
            (300, &[0xd8, 0x04]),
        ];
        for (v, enc) in cases {
            let mut out = Vec::new();
            write_varint(&mut out, v);
            assert_eq!(out, enc, "varint {v}");
            let mut out = Vec::new();
            write_varlong(&mut out, v as i64);
            assert_eq!(out, enc, "varlong {v}");
        }
        let mut out = Vec::new();
        write_varint(&mut out, i32::MIN);
        assert_eq!(out, [0xff, 0xff, 0xff, 0xff, 0x0f]);
    }

    #[test]
    fn xxh32_known_vectors() {
        assert_eq!(xxh32(b"", 0), 0x02CC_5D05);
        assert_eq!(xxh32(b"a", 0), 0x550D_7456);
        assert_eq!(xxh32(b"abc", 0), 0x32D1_53FF);
        assert_eq!(
            xxh32(b"Nobody inspects the spammish repetition", 0),
            0xE229_3B2F
        );
        // The frame header every Kafka LZ4 batch starts with: 04 22 4D 18 60 40 82.
        assert_eq!(lz4_header_checksum(LZ4_FLG, LZ4_BD, false), 0x82);
        assert_ne!(lz4_header_checksum(LZ4_FLG, LZ4_BD, true), 0x82);
    }

    #[test]
    fn marker_batch_is_78_bytes_with_the_documented_record() {
        let b = end_txn_marker(5, 4001, 17, true, 7, 1_572_948_000_000, 3).encode();
        assert_eq!(b.len(), 78);
        assert_eq!(&b[8..12], &66i32.to_be_bytes());
        assert_eq!(&b[21..23], &[0x00, 0x30]);
        assert_eq!(
            &b[61..],
            &[0x20, 0, 0, 0, 0x08, 0, 0, 0, 1, 0x0c, 0, 0, 0, 0, 0, 7, 0]
        );
        assert_eq!(
            u32::from_be_bytes(b[17..21].try_into().unwrap()),
            crc32c::crc32c(&b[21..])
        );
    }

    #[test]
    fn lz4_frame_decodes_with_lz4_flex_blocks() {
        let data: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        let f = lz4_frame(&data, false);
        assert_eq!(&f[..7], &[0x04, 0x22, 0x4d, 0x18, 0x60, 0x40, 0x82]);
        // walk the blocks by hand
        let mut pos = 7;
        let mut out = Vec::new();
        loop {
            let n = u32::from_le_bytes(f[pos..pos + 4].try_into().unwrap());
            pos += 4;
            if n == 0 {
                break;
            }
            let len = (n & 0x7fff_ffff) as usize;
            if n & 0x8000_0000 != 0 {
                out.extend_from_slice(&f[pos..pos + len]);
            } else {
                out.extend(lz4_flex::block::decompress(&f[pos..pos + len], 65536).unwrap());
            }
            pos += len;
        }
        assert_eq!(pos, f.len());
        assert_eq!(out, data);
    }

    #[test]
    fn xerial_chunks_are_at_most_32k() {
        let data: Vec<u8> = (0..100_000u32).map(|i| (i * 7 % 256) as u8).collect();
        let f = snappy_xerial(&data, XERIAL_BLOCK);
        assert_eq!(&f[..16], &XERIAL_HEADER);
        let mut pos = 16;
        let mut out = Vec::new();
        let mut chunks = 0;
        while pos < f.len() {
            let n = i32::from_be_bytes(f[pos..pos + 4].try_into().unwrap()) as usize;
            pos += 4;
            let d = snap::raw::Decoder::new()
                .decompress_vec(&f[pos..pos + n])
                .unwrap();
            assert!(d.len() <= XERIAL_BLOCK);
            out.extend(d);
            pos += n;
            chunks += 1;
        }
        assert_eq!(chunks, 4);
        assert_eq!(out, data);
    }

    #[test]
    fn legacy_crc_and_layout() {
        let m = LegacySpec {
            offset: 9,
            magic: 1,
            attributes: 0,
            timestamp: 1000,
            key: None,
            value: Some(b"abc".to_vec()),
            crc: None,
        }
        .encode();
        assert_eq!(m.len(), 12 + 22 + 3);
        assert_eq!(&m[8..12], &25i32.to_be_bytes());
        assert_eq!(
            u32::from_be_bytes(m[12..16].try_into().unwrap()),
            crc32fast::hash(&m[16..])
        );
        assert_eq!(&m[26..30], &(-1i32).to_be_bytes());
    }
}

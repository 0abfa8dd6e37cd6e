//! Legacy (magic 0/1) messages: inner iteration of compressed wrappers, absolute offsets,
//! timestamps, Kafka's wrapper checks, robustness, and the real legacy data.

use std::io::Write;

use klogscan::partition::event::{Classified, classify};
use klogscan::read::format::codec::xxhash32;
use klogscan::read::format::{
    Compression, Decompressor, Entries, FormatError, LegacyMessage, Problem, RawEntry,
    TimestampType,
};
use proptest::prelude::*;

/// A legacy entry `offset(8) size(4) crc(4) magic attrs [timestamp] key value`.
fn msg(
    offset: i64,
    magic: u8,
    attrs: u8,
    ts: i64,
    key: Option<&[u8]>,
    value: Option<&[u8]>,
) -> Vec<u8> {
    let mut body = vec![magic, attrs];
    if magic == 1 {
        body.extend_from_slice(&ts.to_be_bytes());
    }
    for f in [key, value] {
        match f {
            Some(b) => {
                body.extend_from_slice(&(b.len() as i32).to_be_bytes());
                body.extend_from_slice(b);
            }
            None => body.extend_from_slice(&(-1i32).to_be_bytes()),
        }
    }
    let mut out = offset.to_be_bytes().to_vec();
    out.extend_from_slice(&((body.len() + 4) as i32).to_be_bytes());
    out.extend_from_slice(&crc32fast::hash(&body).to_be_bytes());
    out.extend_from_slice(&body);
    out
}

fn compress(codec: Compression, data: &[u8], broken_lz4_hc: bool) -> Vec<u8> {
    match codec {
        Compression::Gzip => {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            e.write_all(data).unwrap();
            e.finish().unwrap()
        }
        Compression::Snappy => snap::raw::Encoder::new().compress_vec(data).unwrap(),
        Compression::Lz4 => {
            let mut out = vec![0x04, 0x22, 0x4D, 0x18, 0x60, 0x40];
            let hc = if broken_lz4_hc {
                xxhash32(&out, 0)
            } else {
                xxhash32(&out[4..], 0)
            };
            out.push((hc >> 8) as u8);
            let b = lz4_flex::block::compress(data);
            out.extend_from_slice(&(b.len() as u32).to_le_bytes());
            out.extend_from_slice(&b);
            out.extend_from_slice(&0u32.to_le_bytes());
            out
        }
        Compression::Zstd => zstd::bulk::compress(data, 1).unwrap(),
        _ => data.to_vec(),
    }
}

/// A wrapper of `inner` (already framed entries) with `codec`.
fn wrapper(
    offset: i64,
    magic: u8,
    codec: Compression,
    ts_attr: u8,
    ts: i64,
    inner: &[Vec<u8>],
) -> Vec<u8> {
    let set: Vec<u8> = inner.concat();
    let id = match codec {
        Compression::Gzip => 1,
        Compression::Snappy => 2,
        Compression::Lz4 => 3,
        Compression::Zstd => 4,
        _ => 0,
    };
    let value = compress(codec, &set, magic == 0);
    msg(offset, magic, id | ts_attr, ts, None, Some(&value))
}

fn view(bytes: &[u8]) -> LegacyMessage<'_> {
    LegacyMessage::new(RawEntry {
        position: 1000,
        bytes,
    })
    .unwrap()
}

type Row = (i64, i64, TimestampType, Vec<u8>, bool);

fn collect(bytes: &[u8]) -> Result<Vec<Row>, FormatError> {
    let m = view(bytes);
    let mut d = Decompressor::default();
    let mut out = Vec::new();
    for r in m.inner_messages(&mut d)? {
        let r = r?;
        out.push((
            r.offset,
            r.timestamp,
            r.timestamp_type,
            r.message.value().unwrap_or_default().to_vec(),
            r.message.is_valid(),
        ));
    }
    Ok(out)
}

const LEGACY_CODECS: [Compression; 3] = [Compression::Gzip, Compression::Snappy, Compression::Lz4];

#[test]
fn uncompressed_entry_yields_itself() {
    let e = msg(42, 1, 0x08, 777, Some(b"k"), Some(b"v"));
    let rows = collect(&e).unwrap();
    assert_eq!(
        rows,
        vec![(42, 777, TimestampType::LogAppendTime, b"v".to_vec(), true)]
    );
    let e = msg(7, 0, 0, 0, None, Some(b"x"));
    let rows = collect(&e).unwrap();
    assert_eq!(
        rows,
        vec![(7, -1, TimestampType::NoTimestampType, b"x".to_vec(), true)]
    );
    let m = view(&e);
    assert_eq!(
        m.offset_range(&mut Decompressor::default()).unwrap(),
        (7, 7, 1)
    );
}

#[test]
fn magic1_relative_offsets_and_create_time() {
    for codec in LEGACY_CODECS {
        let inner: Vec<_> = (0..3)
            .map(|i| msg(i, 1, 0, 100 + i, None, Some(format!("v{i}").as_bytes())))
            .collect();
        let w = wrapper(52, 1, codec, 0, 102, &inner);
        let rows = collect(&w).unwrap();
        let offsets: Vec<i64> = rows.iter().map(|r| r.0).collect();
        assert_eq!(offsets, vec![50, 51, 52], "{codec:?}");
        let ts: Vec<i64> = rows.iter().map(|r| r.1).collect();
        assert_eq!(ts, vec![100, 101, 102]);
        assert!(rows.iter().all(|r| r.2 == TimestampType::CreateTime && r.4));
        assert_eq!(rows[1].3, b"v1");
        let m = view(&w);
        assert_eq!(
            m.offset_range(&mut Decompressor::default()).unwrap(),
            (50, 52, 3)
        );
    }
}

#[test]
fn magic1_log_append_time_wrapper_imposes_its_timestamp() {
    let inner: Vec<_> = (0..2)
        .map(|i| msg(i, 1, 0, 5 + i, None, Some(b"x")))
        .collect();
    let w = wrapper(9, 1, Compression::Gzip, 0x08, 999, &inner);
    let rows = collect(&w).unwrap();
    assert_eq!(
        rows.iter().map(|r| (r.0, r.1, r.2)).collect::<Vec<_>>(),
        vec![
            (8, 999, TimestampType::LogAppendTime),
            (9, 999, TimestampType::LogAppendTime)
        ]
    );
}

#[test]
fn magic1_compacted_gaps_and_wrapper_offset_zero() {
    // Relative 0, 2, 10 under wrapper 30 -> 20, 22, 30.
    let inner: Vec<_> = [0, 2, 10]
        .iter()
        .map(|&i| msg(i, 1, 0, 1, None, Some(b"x")))
        .collect();
    let w = wrapper(30, 1, Compression::Snappy, 0, 1, &inner);
    let offs: Vec<i64> = collect(&w).unwrap().iter().map(|r| r.0).collect();
    assert_eq!(offs, vec![20, 22, 30]);
    // Wrapper offset 0 (librdkafka produce data): base 0.
    let inner: Vec<_> = (0..2).map(|i| msg(i, 1, 0, 1, None, Some(b"x"))).collect();
    let w = wrapper(0, 1, Compression::Snappy, 0, 1, &inner);
    let offs: Vec<i64> = collect(&w).unwrap().iter().map(|r| r.0).collect();
    assert_eq!(offs, vec![0, 1]);
    // A non-zero wrapper offset below the last inner relative offset is an error.
    let inner: Vec<_> = [0, 10]
        .iter()
        .map(|&i| msg(i, 1, 0, 1, None, Some(b"x")))
        .collect();
    let w = wrapper(5, 1, Compression::Snappy, 0, 1, &inner);
    let e = collect(&w).unwrap_err();
    assert_eq!(
        (e.structure, e.field, e.position),
        ("legacy message", "offset", 1000)
    );
}

#[test]
fn magic0_absolute_offsets_and_broken_lz4_checksum() {
    for codec in LEGACY_CODECS {
        let inner: Vec<_> = [10, 11, 20]
            .iter()
            .map(|&i| msg(i, 0, 0, 0, None, Some(b"m0")))
            .collect();
        // For magic 0 the LZ4 frame carries the KAFKA-3160 header checksum.
        let w = wrapper(20, 0, codec, 0, 0, &inner);
        let rows = collect(&w).unwrap();
        assert_eq!(
            rows.iter().map(|r| r.0).collect::<Vec<_>>(),
            vec![10, 11, 20],
            "{codec:?}"
        );
        assert!(
            rows.iter()
                .all(|r| r.1 == -1 && r.2 == TimestampType::NoTimestampType)
        );
        assert_eq!(
            view(&w).offset_range(&mut Decompressor::default()).unwrap(),
            (10, 20, 3)
        );
    }
    // The same broken-HC frame in a magic 1 wrapper is rejected.
    let inner = [msg(0, 1, 0, 1, None, Some(b"x"))];
    let set = inner.concat();
    let value = compress(Compression::Lz4, &set, true);
    let w = msg(0, 1, 3, 1, None, Some(&value));
    let e = collect(&w).unwrap_err();
    assert_eq!((e.structure, e.field), ("lz4 frame", "HC"));
    // Codec error positions are file positions: entry 1000 + value at 34 + HC at 6.
    assert_eq!(e.position, 1000 + 34 + 6);
}

#[test]
fn inner_crc_validity_is_reported() {
    let mut bad = msg(0, 1, 0, 1, None, Some(b"payload"));
    let n = bad.len();
    bad[n - 1] ^= 1;
    let inner = vec![msg(0, 1, 0, 1, None, Some(b"ok")), bad];
    let w = wrapper(1, 1, Compression::Gzip, 0, 1, &inner);
    let rows = collect(&w).unwrap();
    assert_eq!(
        rows.iter().map(|r| r.4).collect::<Vec<_>>(),
        vec![true, false]
    );
    assert!(
        view(&w).is_valid(),
        "the wrapper CRC covers the compressed value only"
    );
}

#[test]
fn wrapper_errors() {
    let ok = msg(0, 1, 0, 1, None, Some(b"x"));
    // Nested compression: yielded as an error by the iterator, after the good message.
    let nested = msg(1, 1, 1, 1, None, Some(b"whatever"));
    let w = wrapper(1, 1, Compression::Gzip, 0, 1, &[ok.clone(), nested]);
    let m = view(&w);
    let mut d = Decompressor::default();
    let items: Vec<_> = m.inner_messages(&mut d).unwrap().collect();
    assert_eq!(items.len(), 2);
    assert!(items[0].is_ok());
    let e = items[1].as_ref().unwrap_err();
    assert_eq!(
        e.problem,
        Problem::Invalid("inner messages must not be compressed")
    );
    // Null value.
    let w = msg(0, 1, 1, 1, None, None);
    assert_eq!(collect(&w).unwrap_err().field, "value");
    // Zero inner messages (empty set, or only an incomplete entry).
    let w = wrapper(0, 1, Compression::Gzip, 0, 1, &[]);
    assert!(matches!(
        collect(&w).unwrap_err().problem,
        Problem::Invalid(_)
    ));
    let w = wrapper(0, 1, Compression::Gzip, 0, 1, &[ok[..20].to_vec()]);
    assert!(collect(&w).is_err());
    // Inner size < 14.
    let mut small = ok.clone();
    small[8..12].copy_from_slice(&13i32.to_be_bytes());
    let w = wrapper(0, 1, Compression::Gzip, 0, 1, &[small]);
    let e = collect(&w).unwrap_err();
    assert_eq!((e.field, e.position), ("size", 8));
    // zstd is not allowed below magic 2.
    let w = wrapper(0, 1, Compression::Zstd, 0, 1, std::slice::from_ref(&ok));
    let e = collect(&w).unwrap_err();
    assert_eq!((e.field, e.position), ("attributes", 1017));
}

#[test]
fn incomplete_trailing_inner_entry_is_ignored() {
    let a = msg(0, 1, 0, 1, None, Some(b"a"));
    let b = msg(1, 1, 0, 1, None, Some(b"b"));
    let w = wrapper(
        0,
        1,
        Compression::Snappy,
        0,
        1,
        &[a, b[..b.len() - 1].to_vec()],
    );
    let rows = collect(&w).unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(
        view(&w).offset_range(&mut Decompressor::default()).unwrap(),
        (0, 0, 1)
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Random bytes as the compressed value of every codec, and as the decompressed
    /// inner set (a stored LZ4 block carries them verbatim), never panic.
    #[test]
    fn random_wrapper_values_never_panic(value in proptest::collection::vec(any::<u8>(), 0..400),
                                         attrs in any::<u8>(), magic in 0u8..2) {
        let w = msg(3, magic, attrs, 1, None, Some(&value));
        let m = view(&w);
        let mut d = Decompressor::new(1 << 16);
        if let Ok(it) = m.inner_messages(&mut d) {
            for r in it { let _ = r; }
        }
        let _ = m.offset_range(&mut d);
        // The same bytes as the inner message set.
        let mut frame = vec![0x04, 0x22, 0x4D, 0x18, 0x60, 0x40, 0];
        frame.extend_from_slice(&(value.len() as u32 | 0x8000_0000).to_le_bytes());
        frame.extend_from_slice(&value);
        frame.extend_from_slice(&0u32.to_le_bytes());
        let w = msg(3, 0, 3, 0, None, Some(&frame));
        let m = view(&w);
        if let Ok(it) = m.inner_messages(&mut d) {
            for r in it { let _ = r; }
        }
    }

    /// Mutated valid wrappers never panic, framed or not.
    #[test]
    fn mutated_wrappers_never_panic(codec in 0usize..3,
                                    flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6)) {
        let inner: Vec<_> = (0..3).map(|i| msg(i, 1, 0, 1, Some(b"k"), Some(b"value"))).collect();
        let mut w = wrapper(2, 1, LEGACY_CODECS[codec], 0, 1, &inner);
        for (i, x) in flips {
            let i = i.index(w.len());
            w[i] ^= x;
        }
        let mut d = Decompressor::new(1 << 16);
        for e in Entries::new(&w, 0) {
            if let Classified::Legacy(m) = classify(e) {
                if let Ok(it) = m.inner_messages(&mut d) {
                    for r in it { let _ = r; }
                }
                let _ = m.offset_range(&mut d);
            }
        }
    }
}

// ------------------------------------------------------------------ real data

/// What PROVENANCE.md's parser reports for a file. Note: it counts one record per legacy
/// entry (a compressed wrapper counts as one, whatever it holds) and takes the outer
/// (= last) offset of a legacy wrapper as its offset range.
#[derive(Debug, Default, PartialEq)]
struct Stats {
    /// Outer entries (legacy messages and v2 batches).
    batches: u32,
    /// v2 records plus one per legacy entry.
    records: u64,
    magic: [u32; 3],
    compressed: u32,
    min_offset: i64,
    max_offset: i64,
}

/// Walk a file; check every legacy outer and inner CRC and offset rule on the way.
/// Also returns every absolute offset (v2 batch ranges, legacy inner messages).
fn walk(path: &std::path::Path) -> (Stats, Vec<i64>) {
    let data = std::fs::read(path).unwrap();
    let mut s = Stats {
        min_offset: i64::MAX,
        max_offset: i64::MIN,
        ..Default::default()
    };
    let mut offsets = Vec::new();
    let mut dec = Decompressor::default();
    let name = path.display();
    let mut entries = Entries::new(&data, 0);
    for entry in entries.by_ref() {
        s.batches += 1;
        match classify(entry) {
            Classified::V2(b) => {
                s.magic[2] += 1;
                s.records += b.records_count() as u64;
                if b.compression() != Compression::None {
                    s.compressed += 1;
                }
                s.min_offset = s.min_offset.min(b.base_offset());
                s.max_offset = s.max_offset.max(b.last_offset());
                offsets.extend(b.base_offset()..=b.last_offset());
            }
            Classified::Legacy(m) => {
                s.magic[m.magic() as usize] += 1;
                assert!(m.is_valid(), "{name}@{}: outer CRC", m.position());
                if m.compression() != Compression::None {
                    s.compressed += 1;
                }
                let (first, last, count) = m.offset_range(&mut dec).unwrap();
                assert_eq!(
                    last,
                    m.offset(),
                    "{name}@{}: last inner is the wrapper offset",
                    m.position()
                );
                let mut prev = None;
                let mut n = 0;
                for r in m.inner_messages(&mut dec).unwrap() {
                    let r = r.unwrap_or_else(|e| panic!("{name}@{}: {e}", m.position()));
                    assert!(r.message.is_valid(), "{name}@{}: inner CRC", m.position());
                    assert!(
                        prev.is_none_or(|p| r.offset > p),
                        "{name}: offsets increase"
                    );
                    if m.magic() == 1 && m.timestamp_type() == TimestampType::LogAppendTime {
                        assert_eq!(r.timestamp, m.timestamp());
                    }
                    prev = Some(r.offset);
                    offsets.push(r.offset);
                    n += 1;
                }
                assert_eq!(n, count);
                assert_eq!(prev, Some(last));
                assert!(first <= last);
                s.records += 1;
                s.min_offset = s.min_offset.min(m.offset());
                s.max_offset = s.max_offset.max(last);
            }
            Classified::Invalid(e) => panic!("{name}: {e}"),
        }
    }
    assert_eq!(
        entries.tail(),
        Some(klogscan::read::format::Tail::Clean),
        "{name}"
    );
    (s, offsets)
}

/// (directory under `broker/`, file, batches, records, [magic0, magic1, magic2], compressed,
/// min offset, max offset).
type Expected = (
    &'static str,
    &'static str,
    u32,
    u64,
    [u32; 3],
    u32,
    i64,
    i64,
);

const XP: &str = "xpxwo100__bullShit/tmp/kafka-logs";
const SG: &str = "segmentio__kafka-go/fixtures";

/// What broker/PROVENANCE.md says of each legacy file (the independent Python parser's
/// numbers).
#[rustfmt::skip] // one file per line: a table
const PROVENANCE: &[Expected] = &[
    (XP, "TEST-TOPIC-0/00000000000000000000.log", 21211, 21211, [0, 21211, 0], 0, 0, 21210),
    (XP, "__consumer_offsets-40/00000000000000000000.log", 860, 860, [0, 860, 0], 0, 0, 859),
    (XP, "foo-0/00000000000000000000.log", 204, 204, [0, 204, 0], 0, 0, 203),
    (XP, "topic1-0/00000000000000000000.log", 5, 5, [0, 5, 0], 0, 0, 4),
    (SG, "v1-v1.recordset.bin", 4, 4, [0, 4, 0], 0, 0, 3),
    (SG, "v1-v1c-v2-v2c-v2b-v2b-v2b-v2bc-v1b-v1bc.recordset.bin", 15, 19, [0, 7, 8], 7, 0, 19),
    (SG, "v1c-v1-v1c.recordset.bin", 5, 5, [0, 5, 0], 3, 1, 5),
    (SG, "v1c-v1c.recordset.bin", 3, 3, [0, 3, 0], 3, 1, 3),
    (SG, "v2-v2.recordset.bin", 2, 4, [0, 0, 2], 0, 0, 3),
    (SG, "v2b-v1.recordset.bin", 3, 4, [0, 2, 1], 0, 0, 3),
    (SG, "v2bc-v1-v1c.recordset.bin", 4, 5, [0, 3, 1], 2, 0, 5),
    (SG, "v2bc-v1.recordset.bin", 3, 4, [0, 2, 1], 1, 0, 3),
    (SG, "v2bc-v1c.recordset.bin", 2, 3, [0, 1, 1], 2, 0, 3),
    (SG, "v2c-v2-v2c.recordset.bin", 3, 6, [0, 0, 3], 2, 0, 5),
    (SG, "v2c-v2c.recordset.bin", 2, 4, [0, 0, 2], 2, 0, 3),
    ("", "tansu-io__tansu/carved/nisshi-sans-io__src__bin__bench.rs_L1465_c5cfcc0e.bin", 1, 1, [1, 0, 0], 0, 0, 0),
];

/// Walks one file of the provenance table: its outer view's statistics, and the check that
/// every message's absolute offset (inner messages of wrappers included) is exactly
/// first..=last with no gap and no duplicate — these partitions are not compacted. Returns
/// the statistics and the number of messages.
fn walk_contiguous(path: &std::path::Path, file: &str) -> (Stats, usize) {
    let (got, mut offsets) = walk(path);
    offsets.sort_unstable();
    let first = offsets[0];
    assert!(
        offsets
            .iter()
            .enumerate()
            .all(|(i, &o)| o == first + i as i64),
        "{file}: offsets {offsets:?} are not contiguous"
    );
    assert_eq!(offsets.last(), Some(&got.max_offset), "{file}");
    (got, offsets.len())
}

#[test]
fn real_legacy_data_matches_provenance() {
    let Some(root) = crate::common::real_data() else {
        return;
    };
    let b = root.join("broker");
    let mut mismatches = Vec::new();
    let (mut all_messages, mut provenance_records) = (0usize, 0u64);
    for &(dir, file, batches, records, magic, compressed, lo, hi) in PROVENANCE {
        let file = if dir.is_empty() {
            file.to_string()
        } else {
            format!("{dir}/{file}")
        };
        let (got, messages) = walk_contiguous(&b.join(&file), &file);
        all_messages += messages;
        provenance_records += got.records;
        let want = Stats {
            batches,
            records,
            magic,
            compressed,
            min_offset: lo,
            max_offset: hi,
        };
        if got != want {
            mismatches.push(format!("{file}: got {got:?}, PROVENANCE says {want:?}"));
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
    // Some segmentio gzip wrappers hold two inner messages: PROVENANCE's one-per-entry
    // count is below the real number of messages.
    assert!(all_messages as u64 > provenance_records);
}

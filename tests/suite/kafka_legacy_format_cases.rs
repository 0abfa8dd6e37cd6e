//! The old message formats (magic 0 and 1) and the record-level corner cases of Kafka's
//! readers, as bytes on disk: what `LogSegment.recover` (storage), `FileLogInputStream`,
//! `AbstractLegacyRecordBatch.DeepRecordsIterator`, `Lz4BlockInputStream` and
//! `DefaultRecord.readFrom` (clients, trunk of 2024-10) keep, refuse or report, against
//! what `scan` and `dump` say. Cases already held elsewhere (kafka_format_cases.rs,
//! kafka_validator_cases/legacy.rs, legacy.rs, codecs.rs) are not repeated. Tests marked
//! `#[ignore = "divergence: …"]` assert Kafka's behaviour and fail today (audit branch
//! `audit-legacy`).
#![cfg(feature = "testkit")]

use klogscan::dump::{DumpOptions, dump_paths};
use klogscan::finding::{Kind, Severity};
use klogscan::request::{self, Request};
use klogscan::results::{ScanOptions, ScanReport};
use klogscan::testkit::encode::{compress, lz4_frame};
use klogscan::testkit::scenario::DEFAULT_START_MS;
use klogscan::testkit::{
    Batch, BatchInfo, BatchSpec, Codec, Legacy, LegacySpec, PartitionBuilder, Producer,
};
use std::path::PathBuf;
use tempfile::TempDir;

const TOPIC: &str = "legacy";
const T: i64 = DEFAULT_START_MS;

fn partition() -> PartitionBuilder {
    PartitionBuilder::new(TOPIC, 0)
}

fn scan_with(p: &PartitionBuilder, deep: bool) -> ScanReport {
    let dir = tempfile::tempdir().unwrap();
    let m = p.write(dir.path()).unwrap();
    let opts = ScanOptions::default().with_deep(deep);
    let a = request::run(&Request::new([&m.dir]).with_options(opts)).unwrap();
    assert!(a.report.errors.is_empty(), "{:?}", a.report.errors);
    assert_eq!(a.report.partitions.len(), 1);
    a.report
}

fn kinds(r: &ScanReport) -> Vec<(Kind, Severity, Option<i64>)> {
    r.findings
        .iter()
        .map(|f| (f.kind, f.severity, f.offset))
        .collect()
}

fn truncation(r: &ScanReport) -> Option<(u64, Option<i64>)> {
    r.partitions[0]
        .truncation
        .as_ref()
        .map(|t| (t.position, t.offset))
}

/// Write `p` and dump its one segment with `--deep-iteration`: (stdout, stderr).
fn dump_deep(p: &PartitionBuilder) -> (TempDir, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let m = p.write(dir.path()).unwrap();
    let files: Vec<PathBuf> = m.segments.iter().map(|(_, f)| f.clone()).collect();
    let opts = DumpOptions {
        deep_iteration: true,
        ..Default::default()
    };
    let (mut out, mut err) = (Vec::new(), Vec::new());
    dump_paths(&files, &opts, &mut out, &mut err).unwrap();
    (
        dir,
        String::from_utf8(out).unwrap(),
        String::from_utf8(err).unwrap(),
    )
}

/// Manifest row for an entry appended raw.
fn raw_info(first: i64, last: i64, magic: u8, size: usize) -> BatchInfo {
    BatchInfo {
        base_offset: first,
        last_offset: last,
        position: 0,
        size: size as u64,
        file: Default::default(),
        segment_base: 0,
        magic,
        producer_id: -1,
        producer_epoch: -1,
        base_sequence: -1,
        record_count: (last - first + 1) as i32,
        codec: Codec::None,
        transactional: false,
        control: None,
        coordinator_epoch: None,
        partition_leader_epoch: -1,
        first_timestamp: -1,
        max_timestamp: -1,
    }
}

/// One legacy message at `offset` with key and value `v`, timestamp `ts` (magic 1).
fn message(offset: i64, magic: u8, attributes: u8, ts: i64, v: &str) -> LegacySpec {
    LegacySpec {
        offset,
        magic,
        attributes,
        timestamp: ts,
        key: Some(v.as_bytes().to_vec()),
        value: Some(v.as_bytes().to_vec()),
        crc: None,
    }
}

/// The inner message set of `n` messages (offsets `offset(i)`, timestamps `T + i`).
fn inner_set(n: i64, magic: u8, offset: impl Fn(i64) -> i64) -> Vec<u8> {
    (0..n)
        .flat_map(|i| message(offset(i), magic, 0, T + i, &format!("m{i}")).encode())
        .collect()
}

/// A wrapper entry at `offset` whose value is `value` as given (already compressed).
fn wrapper(offset: i64, magic: u8, attributes: u8, ts: i64, value: Option<Vec<u8>>) -> Vec<u8> {
    LegacySpec {
        offset,
        magic,
        attributes,
        timestamp: ts,
        key: None,
        value,
        crc: None,
    }
    .encode()
}

fn append(p: &mut PartitionBuilder, bytes: Vec<u8>, first: i64, last: i64, magic: u8) {
    let n = bytes.len();
    p.append_raw(bytes, raw_info(first, last, magic, n));
}

/// One uncompressed magic 1 message at `offset` (after the case's entry: the walk goes on).
fn append_plain(p: &mut PartitionBuilder, offset: i64) {
    append(
        p,
        message(offset, 1, 0, T, "after").encode(),
        offset,
        offset,
        1,
    );
}

// ----- Lz4BlockInputStream: the frame header checksum by magic -----------------------------

/// An LZ4 frame of `data` whose header checksum byte (position 6) is `hc`: `None` keeps the
/// correct one, `Some(true)` the KAFKA-3160 one (magic bytes hashed too), `Some(false)` a
/// byte that is neither.
fn lz4_with_hc(data: &[u8], hc: Option<bool>) -> Vec<u8> {
    let mut f = lz4_frame(data, hc == Some(true));
    if hc == Some(false) {
        let right = lz4_frame(data, false)[6];
        let broken = lz4_frame(data, true)[6];
        f[6] = (0u8..=255).find(|b| *b != right && *b != broken).unwrap();
    }
    f
}

/// `KafkaLZ4Test.testBadFrameChecksum` / `testChecksum` (with `ignoreFlagDescriptorChecksum`)
/// and `Lz4BlockInputStream.readHeader`: a magic 0 wrapper's LZ4 frame is read with the
/// header checksum *skipped* (`CompressionType.wrapForInput(…, messageVersion)` passes
/// `messageVersion == MAGIC_VALUE_V0`), so the KAFKA-3160 byte, the correct byte and any
/// other byte are all accepted. `--deep` opens every wrapper: nothing to report, every inner
/// message counted, offsets absolute.
#[test]
fn magic0_lz4_wrapper_header_checksum_is_skipped_whatever_its_value() {
    let mut p = partition();
    for (i, hc) in [Some(true), None, Some(false)].into_iter().enumerate() {
        let first = 3 * i as i64;
        let set = inner_set(3, 0, |k| first + k);
        let w = wrapper(
            first + 2,
            0,
            Codec::Lz4.id(),
            -1,
            Some(lz4_with_hc(&set, hc)),
        );
        append(&mut p, w, first, first + 2, 0);
    }
    let r = scan_with(&p, true);
    assert_eq!(kinds(&r), vec![], "{:#?}", r.findings);
    assert_eq!(r.partitions[0].records, 9);
    assert_eq!(r.partitions[0].log_end_offset, Some(9));
    let (_d, out, err) = dump_deep(&p);
    assert_eq!(err, "");
    let offsets: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("| offset: "))
        .map(|l| l.split(' ').nth(2).unwrap())
        .collect();
    assert_eq!(offsets, ["0", "1", "2", "3", "4", "5", "6", "7", "8"]);
}

/// The twin: from magic 1 on the header checksum is checked (`ignoreFlagDescriptorChecksum`
/// false), so a magic 1 wrapper carrying the KAFKA-3160 byte fails its deep iteration
/// (`IOException` "Stream frame descriptor corrupted", a `KafkaException` to the consumer
/// and to `LogValidator`). `LogSegment.recover` checks the wrapper's CRC only: no
/// truncation. `--deep` reports the wrapper (so does the plain scan, which opens wrappers
/// for their offset range), and neither predicts a truncation.
#[test]
fn magic1_lz4_wrapper_with_the_kafka_3160_header_checksum_is_reported() {
    let mut p = partition();
    let set = inner_set(3, 1, |k| k);
    let w = wrapper(
        2,
        1,
        Codec::Lz4.id(),
        T + 2,
        Some(lz4_with_hc(&set, Some(true))),
    );
    append(&mut p, w, 0, 2, 1);
    append_plain(&mut p, 3);
    let r = scan_with(&p, true);
    assert_eq!(
        kinds(&r),
        vec![(Kind::InvalidBatch, Severity::Error, Some(2))],
        "{:#?}",
        r.findings
    );
    assert_eq!(truncation(&r), None);
    assert_eq!(r.partitions[0].log_end_offset, Some(4));
    assert_eq!(truncation(&scan_with(&p, false)), None);
}

// ----- DeepRecordsIterator: wrappers Kafka's deep iteration refuses ------------------------

/// A gzip stream whose header is fine and whose deflate data is not.
fn corrupt_gzip(data: &[u8]) -> Vec<u8> {
    let mut g = compress(Codec::Gzip, data);
    let n = g.len();
    for b in &mut g[10..n - 8] {
        *b = 0xFF;
    }
    g
}

/// The magic 1 wrappers `AbstractLegacyRecordBatch.DeepRecordsIterator` throws on while the
/// wrapper's own CRC holds: (what, wrapper offset, entry bytes). Each would make a consumer
/// (and the validator) fail; `LogSegment.recover` keeps them (it checks the wrapper's size and
/// CRC, never its value).
fn refused_wrappers() -> Vec<(&'static str, i64, Vec<u8>)> {
    let gz = Codec::Gzip.id();
    let mut small = message(0, 1, 0, T, "x").encode();
    small[8..12].copy_from_slice(&13i32.to_be_bytes());
    vec![
        // "Found invalid compressed record set with null value"
        ("null value", 2, wrapper(2, 1, gz, T, None)),
        // "Found invalid compressed record set with no inner records"
        (
            "no inner message",
            2,
            wrapper(2, 1, gz, T, Some(compress(Codec::Gzip, &[]))),
        ),
        // DataLogInputStream: "Record size is less than the minimum record overhead"
        (
            "inner size 13",
            2,
            wrapper(2, 1, gz, T, Some(compress(Codec::Gzip, &small))),
        ),
        // the codec's IOException (a KafkaException)
        (
            "corrupt gzip",
            2,
            wrapper(2, 1, gz, T, Some(corrupt_gzip(&inner_set(3, 1, |k| k)))),
        ),
        // AbstractLegacyRecordBatchTest.testInvalidWrapperOffsetV1: wrapper offset 1 below
        // the last inner relative offset 2, and not 0.
        ("wrapper offset below the last inner", 1, {
            wrapper(
                1,
                1,
                gz,
                T,
                Some(compress(Codec::Gzip, &inner_set(3, 1, |k| k))),
            )
        }),
    ]
}

/// `AbstractLegacyRecordBatchTest.testInvalidWrapperOffsetV1` and the other throws of
/// `DeepRecordsIterator`'s constructor (null value, no inner record, an inner size below 14,
/// a codec error): each wrapper is an `invalid_batch` at its offset with `--deep`, and no
/// truncation point — recovery keeps it, the next message is still read.
#[test]
fn wrappers_the_deep_iterator_refuses_are_invalid_batches_not_truncations() {
    for (what, at, bytes) in refused_wrappers() {
        let mut p = partition();
        append(&mut p, bytes, 0, at, 1);
        append_plain(&mut p, at + 1);
        let r = scan_with(&p, true);
        assert!(
            r.findings
                .iter()
                .any(|f| f.kind == Kind::InvalidBatch && f.offset == Some(at)),
            "{what}: {:#?}",
            r.findings
        );
        assert_eq!(truncation(&r), None, "{what}");
        assert_eq!(r.partitions[0].log_end_offset, Some(at + 2), "{what}");
        let plain = scan_with(&p, false);
        assert_eq!(truncation(&plain), None, "{what}");
        assert_eq!(plain.partitions[0].log_end_offset, Some(at + 2), "{what}");
    }
}

/// `DataLogInputStream.nextBatch` (the deep iterator's reader) returns "no more entries" on an
/// inner entry cut short, so the messages before it are the wrapper's whole content and the
/// magic 1 base comes from the last *complete* one: wrapper offset 2 over relative 0, 1 and a
/// cut third message gives offsets 1 and 2 (not 0 and 1). `dump --deep-iteration` prints those.
#[test]
fn an_inner_entry_cut_short_ends_the_wrapper_and_the_base_follows_the_last_whole_one() {
    let mut set = inner_set(3, 1, |k| k);
    set.truncate(set.len() - 3);
    let mut p = partition();
    append(&mut p, message(0, 1, 0, T, "before").encode(), 0, 0, 1);
    let w = wrapper(
        2,
        1,
        Codec::Gzip.id(),
        T + 1,
        Some(compress(Codec::Gzip, &set)),
    );
    append(&mut p, w, 1, 2, 1);
    let (_d, out, _err) = dump_deep(&p);
    let offsets: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("| offset: "))
        .map(|l| l.split(' ').nth(2).unwrap())
        .collect();
    assert_eq!(offsets, ["0", "1", "2"], "{out}");
    let r = scan_with(&p, true);
    assert_eq!(r.partitions[0].records, 3);
    assert_eq!(r.partitions[0].log_end_offset, Some(3));
}

// ----- timestamps of inner messages -----------------------------------------------------

/// `(offset, "<type>: <timestamp>")` of every inner line of a deep dump.
fn inner_times(out: &str) -> Vec<(String, String)> {
    out.lines()
        .filter(|l| l.starts_with("| offset: "))
        .map(|l| {
            let w: Vec<&str> = l.split(' ').collect();
            (w[2].to_string(), format!("{} {}", w[3], w[4]))
        })
        .collect()
}

/// `AbstractLegacyRecordBatchTest.testSetLogAppendTimeV1` and `testSetCreateTimeV1`: the
/// broker stamps a magic 1 wrapper by rewriting the wrapper only (attributes, timestamp,
/// CRC); the inner messages keep their CreateTime attributes and own timestamps. Read back
/// (`DeepRecordsIterator` → `LegacyRecord(buffer, wrapperTimestamp, wrapperTimestampType)`),
/// a LogAppendTime wrapper gives every inner message its timestamp and type, a CreateTime
/// wrapper leaves the inner timestamps as written — and an inner message's own
/// LogAppendTime bit is overridden by the wrapper's type. `DumpLogSegments` prints
/// `batch.timestampType: record.timestamp` per inner message.
#[test]
fn the_wrappers_timestamp_type_rules_its_inner_messages() {
    let lat = 1_700_000_000_000;
    let mut p = partition();
    let set = inner_set(2, 1, |k| k);
    append(
        &mut p,
        wrapper(
            1,
            1,
            Codec::Gzip.id() | 0x08,
            lat,
            Some(compress(Codec::Gzip, &set)),
        ),
        0,
        1,
        1,
    );
    let set = inner_set(2, 1, |k| k);
    append(
        &mut p,
        wrapper(
            3,
            1,
            Codec::Gzip.id(),
            T + 1,
            Some(compress(Codec::Gzip, &set)),
        ),
        2,
        3,
        1,
    );
    // Inner messages flagged LogAppendTime under a CreateTime wrapper.
    let set: Vec<u8> = (0..2)
        .flat_map(|i| message(i, 1, 0x08, T + 10 + i, "x").encode())
        .collect();
    append(
        &mut p,
        wrapper(
            5,
            1,
            Codec::Gzip.id(),
            T + 11,
            Some(compress(Codec::Gzip, &set)),
        ),
        4,
        5,
        1,
    );
    let (_d, out, err) = dump_deep(&p);
    assert_eq!(err, "");
    let want: Vec<(String, String)> = [
        (0, format!("LogAppendTime: {lat}")),
        (1, format!("LogAppendTime: {lat}")),
        (2, format!("CreateTime: {T}")),
        (3, format!("CreateTime: {}", T + 1)),
        (4, format!("CreateTime: {}", T + 10)),
        (5, format!("CreateTime: {}", T + 11)),
    ]
    .into_iter()
    .map(|(o, s)| (o.to_string(), s))
    .collect();
    assert_eq!(inner_times(&out), want, "{out}");
    assert_eq!(kinds(&scan_with(&p, true)), vec![]);
}

// ----- a segment across message format upgrades -------------------------------------------

/// A log written across `log.message.format.version` upgrades holds magic 0, then magic 1,
/// then magic 2 entries in one segment (`FileRecordsTest.doTestConversion` builds such a
/// file; `LogSegment.recover` and `FileLogInputStream` take each entry by its own magic).
/// Every codec a legacy wrapper may carry, snappy in both framings, and the magic 0 LZ4
/// quirk: `--deep` finds nothing, counts every inner message and ends at the right offset.
#[test]
fn a_segment_spanning_magic_0_1_and_2_reads_whole() {
    let mut p = partition();
    p.legacy(Legacy::v0().values(["a", "b"]));
    for codec in [Codec::Gzip, Codec::SnappyXerial, Codec::Lz4] {
        p.legacy(Legacy::v0().values(["c", "d", "e"]).codec(codec));
    }
    for codec in [
        Codec::Gzip,
        Codec::SnappyXerial,
        Codec::SnappyRaw,
        Codec::Lz4,
    ] {
        p.legacy(Legacy::v1().values(["f", "g"]).codec(codec));
    }
    p.legacy(Legacy::v1().values(["h"]));
    p.append(Batch::new(Producer::PLAIN).records(3).codec(Codec::Zstd));
    p.append(Batch::new(Producer::PLAIN).records(2));
    let r = scan_with(&p, true);
    assert_eq!(kinds(&r), vec![], "{:#?}", r.findings);
    let n = 2 + 3 * 3 + 2 * 4 + 1 + 3 + 2;
    assert_eq!(r.partitions[0].records, n);
    assert_eq!(r.partitions[0].log_end_offset, Some(n as i64));
    let (_d, out, err) = dump_deep(&p);
    assert_eq!(err, "");
    assert_eq!(
        out.lines().filter(|l| l.starts_with("| offset: ")).count(),
        n as usize
    );
}

// ----- where recovery stops in a legacy log -----------------------------------------------

/// `ByteBufferLogInputStreamTest.iteratorRaisesOnTooSmallRecords` and
/// `FileLogInputStream.nextBatch` ("Found record size 13 smaller than minimum record
/// overhead"), `LegacyRecordTest.testChecksum` (`ensureValid` on a flipped byte), and
/// `iteratorIgnoresIncompleteEntries` (an entry cut by the file's end is not read): in
/// `LogSegment.recover` each ends the valid bytes at that entry — the truncation point is
/// its position (the report's `log_end_offset` is the log as read, before recovery).
#[test]
fn recovery_stops_at_a_legacy_entry_too_small_corrupt_or_cut() {
    for magic in [0u8, 1] {
        let good = message(0, magic, 0, T, "good").encode();
        let at = good.len() as u64;
        let mut small = message(1, magic, 0, T, "next").encode();
        small[8..12].copy_from_slice(&13i32.to_be_bytes());
        let mut flipped = message(1, magic, 0, T, "next").encode();
        let last = flipped.len() - 1;
        flipped[last] ^= 1;
        let mut cut = message(1, magic, 0, T, "next").encode();
        cut.truncate(cut.len() - 2);
        for (what, bad) in [("size 13", small), ("crc", flipped), ("cut", cut)] {
            let mut p = partition();
            append(&mut p, good.clone(), 0, 0, magic);
            let tail = matches!(what, "cut");
            append(&mut p, bad, 1, 1, magic);
            if !tail {
                append(
                    &mut p,
                    message(2, magic, 0, T, "after").encode(),
                    2,
                    2,
                    magic,
                );
            }
            let r = scan_with(&p, false);
            let t = truncation(&r).unwrap_or_else(|| panic!("magic {magic} {what}: none"));
            assert_eq!(t.0, at, "magic {magic} {what}");
            if what == "crc" {
                // The entry is framed: the report names its offset.
                assert_eq!(t.1, Some(1), "magic {magic} {what}");
            }
        }
    }
}

// ----- DefaultRecord.readFrom: records Kafka's reader refuses or accepts -------------------

/// Zigzag varint (as `ByteUtils.writeVarlong`).
fn zz(v: i64) -> Vec<u8> {
    let mut u = ((v << 1) ^ (v >> 63)) as u64;
    let mut out = Vec::new();
    while u >= 0x80 {
        out.push((u as u8 & 0x7F) | 0x80);
        u >>= 7;
    }
    out.push(u as u8);
    out
}

/// A record body: attributes 0, deltas 0, key `k`, value `v` (length fields as given, bytes
/// written only for lengths ≥ 0), then the header count `hc` and `headers` (already encoded).
fn body(k: (i64, &[u8]), v: (i64, &[u8]), hc: i64, headers: &[u8]) -> Vec<u8> {
    let mut b = vec![0u8, 0, 0];
    for (len, bytes) in [k, v] {
        b.extend(zz(len));
        b.extend_from_slice(bytes);
    }
    b.extend(zz(hc));
    b.extend_from_slice(headers);
    b
}

/// One encoded header `key: value`.
fn header(key: &[u8], value: &[u8]) -> Vec<u8> {
    let mut h = zz(key.len() as i64);
    h.extend_from_slice(key);
    h.extend(zz(value.len() as i64));
    h.extend_from_slice(value);
    h
}

/// A v2 batch at `base` holding one record: the length varint `len` (None: the body's
/// length) then `body`, with a correct CRC and batchLength.
fn v2_one_record(base: i64, len: Option<i64>, body: &[u8]) -> Vec<u8> {
    let mut spec = BatchSpec {
        base_offset: base,
        base_timestamp: T,
        ..BatchSpec::default()
    };
    spec.overrides.records_count = Some(1);
    spec.overrides.max_timestamp = Some(T);
    let mut b = spec.encode();
    b.extend(zz(len.unwrap_or(body.len() as i64)));
    b.extend_from_slice(body);
    let n = (b.len() - 12) as i32;
    b[8..12].copy_from_slice(&n.to_be_bytes());
    let crc = crc32c::crc32c(&b[21..]);
    b[17..21].copy_from_slice(&crc.to_be_bytes());
    b
}

/// The record shapes `DefaultRecordTest` makes `DefaultRecord.readFrom` throw on.
fn refused_records() -> Vec<(&'static str, Vec<u8>)> {
    let three: Vec<u8> = [
        header(b"foo", b"value"),
        header(b"bar", b""),
        header(b"baz", b"v"),
    ]
    .concat();
    let bad_ts = {
        let mut b = vec![0u8];
        b.extend([0xFFu8; 9]);
        b.push(0x80); // a tenth byte with its continuation bit set
        b.extend([0u8; 4]);
        b
    };
    vec![
        (
            "testBasicSerdeInvalidHeaderCountTooHigh",
            body((2, b"hi"), (5, b"there"), 4, &three),
        ),
        (
            "testBasicSerdeInvalidHeaderCountTooLow",
            body((2, b"hi"), (5, b"there"), 2, &three),
        ),
        (
            "testInvalidNumHeaders",
            body((2, b"hi"), (5, b"there"), -1, &[]),
        ),
        (
            "testInvalidHeaderKey",
            body((2, b"hi"), (5, b"there"), 1, &zz(-1)),
        ),
        (
            "testInvalidKeySize",
            body((105, b"hi"), (5, b"there"), 0, &[]),
        ),
        ("testInvalidVarlong", bad_ts),
    ]
}

/// `DefaultRecordTest`'s refusals (header count above or below the headers present, a
/// negative header count, a negative header key size, a key longer than the record, a
/// varlong of ten bytes with the continuation bit still set) and `testInvalidSizeOfBodyInBytes`
/// (a length varint longer than what follows, or shorter: "Invalid record size"), each the
/// only record of a CRC-valid batch. Consumers fail on it (`InvalidRecordException`);
/// `LogSegment.recover` checks the batch's CRC only. `--deep` reports an `invalid_batch` at
/// the batch, never a truncation; the plain scan reads headers only and says nothing.
#[test]
fn records_default_record_refuses_are_invalid_batches_with_deep() {
    let fine = body((2, b"hi"), (5, b"there"), 0, &[]);
    let mut cases = refused_records();
    cases.push((
        "length above the body",
        v2_one_record(0, Some(fine.len() as i64 + 3), &fine),
    ));
    cases.push((
        "length below the body",
        v2_one_record(0, Some(fine.len() as i64 - 1), &fine),
    ));
    for (what, case) in cases {
        let bytes = if what.starts_with("length") {
            case
        } else {
            v2_one_record(0, None, &case)
        };
        let mut p = partition();
        let n = bytes.len();
        p.append_raw(
            bytes,
            BatchInfo {
                magic: 2,
                ..raw_info(0, 0, 2, n)
            },
        );
        p.append(Batch::new(Producer::PLAIN).records(1));
        let r = scan_with(&p, true);
        assert_eq!(
            kinds(&r),
            vec![(Kind::InvalidBatch, Severity::Error, Some(0))],
            "{what}: {:#?}",
            r.findings
        );
        assert_eq!(truncation(&r), None, "{what}");
        assert_eq!(r.partitions[0].log_end_offset, Some(2), "{what}");
        assert_eq!(kinds(&scan_with(&p, false)), vec![], "{what}");
    }
}

/// The twin: `DefaultRecord.readFrom` takes any negative key or value length as null
/// (`if (keySize >= 0)`), not only -1, and a header value of any negative length as null.
/// Such a record is read whole: `--deep` has nothing to say.
#[test]
fn any_negative_key_or_value_length_is_a_null_in_a_v2_record() {
    let mut hv = zz(1);
    hv.extend_from_slice(b"h");
    hv.extend(zz(-7));
    let mut p = partition();
    let b = v2_one_record(0, None, &body((-5, b""), (-9, b""), 1, &hv));
    let n = b.len();
    p.append_raw(b, raw_info(0, 0, 2, n));
    p.append(Batch::new(Producer::PLAIN).records(1));
    let r = scan_with(&p, true);
    assert_eq!(kinds(&r), vec![], "{:#?}", r.findings);
    assert_eq!(r.partitions[0].records, 2);
}

// ----- the wrapper's offset is the entry's last offset ------------------------------------

/// `LogSegment.recover` and `LogSegment.readNextOffset` take a legacy entry's last offset from
/// its own offset field (`AbstractLegacyRecordBatch.lastOffset` = the wrapper's offset), never
/// from the inner messages; consumers read the inner offsets (`DeepRecordsIterator`). A magic 0
/// wrapper at offset 5 whose inner messages carry absolute offsets 0, 1, 2, and a magic 1
/// wrapper at offset 0 over relative 0, 1, 2
/// (`AbstractLegacyRecordBatchTest.testIterateCompressedRecordWithWrapperOffsetZero`: base 0)
/// end the log at 6 and 1 for the broker. Neither is refused by Kafka's readers (the deep
/// iterator checks no magic 0 offset, and takes a magic 1 wrapper offset 0 as base 0).
#[test]
fn the_log_ends_after_the_wrappers_own_offset() {
    for (magic, wrapper_offset, want) in [(0u8, 5i64, 6i64), (1, 0, 1)] {
        let set = inner_set(3, magic, |k| k);
        let ts = if magic == 0 { -1 } else { T + 2 };
        let w = wrapper(
            wrapper_offset,
            magic,
            Codec::Gzip.id(),
            ts,
            Some(compress(Codec::Gzip, &set)),
        );
        let mut p = partition();
        append(&mut p, w, 0, wrapper_offset, magic);
        for deep in [false, true] {
            let r = scan_with(&p, deep);
            assert_eq!(
                r.partitions[0].log_end_offset,
                Some(want),
                "magic {magic} deep {deep}"
            );
            assert_eq!(r.partitions[0].records, 3, "magic {magic} deep {deep}");
            assert_eq!(kinds(&r), vec![], "magic {magic} deep {deep}");
        }
    }
}

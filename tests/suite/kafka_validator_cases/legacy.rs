//! The validator's cases over legacy (magic 0/1) compressed wrappers: inner offsets, inner
//! magic, inner CRCs, nested compression and codecs the legacy format cannot carry. Each
//! wrapper is built by hand (`LegacySpec` over raw inner messages) so that the one
//! inconsistency of the Kafka case is all that differs from what a broker writes.

use super::*;

/// Timestamp of magic 1 messages and wrappers.
const T: i64 = DEFAULT_START_MS;

/// One inner message: key and value `v`, at `offset` (absolute for magic 0, relative for
/// magic 1), with a correct CRC.
fn inner(offset: i64, magic: u8, v: &str) -> LegacySpec {
    LegacySpec {
        offset,
        magic,
        attributes: 0,
        timestamp: T,
        key: Some(v.as_bytes().to_vec()),
        value: Some(v.as_bytes().to_vec()),
        crc: None,
    }
}

/// `n` inner messages of `magic` at offsets `offset(i)`.
fn inners(n: i64, magic: u8, offset: impl Fn(i64) -> i64) -> Vec<LegacySpec> {
    (0..n)
        .map(|i| inner(offset(i), magic, &i.to_string()))
        .collect()
}

/// Append a compressed wrapper of `magic` and `codec` at `wrapper_offset` (the last
/// offset it covers) holding `msgs` exactly as given; the manifest says it covers
/// `first..=wrapper_offset`.
fn append_wrapper(
    p: &mut PartitionBuilder,
    magic: u8,
    codec: Codec,
    first: i64,
    wrapper_offset: i64,
    msgs: &[LegacySpec],
) {
    let set: Vec<u8> = msgs.iter().flat_map(LegacySpec::encode).collect();
    let bytes = LegacySpec {
        offset: wrapper_offset,
        magic,
        attributes: codec.id(),
        timestamp: if magic == 1 { T } else { -1 },
        key: None,
        value: Some(compress(codec, &set)),
        crc: None,
    }
    .encode();
    let n = bytes.len();
    p.append_raw(bytes, raw_info(first, wrapper_offset, magic, n));
}

/// The codec Kafka would have used for `codec` at `magic` (magic 0 LZ4 has the broken
/// header checksum of KAFKA-3160).
fn legacy_codec(magic: u8, codec: Codec) -> Codec {
    if magic == 0 && codec == Codec::Lz4 {
        Codec::Lz4BrokenHc
    } else {
        codec
    }
}

/// `LogValidatorTest.testValidationOfBatchesWithNonSequentialInnerOffsets` (v0 and v1):
/// a gzip wrapper whose inner messages all carry offset 0. The validator does not refuse
/// it from a client: it rebuilds the wrapper with offsets 0..n−1, so a leader never stores
/// it. On disk it is an `invalid_batch` at the wrapper (`structure` "legacy inner
/// message", `field` "offset"), with or without `--deep`, and not a truncation point
/// (recovery checks a legacy entry's size and CRC only). Twin: strictly increasing inner
/// offsets with gaps (what the cleaner leaves) are clean.
#[test]
fn legacy_inner_offsets_that_repeat_are_an_invalid_batch() {
    for magic in [0u8, 1] {
        let mut p = partition();
        append_wrapper(&mut p, magic, Codec::Gzip, 0, 4, &inners(5, magic, |_| 0));
        p.legacy(Legacy::v1().values(["after"]));
        for r in [scan(&p), scan_deep(&p)] {
            assert_eq!(
                kinds(&r),
                vec![(Kind::InvalidBatch, Severity::Error, Some(4))],
                "magic {magic}"
            );
            let f = &r.findings[0];
            assert_eq!(f.evidence["structure"], json!("legacy inner message"));
            assert_eq!(f.evidence["field"], json!("offset"));
            assert_eq!(truncation(&r), None);
            assert_eq!(r.partitions[0].log_end_offset, Some(6));
        }
        let mut q = partition();
        append_wrapper(
            &mut q,
            magic,
            Codec::Gzip,
            0,
            8,
            &inners(5, magic, |i| 2 * i),
        );
        let r = scan_deep(&q);
        assert_eq!(kinds(&r), vec![], "magic {magic}");
        assert_eq!(r.partitions[0].records, 5);
        assert_eq!(r.partitions[0].log_end_offset, Some(9));
    }
}

/// The same Kafka case, for what the finding says the broker and consumers did: for magic
/// 0/1 the validator *rewrites* the inner offsets (the test asserts offsets 0..19 come out),
/// it does not refuse; and a consumer's `DeepRecordsIterator` does not throw on repeated
/// offsets (it hands out several records at one offset, and the fetcher skips all but the
/// first). klogscan's generic `invalid_batch` text claimed "rejected on append
/// (InvalidRecordException / CorruptRecordException); consumers fail to read it" (fixed).
#[test]
fn legacy_repeated_inner_offsets_are_explained_as_rewritten_and_skipped() {
    let mut p = partition();
    append_wrapper(&mut p, 1, Codec::Gzip, 0, 4, &inners(5, 1, |_| 0));
    let r = scan(&p);
    let f = one(&r, Kind::InvalidBatch);
    assert!(
        !f.broker_behaviour.contains("rejected on append")
            && !f.broker_behaviour.contains("consumers fail"),
        "{}",
        f.broker_behaviour
    );
}

/// `LogValidatorTest.checkMismatchMagic` (wrapper 0 / records 1, wrapper 1 / records 0,
/// gzip) and `testInvalidRecordExceptionHasBatchIndex`: inner messages whose magic differs
/// from the wrapper's are refused (`RecordValidationException`, one error per record). No
/// broker stores them (older ones rebuilt the wrapper), so on disk they are damage or a
/// bug: `--deep`, which opens the wrapper, should report an `invalid_batch` at it.
/// klogscan reads them without a word (Kafka's readers do too: `DeepRecordsIterator` is
/// built with `ensureMatchingMagic` false, so recovery and consumers are unaffected).
#[test]
fn legacy_inner_magic_differing_from_the_wrapper_is_reported() {
    for magic in [0u8, 1] {
        let mut p = partition();
        append_wrapper(
            &mut p,
            magic,
            Codec::Gzip,
            0,
            19,
            &inners(20, 1 - magic, |i| i),
        );
        let r = scan_deep(&p);
        let f = one(&r, Kind::InvalidBatch);
        assert_eq!(f.offset, Some(19), "magic {magic}");
        assert_eq!(truncation(&r), None);
    }
}

/// `LogValidatorTest.checkInvalidChecksum` (v0/v1 × gzip, lz4, snappy): one inner message
/// with a zeroed CRC makes the validator throw `CorruptRecordException`. On disk the
/// wrapper's own CRC covers the compressed bytes only, so `LogSegment.recover` keeps it; but
/// a consumer with `check.crcs` (the default) calls `record.ensureValid()` on each inner
/// record and fails on this one (`CompletedFetch.maybeEnsureValid`). So the wrapper should be
/// reported (a `crc_mismatch` or `invalid_batch` at it) without a truncation. klogscan's
/// format layer knows each inner message's CRC validity (tests/suite/legacy.rs
/// `inner_crc_validity_is_reported`) but the scan reports nothing, even with `--deep`.
#[test]
fn legacy_inner_message_with_a_bad_crc_is_reported() {
    for magic in [0u8, 1] {
        for codec in [Codec::Gzip, Codec::Lz4, Codec::SnappyXerial] {
            let mut p = partition();
            let mut msgs = inners(3, magic, |i| i);
            msgs[1].crc = Some(0);
            append_wrapper(&mut p, magic, legacy_codec(magic, codec), 0, 2, &msgs);
            let r = scan_deep(&p);
            assert!(
                r.findings.iter().any(|f| f.offset == Some(2)
                    && matches!(f.kind, Kind::CrcMismatch | Kind::InvalidBatch)),
                "magic {magic} {codec:?}: {:#?}",
                r.findings
            );
            assert_eq!(truncation(&r), None);
        }
    }
}

/// The twin of `LogValidatorTest.checkInvalidChecksum`: the same wrappers with every inner
/// CRC correct are clean, with `--deep`.
#[test]
fn legacy_wrappers_with_valid_inner_crcs_are_clean() {
    for magic in [0u8, 1] {
        for codec in [Codec::Gzip, Codec::Lz4, Codec::SnappyXerial] {
            let mut p = partition();
            append_wrapper(
                &mut p,
                magic,
                legacy_codec(magic, codec),
                0,
                2,
                &inners(3, magic, |i| i),
            );
            let r = scan_deep(&p);
            assert_eq!(kinds(&r), vec![], "magic {magic} {codec:?}");
            assert_eq!(r.partitions[0].records, 3);
        }
    }
}

/// `LogValidator.validateRecordCompression` (exercised by the compressed cases of
/// `LogValidatorTest`): an inner message of a compressed wrapper must not itself carry a
/// codec; the validator refuses it, and a consumer's `DeepRecordsIterator` throws
/// ("Inner messages must not be compressed") when it reaches it. On disk `--deep` should
/// report an `invalid_batch` at the wrapper; recovery (CRC only) keeps it. klogscan reports
/// nothing.
#[test]
fn legacy_inner_message_with_a_codec_is_reported() {
    for magic in [0u8, 1] {
        let mut p = partition();
        let mut msgs = inners(3, magic, |i| i);
        msgs[1].attributes = Codec::Gzip.id();
        append_wrapper(&mut p, magic, Codec::Gzip, 0, 2, &msgs);
        let r = scan_deep(&p);
        let f = one(&r, Kind::InvalidBatch);
        assert_eq!(f.offset, Some(2), "magic {magic}");
        assert_eq!(truncation(&r), None);
    }
}

/// `MemoryRecordsTest.testUnsupportedCompress` (and the validator's zstd gate,
/// `testZStdCompressedWithUnavailableIBPVersion`): the legacy formats cannot carry zstd;
/// Kafka's deep iterator refuses such a wrapper ("Invalid wrapper compressionType"). On
/// disk: an `invalid_batch` on the wrapper's attributes, without `--deep`; recovery checks
/// the wrapper's size and CRC only, so it is no truncation point.
#[test]
fn zstd_in_a_legacy_wrapper_is_an_invalid_batch() {
    for magic in [0u8, 1] {
        let mut p = partition();
        append_wrapper(&mut p, magic, Codec::Zstd, 0, 2, &inners(3, magic, |i| i));
        let r = scan(&p);
        assert_eq!(
            kinds(&r),
            vec![(Kind::InvalidBatch, Severity::Error, Some(2))],
            "magic {magic}"
        );
        let f = &r.findings[0];
        assert_eq!(f.evidence["field"], json!("attributes"));
        assert_eq!(
            f.evidence["problem"],
            json!("zstd compression is not allowed for magic < 2")
        );
        assert_eq!(truncation(&r), None);
        assert_eq!(r.partitions[0].log_end_offset, Some(3));
    }
}

/// `LogValidatorTest.checkNoKeyCompactedTopic` (v0/v1 gzip, lz4, snappy): as for v2, null
/// keys in legacy wrappers of a declared-compacted topic are records the cleaner will drop;
/// klogscan reports nothing.
#[test]
fn legacy_null_keys_on_a_compacted_topic_are_reported() {
    for magic in [0u8, 1] {
        let mut p = partition();
        let legacy = if magic == 0 {
            Legacy::v0()
        } else {
            Legacy::v1()
        };
        p.legacy(
            legacy
                .values(["hello", "there", "beautiful"])
                .codec(Codec::Gzip),
        );
        let r = scan_compacted(&p, true);
        assert!(
            r.findings
                .iter()
                .any(|f| f.offset == Some(2) && f.message.contains("key")),
            "magic {magic}: {:#?}",
            r.findings
        );
        let f = one(&r, Kind::KeylessRecordOnCompactedTopic);
        assert_eq!(f.evidence["keyless_records"], 3);
        assert_eq!(f.evidence["first_offset"], 0);
        // Twin: the same wrapper with every message keyed is clean.
        let mut q = partition();
        let legacy = if magic == 0 {
            Legacy::v0()
        } else {
            Legacy::v1()
        };
        q.legacy(
            legacy
                .message(Some(b"k1"), Some(b"hello"))
                .message(Some(b"k2"), Some(b"there"))
                .codec(Codec::Gzip),
        );
        assert_eq!(kinds(&scan_compacted(&q, true)), vec![], "magic {magic}");
    }
}

//! `DefaultRecordTest`: one record's bytes that `DefaultRecord.readFrom` (consumers,
//! `dump`) and `readPartiallyFrom` (the leader's validator over a compressed batch,
//! `skipKeyValueIterator`) refuse, as the only record of a batch whose CRC holds.

use super::{TOPIC, plain, write};
use klogscan::testkit::scenario::DEFAULT_START_MS;
use klogscan::testkit::{Batch, BatchSpec, Codec, PartitionBuilder, Producer};

const T: i64 = DEFAULT_START_MS;

/// Zigzag varint / varlong (`ByteUtils.writeVarlong`).
fn zz(v: i64) -> Vec<u8> {
    let mut out = Vec::new();
    klogscan::read::format::bytes::put_varlong(&mut out, v);
    out
}

/// Kafka's test record: the length varint `size`, then attributes 0, timestampDelta 2,
/// offsetDelta 0 (the tests' 1, made 0 so that the batch's one record is its last), and
/// `rest`; padded with zeros to `size` bytes of body when `pad` (the tests allocate the
/// whole declared body).
fn record(size: i64, rest: &[u8], pad: bool) -> Vec<u8> {
    let mut body = vec![0u8];
    body.extend(zz(2));
    body.extend(zz(0));
    body.extend_from_slice(rest);
    if pad {
        body.resize(size as usize, 0);
    }
    let mut r = zz(size);
    r.extend(body);
    r
}

/// `rest` after the deltas: key length, value length, header count, … as varints, with the
/// raw bytes `tail` after them.
fn fields(lengths: &[i64], tail: &[u8]) -> Vec<u8> {
    let mut b: Vec<u8> = lengths.iter().flat_map(|&l| zz(l)).collect();
    b.extend_from_slice(tail);
    b
}

/// The records `DefaultRecordTest` refuses: (Kafka test, record bytes, the field klogscan
/// names).
fn refused() -> Vec<(&'static str, Vec<u8>, &'static str)> {
    vec![
        // key size 105 in a body of 100
        (
            "testInvalidKeySizePartial",
            record(100, &fields(&[105], &[]), true),
            "key",
        ),
        // null key, value size 105
        (
            "testInvalidValueSize(Partial)",
            record(100, &fields(&[-1, 105], &[]), true),
            "value",
        ),
        // null key and value, -1 headers
        (
            "testInvalidNumHeadersPartial",
            record(100, &fields(&[-1, -1, -1], &[]), true),
            "headersCount",
        ),
        // one header whose key size is 105
        (
            "testInvalidHeaderKeyPartial",
            record(100, &fields(&[-1, -1, 1, 105], &[]), true),
            "headerKey",
        ),
        // one header whose key is null
        (
            "testNullHeaderKey(Partial)",
            record(100, &fields(&[-1, -1, 1, -1], &[]), true),
            "headerKeyLength",
        ),
        // one header, key of one byte, value size 105
        (
            "testInvalidHeaderValue(Partial)",
            record(
                100,
                &[fields(&[-1, -1, 1, 1], &[1]), zz(105)].concat(),
                true,
            ),
            "headerValue",
        ),
        // a body of one byte: the attributes, then nothing
        (
            "testUnderflowReadingTimestamp",
            [zz(1), vec![0]].concat(),
            "timestampDelta",
        ),
        // a body of two bytes: the attributes and the first byte of 156's two-byte varlong
        (
            "testUnderflowReadingVarlong",
            [zz(2), vec![0], zz(156)[..1].to_vec()].concat(),
            "timestampDelta",
        ),
    ]
}

/// A batch at offset 0 whose records section is `records` (one record), compressed with
/// `codec`, its count 1 and its CRC computed.
fn one_record_batch(codec: Codec, records: &[u8]) -> Vec<u8> {
    let spec = BatchSpec {
        codec: Codec::None,
        ..plain(0, T, Codec::None, vec![])
    };
    let mut b = spec.encode();
    b.truncate(61);
    let payload = klogscan::testkit::encode::compress(codec, records);
    b.extend_from_slice(&payload);
    let len = (b.len() - 12) as i32;
    b[8..12].copy_from_slice(&len.to_be_bytes());
    let attributes = codec.id() as i16;
    b[21..23].copy_from_slice(&attributes.to_be_bytes());
    b[57..61].copy_from_slice(&1i32.to_be_bytes());
    // maxTimestamp: the record's (timestampDelta 2).
    b[35..43].copy_from_slice(&(T + 2).to_be_bytes());
    let crc = crc32c::crc32c(&b[21..]);
    b[17..21].copy_from_slice(&crc.to_be_bytes());
    b
}

/// `orders-0`: the one-record batch at 0, then a plain record at 1.
fn case(codec: Codec, records: &[u8]) -> super::Written {
    let bytes = one_record_batch(codec, records);
    let spec = BatchSpec {
        codec,
        overrides: klogscan::testkit::HeaderOverrides {
            records_count: Some(1),
            ..Default::default()
        },
        ..plain(0, T, codec, vec![])
    };
    let mut p = PartitionBuilder::new(TOPIC, 0).start_time(T + 10);
    let info = super::info_of(&spec, bytes.len());
    p.append_raw(bytes, info);
    p.append(Batch::new(Producer::PLAIN).records(1));
    write(p)
}

/// `DefaultRecordTest.testInvalidKeySizePartial`, `testInvalidValueSize`,
/// `testInvalidValueSizePartial`, `testInvalidNumHeadersPartial`,
/// `testInvalidHeaderKeyPartial`, `testNullHeaderKey`, `testNullHeaderKeyPartial`,
/// `testInvalidHeaderValue`, `testInvalidHeaderValuePartial`,
/// `testUnderflowReadingTimestamp`, `testUnderflowReadingVarlong`: each record the only one
/// of a batch whose CRC holds, uncompressed (`readFrom` over the batch's buffer, as a
/// consumer and `dump` read it) and gzip- or zstd-compressed (`readFrom` over the stream,
/// and the leader's `readPartiallyFrom`, which refuses the same bytes: the `…Partial`
/// tests). `LogSegment.recover` checks the CRC only: the batch is kept, nothing truncated;
/// plain `scan` reads headers only and says nothing; `--deep` reports one `invalid_batch`
/// at offset 0 naming the record field that failed. Near miss: the same record with key
/// "hi", value "there", no header and an exact length — read whole, quiet.
#[test]
fn records_read_from_refuses_are_invalid_batches_at_their_field() {
    for codec in [Codec::None, Codec::Gzip, Codec::Zstd] {
        for (what, bytes, field) in refused() {
            let w = case(codec, &bytes);
            let f = w.only_deep_invalid();
            assert_eq!(f.offset, Some(0), "{what} {codec:?}");
            assert_eq!(
                f.evidence["structure"], "record",
                "{what} {codec:?}: {f:#?}"
            );
            assert_eq!(f.evidence["field"], field, "{what} {codec:?}: {f:#?}");
            let v = w.verify();
            assert!(v.partitions[0].prediction.truncation.is_none(), "{what}");
            assert_eq!(w.scan(true).partitions[0].log_end_offset, Some(2), "{what}");
        }
        let w = case(codec, &fine_record());
        w.assert_quiet();
        assert_eq!(w.scan(true).partitions[0].records, 2, "{codec:?}");
    }
}

/// `DefaultRecordTest.testSerdeNoSequence`: a record of a batch without a producer reads
/// with sequence -1 (`NO_SEQUENCE`), whatever its offset delta (`dump` prints
/// `sequence: -1`). Near miss: the same records under producer 23423 from sequence 37 —
/// each record's sequence is the base plus its offset delta (37, 38).
#[test]
fn a_record_without_a_producer_has_no_sequence() {
    let seqs = |producer: Producer| {
        let mut p = PartitionBuilder::new(TOPIC, 0).start_time(T);
        let mut b = Batch::new(producer).records(2);
        if producer.id >= 0 {
            b = b.sequence(37);
        }
        p.append(b);
        let w = write(p);
        w.assert_quiet();
        let (_, records) = w.dump();
        (records.iter())
            .map(|l| {
                l.split(" sequence: ")
                    .nth(1)
                    .unwrap()
                    .split(' ')
                    .next()
                    .unwrap()
                    .to_string()
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(seqs(Producer::PLAIN), ["-1", "-1"]);
    assert_eq!(seqs(Producer::idempotent(23423, 0)), ["37", "38"]);
}

/// Kafka's test record "hi"/"there" with an exact length (what `testBasicSerde` writes).
fn fine_record() -> Vec<u8> {
    let mut fine = fields(&[2], b"hi");
    fine.extend(fields(&[5], b"there"));
    fine.extend(zz(0));
    let size = (1 + zz(2).len() + zz(0).len() + fine.len()) as i64;
    record(size, &fine, false)
}

/// `orders-0`: a batch at 0 of lastOffsetDelta 0 whose records section is `records` and
/// whose count is 0 (its CRC computed), then a plain record at 1.
fn count_0_over(records: &[u8]) -> super::Written {
    let mut b = one_record_batch(Codec::None, records);
    b[57..61].copy_from_slice(&0i32.to_be_bytes());
    if records.is_empty() {
        b[35..43].copy_from_slice(&T.to_be_bytes());
    }
    let crc = crc32c::crc32c(&b[21..]);
    b[17..21].copy_from_slice(&crc.to_be_bytes());
    let spec = plain(0, T, Codec::None, vec![]);
    let mut p = PartitionBuilder::new(TOPIC, 0).start_time(T + 10);
    let info = super::info_of(&spec, b.len());
    p.append_raw(b, info);
    p.append(Batch::new(Producer::PLAIN).records(1));
    write(p)
}

/// `DefaultRecordBatch.iterator` on a count of 0 (`DefaultRecordBatchTest.testWriteEmptyHeader`'s
/// count, `MemoryRecordsTest.testFilterToEmptyBatchRetention`'s batch) over a whole record:
/// Kafka's iterators return no record and check nothing (`RecordIterator` holds the
/// leftovers against the count only after its last declared record), and no Kafka writer
/// leaves such bytes (the cleaner's empty batch is the bare header; the leader refuses a
/// count of 0, `LogValidator.validateBatch`). `--deep` reports it as an `invalid_batch`
/// naming `recordsCount` at the records' first byte (61), in its own words — not the
/// "records still remaining" Kafka says after a last declared record, which it never says
/// here (was: that message). Near miss: the cleaner's bare header of count 0 — quiet.
#[test]
fn a_count_of_0_over_records_bytes_is_named_as_such() {
    let w = count_0_over(&fine_record());
    let f = w.only_deep_invalid();
    assert_eq!((f.offset, f.position), (Some(0), Some(0)));
    assert_eq!(
        (&f.evidence["field"], &f.evidence["error_position"]),
        (&serde_json::json!("recordsCount"), &serde_json::json!(61))
    );
    assert_eq!(
        f.evidence["problem"],
        "records count 0 over records bytes: Kafka's record iterators read none of them"
    );
    let near = count_0_over(&[]);
    near.assert_quiet();
    assert_eq!(near.scan(true).partitions[0].records, 1);
}

/// The consumer's side of the batch above: `CompletedFetch.nextFetchedRecord` checks the
/// batch's size and CRC (`maybeEnsureValid`, which pass) and reads it through
/// `streamingIterator`, whose `RecordIterator` yields nothing for a count of 0 and checks
/// no leftover: no exception, the consumer goes on at offset 1 without the record.
#[test]
fn consumers_read_no_record_of_a_count_0_batch_and_raise_nothing() {
    let f = count_0_over(&fine_record()).only_deep_invalid();
    let client = f.client_error.unwrap_or_default();
    assert!(!client.contains("poll fails"), "{client}");
    assert!(client.contains("no exception"), "{client}");
    // Near miss: bytes left after a last declared record fail the consumer's iterator.
    let mut two = fine_record();
    two.extend_from_slice(&[0, 0, 0]);
    let f = case(Codec::None, &two).only_deep_invalid();
    let client = f.client_error.unwrap_or_default();
    assert!(client.contains("poll fails"), "{client}");
}

/// `DefaultRecordTest.testInvalidKeySizePartial` and its siblings read through
/// `readPartiallyFrom`, the leader's reader of a compressed v2 batch when it keeps the
/// producer's codec (`LogValidator.validateMessagesAndAssignOffsetsCompressed`'s in-place
/// path, `skipKeyValueIterator`): it reads the fields one after the other and never holds
/// them against the record's length varint (`readFrom` does: `testInvalidSizeOfBodyInBytes`).
/// A gzip batch whose one record declares 3 bytes less than its fields take (or a negative
/// length) passes the leader and is stored as it came; consumers refuse it (`readFrom` reads
/// the declared bytes, then underflows). `--deep` reports it (consumers fail: right), and
/// says the leader rejected it on append (wrong on that path).
#[test]
fn a_compressed_record_shorter_than_its_fields_passes_the_leaders_in_place_path() {
    let fine = fine_record();
    let size = fine.len() as i64 - 1;
    for declared in [size - 3, -1] {
        let mut short = zz(declared);
        short.extend_from_slice(&fine[1..]);
        let f = case(Codec::Gzip, &short).only_deep_invalid();
        assert!(
            f.broker_behaviour
                .starts_with("appended by a leader that keeps the producer's codec"),
            "{declared}: {}",
            f.broker_behaviour
        );
    }
    // Near miss: the same record in an uncompressed batch, which every leader reads whole
    // (`DefaultRecord.readFrom`): rejected on append.
    let mut short = zz(size - 3);
    short.extend_from_slice(&fine[1..]);
    let f = case(Codec::None, &short).only_deep_invalid();
    assert!(
        f.broker_behaviour.starts_with("rejected on append"),
        "{}",
        f.broker_behaviour
    );
}

//! `ByteBufferLogInputStreamTest`: what the client's batch iterator refuses that the
//! broker's file reader (`FileLogInputStream`, `LogSegment.recover`) keeps.

use super::{TOPIC, append_edited, plain, rec, write};
use klogscan::finding::Kind;
use klogscan::testkit::scenario::DEFAULT_START_MS;
use klogscan::testkit::{Batch, Codec, PartitionBuilder, Producer, Rec};

const T: i64 = DEFAULT_START_MS;

/// `ByteBufferLogInputStreamTest.iteratorRaisesOnInvalidMagic`: two batches of two records
/// (0–1 and 2–3), the second's magic byte set to 37 after its CRC was computed. The
/// CRC-32C starts after the magic byte, so `FileLogInputStream` hands the batch to the v2
/// reader and recovery keeps it (the log ends at 4, nothing truncated); the client's
/// `ByteBufferLogInputStream` refuses it ("Invalid magic found in record":
/// `CorruptRecordException`): `invalid_batch` at 2 naming the magic, without `--deep`.
/// Near miss: the magic changed and the CRC off too — the broker's `ensureValid` fails
/// there, so the bytes from the batch's position on frame as nothing the broker keeps: the
/// log ends at 2 and `trailing_bytes` names the magic (recovery, after a crash, would
/// truncate them).
/// The first batch of the Kafka test: records at T+15 and T+20.
fn first() -> klogscan::testkit::BatchSpec {
    plain(
        0,
        T + 15,
        Codec::None,
        vec![rec(0, 0, "a", "1"), rec(1, 5, "b", "2")],
    )
}

#[test]
fn a_magic_of_37_under_a_crc_that_holds_is_kept_and_refused_by_clients() {
    let case = |crc_off: bool| {
        let mut p = PartitionBuilder::new(TOPIC, 0).start_time(T + 100);
        p.append_spec(first());
        let second = plain(
            2,
            T + 30,
            Codec::None,
            vec![rec(0, 0, "c", "3"), rec(1, 10, "d", "4")],
        );
        append_edited(&mut p, &second, |b| {
            b[16] = 37;
            if crc_off {
                b[20] ^= 1;
            }
        });
        write(p)
    };
    let w = case(false);
    let r = w.scan(false);
    let loud: Vec<_> = (r.findings.iter())
        .filter(|f| f.severity >= klogscan::finding::Severity::Warning)
        .collect();
    assert!(
        loud.len() == 1
            && loud[0].kind == Kind::InvalidBatch
            && loud[0].offset == Some(2)
            && loud[0].message.contains("magic 37 is not 2"),
        "{:#?}",
        r.findings
    );
    assert_eq!(r.partitions[0].log_end_offset, Some(4));
    assert!(r.partitions[0].truncation.is_none());
    let v = w.verify();
    assert!(v.partitions[0].prediction.truncation.is_none());
    let near = case(true);
    let r = near.scan(false);
    assert_eq!(r.partitions[0].log_end_offset, Some(2));
    let at = first().encode().len() as u64;
    let loud: Vec<_> = (r.findings.iter())
        .filter(|f| f.severity >= klogscan::finding::Severity::Warning)
        .map(|f| (f.kind, f.position, f.evidence["reason"].clone()))
        .collect();
    assert_eq!(
        loud,
        vec![(
            Kind::TrailingBytes,
            Some(at),
            "magic byte is not 0, 1 or 2".into()
        )]
    );
}

/// `ByteBufferLogInputStreamTest.iteratorRaisesOnTooLargeRecords`: the client's iterator
/// refuses a batch above its limit (`RecordTooLargeException`); the broker's file reader
/// has none (`FileRecords.batchesFrom` reads up to the file's end, `LogSegment.recover`
/// checks size and CRC only). A batch of 1.5 MiB — above the default
/// `max.message.bytes` of 1 MiB + 12, which a topic may raise — is read whole: the log
/// ends at 3, nothing raised. Near miss: the same batch cut 10 bytes short at the file's
/// end (a crash mid-append) — a partial batch recovery truncates (`truncated_batch`).
#[test]
fn a_batch_above_a_clients_limit_is_read_whole_from_a_file() {
    let case = |cut: bool| {
        let mut p = PartitionBuilder::new(TOPIC, 0).start_time(T);
        p.append(Batch::new(Producer::PLAIN).records(1));
        let big = vec![b'x'; 1536 * 1024];
        p.append(
            Batch::new(Producer::PLAIN)
                .record(Rec::kv("k", &big))
                .record(Rec::kv("l", "y")),
        );
        let w = write(p);
        if cut {
            let (_, f) = w.m.segments.last().unwrap();
            let len = std::fs::metadata(f).unwrap().len();
            std::fs::OpenOptions::new()
                .write(true)
                .open(f)
                .unwrap()
                .set_len(len - 10)
                .unwrap();
        }
        w
    };
    let w = case(false);
    w.assert_quiet();
    let r = w.scan(true);
    assert_eq!(
        (r.partitions[0].records, r.partitions[0].log_end_offset),
        (3, Some(3))
    );
    let near = case(true);
    let r = near.scan(false);
    assert_eq!(r.partitions[0].log_end_offset, Some(1));
    assert!(
        r.findings
            .iter()
            .any(|f| f.kind == Kind::TruncatedBatch && f.offset == Some(1)),
        "{:#?}",
        r.findings
    );
}

/// `orders-0` of two records whose one segment is then extended to `len` bytes (a hole),
/// after a crash (the load recovers the segment).
fn segment_of(len: u64) -> super::Written {
    let mut p = PartitionBuilder::new(TOPIC, 0).start_time(T);
    p.append(Batch::new(Producer::PLAIN).records(2));
    let w = super::write_crashed(p);
    let (_, f) = w.m.segments.last().unwrap();
    let file = std::fs::OpenOptions::new().write(true).open(f).unwrap();
    file.set_len(len).unwrap();
    w
}

/// `FileRecordsTest.testOpenOversizeFile`: `FileRecords` refuses to open a segment file of
/// more than `Integer.MAX_VALUE` bytes (`KafkaException`, "larger than the maximum allowed
/// segment size"); `LogSegment.open` runs for every segment at load, and `LogManager.loadLogs`
/// rethrows any exception that is not an `IOException`: the broker does not start, whatever
/// the last shutdown. No broker writes such a file (`FileRecords.append` refuses to pass the
/// limit: `testAppendProtectsFromOverflow`). Here a segment of two records grown to
/// 2^31 + 5 bytes (a hole) before a crash: `verify` predicts the load failure. Near
/// miss: grown to 2^31 - 1 bytes — opened, its zero tail truncated by the recovery, no load
/// failure.
#[test]
fn a_segment_file_past_int_max_fails_the_load() {
    let near = segment_of(i32::MAX as u64);
    let v = near.verify();
    let p = &v.partitions[0].prediction;
    assert!(p.load_failure.is_none(), "{:#?}", p.load_failure);
    assert!(p.truncation.is_some());
    let w = segment_of(i32::MAX as u64 + 6);
    let v = w.verify();
    let f = v.partitions[0].prediction.load_failure.as_ref();
    assert!(
        f.is_some_and(|f| f.exception.contains("KafkaException")),
        "{f:#?}"
    );
}

/// `FileRecordsTest.testIterationOverPartialAndTruncation`: zero bytes written after the
/// last batch (2, 4, 5 and 6 of them: 17 in all) do not break reading the file —
/// `FileLogInputStream.nextBatch` reads no entry header from fewer than 18 bytes
/// (`HEADER_SIZE_UP_TO_MAGIC` is 17) and stops there. After a clean shutdown the load reads
/// the last segment's end (`LogSegment.readNextOffset`) and stops at them quietly: no load
/// failure, the log ends at 2 (`preallocated_tail`, info only). Near miss: 18 zero bytes —
/// a header whose size 0 is below 14: `CorruptRecordException`, which the load does not
/// catch (the broker does not start).
#[test]
fn seventeen_zero_bytes_after_the_last_batch_are_read_past() {
    let case = |zeros: u64| {
        let mut p = PartitionBuilder::new(TOPIC, 0).start_time(T);
        p.append(Batch::new(Producer::PLAIN).records(2));
        let w = write(p);
        let (_, f) = w.m.segments.last().unwrap();
        let len = std::fs::metadata(f).unwrap().len();
        let file = std::fs::OpenOptions::new().write(true).open(f).unwrap();
        file.set_len(len + zeros).unwrap();
        w
    };
    let w = case(17);
    let r = w.scan(false);
    assert_eq!(r.partitions[0].log_end_offset, Some(2));
    let kinds: Vec<_> = r.findings.iter().map(|f| (f.kind, f.severity)).collect();
    assert_eq!(
        kinds,
        vec![(Kind::PreallocatedTail, klogscan::finding::Severity::Info)]
    );
    let v = w.verify();
    let p = &v.partitions[0].prediction;
    assert!(p.load_failure.is_none(), "{:#?}", p.load_failure);
    let near = case(18);
    let v = near.verify();
    let f = v.partitions[0].prediction.load_failure.as_ref();
    assert!(
        f.is_some_and(|f| f.exception == "CorruptRecordException"),
        "{f:#?}"
    );
}

//! Kafka's consumer fetch tests (clients/src/test/java/org/apache/kafka/clients/consumer/
//! internals/: `FetcherTest`, `CompletedFetchTest`, `FetchCollectorTest`) held against what
//! klogscan says a consumer meets when it reads the same bytes: which records a
//! read_committed consumer returns or skips given the batches, markers and the `.txnindex`
//! the broker serves them with (`CompletedFetch.nextFetchedRecord`,
//! `consumeAbortedTransactionsUpTo`, `isBatchAborted`, `containsAbortMarker`; broker side
//! `LocalLog.collectAbortedTransactions` → `TransactionIndex.collectAbortedTxns`), and which
//! exception a damaged batch raises (`CompletedFetch.maybeEnsureValid`).
#![cfg(feature = "testkit")]

use klogscan::finding::{Finding, Kind};
use klogscan::testkit::files::encode_txn_index;
use klogscan::testkit::{
    AbortedTxn, Batch, LogDirBuilder, Manifest, PartitionBuilder, PartitionFileOptions, Producer,
};
use klogscan::verify::{PartitionVerification, VerifyOptions, verify_partition};

fn write(p: PartitionBuilder) -> (tempfile::TempDir, Manifest) {
    let dir = tempfile::tempdir().unwrap();
    let m = LogDirBuilder::new(1)
        .partition(p)
        .write(dir.path())
        .unwrap()
        .partitions
        .remove(0);
    (dir, m)
}

/// `p` with the legacy (magic 1) entry `bytes` (offsets 0 to `last`, `records` records,
/// `codec`) appended as written.
fn append_legacy(
    p: &mut PartitionBuilder,
    bytes: Vec<u8>,
    last: i64,
    records: i32,
    codec: klogscan::testkit::Codec,
) {
    let size = bytes.len() as u64;
    p.append_raw(
        bytes,
        klogscan::testkit::BatchInfo {
            base_offset: 0,
            last_offset: last,
            position: 0,
            size,
            file: Default::default(),
            segment_base: 0,
            magic: 1,
            producer_id: -1,
            producer_epoch: -1,
            base_sequence: -1,
            record_count: records,
            codec,
            transactional: false,
            control: None,
            coordinator_epoch: None,
            partition_leader_epoch: -1,
            first_timestamp: -1,
            max_timestamp: -1,
        },
    );
}

/// The client text of the one finding of `kind` a run over `p` gives.
fn client_text_of(p: PartitionBuilder, kind: Kind) -> String {
    use klogscan::request::{self, Request};
    let dir = tempfile::tempdir().unwrap();
    let m = p.write(dir.path()).unwrap();
    let a = request::run(&Request::new([&m.dir])).unwrap();
    let f: Vec<&Finding> = a
        .report
        .findings
        .iter()
        .filter(|f| f.kind == kind)
        .collect();
    assert_eq!(f.len(), 1, "{:#?}", a.report.findings);
    f[0].client_error.clone().unwrap_or_default()
}

fn txnindex_findings(v: &PartitionVerification) -> Vec<&Finding> {
    v.findings
        .iter()
        .filter(|f| f.kind == Kind::TxnindexMismatch)
        .collect()
}

/// `FetcherTest.testMultipleAbortMarkers`: producer 1's transaction 0–1 is aborted at 2, a
/// duplicate ABORT follows at 3 ("should be ignored"), then a committed transaction 4–5
/// with its COMMIT at 6; the consumer returns exactly the two committed records.
///
/// A broker up to 2.7 (before KAFKA-10702, `ProducerAppendInfo.appendEndTxnMarker`: "case
/// None => transactions += new TxnMetadata(producerId, offset); offset") completes the
/// duplicate ABORT as an aborted transaction of its own, firstOffset = lastOffset = 3, and
/// `LogSegment.updateTxnIndex` indexes it: the segment's `.txnindex` holds (1, 0, 2, lso 3)
/// and (1, 3, 3, lso 4). Segments written then are still read by today's brokers. For a
/// read_committed fetch the second entry is harmless: `consumeAbortedTransactionsUpTo(3)`
/// adds producer 1 at the marker batch itself, and `containsAbortMarker` removes it at the
/// same batch, so records 4–5 are delivered (the very sequence testMultipleAbortMarkers
/// runs, with the response's aborted transactions the broker collects from that index).
///
/// klogscan's `verify` lists (1, 3, 3) as an "entry with no matching ABORT marker" and says
/// read_committed consumers "silently skip these producers' committed transactional records
/// from firstOffset until an ABORT marker": a false alarm (src/verify/checks/txnindex.rs,
/// `compare`'s `extra` filter accepts an entry at an ABORT marker of its producer only on a
/// compacted partition or below the first offset held).
#[test]
fn multiple_abort_markers_pre_2_8_empty_abort_entry_is_harmless() {
    let p1 = Producer::transactional(1, 0);
    let mut p =
        PartitionBuilder::new("multi-abort", 0).broker_files(PartitionFileOptions::default());
    p.append(Batch::new(p1).records(2)); // 0–1
    p.abort(p1, 0); // 2
    p.abort(p1, 0); // 3: the duplicate abort
    p.append(Batch::new(p1).records(2)); // 4–5
    p.commit(p1, 0); // 6
    let (_dir, m) = write(p);
    let at = |o: i64| m.batches.iter().find(|b| b.base_offset == o).unwrap();
    assert!(at(2).control.is_some() && at(3).control.is_some());
    assert_eq!(at(4).last_offset, 5);
    // The index a 2.7 broker wrote for this segment.
    let entries = [
        AbortedTxn {
            producer_id: 1,
            first_offset: 0,
            last_offset: 2,
            last_stable_offset: 3,
        },
        AbortedTxn {
            producer_id: 1,
            first_offset: 3,
            last_offset: 3,
            last_stable_offset: 4,
        },
    ];
    std::fs::write(
        m.dir.join(format!("{:020}.txnindex", 0)),
        encode_txn_index(&entries),
    )
    .unwrap();
    let v = verify_partition(&m.dir, &VerifyOptions::default()).unwrap();
    let wrong: Vec<_> = txnindex_findings(&v)
        .into_iter()
        .map(|f| (f.message.clone(), f.client_error.clone()))
        .collect();
    assert!(
        wrong.is_empty(),
        "a pre-2.8 empty-abort entry at its own ABORT marker hides nothing from a read_committed consumer (FetcherTest.testMultipleAbortMarkers): {wrong:#?}"
    );
}

/// The other side of `multiple_abort_markers_pre_2_8_empty_abort_entry_is_harmless`: an
/// entry begun and ended at one offset is harmless only at an ABORT marker of its own
/// producer. At the COMMIT marker (6), or at producer 1's ABORT for producer 2, it is what
/// no broker indexed, and a read_committed consumer would skip that producer's records
/// until one of its ABORT markers: still extra.
#[test]
fn an_empty_abort_entry_elsewhere_is_still_extra() {
    for (pid, at) in [(1, 6), (2, 3)] {
        let p1 = Producer::transactional(1, 0);
        let mut p =
            PartitionBuilder::new("multi-abort", 0).broker_files(PartitionFileOptions::default());
        p.append(Batch::new(p1).records(2)); // 0–1
        p.abort(p1, 0); // 2
        p.abort(p1, 0); // 3
        p.append(Batch::new(p1).records(2)); // 4–5
        p.commit(p1, 0); // 6
        let (_dir, m) = write(p);
        let entries = [
            AbortedTxn {
                producer_id: 1,
                first_offset: 0,
                last_offset: 2,
                last_stable_offset: 3,
            },
            AbortedTxn {
                producer_id: pid,
                first_offset: at,
                last_offset: at,
                last_stable_offset: at + 1,
            },
        ];
        std::fs::write(
            m.dir.join(format!("{:020}.txnindex", 0)),
            encode_txn_index(&entries),
        )
        .unwrap();
        let v = verify_partition(&m.dir, &VerifyOptions::default()).unwrap();
        let f = txnindex_findings(&v);
        assert_eq!(f.len(), 1, "({pid}, {at}): {f:#?}");
        assert!(
            f[0].message.contains("no matching ABORT"),
            "({pid}, {at}): {}",
            f[0].message
        );
    }
}

/// Low realism (no Kafka writer compresses a marker; `LogValidatorTest.testControlRecordsNotCompressed`),
/// but what a consumer meets is exact: `CompletedFetch.maybeEnsureValid(batch)` calls
/// `DefaultRecordBatch.ensureValid`, which checks only the batch size and the CRC, both
/// fine here; `containsAbortMarker` reads the first record through `batch.iterator()`
/// (which decompresses), and `nextFetchedRecord` skips every record of a control batch
/// (`FetcherTest.testFetcherIgnoresControlRecords`). No exception, read_committed or not.
///
/// klogscan's `invalid_batch` of a CRC-valid header problem carries no client text of its
/// own (src/partition/scan/integrity.rs, `check_header_fields`), so `report::client::fill`
/// gives it the CRC text of `for_kind(InvalidBatch)` (src/report/client.rs): "KafkaException
/// … maybeEnsureValid … turns the batch's CorruptRecordException into a KafkaException
/// ("Record batch … is invalid"): … poll fails at that offset" — a consumer error that
/// does not happen.
#[test]
fn compressed_marker_raises_nothing_in_a_consumer() {
    use klogscan::testkit::Codec;
    use klogscan::testkit::encode::end_txn_record;
    let txn = Producer::transactional(23423, 5);
    let mut p = PartitionBuilder::new("compressed-marker", 0);
    p.append(Batch::new(txn).records(1));
    p.append(Batch::new(txn).tweak(|s| {
        s.control = true;
        s.codec = Codec::Gzip;
        s.base_sequence = -1;
        s.records = vec![end_txn_record(true, 0)];
    }));
    let text = client_text_of(p, Kind::InvalidBatch);
    assert!(
        !text.contains("KafkaException") && !text.contains("poll fails"),
        "a CRC-valid compressed marker raises nothing in a consumer (CompletedFetch.maybeEnsureValid checks size and CRC only; control records are skipped): {text}"
    );
}

/// Low realism (message format v0/v1 data, damage confined to the 4 CRC bytes), exact
/// consumer behaviour: `CompletedFetch.maybeEnsureValid(batch)` checks a batch only when
/// `batch.magic() >= MAGIC_VALUE_V2`; for a compressed legacy wrapper the consumer then
/// iterates the inner messages (`AbstractLegacyRecordBatch.DeepRecordsIterator`, which never
/// checks the wrapper's CRC) and `maybeEnsureValid(record)` checks each *inner* CRC, all
/// valid here. The consumer delivers the three records with no exception (an uncompressed
/// legacy message with a bad CRC fails with "Record for partition … at offset … is
/// invalid", `FetcherTest.testParseCorruptedRecord`, not "Record batch … is invalid").
///
/// klogscan's `crc_mismatch` (src/partition/scan/walk.rs `legacy_entry` →
/// src/partition/scan/integrity.rs `crc_finding`) says consumers get "KafkaException
/// wrapping CorruptRecordException ("Record batch … is invalid", CompletedFetch.maybeEnsureValid
/// …): poll fails at this offset" whatever the magic and codec. (The broker side — recovery
/// truncating at the wrapper — is right: `LogSegment.recover` runs `batch.ensureValid()`,
/// which for a legacy wrapper checks the outer CRC.)
#[test]
fn legacy_wrapper_crc_is_not_checked_by_consumers() {
    use klogscan::testkit::Codec;
    use klogscan::testkit::encode::{LegacySpec, compress};
    let inner = |o: i64, v: &str| LegacySpec {
        offset: o,
        magic: 1,
        attributes: 0,
        timestamp: 1_700_000_000_000,
        key: Some(v.as_bytes().to_vec()),
        value: Some(v.as_bytes().to_vec()),
        crc: None,
    };
    let set: Vec<u8> = [inner(0, "a"), inner(1, "b"), inner(2, "c")]
        .iter()
        .flat_map(LegacySpec::encode)
        .collect();
    let good = LegacySpec {
        offset: 2,
        magic: 1,
        attributes: Codec::Gzip.id(),
        timestamp: 1_700_000_000_000,
        key: None,
        value: Some(compress(Codec::Gzip, &set)),
        crc: None,
    };
    // The same wrapper with only its stored CRC changed.
    let mut bytes = good.encode();
    bytes[12] ^= 0x5a;
    let mut p = PartitionBuilder::new("legacy-crc", 0);
    append_legacy(&mut p, bytes, 2, 3, Codec::Gzip);
    let text = client_text_of(p, Kind::CrcMismatch);
    assert!(
        !text.contains("poll fails"),
        "consumers do not check a legacy wrapper's CRC, only its inner messages' (CompletedFetch.maybeEnsureValid: magic >= 2 only): {text}"
    );
}

/// The client text of a CRC-valid `invalid_batch` follows its problems: a negative record
/// count (`DefaultRecordBatch`'s iterator: InvalidRecordException "Found invalid record
/// count") and an unknown compression id (`CompressionType.forId`:
/// IllegalArgumentException) fail the poll after `maybeEnsureValid` has passed the batch;
/// a record count above lastOffsetDelta + 1 is not judged (no claim either way).
#[test]
fn a_crc_valid_invalid_batch_says_what_its_problems_do_to_a_consumer() {
    type Tweak = fn(&mut klogscan::testkit::BatchSpec);
    let cases: [(&str, Tweak, &str); 3] = [
        (
            "negative-count",
            |s| s.overrides.records_count = Some(-1),
            "reading its records throws",
        ),
        (
            "unknown-codec",
            |s| s.overrides.attributes = Some(5),
            "reading its records throws",
        ),
        (
            "count-above-delta",
            |s| s.overrides.last_offset_delta = Some(0),
            "not judged",
        ),
    ];
    for (topic, tweak, want) in cases {
        let mut p = PartitionBuilder::new(topic, 0);
        p.append(Batch::new(Producer::PLAIN).records(1));
        p.append(Batch::new(Producer::PLAIN).records(2).tweak(tweak));
        let text = client_text_of(p, Kind::InvalidBatch);
        assert!(text.contains(want), "{topic}: {text}");
        assert!(
            !text.contains("Record batch for partition"),
            "{topic}: the CRC is valid: {text}"
        );
    }
}

/// `FetcherTest.testParseCorruptedRecord`: an uncompressed legacy message whose CRC does
/// not match fails the poll as "Record for partition … at offset … is invalid"
/// (`CompletedFetch.maybeEnsureValid(record)`), not as a batch; a v2 batch's CRC fails as
/// "Record batch for partition … is invalid".
#[test]
fn an_uncompressed_legacy_message_with_a_bad_crc_fails_as_a_record() {
    use klogscan::testkit::Codec;
    use klogscan::testkit::encode::LegacySpec;
    let mut bytes = LegacySpec {
        offset: 0,
        magic: 1,
        attributes: 0,
        timestamp: 1_700_000_000_000,
        key: Some(b"k".to_vec()),
        value: Some(b"v".to_vec()),
        crc: None,
    }
    .encode();
    bytes[12] ^= 0x5a;
    let mut p = PartitionBuilder::new("legacy-plain-crc", 0);
    append_legacy(&mut p, bytes, 0, 1, Codec::None);
    let text = client_text_of(p, Kind::CrcMismatch);
    assert!(
        text.contains("Record for partition") && text.contains("poll fails"),
        "{text}"
    );

    // A v2 batch with its CRC changed: the batch text.
    let mut p = PartitionBuilder::new("v2-crc", 0);
    p.append(
        Batch::new(Producer::PLAIN)
            .records(1)
            .tweak(|s| s.overrides.crc = Some(7)),
    );
    let text = client_text_of(p, Kind::CrcMismatch);
    assert!(
        text.contains("Record batch for partition") && text.contains("poll fails"),
        "{text}"
    );
}

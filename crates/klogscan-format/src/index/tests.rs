use super::*;
use crate::Tail;

fn offset_bytes(entries: &[(i32, i32)]) -> Vec<u8> {
    let mut v = Vec::new();
    for &(r, p) in entries {
        v.extend_from_slice(&r.to_be_bytes());
        v.extend_from_slice(&p.to_be_bytes());
    }
    v
}

#[test]
fn time_entry_inside_a_batch_is_right_only_with_the_batch_max_timestamp() {
    let e = |ts: i64, off: i64| TimeEntry {
        slot: 0,
        timestamp: ts,
        relative_offset: off as i32,
        offset: off,
    };
    let inside = |ts: Option<i64>| TimeCheck::InsideBatch {
        batch_last_offset: 11,
        log_timestamp: ts,
    };
    let ok = TimeEntryCheck {
        entry: e(100, 10),
        check: inside(Some(100)),
        out_of_order_after: None,
    };
    assert!(!ok.is_problem());
    let wrong_ts = TimeEntryCheck {
        check: inside(Some(99)),
        ..ok
    };
    assert!(wrong_ts.is_problem());
    let unordered = TimeEntryCheck {
        out_of_order_after: Some(200),
        ..ok
    };
    assert!(unordered.is_problem());
    let missing = TimeEntryCheck {
        check: TimeCheck::NotFound {
            found_log_offset: -1,
        },
        ..ok
    };
    assert!(missing.is_problem());
}

fn time_bytes(entries: &[(i64, i32)]) -> Vec<u8> {
    let mut v = Vec::new();
    for &(t, r) in entries {
        v.extend_from_slice(&t.to_be_bytes());
        v.extend_from_slice(&r.to_be_bytes());
    }
    v
}

#[test]
fn offset_index_trimmed() {
    let b = offset_bytes(&[(3, 4730), (7, 9571)]);
    let idx = OffsetIndex::new(&b, 100);
    let l = idx.layout();
    assert_eq!(
        (l.slots, l.used, l.tail_slots, l.trailing_bytes),
        (2, 2, 0, 0)
    );
    assert!(l.is_trimmed());
    let e: Vec<_> = idx.entries().map(|e| (e.offset, e.position)).collect();
    assert_eq!(e, vec![(103, 4730), (107, 9571)]);
    assert_eq!(idx.check(), Ok(()));
    assert_eq!(idx.sanity_check(), Ok(()));
}

#[test]
fn offset_index_untrimmed_zero_tail() {
    let mut b = offset_bytes(&[(3, 4730), (7, 9571)]);
    b.resize(8 * 10, 0);
    let idx = OffsetIndex::new(&b, 100);
    let l = idx.layout();
    assert_eq!((l.slots, l.used, l.tail_slots), (10, 2, 8));
    assert!(l.tail_all_zero && !l.is_trimmed());
    assert_eq!(idx.entries().count(), 2);
    // Kafka's offset sanity check passes an untrimmed file (last offset == base).
    assert_eq!(idx.sanity_check(), Ok(()));
    // A tail slot with relative offset 0 but a non-zero position is not "all zero".
    b[8 * 5 + 7] = 1;
    let l = OffsetIndex::new(&b, 100).layout();
    assert_eq!(l.used, 2);
    assert!(!l.tail_all_zero);
}

#[test]
fn offset_index_errors() {
    // bad size
    let mut b = offset_bytes(&[(3, 4730)]);
    b.push(0);
    let idx = OffsetIndex::new(&b, 0);
    assert_eq!(idx.check().unwrap_err().field, "length");
    assert_eq!(
        idx.sanity_check(),
        Err(IndexSanityError::BadLength {
            len: 9,
            entry_size: 8
        })
    );
    assert_eq!(
        idx.sanity_check().unwrap_err().kafka_message("/d/x.index"),
        "Index file /d/x.index is corrupt, found 9 bytes which is neither positive nor a multiple of 8"
    );
    // offsets not increasing
    let b = offset_bytes(&[(7, 100), (5, 200)]);
    let e = OffsetIndex::new(&b, 0).check().unwrap_err();
    assert_eq!((e.field, e.position), ("relativeOffset", 8));
    // positions not increasing
    let b = offset_bytes(&[(5, 200), (7, 200)]);
    let e = OffsetIndex::new(&b, 0).check().unwrap_err();
    assert_eq!((e.field, e.position), ("position", 12));
    // negative relative offset → last offset below base
    let b = offset_bytes(&[(-5, 200)]);
    let idx = OffsetIndex::new(&b, 10);
    assert_eq!(idx.check().unwrap_err().field, "relativeOffset");
    let s = idx.sanity_check().unwrap_err();
    assert_eq!(
        s,
        IndexSanityError::OffsetBelowBase {
            last_offset: 5,
            base_offset: 10
        }
    );
    assert_eq!(
        s.kafka_message("/p"),
        "Corrupt index found, index file /p has non-zero size but the last offset is 5 \
         which is less than the base offset 10"
    );
}

#[test]
fn time_index_untrimmed_fails_kafka_sanity() {
    let mut b = time_bytes(&[(1000, 3), (2000, 7)]);
    b.resize(12 * 6, 0);
    let idx = TimeIndex::new(&b, 50);
    let l = idx.layout();
    assert_eq!((l.slots, l.used, l.tail_slots), (6, 2, 4));
    assert!(l.tail_all_zero);
    assert_eq!(idx.check(), Ok(()));
    let s = idx.sanity_check().unwrap_err();
    assert_eq!(
        s,
        IndexSanityError::TimestampBelowFirst {
            last_timestamp: 0,
            first_timestamp: 1000
        }
    );
    assert_eq!(
        s.kafka_message("/t"),
        "Corrupt time index found, time index file (/t) has non-zero size but the last \
         timestamp is 0 which is less than the first timestamp 1000"
    );
    // trimmed: passes
    let b = time_bytes(&[(1000, 3), (2000, 7)]);
    assert_eq!(TimeIndex::new(&b, 50).sanity_check(), Ok(()));
}

#[test]
fn time_index_errors() {
    let b = time_bytes(&[(1000, 3), (1000, 7)]);
    let e = TimeIndex::new(&b, 0).check().unwrap_err();
    assert_eq!((e.field, e.position), ("timestamp", 12));
    let b = time_bytes(&[(1000, 7), (2000, 3)]);
    let e = TimeIndex::new(&b, 0).check().unwrap_err();
    assert_eq!((e.field, e.position), ("relativeOffset", 20));
    // equal offsets are allowed (offsets never decrease)
    let b = time_bytes(&[(1000, 7), (2000, 7)]);
    assert_eq!(TimeIndex::new(&b, 0).check(), Ok(()));
    let mut b = time_bytes(&[(1000, 7)]);
    b.extend_from_slice(&[1, 2, 3]);
    let idx = TimeIndex::new(&b, 0);
    assert_eq!(idx.check().unwrap_err().field, "length");
    assert_eq!(
        idx.sanity_check().unwrap_err().kafka_message("/t"),
        "Time index file /t is corrupt, found 15 bytes which is neither positive nor a multiple of 12"
    );
    let b = time_bytes(&[(1000, -1)]);
    let s = TimeIndex::new(&b, 10).sanity_check().unwrap_err();
    assert_eq!(
        s.kafka_message("/t"),
        "Corrupt time index found, time index file (/t) has non-zero size but the last \
         offset is 9 which is less than the first offset 10"
    );
}

fn txn(version: i16, pid: i64, first: i64, last: i64, lso: i64) -> Vec<u8> {
    let mut v = version.to_be_bytes().to_vec();
    for x in [pid, first, last, lso] {
        v.extend_from_slice(&x.to_be_bytes());
    }
    v
}

#[test]
fn txn_index() {
    let mut b = txn(0, 7, 90, 120, 121);
    b.extend(txn(0, 8, 95, 130, 131));
    let idx = TxnIndex::new(&b, 100);
    assert_eq!(idx.len(), 2);
    assert_eq!(idx.check(), Ok(()));
    assert_eq!(idx.sanity_check(), Ok(()));
    let t: Vec<_> = idx.entries().collect();
    assert_eq!(
        (
            t[1].producer_id,
            t[1].first_offset,
            t[1].last_offset,
            t[1].last_stable_offset
        ),
        (8, 95, 130, 131)
    );
    // trailing fragment: ignored by the reader, reported by check
    b.extend_from_slice(&[0; 10]);
    let idx = TxnIndex::new(&b, 100);
    assert_eq!((idx.len(), idx.trailing_bytes()), (2, 10));
    assert_eq!(idx.check().unwrap_err().field, "length");
    // not increasing
    let mut b = txn(0, 7, 90, 130, 131);
    b.extend(txn(0, 8, 95, 120, 121));
    assert_eq!(
        TxnIndex::new(&b, 0).check().unwrap_err().field,
        "lastOffset"
    );
    // Kafka reads the high byte: 0x0100 is version 1 → rejected; 0x0001 reads as 0.
    let b = txn(0x0100, 7, 90, 120, 121);
    assert_eq!(TxnIndex::new(&b, 0).check().unwrap_err().field, "version");
    let b = txn(0x0001, 7, 90, 120, 121);
    let t = TxnIndex::new(&b, 0).get(0).unwrap();
    assert_eq!((t.version, t.version_i16), (0, 1));
    // sanity: lastOffset below the base offset
    let b = txn(0, 7, 90, 99, 100);
    let e = TxnIndex::new(&b, 100).sanity_check().unwrap_err();
    assert_eq!(
        e.kafka_message("/x.txnindex"),
        "Last offset of aborted transaction AbortedTxn(version=0, producerId=7, \
         firstOffset=90, lastOffset=99, lastStableOffset=100) in index /x.txnindex is \
         less than start offset 100"
    );
    assert_eq!(e.exception(), "CorruptIndexException");
    // An unknown version fails the iteration first, whichever entry comes first decides.
    let mut b = txn(0, 7, 90, 120, 121);
    b.extend(txn(0x0100, 8, 95, 130, 131));
    let e = TxnIndex::new(&b, 100).sanity_check().unwrap_err();
    assert_eq!(
        (e.problem, e.txn.slot),
        (TxnSanityProblem::UnknownVersion, 1)
    );
    assert_eq!(e.exception(), "KafkaException");
    assert_eq!(
        e.kafka_message("/x.txnindex"),
        "Unexpected aborted transaction version 1 in transaction index /x.txnindex, current \
         version is 0"
    );
    let mut b = txn(0, 7, 90, 99, 100);
    b.extend(txn(0x0100, 8, 95, 130, 131));
    let e = TxnIndex::new(&b, 100).sanity_check().unwrap_err();
    assert_eq!(e.problem, TxnSanityProblem::LastOffsetBelowBase);
    let mut b = txn(0x0100, 8, 95, 99, 100);
    b.extend(txn(0, 7, 90, 99, 100));
    let e = TxnIndex::new(&b, 100).sanity_check().unwrap_err();
    assert_eq!(e.problem, TxnSanityProblem::UnknownVersion);
    // A version byte of 0xff reads as -1: accepted.
    let b = txn(-256, 7, 90, 120, 121);
    assert_eq!(TxnIndex::new(&b, 100).sanity_check(), Ok(()));
}

/// Kafka 4.4 (KAFKA-19562) reads the whole int16 version and accepts 0 alone: `00 01` and
/// `ff 00`, which the first-byte reading accepts, fail its iteration; the first refused
/// entry still decides against a lastOffset below the base.
#[test]
fn txn_sanity_since_4_4_reads_the_whole_version() {
    for v in [1i16, -256, 0x0100] {
        let b = txn(v, 7, 90, 120, 121);
        let e = TxnIndex::new(&b, 100).sanity_check_since_4_4().unwrap_err();
        assert_eq!(e.problem, TxnSanityProblem::UnsupportedVersion);
        assert_eq!(e.exception(), "KafkaException");
        assert_eq!(
            e.kafka_message("/x.txnindex"),
            format!(
                "Unexpected aborted transaction version {v} in transaction index /x.txnindex, \
                 supported version range is 0 to 0"
            )
        );
    }
    assert_eq!(
        TxnIndex::new(&txn(1, 7, 90, 120, 121), 100).sanity_check(),
        Ok(())
    );
    let b = txn(0, 7, 90, 120, 121);
    assert_eq!(TxnIndex::new(&b, 100).sanity_check_since_4_4(), Ok(()));
    let mut b = txn(0, 7, 90, 99, 100);
    b.extend(txn(1, 8, 95, 130, 131));
    let e = TxnIndex::new(&b, 100).sanity_check_since_4_4().unwrap_err();
    assert_eq!(e.problem, TxnSanityProblem::LastOffsetBelowBase);
    let mut b = txn(1, 8, 95, 99, 100);
    b.extend(txn(0, 7, 90, 99, 100));
    let e = TxnIndex::new(&b, 100).sanity_check_since_4_4().unwrap_err();
    assert_eq!(
        (e.problem, e.txn.slot),
        (TxnSanityProblem::UnsupportedVersion, 0)
    );
}

/// A minimal v2 batch header (61 bytes, no records) for log-check tests.
fn v2_batch(base: i64, last_delta: i32, max_ts: i64) -> Vec<u8> {
    let mut b = vec![0u8; 61];
    b[..8].copy_from_slice(&base.to_be_bytes());
    b[8..12].copy_from_slice(&49i32.to_be_bytes());
    b[16] = 2;
    b[23..27].copy_from_slice(&last_delta.to_be_bytes());
    b[35..43].copy_from_slice(&max_ts.to_be_bytes());
    b
}

#[test]
fn checks_against_log() {
    let mut log = v2_batch(0, 1, 10); // pos 0, offsets 0..1
    log.extend(v2_batch(2, 2, 20)); // pos 61, offsets 2..4
    log.extend(v2_batch(5, 0, 30)); // pos 122, offset 5
    let lb = LogBatches::from_log(&log);
    assert_eq!(lb.batches.len(), 3);
    assert_eq!(lb.tail, Tail::Clean);
    let oi = offset_bytes(&[(4, 61), (5, 61), (5, 100), (9, 183), (3, 122)]);
    let c = check_offset_index(&OffsetIndex::new(&oi, 0), &lb);
    let kinds: Vec<_> = c.iter().map(|c| c.check).collect();
    assert_eq!(
        kinds,
        vec![
            OffsetCheck::Exact,
            OffsetCheck::FollowerChunk {
                batch_last_offset: 4
            },
            OffsetCheck::NotABatchStart,
            OffsetCheck::BeyondLog,
            OffsetCheck::Mismatch {
                batch_last_offset: 5
            },
        ]
    );
    assert_eq!(c[1].log_offset(), 4);
    assert_eq!(c[3].log_offset(), -1);
    let ti = time_bytes(&[(20, 4), (25, 5), (24, 3), (40, 9)]);
    let c = check_time_index(&TimeIndex::new(&ti, 0), &lb);
    assert_eq!(c[0].check, TimeCheck::Exact);
    assert_eq!(c[0].out_of_order_after, None);
    assert_eq!(
        c[1].check,
        TimeCheck::TimestampMismatch { log_timestamp: 30 }
    );
    assert_eq!(
        c[2].check,
        TimeCheck::InsideBatch {
            batch_last_offset: 4,
            log_timestamp: Some(20)
        }
    );
    assert_eq!(c[2].out_of_order_after, Some(25));
    assert_eq!(
        c[3].check,
        TimeCheck::NotFound {
            found_log_offset: -1
        }
    );
}

proptest::proptest! {
    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..400), base in proptest::num::i64::ANY) {
        let oi = OffsetIndex::new(&bytes, base);
        let ol = oi.layout();
        let _ = (oi.check(), oi.sanity_check());
        proptest::prop_assert_eq!(ol.slots, bytes.len() / 8);
        proptest::prop_assert_eq!(ol.used + ol.tail_slots, ol.slots);
        proptest::prop_assert_eq!(oi.entries().count(), ol.used);
        let ti = TimeIndex::new(&bytes, base);
        let tl = ti.layout();
        let _ = (ti.check(), ti.sanity_check());
        proptest::prop_assert_eq!(ti.entries().count(), tl.used);
        let xi = TxnIndex::new(&bytes, base);
        let _ = (xi.check(), xi.sanity_check());
        proptest::prop_assert_eq!(xi.entries().count() * 34 + xi.trailing_bytes(), bytes.len());
        let lb = LogBatches::from_log(&bytes);
        proptest::prop_assert!(lb.valid_len <= bytes.len() as u64);
        proptest::prop_assert_eq!(check_offset_index(&oi, &lb).len(), ol.used);
        proptest::prop_assert_eq!(check_time_index(&ti, &lb).len(), tl.used);
    }
}

// ----- LogSegment.readNextOffset ---------------------------------------------------------

fn next(index: &[(i32, i32)], log: &[u8], base: i64) -> NextOffsetRead {
    read_next_offset(&OffsetIndex::new(&offset_bytes(index), base), log)
}

/// `LogSegmentTest.testNextOffsetCalculation`: an empty segment based at 40 returns 40; one
/// batch of offsets 50..52 (no index entry: it is below the index interval) returns 53.
#[test]
fn next_offset_of_an_empty_segment_is_its_base_and_of_one_batch_its_end() {
    let r = next(&[], &[], 40);
    assert_eq!(
        (r.index_last_offset, r.outcome),
        (40, NextOffsetOutcome::Base)
    );
    assert_eq!(r.next_offset(40), Some(40));
    let r = next(&[], &v2_batch(50, 2, 0), 40);
    assert_eq!(r.next_offset(40), Some(53));
}

/// A consistent index (entries at batch starts, as appends and recovery write them): the
/// read starts at the last entry and ends where the log ends, whatever comes after it.
#[test]
fn next_offset_with_a_consistent_index_is_the_log_end() {
    let mut log = v2_batch(0, 1, 10); // 0..1 at 0
    log.extend(v2_batch(2, 2, 20)); // 2..4 at 61
    log.extend(v2_batch(5, 0, 30)); // 5 at 122
    log.extend(v2_batch(6, 3, 40)); // 6..9 at 183
    let r = next(&[(4, 61), (5, 122)], &log, 0);
    assert_eq!(r.start_position, 122);
    assert_eq!(
        r.outcome,
        NextOffsetOutcome::Batch {
            found: 122,
            last: 183,
            next_offset: 10
        }
    );
    // Read from where the lookup starts it, the tail of the file gives the same.
    let idx = offset_bytes(&[(4, 61), (5, 122)]);
    let idx = OffsetIndex::new(&idx, 0);
    assert_eq!(idx.read_start(), (5, 122));
    assert_eq!(read_next_offset_in(&idx, &log[122..], 122), r);
    assert_eq!(
        read_next_offset_in(&idx, &[], log.len() as u64).outcome,
        NextOffsetOutcome::Base
    );
    // A partial batch after the last whole one is not framed (`nextBatch` returns null).
    let mut cut = log.clone();
    cut.extend(&v2_batch(10, 0, 50)[..40]);
    assert_eq!(next(&[(4, 61), (5, 122)], &cut, 0).next_offset(0), Some(10));
    // An untrimmed index's zero last slot is an entry of offset `base`, at position 0.
    let r = next(&[(4, 61), (5, 122), (0, 0)], &log, 0);
    assert_eq!((r.index_last_offset, r.next_offset(0)), (0, Some(10)));
}

/// A `.log` cut short below the index's last entry (or an entry past the data): nothing is
/// found from the entry's position, and the segment's base offset is returned.
#[test]
fn next_offset_is_the_base_when_the_log_ends_before_the_last_entry() {
    let mut log = v2_batch(100, 1, 10);
    log.extend(v2_batch(102, 2, 20)); // at 61
    log.extend(v2_batch(105, 0, 30)); // at 122
    let index = [(2, 61), (5, 122)];
    assert_eq!(next(&index, &log, 100).next_offset(100), Some(106));
    assert_eq!(next(&index, &log[..122], 100).next_offset(100), Some(100));
    assert_eq!(
        next(&index, &log[..130], 100).outcome,
        NextOffsetOutcome::Base
    );
    // An entry whose offset no batch from its position reaches.
    assert_eq!(
        next(&[(2, 61), (9, 122)], &log, 100).next_offset(100),
        Some(100)
    );
}

/// An entry pointing inside a batch frames the bytes found there: a size field below 14
/// throws `CorruptRecordException`; a v2 header running past the end throws
/// `KafkaException`; a legacy entry's last offset is its offset field.
#[test]
fn next_offset_frames_what_the_last_entry_points_at() {
    let mut log = v2_batch(0, 1, 10);
    log.extend(v2_batch(2, 2, 20));
    // Position 70 is 9 bytes into the second batch: the size field read there is bytes
    // 17..21 of that header (its CRC: zeros here).
    assert_eq!(
        next(&[(2, 70)], &log, 0).outcome,
        NextOffsetOutcome::SizeBelowMinimum {
            position: 70,
            size: 0
        }
    );
    let mut short = v2_batch(0, 1, 10);
    let mut tiny = vec![0u8; 26];
    tiny[..8].copy_from_slice(&2i64.to_be_bytes());
    tiny[8..12].copy_from_slice(&14i32.to_be_bytes());
    tiny[16] = 2;
    short.extend(&tiny);
    assert_eq!(
        next(&[(2, 61)], &short, 0).outcome,
        NextOffsetOutcome::HeaderPastEnd { position: 61 }
    );
    let mut legacy = vec![0u8; 26];
    legacy[..8].copy_from_slice(&7i64.to_be_bytes());
    legacy[8..12].copy_from_slice(&14i32.to_be_bytes());
    assert_eq!(next(&[(7, 0)], &legacy, 0).next_offset(0), Some(8));
}

/// `OffsetIndex.lookup` searches the warm last 1024 slots when the target is after the
/// first of them, else the rest; a target below every entry gives `(base, 0)`.
#[test]
fn lookup_is_kafkas_largest_lower_bound() {
    let entries: Vec<(i32, i32)> = (0..3000).map(|i| (i * 2, i * 100)).collect();
    let b = offset_bytes(&entries);
    let idx = OffsetIndex::new(&b, 1000);
    assert_eq!(idx.last_offset(), 1000 + 5998);
    assert_eq!(idx.lookup(1000 + 5998), (6998, 299_900));
    assert_eq!(idx.lookup(1000 + 5999), (6998, 299_900));
    assert_eq!(idx.lookup(1000 + 11), (1010, 500));
    assert_eq!(idx.lookup(999), (1000, 0));
    assert_eq!(OffsetIndex::new(&[], 5).lookup(7), (5, 0));
    // Two bytes (`LogLoaderTest.testCorruptIndexRebuild`'s "  "): no whole slot.
    assert_eq!(OffsetIndex::new(b"  ", 5).last_offset(), 5);
}

//! What follows from a CRC-damaged batch links to its `crc_mismatch` beyond the batch and
//! its own producer's next batch (`docs/findings.md`, "Identity and causes"): a flipped
//! producer id leaves a phantom producer, and the gap it leaves in the real producer's
//! sequences follows from the damage; a damaged COMMIT/ABORT whose producer id flipped
//! leaves the transaction it closed open. Each positive case has its negatives.
#![cfg(feature = "testkit")]

use klogscan::Kind;
use klogscan::finding::Finding;
use klogscan::partition::scan::ScanOptions;
use klogscan::pipeline::scan;
use klogscan::results::ScanReport;
use klogscan::testkit::{Batch, FaultKind, PartitionBuilder, Producer, Target};

const T0: i64 = 1_700_000_000_000;
/// Ten days after the data: a transaction still open then is hanging.
const LATER: i64 = T0 + 10 * 86_400_000;

/// Byte of a v2 batch holding the low byte of its producer id (bytes 43..51).
const PID_LOW_BYTE: u64 = 50;
/// Byte of a v2 batch holding the low byte of its maxTimestamp (bytes 35..43).
const MAX_TS_LOW_BYTE: u64 = 42;

/// Write the partition `build` makes, with byte `at` of its entry `index` flipped by
/// `mask`, and scan it at [`LATER`].
fn scan_damaged(build: impl Fn() -> PartitionBuilder, flips: &[(usize, u64, u8)]) -> ScanReport {
    let clean = tempfile::tempdir().unwrap();
    let m = build().write(clean.path()).unwrap();
    let mut p = build();
    for &(index, at, mask) in flips {
        let b = &m.batches[index];
        p.fault(
            Target::Log(0),
            FaultKind::FlipByte {
                position: b.position + at,
                mask,
            },
        );
    }
    let d = tempfile::tempdir().unwrap();
    p.write(d.path()).unwrap();
    scan(
        &[d.path().to_path_buf()],
        &ScanOptions::default().with_now_ms(LATER),
    )
}

fn one(r: &ScanReport, k: Kind, offset: i64) -> &Finding {
    let v: Vec<&Finding> = (r.findings.iter())
        .filter(|f| f.kind == k && f.offset == Some(offset))
        .collect();
    assert_eq!(v.len(), 1, "one {k:?} at {offset}: {:#?}", r.findings);
    v[0]
}

fn crc_at(r: &ScanReport, offset: i64) -> String {
    one(r, Kind::CrcMismatch, offset).id.clone()
}

fn one_record(p: &mut PartitionBuilder, pr: Producer) {
    p.append(Batch::new(pr).records(1));
}

// ----- (a) a flipped producer id on a data batch -------------------------------------------

/// Producer 11 writes sequences 0, 1, 2, 3 at offsets 0..=3, then 10 at offset 4 (a gap of
/// its own).
fn producer_eleven() -> PartitionBuilder {
    let pr = Producer::idempotent(11, 0);
    let mut p = PartitionBuilder::new("flip", 0).start_time(T0);
    for _ in 0..4 {
        one_record(&mut p, pr);
    }
    p.append(Batch::new(pr).records(1).sequence(10));
    p
}

#[test]
fn the_gap_a_phantom_producer_id_leaves_links_to_the_crc_mismatch() {
    // offset 2's producer id 11 becomes 75: a producer id no other batch carries
    let r = scan_damaged(producer_eleven, &[(2, PID_LOW_BYTE, 0x40)]);
    let crc = crc_at(&r, 2);
    let gap = one(&r, Kind::SequenceGap, 3);
    assert_eq!(gap.producer_id, Some(11));
    assert_eq!(gap.caused_by, vec![crc.clone()], "{:#?}", r.findings);
    // only the producer's first batch after the damage: its own gap later stays its own
    let later = one(&r, Kind::SequenceGap, 4);
    assert!(later.caused_by.is_empty(), "{later:#?}");
    assert!(one(&r, Kind::CrcMismatch, 2).caused_by.is_empty());
}

/// Producers 10 and 11; offset 3 (11's sequence 2) is the one the test damages, offset 4
/// is 11's sequence 3; producer 10 writes at offset 0 when `ten_before`, at offset 5
/// when `ten_after`.
fn ten_and_eleven(ten_before: bool, ten_after: bool) -> PartitionBuilder {
    let (ten, eleven) = (Producer::idempotent(10, 0), Producer::idempotent(11, 0));
    let other = Producer::idempotent(12, 0);
    let mut p = PartitionBuilder::new("flip", 0).start_time(T0);
    let first = if ten_before { ten } else { other };
    one_record(&mut p, first);
    for _ in 0..4 {
        one_record(&mut p, eleven);
    }
    let last = if ten_after { ten } else { other };
    one_record(&mut p, last);
    p
}

#[test]
fn a_damaged_batch_carrying_a_real_producer_id_takes_no_other_producers_gap() {
    // 11 ^ 0x01 = 10: the damaged batch carries producer 10, seen before, after, or both
    for (before, after) in [(true, true), (false, true), (true, false)] {
        let r = scan_damaged(
            move || ten_and_eleven(before, after),
            &[(3, PID_LOW_BYTE, 0x01)],
        );
        crc_at(&r, 3);
        let gap = one(&r, Kind::SequenceGap, 4);
        assert_eq!(gap.producer_id, Some(11));
        assert!(
            gap.caused_by.is_empty(),
            "producer 10 before: {before}, after: {after}: {gap:#?}"
        );
    }
}

#[test]
fn a_gap_before_any_damaged_batch_stays_unlinked() {
    let build = || {
        let (a, b) = (Producer::idempotent(11, 0), Producer::idempotent(12, 0));
        let mut p = PartitionBuilder::new("flip", 0).start_time(T0);
        one_record(&mut p, a);
        p.append(Batch::new(a).records(1).sequence(5)); // offset 1: 11's own gap
        one_record(&mut p, b); // offset 2: 12's sequence 0, damaged into a phantom
        p.append(Batch::new(a).records(1).sequence(6)); // offset 3: in order after 5
        p.append(Batch::new(b).records(1).sequence(1)); // offset 4
        p
    };
    let r = scan_damaged(build, &[(2, PID_LOW_BYTE, 0x40)]);
    crc_at(&r, 2);
    let gap = one(&r, Kind::SequenceGap, 1);
    assert!(gap.caused_by.is_empty(), "{gap:#?}");
    // the damaged producer's own next batch (an unknown producer at sequence 1) is linked
    for f in r.findings.iter().filter(|f| f.offset == Some(4)) {
        assert_eq!(f.caused_by, vec![crc_at(&r, 2)], "{f:#?}");
    }
}

#[test]
fn a_gap_after_several_phantoms_links_to_the_nearest_one() {
    let build = || {
        let (a, b) = (Producer::idempotent(11, 0), Producer::idempotent(12, 0));
        let mut p = PartitionBuilder::new("flip", 0).start_time(T0);
        one_record(&mut p, a); // offset 0
        one_record(&mut p, b); // offset 1
        one_record(&mut p, b); // offset 2: 12's sequence 1, damaged into a phantom
        one_record(&mut p, b); // offset 3: 12's gap, after the first phantom only
        one_record(&mut p, a); // offset 4: 11's sequence 1, damaged into a phantom
        one_record(&mut p, a); // offset 5: 11's gap, after both phantoms
        p
    };
    let r = scan_damaged(build, &[(2, PID_LOW_BYTE, 0x40), (4, PID_LOW_BYTE, 0x40)]);
    let (first, second) = (crc_at(&r, 2), crc_at(&r, 4));
    assert_eq!(one(&r, Kind::SequenceGap, 3).caused_by, vec![first]);
    assert_eq!(one(&r, Kind::SequenceGap, 5).caused_by, vec![second]);
}

/// Byte of a v2 batch inside its first record (past the 61-byte header).
const RECORD_BYTE: u64 = 64;

#[test]
fn a_phantom_outside_the_producers_hole_takes_no_gap() {
    // Producer 9's only batch (offset 1, epoch 0, sequence 0) has a damaged record: its id
    // is seen nowhere else, but its sequences are not the ones 11 lacks (1..=4).
    let build = || {
        let (a, b) = (Producer::idempotent(11, 0), Producer::idempotent(9, 0));
        let mut p = PartitionBuilder::new("flip", 0).start_time(T0);
        one_record(&mut p, a); // offset 0: 11's sequence 0
        one_record(&mut p, b); // offset 1: 9's sequence 0, damaged
        p.append(Batch::new(a).records(1).sequence(5)); // offset 2: 11's gap
        p
    };
    let r = scan_damaged(build, &[(1, RECORD_BYTE, 0x40)]);
    crc_at(&r, 1);
    let gap = one(&r, Kind::SequenceGap, 2);
    assert!(gap.caused_by.is_empty(), "{gap:#?}");
    // the same shape with 9's batch holding 11's missing sequences is linked
    let build = || {
        let (a, b) = (Producer::idempotent(11, 0), Producer::idempotent(9, 0));
        let mut p = PartitionBuilder::new("flip", 0).start_time(T0);
        one_record(&mut p, a);
        p.append(Batch::new(b).records(4).sequence(1)); // offset 1..=4: sequences 1..=4
        p.append(Batch::new(a).records(1).sequence(5)); // offset 5
        p
    };
    let r = scan_damaged(build, &[(1, RECORD_BYTE, 0x40)]);
    assert_eq!(one(&r, Kind::SequenceGap, 5).caused_by, vec![crc_at(&r, 1)]);
}

#[test]
fn a_flip_repeated_in_two_batches_is_still_a_phantom() {
    // offsets 2 and 3 (11's sequences 2 and 3) both become producer 75's (a stuck bit): no
    // intact batch carries 75, and 11's gap at offset 4 follows from the damage
    let r = scan_damaged(
        producer_eleven,
        &[(2, PID_LOW_BYTE, 0x40), (3, PID_LOW_BYTE, 0x40)],
    );
    crc_at(&r, 2);
    let gap = one(&r, Kind::SequenceGap, 4);
    assert_eq!(gap.producer_id, Some(11));
    // the nearest of the two phantoms in the hole
    assert_eq!(gap.caused_by, vec![crc_at(&r, 3)], "{:#?}", r.findings);
}

/// Byte of a v2 batch holding the high byte of its producer id (its sign bit).
const PID_HIGH_BYTE: u64 = 43;

#[test]
fn a_producer_id_flipped_negative_is_a_phantom_too() {
    // offset 2's producer id 11 gets its sign bit: an id below -1, which the rebuild skips
    let r = scan_damaged(producer_eleven, &[(2, PID_HIGH_BYTE, 0x80)]);
    let gap = one(&r, Kind::SequenceGap, 3);
    assert_eq!(gap.producer_id, Some(11));
    assert_eq!(gap.caused_by, vec![crc_at(&r, 2)], "{:#?}", r.findings);
}

// ----- (b) a damaged closing marker -------------------------------------------------------

#[test]
fn a_damaged_commit_links_the_transaction_it_left_hanging() {
    let build = || {
        let t = Producer::transactional(20, 0);
        let mut p = PartitionBuilder::new("txn", 0).start_time(T0);
        p.append(Batch::new(t).records(2)); // offsets 0..=1
        p.commit(t, 0); // offset 2, its producer id flipped: it closes nothing
        p
    };
    let r = scan_damaged(build, &[(1, PID_LOW_BYTE, 0x40)]);
    let crc = crc_at(&r, 2);
    let hanging = one(&r, Kind::HangingTransaction, 0);
    assert_eq!(hanging.producer_id, Some(20));
    assert_eq!(hanging.caused_by, vec![crc.clone()], "{:#?}", r.findings);
    // the phantom producer's marker, at the damaged batch itself
    assert_eq!(
        one(&r, Kind::MarkerWithoutTransaction, 2).caused_by,
        vec![crc]
    );
}

#[test]
fn a_damaged_marker_closes_at_most_one_transaction_the_latest_opened_before_it() {
    let build = || {
        let (a, b) = (
            Producer::transactional(20, 0),
            Producer::transactional(21, 0),
        );
        let mut p = PartitionBuilder::new("txn", 0).start_time(T0);
        p.append(Batch::new(a).records(1)); // offset 0: 20's transaction, never closed
        p.append(Batch::new(b).records(1)); // offset 1: 21's transaction
        p.commit(b, 0); // offset 2, its producer id flipped: it closes nothing
        p
    };
    let r = scan_damaged(build, &[(2, PID_LOW_BYTE, 0x40)]);
    let crc = crc_at(&r, 2);
    assert_eq!(one(&r, Kind::HangingTransaction, 1).caused_by, vec![crc]);
    let earlier = one(&r, Kind::HangingTransaction, 0);
    assert!(earlier.caused_by.is_empty(), "{earlier:#?}");
}

#[test]
fn a_damaged_data_batch_after_the_transaction_start_links_no_hanging_transaction() {
    let build = || {
        let (t, other) = (Producer::transactional(20, 0), Producer::idempotent(21, 0));
        let mut p = PartitionBuilder::new("txn", 0).start_time(T0);
        p.append(Batch::new(t).records(2)); // offsets 0..=1, never closed
        one_record(&mut p, other); // offset 2, damaged into a phantom
        p
    };
    let r = scan_damaged(build, &[(1, PID_LOW_BYTE, 0x40)]);
    crc_at(&r, 2);
    let hanging = one(&r, Kind::HangingTransaction, 0);
    assert!(hanging.caused_by.is_empty(), "{hanging:#?}");
}

#[test]
fn a_damaged_marker_before_the_transaction_start_links_nothing() {
    let build = || {
        let (early, t) = (
            Producer::transactional(30, 0),
            Producer::transactional(20, 0),
        );
        let mut p = PartitionBuilder::new("txn", 0).start_time(T0);
        one_record(&mut p, early); // offset 0
        p.commit(early, 0); // offset 1, its producer id flipped
        p.append(Batch::new(t).records(2)); // offsets 2..=3, never closed
        p
    };
    let r = scan_damaged(build, &[(1, PID_LOW_BYTE, 0x40)]);
    let crc = crc_at(&r, 1);
    let hanging = one(&r, Kind::HangingTransaction, 2);
    assert!(hanging.caused_by.is_empty(), "{hanging:#?}");
    // the transaction the damaged marker did close is linked to it
    assert_eq!(one(&r, Kind::HangingTransaction, 0).caused_by, vec![crc]);
}

#[test]
fn a_damaged_marker_that_closed_its_own_transaction_links_no_other() {
    let build = || {
        let (t, other) = (
            Producer::transactional(20, 0),
            Producer::transactional(30, 0),
        );
        let mut p = PartitionBuilder::new("txn", 0).start_time(T0);
        one_record(&mut p, t); // offset 0, never closed
        one_record(&mut p, other); // offset 1
        p.commit(other, 0); // offset 2: its timestamp damaged, its producer intact
        p
    };
    let r = scan_damaged(build, &[(2, MAX_TS_LOW_BYTE, 0x01)]);
    crc_at(&r, 2);
    let hanging = one(&r, Kind::HangingTransaction, 0);
    assert!(hanging.caused_by.is_empty(), "{hanging:#?}");
    assert!(
        !(r.findings.iter()).any(|f| f.kind == Kind::HangingTransaction && f.offset == Some(1)),
        "{:#?}",
        r.findings
    );
}

//! `LogSegment.recover` appends an aborted transaction to the segment's transaction index
//! for every ABORT that completes one (`updateProducerState` → `updateTxnIndex`), and
//! `TransactionIndex.append` throws `IllegalArgumentException` when its last offset (the
//! marker's offset) is not above the last appended one's: neither `recover` nor the load
//! catches it, so the load fails wherever a recovery reads two such ABORTs in one segment.

use super::load_checks::unclean_without_snapshots;
use super::*;
use klogscan::testkit::encode::end_txn_marker;

/// Producers 9 and 10 each open a transaction (offsets 0..=1 and 2); 9 aborts (at offset
/// 3, 4 with a filler), then `second` aborts at `offset` (a marker written at that offset whatever the log
/// holds), then a plain batch. `filler`: a plain batch of that many value bytes before each
/// ABORT (over 4096 bytes, recovery appends an offset index entry at each ABORT).
fn two_aborts(offset: i64, second: Producer, filler: usize) -> (PartitionBuilder, usize) {
    let a = Producer::transactional(9, 0);
    let mut p = PartitionBuilder::new("ti", 0);
    p.append(Batch::new(a).records(2)); // 0..=1
    p.append(Batch::new(Producer::transactional(10, 0)).records(1)); // 2
    let fill = |p: &mut PartitionBuilder| {
        if filler > 0 {
            p.append(Batch::new(Producer::PLAIN).values(["x".repeat(filler)]));
        }
    };
    fill(&mut p);
    p.abort(a, 1);
    fill(&mut p);
    let ts = p.now();
    let at = p.append_spec(end_txn_marker(
        offset,
        second.id,
        second.epoch,
        false,
        1,
        ts,
        0,
    ));
    p.append(Batch::new(Producer::PLAIN).records(1));
    (p, at)
}

fn txn_index_failure(v: &PartitionVerification) -> Option<&klogscan::verify::LoadFailure> {
    let f = v.prediction.load_failure.as_deref()?;
    (f.exception == "IllegalArgumentException" && f.message.contains("TransactionIndex.append"))
        .then_some(f)
}

/// Producer 10's ABORT at offset 3, the offset of 9's ABORT before it: the recovery after
/// the unclean shutdown appends 9's aborted transaction (last offset 3), then throws at
/// 10's — the load fails at offset 3. So does the recovery at load of a segment whose
/// offset index is missing, after a clean shutdown.
#[test]
fn two_aborts_not_increasing_in_a_recovered_segment_fail_the_load() {
    let (p, at) = two_aborts(3, Producer::transactional(10, 0), 0);
    let (_d, m) = unclean_without_snapshots(p, 0);
    assert_eq!(m.batches[at].base_offset, 3);
    let v = run(&m.dir);
    let f = txn_index_failure(&v).unwrap_or_else(|| panic!("{:#?}", v.prediction));
    assert_eq!(
        (f.offset, f.kind.as_str()),
        (Some(3), "offset_regression"),
        "{f:?}"
    );
    assert!(
        f.message.contains("after the unclean shutdown")
            && f.message
                .contains(&format!("byte {}", m.batches[at].position))
            && f.message.contains("not above the last appended one's, 3"),
        "{f:?}"
    );
    assert!(v.prediction.truncation.is_none(), "{:#?}", v.prediction);

    let (p, _) = two_aborts(3, Producer::transactional(10, 0), 0);
    let (_d, m) = write(p, true);
    std::fs::remove_file(m.dir.join("00000000000000000000.index")).unwrap();
    let v = run(&m.dir);
    let f = txn_index_failure(&v).unwrap_or_else(|| panic!("{:#?}", v.prediction));
    assert_eq!(f.offset, Some(3));
    assert!(f.message.contains("at load"), "{f:?}");
}

/// Twins that do not fail: the same log after a clean shutdown with its indexes (no
/// recovery runs); 10's ABORT at offset 4 (in order); and the second ABORT at offset 3
/// from producer 11, which has no transaction open (it completes none: no append).
#[test]
fn aborts_no_recovery_appends_out_of_order_do_not_fail_the_load() {
    let (p, _) = two_aborts(3, Producer::transactional(10, 0), 0);
    let (_d, m) = write(p, true);
    let v = run(&m.dir);
    assert!(
        v.prediction.recovered_segments.is_empty(),
        "{:#?}",
        v.prediction
    );
    assert!(txn_index_failure(&v).is_none(), "{:#?}", v.prediction);

    let (p, _) = two_aborts(4, Producer::transactional(10, 0), 0);
    let (_d, m) = unclean_without_snapshots(p, 0);
    let v = run(&m.dir);
    assert!(!v.prediction.recovered_segments.is_empty());
    assert!(v.prediction.load_failure.is_none(), "{:#?}", v.prediction);

    let (p, _) = two_aborts(3, Producer::transactional(11, 0), 0);
    let (_d, m) = unclean_without_snapshots(p, 0);
    let v = run(&m.dir);
    assert!(!v.prediction.recovered_segments.is_empty());
    assert!(txn_index_failure(&v).is_none(), "{:#?}", v.prediction);
}

/// With over 4096 bytes before each ABORT, the recovery appends an offset index entry at
/// each, before the marker's producer-state update: at 10's ABORT at offset 4 the offset
/// index append (4, not above the entry at 9's ABORT, 4) throws `InvalidOffsetException` first, which `recoverLog`
/// catches (the segment is emptied) — no transaction index append, no load failure.
#[test]
fn an_offset_index_append_before_the_abort_throws_first() {
    let (p, at) = two_aborts(4, Producer::transactional(10, 0), 5000);
    let (_d, m) = unclean_without_snapshots(p, 0);
    assert_eq!(m.batches[at - 2].base_offset, 4);
    let v = run(&m.dir);
    assert!(txn_index_failure(&v).is_none(), "{:#?}", v.prediction);
    let t = v.prediction.truncation.as_ref().expect("emptied");
    assert_eq!((t.position, t.offset), (0, 0), "{t:?}");
}

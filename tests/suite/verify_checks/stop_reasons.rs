//! The recovery model decides on why the walk stopped, typed (`StopReason`), never on its
//! words: each decision here with a stop that makes it and one that must not — a rebuild's
//! read that throws and the kind it names (`replays`), the last segment's end read at load
//! (`predict`), a recovery at load that throws `InvalidOffsetException`, and the words of a
//! tail's finding no recovery looks at (`plan`).

use super::*;

/// 40 bytes from an entry header: `offset`, size field `size`, leader epoch 0, `magic`,
/// then ones.
fn head(offset: i64, size: i32, magic: u8) -> Vec<u8> {
    let mut g = offset.to_be_bytes().to_vec();
    g.extend_from_slice(&size.to_be_bytes());
    g.extend_from_slice(&[0; 4]);
    g.push(magic);
    g.resize(40, 1);
    g
}

/// A zero header (size 0, not a plausible entry) then non-zero bytes: unframed, its size
/// field below 14 (`trailing_bytes`).
fn unframed_below_14() -> Vec<u8> {
    let mut g = vec![0u8; 40];
    g[30] = 7;
    g
}

/// Segment 0 (offsets 0..=2) ending in `tail`, then segment 3; no producer snapshot, after
/// an unclean shutdown with the recovery point at 3: the rebuild before segment 3's
/// recovery replays segment 0 from the log start, which no recovery cut.
fn replayed_unrecovered(tail: FaultKind) -> PartitionVerification {
    let mut p = PartitionBuilder::new("rl", 0);
    p.append(Batch::new(Producer::idempotent(3, 0)).records(2));
    p.append(Batch::new(Producer::idempotent(3, 0)).records(1));
    p.roll();
    p.append(Batch::new(Producer::idempotent(3, 0)).records(2));
    p.fault(Target::Log(0), tail);
    let (d, m) = write_with(
        LogDirBuilder::new(1)
            .clean_shutdown(false)
            .recovery_point("rl", 0, 3),
        p,
    );
    for e in std::fs::read_dir(&m.dir).unwrap() {
        let path = e.unwrap().path();
        if path.extension().is_some_and(|x| x == "snapshot") {
            std::fs::remove_file(path).unwrap();
        }
    }
    let v = run(&m.dir);
    drop(d);
    v
}

/// `FileLogInputStream.nextBatch` throws where the size field is below 14 with 18 bytes
/// or more left, and the failure names the entry's kind from the stop's reason: zeros
/// (`preallocated_tail`), unframed bytes (`trailing_bytes`), a plausible header with a
/// size of 5 (`invalid_batch`). Twins, the same 40 bytes where the read does not throw:
/// a size of 100 under an unknown magic byte, and a partial batch (both run past the end:
/// `nextBatch` returns no batch), and a batch whose CRC fails (the replay checks none).
#[test]
fn a_rebuild_throws_only_at_a_size_below_14_and_names_its_kind() {
    for (what, tail, kind) in [
        ("zeros", FaultKind::AppendZeros(40), "preallocated_tail"),
        (
            "unframed",
            FaultKind::AppendGarbage(unframed_below_14()),
            "trailing_bytes",
        ),
        (
            "plausible header",
            FaultKind::AppendGarbage(head(3, 5, 2)),
            "invalid_batch",
        ),
    ] {
        let v = replayed_unrecovered(tail);
        let f = v.prediction.load_failure.as_ref().expect(what);
        assert_eq!(
            (f.exception.as_str(), f.kind.as_str()),
            ("CorruptRecordException", kind),
            "{what}: {f:?}"
        );
        assert!(
            f.message.contains("in segment 00000000000000000000.log"),
            "{what}: {f:?}"
        );
    }
    for (what, tail) in [
        ("unknown magic", FaultKind::AppendGarbage(head(0, 100, 7))),
        ("partial batch", FaultKind::AppendGarbage(head(3, 500, 2))),
        (
            "CRC mismatch",
            FaultKind::FlipByte {
                position: 70,
                mask: 0x20,
            },
        ),
    ] {
        let v = replayed_unrecovered(tail);
        assert!(
            v.prediction.load_failure.is_none(),
            "{what}: {:#?}",
            v.prediction
        );
        assert!(!v.prediction.unrecovered_corruption.is_empty(), "{what}");
    }
}

/// One segment ending in `tail`, after a clean shutdown (the snapshot at the log end kept:
/// no replay reads the log); `missing_index`: its offset index removed.
fn clean_last_segment(tail: Vec<FaultKind>, missing_index: bool) -> PartitionVerification {
    let mut p = PartitionBuilder::new("ls", 0);
    p.append(Batch::new(Producer::idempotent(3, 0)).records(2));
    p.append(Batch::new(Producer::idempotent(3, 0)).records(1));
    for t in tail {
        p.fault(Target::LastLog, t);
    }
    let (d, m) = write(p, true);
    if missing_index {
        std::fs::remove_file(m.dir.join("00000000000000000000.index")).unwrap();
    }
    let v = run(&m.dir);
    drop(d);
    v
}

/// After a clean shutdown the load reads the last segment's end (`recoverLog` →
/// `deleteSegmentsIfLogStartGreaterThanLogEnd` → `readNextOffset`) with no recovery
/// before it: a zero tail of 40 bytes throws there (`preallocated_tail`). Twins: a partial
/// batch or a size of 100 under an unknown magic byte, as many bytes, do not; nor does a
/// zero tail whose segment is recovered at load for its missing index (truncated there
/// instead: no `InvalidOffsetException` either, whose stop it is not).
#[test]
fn the_last_segments_end_read_at_load_throws_at_its_zero_tail_only() {
    let v = clean_last_segment(vec![FaultKind::AppendZeros(40)], false);
    let f = v.prediction.load_failure.as_ref().expect("the load fails");
    assert_eq!(
        (f.exception.as_str(), f.kind.as_str()),
        ("CorruptRecordException", "preallocated_tail"),
        "{f:?}"
    );
    assert!(f.message.contains("readNextOffset"), "{f:?}");
    for (what, tail) in [
        ("partial batch", FaultKind::AppendGarbage(head(3, 500, 2))),
        ("unknown magic", FaultKind::AppendGarbage(head(0, 100, 7))),
    ] {
        let v = clean_last_segment(vec![tail], false);
        assert!(
            v.prediction.load_failure.is_none(),
            "{what}: {:#?}",
            v.prediction
        );
    }
    let v = clean_last_segment(vec![FaultKind::AppendZeros(40)], true);
    assert!(v.prediction.load_failure.is_none(), "{:#?}", v.prediction);
    let t = v.prediction.truncation.as_ref().expect("truncated at load");
    assert!(t.reason.starts_with("40 zero bytes"), "{t:?}");
}

/// The words of a tail's finding in a segment no recovery looks at (after a clean
/// shutdown) follow from how the walk ended there: zeros at the end of the last segment
/// make the load's read of its end throw; bytes whose size field is below 14 make a reader
/// throw (not the load: that read is not modelled for them); a size of 100 under an
/// unknown magic byte is served as it is. A zero tail after a batch whose CRC fails (the
/// stop, earlier) still makes a reader throw: the tail is kept apart from the stop.
#[test]
fn a_tail_no_recovery_looks_at_is_worded_by_how_the_walk_ended() {
    const LOAD: &str = "the load reads this last segment's end";
    const READER: &str = "a reader reaching this entry throws CorruptRecordException";
    const SERVED: &str = "a reader stops here only when fewer than 18 bytes are left";
    let crc = FaultKind::FlipByte {
        position: 70,
        mask: 0x20,
    };
    for (what, tail, kind, says, not) in [
        (
            "zeros",
            vec![FaultKind::AppendZeros(40)],
            Kind::PreallocatedTail,
            LOAD,
            READER,
        ),
        (
            "unframed",
            vec![FaultKind::AppendGarbage(unframed_below_14())],
            Kind::TrailingBytes,
            READER,
            LOAD,
        ),
        (
            "unknown magic",
            vec![FaultKind::AppendGarbage(head(0, 100, 7))],
            Kind::TrailingBytes,
            SERVED,
            READER,
        ),
        (
            "zeros after a CRC mismatch",
            vec![crc, FaultKind::AppendZeros(40)],
            Kind::PreallocatedTail,
            READER,
            LOAD,
        ),
    ] {
        let v = clean_last_segment(tail, false);
        let f = of_kind(&v, kind);
        assert_eq!(f.len(), 1, "{what}: {:#?}", v.findings);
        let words = &f[0].broker_behaviour;
        assert!(words.starts_with("not noticed on load"), "{what}: {words}");
        assert!(
            words.contains(says) && !words.contains(not),
            "{what}: {words}"
        );
    }
}

use super::*;

/// The fast path of `ranges_overlap` answers as the part-by-part definition, wrapping
/// ranges and the ends of the sequence space included.
#[test]
fn ranges_overlap_fast_path_is_the_definition() {
    fn by_parts(a: (i32, i32), b: (i32, i32)) -> bool {
        let parts = |r: (i32, i32)| {
            if r.1 >= r.0 {
                [r, (1, 0)]
            } else {
                [(r.0, i32::MAX), (0, r.1)]
            }
        };
        parts(a).iter().any(|x| {
            parts(b)
                .iter()
                .any(|y| x.0 <= x.1 && y.0 <= y.1 && x.0 <= y.1 && y.0 <= x.1)
        })
    }
    let edges = [0, 1, 2, 5, 9, 100, i32::MAX - 2, i32::MAX - 1, i32::MAX];
    let mut values: Vec<i32> = edges.to_vec();
    let mut x = 0x9e37_79b9u32;
    for _ in 0..24 {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        values.push((x >> 1) as i32);
    }
    for &a0 in &values {
        for &a1 in &values {
            for &b0 in &edges {
                for &b1 in &edges {
                    let (a, b) = ((a0, a1), (b0, b1));
                    assert_eq!(ranges_overlap(a, b), by_parts(a, b), "{a:?} {b:?}");
                    assert_eq!(ranges_overlap(b, a), by_parts(b, a), "{b:?} {a:?}");
                }
            }
        }
    }
}

/// One entry per producer id lives in the replay's table (plus ≈ 5–17 bytes of index):
/// keep it within the ~128 bytes per id (it was 520 bytes, then 112).
/// 1M producer ids in one partition are 88 MB of entries.
#[test]
fn entry_stays_compact() {
    let size = std::mem::size_of::<Entry>();
    eprintln!("Entry: {size} bytes");
    assert!(size <= 88, "Entry is {size} bytes");
}

/// Every producer with a marker keeps one (in `Markers`, 48 bytes); a data batch is
/// kept in every entry and in every open transaction (48 bytes). Both were a 64-byte
/// `BatchRef`, the marker boxed (an 80-byte heap chunk).
#[test]
fn kept_batches_stay_compact() {
    assert!(std::mem::size_of::<MarkerRef>() <= 48);
    assert!(std::mem::size_of::<DataRef>() <= 48);
}

/// What the entry gives back of a batch is what was recorded: the compact forms lose
/// nothing of the data batch or the marker (producer id and kind come from the entry).
#[test]
fn compact_batches_round_trip() {
    let mut ev = data_event(40, 7);
    ev.position = u64::MAX - 3;
    ev.segment = u32::MAX;
    ev.partition_leader_epoch = i32::MIN;
    ev.producer_epoch = i16::MAX;
    ev.is_transactional = true;
    let d = BatchRef::of(&ev);
    let mut mk = Markers::default();
    let mut e = Entry::new(&ev);
    e.record_data(d);
    assert_eq!(e.last_ref(&mk), d);
    let mut m = data_event(50, -1);
    m.is_control = true;
    m.last_sequence = -1;
    m.control = Some(crate::partition::event::ControlInfo::Marker {
        commit: false,
        coordinator_epoch: i32::MAX,
    });
    let mr = BatchRef::of(&m);
    e.record_marker(mr, &mut mk);
    assert_eq!(e.last_ref(&mk), mr);
    assert_eq!(e.last_marker(&mk), Some(mr));
    assert_eq!(e.coordinator_epoch(&mk), i32::MAX);
    assert_eq!(e.last_timestamp(&mk), mr.timestamp);
    e.record_data(BatchRef::of(&data_event(60, 9)));
    assert_eq!(e.last_marker(&mk), Some(mr));
    assert_eq!(e.last_ref(&mk).kind, RefKind::Data);
}

fn data_event(offset: i64, seq: i32) -> BatchEvent {
    BatchEvent {
        segment: 1,
        position: offset as u64 * 10,
        size: 10,
        magic: 2,
        base_offset: offset,
        last_offset: offset + 1,
        records_count: 2,
        partition_leader_epoch: 0,
        producer_id: 7,
        producer_epoch: 0,
        base_sequence: seq,
        last_sequence: seq + 1,
        is_transactional: false,
        is_control: false,
        control: None,
        compression: crate::read::format::Compression::None,
        timestamp_type: crate::read::format::TimestampType::CreateTime,
        base_timestamp: offset,
        max_timestamp: offset,
        delete_horizon: false,
        crc_valid: true,
        marker_timestamp: offset,
    }
}

/// Entry of producer 7 whose cache holds data batches with these (base, last)
/// sequences, in order.
fn cached(ranges: &[(i32, i32)]) -> Entry {
    let mut e = Entry::new(&data_event(0, 0));
    for (i, &(b, l)) in ranges.iter().enumerate() {
        let mut ev = data_event(i as i64 * 2, b);
        ev.last_sequence = l;
        e.record_data(BatchRef::of(&ev));
    }
    e
}

fn search_finds(e: &Entry, base: i32, last: i32) -> bool {
    e.cached_newest_first().any(|b| {
        (b.base_sequence == base && b.last_sequence == last)
            || ranges_overlap((b.base_sequence, b.last_sequence), (base, last))
    })
}

#[test]
fn the_next_healthy_batch_skips_the_duplicate_search() {
    let healthy = cached(&[(0, 1), (2, 3), (4, 5), (6, 7), (8, 9), (10, 11), (12, 13)]);
    assert!(healthy.cache_ends_below(14, 15));
    assert!(!search_finds(&healthy, 14, 15));
    // Negative: what could match (a duplicate, an overlap, a wrapping batch) searches.
    assert!(!healthy.cache_ends_below(12, 13));
    assert!(!healthy.cache_ends_below(10, 20));
    assert!(!healthy.cache_ends_below(i32::MAX, 3));
    // An older cached batch above the newest (sequences went back) keeps the search,
    // which finds the overlap with that older batch.
    let back = cached(&[(0, 9), (100, 109), (10, 19)]);
    assert!(!back.cache_ends_below(20, 120));
    assert!(search_finds(&back, 20, 120));
    // A cached batch that wrapped past i32::MAX keeps the search too.
    let wrapped = cached(&[(i32::MAX - 1, 1), (2, 3)]);
    assert!(!wrapped.cache_ends_below(4, 5));
    assert!(cached(&[]).cache_ends_below(5, 9));
}

proptest::proptest! {
    /// The skip never hides what the search would find: over any history of cached
    /// ranges (wrapping ones included), `cache_ends_below` implies no match.
    #[test]
    fn skipping_the_search_never_hides_a_match(
        ranges in proptest::collection::vec((-3i32..40, 0i32..6), 0..12),
        wrap in proptest::option::of(0usize..12),
        base in -3i32..50,
        len in -2i32..8,
    ) {
        let mut rs: Vec<(i32, i32)> = ranges.iter().map(|&(b, l)| (b, b + l)).collect();
        if let Some(w) = wrap.filter(|&w| w < rs.len()) {
            rs[w] = (i32::MAX - 1, 2);
        }
        let e = cached(&rs);
        if e.cache_ends_below(base, base + len) {
            proptest::prop_assert!(!search_finds(&e, base, base + len));
        }
    }
}

#[test]
fn cache_keeps_the_last_five_batches_newest_first() {
    let mut mk = Markers::default();
    let mut e = Entry::new(&data_event(0, 0));
    assert_eq!(e.last_event(&mk), None);
    assert_eq!(e.cached_newest_first().count(), 0);
    for i in 0..8 {
        e.record_data(BatchRef::of(&data_event(i * 2, i as i32 * 2)));
        let seqs: Vec<i32> = e.cached_newest_first().map(|b| b.base_sequence).collect();
        let want: Vec<i32> = (0..=i as i32).rev().take(5).map(|k| k * 2).collect();
        assert_eq!(seqs, want);
    }
    assert_eq!(e.last_sequence(), 15);
    assert_eq!(e.last_timestamp(&mk), 14);
    e.clear_cache();
    assert_eq!(e.last_sequence(), -1);
    assert_eq!(e.cached_newest_first().count(), 0);
    // The last data batch survives the cleared cache; a marker then becomes the last.
    assert_eq!(e.last_ref(&mk).base_offset, 14);
    let mut m = data_event(20, -1);
    m.is_control = true;
    m.control = Some(crate::partition::event::ControlInfo::Marker {
        commit: true,
        coordinator_epoch: 3,
    });
    e.record_marker(BatchRef::of(&m), &mut mk);
    assert_eq!(e.last_ref(&mk).base_offset, 20);
    assert_eq!(e.last_marker(&mk).map(|r| r.kind), Some(RefKind::Commit));
    assert!(matches!(
        e.last_event(&mk),
        Some(crate::partition::state::LastEvent::Marker {
            offset: 20,
            commit: true,
            ..
        })
    ));
    e.record_data(BatchRef::of(&data_event(30, 0)));
    assert!(matches!(
        e.last_event(&mk),
        Some(crate::partition::state::LastEvent::Data { offset: 30, .. })
    ));
    assert_eq!(e.last_marker(&mk).map(|r| r.base_offset), Some(20));
}

#[test]
fn next_sequence_wraps_at_int_max() {
    assert_eq!(next_sequence(-1), 0);
    assert_eq!(next_sequence(41), 42);
    assert_eq!(next_sequence(i32::MAX), 0);
}

#[test]
fn overlap_handles_wrapping_ranges() {
    assert!(ranges_overlap((0, 4), (4, 9)));
    assert!(!ranges_overlap((0, 4), (5, 9)));
    assert!(ranges_overlap((i32::MAX - 1, 1), (0, 0)));
    assert!(!ranges_overlap((i32::MAX - 1, 1), (2, 5)));
}

/// A transaction's floor on the broker's clock: the newest broker-stamped timestamp seen
/// before any of its batches, whole (records stamped months back keep it), none until one.
#[test]
fn clock_floor_keeps_the_newest_broker_time() {
    let mut t = OpenTxnState {
        pid: 1,
        first_batch: DataRef::default(),
        first_timestamp: 10_000,
        rec: super::super::txnrec::OpenRecord {
            first_held: 0,
            last_data_offset: 0,
            last_timestamp: 0,
            records: 1,
            batches: 1,
            bytes: 0,
        },
        epoch: 0,
        zombie: false,
        late_after_marker: false,
        non_txn_reported: false,
        clock_floor: i64::MIN,
    };
    assert_eq!(t.clock_floor(), None);
    let sixty_days = 60 * 86_400_000;
    t.appended_after(10_000 + sixty_days + 5);
    t.appended_after(10_000 + 60_000);
    assert_eq!(t.clock_floor(), Some(10_000 + sixty_days + 5));
}

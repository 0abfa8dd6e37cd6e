//! [`LogMatches`] answers the index checks exactly as the list of every entry does, for a
//! sequential walk and for a walk in pieces.

use super::*;
use crate::{Entries, classify};
use proptest::prelude::*;

/// One entry of a generated log.
#[derive(Debug, Clone)]
enum Spec {
    /// A v2 batch header without records.
    Data { base: i64, delta: i32, ts: i64 },
    /// A v2 control batch with one ABORT (`false`) or COMMIT marker of `pid`.
    Marker { base: i64, pid: i64, commit: bool },
    /// A legacy (magic 1) message, uncompressed.
    Legacy { offset: i64, ts: i64 },
    /// A v2 entry too short for its header (classified invalid).
    Short { offset: i64 },
}

fn encode(s: &Spec) -> Vec<u8> {
    match *s {
        Spec::Data { base, delta, ts } => {
            let mut b = vec![0u8; 61];
            b[..8].copy_from_slice(&base.to_be_bytes());
            b[8..12].copy_from_slice(&49i32.to_be_bytes());
            b[16] = 2;
            b[23..27].copy_from_slice(&delta.to_be_bytes());
            b[35..43].copy_from_slice(&ts.to_be_bytes());
            b[43..51].copy_from_slice(&(-1i64).to_be_bytes());
            b
        }
        Spec::Marker { base, pid, commit } => {
            let mut b = vec![0u8; 61];
            b[..8].copy_from_slice(&base.to_be_bytes());
            b[16] = 2;
            b[21..23].copy_from_slice(&0x30i16.to_be_bytes()); // transactional, control
            b[35..43].copy_from_slice(&(base * 10).to_be_bytes());
            b[43..51].copy_from_slice(&pid.to_be_bytes());
            b[57..61].copy_from_slice(&1i32.to_be_bytes());
            // length 16, attributes, timestamp delta, offset delta, key (4 bytes),
            // value (6 bytes), no headers
            b.extend_from_slice(&[0x20, 0, 0, 0, 0x08, 0, 0, 0, commit as u8, 0x0c]);
            b.extend_from_slice(&[0, 0, 0, 0, 0, 1, 0]);
            let size = (b.len() - 12) as i32;
            b[8..12].copy_from_slice(&size.to_be_bytes());
            b
        }
        Spec::Legacy { offset, ts } => {
            let mut b = vec![0u8; 34];
            b[..8].copy_from_slice(&offset.to_be_bytes());
            b[8..12].copy_from_slice(&22i32.to_be_bytes());
            b[16] = 1;
            b[18..26].copy_from_slice(&ts.to_be_bytes());
            b[26..30].copy_from_slice(&(-1i32).to_be_bytes());
            b[30..34].copy_from_slice(&(-1i32).to_be_bytes());
            b
        }
        Spec::Short { offset } => {
            let mut b = vec![0u8; 32];
            b[..8].copy_from_slice(&offset.to_be_bytes());
            b[8..12].copy_from_slice(&20i32.to_be_bytes());
            b[16] = 2;
            b
        }
    }
}

/// Specs from generated numbers: offsets mostly increasing, sometimes going back.
fn specs(raw: &[(u8, i8, u8, i64)]) -> Vec<Spec> {
    let mut next = 0i64;
    raw.iter()
        .map(|&(kind, step, delta, ts)| {
            let base = if step < -100 {
                next - i64::from(step.unsigned_abs() % 7)
            } else {
                next
            };
            let s = match kind % 8 {
                0..=3 => Spec::Data {
                    base,
                    delta: i32::from(delta % 4),
                    ts,
                },
                4 => Spec::Marker {
                    base,
                    pid: i64::from(delta % 3),
                    commit: ts % 2 == 0,
                },
                5 | 6 => Spec::Legacy {
                    offset: base + i64::from(delta % 3),
                    ts,
                },
                _ => Spec::Short { offset: base },
            };
            next = match s {
                Spec::Data { base, delta, .. } => base + i64::from(delta) + 1,
                Spec::Legacy { offset, .. } | Spec::Short { offset } => offset + 1,
                Spec::Marker { base, .. } => base + 1,
            };
            s
        })
        .collect()
}

/// The log, and the start of each entry.
fn log_of(specs: &[Spec], garbage: &[u8]) -> (Vec<u8>, Vec<u64>) {
    let mut log = Vec::new();
    let mut starts = Vec::new();
    for s in specs {
        starts.push(log.len() as u64);
        log.extend(encode(s));
    }
    log.extend_from_slice(garbage);
    (log, starts)
}

/// Walk `log` in pieces starting at `cuts` (entry starts): the old reference (every
/// entry, each piece with its own fold, concatenated) and the matches (each piece matched
/// on its own, appended).
fn walk(log: &[u8], cuts: &[u64], keys: &Arc<IndexKeys>) -> (LogBatches, LogMatches) {
    let mut all = Vec::new();
    let mut matches: Option<LogMatches> = None;
    let mut tail = Tail::Clean;
    for (i, &start) in cuts.iter().enumerate() {
        let stop = cuts.get(i + 1).map_or(log.len(), |&s| s as usize);
        let mut entries = Entries::new(&log[start as usize..stop], start);
        let mut fold = EntryFold::default();
        let mut m = IndexMatcher::new(keys.clone());
        for raw in entries.by_ref() {
            let c = classify(raw);
            all.push(fold.batch(&c, raw.position, raw.offset()));
            m.entry(&c, raw.position, raw.offset());
        }
        tail = entries.tail().unwrap_or(Tail::Clean);
        let piece = m.finish(tail, stop as u64);
        match &mut matches {
            None => matches = Some(piece),
            Some(acc) => acc.append(piece),
        }
    }
    let len = log.len() as u64;
    let reference = LogBatches::from_batches(all, tail, len);
    let mut matches = matches.expect("one piece at least");
    matches.valid_len = tail.truncation_position().unwrap_or(len);
    (reference, matches)
}

fn offset_index(entries: &[(i64, i32)]) -> Vec<u8> {
    entries
        .iter()
        .flat_map(|&(o, p)| [(o as i32).to_be_bytes(), p.to_be_bytes()].concat())
        .collect()
}

fn time_index(entries: &[(i64, i64)]) -> Vec<u8> {
    entries
        .iter()
        .flat_map(|&(ts, o)| {
            [ts.to_be_bytes().to_vec(), (o as i32).to_be_bytes().to_vec()].concat()
        })
        .collect()
}

fn txn_index(entries: &[(i64, i64)]) -> Vec<u8> {
    let mut out = Vec::new();
    for &(pid, last) in entries {
        out.extend_from_slice(&0i16.to_be_bytes());
        out.extend_from_slice(&pid.to_be_bytes());
        out.extend_from_slice(&(last - 2).to_be_bytes());
        out.extend_from_slice(&last.to_be_bytes());
        out.extend_from_slice(&0i64.to_be_bytes());
    }
    out
}

/// Pick an entry's offset or position, nudged by `nudge` (-1, 0, +1) or far beyond.
fn near(values: &[i64], pick: u16, nudge: u8) -> i64 {
    let v = values
        .get(pick as usize % values.len().max(1))
        .copied()
        .unwrap_or(0);
    match nudge % 8 {
        0 => v - 1,
        1 => v + 1,
        2 => v + 100_000,
        _ => v,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]
    #[test]
    fn matches_answer_the_checks_as_every_entry_does(
        raw in prop::collection::vec((any::<u8>(), any::<i8>(), any::<u8>(), 0i64..50), 0..60),
        garbage in prop::collection::vec(any::<u8>(), 0..3),
        cut_picks in prop::collection::vec(any::<u16>(), 0..4),
        oi_picks in prop::collection::vec((any::<u16>(), any::<u16>(), any::<u8>(), any::<u8>()), 0..12),
        ti_picks in prop::collection::vec((0i64..60, any::<u16>(), any::<u8>()), 0..12),
        tx_picks in prop::collection::vec((0i64..4, any::<u16>(), any::<u8>()), 0..6),
    ) {
        let specs = specs(&raw);
        let (log, starts) = log_of(&specs, &garbage);
        let mut cuts: Vec<u64> = vec![0];
        cuts.extend(cut_picks.iter().filter_map(|&c| starts.get(c as usize % starts.len().max(1)).copied()));
        cuts.sort_unstable();
        cuts.dedup();
        let lasts: Vec<i64> = specs.iter().map(|s| match *s {
            Spec::Data { base, delta, .. } => base + i64::from(delta),
            Spec::Marker { base, .. } => base,
            Spec::Legacy { offset, .. } | Spec::Short { offset } => offset,
        }).collect();
        let positions: Vec<i64> = starts.iter().map(|&p| p as i64).collect();
        let oi_entries: Vec<(i64, i32)> = oi_picks.iter()
            .map(|&(o, p, no, np)| (near(&lasts, o, no), near(&positions, p, np) as i32))
            .collect();
        let ti_entries: Vec<(i64, i64)> = ti_picks.iter()
            .map(|&(ts, o, no)| (ts, near(&lasts, o, no)))
            .collect();
        let tx_entries: Vec<(i64, i64)> = tx_picks.iter()
            .map(|&(pid, o, no)| (pid, near(&lasts, o, no)))
            .collect();
        let (ob, tb, xb) = (offset_index(&oi_entries), time_index(&ti_entries), txn_index(&tx_entries));
        let (oi, ti, xi) = (OffsetIndex::new(&ob, 0), TimeIndex::new(&tb, 0), TxnIndex::new(&xb, 0));
        let keys = Arc::new(IndexKeys::new(Some(&oi), Some(&ti), Some(&xi)));
        for cuts in [vec![0], cuts] {
            let (reference, matches) = walk(&log, &cuts, &keys);
            prop_assert_eq!(check_offset_index(&oi, &reference), check_offset_index(&oi, &matches));
            prop_assert_eq!(check_time_index(&ti, &reference), check_time_index(&ti, &matches));
            let v = IndexVerdicts::of(Some(&oi), Some(&ti), &matches);
            for a in xi.entries() {
                let old = reference.batches.iter().any(|b| {
                    b.base_offset == a.last_offset && b.abort_marker_of == Some(a.producer_id)
                });
                prop_assert_eq!(old, v.has_abort_marker(a.last_offset, a.producer_id));
            }
            let bad: Vec<_> = check_offset_index(&oi, &reference).into_iter().filter(|c| c.is_problem()).collect();
            let kept = v.offset.as_ref().unwrap();
            prop_assert_eq!(kept.count, bad.len());
            prop_assert_eq!(&kept.first[..], &bad[..bad.len().min(KEPT_PROBLEMS)]);
        }
        // The sequential walk is the one `LogBatches::from_log` makes.
        let (reference, _) = walk(&log, &[0], &keys);
        prop_assert_eq!(reference, LogBatches::from_log(&log));
    }
}

/// The generator makes every kind of entry the checks distinguish, and the kinds of
/// verdicts the property compares (so it does not pass on trivial logs only).
#[test]
fn generated_logs_hold_every_kind_of_entry() {
    let specs = vec![
        Spec::Data {
            base: 0,
            delta: 1,
            ts: 5,
        },
        Spec::Marker {
            base: 2,
            pid: 7,
            commit: false,
        },
        Spec::Legacy { offset: 3, ts: 6 },
        Spec::Short { offset: 4 },
        Spec::Marker {
            base: 5,
            pid: 7,
            commit: true,
        },
    ];
    let (log, starts) = log_of(&specs, &[]);
    let lb = LogBatches::from_log(&log);
    assert_eq!(lb.tail, Tail::Clean);
    assert_eq!(lb.batches.len(), 5);
    assert_eq!(lb.batches[1].abort_marker_of, Some(7));
    assert_eq!(lb.batches[4].abort_marker_of, None);
    assert_eq!(lb.batches[2].max_timestamp, Some(6));
    assert_eq!(lb.batches[3].max_timestamp, None);
    let ob = offset_index(&[(1, 0), (3, starts[2] as i32), (4, starts[2] as i32 + 1)]);
    let tb = time_index(&[(5, 1), (6, 3), (7, 4)]);
    let xb = txn_index(&[(7, 2), (7, 5), (8, 2)]);
    let (oi, ti, xi) = (
        OffsetIndex::new(&ob, 0),
        TimeIndex::new(&tb, 0),
        TxnIndex::new(&xb, 0),
    );
    let keys = Arc::new(IndexKeys::new(Some(&oi), Some(&ti), Some(&xi)));
    let (_, m) = walk(&log, &[0, starts[2]], &keys);
    let c: Vec<_> = check_offset_index(&oi, &m)
        .iter()
        .map(|c| c.check)
        .collect();
    assert_eq!(
        c,
        [
            OffsetCheck::Exact,
            OffsetCheck::Exact,
            OffsetCheck::NotABatchStart
        ]
    );
    let t: Vec<_> = check_time_index(&ti, &m).iter().map(|c| c.check).collect();
    assert_eq!(
        t,
        [
            TimeCheck::Exact,
            TimeCheck::Exact,
            TimeCheck::TimestampMismatch { log_timestamp: -1 }
        ]
    );
    let v = IndexVerdicts::of(Some(&oi), Some(&ti), &m);
    assert_eq!(v.abort_markers, [(2, 7)]);
    assert_eq!(v.offset.unwrap().count, 1);
    assert_eq!(v.time.unwrap().count, 1);
}

/// A later piece does not take over an offset an earlier piece already ended, and keys
/// no entry reaches are not answered.
#[test]
fn pieces_keep_the_first_entry_in_file_order() {
    // offsets 0..=9 in the first piece, then 5..=6 again, then 20
    let specs = vec![
        Spec::Data {
            base: 0,
            delta: 9,
            ts: 1,
        },
        Spec::Data {
            base: 5,
            delta: 1,
            ts: 2,
        },
        Spec::Data {
            base: 20,
            delta: 0,
            ts: 3,
        },
    ];
    let (log, starts) = log_of(&specs, &[]);
    let tb = time_index(&[(1, 6), (3, 20), (4, 30)]);
    let ti = TimeIndex::new(&tb, 0);
    let keys = Arc::new(IndexKeys::new(None, Some(&ti), None));
    let (_, m) = walk(&log, &[0, starts[1], starts[2]], &keys);
    let e = m.ending_at_or_after(6).unwrap();
    assert_eq!((e.base_offset, e.last_offset), (0, 9));
    assert_eq!(m.ending_at_or_after(20).unwrap().last_offset, 20);
    assert_eq!(m.ending_at_or_after(30), None);
    // not a key: not answered
    assert_eq!(m.ending_at_or_after(7), None);
    assert_eq!(m.last_offset_at(0), None);
}

use super::*;
use crate::partition::event::{Classified, classify};
use crate::partition::scan::{ScanOptions, scan_inventory};
use crate::read::segment::{self, ReadPolicy};
use crate::testkit::{Batch, PartitionBuilder, Producer};
use std::path::Path;

/// The timeline the scan's walk collects for the one partition under `dir`.
fn scanned(dir: &Path, wanted: &[i64]) -> Option<Timeline> {
    let o = ScanOptions::default()
        .with_collect_timelines(true)
        .with_timeline_producers(wanted.iter().copied());
    let inv = crate::discover::layout::discover(&[dir.to_path_buf()]);
    let mut stage = scan_inventory(&inv, &o);
    assert_eq!(stage.partitions.len(), 1);
    stage.partitions[0].carried.take_timeline().map(|t| *t)
}

/// Every batch of the partition directory `dir`, read on their own (not by the scan).
fn events(dir: &Path) -> Vec<BatchEvent> {
    let inv = crate::discover::layout::discover(&[dir.to_path_buf()]);
    let mut out = Vec::new();
    for (si, seg) in inv.partitions[0].segments.iter().enumerate() {
        let Some(log) = &seg.log else { continue };
        segment::walk_entries_items(log, ReadPolicy::Read, None, |item| {
            if let segment::Item::Entry(e) = item {
                match classify(e) {
                    Classified::V2(v) => out.push(BatchEvent::from_v2(&v, si as u32, false)),
                    Classified::Legacy(m) => {
                        out.push(BatchEvent::from_legacy(&m, si as u32, false))
                    }
                    Classified::Invalid(_) => {}
                }
            }
        })
        .unwrap();
    }
    out
}

fn collected(evs: &[BatchEvent], limits: Limits, wanted: &[i64]) -> Timeline {
    let mut c = Collector::new(limits, wanted);
    evs.iter().for_each(|e| c.batch(e));
    c.finish().unwrap()
}

#[test]
fn transactions_become_spans_closed_by_their_markers() {
    let dir = tempfile::tempdir().unwrap();
    let mut p = PartitionBuilder::new("t", 0);
    let tx = Producer::transactional(7, 1);
    p.append(Batch::new(tx).records(2));
    p.commit(tx, 3);
    p.append(Batch::new(Producer::idempotent(8, 0)).records(3));
    p.append(Batch::new(tx).records(1));
    p.abort(tx, 3);
    p.append(Batch::new(tx).records(1));
    p.write(dir.path()).unwrap();
    let t = scanned(&dir.path().join("t-0"), &[]).unwrap();
    let l7 = t.lane_of(7).unwrap();
    let kinds: Vec<_> = l7.spans.iter().map(|s| (s.kind, s.first, s.last)).collect();
    assert_eq!(
        kinds,
        [
            (SpanKind::Committed, 0, 2),
            (SpanKind::Aborted, 6, 7),
            (SpanKind::Open, 8, 8)
        ]
    );
    assert_eq!((l7.spans[0].committed, l7.spans[1].aborted), (1, 1));
    assert_eq!(l7.markers.len(), 2);
    assert_eq!(l7.marker_count, 2);
    assert!(l7.markers[0].commit && !l7.markers[1].commit);
    let l8 = t.lane_of(8).unwrap();
    assert_eq!(l8.spans[0].kind, SpanKind::Data);
    assert_eq!((t.first_offset, t.last_offset), (Some(0), Some(8)));
    assert!(!t.reduced);
    // The walk's timeline is the one the batches make, read on their own.
    let evs = events(&dir.path().join("t-0"));
    assert_eq!(t, collected(&evs, Limits::default(), &[]));
}

#[test]
fn a_partition_without_batches_has_no_timeline() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("t-0");
    std::fs::create_dir_all(&p).unwrap();
    std::fs::write(p.join("00000000000000000000.log"), b"").unwrap();
    assert_eq!(scanned(&p, &[]), None);
}

#[test]
fn lanes_are_bounded_and_asked_for_producers_keep_theirs() {
    let dir = tempfile::tempdir().unwrap();
    let mut p = PartitionBuilder::new("t", 0);
    for pid in 0..10 {
        p.append(Batch::new(Producer::idempotent(pid, 0)).records(1));
    }
    p.write(dir.path()).unwrap();
    let evs = events(&dir.path().join("t-0"));
    let limits = Limits {
        max_lanes: 4,
        ..Limits::default()
    };
    let t = collected(&evs, limits, &[]);
    assert_eq!(t.lanes.len(), 4);
    assert!(t.reduced && t.lanes[3].merged);
    assert_eq!(t.lanes[3].spans.iter().map(|s| s.batches).sum::<u64>(), 7);
    assert!(t.lane_of(8).is_none());
    // Producer 8, asked for, gets its own lane beyond the limit.
    let t = collected(&evs, limits, &[8]);
    assert_eq!(t.lanes.len(), 5);
    assert_eq!(t.lane_of(8).unwrap().spans[0].first, 8);
    assert_eq!(t.lanes[4].spans.iter().map(|s| s.batches).sum::<u64>(), 6);
    // So does it in the scan's walk.
    let t = scanned(&dir.path().join("t-0"), &[8]).unwrap();
    assert!(t.lane_of(8).is_some());
}

/// Many transactions of several producers: the spans and markers stay within the limits,
/// summarise the whole log evenly (not its first part), and lose no batch or run.
#[test]
fn spans_and_markers_stay_within_bounds_over_the_whole_log() {
    let dir = tempfile::tempdir().unwrap();
    let mut p = PartitionBuilder::new("t", 0);
    let txs: Vec<Producer> = (0..3)
        .map(|i| Producer::transactional(100 + i, 0))
        .collect();
    let mut commits = 0u32;
    let mut aborts = 0u32;
    for n in 0..600 {
        let tx = txs[n % 3];
        p.append(Batch::new(tx).records(1));
        if n % 7 == 0 {
            p.abort(tx, 0);
            aborts += 1;
        } else {
            p.commit(tx, 0);
            commits += 1;
        }
    }
    p.write(dir.path()).unwrap();
    let evs = events(&dir.path().join("t-0"));
    let limits = Limits {
        max_lanes: 24,
        max_spans: 200,
        max_lane_spans: 100,
        max_markers: 120,
        max_lane_markers: 60,
    };
    let t = collected(&evs, limits, &[]);
    assert!(t.reduced);
    let spans: usize = t.lanes.iter().map(|l| l.spans.len()).sum();
    let markers: usize = t.lanes.iter().map(|l| l.markers.len()).sum();
    assert!(
        spans <= 200 && markers <= 120,
        "{spans} spans, {markers} markers"
    );
    for l in &t.lanes {
        assert!(l.spans.len() <= 100 && l.markers.len() <= 60);
        assert_eq!(l.marker_count, 200);
        assert_eq!(l.spans.iter().map(|s| s.batches).sum::<u64>(), 200);
        assert_eq!(l.spans.iter().map(|s| s.runs).sum::<u32>(), 200);
        // Spans in offset order, the last one reaching the log's end.
        assert!(l.spans.windows(2).all(|w| w[0].last < w[1].first));
        let last = l.spans.last().unwrap().last;
        assert!(last >= t.last_offset.unwrap() - 6, "the whole log: {last}");
        // The markers kept are spread over the whole log too.
        assert!(l.markers.last().unwrap().offset > t.last_offset.unwrap() / 2);
    }
    let c: u32 = t
        .lanes
        .iter()
        .flat_map(|l| &l.spans)
        .map(|s| s.committed)
        .sum();
    let a: u32 = t
        .lanes
        .iter()
        .flat_map(|l| &l.spans)
        .map(|s| s.aborted)
        .sum();
    assert_eq!((c, a), (commits, aborts));
    // Under the default limits every transaction keeps its span; 600 markers are more
    // than the partition's 512: one lane in two keeps every other one.
    let t = collected(&evs, Limits::default(), &[]);
    assert_eq!(t.lanes.iter().map(|l| l.spans.len()).sum::<usize>(), 600);
    let markers: usize = t.lanes.iter().map(|l| l.markers.len()).sum();
    assert!(t.reduced && markers <= 512, "{markers}");
}

/// A run of many data batches is one span; a span never absorbs an open transaction.
#[test]
fn the_open_transaction_is_never_merged_away() {
    let dir = tempfile::tempdir().unwrap();
    let mut p = PartitionBuilder::new("t", 0);
    let tx = Producer::transactional(5, 0);
    p.append(Batch::new(tx).records(1));
    for k in 0..40 {
        p.append(Batch::new(Producer::idempotent(6, (k % 20) as i16)).records(1));
    }
    p.write(dir.path()).unwrap();
    let evs = events(&dir.path().join("t-0"));
    let limits = Limits {
        max_spans: 4,
        max_lane_spans: 4,
        ..Limits::default()
    };
    let t = collected(&evs, limits, &[]);
    let open = &t.lane_of(5).unwrap().spans;
    assert_eq!(open.len(), 1);
    assert_eq!(open[0].kind, SpanKind::Open);
    let data = &t.lane_of(6).unwrap().spans;
    assert!(data.len() <= 4);
    assert_eq!(data.iter().map(|s| s.batches).sum::<u64>(), 40);
    assert_eq!(
        (data[0].min_epoch, data.last().unwrap().epoch),
        (0, 19),
        "merged spans keep their epochs' range"
    );
}

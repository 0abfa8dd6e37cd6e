//! The data of one partition's timeline for the HTML report: per producer, its data and
//! its transactions as spans over offsets (coloured by outcome), its markers, and the
//! epochs they were written at.
//!
//! The scan keeps no per-batch data, so the timeline re-reads the batch headers of the
//! partition's `.log` files (read-only, in bounded chunks; no decompression) — only for
//! the partitions the report shows in detail. Memory is bounded by [`Limits`]: producers
//! beyond `max_lanes` share one lane, and spans beyond `max_spans` per lane are merged
//! with their neighbour.

use crate::discover::layout;
use crate::partition::event::{BatchEvent, Classified, classify};
use crate::read::segment::{self, ReadPolicy};
use std::collections::HashMap;
use std::path::Path;

/// What a span shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpanKind {
    /// Non-transactional (idempotent or plain) data.
    Data,
    Committed,
    Aborted,
    /// No marker closes it by the end of the log.
    Open,
}

impl SpanKind {
    pub fn as_str(self) -> &'static str {
        match self {
            SpanKind::Data => "data",
            SpanKind::Committed => "committed",
            SpanKind::Aborted => "aborted",
            SpanKind::Open => "open",
        }
    }
}

/// A run of offsets of one producer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Span {
    pub first: i64,
    pub last: i64,
    pub epoch: i16,
    pub kind: SpanKind,
    pub batches: u64,
    pub first_timestamp: i64,
    pub last_timestamp: i64,
}

/// A COMMIT/ABORT marker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Marker {
    pub offset: i64,
    pub epoch: i16,
    pub commit: bool,
    pub coordinator_epoch: i32,
    pub timestamp: i64,
}

/// One producer's row (`producer_id` -1: batches without a producer id; `None` in
/// `merged`: several producers beyond the lane limit).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Lane {
    pub producer_id: i64,
    pub merged: bool,
    pub spans: Vec<Span>,
    pub markers: Vec<Marker>,
}

/// One partition's timeline.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Timeline {
    pub lanes: Vec<Lane>,
    /// Offsets covered: first batch's base offset, last batch's last offset.
    pub first_offset: Option<i64>,
    pub last_offset: Option<i64>,
    /// Something was merged or left out to stay within the limits.
    pub reduced: bool,
}

/// Bounds on a timeline.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub max_lanes: usize,
    pub max_spans: usize,
    /// Bytes of each `.log` read at most.
    pub max_bytes: Option<u64>,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_lanes: 24,
            max_spans: 400,
            max_bytes: None,
        }
    }
}

#[derive(Default)]
struct Builder {
    lanes: Vec<Lane>,
    index: HashMap<i64, usize>,
    /// Lane → index of its open transaction span.
    open: HashMap<usize, usize>,
    limits: Option<Limits>,
    reduced: bool,
    first: Option<i64>,
    last: Option<i64>,
}

impl Builder {
    fn lane(&mut self, pid: i64) -> usize {
        if let Some(&i) = self.index.get(&pid) {
            return i;
        }
        let max = self.limits.map_or(usize::MAX, |l| l.max_lanes);
        if self.lanes.len() + 1 >= max {
            // The last lane gathers every further producer.
            self.reduced = true;
            if self.lanes.len() + 1 == max {
                self.lanes.push(Lane {
                    producer_id: -2,
                    merged: true,
                    ..Lane::default()
                });
            }
            let i = self.lanes.len() - 1;
            self.index.insert(pid, i);
            return i;
        }
        self.lanes.push(Lane {
            producer_id: pid,
            ..Lane::default()
        });
        let i = self.lanes.len() - 1;
        self.index.insert(pid, i);
        i
    }

    fn push_span(&mut self, lane: usize, s: Span) -> usize {
        let max = self.limits.map_or(usize::MAX, |l| l.max_spans);
        let open = self.open.get(&lane).copied();
        let spans = &mut self.lanes[lane].spans;
        let n = spans.len();
        let full = n >= max;
        let merge = n > 0
            && Some(n - 1) != open
            && (full || {
                let prev = &spans[n - 1];
                prev.kind == SpanKind::Data
                    && s.kind == SpanKind::Data
                    && prev.epoch == s.epoch
                    && s.first <= prev.last.saturating_add(1)
            });
        if merge {
            if full {
                self.reduced = true;
            }
            let prev = &mut spans[n - 1];
            prev.last = prev.last.max(s.last);
            prev.batches += s.batches;
            prev.last_timestamp = prev.last_timestamp.max(s.last_timestamp);
            return n - 1;
        }
        spans.push(s);
        n
    }

    fn batch(&mut self, ev: &BatchEvent) {
        self.first = Some(self.first.map_or(ev.base_offset, |f| f.min(ev.base_offset)));
        self.last = Some(self.last.map_or(ev.last_offset, |l| l.max(ev.last_offset)));
        let pid = if ev.producer_id >= 0 {
            ev.producer_id
        } else {
            -1
        };
        let lane = self.lane(pid);
        let ts = ev.max_timestamp;
        if let Some((commit, coordinator_epoch)) = ev.marker() {
            self.lanes[lane].markers.push(Marker {
                offset: ev.base_offset,
                epoch: ev.producer_epoch,
                commit,
                coordinator_epoch,
                timestamp: ev.marker_timestamp,
            });
            let max = self.limits.map_or(usize::MAX, |l| l.max_spans);
            if self.lanes[lane].markers.len() > max {
                self.lanes[lane].markers.remove(0);
                self.reduced = true;
            }
            if let Some(i) = self.open.remove(&lane) {
                let s = &mut self.lanes[lane].spans[i];
                s.kind = if commit {
                    SpanKind::Committed
                } else {
                    SpanKind::Aborted
                };
                s.last = s.last.max(ev.base_offset);
            }
            return;
        }
        if ev.is_control {
            return;
        }
        if ev.is_transactional {
            if let Some(&i) = self.open.get(&lane) {
                let s = &mut self.lanes[lane].spans[i];
                s.last = s.last.max(ev.last_offset);
                s.batches += 1;
                s.last_timestamp = s.last_timestamp.max(ts);
                s.epoch = s.epoch.max(ev.producer_epoch);
                return;
            }
            let i = self.push_span(
                lane,
                Span {
                    first: ev.base_offset,
                    last: ev.last_offset,
                    epoch: ev.producer_epoch,
                    kind: SpanKind::Open,
                    batches: 1,
                    first_timestamp: ts,
                    last_timestamp: ts,
                },
            );
            if self.lanes[lane].spans[i].kind == SpanKind::Open {
                self.open.insert(lane, i);
            }
            return;
        }
        self.push_span(
            lane,
            Span {
                first: ev.base_offset,
                last: ev.last_offset,
                epoch: ev.producer_epoch,
                kind: SpanKind::Data,
                batches: 1,
                first_timestamp: ts,
                last_timestamp: ts,
            },
        );
    }
}

/// Build the timeline of the partition directory at `dir` from its batch headers.
pub fn collect(dir: &Path, limits: &Limits) -> std::io::Result<Timeline> {
    let inv = layout::discover(&[dir.to_path_buf()]);
    let mut b = Builder {
        limits: Some(*limits),
        ..Builder::default()
    };
    let Some(p) = inv.partitions.first() else {
        return Ok(Timeline::default());
    };
    for (si, seg) in p.segments.iter().enumerate() {
        let Some(log) = &seg.log else { continue };
        // Headers only: an entry too large to hold arrives checked streaming, as its
        // header (`segment::Item::Big`), and is drawn from it; never buffered whole.
        segment::walk_entries_items(log, ReadPolicy::Read, limits.max_bytes, |item| {
            let head;
            let e = match item {
                segment::Item::Entry(e) => e,
                segment::Item::Big(big) => {
                    head = big.header_only();
                    crate::read::format::RawEntry {
                        position: big.position,
                        bytes: &head,
                    }
                }
            };
            let ev = match classify(e) {
                Classified::V2(v) => BatchEvent::from_v2(&v, si as u32, false),
                Classified::Legacy(m) => BatchEvent::from_legacy(&m, si as u32, false),
                Classified::Invalid(_) => return,
            };
            b.batch(&ev);
        })?;
    }
    // Producers sorted by id (the shared lane last), so lanes read the same in every run.
    let mut lanes = b.lanes;
    lanes.sort_by_key(|l| (l.merged, l.producer_id));
    Ok(Timeline {
        lanes,
        first_offset: b.first,
        last_offset: b.last,
        reduced: b.reduced,
    })
}

#[cfg(all(test, feature = "testkit"))]
mod tests {
    use super::*;
    use crate::testkit::{Batch, PartitionBuilder, Producer};

    #[test]
    fn transactions_become_spans_closed_by_their_markers() {
        let dir = tempfile_dir();
        let mut p = PartitionBuilder::new("t", 0);
        let tx = Producer::transactional(7, 1);
        p.append(Batch::new(tx).records(2));
        p.commit(tx, 3);
        p.append(Batch::new(Producer::idempotent(8, 0)).records(3));
        p.append(Batch::new(tx).records(1));
        p.abort(tx, 3);
        p.append(Batch::new(tx).records(1));
        p.write(&dir).unwrap();
        let t = collect(&dir.join("t-0"), &Limits::default()).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        let l7 = t.lanes.iter().find(|l| l.producer_id == 7).unwrap();
        let kinds: Vec<_> = l7.spans.iter().map(|s| (s.kind, s.first, s.last)).collect();
        assert_eq!(
            kinds,
            [
                (SpanKind::Committed, 0, 2),
                (SpanKind::Aborted, 6, 7),
                (SpanKind::Open, 8, 8)
            ]
        );
        assert_eq!(l7.markers.len(), 2);
        assert!(l7.markers[0].commit && !l7.markers[1].commit);
        let l8 = t.lanes.iter().find(|l| l.producer_id == 8).unwrap();
        assert_eq!(l8.spans[0].kind, SpanKind::Data);
        assert_eq!((t.first_offset, t.last_offset), (Some(0), Some(8)));
    }

    #[test]
    fn lanes_are_bounded() {
        let dir = tempfile_dir();
        let mut p = PartitionBuilder::new("t", 0);
        for pid in 0..10 {
            p.append(Batch::new(Producer::idempotent(pid, 0)).records(1));
        }
        p.write(&dir).unwrap();
        let limits = Limits {
            max_lanes: 4,
            ..Limits::default()
        };
        let t = collect(&dir.join("t-0"), &limits).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(t.lanes.len(), 4);
        assert!(t.reduced && t.lanes[3].merged);
        assert_eq!(t.lanes[3].spans.iter().map(|s| s.batches).sum::<u64>(), 7);
    }

    fn tempfile_dir() -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!(
            "klogscan-timeline-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }
}

//! The data of one partition's timeline for the HTML report: per producer, its data and
//! its transactions as spans over offsets (coloured by outcome), its markers, and the
//! epochs they were written at.
//!
//! Collected by the partition's one walk (`partition::scan`), batch by batch in offset
//! order, when `ScanOptions::collect_timelines` is set: no file is read for it. It travels
//! in `PartitionReport::timeline` and, between processes, in `PartitionResult::timeline`.
//! A partition without batches has none (`None`).
//!
//! Bounded whatever the partition holds ([`Limits`]): at most `max_lanes` lanes (producers
//! beyond share the last one; producers the caller asked for by id get their own lane, at
//! most [`MAX_WANTED_LANES`] of them), at most `max_spans` spans and `max_markers` markers
//! for the whole partition, and at most `max_lane_spans`/`max_lane_markers` in one lane.
//! When a bound is reached, the fullest lane is halved: neighbouring spans are merged
//! pairwise (a merged span counts its runs, its committed and aborted transactions, and
//! shows the kind most of them had), and every other marker is dropped (the lane then
//! keeps one marker in 2, 4, … as they come). The picture stays an even summary of the
//! whole log rather than its first part; [`Timeline::reduced`] says it was summarised.
//! With the default limits a partition's timeline holds at most 1 024 spans of 64 bytes
//! and 512 markers of 24 bytes (≈ 80 KiB), whatever the number of batches.

use crate::partition::event::BatchEvent;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// What a span shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
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

/// A run of offsets of one producer: one transaction, or consecutive data batches of one
/// epoch; or, once the lane was summarised, several neighbouring runs (`runs` > 1).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Span {
    pub first: i64,
    pub last: i64,
    /// The producer epoch (the highest, when runs were merged).
    pub epoch: i16,
    /// The lowest producer epoch of the merged runs (`epoch` when not merged).
    pub min_epoch: i16,
    /// The kind of the run; for merged runs, the kind most of them had.
    pub kind: SpanKind,
    pub batches: u64,
    pub first_timestamp: i64,
    pub last_timestamp: i64,
    /// Runs this span stands for (1 as written).
    pub runs: u32,
    /// Of those runs, the committed transactions.
    pub committed: u32,
    /// Of those runs, the aborted transactions.
    pub aborted: u32,
}

impl Span {
    fn new(ev: &BatchEvent, kind: SpanKind) -> Span {
        Span {
            first: ev.base_offset,
            last: ev.last_offset,
            epoch: ev.producer_epoch,
            min_epoch: ev.producer_epoch,
            kind,
            batches: 1,
            first_timestamp: ev.max_timestamp,
            last_timestamp: ev.max_timestamp,
            runs: 1,
            committed: 0,
            aborted: 0,
        }
    }

    /// `self` and the run that follows it, as one span.
    fn merged(self, next: Span) -> Span {
        let runs = self.runs.saturating_add(next.runs);
        let committed = self.committed.saturating_add(next.committed);
        let aborted = self.aborted.saturating_add(next.aborted);
        let data = runs.saturating_sub(committed).saturating_sub(aborted);
        let kind = if aborted > 0 && aborted >= committed && aborted >= data {
            SpanKind::Aborted
        } else if committed > 0 && committed >= data {
            SpanKind::Committed
        } else {
            SpanKind::Data
        };
        Span {
            first: self.first.min(next.first),
            last: self.last.max(next.last),
            epoch: self.epoch.max(next.epoch),
            min_epoch: self.min_epoch.min(next.min_epoch),
            kind,
            batches: self.batches.saturating_add(next.batches),
            first_timestamp: self.first_timestamp,
            last_timestamp: self.last_timestamp.max(next.last_timestamp),
            runs,
            committed,
            aborted,
        }
    }
}

/// A COMMIT/ABORT marker.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Marker {
    pub offset: i64,
    pub epoch: i16,
    pub commit: bool,
    pub coordinator_epoch: i32,
    pub timestamp: i64,
}

/// One producer's row (`producer_id` -1: batches without a producer id; `merged`: the
/// lane of the producers beyond the lane limit, `producer_id` -2).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lane {
    pub producer_id: i64,
    pub merged: bool,
    pub spans: Vec<Span>,
    /// The markers kept (all of them, unless the lane was summarised).
    pub markers: Vec<Marker>,
    /// Every marker the lane's producers wrote.
    pub marker_count: u64,
}

/// One partition's timeline.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Timeline {
    /// By producer id, the shared lane last.
    pub lanes: Vec<Lane>,
    /// Offsets covered: first batch's base offset, last batch's last offset.
    pub first_offset: Option<i64>,
    pub last_offset: Option<i64>,
    /// Something was merged or left out to stay within the limits.
    pub reduced: bool,
}

impl Timeline {
    /// The lane of producer `pid`, if it has its own.
    pub fn lane_of(&self, pid: i64) -> Option<&Lane> {
        self.lanes
            .iter()
            .find(|l| !l.merged && l.producer_id == pid)
    }
}

/// Bounds on a timeline.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Lanes, the shared one included (producers asked for by id not counted).
    pub max_lanes: usize,
    /// Spans of the whole partition.
    pub max_spans: usize,
    /// Spans of one lane (about what the picture's width can show).
    pub max_lane_spans: usize,
    /// Markers of the whole partition.
    pub max_markers: usize,
    /// Markers of one lane.
    pub max_lane_markers: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_lanes: 24,
            max_spans: 1024,
            max_lane_spans: 400,
            max_markers: 512,
            max_lane_markers: 400,
        }
    }
}

/// Producers asked for by id that get their own lane beyond `max_lanes`.
pub const MAX_WANTED_LANES: usize = 64;

/// Per lane, what the collector tracks besides the lane.
#[derive(Debug, Default)]
struct LaneState {
    /// Index of the lane's open transaction span.
    open: Option<usize>,
    /// Markers seen; one in `stride` is kept.
    seen: u64,
    stride: u64,
}

/// Builds a partition's [`Timeline`] from its batches, in offset order.
#[derive(Debug)]
pub(crate) struct Collector {
    limits: Limits,
    /// Producers that get their own lane (sorted).
    wanted: Vec<i64>,
    lanes: Vec<Lane>,
    state: Vec<LaneState>,
    /// Producers with their own lane → lane.
    index: HashMap<i64, usize>,
    shared: Option<usize>,
    /// Lanes given to producers not asked for (the shared lane excluded).
    ordinary: usize,
    wanted_lanes: usize,
    spans: usize,
    markers: usize,
    reduced: bool,
    first: Option<i64>,
    last: Option<i64>,
}

impl Collector {
    /// A collector within `limits`; the producers of `wanted` get their own lanes.
    pub(crate) fn new(limits: Limits, wanted: &[i64]) -> Self {
        let mut wanted = wanted.to_vec();
        wanted.sort_unstable();
        wanted.dedup();
        Collector {
            limits,
            wanted,
            lanes: Vec::new(),
            state: Vec::new(),
            index: HashMap::new(),
            shared: None,
            ordinary: 0,
            wanted_lanes: 0,
            spans: 0,
            markers: 0,
            reduced: false,
            first: None,
            last: None,
        }
    }

    fn new_lane(&mut self, producer_id: i64, merged: bool) -> usize {
        self.lanes.push(Lane {
            producer_id,
            merged,
            ..Lane::default()
        });
        self.state.push(LaneState {
            stride: 1,
            ..LaneState::default()
        });
        self.lanes.len() - 1
    }

    fn lane(&mut self, pid: i64) -> usize {
        if let Some(&i) = self.index.get(&pid) {
            return i;
        }
        let wanted =
            self.wanted_lanes < MAX_WANTED_LANES && self.wanted.binary_search(&pid).is_ok();
        if wanted || self.ordinary + 1 < self.limits.max_lanes.max(1) {
            if wanted {
                self.wanted_lanes += 1;
            } else {
                self.ordinary += 1;
            }
            let i = self.new_lane(pid, false);
            self.index.insert(pid, i);
            return i;
        }
        // The shared lane gathers every further producer (they are not remembered one by
        // one: their number is unbounded).
        self.reduced = true;
        match self.shared {
            Some(i) => i,
            None => {
                let i = self.new_lane(-2, true);
                self.shared = Some(i);
                i
            }
        }
    }

    /// Halve the spans of the fullest lane (or of `lane`): merge neighbours pairwise,
    /// never the open transaction's span.
    fn compact_spans(&mut self, lane: usize) {
        let fullest = (0..self.lanes.len())
            .max_by_key(|&i| (self.lanes[i].spans.len(), i == lane))
            .unwrap_or(lane);
        let target = if self.lanes[lane].spans.len() >= self.limits.max_lane_spans {
            lane
        } else {
            fullest
        };
        let open = self.state[target].open;
        let spans = std::mem::take(&mut self.lanes[target].spans);
        let before = spans.len();
        let mut out = Vec::with_capacity(before / 2 + 1);
        let mut new_open = None;
        let mut it = spans.into_iter().enumerate().peekable();
        while let Some((i, s)) = it.next() {
            if Some(i) == open {
                new_open = Some(out.len());
                out.push(s);
            } else if let Some((_, t)) = it.next_if(|(j, _)| Some(*j) != open) {
                out.push(s.merged(t));
            } else {
                out.push(s);
            }
        }
        self.spans -= before - out.len();
        self.lanes[target].spans = out;
        self.state[target].open = new_open;
        self.reduced = true;
    }

    /// Halve the markers of the fullest lane (or of `lane`): every other one is dropped,
    /// and from then on the lane keeps one marker in twice as many.
    fn compact_markers(&mut self, lane: usize) {
        let target = if self.lanes[lane].markers.len() >= self.limits.max_lane_markers {
            lane
        } else {
            (0..self.lanes.len())
                .max_by_key(|&i| (self.lanes[i].markers.len(), i == lane))
                .unwrap_or(lane)
        };
        let markers = &mut self.lanes[target].markers;
        let before = markers.len();
        let mut k = 0;
        markers.retain(|_| {
            k += 1;
            k % 2 == 1
        });
        self.markers -= before - markers.len();
        let st = &mut self.state[target];
        st.stride = st.stride.saturating_mul(2);
        self.reduced = true;
    }

    fn full_spans(&self, lane: usize) -> bool {
        self.lanes[lane].spans.len() >= self.limits.max_lane_spans.max(2)
            || self.spans >= self.limits.max_spans.max(2)
    }

    fn push_span(&mut self, lane: usize, s: Span) -> usize {
        let open = self.state[lane].open;
        let spans = &mut self.lanes[lane].spans;
        let n = spans.len();
        if n > 0 && Some(n - 1) != open {
            let prev = &mut spans[n - 1];
            if prev.kind == SpanKind::Data
                && s.kind == SpanKind::Data
                && prev.runs == 1
                && prev.epoch == s.epoch
                && s.first <= prev.last.saturating_add(1)
            {
                prev.last = prev.last.max(s.last);
                prev.batches += s.batches;
                prev.last_timestamp = prev.last_timestamp.max(s.last_timestamp);
                return n - 1;
            }
        }
        if self.full_spans(lane) {
            let before = self.spans;
            self.compact_spans(lane);
            if self.spans == before {
                // Nothing could be merged (many lanes of one span each): the run joins
                // the lane's last span rather than grow the timeline.
                let spans = &mut self.lanes[lane].spans;
                if let Some(i) = (0..spans.len()).rev().find(|&i| Some(i) != open) {
                    let prev = std::mem::replace(&mut spans[i], s.clone());
                    spans[i] = prev.merged(s);
                    return i;
                }
            }
        }
        self.lanes[lane].spans.push(s);
        self.spans += 1;
        self.lanes[lane].spans.len() - 1
    }

    fn marker(&mut self, lane: usize, m: Marker) {
        let st = &mut self.state[lane];
        let keep = st.seen.is_multiple_of(st.stride);
        st.seen += 1;
        self.lanes[lane].marker_count += 1;
        if !keep {
            return;
        }
        if self.lanes[lane].markers.len() >= self.limits.max_lane_markers.max(2)
            || self.markers >= self.limits.max_markers.max(2)
        {
            self.compact_markers(lane);
            let st = &self.state[lane];
            if !(st.seen - 1).is_multiple_of(st.stride) {
                return;
            }
        }
        self.lanes[lane].markers.push(m);
        self.markers += 1;
    }

    /// Add one batch (in offset order).
    pub(crate) fn batch(&mut self, ev: &BatchEvent) {
        self.first = Some(self.first.map_or(ev.base_offset, |f| f.min(ev.base_offset)));
        self.last = Some(self.last.map_or(ev.last_offset, |l| l.max(ev.last_offset)));
        let lane = self.lane(if ev.producer_id >= 0 {
            ev.producer_id
        } else {
            -1
        });
        if let Some((commit, coordinator_epoch)) = ev.marker() {
            self.marker(
                lane,
                Marker {
                    offset: ev.base_offset,
                    epoch: ev.producer_epoch,
                    commit,
                    coordinator_epoch,
                    timestamp: ev.marker_timestamp,
                },
            );
            if let Some(i) = self.state[lane].open.take() {
                let s = &mut self.lanes[lane].spans[i];
                if commit {
                    s.kind = SpanKind::Committed;
                    s.committed = 1;
                } else {
                    s.kind = SpanKind::Aborted;
                    s.aborted = 1;
                }
                s.last = s.last.max(ev.base_offset);
            }
            return;
        }
        if ev.is_control {
            return;
        }
        if !ev.is_transactional {
            self.push_span(lane, Span::new(ev, SpanKind::Data));
            return;
        }
        if let Some(i) = self.state[lane].open {
            let s = &mut self.lanes[lane].spans[i];
            s.last = s.last.max(ev.last_offset);
            s.batches += 1;
            s.last_timestamp = s.last_timestamp.max(ev.max_timestamp);
            s.epoch = s.epoch.max(ev.producer_epoch);
            s.min_epoch = s.min_epoch.min(ev.producer_epoch);
            return;
        }
        let i = self.push_span(lane, Span::new(ev, SpanKind::Open));
        if self.lanes[lane].spans[i].kind == SpanKind::Open {
            self.state[lane].open = Some(i);
        }
    }

    /// The timeline (`None` when no batch was seen): producers sorted by id, the shared
    /// lane last, so lanes read the same in every run.
    pub(crate) fn finish(self) -> Option<Timeline> {
        self.first?;
        let mut lanes = self.lanes;
        lanes.sort_by_key(|l| (l.merged, l.producer_id));
        Some(Timeline {
            lanes,
            first_offset: self.first,
            last_offset: self.last,
            reduced: self.reduced,
        })
    }
}

/// One partition's row of a producer's view across partitions: the producer's lane there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProducerRow {
    /// Index of the partition in the report's partitions.
    pub partition: usize,
    pub lane: Lane,
    /// The producer has no lane of its own there: `lane` is the shared lane of the
    /// producers beyond the lane limit (a timeline collected without asking for it).
    pub shared: bool,
}

/// What one producer did in every partition it wrote to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProducerTimeline {
    pub producer_id: i64,
    /// In the report's partition order.
    pub rows: Vec<ProducerRow>,
    /// Partitions it wrote to beyond the rows kept.
    pub more: usize,
}

#[cfg(all(test, feature = "testkit"))]
mod tests;

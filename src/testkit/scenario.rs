//! The scenario API: describe what producers did to a partition, get the segment files a
//! broker would hold, plus a manifest of exactly what was written.
//!
//! ```
//! use klogscan::testkit::{Batch, Codec, PartitionBuilder, Producer};
//! let dir = tempfile::tempdir().unwrap();
//! let txn = Producer::transactional(4001, 17);
//! let mut p = PartitionBuilder::new("payments", 3).start_time(1_572_948_000_000).leader_epoch(4);
//! p.append(Batch::new(Producer::PLAIN).values(["a", "b"]));
//! p.append(Batch::new(txn).records(3).codec(Codec::Lz4));
//! p.commit(txn, 7);
//! let m = p.write(dir.path()).unwrap();
//! assert_eq!(m.batches.len(), 3);
//! assert_eq!(m.batches[2].base_offset, 5);
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::encode::{
    BatchSpec, Codec, ControlKind, LegacyInner, LegacySpec, RecordSpec, control_record_raw,
    end_txn_marker, legacy_wrapper,
};
use super::files::{BrokerFiles, PartitionFileOptions, ProducerTracker};

mod faults;
mod inputs;

pub use faults::{Fault, FaultKind, Target, apply_fault};
pub use inputs::{Batch, Legacy, Producer, Rec, Seq};

/// What was written for one log entry (v2 batch or legacy entry).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct BatchInfo {
    /// v2 baseOffset; legacy: offset of the first message in the entry.
    pub base_offset: i64,
    pub last_offset: i64,
    /// Byte position in its `.log` (before faults).
    pub position: u64,
    /// Entry size in bytes.
    pub size: u64,
    /// The `.log` file holding it.
    pub file: PathBuf,
    /// Base offset of that segment.
    pub segment_base: i64,
    pub magic: u8,
    pub producer_id: i64,
    pub producer_epoch: i16,
    pub base_sequence: i32,
    pub record_count: i32,
    pub codec: Codec,
    pub transactional: bool,
    /// The control record type (markers and KRaft control batches).
    pub control: Option<ControlKind>,
    /// For COMMIT/ABORT markers.
    pub coordinator_epoch: Option<i32>,
    pub partition_leader_epoch: i32,
    pub first_timestamp: i64,
    pub max_timestamp: i64,
}

/// What [`PartitionBuilder::write`] produced.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Manifest {
    pub topic: String,
    pub partition: i32,
    /// The partition directory.
    pub dir: PathBuf,
    /// Every entry in log order.
    pub batches: Vec<BatchInfo>,
    /// `.log` files, in order, with their base offsets.
    pub segments: Vec<(i64, PathBuf)>,
    /// Next offset after the last entry.
    pub log_end_offset: i64,
    /// Every other file written (indexes, snapshots, checkpoints), sorted.
    pub other_files: Vec<PathBuf>,
}

impl Manifest {
    /// The entries of producer `pid`.
    pub fn of_producer(&self, pid: i64) -> Vec<&BatchInfo> {
        self.batches
            .iter()
            .filter(|b| b.producer_id == pid)
            .collect()
    }
}

/// One entry in the builder, kept encoded.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    pub(crate) bytes: Vec<u8>,
    pub(crate) info: BatchInfo,
}

#[derive(Debug, Clone)]
pub(crate) struct Segment {
    pub(crate) base_offset: i64,
    pub(crate) entries: Vec<Entry>,
    pub(crate) size: u64,
}

/// Builds one partition directory. See the module docs for an example.
pub struct PartitionBuilder {
    pub(crate) topic: String,
    pub(crate) partition: i32,
    next_offset: i64,
    clock: i64,
    step_ms: i64,
    leader_epoch: i32,
    segment_bytes: Option<u64>,
    roll_pending: bool,
    pub(crate) segments: Vec<Segment>,
    next_seq: BTreeMap<(i64, i16), i32>,
    faults: Vec<Fault>,
    pub(crate) files: Option<PartitionFileOptions>,
    pub(crate) tracker: ProducerTracker,
}

/// Default start time: 2019-11-05T10:00:00Z.
pub const DEFAULT_START_MS: i64 = 1_572_948_000_000;

impl PartitionBuilder {
    /// A new, empty partition starting at offset 0, leader epoch 0, at [`DEFAULT_START_MS`],
    /// with the clock advancing 1 s per batch and no size-based rolling.
    pub fn new(topic: &str, partition: i32) -> Self {
        PartitionBuilder {
            topic: topic.to_string(),
            partition,
            next_offset: 0,
            clock: DEFAULT_START_MS,
            step_ms: 1000,
            leader_epoch: 0,
            segment_bytes: None,
            roll_pending: false,
            segments: Vec::new(),
            next_seq: BTreeMap::new(),
            faults: Vec::new(),
            files: None,
            tracker: ProducerTracker::default(),
        }
    }
    /// Set the clock (ms since the epoch) for the next batch.
    pub fn start_time(mut self, ms: i64) -> Self {
        self.clock = ms;
        self
    }
    /// How far the clock moves after each batch (default 1000 ms).
    pub fn time_step(mut self, ms: i64) -> Self {
        self.step_ms = ms;
        self
    }
    /// partitionLeaderEpoch for the following batches.
    pub fn leader_epoch(mut self, e: i32) -> Self {
        self.leader_epoch = e;
        self
    }
    /// Change the leader epoch mid-log (a leader change).
    pub fn set_leader_epoch(&mut self, e: i32) -> &mut Self {
        self.leader_epoch = e;
        self
    }
    /// Start with this offset (the log start / first segment base).
    pub fn start_offset(mut self, o: i64) -> Self {
        self.next_offset = o;
        self
    }
    /// Roll to a new segment before an entry that would make the segment exceed `n` bytes.
    pub fn segment_bytes(mut self, n: u64) -> Self {
        self.segment_bytes = Some(n);
        self
    }
    /// Also write the broker's other files (indexes, snapshots, checkpoints): see
    /// [`PartitionFileOptions`].
    pub fn broker_files(mut self, opts: PartitionFileOptions) -> Self {
        self.files = Some(opts);
        self
    }
    /// Move the clock forward.
    pub fn advance_time(&mut self, ms: i64) -> &mut Self {
        self.clock += ms;
        self
    }
    /// The clock (timestamp the next batch gets by default).
    pub fn now(&self) -> i64 {
        self.clock
    }
    /// The offset the next entry gets.
    pub fn next_offset(&self) -> i64 {
        self.next_offset
    }
    /// Skip `n` offsets (as if compaction removed whole batches).
    pub fn skip_offsets(&mut self, n: i64) -> &mut Self {
        self.next_offset += n;
        self
    }
    /// Start a new segment at the next entry.
    pub fn roll(&mut self) -> &mut Self {
        self.roll_pending = true;
        self
    }
    /// Damage a file after writing.
    pub fn fault(&mut self, target: Target, kind: FaultKind) -> &mut Self {
        self.faults.push(Fault { target, kind });
        self
    }

    fn take_time(&mut self, explicit: Option<i64>) -> i64 {
        let ts = explicit.unwrap_or(self.clock);
        self.clock = ts + self.step_ms;
        ts
    }

    fn push(&mut self, bytes: Vec<u8>, mut info: BatchInfo, spec: Option<&BatchSpec>) -> usize {
        let size = bytes.len() as u64;
        let need_new = match self.segments.last() {
            None => true,
            Some(s) => {
                self.roll_pending
                    || (!s.entries.is_empty()
                        && self.segment_bytes.is_some_and(|max| s.size + size > max))
            }
        };
        if need_new {
            let base = if self.segments.is_empty() {
                self.next_offset.min(info.base_offset)
            } else {
                info.base_offset
            };
            if !self.segments.is_empty() {
                self.tracker.on_roll(base);
            }
            self.segments.push(Segment {
                base_offset: base,
                entries: Vec::new(),
                size: 0,
            });
            self.roll_pending = false;
        }
        let idx = self.segments.len() - 1;
        let seg = &mut self.segments[idx];
        info.position = seg.size;
        info.segment_base = seg.base_offset;
        seg.size += size;
        self.next_offset = self.next_offset.max(info.last_offset + 1);
        if let Some(spec) = spec {
            self.tracker.on_batch(spec, &info, idx);
        }
        seg.entries.push(Entry { bytes, info });
        self.manifest_len() - 1
    }

    fn manifest_len(&self) -> usize {
        self.segments.iter().map(|s| s.entries.len()).sum()
    }

    /// Append a v2 data batch; returns its index in the manifest.
    pub fn append(&mut self, b: Batch) -> usize {
        let ts = self.take_time(b.timestamp);
        // records' timestamps may run past the batch timestamp
        let p = b.producer;
        let n = b.records.len() as i32;
        let records: Vec<RecordSpec> = b
            .records
            .iter()
            .enumerate()
            .map(|(i, r)| RecordSpec {
                attributes: 0,
                timestamp_delta: r.timestamp.map_or(i as i64, |t| t - ts),
                offset_delta: r.offset_delta.unwrap_or(i as i32),
                key: r.key.clone(),
                value: r.value.clone(),
                headers: r.headers.clone(),
            })
            .collect();
        let base_sequence = if p.id < 0 {
            -1
        } else {
            let next = self.next_seq.entry((p.id, p.epoch)).or_insert(0);
            let base = match b.seq {
                Seq::Auto => *next,
                Seq::Explicit(s) => s,
            };
            let last_delta = records.iter().map(|r| r.offset_delta).max().unwrap_or(0);
            *next = seq_add(base, last_delta.max(n - 1) + 1);
            base
        };
        let mut spec = BatchSpec {
            base_offset: self.next_offset,
            partition_leader_epoch: b.leader_epoch.unwrap_or(self.leader_epoch),
            codec: b.codec,
            log_append_time: b.log_append_time,
            transactional: p.transactional,
            control: false,
            delete_horizon: false,
            base_timestamp: ts,
            producer_id: p.id,
            producer_epoch: p.epoch,
            base_sequence,
            records,
            overrides: Default::default(),
        };
        if let Some(t) = &b.tweak {
            t(&mut spec);
        }
        if let Some(last) = spec.records.iter().map(|r| ts + r.timestamp_delta).max() {
            self.clock = self.clock.max(last + self.step_ms);
        }
        self.push_spec(spec, None)
    }

    /// Append any v2 batch exactly as given (its base offset included); returns its index.
    pub fn append_spec(&mut self, spec: BatchSpec) -> usize {
        self.push_spec(spec, None)
    }

    fn push_spec(&mut self, spec: BatchSpec, coordinator_epoch: Option<i32>) -> usize {
        let bytes = spec.encode();
        let control = if spec.control {
            spec.records.first().and_then(|r| {
                let k = r.key.as_ref()?;
                (k.len() >= 4).then(|| i16::from_be_bytes([k[2], k[3]]))
            })
        } else {
            None
        }
        .and_then(control_kind_from_id);
        let info = BatchInfo {
            base_offset: spec.base_offset,
            last_offset: spec.last_offset(),
            position: 0,
            size: bytes.len() as u64,
            file: PathBuf::new(),
            segment_base: 0,
            magic: spec.overrides.magic.unwrap_or(2) as u8,
            producer_id: spec.producer_id,
            producer_epoch: spec.producer_epoch,
            base_sequence: spec.base_sequence,
            record_count: spec.records_count(),
            codec: spec.codec,
            transactional: spec.transactional,
            control,
            coordinator_epoch,
            partition_leader_epoch: spec.partition_leader_epoch,
            first_timestamp: spec.base_timestamp,
            max_timestamp: spec.max_timestamp(),
        };
        self.push(bytes, info, Some(&spec))
    }

    /// Append a COMMIT (`commit`) or ABORT marker for `producer` at `producer.epoch`.
    pub fn end_txn(&mut self, producer: Producer, commit: bool, coordinator_epoch: i32) -> usize {
        let ts = self.take_time(None);
        let spec = end_txn_marker(
            self.next_offset,
            producer.id,
            producer.epoch,
            commit,
            coordinator_epoch,
            ts,
            self.leader_epoch,
        );
        // A marker bumps nothing in the data sequence, but a marker at a new epoch means
        // the next data batch at that epoch starts at 0 (the auto sequence does that).
        self.push_spec(spec, Some(coordinator_epoch))
    }
    /// Append a COMMIT marker.
    pub fn commit(&mut self, producer: Producer, coordinator_epoch: i32) -> usize {
        self.end_txn(producer, true, coordinator_epoch)
    }
    /// Append an ABORT marker.
    pub fn abort(&mut self, producer: Producer, coordinator_epoch: i32) -> usize {
        self.end_txn(producer, false, coordinator_epoch)
    }
    /// Append a control batch with a raw control record (KRaft types, unknown types).
    pub fn control_raw(
        &mut self,
        producer: Producer,
        type_id: i16,
        value: Option<Vec<u8>>,
    ) -> usize {
        let ts = self.take_time(None);
        let spec = BatchSpec {
            base_offset: self.next_offset,
            partition_leader_epoch: self.leader_epoch,
            transactional: producer.transactional,
            control: true,
            base_timestamp: ts,
            producer_id: producer.id,
            producer_epoch: producer.epoch,
            records: vec![control_record_raw(type_id, value)],
            ..BatchSpec::default()
        };
        self.push_spec(spec, None)
    }

    /// Append legacy messages: one entry per message when uncompressed, one wrapper when
    /// compressed. Returns the index of the last entry.
    pub fn legacy(&mut self, l: Legacy) -> usize {
        let ts0 = self.take_time(l.timestamp);
        let first = self.next_offset;
        let ts = |i: usize| if l.magic == 0 { -1 } else { ts0 + i as i64 };
        let mut last = 0;
        let specs: Vec<LegacySpec> = if l.codec == Codec::None {
            l.records
                .iter()
                .enumerate()
                .map(|(i, (k, v))| LegacySpec {
                    offset: first + i as i64,
                    magic: l.magic,
                    attributes: 0,
                    timestamp: ts(i),
                    key: k.clone(),
                    value: v.clone(),
                    crc: None,
                })
                .collect()
        } else {
            let inner: Vec<LegacyInner> = l
                .records
                .iter()
                .enumerate()
                .map(|(i, (k, v))| LegacyInner {
                    timestamp: ts(i),
                    key: k.clone(),
                    value: v.clone(),
                })
                .collect();
            vec![legacy_wrapper(l.magic, l.codec, first, &inner, None)]
        };
        let per_entry = if l.codec == Codec::None {
            1
        } else {
            l.records.len() as i64
        };
        for s in specs {
            let bytes = s.encode();
            let info = BatchInfo {
                base_offset: s.offset - per_entry + 1,
                last_offset: s.offset,
                position: 0,
                size: bytes.len() as u64,
                file: PathBuf::new(),
                segment_base: 0,
                magic: l.magic,
                producer_id: -1,
                producer_epoch: -1,
                base_sequence: -1,
                record_count: per_entry as i32,
                codec: l.codec,
                transactional: false,
                control: None,
                coordinator_epoch: None,
                partition_leader_epoch: -1,
                first_timestamp: if l.magic == 0 { -1 } else { s.timestamp },
                max_timestamp: if l.magic == 0 { -1 } else { s.timestamp },
            };
            last = self.push(bytes, info, None);
        }
        if l.magic == 1 && l.records.len() > 1 {
            self.clock = self
                .clock
                .max(ts0 + l.records.len() as i64 - 1 + self.step_ms);
        }
        last
    }

    /// Append raw bytes as an entry (already framed by the caller), for odd cases.
    pub fn append_raw(&mut self, bytes: Vec<u8>, info_template: BatchInfo) -> usize {
        self.push(bytes, info_template, None)
    }

    /// Write `<dir>/<topic>-<partition>/` and return the manifest. With
    /// [`PartitionBuilder::broker_files`], the indexes, snapshots and partition-level
    /// checkpoints are written too. Faults are applied last.
    pub fn write(&self, dir: &Path) -> std::io::Result<Manifest> {
        let pdir = dir.join(format!("{}-{}", self.topic, self.partition));
        std::fs::create_dir_all(&pdir)?;
        let mut batches = Vec::new();
        let mut segments = Vec::new();
        for s in &self.segments {
            let path = pdir.join(format!("{:020}.log", s.base_offset));
            let mut data = Vec::with_capacity(s.size as usize);
            for e in &s.entries {
                data.extend_from_slice(&e.bytes);
                let mut info = e.info.clone();
                info.file = path.clone();
                batches.push(info);
            }
            std::fs::write(&path, &data)?;
            segments.push((s.base_offset, path));
        }
        let log_end_offset = self.log_end_offset();
        let mut other_files = Vec::new();
        if let Some(opts) = &self.files {
            other_files = BrokerFiles::new(self, opts).write(&pdir)?;
        }
        for f in &self.faults {
            let path = match &f.target {
                Target::Log(i) => segments
                    .get(*i)
                    .map(|s| s.1.clone())
                    .ok_or_else(|| std::io::Error::other("fault: no such segment"))?,
                Target::LastLog => segments
                    .last()
                    .map(|s| s.1.clone())
                    .ok_or_else(|| std::io::Error::other("fault: no segment"))?,
                Target::File(name) => pdir.join(name),
            };
            apply_fault(&path, &f.kind)?;
        }
        other_files.sort();
        Ok(Manifest {
            topic: self.topic.clone(),
            partition: self.partition,
            dir: pdir,
            batches,
            segments,
            log_end_offset,
            other_files,
        })
    }

    /// Next offset after the last entry written so far.
    pub fn log_end_offset(&self) -> i64 {
        self.segments
            .iter()
            .flat_map(|s| s.entries.last())
            .map(|e| e.info.last_offset + 1)
            .next_back()
            .unwrap_or(self.next_offset)
    }
}

fn control_kind_from_id(id: i16) -> Option<ControlKind> {
    Some(match id {
        0 => ControlKind::Abort,
        1 => ControlKind::Commit,
        2 => ControlKind::LeaderChange,
        3 => ControlKind::SnapshotHeader,
        4 => ControlKind::SnapshotFooter,
        5 => ControlKind::KraftVersion,
        6 => ControlKind::KraftVoters,
        _ => return None,
    })
}

/// Kafka's sequence increment (wraps past `i32::MAX` to 0).
pub fn seq_add(base: i32, delta: i32) -> i32 {
    if base < 0 {
        -1
    } else if base > i32::MAX - delta {
        delta - (i32::MAX - base) - 1
    } else {
        base + delta
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequences_auto_explicit_and_per_epoch() {
        let dir = tempfile::tempdir().unwrap();
        let p1 = Producer::idempotent(10, 0);
        let mut p = PartitionBuilder::new("s", 0);
        p.append(Batch::new(p1).records(3)); // 0..2
        p.append(Batch::new(p1).records(2)); // 3..4
        p.append(Batch::new(p1).records(2).sequence(3)); // duplicate range 3..4
        p.append(Batch::new(p1).records(1).sequence(9)); // gap
        p.append(Batch::new(p1).records(1)); // continues at 10
        p.append(Batch::new(p1.bumped()).records(1)); // new epoch: 0
        p.append(Batch::new(p1).records(2).sequence(i32::MAX)); // wraps
        p.append(Batch::new(p1).records(1)); // 1
        p.skip_offsets(5);
        let t = p.now();
        p.append(
            Batch::new(Producer::PLAIN)
                .records(1)
                .delete_horizon(DEFAULT_START_MS + 99),
        );
        let m = p.write(dir.path()).unwrap();
        let seqs: Vec<(i16, i32)> = m
            .batches
            .iter()
            .map(|b| (b.producer_epoch, b.base_sequence))
            .collect();
        assert_eq!(
            seqs,
            vec![
                (0, 0),
                (0, 3),
                (0, 3),
                (0, 9),
                (0, 10),
                (1, 0),
                (0, i32::MAX),
                (0, 1),
                (-1, -1)
            ]
        );
        let last = m.batches.last().unwrap();
        assert_eq!(last.base_offset, m.batches[7].last_offset + 6);
        assert_eq!(last.first_timestamp, DEFAULT_START_MS + 99);
        // the record keeps its own timestamp; only baseTimestamp holds the horizon
        assert_eq!(last.max_timestamp, t);
    }
}

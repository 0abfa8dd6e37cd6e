//! Tiered storage scenarios: `__remote_log_metadata` records (an encoder of their own,
//! sharing nothing with the reader in `crate::read::format`), the 3.6–3.7
//! `remote_log_snapshot` file, and [`TieredLog`], which writes a whole tiered partition:
//! the broker's log dir (the user partition's local segments, its checkpoints, a
//! `__remote_log_metadata` partition) and the remote segments in Kafka's
//! `LocalTieredStorage` layout.
//!
//! A segment is copied as `RemoteLogManager.copyLogSegment` does it (COPY_SEGMENT_STARTED
//! with the segment's offsets, epochs and size, then COPY_SEGMENT_FINISHED) and deleted as
//! `RemoteLogManager.deleteRemoteLogSegment` does (DELETE_SEGMENT_STARTED, the objects
//! removed, DELETE_SEGMENT_FINISHED).

use super::files::{LogDirBuilder, topic_id_for, uuid_text};
use super::scenario::{Batch, PartitionBuilder, Producer, Rec};
use std::path::{Path, PathBuf};

/// `RemoteLogSegmentState` ids.
pub const COPY_SEGMENT_STARTED: i8 = 0;
pub const COPY_SEGMENT_FINISHED: i8 = 1;
pub const DELETE_SEGMENT_STARTED: i8 = 2;
pub const DELETE_SEGMENT_FINISHED: i8 = 3;
/// `RemotePartitionDeleteState` ids.
pub const DELETE_PARTITION_MARKED: i8 = 0;
pub const DELETE_PARTITION_STARTED: i8 = 1;
pub const DELETE_PARTITION_FINISHED: i8 = 2;

/// One remote segment's identity and content description.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteSegment {
    pub topic: String,
    pub topic_id: [u8; 16],
    pub partition: i32,
    pub id: [u8; 16],
    pub start_offset: i64,
    pub end_offset: i64,
    pub max_timestamp_ms: i64,
    /// `(epoch, first offset)` of the epochs in the segment.
    pub leader_epochs: Vec<(i32, i64)>,
    pub size: i32,
    pub custom_metadata: Option<Vec<u8>>,
    /// Write the 4.0+ tag 0 (`TxnIndexEmpty`) with this value.
    pub txn_index_empty: Option<bool>,
}

fn uvarint(out: &mut Vec<u8>, mut v: u32) {
    while v >= 0x80 {
        out.push((v as u8 & 0x7f) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn compact_bytes(out: &mut Vec<u8>, b: Option<&[u8]>) {
    match b {
        None => uvarint(out, 0),
        Some(b) => {
            uvarint(out, b.len() as u32 + 1);
            out.extend_from_slice(b);
        }
    }
}

fn frame(api_key: u32) -> Vec<u8> {
    let mut out = Vec::new();
    uvarint(&mut out, 1); // frame version
    uvarint(&mut out, api_key);
    uvarint(&mut out, 0); // version
    out
}

fn topic_id_partition(out: &mut Vec<u8>, topic: &str, topic_id: &[u8; 16], partition: i32) {
    compact_bytes(out, Some(topic.as_bytes()));
    out.extend_from_slice(topic_id);
    out.extend_from_slice(&partition.to_be_bytes());
    uvarint(out, 0);
}

fn segment_body(out: &mut Vec<u8>, s: &RemoteSegment, broker: i32, event_ts: i64, state: i8) {
    out.extend_from_slice(&s.start_offset.to_be_bytes());
    out.extend_from_slice(&s.end_offset.to_be_bytes());
    out.extend_from_slice(&broker.to_be_bytes());
    out.extend_from_slice(&s.max_timestamp_ms.to_be_bytes());
    out.extend_from_slice(&event_ts.to_be_bytes());
    uvarint(out, s.leader_epochs.len() as u32 + 1);
    for (e, o) in &s.leader_epochs {
        out.extend_from_slice(&e.to_be_bytes());
        out.extend_from_slice(&o.to_be_bytes());
        uvarint(out, 0);
    }
    out.extend_from_slice(&s.size.to_be_bytes());
    compact_bytes(out, s.custom_metadata.as_deref());
    out.push(state as u8);
    match s.txn_index_empty {
        None => uvarint(out, 0),
        Some(b) => {
            uvarint(out, 1);
            uvarint(out, 0);
            uvarint(out, 1);
            out.push(b as u8);
        }
    }
}

/// A `RemoteLogSegmentMetadataRecord` (api key 0) value.
pub fn encode_segment_metadata(
    s: &RemoteSegment,
    broker: i32,
    event_ts: i64,
    state: i8,
) -> Vec<u8> {
    let mut out = frame(0);
    topic_id_partition(&mut out, &s.topic, &s.topic_id, s.partition);
    out.extend_from_slice(&s.id);
    uvarint(&mut out, 0);
    segment_body(&mut out, s, broker, event_ts, state);
    out
}

/// A `RemoteLogSegmentMetadataUpdateRecord` (api key 1) value.
pub fn encode_segment_update(
    s: &RemoteSegment,
    broker: i32,
    event_ts: i64,
    custom_metadata: Option<&[u8]>,
    state: i8,
) -> Vec<u8> {
    let mut out = frame(1);
    topic_id_partition(&mut out, &s.topic, &s.topic_id, s.partition);
    out.extend_from_slice(&s.id);
    uvarint(&mut out, 0);
    out.extend_from_slice(&broker.to_be_bytes());
    out.extend_from_slice(&event_ts.to_be_bytes());
    compact_bytes(&mut out, custom_metadata);
    out.push(state as u8);
    uvarint(&mut out, 0);
    out
}

/// A `RemotePartitionDeleteMetadataRecord` (api key 2) value.
pub fn encode_partition_delete(
    topic: &str,
    topic_id: &[u8; 16],
    partition: i32,
    broker: i32,
    event_ts: i64,
    state: i8,
) -> Vec<u8> {
    let mut out = frame(2);
    topic_id_partition(&mut out, topic, topic_id, partition);
    out.extend_from_slice(&broker.to_be_bytes());
    out.extend_from_slice(&event_ts.to_be_bytes());
    out.push(state as u8);
    uvarint(&mut out, 0);
    out
}

/// A `RemoteLogSegmentMetadataSnapshotRecord` (api key 3) value.
pub fn encode_segment_snapshot(
    s: &RemoteSegment,
    broker: i32,
    event_ts: i64,
    state: i8,
) -> Vec<u8> {
    let mut out = frame(3);
    out.extend_from_slice(&s.id);
    segment_body(&mut out, s, broker, event_ts, state);
    out
}

/// A `remote_log_snapshot` file (Kafka 3.6–3.7): header, then each entry length-prefixed.
pub fn encode_remote_log_snapshot(
    metadata_partition: i32,
    offset: i64,
    entries: &[Vec<u8>],
) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(&0i16.to_be_bytes());
    out.extend_from_slice(&metadata_partition.to_be_bytes());
    out.extend_from_slice(&offset.to_be_bytes());
    out.extend_from_slice(&(entries.len() as i32).to_be_bytes());
    for e in entries {
        out.extend_from_slice(&(e.len() as i32).to_be_bytes());
        out.extend_from_slice(e);
    }
    out
}

/// A deterministic segment uuid (never all zero).
pub fn segment_uuid(n: u32) -> [u8; 16] {
    let mut id = [0x5e; 16];
    id[12..].copy_from_slice(&n.to_be_bytes());
    id
}

/// What [`TieredLog::write`] produced.
#[derive(Debug, Clone)]
pub struct TieredManifest {
    /// The broker's log dir.
    pub log_dir: PathBuf,
    /// The user partition's directory in it.
    pub partition_dir: PathBuf,
    /// The `__remote_log_metadata` partition directory.
    pub metadata_dir: PathBuf,
    /// The `LocalTieredStorage` root given to the broker (holds `kafka-tiered-storage/`).
    pub remote_root: PathBuf,
    /// The user partition's directory under the remote root.
    pub remote_partition_dir: PathBuf,
    /// Every remote segment created, in creation order.
    pub segments: Vec<RemoteSegment>,
    pub log_start_offset: i64,
    pub local_log_start_offset: i64,
}

#[derive(Debug, Clone)]
enum Objects {
    /// Copy the local segment's files.
    Segment(usize),
    /// Nothing in the remote storage.
    Removed,
}

/// A tiered partition: the whole history built with a [`PartitionBuilder`] (one segment
/// per `roll`), then copies and deletes of its segments, local retention and the log
/// start offset.
pub struct TieredLog {
    history: PartitionBuilder,
    topic_id: [u8; 16],
    broker: i32,
    metadata_partition: i32,
    clock: i64,
    next_id: u32,
    events: Vec<Vec<u8>>,
    segments: Vec<(RemoteSegment, Objects)>,
    local_from: usize,
    log_start: Option<i64>,
    lineage: Option<Vec<(i32, i64)>>,
    /// Each remote segment's latest state and its event's time and broker.
    states: Vec<(i8, i64, i32)>,
    /// Write a `remote_log_snapshot` file; `true`: keep the metadata partition too.
    snapshot: Option<bool>,
}

impl TieredLog {
    /// A tiered partition over `history`; broker 0, metadata partition 0.
    pub fn new(history: PartitionBuilder) -> Self {
        let topic_id = topic_id_for(&history.topic);
        TieredLog {
            history,
            topic_id,
            broker: 0,
            metadata_partition: 0,
            clock: super::scenario::DEFAULT_START_MS + 86_400_000,
            next_id: 1,
            events: Vec::new(),
            segments: Vec::new(),
            local_from: 0,
            log_start: None,
            lineage: None,
            states: Vec::new(),
            snapshot: None,
        }
    }

    /// The `__remote_log_metadata` partition the events go to.
    pub fn metadata_partition(mut self, p: i32) -> Self {
        self.metadata_partition = p;
        self
    }

    /// The broker that writes the following events.
    pub fn broker(&mut self, b: i32) -> &mut Self {
        self.broker = b;
        self
    }

    /// `(base, last offset, epochs)` of local segment `i` of the history.
    pub fn segment_range(&self, i: usize) -> (i64, i64, Vec<(i32, i64)>) {
        let s = &self.history.segments[i];
        let last = s
            .entries
            .last()
            .map_or(s.base_offset - 1, |e| e.info.last_offset);
        let mut epochs: Vec<(i32, i64)> = Vec::new();
        for e in &s.entries {
            let ep = e.info.partition_leader_epoch;
            if epochs.last().is_none_or(|l| l.0 != ep) {
                epochs.push((ep, e.info.base_offset));
            }
        }
        (s.base_offset, last, epochs)
    }

    fn tick(&mut self) -> i64 {
        self.clock += 1000;
        self.clock
    }

    /// The remote segment for local segment `i` (not yet copied).
    pub fn remote_segment(&mut self, i: usize) -> RemoteSegment {
        let (start, end, epochs) = self.segment_range(i);
        let s = &self.history.segments[i];
        let max_ts = s
            .entries
            .iter()
            .map(|e| e.info.max_timestamp)
            .max()
            .unwrap_or(-1);
        let id = segment_uuid(self.next_id);
        self.next_id += 1;
        RemoteSegment {
            topic: self.history.topic.clone(),
            topic_id: self.topic_id,
            partition: self.history.partition,
            id,
            start_offset: start,
            end_offset: end,
            max_timestamp_ms: max_ts,
            leader_epochs: epochs,
            size: s.size as i32,
            custom_metadata: None,
            txn_index_empty: None,
        }
    }

    /// COPY_SEGMENT_STARTED for local segment `i` (its objects are written): returns the
    /// remote segment's index.
    pub fn copy_started(&mut self, i: usize) -> usize {
        let seg = self.remote_segment(i);
        self.copy_started_as(seg, i)
    }

    /// COPY_SEGMENT_STARTED for `seg`, whose objects are local segment `i`'s files.
    pub fn copy_started_as(&mut self, seg: RemoteSegment, i: usize) -> usize {
        let ts = self.tick();
        self.events.push(encode_segment_metadata(
            &seg,
            self.broker,
            ts,
            COPY_SEGMENT_STARTED,
        ));
        self.segments.push((seg, Objects::Segment(i)));
        self.states.push((COPY_SEGMENT_STARTED, ts, self.broker));
        self.segments.len() - 1
    }

    /// COPY_SEGMENT_FINISHED for remote segment `r`.
    pub fn copy_finished(&mut self, r: usize) -> &mut Self {
        self.update(r, COPY_SEGMENT_FINISHED)
    }

    /// Copy local segment `i` (started and finished): returns the remote segment's index.
    pub fn copy(&mut self, i: usize) -> usize {
        let r = self.copy_started(i);
        self.copy_finished(r);
        r
    }

    /// Copy local segment `i`, its COPY_SEGMENT_FINISHED carrying `custom_metadata` (what
    /// `RemoteStorageManager.copyLogSegmentData` returned): returns the remote segment.
    pub fn copy_with_custom_metadata(&mut self, i: usize, custom_metadata: &[u8]) -> usize {
        let r = self.copy_started(i);
        let ts = self.tick();
        let seg = &self.segments[r].0;
        self.events.push(encode_segment_update(
            seg,
            self.broker,
            ts,
            Some(custom_metadata),
            COPY_SEGMENT_FINISHED,
        ));
        self.states[r] = (COPY_SEGMENT_FINISHED, ts, self.broker);
        r
    }

    /// A state update for remote segment `r`.
    pub fn update(&mut self, r: usize, state: i8) -> &mut Self {
        let ts = self.tick();
        let seg = &self.segments[r].0;
        self.events
            .push(encode_segment_update(seg, self.broker, ts, None, state));
        self.states[r] = (state, ts, self.broker);
        self
    }

    /// DELETE_SEGMENT_STARTED for remote segment `r` (objects kept).
    pub fn delete_started(&mut self, r: usize) -> &mut Self {
        self.update(r, DELETE_SEGMENT_STARTED)
    }

    /// Delete remote segment `r` (started, objects removed, finished).
    pub fn delete(&mut self, r: usize) -> &mut Self {
        self.delete_started(r);
        self.segments[r].1 = Objects::Removed;
        self.update(r, DELETE_SEGMENT_FINISHED)
    }

    /// Remove remote segment `r`'s objects without any event (lost objects).
    pub fn lose_objects(&mut self, r: usize) -> &mut Self {
        self.segments[r].1 = Objects::Removed;
        self
    }

    /// A partition delete event.
    pub fn partition_delete(&mut self, state: i8) -> &mut Self {
        let ts = self.tick();
        self.events.push(encode_partition_delete(
            &self.history.topic,
            &self.topic_id,
            self.history.partition,
            self.broker,
            ts,
            state,
        ));
        self
    }

    /// Any raw metadata value (a damaged record, another partition's event).
    pub fn raw_event(&mut self, value: Vec<u8>) -> &mut Self {
        self.events.push(value);
        self
    }

    /// Local retention: the local log starts at segment `i`.
    pub fn local_from(&mut self, i: usize) -> &mut Self {
        self.local_from = i;
        self
    }

    /// The checkpointed log start offset (default: the lowest start of the remote
    /// segments not deleted, else the local log start).
    pub fn log_start(&mut self, o: i64) -> &mut Self {
        self.log_start = Some(o);
        self
    }

    /// The leader-epoch lineage written to `leader-epoch-checkpoint` (default: the
    /// history's epochs, truncated at the log start as `LeaderEpochFileCache.truncateFromStart`
    /// does).
    pub fn lineage(&mut self, epochs: &[(i32, i64)]) -> &mut Self {
        self.lineage = Some(epochs.to_vec());
        self
    }

    /// Also write the user partition's 3.6–3.7 `remote_log_snapshot` (every segment not
    /// DELETE_SEGMENT_FINISHED in its latest state, taken after the last event); without
    /// `keep_topic` the `__remote_log_metadata` partition is not written.
    pub fn remote_log_snapshot(&mut self, keep_topic: bool) -> &mut Self {
        self.snapshot = Some(keep_topic);
        self
    }

    /// The file as `FileBasedRemoteLogMetadataCache.flushToFile` writes it: it walks the
    /// cache's epoch entries, so a segment is listed once per leader epoch it spans.
    fn snapshot_bytes(&self) -> Vec<u8> {
        let entries: Vec<Vec<u8>> = self
            .segments
            .iter()
            .zip(&self.states)
            .filter(|(_, (state, ..))| *state != DELETE_SEGMENT_FINISHED)
            .flat_map(|((seg, _), &(state, ts, broker))| {
                let e = encode_segment_snapshot(seg, broker, ts, state);
                std::iter::repeat_n(e, seg.leader_epochs.len().max(1))
            })
            .collect();
        let last = self.events.len() as i64 - 1;
        encode_remote_log_snapshot(self.metadata_partition, last, &entries)
    }

    fn history_epochs(&self) -> Vec<(i32, i64)> {
        let mut out: Vec<(i32, i64)> = Vec::new();
        for s in &self.history.segments {
            for e in &s.entries {
                let ep = e.info.partition_leader_epoch;
                if out.last().is_none_or(|l| l.0 != ep) {
                    out.push((ep, e.info.base_offset));
                }
            }
        }
        out
    }

    /// Write `<dir>/broker-<id>/` and `<dir>/remote/`.
    pub fn write(self, dir: &Path) -> std::io::Result<TieredManifest> {
        let deleted: std::collections::BTreeSet<usize> = self.deleted_segments();
        let local_start = self.history.segments[self.local_from].base_offset;
        let log_start = self.log_start.unwrap_or_else(|| {
            self.segments
                .iter()
                .enumerate()
                .filter(|(r, _)| !deleted.contains(r))
                .map(|(_, (s, _))| s.start_offset)
                .min()
                .unwrap_or(local_start)
                .min(local_start)
        });
        let lineage = self
            .lineage
            .clone()
            .unwrap_or_else(|| truncate_from_start(&self.history_epochs(), log_start));
        let topic = self.history.topic.clone();
        let partition = self.history.partition;
        let ranges: Vec<(i64, i64)> = (0..self.history.segments.len())
            .map(|i| {
                let r = self.segment_range(i);
                (r.0, r.1)
            })
            .collect();
        let mut meta = PartitionBuilder::new("__remote_log_metadata", self.metadata_partition);
        for v in &self.events {
            meta.append(Batch::new(Producer::PLAIN).record(Rec {
                value: Some(v.clone()),
                ..Rec::default()
            }));
        }
        let log_dir = dir.join(format!("broker-{}", self.broker));
        let snapshot = self.snapshot.map(|keep| (keep, self.snapshot_bytes()));
        let metadata_name = format!("__remote_log_metadata-{}", self.metadata_partition);
        let mut b = LogDirBuilder::new(self.broker).partition(self.history);
        if snapshot.as_ref().is_none_or(|s| s.0) {
            b = b.partition(meta);
        }
        let m = b
            .log_start_offset(&topic, partition, log_start)
            .write(&log_dir)?;
        let partition_dir = m.partitions[0].dir.clone();
        let metadata_dir = log_dir.join(metadata_name);
        if let Some((_, bytes)) = &snapshot {
            std::fs::write(partition_dir.join("remote_log_snapshot"), bytes)?;
        }
        let remote_root = dir.join("remote");
        let remote_partition_dir = remote_root
            .join("kafka-tiered-storage")
            .join(format!("{topic}-{partition}-{}", uuid_text(&self.topic_id)));
        std::fs::create_dir_all(&remote_partition_dir)?;
        for (seg, objects) in &self.segments {
            if let Objects::Segment(i) = objects {
                write_remote_objects(&partition_dir, &remote_partition_dir, ranges[*i].0, seg)?;
            }
        }
        // Local retention: what Kafka deletes below the local log start.
        for (base, _) in ranges.iter().take(self.local_from) {
            for ext in ["log", "index", "timeindex", "txnindex", "snapshot"] {
                let f = partition_dir.join(format!("{base:020}.{ext}"));
                if f.exists() {
                    std::fs::remove_file(f)?;
                }
            }
        }
        let mut lec = format!("0\n{}\n", lineage.len());
        for (e, o) in &lineage {
            lec.push_str(&format!("{e} {o}\n"));
        }
        std::fs::write(partition_dir.join("leader-epoch-checkpoint"), lec)?;
        Ok(TieredManifest {
            log_dir,
            partition_dir,
            metadata_dir,
            remote_root,
            remote_partition_dir,
            segments: self.segments.into_iter().map(|s| s.0).collect(),
            log_start_offset: log_start,
            local_log_start_offset: local_start,
        })
    }

    fn deleted_segments(&self) -> std::collections::BTreeSet<usize> {
        self.segments
            .iter()
            .enumerate()
            .filter(|(_, (_, o))| matches!(o, Objects::Removed))
            .map(|(r, _)| r)
            .collect()
    }
}

/// `LeaderEpochFileCache.truncateFromStart`: entries below `start` go, the last of them
/// moved up to `start`.
pub fn truncate_from_start(epochs: &[(i32, i64)], start: i64) -> Vec<(i32, i64)> {
    let mut out: Vec<(i32, i64)> = Vec::new();
    for &(e, o) in epochs {
        if o <= start {
            out.clear();
            out.push((e, start));
        } else {
            out.push((e, o));
        }
    }
    out
}

/// The files `LocalTieredStorage.copyLogSegmentData` writes for `seg`, from the local
/// segment at `base` (its `.log`, offset and time indexes and transaction index — empty
/// indexes where it has none, no transaction index then; an empty producer snapshot; the
/// epochs as a checkpoint).
fn write_remote_objects(
    local: &Path,
    remote: &Path,
    base: i64,
    seg: &RemoteSegment,
) -> std::io::Result<()> {
    let name = |ext: &str| {
        remote.join(format!(
            "{:020}-{}{ext}",
            seg.start_offset,
            uuid_text(&seg.id)
        ))
    };
    std::fs::copy(local.join(format!("{base:020}.log")), name(".log"))?;
    for (ext, src) in [(".index", "index"), (".timeindex", "timeindex")] {
        let f = local.join(format!("{base:020}.{src}"));
        if f.exists() {
            std::fs::copy(f, name(ext))?;
        } else {
            std::fs::write(name(ext), b"")?;
        }
    }
    // The transaction index only when the local segment has one (`RemoteLogManager
    // .copyLogSegment`: `Optional.ofNullable(toPathIfExists(segment.txnIndex().file()))`).
    let txn = local.join(format!("{base:020}.txnindex"));
    if txn.exists() {
        std::fs::copy(txn, name(".txnindex"))?;
    }
    std::fs::write(name(".snapshot"), super::files::encode_snapshot(&[]))?;
    let mut lec = format!("0\n{}\n", seg.leader_epochs.len());
    for (e, o) in &seg.leader_epochs {
        lec.push_str(&format!("{e} {o}\n"));
    }
    std::fs::write(name(".leader_epoch_checkpoint"), lec)
}

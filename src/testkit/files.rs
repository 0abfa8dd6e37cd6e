//! The files a broker writes beside the segments: `.index`, `.timeindex`, `.txnindex`, `.snapshot`,
//! `leader-epoch-checkpoint`, `partition.metadata`, and for a log dir `meta.properties`,
//! the offset checkpoints and `.kafka_cleanshutdown`; plus ways to damage them.
//!
//! Files are written as after a **clean shutdown**: indexes trimmed, a final time-index
//! entry per segment, a producer snapshot at every roll and at the log end offset.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use base64::Engine as _;

use super::encode::{BatchSpec, xxh32};
use super::scenario::{BatchInfo, Manifest, PartitionBuilder, seq_add};

/// One entry of a producer snapshot (46 bytes on disk, `ProducerStateManager.writeSnapshot`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct SnapshotEntry {
    pub producer_id: i64,
    pub epoch: i16,
    pub last_sequence: i32,
    pub last_offset: i64,
    pub offset_delta: i32,
    pub timestamp: i64,
    pub coordinator_epoch: i32,
    pub current_txn_first_offset: i64,
}

/// One `.txnindex` entry (34 bytes on disk, `AbortedTxn`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct AbortedTxn {
    pub producer_id: i64,
    pub first_offset: i64,
    pub last_offset: i64,
    pub last_stable_offset: i64,
}

/// Producer state replayed as the broker does on replication/recovery (log order wins).
#[derive(Debug, Clone, Default)]
pub(crate) struct ProducerTracker {
    producers: BTreeMap<i64, SnapshotEntry>,
    /// Snapshots taken at each roll: (new segment base offset, entries sorted by pid).
    pub(crate) roll_snapshots: Vec<(i64, Vec<SnapshotEntry>)>,
    /// (segment index holding the ABORT marker, entry).
    pub(crate) aborted: Vec<(usize, AbortedTxn)>,
}

impl ProducerTracker {
    pub(crate) fn entries(&self) -> Vec<SnapshotEntry> {
        self.producers.values().copied().collect()
    }

    pub(crate) fn on_roll(&mut self, new_base: i64) {
        let e = self.entries();
        self.roll_snapshots.push((new_base, e));
    }

    pub(crate) fn on_batch(&mut self, spec: &BatchSpec, info: &BatchInfo, segment: usize) {
        if spec.producer_id < 0 {
            return;
        }
        let pid = spec.producer_id;
        let st = self.producers.entry(pid).or_insert(SnapshotEntry {
            producer_id: pid,
            epoch: -1,
            last_sequence: -1,
            last_offset: -1,
            offset_delta: 0,
            timestamp: -1,
            coordinator_epoch: -1,
            current_txn_first_offset: -1,
        });
        if st.epoch != spec.producer_epoch {
            st.last_sequence = -1;
            st.last_offset = -1;
            st.offset_delta = 0;
        }
        st.epoch = spec.producer_epoch;
        if spec.control {
            let Some(rec) = spec.records.first() else {
                return; // an empty control batch is ignored
            };
            let (Some(k), Some(v)) = (&rec.key, &rec.value) else {
                return;
            };
            if k.len() < 4 || v.len() < 6 || !matches!(k[3], 0 | 1) || k[2] != 0 {
                return;
            }
            let abort = k[3] == 0;
            st.coordinator_epoch = i32::from_be_bytes([v[2], v[3], v[4], v[5]]);
            st.timestamp = spec.base_timestamp + rec.timestamp_delta;
            let first = st.current_txn_first_offset;
            st.current_txn_first_offset = -1;
            if first >= 0 && abort {
                let lso = self
                    .producers
                    .values()
                    .filter(|p| p.producer_id != pid && p.current_txn_first_offset >= 0)
                    .map(|p| p.current_txn_first_offset)
                    .min()
                    .unwrap_or(info.base_offset + 1);
                self.aborted.push((
                    segment,
                    AbortedTxn {
                        producer_id: pid,
                        first_offset: first,
                        last_offset: info.base_offset,
                        last_stable_offset: lso,
                    },
                ));
            }
            return;
        }
        let delta = spec.last_offset_delta();
        // `DefaultRecordBatch.lastSequence`: -1 for a base of -1 only; another negative
        // base (bytes no producer writes) is incremented as any other.
        st.last_sequence = match spec.base_sequence {
            -1 => -1,
            b if b < 0 => b.wrapping_add(delta),
            b => seq_add(b, delta),
        };
        st.last_offset = info.last_offset;
        st.offset_delta = delta;
        st.timestamp = spec.max_timestamp();
        if spec.transactional && st.current_txn_first_offset < 0 {
            st.current_txn_first_offset = info.base_offset;
        }
    }
}

/// Damage to the broker files of one partition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Damage {
    /// The final snapshot (at the log end offset) holds the state of the previous roll
    /// snapshot (or no producers at all when there was no roll): it is stale.
    StaleSnapshot,
    /// Leave out entry `entry` of segment `segment`'s `.txnindex`.
    DropTxnIndexEntry { segment: usize, entry: usize },
    /// Add `delta` to the position of offset-index entry `entry` of segment `segment`.
    IndexPositionDelta {
        segment: usize,
        entry: usize,
        delta: i32,
    },
    /// Leave a copy of segment `segment`'s `.log` named `<base>.log<suffix>`
    /// (e.g. `.swap`, `.deleted`, `.cleaned`).
    Leftover { segment: usize, suffix: String },
    /// Leave out the `.index` of segment `segment`.
    MissingIndex { segment: usize },
}

/// Options for the broker files of one partition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionFileOptions {
    /// `index.interval.bytes` (default 4096).
    pub index_interval_bytes: u64,
    /// Topic UUID for `partition.metadata`; default derived from the topic name.
    pub topic_id: Option<[u8; 16]>,
    /// Write `.snapshot` files (default true).
    pub snapshots: bool,
    /// Damage to apply.
    pub damage: Vec<Damage>,
}

impl Default for PartitionFileOptions {
    fn default() -> Self {
        PartitionFileOptions {
            index_interval_bytes: 4096,
            topic_id: None,
            snapshots: true,
            damage: Vec::new(),
        }
    }
}

impl PartitionFileOptions {
    /// Add a damage.
    pub fn damage(mut self, d: Damage) -> Self {
        self.damage.push(d);
        self
    }
    /// Set `index.interval.bytes`.
    pub fn index_interval(mut self, n: u64) -> Self {
        self.index_interval_bytes = n;
        self
    }
}

/// `Uuid.METADATA_TOPIC_ID` (`AAAAAAAAAAAAAAAAAAAAAQ`): the `__cluster_metadata` topic's id.
pub const METADATA_TOPIC_ID: [u8; 16] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];

/// A deterministic topic id derived from the topic name (never the all-zero UUID).
pub fn topic_id_for(topic: &str) -> [u8; 16] {
    let mut id = [0u8; 16];
    for (i, chunk) in id.chunks_mut(4).enumerate() {
        chunk.copy_from_slice(&xxh32(topic.as_bytes(), 0x6b61_666b + i as u32).to_be_bytes());
    }
    id
}

/// Kafka's textual UUID: URL-safe base64 without padding (22 characters).
pub fn uuid_text(id: &[u8; 16]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(id)
}

/// Encode a ProducerSnapshot v1 file (`ProducerStateManager.writeSnapshot`): version, CRC-32C over bytes 6..end, entries.
pub fn encode_snapshot(entries: &[SnapshotEntry]) -> Vec<u8> {
    let mut body = (entries.len() as i32).to_be_bytes().to_vec();
    for e in entries {
        body.extend_from_slice(&e.producer_id.to_be_bytes());
        body.extend_from_slice(&e.epoch.to_be_bytes());
        body.extend_from_slice(&e.last_sequence.to_be_bytes());
        body.extend_from_slice(&e.last_offset.to_be_bytes());
        body.extend_from_slice(&e.offset_delta.to_be_bytes());
        body.extend_from_slice(&e.timestamp.to_be_bytes());
        body.extend_from_slice(&e.coordinator_epoch.to_be_bytes());
        body.extend_from_slice(&e.current_txn_first_offset.to_be_bytes());
    }
    let mut out = 1i16.to_be_bytes().to_vec();
    out.extend_from_slice(&crc32c::crc32c(&body).to_be_bytes());
    out.extend_from_slice(&body);
    out
}

/// Encode a `.txnindex` (34-byte entries).
pub fn encode_txn_index(entries: &[AbortedTxn]) -> Vec<u8> {
    let mut out = Vec::with_capacity(entries.len() * 34);
    for e in entries {
        out.extend_from_slice(&0i16.to_be_bytes());
        out.extend_from_slice(&e.producer_id.to_be_bytes());
        out.extend_from_slice(&e.first_offset.to_be_bytes());
        out.extend_from_slice(&e.last_offset.to_be_bytes());
        out.extend_from_slice(&e.last_stable_offset.to_be_bytes());
    }
    out
}

/// An offset checkpoint file (`OffsetCheckpointFile`): version 0, count, `topic partition offset` lines.
pub fn encode_offset_checkpoint(entries: &[(String, i32, i64)]) -> String {
    let mut s = format!("0\n{}\n", entries.len());
    for (t, p, o) in entries {
        s.push_str(&format!("{t} {p} {o}\n"));
    }
    s
}

/// Offset index entries: (relative offset, position).
pub type OffsetIndexEntries = Vec<(i32, i32)>;
/// Time index entries: (timestamp, relative offset).
pub type TimeIndexEntries = Vec<(i64, i32)>;

/// The offset and time index entries of one segment, as recovery rebuilds them.
/// Returns `(offset index: (relative offset, position), time index: (timestamp, relative offset))`.
pub fn segment_indexes(
    base_offset: i64,
    batches: &[&BatchInfo],
    interval: u64,
) -> (OffsetIndexEntries, TimeIndexEntries) {
    let mut idx = Vec::new();
    let mut tidx: Vec<(i64, i32)> = Vec::new();
    let mut since = 0u64;
    let mut max_ts = -1i64;
    let mut off_of_max = base_offset;
    let maybe_append = |tidx: &mut Vec<(i64, i32)>, ts: i64, off: i64| {
        let last = tidx.last().map_or(-1, |e| e.0);
        if ts > last {
            tidx.push((ts, (off - base_offset) as i32));
        }
    };
    for b in batches {
        if b.max_timestamp > max_ts {
            max_ts = b.max_timestamp;
            off_of_max = b.last_offset;
        }
        if since > interval {
            idx.push(((b.last_offset - base_offset) as i32, b.position as i32));
            maybe_append(&mut tidx, max_ts, off_of_max);
            since = 0;
        }
        since += b.size;
    }
    maybe_append(&mut tidx, max_ts, off_of_max);
    (idx, tidx)
}

/// Writer of one partition's broker files.
pub(crate) struct BrokerFiles<'a> {
    p: &'a PartitionBuilder,
    opts: &'a PartitionFileOptions,
}

impl<'a> BrokerFiles<'a> {
    pub(crate) fn new(p: &'a PartitionBuilder, opts: &'a PartitionFileOptions) -> Self {
        BrokerFiles { p, opts }
    }

    pub(crate) fn write(&self, dir: &Path) -> std::io::Result<Vec<PathBuf>> {
        let mut written = Vec::new();
        let mut put = |name: String, data: &[u8]| -> std::io::Result<()> {
            let path = dir.join(name);
            std::fs::write(&path, data)?;
            written.push(path);
            Ok(())
        };
        let damage = &self.opts.damage;
        let mut epochs: Vec<(i32, i64)> = Vec::new();
        for (si, seg) in self.p.segments.iter().enumerate() {
            let infos: Vec<&BatchInfo> = seg.entries.iter().map(|e| &e.info).collect();
            let (mut idx, tidx) =
                segment_indexes(seg.base_offset, &infos, self.opts.index_interval_bytes);
            for d in damage {
                if let Damage::IndexPositionDelta {
                    segment,
                    entry,
                    delta,
                } = d
                    && *segment == si
                    && let Some(e) = idx.get_mut(*entry)
                {
                    e.1 = e.1.wrapping_add(*delta);
                }
            }
            let name = format!("{:020}", seg.base_offset);
            if !damage.contains(&Damage::MissingIndex { segment: si }) {
                let mut b = Vec::new();
                for (o, p) in &idx {
                    b.extend_from_slice(&o.to_be_bytes());
                    b.extend_from_slice(&p.to_be_bytes());
                }
                put(format!("{name}.index"), &b)?;
            }
            let mut b = Vec::new();
            for (t, o) in &tidx {
                b.extend_from_slice(&t.to_be_bytes());
                b.extend_from_slice(&o.to_be_bytes());
            }
            put(format!("{name}.timeindex"), &b)?;
            let aborted: Vec<AbortedTxn> = self
                .p
                .tracker
                .aborted
                .iter()
                .filter(|(s, _)| *s == si)
                .enumerate()
                .filter(|(i, _)| {
                    !damage.contains(&Damage::DropTxnIndexEntry {
                        segment: si,
                        entry: *i,
                    })
                })
                .map(|(_, (_, a))| *a)
                .collect();
            if !aborted.is_empty() {
                put(format!("{name}.txnindex"), &encode_txn_index(&aborted))?;
            }
            for d in damage {
                if let Damage::Leftover { segment, suffix } = d
                    && *segment == si
                {
                    let data: Vec<u8> = seg.entries.iter().flat_map(|e| e.bytes.clone()).collect();
                    put(format!("{name}.log{suffix}"), &data)?;
                }
            }
            for e in &seg.entries {
                let i = &e.info;
                if i.magic >= 2
                    && i.partition_leader_epoch >= 0
                    && epochs.last().is_none_or(|l| i.partition_leader_epoch > l.0)
                {
                    epochs.push((i.partition_leader_epoch, i.base_offset));
                }
            }
        }
        if self.opts.snapshots {
            let leo = self.p.log_end_offset();
            let tr = &self.p.tracker;
            for (off, entries) in &tr.roll_snapshots {
                if *off != leo {
                    put(format!("{off:020}.snapshot"), &encode_snapshot(entries))?;
                }
            }
            let last = if damage.contains(&Damage::StaleSnapshot) {
                tr.roll_snapshots
                    .last()
                    .map(|s| s.1.clone())
                    .unwrap_or_default()
            } else {
                tr.entries()
            };
            put(format!("{leo:020}.snapshot"), &encode_snapshot(&last))?;
        }
        let mut lec = format!("0\n{}\n", epochs.len());
        for (e, o) in &epochs {
            lec.push_str(&format!("{e} {o}\n"));
        }
        put("leader-epoch-checkpoint".into(), lec.as_bytes())?;
        // The metadata log's is fixed (`Uuid.METADATA_TOPIC_ID`, which `KafkaMetadataLog`
        // opens it with); any other topic's is derived from its name.
        let id = self.opts.topic_id.unwrap_or_else(|| {
            if self.p.topic == "__cluster_metadata" {
                METADATA_TOPIC_ID
            } else {
                topic_id_for(&self.p.topic)
            }
        });
        put(
            "partition.metadata".into(),
            format!("version: 0\ntopic_id: {}", uuid_text(&id)).as_bytes(),
        )?;
        Ok(written)
    }
}

impl PartitionBuilder {
    /// The producer-state entries after everything appended so far (sorted by pid).
    pub fn producer_state(&self) -> Vec<SnapshotEntry> {
        self.tracker.entries()
    }
    /// The aborted transactions the `.txnindex` files hold, in log order.
    pub fn aborted_txns(&self) -> Vec<AbortedTxn> {
        self.tracker.aborted.iter().map(|a| a.1).collect()
    }
}

/// Builds a broker log directory holding several partitions.
pub struct LogDirBuilder {
    broker_id: i32,
    cluster_id: Option<String>,
    clean_shutdown: bool,
    date_line: String,
    partitions: Vec<PartitionBuilder>,
    high_watermarks: BTreeMap<(String, i32), i64>,
    recovery_points: BTreeMap<(String, i32), i64>,
    log_starts: BTreeMap<(String, i32), i64>,
}

/// What [`LogDirBuilder::write`] produced.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct LogDirManifest {
    pub dir: PathBuf,
    pub partitions: Vec<Manifest>,
    /// Log-dir level files written.
    pub files: Vec<PathBuf>,
}

impl LogDirBuilder {
    /// A ZooKeeper-mode (meta.properties v0) log dir of broker `broker_id`, cleanly shut
    /// down (`.kafka_cleanshutdown` present, empty, as brokers before 3.7 leave it).
    pub fn new(broker_id: i32) -> Self {
        LogDirBuilder {
            broker_id,
            cluster_id: None,
            clean_shutdown: true,
            date_line: "#Tue Nov 05 12:00:00 UTC 2019".into(),
            partitions: Vec::new(),
            high_watermarks: BTreeMap::new(),
            recovery_points: BTreeMap::new(),
            log_starts: BTreeMap::new(),
        }
    }
    /// Set `cluster.id`.
    pub fn cluster_id(mut self, id: &str) -> Self {
        self.cluster_id = Some(id.into());
        self
    }
    /// Whether `.kafka_cleanshutdown` is written.
    pub fn clean_shutdown(mut self, yes: bool) -> Self {
        self.clean_shutdown = yes;
        self
    }
    /// Add a partition (its broker files are written unless it says otherwise).
    pub fn partition(mut self, mut p: PartitionBuilder) -> Self {
        if p.files.is_none() {
            p.files = Some(PartitionFileOptions::default());
        }
        self.partitions.push(p);
        self
    }
    /// Override the high watermark in `replication-offset-checkpoint` (default: LEO).
    pub fn high_watermark(mut self, topic: &str, partition: i32, hw: i64) -> Self {
        self.high_watermarks.insert((topic.into(), partition), hw);
        self
    }

    /// Override the recovery point in `recovery-point-offset-checkpoint` (default: LEO).
    pub fn recovery_point(mut self, topic: &str, partition: i32, offset: i64) -> Self {
        self.recovery_points
            .insert((topic.into(), partition), offset);
        self
    }
    /// Add an entry to `log-start-offset-checkpoint` (by default it has none: every log
    /// starts at its first segment's base offset).
    pub fn log_start_offset(mut self, topic: &str, partition: i32, offset: i64) -> Self {
        self.log_starts.insert((topic.into(), partition), offset);
        self
    }

    /// Write the log dir into `dir` (created if needed).
    pub fn write(&self, dir: &Path) -> std::io::Result<LogDirManifest> {
        std::fs::create_dir_all(dir)?;
        let mut partitions = Vec::new();
        for p in &self.partitions {
            partitions.push(p.write(dir)?);
        }
        let mut files = Vec::new();
        let mut props = format!(
            "#\n{}\nversion=0\nbroker.id={}\n",
            self.date_line, self.broker_id
        );
        if let Some(c) = &self.cluster_id {
            props.push_str(&format!("cluster.id={c}\n"));
        }
        let mut put = |name: &str, data: &[u8]| -> std::io::Result<()> {
            let path = dir.join(name);
            std::fs::write(&path, data)?;
            files.push(path);
            Ok(())
        };
        put("meta.properties", props.as_bytes())?;
        let mut leo: Vec<(String, i32, i64)> = partitions
            .iter()
            .map(|m| (m.topic.clone(), m.partition, m.log_end_offset))
            .collect();
        leo.sort();
        let rp: Vec<(String, i32, i64)> = leo
            .iter()
            .map(|(t, p, o)| {
                let r = self
                    .recovery_points
                    .get(&(t.clone(), *p))
                    .copied()
                    .unwrap_or(*o);
                (t.clone(), *p, r)
            })
            .collect();
        put(
            "recovery-point-offset-checkpoint",
            encode_offset_checkpoint(&rp).as_bytes(),
        )?;
        let hw: Vec<(String, i32, i64)> = leo
            .iter()
            .map(|(t, p, o)| {
                let h = self
                    .high_watermarks
                    .get(&(t.clone(), *p))
                    .copied()
                    .unwrap_or(*o);
                (t.clone(), *p, h)
            })
            .collect();
        put(
            "replication-offset-checkpoint",
            encode_offset_checkpoint(&hw).as_bytes(),
        )?;
        // Only partitions whose log start is above their first segment base get an entry.
        let ls: Vec<(String, i32, i64)> = self
            .log_starts
            .iter()
            .map(|((t, p), o)| (t.clone(), *p, *o))
            .collect();
        put(
            "log-start-offset-checkpoint",
            encode_offset_checkpoint(&ls).as_bytes(),
        )?;
        if self.clean_shutdown {
            put(".kafka_cleanshutdown", b"")?;
        }
        Ok(LogDirManifest {
            dir: dir.to_path_buf(),
            partitions,
            files,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::{Batch, Producer};

    fn be_i64(b: &[u8], at: usize) -> i64 {
        i64::from_be_bytes(b[at..at + 8].try_into().unwrap())
    }
    fn be_i32(b: &[u8], at: usize) -> i32 {
        i32::from_be_bytes(b[at..at + 4].try_into().unwrap())
    }

    /// Two overlapping transactions, one aborted: the `.txnindex` entry's LSO is the other
    /// open transaction's first offset; the entry sits in the marker's segment.
    fn txn_partition(opts: PartitionFileOptions) -> PartitionBuilder {
        let a = Producer::transactional(1, 0);
        let b = Producer::transactional(2, 0);
        let mut p = PartitionBuilder::new("t", 0).broker_files(opts);
        p.append(Batch::new(a).records(2)); // 0-1, a opens at 0
        p.append(Batch::new(b).records(2)); // 2-3, b opens at 2
        p.roll();
        p.abort(a, 4); // 4: closes a → AbortedTxn(1, 0, 4, lso 2)
        p.abort(a, 4); // 5: empty transaction: nothing indexed
        p.commit(b, 4); // 6
        p.append(Batch::new(b).records(1)); // 7, b opens at 7
        p.abort(b.bumped(), 5); // 8: TV2-style marker, closes b → (2, 7, 8, 9)
        p
    }

    #[test]
    fn txnindex_entries_follow_the_aborts() {
        let dir = tempfile::tempdir().unwrap();
        let m = txn_partition(PartitionFileOptions::default())
            .write(dir.path())
            .unwrap();
        assert!(!m.dir.join("00000000000000000000.txnindex").exists());
        let t = std::fs::read(m.dir.join("00000000000000000004.txnindex")).unwrap();
        assert_eq!(t.len(), 68);
        let entry = |i: usize| {
            let e = &t[i * 34..];
            (
                i16::from_be_bytes([e[0], e[1]]),
                be_i64(e, 2),
                be_i64(e, 10),
                be_i64(e, 18),
                be_i64(e, 26),
            )
        };
        assert_eq!(entry(0), (0, 1, 0, 4, 2));
        assert_eq!(entry(1), (0, 2, 7, 8, 9));
        // damage: drop the first entry
        let dir = tempfile::tempdir().unwrap();
        let m = txn_partition(
            PartitionFileOptions::default().damage(Damage::DropTxnIndexEntry {
                segment: 1,
                entry: 0,
            }),
        )
        .write(dir.path())
        .unwrap();
        let t = std::fs::read(m.dir.join("00000000000000000004.txnindex")).unwrap();
        assert_eq!(t.len(), 34);
        assert_eq!(be_i64(&t, 2), 2);
    }

    #[test]
    fn snapshots_at_roll_and_end_with_valid_crc() {
        let dir = tempfile::tempdir().unwrap();
        let p = txn_partition(PartitionFileOptions::default());
        let m = p.write(dir.path()).unwrap();
        for (name, n) in [("00000000000000000004", 2), ("00000000000000000009", 2)] {
            let s = std::fs::read(m.dir.join(format!("{name}.snapshot"))).unwrap();
            assert_eq!(i16::from_be_bytes([s[0], s[1]]), 1);
            assert_eq!(
                u32::from_be_bytes(s[2..6].try_into().unwrap()),
                crc32c::crc32c(&s[6..])
            );
            assert_eq!(be_i32(&s, 6), n);
            assert_eq!(s.len(), 10 + 46 * n as usize);
        }
        let s = std::fs::read(m.dir.join("00000000000000000004.snapshot")).unwrap();
        // producer 1 at the roll: open transaction from offset 0, last batch 0-1
        assert_eq!(be_i64(&s, 10), 1);
        assert_eq!(be_i32(&s, 10 + 10), 1); // lastSequence
        assert_eq!(be_i64(&s, 10 + 14), 1); // lastOffset
        assert_eq!(be_i64(&s, 10 + 38), 0); // currentTxnFirstOffset
        let end = p.producer_state();
        assert_eq!(end[1].epoch, 1);
        assert_eq!(end[1].coordinator_epoch, 5);
        assert_eq!(end[1].current_txn_first_offset, -1);
        assert_eq!(
            end[1].last_sequence, -1,
            "epoch bump clears the batch metadata"
        );
        // stale snapshot damage: the end snapshot repeats the roll state
        let dir = tempfile::tempdir().unwrap();
        let m = txn_partition(PartitionFileOptions::default().damage(Damage::StaleSnapshot))
            .write(dir.path())
            .unwrap();
        let a = std::fs::read(m.dir.join("00000000000000000004.snapshot")).unwrap();
        let b = std::fs::read(m.dir.join("00000000000000000009.snapshot")).unwrap();
        assert_eq!(a, b);
    }

    #[test]
    fn offset_and_time_index_entries_every_interval() {
        let dir = tempfile::tempdir().unwrap();
        let mut p = PartitionBuilder::new("i", 0).broker_files(
            PartitionFileOptions::default()
                .index_interval(200)
                .damage(Damage::IndexPositionDelta {
                    segment: 0,
                    entry: 1,
                    delta: 3,
                })
                .damage(Damage::Leftover {
                    segment: 0,
                    suffix: ".swap".into(),
                }),
        );
        for i in 0..10 {
            // one batch goes back in time: the time index must not include it
            let b = Batch::new(Producer::PLAIN).records(3);
            p.append(if i == 6 {
                b.at(crate::testkit::scenario::DEFAULT_START_MS)
            } else {
                b
            });
        }
        let m = p.write(dir.path()).unwrap();
        let idx = std::fs::read(m.dir.join("00000000000000000000.index")).unwrap();
        let tidx = std::fs::read(m.dir.join("00000000000000000000.timeindex")).unwrap();
        let entries: Vec<(i32, i32)> = idx
            .chunks(8)
            .map(|c| (be_i32(c, 0), be_i32(c, 4)))
            .collect();
        // recompute the broker's rule from the manifest
        let mut want = Vec::new();
        let mut since = 0;
        for b in &m.batches {
            if since > 200 {
                want.push((b.last_offset as i32, b.position as i32));
                since = 0;
            }
            since += b.size;
        }
        assert!(want.len() >= 2);
        want[1].1 += 3;
        assert_eq!(entries, want);
        assert!(entries[0].1 > 0);
        let t: Vec<(i64, i32)> = tidx
            .chunks(12)
            .map(|c| (be_i64(c, 0), be_i32(c, 8)))
            .collect();
        assert!(t.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 <= w[1].1));
        // the final entry: the segment's max timestamp and the first batch that reached it
        let top = m.batches.iter().map(|b| b.max_timestamp).max().unwrap();
        let holder = m.batches.iter().find(|b| b.max_timestamp == top).unwrap();
        assert_ne!(holder.last_offset, m.batches.last().unwrap().last_offset);
        assert_eq!(*t.last().unwrap(), (top, holder.last_offset as i32));
        assert!(m.dir.join("00000000000000000000.log.swap").exists());
        assert_eq!(
            std::fs::read(m.dir.join("00000000000000000000.log.swap")).unwrap(),
            std::fs::read(&m.segments[0].1).unwrap()
        );
        let lec = std::fs::read_to_string(m.dir.join("leader-epoch-checkpoint")).unwrap();
        assert_eq!(lec, "0\n1\n0 0\n");
        let pm = std::fs::read_to_string(m.dir.join("partition.metadata")).unwrap();
        assert!(pm.starts_with("version: 0\ntopic_id: ") && !pm.ends_with('\n'));
        assert_eq!(pm.len(), "version: 0\ntopic_id: ".len() + 22);
    }

    #[test]
    fn log_dir_files() {
        let dir = tempfile::tempdir().unwrap();
        let mut a = PartitionBuilder::new("a", 1);
        a.append(Batch::new(Producer::PLAIN).records(4));
        let mut b = PartitionBuilder::new("b", 0);
        b.append(Batch::new(Producer::PLAIN).records(2));
        let m = LogDirBuilder::new(3)
            .cluster_id("AAAAAAAAAAAAAAAAAAAAAB")
            .clean_shutdown(false)
            .high_watermark("a", 1, 2)
            .partition(a)
            .partition(b)
            .write(dir.path())
            .unwrap();
        assert_eq!(m.partitions.len(), 2);
        let rd = |n: &str| std::fs::read_to_string(dir.path().join(n)).unwrap();
        assert_eq!(
            rd("recovery-point-offset-checkpoint"),
            "0\n2\na 1 4\nb 0 2\n"
        );
        assert_eq!(rd("replication-offset-checkpoint"), "0\n2\na 1 2\nb 0 2\n");
        assert_eq!(rd("log-start-offset-checkpoint"), "0\n0\n");
        assert!(rd("meta.properties").contains("broker.id=3\n"));
        assert!(!dir.path().join(".kafka_cleanshutdown").exists());
        assert!(
            dir.path()
                .join("a-1/00000000000000000004.snapshot")
                .exists()
        );
    }

    #[test]
    fn uuid_text_is_base64url_without_padding() {
        let mut id = [0u8; 16];
        id[15] = 1;
        assert_eq!(uuid_text(&id), "AAAAAAAAAAAAAAAAAAAAAQ");
    }
}

//! What the one walk of each segment keeps for the cluster checks (every `.log`
//! byte is read and CRC-checked once per command).
//!
//! The scan's walk (`scan::walk`) hands every framed entry to a `Collector` as well as
//! to its own rules; the collector keeps, per partition, only what a later cluster check
//! reads, and the partition's [`ClusterInputs`] (in
//! `PartitionReport::cluster_inputs`)
//! carry it to them:
//!
//! * `__transaction_state`: every record of every non-control v2 batch (offset, where it
//!   is, the batch's timestamp, key and value as stored) and the batches whose records do
//!   not decode — what the coordinator's model replays as `TransactionStateManager`'s
//!   load does (records read as `TransactionLog.readTxnRecordKey`/`readTxnRecordValue`
//!   read them): its view, the checks of its history, the cluster-wide transaction join.
//!   Cost: the records' key and value bytes (≈
//!   100–300 B per record) plus [`LogItem`]'s size each, up to
//!   `ScanOptions::keep_coordinator_bytes` (16 MiB) per partition (`KeepBudget`): a
//!   partition holding more keeps none ([`ClusterInputs::txn_log`] `None`), and the
//!   cluster stage reads its segments again (`stream_records`, one batch at a time).
//!   The replay cannot run in this walk: which finished transactions it keeps depends on
//!   the producer ids of the data partitions, whose walks run beside this one (see
//!   docs/architecture.md).
//! * `__consumer_offsets`: the records and COMMIT/ABORT markers of one walked segment
//!   are fed to the group coordinator's replay (`RecordSink`, run by the scan in offset
//!   order) and dropped; the partition keeps only the replay's anomalies
//!   ([`GroupAnomaly`]). Cost while walking: the decoded records of at most the two
//!   segment windows the scan holds per partition.
//! * `__remote_log_metadata`: every record, as for `__transaction_state`, what the
//!   tiered-storage replay (`cluster::tiering`) decodes.
//! * partitions with another copy of the same topic-partition among the selected inputs
//!   (replicas, `-future` dirs): one [`BatchKey`] (48 B) per batch, what the replica
//!   comparison compares. Other partitions keep none.
//!
//! Everything here is `Serialize + Deserialize` and versioned ([`FORMAT_VERSION`]): the
//! cluster checks can run over results written by another process.

use crate::finding::Severity;
use crate::read::format::{self, Compression, Control, Decompressor, RawEntry, Records};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use thin_vec::ThinVec;

mod entries;
mod group_offsets;
mod markers;
mod names;
mod stream;
pub use group_offsets::{
    Committed, DEFAULT_OFFSETS_RETENTION_MS, Expiry, GroupCommit, GroupOffsets, ShareStart,
};
pub(crate) use names::Name as SegmentName;
pub use names::SegmentNames;
pub(crate) use stream::{ReadErrors, SegmentRead, stream_records};

/// The version of [`ClusterInputs`]' serialised form (2: the segment names left them for
/// the partition's result, `PartitionResult::segment_names`).
pub const FORMAT_VERSION: u32 = 2;

/// The transaction coordinator's internal topic.
pub(crate) const TRANSACTION_STATE_TOPIC: &str = "__transaction_state";
/// The group coordinator's internal topic.
pub(crate) const CONSUMER_OFFSETS_TOPIC: &str = "__consumer_offsets";
/// Tiered storage's metadata topic (`TopicBasedRemoteLogMetadataManager`).
pub(crate) const REMOTE_LOG_METADATA_TOPIC: &str = format::remote_log::REMOTE_LOG_METADATA_TOPIC;

/// One batch header, as compared across replicas.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct BatchKey {
    pub base_offset: i64,
    pub last_offset: i64,
    /// Stored CRC (v2: CRC-32C of attributes..end; legacy: the wrapper's CRC).
    pub crc: u32,
    /// Entry size in bytes.
    pub size: u32,
    pub is_control: bool,
    /// `Some(true)` for COMMIT, `Some(false)` for ABORT.
    pub marker: Option<bool>,
    pub producer_id: i64,
    pub producer_epoch: i16,
    /// Index of the segment among the partition's segments with a `.log`.
    pub segment: u32,
    /// Byte position in that segment.
    pub position: u64,
}

impl BatchKey {
    /// The key of one framed entry (`None` for an entry too short to carry one).
    pub(crate) fn of(e: RawEntry<'_>, segment: u32) -> Option<BatchKey> {
        let size = u32::try_from(e.len()).unwrap_or(u32::MAX);
        if e.len() > 16 && e.magic() >= 2 {
            let b = e.as_v2().ok()?;
            let marker = if b.is_control() {
                match format::batch_control(&b) {
                    Ok(Some(Control::EndTxn { commit, .. })) => Some(commit),
                    _ => None,
                }
            } else {
                None
            };
            Some(BatchKey {
                base_offset: b.base_offset(),
                last_offset: b.last_offset(),
                crc: b.crc(),
                size,
                is_control: b.is_control(),
                marker,
                producer_id: b.producer_id(),
                producer_epoch: b.producer_epoch(),
                segment,
                position: e.position,
            })
        } else {
            // Legacy wrapper: its offset is its last (inner) offset.
            let crc = e.bytes.get(12..16)?;
            Some(BatchKey {
                base_offset: e.offset(),
                last_offset: e.offset(),
                crc: u32::from_be_bytes([crc[0], crc[1], crc[2], crc[3]]),
                size,
                is_control: false,
                marker: None,
                producer_id: -1,
                producer_epoch: -1,
                segment,
                position: e.position,
            })
        }
    }
}

impl BatchKey {
    /// The key of an entry too large to hold (`segment::BigEntry`), from its header: the
    /// same fields as [`BatchKey::of`] (stored CRC, real size), except that the marker of
    /// a control batch is not read (`None`: its record is not decoded).
    pub(crate) fn of_big(big: &crate::read::segment::BigEntry, segment: u32) -> Option<BatchKey> {
        let head = big.header_only();
        let mut k = BatchKey::of(
            RawEntry {
                position: big.position,
                bytes: &head,
            },
            segment,
        )?;
        k.size = u32::try_from(big.len).unwrap_or(u32::MAX);
        k.crc = big.stored_crc();
        k.marker = None;
        Some(k)
    }
}

/// One record of an internal topic, as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogRecord {
    pub offset: i64,
    /// Index of the segment among the partition's segments with a `.log`.
    pub segment: u32,
    /// Byte position of the record's batch in the segment.
    pub position: u64,
    /// The batch's max timestamp.
    pub timestamp: i64,
    /// The batch's partition leader epoch (`__transaction_state`: the coordinator epoch).
    /// Absent from results written before it was added (read as -1, unknown).
    #[serde(default = "unknown_leader_epoch")]
    pub leader_epoch: i32,
    /// The batch's producer id when it is transactional.
    pub producer_id: Option<i64>,
    /// The batch's producer id when it is not transactional but carries one (an idempotent
    /// producer's batch): Kafka 4.x's group coordinator load reads only the producer id
    /// (`OffsetMetadataManager.replay`). Absent otherwise, and from results written before
    /// it was added.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent_producer_id: Option<i64>,
    pub key: Option<Vec<u8>>,
    pub value: Option<Vec<u8>>,
}

fn unknown_leader_epoch() -> i32 {
    -1
}

/// What the walk kept of an internal topic's batch, in file order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum LogItem {
    Record(LogRecord),
    /// A COMMIT (`true`) or ABORT marker of `producer_id`.
    Marker {
        producer_id: i64,
        commit: bool,
    },
    /// Records that do not decode (a batch that does not decompress, a record that does
    /// not parse: the batch's later records are lost).
    Undecodable {
        segment: u32,
        message: String,
        /// The offsets the unread records may have (the batch's base and last offsets,
        /// from its header); `None` when unknown (a segment that could not be read: any
        /// offset). Absent from results written before it was added.
        #[serde(default)]
        offsets: Option<(i64, i64)>,
    },
}

/// What the group coordinator's replay found wrong (see `groups::replay`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum GroupAnomalyKind {
    /// A record the coordinator's load throws on (wrong group type, undecodable).
    LoadFailure,
    /// A record that does not deserialize (the load throws; rule 32 reports it too).
    Undecodable,
    /// A deletion's tombstones out of the coordinator's order (the load throws), or a
    /// deleted group's records left live.
    TombstonesIncomplete,
    /// A group or target assignment epoch going down without a deletion in between, or
    /// an assignment epoch above the group epoch.
    EpochRegression,
    /// A streams group left at the KIP-1331 barrier (-2).
    DeletionUnfinished,
    /// Offset commits in a non-transactional batch that carries a producer id (an
    /// idempotent producer's): pending for ever under Kafka 4.x, applied by 3.x.
    IdempotentOffsetCommit,
}

/// One anomaly of the group coordinator's replay, with where it is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GroupAnomaly {
    pub kind: GroupAnomalyKind,
    pub group: Option<String>,
    pub offset: i64,
    pub position: u64,
    pub segment: String,
    pub message: String,
    pub evidence: Value,
    /// True when the broker's load throws on this record.
    pub load_fails: bool,
    /// A severity other than the kind's default.
    pub severity: Option<Severity>,
    /// The key version (record type) of the record it is about, when it is about one: a
    /// stated 3.x release decides by it (`partition::groups::release`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_version: Option<i16>,
}

impl GroupAnomaly {
    /// Whether only Kafka 4.0's load throws on this record (`load_fails_in:
    /// kafka_4_before_kafka_19453`: a share record of a group or member the load does not
    /// hold, which 4.1.0 and later skip).
    pub(crate) fn fails_only_in_kafka_4_0(&self) -> bool {
        use crate::finding::evidence::{LoadFailsIn, LoadJoint, read_value};
        self.load_fails
            && read_value::<LoadJoint>(&self.evidence).load_fails_in
                == LoadFailsIn::Kafka4BeforeKafka19453
    }
}

/// A consumer of an internal topic's records in offset order (the group replay).
pub(crate) trait RecordSink {
    /// One record; `segment` is its segment's file name.
    fn record(&mut self, r: &LogRecord, segment: &str);
    /// A COMMIT/ABORT marker.
    fn marker(&mut self, producer_id: i64, commit: bool);
    /// Records of segment `segment` that could not be read ([`LogItem::Undecodable`]):
    /// the sink may miss them (default: ignored; the scan's own walk reports them).
    fn unread(&mut self, _segment: &str, _message: &str) {}
}

/// Whether a directory may be compared with another copy: live and `-future` ones
/// (`-delete`/`-stray` ones may hold an older incarnation of the topic).
pub(crate) fn comparable(d: &crate::discover::layout::PartitionDir) -> bool {
    matches!(
        d.kind,
        Some(crate::discover::layout::DirKind::Normal)
            | Some(crate::discover::layout::DirKind::Future { .. })
    )
}

/// The topic-partitions held by more than one selected directory (see
/// `ScanOptions::copied_partitions`), or every partition (`collect`, with a sink its keys
/// go to as each walk ends).
#[derive(Clone, Default)]
pub struct CopiedPartitions(
    std::sync::Arc<std::collections::BTreeSet<(String, i32)>>,
    /// Every partition, whatever the inputs hold (`collect`).
    bool,
    /// Where each partition's batch keys go once its walk is finished, instead of staying
    /// in its report (`collect` writes them out while the scan runs).
    Option<KeySink>,
);

/// Takes a partition's batch keys (its path, the keys sorted by base offset).
pub type KeySink = std::sync::Arc<dyn Fn(&str, Vec<BatchKey>) + Send + Sync>;

impl std::fmt::Debug for CopiedPartitions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("CopiedPartitions")
            .field(&self.0)
            .field(&self.1)
            .field(&self.2.as_ref().map(|_| "sink"))
            .finish()
    }
}

impl CopiedPartitions {
    /// The topic-partitions of `dirs` that appear in more than one of them (the replica
    /// comparison's candidates, `replicas::replica_pairs`).
    pub(crate) fn of<'a>(
        dirs: impl IntoIterator<Item = &'a crate::discover::layout::PartitionDir>,
    ) -> Self {
        let mut seen = std::collections::BTreeMap::<(String, i32), usize>::new();
        for d in dirs.into_iter().filter(|d| comparable(d)) {
            if let Some(tp) = &d.tp {
                *seen.entry((tp.topic.clone(), tp.partition)).or_default() += 1;
            }
        }
        CopiedPartitions(
            std::sync::Arc::new(
                seen.into_iter()
                    .filter(|(_, n)| *n > 1)
                    .map(|(k, _)| k)
                    .collect(),
            ),
            false,
            None,
        )
    }
    /// Every partition: a `collect` of one broker's log dirs cannot know which of its
    /// partitions another broker holds, so every walk keeps its batch keys (a scan keeps
    /// this rather than computing its own), each finished walk's keys handed to `sink`
    /// rather than kept: memory holds the keys of the partitions being walked, not of the
    /// whole scan.
    pub(crate) fn all_into(sink: KeySink) -> Self {
        CopiedPartitions(Default::default(), true, Some(sink))
    }
    /// A partition's walk is finished: hand its batch keys to the sink, if there is one.
    pub(crate) fn hand_over(&self, report: &mut crate::partition::results::PartitionReport) {
        if let Some(sink) = &self.2
            && let Some(keys) = report.carried.cluster_inputs.batches.take()
        {
            sink(&report.path, keys.into());
        }
    }
    /// Whether this is [`Self::all`].
    pub(crate) fn is_all(&self) -> bool {
        self.1
    }
    /// Whether `topic`-`partition` is one of them.
    pub(crate) fn contains(&self, topic: &str, partition: i32) -> bool {
        self.1 || (!self.0.is_empty() && self.0.contains(&(topic.to_string(), partition)))
    }
}

/// Which internal topic a partition holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Internal {
    TransactionState,
    ConsumerOffsets,
    /// `__remote_log_metadata`: kept like the transaction log (records, no markers).
    RemoteLogMetadata,
    /// `__share_group_state`: its records handed to the share-state replay, not kept.
    ShareGroupState,
}

/// The offsets a batch's records may have, from its header: `None` when the header
/// contradicts itself (a last offset below the base: any offset).
fn offset_range(base: i64, last: i64) -> Option<(i64, i64)> {
    (base <= last).then_some((base, last))
}

/// What a kept record costs: its key and value bytes and [`LogItem`]'s own size.
fn record_bytes(r: &LogRecord) -> u64 {
    let len = |b: &Option<Vec<u8>>| b.as_ref().map_or(0, Vec::len) as u64;
    std::mem::size_of::<LogItem>() as u64 + len(&r.key) + len(&r.value)
}

/// Collects, during one walk of one segment (or one piece of it), what the cluster checks
/// need. Cheap when there is nothing to collect (`wants()` false).
#[derive(Debug, Default)]
pub(crate) struct Collector {
    internal: Option<Internal>,
    batches: Option<Vec<BatchKey>>,
    items: Vec<LogItem>,
    dec: Option<Decompressor>,
    max_decompressed: usize,
    /// `__transaction_state`: what this collector may keep of its records.
    keep: Keep,
    /// The end of the last entry handed to it (byte position in its segment); `None` once
    /// cleared (the segment changed under the walk: none of it is kept).
    read_to: Option<u64>,
}

/// What one [`Collector`] may keep of a `__transaction_state` partition's records
/// ([`Collector::keep_at_most`]), the bytes it holds, and whether it dropped them.
#[derive(Debug, Default)]
struct Keep {
    limit: u64,
    kept: u64,
    dropped: bool,
}

impl Keep {
    /// Count `bytes` more held: false past the limit (then everything is dropped).
    fn add(&mut self, bytes: u64) -> bool {
        self.kept = self.kept.saturating_add(bytes);
        if self.kept > self.limit {
            self.drop_all();
        }
        !self.dropped
    }

    fn drop_all(&mut self) {
        self.kept = 0;
        self.dropped = true;
    }
}

/// What the walk of one partition may still keep of its `__transaction_state` records
/// (`ScanOptions::keep_coordinator_bytes`), shared by the walks of its segments and
/// pieces, which run ahead of the replay on other threads: the one count of the bytes
/// kept. A walk starting now may keep what is left ([`Self::remaining`]; nothing once the
/// partition's records were dropped); each segment's collection, taken in in order
/// ([`Self::take`]), counts against it; past it the partition keeps none of its records
/// and the cluster stage reads them again ([`stream_records`]).
#[derive(Debug)]
pub(crate) struct KeepBudget {
    limit: u64,
    /// The bytes of the segments taken in; `u64::MAX` once dropped.
    kept: std::sync::atomic::AtomicU64,
}

impl KeepBudget {
    pub(crate) fn new(limit: u64) -> KeepBudget {
        KeepBudget {
            limit,
            kept: 0.into(),
        }
    }

    /// What a walk starting now may keep. The segments before it not yet taken in may
    /// spend part of it: [`Self::take`] counts them in order.
    pub(crate) fn remaining(&self) -> u64 {
        use std::sync::atomic::Ordering;
        self.limit.saturating_sub(self.kept.load(Ordering::Relaxed))
    }

    /// Take in a segment's collection (segments in order): past the budget its records
    /// are dropped, and those of every later one.
    pub(crate) fn take(&self, c: &mut Collector) {
        use std::sync::atomic::Ordering;
        let kept = self
            .kept
            .load(Ordering::Relaxed)
            .saturating_add(c.keep.kept);
        if c.keep.dropped || kept > self.limit {
            c.drop_records();
            self.kept.store(u64::MAX, Ordering::Relaxed);
        } else {
            self.kept.store(kept, Ordering::Relaxed);
        }
    }
}

impl Collector {
    /// A collector for a partition of `topic`; `batch_keys`: keep a [`BatchKey`] per entry.
    pub(crate) fn new(topic: &str, batch_keys: bool, max_decompressed: usize) -> Collector {
        let internal = match topic {
            TRANSACTION_STATE_TOPIC => Some(Internal::TransactionState),
            CONSUMER_OFFSETS_TOPIC => Some(Internal::ConsumerOffsets),
            REMOTE_LOG_METADATA_TOPIC => Some(Internal::RemoteLogMetadata),
            crate::read::format::groups::SHARE_GROUP_STATE_TOPIC => Some(Internal::ShareGroupState),
            _ => None,
        };
        Collector {
            internal,
            batches: batch_keys.then(Vec::new),
            items: Vec::new(),
            dec: None,
            max_decompressed,
            keep: Keep {
                limit: u64::MAX,
                ..Keep::default()
            },
            read_to: Some(0),
        }
    }

    /// Keep at most `bytes` of a `__transaction_state` partition's records (their key and
    /// value bytes plus [`LogItem`]'s own size each); past that, drop them all and keep
    /// none of the later ones: the cluster stage then reads the partition again
    /// ([`stream_records`]); `bytes`: what the partition's [`KeepBudget`] has left.
    pub(crate) fn keep_at_most(mut self, bytes: u64) -> Collector {
        self.keep.limit = bytes;
        self
    }

    /// What this collector may still keep of `__transaction_state` records (nothing once
    /// it dropped them): what a walk of the rest of its segment may keep.
    pub(crate) fn room(&self) -> u64 {
        match self.keep.dropped {
            true => 0,
            false => self.keep.limit.saturating_sub(self.keep.kept),
        }
    }

    /// Drop the `__transaction_state` records held, and keep none of the later ones (the
    /// partition's records are more than its walk keeps).
    fn drop_records(&mut self) {
        if self.internal == Some(Internal::TransactionState) {
            self.items = Vec::new();
            self.keep.drop_all();
        }
    }

    /// Whether anything is collected at all.
    pub(crate) fn wants(&self) -> bool {
        self.internal.is_some() || self.batches.is_some()
    }

    /// One framed entry of segment number `segment` (every entry the walk frames, in file
    /// order; the CRC is not required: the coordinators' loads do not check it either).
    pub(crate) fn entry(&mut self, e: RawEntry<'_>, segment: u32) {
        self.read_past(e.position.saturating_add(e.len() as u64));
        if let Some(b) = &mut self.batches
            && let Some(k) = BatchKey::of(e, segment)
        {
            b.push(k);
        }
        let Some(internal) = self.internal else {
            return;
        };
        if self.keep.dropped {
            return;
        }
        if e.magic() < 2 {
            self.legacy_entry(e, segment, internal);
            return;
        }
        let Ok(b) = e.as_v2() else { return };
        if b.is_control() {
            if internal == Internal::ConsumerOffsets {
                self.coordinator_markers(&b);
            }
            return;
        }
        let dec = decompressor(&mut self.dec, self.max_decompressed);
        let recs = if b.compression() == Compression::None {
            Ok(Records::new(
                b.records_bytes(),
                b.records_count(),
                b.position() + format::batch::V2_HEADER_SIZE as u64,
            ))
        } else {
            format::batch_records(&b, dec)
        };
        let offsets = offset_range(b.base_offset(), b.last_offset());
        let recs = match recs {
            Ok(r) => r,
            Err(e) => {
                self.items.push(LogItem::Undecodable {
                    segment,
                    message: e.to_string(),
                    offsets,
                });
                return;
            }
        };
        let producer_id = b.is_transactional().then(|| b.producer_id());
        let idempotent_producer_id =
            (!b.is_transactional() && b.producer_id() >= 0).then(|| b.producer_id());
        for r in recs {
            match r {
                Ok(r) => {
                    let r = LogRecord {
                        offset: b.base_offset().saturating_add(r.offset_delta as i64),
                        segment,
                        position: b.position(),
                        timestamp: b.max_timestamp(),
                        leader_epoch: b.partition_leader_epoch(),
                        producer_id,
                        idempotent_producer_id,
                        key: r.key.map(<[u8]>::to_vec),
                        value: r.value.map(<[u8]>::to_vec),
                    };
                    if internal == Internal::TransactionState && !self.keep.add(record_bytes(&r)) {
                        self.items = Vec::new();
                        return;
                    }
                    self.items.push(LogItem::Record(r));
                }
                Err(e) => {
                    self.items.push(LogItem::Undecodable {
                        segment,
                        message: e.to_string(),
                        offsets,
                    });
                    break;
                }
            }
        }
    }

    /// An entry ending at byte `end` was read.
    fn read_past(&mut self, end: u64) {
        if let Some(r) = &mut self.read_to {
            *r = (*r).max(end);
        }
    }

    /// How far the reads of this collector's segment went: the end of the last entry
    /// handed to it (`None`: the segment changed under the walk, none of it is kept). A
    /// read again that goes elsewhere read other bytes.
    pub(crate) fn read_to(&self) -> Option<u64> {
        self.read_to
    }

    /// Append what a later piece of the same segment collected.
    pub(crate) fn append(&mut self, mut later: Collector) {
        self.read_to = self.read_to.zip(later.read_to).map(|(a, b)| a.max(b));
        if later.keep.dropped || !self.keep.add(later.keep.kept) {
            self.drop_records();
        }
        if !self.keep.dropped {
            self.items.append(&mut later.items);
        }
        if let (Some(a), Some(b)) = (&mut self.batches, later.batches) {
            a.extend(b);
        }
    }

    /// Forget what was collected (the segment changed under the walk).
    pub(crate) fn clear(&mut self) {
        self.read_to = None;
        self.items.clear();
        self.keep.kept = 0;
        if let Some(b) = &mut self.batches {
            b.clear();
        }
    }
}

/// The typed per-partition results the cluster checks consume, made by the partition's
/// one walk. The `segment` numbers in them index the partition's segment names
/// (`PartitionReport::segment_names`), which every partition keeps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClusterInputs {
    /// [`FORMAT_VERSION`].
    pub version: u32,
    /// `__transaction_state`: its records (and undecodable batches), in offset order;
    /// `None` when they were more than the walk keeps (`ScanOptions::keep_coordinator_bytes`:
    /// the cluster stage reads them again).
    pub txn_log: Option<ThinVec<LogItem>>,
    /// `__remote_log_metadata`: its records (and undecodable batches), in offset order.
    #[serde(default)]
    pub remote_log: Option<ThinVec<LogItem>>,
    /// `__consumer_offsets`: the group coordinator's replay anomalies.
    pub group_anomalies: Option<ThinVec<GroupAnomaly>>,
    /// How far the walk read each segment ([`Collector::read_to`], by segment number): what
    /// a read again of records the walk did not keep compares with
    /// ([`ReadErrors::AsWalked`]). Not serialised: only the process that walked reads the
    /// segments again.
    #[serde(skip)]
    pub(crate) walked_to: ThinVec<Option<u64>>,
    /// With a copy of the same topic-partition in the inputs: every batch's key, sorted by
    /// base offset (stable: file order among equal offsets) once the walk is finished.
    pub batches: Option<ThinVec<BatchKey>>,
    /// `__consumer_offsets`: the groups and committed offsets its load ends with (the
    /// consumer view's input). Absent from results written before it was added.
    #[serde(default)]
    pub group_offsets: Option<Box<GroupOffsets>>,
    /// A live `__share_group_state` read whole: each share partition's served start (the
    /// consumers' check holds it against the data partition). Absent from results written
    /// before it was added.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub share_starts: Option<ThinVec<ShareStart>>,
}

/// Nothing kept, of this format: what a partition that is not internal and has no copy
/// in view keeps (and, being the default, what its report leaves out).
/// The collector's decompressor, made on first use with its limit (`max_decompressed`, 0:
/// 64 MiB). A free function over the two fields, so that the records it decompresses can
/// be read while the collector's other fields are written.
fn decompressor(slot: &mut Option<Decompressor>, max_decompressed: usize) -> &mut Decompressor {
    let limit = match max_decompressed {
        0 => 64 << 20,
        n => n,
    };
    slot.get_or_insert_with(|| Decompressor::new(limit))
}

impl Default for ClusterInputs {
    fn default() -> Self {
        ClusterInputs {
            version: FORMAT_VERSION,
            txn_log: None,
            remote_log: None,
            group_anomalies: None,
            walked_to: ThinVec::new(),
            batches: None,
            group_offsets: None,
            share_starts: None,
        }
    }
}

impl ClusterInputs {
    /// Empty inputs of a partition of `topic` (`batch_keys`: keep the batch keys).
    pub(crate) fn new(topic: &str, batch_keys: bool) -> ClusterInputs {
        ClusterInputs {
            txn_log: (topic == TRANSACTION_STATE_TOPIC).then(ThinVec::new),
            remote_log: (topic == REMOTE_LOG_METADATA_TOPIC).then(ThinVec::new),
            batches: batch_keys.then(ThinVec::new),
            ..Default::default()
        }
    }

    /// The partition's walk is finished: sort the batch keys by base offset (as the
    /// replica comparison reads them).
    pub(crate) fn finish(&mut self) {
        // Usually in order already (one walk in file order): then no sort and no scratch
        // buffer, one pass.
        if let Some(b) = &mut self.batches
            && !b.is_sorted_by_key(|k| k.base_offset)
        {
            b.sort_by_key(|k| k.base_offset);
        }
    }

    /// Take one walked segment's collection (segments in order): its items go to the log
    /// or to `sink` (then dropped), its batch keys are kept.
    pub(crate) fn absorb(&mut self, name: &str, c: Collector, sink: Option<&mut dyn RecordSink>) {
        if c.internal == Some(Internal::TransactionState) {
            self.walked_to.push(c.read_to);
        }
        if let (Some(all), Some(b)) = (&mut self.batches, c.batches) {
            all.extend(b);
        }
        if let Some(log) = &mut self.remote_log {
            log.extend(c.items);
            return;
        }
        if c.keep.dropped {
            // More records than the walk keeps: the cluster stage reads them again.
            self.txn_log = None;
        }
        match (&mut self.txn_log, sink) {
            (Some(log), _) => log.extend(c.items),
            (None, Some(sink)) => {
                for item in &c.items {
                    match item {
                        LogItem::Record(r) => sink.record(r, name),
                        LogItem::Marker {
                            producer_id,
                            commit,
                        } => sink.marker(*producer_id, *commit),
                        LogItem::Undecodable { message, .. } => sink.unread(name, message),
                    }
                }
            }
            (None, None) => {}
        }
    }
}

/// Collect a partition directory's cluster inputs with a walk of its own: for the
/// partitions the scan did not walk (not selected by `--topic`/`--partition`).
pub(crate) fn collect_dir(
    p: &crate::discover::layout::PartitionDir,
    batch_keys: bool,
    max_bytes: Option<u64>,
    max_decompressed: usize,
    mut sink: Option<&mut dyn RecordSink>,
) -> ClusterInputs {
    let topic = p.tp.as_ref().map_or("", |tp| tp.topic.as_str());
    let mut out = ClusterInputs::new(topic, batch_keys);
    let how = SegmentRead {
        batch_keys,
        ..SegmentRead::report(max_bytes, max_decompressed)
    };
    // `ReadErrors::Report` reads every segment to its end: never `Err`.
    let _ = stream_records(p, &how, None, &mut |name, c| {
        let sink = sink.as_mut().map(|s| &mut **s as &mut dyn RecordSink);
        out.absorb(name, c, sink);
    });
    out
}

#[cfg(test)]
mod tests;

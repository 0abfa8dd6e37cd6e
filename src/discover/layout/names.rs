//! Names: what a file or directory name says inside a data directory (partition
//! directories, segment files, leftovers, log-dir markers; as `LocalLog` and `UnifiedLog` name them).

use super::{DirKind, LeftoverKind, TopicPartition};

/// The kind of a file named `<offset>.<ext>` (or `<offset>-<epoch>.checkpoint`) inside a
/// partition directory (`LogFileUtils`' suffixes, KRaft `Snapshots` names).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum FileKind {
    /// `.log`: record batches.
    Log,
    /// `.index`: offset index.
    Index,
    /// `.timeindex`: time index.
    TimeIndex,
    /// `.txnindex`: aborted-transaction index.
    TxnIndex,
    /// `.snapshot`: producer-state snapshot (the number is its exclusive end offset).
    ProducerSnapshot,
    /// `<endOffset>-<epoch>.checkpoint`: KRaft snapshot (the number is its end offset).
    KraftSnapshot { epoch: i32 },
}

impl FileKind {
    /// True for the four files of a segment (`.log`, `.index`, `.timeindex`, `.txnindex`).
    pub fn is_segment_file(self) -> bool {
        matches!(
            self,
            FileKind::Log | FileKind::Index | FileKind::TimeIndex | FileKind::TxnIndex
        )
    }
}

/// The names that make a directory a broker log dir (one `log.dirs` entry): files only a
/// broker writes at a log dir's top level.
pub const LOG_DIR_MARKERS: [&str; 7] = [
    "meta.properties",
    "recovery-point-offset-checkpoint",
    "log-start-offset-checkpoint",
    "replication-offset-checkpoint",
    "cleaner-offset-checkpoint",
    ".kafka_cleanshutdown",
    "bootstrap.checkpoint",
];

/// The tiered-storage index cache inside a log dir: never a partition, never searched.
pub const REMOTE_LOG_INDEX_CACHE: &str = "remote-log-index-cache";

/// Internal topics of the broker (their payloads are broker-defined messages).
pub fn is_internal_topic(topic: &str) -> bool {
    matches!(
        topic,
        "__consumer_offsets"
            | "__transaction_state"
            | "__share_group_state"
            | "__remote_log_metadata"
    )
}

/// The KRaft metadata log's topic, `__cluster_metadata`.
pub fn is_kraft_metadata(topic: &str) -> bool {
    topic == "__cluster_metadata"
}

fn parse_decimal_i64(s: &str) -> Option<i64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

fn parse_decimal_i32(s: &str) -> Option<i32> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// Parse a partition directory name (`LocalLog.parseTopicPartitionName`): `<topic>-<partition>`, or
/// `<topic>-<partition>.<uniqueId>-delete|-future|-stray`.
///
/// For a suffixed name everything from the last `.` is dropped; the rest is split at the
/// last `-`. The topic must be non-empty and the partition a non-negative decimal int32
/// (digits only). The unique id must be non-empty and contain no whitespace (Kafka's
/// `\S+`); the broker writes 32 lowercase hex characters but older or foreign tools may
/// not, so other ids are accepted. A topic recovered from a `-delete`/`-stray` name may be
/// a truncated prefix of the real name (Kafka caps the directory name at 255 bytes).
pub fn parse_partition_dir_name(name: &str) -> Option<(TopicPartition, DirKind)> {
    let mut kind = DirKind::Normal;
    let mut base = name;
    for (suffix, make) in [
        (
            "-delete",
            (|id| DirKind::Delete { unique_id: id }) as fn(String) -> DirKind,
        ),
        ("-future", |id| DirKind::Future { unique_id: id }),
        ("-stray", |id| DirKind::Stray { unique_id: id }),
    ] {
        if let Some(stem) = name.strip_suffix(suffix)
            && let Some(dot) = stem.rfind('.')
        {
            let id = &stem[dot + 1..];
            if id.is_empty() || id.chars().any(char::is_whitespace) {
                return None;
            }
            kind = make(id.to_owned());
            base = &stem[..dot];
            break;
        }
    }
    let dash = base.rfind('-')?;
    let topic = &base[..dash];
    let partition = parse_decimal_i32(&base[dash + 1..])?;
    if topic.is_empty() || topic.chars().any(char::is_whitespace) {
        return None;
    }
    Some((
        TopicPartition {
            topic: topic.to_owned(),
            partition,
        },
        kind,
    ))
}

/// Parse a segment-family file name (`LogFileUtils.offsetFromFileName`, KRaft
/// `Snapshots.parse`): `<offset>.log|.index|.timeindex|
/// .txnindex|.snapshot` or `<offset>-<epoch>.checkpoint`. The number is the text before
/// the FIRST `.` (as in Kafka); it must be non-negative decimal digits (normally 20,
/// any width is accepted). Suffixed leftovers (`….log.deleted`) are not matched: see
/// [`parse_leftover_name`].
pub fn parse_segment_file_name(name: &str) -> Option<(i64, FileKind)> {
    let (stem, ext) = name.split_once('.')?;
    let kind = match ext {
        "log" => FileKind::Log,
        "index" => FileKind::Index,
        "timeindex" => FileKind::TimeIndex,
        "txnindex" => FileKind::TxnIndex,
        "snapshot" => FileKind::ProducerSnapshot,
        "checkpoint" => {
            let (off, epoch) = stem.split_once('-')?;
            return Some((
                parse_decimal_i64(off)?,
                FileKind::KraftSnapshot {
                    epoch: parse_decimal_i32(epoch)?,
                },
            ));
        }
        _ => return None,
    };
    Some((parse_decimal_i64(stem)?, kind))
}

/// Parse a leftover name (the suffixes `LogLoader` handles at startup): `*.deleted`, `*.cleaned`, `*.swap`, `*.tmp`, and the
/// KRaft `*.checkpoint.part` (an interrupted snapshot write, reported as
/// [`LeftoverKind::Tmp`]). Returns the kind and the name without the suffix.
pub fn parse_leftover_name(name: &str) -> Option<(LeftoverKind, &str)> {
    let (stem, kind) = if let Some(s) = name.strip_suffix(".deleted") {
        (s, LeftoverKind::Deleted)
    } else if let Some(s) = name.strip_suffix(".cleaned") {
        (s, LeftoverKind::Cleaned)
    } else if let Some(s) = name.strip_suffix(".swap") {
        (s, LeftoverKind::Swap)
    } else if let Some(s) = name.strip_suffix(".tmp") {
        (s, LeftoverKind::Tmp)
    } else if let Some(s) = name.strip_suffix(".part")
        && s.ends_with(".checkpoint")
    {
        (s, LeftoverKind::Tmp)
    } else {
        return None;
    };
    if stem.is_empty() {
        return None;
    }
    Some((kind, stem))
}

/// The name of a partition's leader-epoch checkpoint file (`LeaderEpochCheckpointFile`).
pub const LEADER_EPOCH_CHECKPOINT: &str = "leader-epoch-checkpoint";

/// What a file name is inside a partition directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum PartFile {
    Numbered(i64, FileKind),
    LeaderEpoch,
    PartitionMetadata,
    QuorumState,
    /// A leftover; `kafka` tells whether the name under the suffix is a partition file.
    Leftover(LeftoverKind, bool),
    Unknown,
}

pub(super) fn classify_partition_file(name: &str) -> PartFile {
    fn base(name: &str) -> PartFile {
        if let Some((off, kind)) = parse_segment_file_name(name) {
            return PartFile::Numbered(off, kind);
        }
        match name {
            LEADER_EPOCH_CHECKPOINT => PartFile::LeaderEpoch,
            "partition.metadata" => PartFile::PartitionMetadata,
            "quorum-state" => PartFile::QuorumState,
            _ => PartFile::Unknown,
        }
    }
    match base(name) {
        PartFile::Unknown => match parse_leftover_name(name) {
            Some((kind, stem)) => PartFile::Leftover(kind, base(stem) != PartFile::Unknown),
            None => PartFile::Unknown,
        },
        known => known,
    }
}

/// True when `name` is a file that only a broker's log dir holds (a marker, or a `.tmp`
/// leftover of one).
pub(super) fn is_log_dir_marker(name: &str) -> bool {
    let stem = name.strip_suffix(".tmp").unwrap_or(name);
    LOG_DIR_MARKERS.contains(&stem)
}

//! File names of tiered storage: the `remote-log-index-cache/` directory of a log dir and
//! Kafka's `LocalTieredStorage` (re-exported by [`super`]).

/// The tiered-storage index cache directory inside a log dir (`RemoteIndexCache.DIR_NAME`).
pub const REMOTE_INDEX_CACHE_DIR: &str = "remote-log-index-cache";

/// Which index a remote index cache file holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RemoteIndexKind {
    Offset,
    Time,
    Transaction,
}

/// A file of `remote-log-index-cache/`: `<startOffset>_<segmentUuid>.<index|timeindex|
/// txnindex>`, possibly with `.tmp` (a download in progress) or `.deleted` (removed from
/// the cache) appended; the broker deletes both kinds when it starts
/// (`RemoteIndexCache.init`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RemoteIndexCacheName {
    pub start_offset: i64,
    pub segment_id: [u8; 16],
    pub kind: RemoteIndexKind,
    /// Ends in `.tmp` or `.deleted`.
    pub leftover: bool,
}

/// Parse a `remote-log-index-cache/` file name (`None`: not one the cache writes).
pub fn parse_remote_index_cache_name(name: &str) -> Option<RemoteIndexCacheName> {
    let (name, leftover) = match name
        .strip_suffix(".tmp")
        .or_else(|| name.strip_suffix(".deleted"))
    {
        Some(n) => (n, true),
        None => (name, false),
    };
    let (stem, ext) = name.split_once('.')?;
    let kind = match ext {
        "index" => RemoteIndexKind::Offset,
        "timeindex" => RemoteIndexKind::Time,
        "txnindex" => RemoteIndexKind::Transaction,
        _ => return None,
    };
    let (offset, uuid) = stem.split_once('_')?;
    Some(RemoteIndexCacheName {
        start_offset: digits(offset)?,
        segment_id: uuid22(uuid)?,
        kind,
        leftover,
    })
}

fn digits(s: &str) -> Option<i64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// A 22-character Kafka uuid text (URL-safe base64 without padding).
fn uuid22(s: &str) -> Option<[u8; 16]> {
    if s.len() != 22 {
        return None;
    }
    crate::checkpoint::decode_uuid(s).ok()
}

/// The directory of one user partition in `LocalTieredStorage`:
/// `<topic>-<partition>-<topicUuid>` (`RemoteTopicPartitionDirectory`).
pub fn parse_local_tiered_partition_dir(name: &str) -> Option<(&str, i32, [u8; 16])> {
    if name.len() < 26 || !name.is_char_boundary(name.len() - 22) {
        return None;
    }
    let (head, uuid) = name.split_at(name.len() - 22);
    let topic_id = uuid22(uuid)?;
    let head = head.strip_suffix('-')?;
    let (topic, partition) = head.rsplit_once('-')?;
    let legal = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-');
    if topic.is_empty() || !topic.bytes().all(legal) {
        return None;
    }
    let partition = i32::try_from(digits(partition)?).ok()?;
    Some((topic, partition, topic_id))
}

/// The files of one remote segment in `LocalTieredStorage`
/// (`RemoteLogSegmentFileset.RemoteLogSegmentFileType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LocalTieredFileType {
    Segment,
    OffsetIndex,
    TimeIndex,
    TransactionIndex,
    LeaderEpochCheckpoint,
    ProducerSnapshot,
}

impl LocalTieredFileType {
    /// Every type; the transaction index alone is optional.
    pub const ALL: [LocalTieredFileType; 6] = [
        LocalTieredFileType::Segment,
        LocalTieredFileType::OffsetIndex,
        LocalTieredFileType::TimeIndex,
        LocalTieredFileType::TransactionIndex,
        LocalTieredFileType::LeaderEpochCheckpoint,
        LocalTieredFileType::ProducerSnapshot,
    ];

    pub fn suffix(self) -> &'static str {
        match self {
            LocalTieredFileType::Segment => ".log",
            LocalTieredFileType::OffsetIndex => ".index",
            LocalTieredFileType::TimeIndex => ".timeindex",
            LocalTieredFileType::TransactionIndex => ".txnindex",
            LocalTieredFileType::LeaderEpochCheckpoint => ".leader_epoch_checkpoint",
            LocalTieredFileType::ProducerSnapshot => ".snapshot",
        }
    }

    pub fn optional(self) -> bool {
        self == LocalTieredFileType::TransactionIndex
    }
}

/// A `LocalTieredStorage` segment file name: `<startOffset, 20 digits>-<segmentUuid>
/// <suffix>` → `(start offset, segment uuid, type)`.
pub fn parse_local_tiered_file(name: &str) -> Option<(i64, [u8; 16], LocalTieredFileType)> {
    let (offset, rest) = name.split_once('-')?;
    let start = digits(offset)?;
    if rest.len() < 23 || !rest.is_char_boundary(22) {
        return None;
    }
    let (uuid, suffix) = rest.split_at(22);
    let t = LocalTieredFileType::ALL
        .into_iter()
        .find(|t| t.suffix() == suffix)?;
    Some((start, uuid22(uuid)?, t))
}

/// The file name `LocalTieredStorage` gives a segment's file of type `t`.
pub fn local_tiered_file_name(
    start_offset: i64,
    segment_uuid: &str,
    t: LocalTieredFileType,
) -> String {
    format!("{start_offset:020}-{segment_uuid}{}", t.suffix())
}

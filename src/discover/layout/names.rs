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

/// The internal topics the broker creates with `cleanup.policy=compact`: the group and
/// transaction coordinators' logs (`GroupCoordinator.groupMetadataTopicConfigs`,
/// `TransactionStateManager`'s topic configs). The share coordinator's
/// `__share_group_state` and tiered storage's `__remote_log_metadata` are created with
/// `cleanup.policy=delete` (`ShareCoordinatorService.shareGroupStateTopicConfigs`, pruned
/// with `deleteRecords`; `TopicBasedRemoteLogMetadataManager`'s topic configs): their policy
/// is what the inputs state, as any topic's.
pub fn is_compacted_internal_topic(topic: &str) -> bool {
    matches!(topic, "__consumer_offsets" | "__transaction_state")
}

/// Whether `topic` is named as Kafka Streams names a state store's changelog,
/// `<application.id>-<store>-changelog` (`ProcessorStateManager.storeChangelogTopic`), which
/// Streams' `InternalTopicManager.makeReady` creates with `cleanup.policy=compact`
/// (`compact,delete` for a windowed store). A name, not a stated policy: any topic may be
/// named so, and a changelog's policy may have been altered since.
pub fn is_streams_changelog_name(topic: &str) -> bool {
    topic
        .strip_suffix("-changelog")
        .and_then(|p| p.split_once('-'))
        .is_some_and(|(app, store)| !app.is_empty() && !store.is_empty())
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

/// A partition number as `Integer.parseInt` reads it (`LocalLog.parseTopicPartitionName`):
/// an optional leading `+`, then ASCII digits, within the `int` range (`05` and `+5` are
/// 5). A `-` cannot lead (the name is split at its last `-`). Non-ASCII digits, which
/// Java's `Character.digit` also accepts, are not modelled: such a name is no partition's.
fn parse_partition_number(s: &str) -> Option<i32> {
    let digits = s.strip_prefix('+').unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// Parse a partition directory name (`LocalLog.parseTopicPartitionName`): `<topic>-<partition>`, or
/// `<topic>-<partition>.<uniqueId>-delete|-future|-stray`.
///
/// For a suffixed name everything from the last `.` is dropped; the rest is split at the
/// last `-`. The topic must be non-empty and the partition a non-negative decimal int32
/// (digits after an optional `+`, as `Integer.parseInt` reads them). The unique id must be non-empty and contain no whitespace (Kafka's
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
    let partition = parse_partition_number(&base[dash + 1..])?;
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
/// any width is accepted), but for a producer snapshot, read as `Long.parseLong` reads
/// it (a sign too), whatever lies between that `.` and the `.snapshot` ending. A KRaft snapshot's name only at Kafka's widths (20 and 10
/// digits, [`kraft_snapshot_id`](super::kraft_snapshot_id)): `Snapshots.parse` throws on
/// `100-1.checkpoint`. Suffixed leftovers (`….log.deleted`) are not matched: see
/// [`parse_leftover_name`]. A segment file (`.log`, indexes) of another width than 20 is
/// parsed here, but the broker never reads it under that name: discovery lists it as
/// such ([`noncanonical_segment_name`]), not as a segment.
pub fn parse_segment_file_name(name: &str) -> Option<(i64, FileKind)> {
    // A producer snapshot is any name ending in `.snapshot`
    // (`ProducerStateManager.listSnapshotFiles`), its offset `Long.parseLong` of the text
    // before the first `.` (`SnapshotFile`, `LogFileUtils.offsetFromFileName`): so
    // `+5.snapshot`, `-0.snapshot` and `00000000000000000005.copy.snapshot` are snapshots
    // of offsets 5, 0 and 5 to the broker, whatever their width or sign.
    if name.ends_with(".snapshot") {
        let (prefix, _) = name.split_once('.')?;
        return match java_parse_long(prefix) {
            JavaLong::Parsed(n) => Some((n, FileKind::ProducerSnapshot)),
            JavaLong::Throws | JavaLong::Unmodelled => None,
        };
    }
    let (stem, ext) = name.split_once('.')?;
    let kind = match ext {
        "log" => FileKind::Log,
        "index" => FileKind::Index,
        "timeindex" => FileKind::TimeIndex,
        "txnindex" => FileKind::TxnIndex,
        "snapshot" => FileKind::ProducerSnapshot,
        "checkpoint" => {
            // `Snapshots.parse`: fixed widths, under the name Kafka opens the snapshot by.
            let (off, epoch) = super::kraft_snapshot_id(name)?;
            return Some((off, FileKind::KraftSnapshot { epoch }));
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

/// The name of a partition's topic-id file (`PartitionMetadataFile`).
pub const PARTITION_METADATA: &str = "partition.metadata";

/// What a file name is inside a partition directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum PartFile {
    Numbered(i64, FileKind),
    /// A segment file's name the load reads as offset N but never reads the file under
    /// ([`noncanonical_segment_name`]).
    Noncanonical(i64, FileKind),
    LeaderEpoch,
    PartitionMetadata,
    QuorumState,
    /// A leftover; `kafka` tells whether the name under the suffix is a partition file.
    Leftover(LeftoverKind, bool),
    Unknown,
}

pub(super) fn classify_partition_file(name: &str) -> PartFile {
    fn base(name: &str) -> PartFile {
        if let Some(nc) = noncanonical_segment_name(name) {
            return PartFile::Noncanonical(nc.offset, nc.kind);
        }
        if let Some((off, kind)) = parse_segment_file_name(name) {
            return PartFile::Numbered(off, kind);
        }
        match name {
            LEADER_EPOCH_CHECKPOINT => PartFile::LeaderEpoch,
            PARTITION_METADATA => PartFile::PartitionMetadata,
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

/// The step of a partition's load that parses a file's name as an offset
/// (`LogFileUtils.offsetFromFileName`: the text before the first `.`, read by
/// `Long.parseLong`), in the order the load runs them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum OffsetNameStep {
    /// `*.snapshot`: the producer-state manager built before `LogLoader.load`
    /// (`UnifiedLog.apply` → `ProducerStateManager` → `loadSnapshots` → `SnapshotFile`).
    ProducerSnapshots,
    /// `*.cleaned` and `*.swap`: `LogLoader.removeTempFilesAndCollectSwapFiles`, the load's
    /// first pass.
    TempFiles,
    /// `*.log`, `*.index`, `*.timeindex`, `*.txnindex`: `LogLoader.loadSegmentFiles`, file
    /// by file in name order.
    SegmentFiles,
}

impl OffsetNameStep {
    /// Where the broker parses the name (classes and methods).
    pub fn method(self) -> &'static str {
        match self {
            OffsetNameStep::ProducerSnapshots => {
                "UnifiedLog.apply → ProducerStateManager's constructor → loadSnapshots → SnapshotFile → LogFileUtils.offsetFromFileName"
            }
            OffsetNameStep::TempFiles => {
                "LogLoader.removeTempFilesAndCollectSwapFiles → LogFileUtils.offsetFromFile"
            }
            OffsetNameStep::SegmentFiles => {
                "LogLoader.loadSegmentFiles → LogFileUtils.offsetFromFile"
            }
        }
    }

    /// When, in the load, that happens.
    pub fn when(self) -> &'static str {
        match self {
            OffsetNameStep::ProducerSnapshots => {
                "building the partition's producer-state manager, before LogLoader.load runs anything"
            }
            OffsetNameStep::TempFiles => {
                "the load's first pass, before any swap is completed or segment opened"
            }
            OffsetNameStep::SegmentFiles => {
                "opening the segment files in name order, before the unclean-shutdown recovery and the producer-state rebuild"
            }
        }
    }
}

/// What `Long.parseLong` makes of a string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum JavaLong {
    /// Parsed: an optional leading `+`/`-`, then ASCII digits, within the `long` range.
    Parsed(i64),
    /// Throws `NumberFormatException`: empty, a sign alone, any other character, out of
    /// the `long` range.
    Throws,
    /// Not judged: non-ASCII digits, which Java's `Character.digit` accepts and this does
    /// not model.
    Unmodelled,
}

pub(super) fn java_parse_long(s: &str) -> JavaLong {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() {
        return JavaLong::Throws;
    }
    if !digits.bytes().all(|b| b.is_ascii_digit()) {
        let unmodelled = digits
            .chars()
            .all(|c| c.is_ascii_digit() || (!c.is_ascii() && c.is_numeric()));
        return if unmodelled {
            JavaLong::Unmodelled
        } else {
            JavaLong::Throws
        };
    }
    match s.strip_prefix('+').unwrap_or(s).parse::<i64>() {
        Ok(n) => JavaLong::Parsed(n),
        Err(_) => JavaLong::Throws,
    }
}

/// The offset `LogFileUtils.offsetFromFileName` reads in `name`: `Long.parseLong` of the
/// text before its first `.` (`None`: no `.`, the parse throws, or non-ASCII digits, not
/// judged). `+5.log`, `-0.log` and `00000000000000000500.copy.log` read as 5, 0 and 500.
pub fn kafka_offset_of_name(name: &str) -> Option<i64> {
    let (prefix, _) = name.split_once('.')?;
    match java_parse_long(prefix) {
        JavaLong::Parsed(n) => Some(n),
        _ => None,
    }
}

/// The name the broker gives the file of suffix `suffix` (`.log`, `.index`, …, with its
/// dot) of the segment based at `offset` (`LogFileUtils.filenamePrefixFromOffset`: the
/// offset in at least 20 digits, zero-padded, after a `-` when negative).
pub fn canonical_segment_name(offset: i64, suffix: &str) -> String {
    if offset < 0 {
        format!("-{:020}{suffix}", offset.unsigned_abs())
    } else {
        format!("{offset:020}{suffix}")
    }
}

/// What `LogLoader.loadSegmentFiles` takes a file for, by the end of its name: an index
/// (`LogFileUtils.isIndexFile`: `.index`, `.timeindex`, `.txnindex`, tested first), else a
/// log (`isLogFile`: `.log`); with that suffix.
pub fn segment_file_role(name: &str) -> Option<(FileKind, &'static str)> {
    [
        (FileKind::Index, ".index"),
        (FileKind::TimeIndex, ".timeindex"),
        (FileKind::TxnIndex, ".txnindex"),
        (FileKind::Log, ".log"),
    ]
    .into_iter()
    .find(|(_, suffix)| name.ends_with(suffix))
}

/// A segment file under a name the broker does not give it (see
/// [`noncanonical_segment_name`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub struct NoncanonicalName {
    /// The offset the load reads in the name (`LogFileUtils.offsetFromFileName`).
    pub offset: i64,
    /// The file the load takes it for ([`segment_file_role`]).
    pub kind: FileKind,
}

/// A name `LogLoader.loadSegmentFiles` reads as a segment file of offset N (it ends in
/// `.log`, `.index`, `.timeindex` or `.txnindex`, and the text before its first `.` parses
/// as a `long`) that is not the name the broker gives that file
/// ([`canonical_segment_name`]), or whose offset is negative (no broker writes one): `5.log`,
/// `+5.log`, `-0.log`, `00000000000000000500.copy.log`, `5.log.index`. The load never reads
/// such a file: for a log it opens the canonical name (`LogSegment.open` →
/// `FileRecords.open`, which creates the file when absent), an index it deletes when the
/// canonical `.log` is missing and otherwise ignores. `None` for a canonical name, a name
/// the load cannot parse ([`unparseable_offset_name`]) and one it does not look at.
pub fn noncanonical_segment_name(name: &str) -> Option<NoncanonicalName> {
    let (kind, suffix) = segment_file_role(name)?;
    let offset = kafka_offset_of_name(name)?;
    (offset < 0 || name != canonical_segment_name(offset, suffix))
        .then_some(NoncanonicalName { offset, kind })
}

/// The order `LogLoader.loadSegmentFiles` sorts a directory's files in (`File.compareTo`
/// of paths in one directory: the names' UTF-16 code units).
pub fn java_name_order(a: &str, b: &str) -> std::cmp::Ordering {
    a.encode_utf16().cmp(b.encode_utf16())
}

/// The step of a partition's load that throws `NumberFormatException` on a regular file
/// named `name` in the partition directory (`None`: the load does not parse it, or parses
/// it). The load parses the text before the first `.` as a number in every name ending in
/// `.snapshot` (the producer-state manager, before `LogLoader.load`), `.cleaned` or
/// `.swap` (the first pass; a `*.deleted` file is deleted there unread, a
/// `*.checkpoint.deleted` one left alone), `.log`, `.index`, `.timeindex` or `.txnindex`
/// (`loadSegmentFiles`). So `notes.log`, `backup.index`, `abc.snapshot` and
/// `00000000000000000000-copy.log` fail the load; `foo.txt`, `x.log.bak`, `x.deleted`,
/// `leader-epoch-checkpoint` and `partition.metadata` are never parsed, and
/// `00000000000000000000.copy.log` parses (offset 0).
pub fn unparseable_offset_name(name: &str) -> Option<OffsetNameStep> {
    let step = if name.ends_with(".snapshot") {
        OffsetNameStep::ProducerSnapshots
    } else if name.ends_with(".deleted") {
        return None;
    } else if name.ends_with(".cleaned") || name.ends_with(".swap") {
        OffsetNameStep::TempFiles
    } else if [".log", ".index", ".timeindex", ".txnindex"]
        .iter()
        .any(|s| name.ends_with(s))
    {
        OffsetNameStep::SegmentFiles
    } else {
        return None;
    };
    // Every suffix holds a '.', so the prefix is always there (no
    // StringIndexOutOfBoundsException): `.log` alone has an empty one.
    let prefix = name.split('.').next().unwrap_or_default();
    (java_parse_long(prefix) == JavaLong::Throws).then_some(step)
}

#[cfg(test)]
mod tests {
    use super::{FileKind, OffsetNameStep as Step, unparseable_offset_name as bad};

    /// `<application.id>-<store>-changelog`, as `ProcessorStateManager.storeChangelogTopic`
    /// names it (the store part may hold dashes too); a name without the application id or
    /// the store, or another suffix, is not one.
    #[test]
    fn streams_changelog_names() {
        use super::is_streams_changelog_name as is;
        assert!(is("wordcount-app-counts-store-changelog"));
        assert!(is("app-KSTREAM-AGGREGATE-STATE-STORE-0000000003-changelog"));
        assert!(is("a-b-changelog"));
        for not in [
            "changelog",
            "-changelog",
            "app-changelog",
            "-store-changelog",
            "app--changelog",
        ] {
            assert!(!is(not), "{not}");
        }
        assert!(!is("app-store-repartition"));
        assert!(!is("app-store-changelog-0"));
    }

    /// `LocalLog.parseTopicPartitionName` reads the partition with `Integer.parseInt`: a
    /// leading `+` and leading zeros are accepted (`orders-+5`, `orders-05` hold partition
    /// 5 of `orders`: a second directory of the partition to the broker); a sign alone, a
    /// number past the `int` range, a space, a non-ASCII digit (not modelled) are not.
    #[test]
    fn partition_numbers_as_integer_parse_int_reads_them() {
        use super::parse_partition_dir_name as parse;
        for (name, topic, partition) in [
            ("orders-5", "orders", 5),
            ("orders-+5", "orders", 5),
            ("orders-05", "orders", 5),
            ("orders--5", "orders-", 5),
            ("orders-+2147483647", "orders", i32::MAX),
            ("orders-+5.0123abcd-delete", "orders", 5),
        ] {
            let (tp, _) = parse(name).unwrap_or_else(|| panic!("{name}"));
            assert_eq!(
                (tp.topic.as_str(), tp.partition),
                (topic, partition),
                "{name}"
            );
        }
        for name in [
            "orders-+",
            "orders-",
            "orders-++5",
            "orders-2147483648",
            "orders- 5",
            "orders-5 ",
            "orders-\u{665}",
            "-5",
        ] {
            assert_eq!(parse(name), None, "{name}");
        }
    }

    /// Names `loadSegmentFiles` reads as a segment file of an offset without being the
    /// broker's name of it (`LogFileUtils.filenamePrefixFromOffset`: 20 digits), and names
    /// that are (or that the load cannot parse, or never reads as segment files).
    #[test]
    fn noncanonical_segment_names() {
        use super::{canonical_segment_name, noncanonical_segment_name as nc};
        for (name, offset, kind) in [
            ("5.log", 5, FileKind::Log),
            ("+5.log", 5, FileKind::Log),
            ("-0.log", 0, FileKind::Log),
            ("000000000000000000005.log", 5, FileKind::Log),
            ("00000000000000000500.copy.log", 500, FileKind::Log),
            ("00000000000000000500.log.log", 500, FileKind::Log),
            ("5.index", 5, FileKind::Index),
            ("5.log.index", 5, FileKind::Index),
            ("00000000000000000005.old.timeindex", 5, FileKind::TimeIndex),
            ("9223372036854775807.txnindex", i64::MAX, FileKind::TxnIndex),
            ("-1.log", -1, FileKind::Log),
            ("-00000000000000000001.log", -1, FileKind::Log),
        ] {
            let n = nc(name).unwrap_or_else(|| panic!("{name}"));
            assert_eq!((n.offset, n.kind), (offset, kind), "{name}");
        }
        for name in [
            "00000000000000000005.log",
            "00000000000000000005.index",
            "09223372036854775807.txnindex",
            "00000000000000000005.snapshot",
            "5.snapshot",
            "notes.log",
            "5.log.swap",
            "5.log.deleted",
            "x.log.bak",
            "\u{661}.log",
        ] {
            assert_eq!(nc(name), None, "{name}");
        }
        assert_eq!(
            canonical_segment_name(5, ".log"),
            "00000000000000000005.log"
        );
        assert_eq!(
            canonical_segment_name(-1, ".log"),
            "-00000000000000000001.log"
        );
        assert_eq!(
            canonical_segment_name(i64::MIN, ".index"),
            "-09223372036854775808.index"
        );
    }

    /// Producer snapshots under any name `ProducerStateManager.listSnapshotFiles` takes
    /// (ending `.snapshot`), at the offset `Long.parseLong` reads before the first `.`.
    #[test]
    fn producer_snapshot_names_read_as_java_reads_them() {
        use super::parse_segment_file_name as parse;
        for (name, offset) in [
            ("00000000000000000005.snapshot", 5),
            ("5.snapshot", 5),
            ("+5.snapshot", 5),
            ("-0.snapshot", 0),
            ("-5.snapshot", -5),
            ("00000000000000000005.copy.snapshot", 5),
            ("5.log.snapshot", 5),
            ("9223372036854775807.snapshot", i64::MAX),
        ] {
            assert_eq!(
                parse(name),
                Some((offset, FileKind::ProducerSnapshot)),
                "{name}"
            );
        }
        for name in [
            "abc.snapshot",
            "+.snapshot",
            ".snapshot",
            "9223372036854775808.snapshot",
            "5.snapshot.bak",
            "\u{661}.snapshot",
        ] {
            assert_eq!(parse(name), None, "{name}");
        }
    }

    /// The names a partition's load throws `NumberFormatException` on, by step, and
    /// those it ignores or parses.
    #[test]
    fn names_the_load_cannot_parse_as_offsets() {
        for (name, step) in [
            ("notes.log", Step::SegmentFiles),
            ("backup.index", Step::SegmentFiles),
            ("x.timeindex", Step::SegmentFiles),
            ("x.txnindex", Step::SegmentFiles),
            (".log", Step::SegmentFiles),
            ("00000000000000000000-copy.log", Step::SegmentFiles),
            ("00000000000000000000 (copy).index", Step::SegmentFiles),
            ("foo.log.index", Step::SegmentFiles),
            ("99999999999999999999.log", Step::SegmentFiles),
            ("+.log", Step::SegmentFiles),
            ("0x10.log", Step::SegmentFiles),
            ("abc.snapshot", Step::ProducerSnapshots),
            ("00000000000000000010-old.snapshot", Step::ProducerSnapshots),
            ("notes.cleaned", Step::TempFiles),
            ("abc.log.swap", Step::TempFiles),
            ("a\u{1b}[31m<b>.log", Step::SegmentFiles),
        ] {
            assert_eq!(bad(name), Some(step), "{name}");
        }
        for name in [
            "00000000000000000000.log",
            "00000000000000000000.copy.log",
            "00000000000000000010.snapshot",
            "00000000000000000010.log.swap",
            "00000000000000000010.log.cleaned",
            "5.log",
            "+5.log",
            "-1.index",
            "-9223372036854775808.log",
            "foo.txt",
            "x.log.bak",
            "notes.log.deleted",
            "abc.snapshot.deleted",
            "00000000000000000000-0.checkpoint.deleted",
            "x.tmp",
            "leader-epoch-checkpoint",
            "partition.metadata",
            "quorum-state",
            "00000000000000000100-0000000001.checkpoint",
            "\u{661}\u{662}.log",
        ] {
            assert_eq!(bad(name), None, "{name}");
        }
    }
}

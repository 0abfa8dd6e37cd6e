//! Tiered storage (KIP-405) on disk: the records of `__remote_log_metadata`, the 3.6–3.7
//! `remote_log_snapshot` file of a user partition, and the file names of the
//! `remote-log-index-cache/` directory and of Kafka's `LocalTieredStorage`.
//!
//! A `__remote_log_metadata` record has a null key; its value is framed as
//! `AbstractApiMessageSerde` writes it (the frame of KRaft metadata records): unsigned
//! varints frame version (1), api key and version, then the message in its flexible
//! encoding. The api keys (0–3) are those of the storage module's own
//! `MetadataRecordType`, which collide with KRaft record types: the decoder is chosen by
//! topic, never by key. The bodies follow Kafka's
//! `storage/src/main/resources/message/RemoteLogSegmentMetadata*Record.json` and
//! `RemotePartitionDeleteMetadataRecord.json`, version 0:
//!
//! * 0 `RemoteLogSegmentMetadataRecord`: segment id (topic name, topic id, partition,
//!   segment uuid), start and end offset, broker id, max and event timestamps, leader
//!   epochs (epoch → first offset), size, custom metadata (nullable bytes), state; tag 0
//!   `TxnIndexEmpty` (4.0+);
//! * 1 `RemoteLogSegmentMetadataUpdateRecord`: segment id, broker id, event timestamp,
//!   custom metadata, state;
//! * 2 `RemotePartitionDeleteMetadataRecord`: topic name, id and partition, broker id,
//!   event timestamp, partition delete state;
//! * 3 `RemoteLogSegmentMetadataSnapshotRecord`: as 0 with the segment uuid alone (only in
//!   `remote_log_snapshot` files).
//!
//! [`decode`] also applies the checks of the classes `RemoteLogMetadataSerde.deserialize`
//! builds (`RemoteLogSegmentMetadata`'s constructor and the others): what they reject,
//! Kafka's reader of the topic rejects too. Views borrow the input; nothing is allocated.

use crate::bytes::Cursor;
use crate::error::FormatError;
use std::fmt;

/// The topic `TopicBasedRemoteLogMetadataManager` writes.
pub const REMOTE_LOG_METADATA_TOPIC: &str = "__remote_log_metadata";

const STRUCTURE: &str = "remote log metadata record";

/// `RemoteLogSegmentState`: a remote segment's lifecycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SegmentState {
    CopyStarted,
    CopyFinished,
    DeleteStarted,
    DeleteFinished,
}

impl SegmentState {
    /// The state of a stored id (`RemoteLogSegmentState.forId`); `None` when unknown.
    pub fn from_id(id: i8) -> Option<SegmentState> {
        Some(match id {
            0 => SegmentState::CopyStarted,
            1 => SegmentState::CopyFinished,
            2 => SegmentState::DeleteStarted,
            3 => SegmentState::DeleteFinished,
            _ => return None,
        })
    }

    /// The enum constant's name, as Kafka prints it.
    pub fn name(self) -> &'static str {
        match self {
            SegmentState::CopyStarted => "COPY_SEGMENT_STARTED",
            SegmentState::CopyFinished => "COPY_SEGMENT_FINISHED",
            SegmentState::DeleteStarted => "DELETE_SEGMENT_STARTED",
            SegmentState::DeleteFinished => "DELETE_SEGMENT_FINISHED",
        }
    }

    /// `RemoteLogSegmentState.isValidTransition`: the first state is COPY_SEGMENT_STARTED;
    /// a state may repeat (retries); copy started → finished or delete started; copy
    /// finished → delete started; delete started → delete finished.
    pub fn is_valid_transition(from: Option<SegmentState>, to: SegmentState) -> bool {
        use SegmentState::*;
        match from {
            None => to == CopyStarted,
            Some(f) if f == to => true,
            Some(CopyStarted) => matches!(to, CopyFinished | DeleteStarted),
            Some(CopyFinished) => to == DeleteStarted,
            Some(DeleteStarted) => to == DeleteFinished,
            Some(DeleteFinished) => false,
        }
    }
}

/// `RemotePartitionDeleteState`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PartitionDeleteState {
    Marked,
    Started,
    Finished,
}

impl PartitionDeleteState {
    /// `RemotePartitionDeleteState.forId`; `None` when unknown.
    pub fn from_id(id: i8) -> Option<PartitionDeleteState> {
        Some(match id {
            0 => PartitionDeleteState::Marked,
            1 => PartitionDeleteState::Started,
            2 => PartitionDeleteState::Finished,
            _ => return None,
        })
    }

    /// The enum constant's name, as Kafka prints it.
    pub fn name(self) -> &'static str {
        match self {
            PartitionDeleteState::Marked => "DELETE_PARTITION_MARKED",
            PartitionDeleteState::Started => "DELETE_PARTITION_STARTED",
            PartitionDeleteState::Finished => "DELETE_PARTITION_FINISHED",
        }
    }
}

/// A user partition: topic name (bytes as stored; Kafka decodes them as UTF-8, replacing
/// what does not decode), topic id, partition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TopicIdPartition<'a> {
    pub topic: &'a [u8],
    pub topic_id: [u8; 16],
    pub partition: i32,
}

/// `RemoteLogSegmentId`: the user partition and the segment's own uuid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SegmentId<'a> {
    pub partition: TopicIdPartition<'a>,
    pub id: [u8; 16],
}

/// The segment's leader epochs (`SegmentLeaderEpochs`: epoch → first offset of the
/// epoch in the segment), as stored. Read once by [`decode`]; iterating never fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeaderEpochs<'a> {
    bytes: &'a [u8],
    count: usize,
}

impl<'a> LeaderEpochs<'a> {
    /// The number of entries stored (duplicates included).
    pub fn len(&self) -> usize {
        self.count
    }
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }
    /// `(epoch, start offset)` in stored order.
    pub fn iter(&self) -> impl Iterator<Item = (i32, i64)> + 'a {
        let mut cur = Cursor::new(self.bytes, 0, STRUCTURE);
        (0..self.count).map_while(move |_| read_epoch_entry(&mut cur).ok())
    }
}

fn read_epoch_entry(cur: &mut Cursor<'_>) -> Result<(i32, i64), FormatError> {
    let epoch = cur.i32("leaderEpoch")?;
    let offset = cur.i64("offset")?;
    cur.tagged_fields(|_, _| {})?;
    Ok((epoch, offset))
}

/// `RemoteLogSegmentMetadataRecord` (api key 0) and, with `segment.partition` unknown,
/// `RemoteLogSegmentMetadataSnapshotRecord` (api key 3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SegmentMetadata<'a> {
    pub segment: SegmentId<'a>,
    pub start_offset: i64,
    pub end_offset: i64,
    pub broker_id: i32,
    pub max_timestamp_ms: i64,
    pub event_timestamp_ms: i64,
    pub leader_epochs: LeaderEpochs<'a>,
    pub segment_size_in_bytes: i32,
    pub custom_metadata: Option<&'a [u8]>,
    /// The stored state id ([`SegmentState::from_id`]).
    pub state: i8,
    /// Tag 0 (Kafka 4.0+): the segment has no transaction index; `false` when absent.
    pub txn_index_empty: bool,
}

/// `RemoteLogSegmentMetadataUpdateRecord` (api key 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SegmentUpdate<'a> {
    pub segment: SegmentId<'a>,
    pub broker_id: i32,
    pub event_timestamp_ms: i64,
    pub custom_metadata: Option<&'a [u8]>,
    pub state: i8,
}

/// `RemotePartitionDeleteMetadataRecord` (api key 2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PartitionDelete<'a> {
    pub partition: TopicIdPartition<'a>,
    pub broker_id: i32,
    pub event_timestamp_ms: i64,
    pub state: i8,
}

/// One decoded record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RemoteLogMetadata<'a> {
    Segment(SegmentMetadata<'a>),
    Update(SegmentUpdate<'a>),
    PartitionDelete(PartitionDelete<'a>),
    /// Api key 3: `segment.partition` is all-zero and meaningless (the record carries the
    /// segment uuid alone).
    Snapshot(SegmentMetadata<'a>),
}

/// What the classes built from a record reject (their constructors' checks).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Invalid {
    NegativeStartOffset(i64),
    EndBeforeStart {
        start: i64,
        end: i64,
    },
    NoLeaderEpochs,
    /// A segment state id `RemoteLogSegmentState.forId` does not know.
    UnknownSegmentState(i8),
    /// A partition delete state id `RemotePartitionDeleteState.forId` does not know.
    UnknownDeleteState(i8),
}

/// Why a value does not deserialize. [`fmt::Display`] gives the message of the exception
/// Kafka's `RemoteLogMetadataSerde.deserialize` throws (what `kafka-dump-log` prints).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RemoteMetadataError {
    /// Frame version 0.
    FrameVersionZero,
    /// A frame version other than 1.
    UnknownFrameVersion(i16),
    /// Frame version, type or version unreadable (`what`) or above `Short.MAX_VALUE`.
    FrameField { what: &'static str, too_large: bool },
    /// An api key outside 0–3.
    UnknownType(i16),
    /// The message does not read at its version (or the version is not 0).
    Message {
        api_key: i16,
        version: i16,
        error: FormatError,
    },
    /// Bytes after the message.
    Garbage { api_key: i16, remaining: usize },
    /// The message reads but its class rejects it.
    Invalid { api_key: i16, invalid: Invalid },
}

impl fmt::Display for RemoteMetadataError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use RemoteMetadataError::*;
        match self {
            FrameVersionZero => f.write_str(
                "Could not deserialize metadata record with frame version 0. Note that upgrades from the preview release of KRaft in 2.8 to newer versions are not supported.",
            ),
            UnknownFrameVersion(v) => write!(
                f,
                "Could not deserialize metadata record due to unknown frame version {v}(only frame version 1 is supported)"
            ),
            FrameField {
                what,
                too_large: false,
            } => write!(f, "Error while reading {what}"),
            FrameField {
                what,
                too_large: true,
            } => write!(f, "Value for {what} was too large."),
            UnknownType(k) => write!(
                f,
                "org.apache.kafka.common.errors.UnsupportedVersionException: Unknown metadata id {k}"
            ),
            Message { api_key, .. } => write!(f, "Failed to deserialize record with type {api_key}"),
            Garbage { api_key, remaining } => {
                write!(f, "Found {remaining} byte(s) of garbage after {api_key}")
            }
            Invalid { invalid, .. } => match invalid {
                self::Invalid::NegativeStartOffset(s) => write!(
                    f,
                    "Unexpected start offset = {s}. StartOffset for a remote segment cannot be negative"
                ),
                self::Invalid::EndBeforeStart { start, end } => write!(
                    f,
                    "Unexpected end offset = {end}. EndOffset for a remote segment cannot be less than startOffset = {start}"
                ),
                self::Invalid::NoLeaderEpochs => {
                    f.write_str("segmentLeaderEpochs can not be null or empty")
                }
                self::Invalid::UnknownSegmentState(_) => f.write_str("state can not be null"),
                // `Objects.requireNonNull(state)` without a message.
                self::Invalid::UnknownDeleteState(_) => f.write_str("null"),
            },
        }
    }
}

impl std::error::Error for RemoteMetadataError {}

/// Decode a `__remote_log_metadata` record value (or a `remote_log_snapshot` entry) as
/// `RemoteLogMetadataSerde.deserialize` does.
pub fn decode(value: &[u8]) -> Result<RemoteLogMetadata<'_>, RemoteMetadataError> {
    let mut cur = Cursor::new(value, 0, STRUCTURE);
    let short = |cur: &mut Cursor<'_>, what: &'static str| -> Result<i16, RemoteMetadataError> {
        let v = cur
            .uvarint(what)
            .map_err(|_| RemoteMetadataError::FrameField {
                what,
                too_large: false,
            })?;
        i16::try_from(v).map_err(|_| RemoteMetadataError::FrameField {
            what,
            too_large: true,
        })
    };
    match short(&mut cur, "frame version")? {
        0 => return Err(RemoteMetadataError::FrameVersionZero),
        1 => {}
        v => return Err(RemoteMetadataError::UnknownFrameVersion(v)),
    }
    let api_key = short(&mut cur, "type")?;
    let version = short(&mut cur, "version")?;
    if !(0..=3).contains(&api_key) {
        return Err(RemoteMetadataError::UnknownType(api_key));
    }
    let message = |error| RemoteMetadataError::Message {
        api_key,
        version,
        error,
    };
    if version != 0 {
        return Err(message(cur.err(
            "version",
            crate::error::Problem::OutOfRange {
                value: version as i64,
            },
        )));
    }
    let record = match api_key {
        0 => RemoteLogMetadata::Segment(read_segment(&mut cur, true).map_err(message)?),
        1 => RemoteLogMetadata::Update(read_update(&mut cur).map_err(message)?),
        2 => RemoteLogMetadata::PartitionDelete(read_delete(&mut cur).map_err(message)?),
        _ => RemoteLogMetadata::Snapshot(read_segment(&mut cur, false).map_err(message)?),
    };
    if cur.remaining() > 0 {
        return Err(RemoteMetadataError::Garbage {
            api_key,
            remaining: cur.remaining(),
        });
    }
    validate(&record).map_err(|invalid| RemoteMetadataError::Invalid { api_key, invalid })?;
    Ok(record)
}

/// The constructors' checks, in the order `RemoteLogMetadataSerde.deserialize` meets them.
fn validate(record: &RemoteLogMetadata<'_>) -> Result<(), Invalid> {
    let state = |s: i8| SegmentState::from_id(s).ok_or(Invalid::UnknownSegmentState(s));
    match record {
        RemoteLogMetadata::Segment(m) => {
            if m.start_offset < 0 {
                return Err(Invalid::NegativeStartOffset(m.start_offset));
            }
            if m.end_offset < m.start_offset {
                return Err(Invalid::EndBeforeStart {
                    start: m.start_offset,
                    end: m.end_offset,
                });
            }
            if m.leader_epochs.is_empty() {
                return Err(Invalid::NoLeaderEpochs);
            }
            state(m.state).map(|_| ())
        }
        RemoteLogMetadata::Snapshot(m) => {
            state(m.state)?;
            if m.leader_epochs.is_empty() {
                return Err(Invalid::NoLeaderEpochs);
            }
            Ok(())
        }
        RemoteLogMetadata::Update(u) => state(u.state).map(|_| ()),
        RemoteLogMetadata::PartitionDelete(d) => PartitionDeleteState::from_id(d.state)
            .map(|_| ())
            .ok_or(Invalid::UnknownDeleteState(d.state)),
    }
}

fn uuid(cur: &mut Cursor<'_>, field: &'static str) -> Result<[u8; 16], FormatError> {
    let b = cur.take(16, field)?;
    let mut out = [0u8; 16];
    out.copy_from_slice(b);
    Ok(out)
}

fn string<'a>(cur: &mut Cursor<'a>, field: &'static str) -> Result<&'a [u8], FormatError> {
    cur.schema_string(true, field)?.ok_or_else(|| {
        cur.err(
            field,
            crate::error::Problem::Invalid("non-nullable field was serialized as null"),
        )
    })
}

fn topic_id_partition<'a>(cur: &mut Cursor<'a>) -> Result<TopicIdPartition<'a>, FormatError> {
    let topic = string(cur, "name")?;
    let topic_id = uuid(cur, "id")?;
    let partition = cur.i32("partition")?;
    cur.tagged_fields(|_, _| {})?;
    Ok(TopicIdPartition {
        topic,
        topic_id,
        partition,
    })
}

fn segment_id<'a>(cur: &mut Cursor<'a>) -> Result<SegmentId<'a>, FormatError> {
    let partition = topic_id_partition(cur)?;
    let id = uuid(cur, "id")?;
    cur.tagged_fields(|_, _| {})?;
    Ok(SegmentId { partition, id })
}

fn leader_epochs<'a>(cur: &mut Cursor<'a>) -> Result<LeaderEpochs<'a>, FormatError> {
    let count = cur
        .schema_array_len(true, "segmentLeaderEpochs")?
        .ok_or_else(|| {
            cur.err(
                "segmentLeaderEpochs",
                crate::error::Problem::Invalid("non-nullable field was serialized as null"),
            )
        })?;
    let rest = cur.rest();
    let start = cur.position();
    for _ in 0..count {
        read_epoch_entry(cur)?;
    }
    Ok(LeaderEpochs {
        bytes: &rest[..cur.position() - start],
        count,
    })
}

/// A boolean tagged field's value (Kafka's `readByte() != 0`); a bad size is an error.
fn tagged_bool(bytes: &[u8]) -> Option<bool> {
    match bytes {
        [b] => Some(*b != 0),
        _ => None,
    }
}

fn read_segment<'a>(cur: &mut Cursor<'a>, full: bool) -> Result<SegmentMetadata<'a>, FormatError> {
    let segment = if full {
        segment_id(cur)?
    } else {
        SegmentId {
            partition: TopicIdPartition {
                topic: &[],
                topic_id: [0; 16],
                partition: -1,
            },
            id: uuid(cur, "segmentId")?,
        }
    };
    let start_offset = cur.i64("startOffset")?;
    let end_offset = cur.i64("endOffset")?;
    let broker_id = cur.i32("brokerId")?;
    let max_timestamp_ms = cur.i64("maxTimestampMs")?;
    let event_timestamp_ms = cur.i64("eventTimestampMs")?;
    let leader_epochs = leader_epochs(cur)?;
    let segment_size_in_bytes = cur.i32("segmentSizeInBytes")?;
    let custom_metadata = cur.schema_bytes(true, "customMetadata")?;
    let state = cur.u8("remoteLogSegmentState")? as i8;
    let mut txn_index_empty = Some(false);
    cur.tagged_fields(|tag, bytes| {
        if tag == 0 {
            txn_index_empty = tagged_bool(bytes);
        }
    })?;
    let txn_index_empty = txn_index_empty.ok_or_else(|| {
        cur.err(
            "txnIndexEmpty",
            crate::error::Problem::Invalid("tagged field is not one byte"),
        )
    })?;
    Ok(SegmentMetadata {
        segment,
        start_offset,
        end_offset,
        broker_id,
        max_timestamp_ms,
        event_timestamp_ms,
        leader_epochs,
        segment_size_in_bytes,
        custom_metadata,
        state,
        txn_index_empty,
    })
}

fn read_update<'a>(cur: &mut Cursor<'a>) -> Result<SegmentUpdate<'a>, FormatError> {
    let segment = segment_id(cur)?;
    let broker_id = cur.i32("brokerId")?;
    let event_timestamp_ms = cur.i64("eventTimestampMs")?;
    let custom_metadata = cur.schema_bytes(true, "customMetadata")?;
    let state = cur.u8("remoteLogSegmentState")? as i8;
    cur.tagged_fields(|_, _| {})?;
    Ok(SegmentUpdate {
        segment,
        broker_id,
        event_timestamp_ms,
        custom_metadata,
        state,
    })
}

fn read_delete<'a>(cur: &mut Cursor<'a>) -> Result<PartitionDelete<'a>, FormatError> {
    let partition = topic_id_partition(cur)?;
    let broker_id = cur.i32("brokerId")?;
    let event_timestamp_ms = cur.i64("eventTimestampMs")?;
    let state = cur.u8("remotePartitionDeleteState")? as i8;
    cur.tagged_fields(|_, _| {})?;
    Ok(PartitionDelete {
        partition,
        broker_id,
        event_timestamp_ms,
        state,
    })
}

// ---------------------------------------------------------------------------------------
// remote_log_snapshot (Kafka 3.6–3.7, `RemoteLogMetadataSnapshotFile`)

/// The file `TopicBasedRemoteLogMetadataManager` of Kafka 3.6–3.7 kept in a user
/// partition's directory (removed by KAFKA-16161).
pub const REMOTE_LOG_SNAPSHOT_FILE: &str = "remote_log_snapshot";

/// Header: int16 version (0), int32 metadata partition, int64 offset in it, int32 number
/// of entries; then per entry an int32 length and a [`decode`]-able snapshot record.
pub const REMOTE_LOG_SNAPSHOT_HEADER: usize = 18;

/// The header of a `remote_log_snapshot` file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RemoteLogSnapshotHeader {
    pub version: i16,
    pub metadata_partition: i32,
    pub metadata_partition_offset: i64,
    pub entries: i32,
}

/// Why a `remote_log_snapshot` file does not read (the words of
/// `RemoteLogMetadataSnapshotFile.read`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SnapshotFileError {
    /// Shorter than the header.
    ShortHeader(usize),
    /// A version other than 0.
    Version(i16),
    /// Fewer than 4 bytes where an entry's length starts.
    ShortLength { position: usize },
    /// An entry's bytes run past the end (or its length is negative).
    ShortEntry { position: usize, length: i32 },
    /// An entry that does not decode, or is not a snapshot record.
    Entry {
        position: usize,
        error: Option<RemoteMetadataError>,
    },
    /// The header's count differs from the entries found.
    Count { expected: i32, found: usize },
}

impl fmt::Display for SnapshotFileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SnapshotFileError::ShortHeader(n) => {
                write!(f, "the file has {n} bytes, fewer than the 18-byte header")
            }
            SnapshotFileError::Version(v) => write!(f, "Unexpected version received: {v}"),
            SnapshotFileError::ShortLength { position } => write!(
                f,
                "Invalid amount of data read for the length of an entry, file may have been corrupted (at byte {position})"
            ),
            SnapshotFileError::ShortEntry { position, length } => write!(
                f,
                "Invalid amount of data read, file may have been corrupted (entry of {length} bytes at byte {position})"
            ),
            SnapshotFileError::Entry {
                position,
                error: Some(e),
            } => write!(f, "entry at byte {position}: {e}"),
            SnapshotFileError::Entry {
                position,
                error: None,
            } => write!(
                f,
                "entry at byte {position} is not a RemoteLogSegmentMetadataSnapshotRecord"
            ),
            SnapshotFileError::Count { expected, found } => write!(
                f,
                "Unexpected entries in the snapshot file. Expected size: {expected}, but found: {found}"
            ),
        }
    }
}

impl std::error::Error for SnapshotFileError {}

/// A `remote_log_snapshot` file: `None` when empty (Kafka reads an empty file as no
/// snapshot), else its header and its entries.
pub fn parse_remote_log_snapshot(
    bytes: &[u8],
) -> Result<Option<(RemoteLogSnapshotHeader, SnapshotEntries<'_>)>, SnapshotFileError> {
    if bytes.is_empty() {
        return Ok(None);
    }
    if bytes.len() < REMOTE_LOG_SNAPSHOT_HEADER {
        return Err(SnapshotFileError::ShortHeader(bytes.len()));
    }
    let header = RemoteLogSnapshotHeader {
        version: i16::from_be_bytes([bytes[0], bytes[1]]),
        metadata_partition: i32::from_be_bytes([bytes[2], bytes[3], bytes[4], bytes[5]]),
        metadata_partition_offset: i64::from_be_bytes(bytes[6..14].try_into().unwrap_or([0; 8])),
        entries: i32::from_be_bytes([bytes[14], bytes[15], bytes[16], bytes[17]]),
    };
    if header.version != 0 {
        return Err(SnapshotFileError::Version(header.version));
    }
    Ok(Some((
        header,
        SnapshotEntries {
            bytes,
            pos: REMOTE_LOG_SNAPSHOT_HEADER,
            found: 0,
            expected: header.entries,
            done: false,
        },
    )))
}

/// The entries of a `remote_log_snapshot` file, each a [`SegmentMetadata`] without its
/// partition. The last item is an error when the entries found differ from the header's
/// count; iteration stops at the first error.
#[derive(Debug, Clone)]
pub struct SnapshotEntries<'a> {
    bytes: &'a [u8],
    pos: usize,
    found: usize,
    expected: i32,
    done: bool,
}

impl<'a> Iterator for SnapshotEntries<'a> {
    type Item = Result<SegmentMetadata<'a>, SnapshotFileError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let rest = &self.bytes[self.pos..];
        if rest.is_empty() {
            self.done = true;
            return (self.found as i64 != self.expected as i64).then_some(Err(
                SnapshotFileError::Count {
                    expected: self.expected,
                    found: self.found,
                },
            ));
        }
        self.done = true;
        let position = self.pos;
        let Some(len) = rest.get(..4) else {
            return Some(Err(SnapshotFileError::ShortLength { position }));
        };
        let length = i32::from_be_bytes([len[0], len[1], len[2], len[3]]);
        let Some(entry) = usize::try_from(length)
            .ok()
            .and_then(|n| rest.get(4..4 + n))
        else {
            return Some(Err(SnapshotFileError::ShortEntry { position, length }));
        };
        match decode(entry) {
            Ok(RemoteLogMetadata::Snapshot(m)) => {
                self.pos += 4 + entry.len();
                self.found += 1;
                self.done = false;
                Some(Ok(m))
            }
            Ok(_) => Some(Err(SnapshotFileError::Entry {
                position,
                error: None,
            })),
            Err(e) => Some(Err(SnapshotFileError::Entry {
                position,
                error: Some(e),
            })),
        }
    }
}

// ---------------------------------------------------------------------------------------
// File names: remote-log-index-cache/ and LocalTieredStorage

mod names;
pub use names::*;

#[cfg(test)]
#[path = "remote_log_tests.rs"]
mod tests;

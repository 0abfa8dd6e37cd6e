//! Parsers of the small text files a broker keeps next to its segments: the generic
//! `CheckpointFile` (`CheckpointFile.CheckpointReadBuffer.read`: offset checkpoints,
//! `leader-epoch-checkpoint`), `partition.metadata`, `meta.properties` and
//! `.kafka_cleanshutdown`.
//!
//! No I/O: every parser takes the file's bytes. Errors name the file kind, the 1-based
//! line number (0 when the problem concerns the whole file, e.g. a missing key) and what
//! was wrong. Lines end with `\n` or `\r\n`.
//!
//! The rules follow what the broker's readers accept, so that "this parser rejects the
//! file" means "the broker would have rejected (or ignored) it too", except where a
//! function's docs say it is stricter.
//!
//! `bootstrap.checkpoint` and KRaft `<offset>-<epoch>.checkpoint` snapshots are NOT text:
//! they are record-batch files (Kafka's `FileRawSnapshotReader`) and are read by the batch
//! layer.

use base64::Engine as _;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};

mod properties;

pub use properties::{
    MetaProperties, parse_meta_properties, parse_meta_properties_unverified, parse_properties,
};

/// Which text file a parser was reading (for error messages).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum TextFileKind {
    /// `recovery-point-offset-checkpoint`
    RecoveryPointOffsetCheckpoint,
    /// `log-start-offset-checkpoint`
    LogStartOffsetCheckpoint,
    /// `replication-offset-checkpoint`
    ReplicationOffsetCheckpoint,
    /// `cleaner-offset-checkpoint`
    CleanerOffsetCheckpoint,
    /// Any other file in the offset-checkpoint format.
    OffsetCheckpoint,
    /// `leader-epoch-checkpoint`
    LeaderEpochCheckpoint,
    /// `partition.metadata`
    PartitionMetadata,
    /// `meta.properties`
    MetaProperties,
    /// `.kafka_cleanshutdown`
    CleanShutdown,
}

impl TextFileKind {
    /// The file name the broker gives this file (`"offset checkpoint"` for the generic kind).
    pub fn file_name(self) -> &'static str {
        match self {
            TextFileKind::RecoveryPointOffsetCheckpoint => "recovery-point-offset-checkpoint",
            TextFileKind::LogStartOffsetCheckpoint => "log-start-offset-checkpoint",
            TextFileKind::ReplicationOffsetCheckpoint => "replication-offset-checkpoint",
            TextFileKind::CleanerOffsetCheckpoint => "cleaner-offset-checkpoint",
            TextFileKind::OffsetCheckpoint => "offset checkpoint",
            TextFileKind::LeaderEpochCheckpoint => "leader-epoch-checkpoint",
            TextFileKind::PartitionMetadata => "partition.metadata",
            TextFileKind::MetaProperties => "meta.properties",
            TextFileKind::CleanShutdown => ".kafka_cleanshutdown",
        }
    }

    /// The kind of a file from its name, for the names the broker uses.
    pub fn from_file_name(name: &str) -> Option<TextFileKind> {
        Some(match name {
            "recovery-point-offset-checkpoint" => TextFileKind::RecoveryPointOffsetCheckpoint,
            "log-start-offset-checkpoint" => TextFileKind::LogStartOffsetCheckpoint,
            "replication-offset-checkpoint" => TextFileKind::ReplicationOffsetCheckpoint,
            "cleaner-offset-checkpoint" => TextFileKind::CleanerOffsetCheckpoint,
            "leader-epoch-checkpoint" => TextFileKind::LeaderEpochCheckpoint,
            "partition.metadata" => TextFileKind::PartitionMetadata,
            "meta.properties" => TextFileKind::MetaProperties,
            ".kafka_cleanshutdown" => TextFileKind::CleanShutdown,
            _ => return None,
        })
    }

    /// True for the four broker-level offset checkpoints (and the generic kind).
    pub fn is_offset_checkpoint(self) -> bool {
        matches!(
            self,
            TextFileKind::RecoveryPointOffsetCheckpoint
                | TextFileKind::LogStartOffsetCheckpoint
                | TextFileKind::ReplicationOffsetCheckpoint
                | TextFileKind::CleanerOffsetCheckpoint
                | TextFileKind::OffsetCheckpoint
        )
    }
}

impl std::fmt::Display for TextFileKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.file_name())
    }
}

/// The exception the broker's reader throws on a file a parser here refuses. It decides
/// what the broker does next: `CheckpointFileWithFailureHandler.read` and
/// `PartitionMetadataFile.read` report the log dir to `LogDirFailureChannel` (which takes
/// it offline) for an `IOException` only; every other exception passes them by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
pub enum JavaThrows {
    /// `IOException`: a line the reader calls malformed, a wrong version, an entry count
    /// that does not hold, bytes that are not UTF-8 (`MalformedInputException`).
    IoException,
    /// `NumberFormatException`: a checkpoint entry's number (`Integer.parseInt`,
    /// `Long.parseLong` in the entry formatters).
    NumberFormatException,
    /// `IllegalArgumentException`: a negative entry count (`new ArrayList<>(count)`), a
    /// `partition.metadata` topic id that is not a UUID (`Uuid.fromString`).
    IllegalArgumentException,
    /// `NullPointerException`: a `partition.metadata` that ends before its second line
    /// (`PartitionMetadataReadBuffer.read` splits the null `readLine` gives).
    NullPointerException,
    /// `RuntimeException`: `meta.properties` refused by `MetaProperties.Builder`.
    RuntimeException,
    /// Nothing reaches the broker: its reader catches every failure
    /// (`CleanShutdownFileHandler.read` gives no broker epoch).
    Caught,
}

impl JavaThrows {
    /// The exception's Java name (`Caught`: `none`).
    pub fn name(self) -> &'static str {
        match self {
            JavaThrows::IoException => "IOException",
            JavaThrows::NumberFormatException => "NumberFormatException",
            JavaThrows::IllegalArgumentException => "IllegalArgumentException",
            JavaThrows::NullPointerException => "NullPointerException",
            JavaThrows::RuntimeException => "RuntimeException",
            JavaThrows::Caught => "none",
        }
    }
}

/// A text file did not parse: which file kind, which line (1-based; 0 = the whole
/// file), what was wrong, and which exception the broker's reader throws on it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}: line {line}: {problem}")]
pub struct CheckpointError {
    /// The kind of file being read.
    pub file: TextFileKind,
    /// 1-based line number; 0 when the problem is not tied to one line.
    pub line: usize,
    /// What was wrong, in words.
    pub problem: String,
    /// The exception the broker's reader throws on the same bytes.
    pub throws: JavaThrows,
}

impl CheckpointError {
    /// An error with the exception the reader of `file` throws for most of its refusals
    /// (`IOException` for the checkpoints and `partition.metadata`, `RuntimeException` for
    /// `meta.properties`; [`CheckpointError::throwing`] names another).
    fn new(file: TextFileKind, line: usize, problem: impl Into<String>) -> Self {
        let throws = match file {
            TextFileKind::MetaProperties => JavaThrows::RuntimeException,
            TextFileKind::CleanShutdown => JavaThrows::Caught,
            _ => JavaThrows::IoException,
        };
        CheckpointError {
            file,
            line,
            problem: problem.into(),
            throws,
        }
    }

    fn throwing(mut self, throws: JavaThrows) -> Self {
        self.throws = throws;
        self
    }
}

// ---------------------------------------------------------------------------------------
// Lines

/// Lines the way Java's `BufferedReader.readLine` returns them: a line ends at `\n`, at
/// `\r\n` or at a lone `\r` (`CheckpointReadBuffer.read` and
/// `PartitionMetadataReadBuffer.read` read with it), the terminator is removed, and a
/// final terminator does not start an empty last line. Yields `(1-based line number,
/// line)`.
fn lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut rest = text;
    let mut n = 0;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let end = rest.find(['\n', '\r']).unwrap_or(rest.len());
        let line = &rest[..end];
        let after = &rest[end..];
        let terminator = match after.as_bytes() {
            [b'\r', b'\n', ..] => 2,
            [] => 0,
            _ => 1,
        };
        rest = &after[terminator..];
        n += 1;
        Some((n, line))
    })
}

fn utf8(bytes: &[u8], file: TextFileKind) -> Result<&str, CheckpointError> {
    std::str::from_utf8(bytes).map_err(|e| {
        let good = &bytes[..e.valid_up_to()];
        let line = good.iter().filter(|&&b| b == b'\n').count() + 1;
        CheckpointError::new(file, line, "text is not valid UTF-8")
    })
}

/// Java's `\s` (the checkpoint readers split entries on `\s+`).
fn is_java_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\x0B' | '\x0C' | '\r')
}

/// The fields of an entry line as Java's `Pattern.compile("\\s+").split(line)` gives
/// them: leading whitespace yields an empty first field, trailing whitespace is dropped.
fn fields(line: &str) -> impl Iterator<Item = &str> {
    let leading_empty = line.starts_with(is_java_space);
    std::iter::once("")
        .filter(move |_| leading_empty)
        .chain(line.split(is_java_space).filter(|f| !f.is_empty()))
}

/// The first code point of each run of ten decimal digits, 0 to 9, that Java's
/// `Character.digit(ch, 10)` reads in a `char` (the Basic Multilingual Plane's `Nd`
/// digits: `٣`, `３`, …; checked against JDK 17). A digit outside it is a surrogate pair in
/// a Java string, which `Character.digit` does not read.
const JAVA_DIGIT_ZEROS: [u32; 37] = [
    0x0030, 0x0660, 0x06F0, 0x07C0, 0x0966, 0x09E6, 0x0A66, 0x0AE6, 0x0B66, 0x0BE6, 0x0C66, 0x0CE6,
    0x0D66, 0x0DE6, 0x0E50, 0x0ED0, 0x0F20, 0x1040, 0x1090, 0x17E0, 0x1810, 0x1946, 0x19D0, 0x1A80,
    0x1A90, 0x1B50, 0x1BB0, 0x1C40, 0x1C50, 0xA620, 0xA8D0, 0xA900, 0xA9D0, 0xA9F0, 0xAA50, 0xABF0,
    0xFF10,
];

/// `s` read as Java's `Integer.parseInt` / `Long.parseLong` read it: as Rust's `parse`
/// (an optional `+` or `-`, then digits, in range), except that every decimal digit Java
/// reads counts ([`JAVA_DIGIT_ZEROS`]), not only ASCII ones.
pub(crate) fn java_int<T: std::str::FromStr>(s: &str) -> Result<T, T::Err> {
    if s.is_ascii() {
        return s.parse::<T>();
    }
    let ascii: String = s
        .chars()
        .map(|c| {
            let u = u32::from(c);
            JAVA_DIGIT_ZEROS
                .iter()
                .find(|&&z| (z..z + 10).contains(&u))
                .and_then(|&z| char::from_digit(u - z, 10))
                .unwrap_or(c)
        })
        .collect();
    ascii.parse::<T>()
}

fn parse_int<T: std::str::FromStr>(
    s: &str,
    file: TextFileKind,
    line: usize,
    what: &str,
) -> Result<T, CheckpointError> {
    java_int::<T>(s)
        .map_err(|_| CheckpointError::new(file, line, format!("{what} {s:?} is not an integer")))
}

// ---------------------------------------------------------------------------------------
// Generic CheckpointFile

/// Parse a generic `CheckpointFile` (`CheckpointReadBuffer.read`): a version line, a count line, then exactly
/// `count` entry lines, each given to `entry` (which returns the exception its formatter
/// throws and the problem in words).
///
/// An empty file, or one holding only the version line, has no entries (as in Kafka).
/// The version must equal `expected_version`; a count different from the number of entry
/// lines is an error (both too few and too many).
pub fn parse_checkpoint_file<T>(
    bytes: &[u8],
    file: TextFileKind,
    expected_version: i32,
    mut entry: impl FnMut(&str) -> Result<T, (JavaThrows, String)>,
) -> Result<Vec<T>, CheckpointError> {
    let text = utf8(bytes, file)?;
    let mut it = lines(text);
    let Some((n, version_line)) = it.next() else {
        return Ok(Vec::new());
    };
    let version: i32 = parse_int(version_line, file, n, "version")?;
    if version != expected_version {
        return Err(CheckpointError::new(
            file,
            n,
            format!("unrecognised version {version} (expected {expected_version})"),
        ));
    }
    let Some((n, count_line)) = it.next() else {
        return Ok(Vec::new());
    };
    let count: i32 = parse_int(count_line, file, n, "entry count")?;
    if count < 0 {
        // `new ArrayList<>(count)` refuses a negative capacity.
        return Err(
            CheckpointError::new(file, n, format!("negative entry count {count}"))
                .throwing(JavaThrows::IllegalArgumentException),
        );
    }
    let mut out = Vec::with_capacity((count as usize).min(4096));
    for (n, line) in it {
        let v = entry(line).map_err(|(throws, why)| {
            CheckpointError::new(file, n, format!("malformed line {line:?}: {why}"))
                .throwing(throws)
        })?;
        out.push(v);
    }
    if out.len() != count as usize {
        return Err(CheckpointError::new(
            file,
            0,
            format!("expected {count} entries but found {}", out.len()),
        ));
    }
    Ok(out)
}

/// An entry formatter's number that does not parse (`Integer.parseInt`/`Long.parseLong`).
fn nfe(why: String) -> (JavaThrows, String) {
    (JavaThrows::NumberFormatException, why)
}

/// One entry of an offset checkpoint: `<topic> <partition> <offset>`
/// (`OffsetCheckpointFile.Formatter`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize)]
pub struct OffsetCheckpointEntry {
    /// Topic name (cannot contain whitespace).
    pub topic: String,
    /// Partition number.
    pub partition: i32,
    /// The checkpointed offset (recovery point, log start, high watermark or first dirty
    /// offset, depending on the file).
    pub offset: i64,
}

/// Parse one of the four broker-level offset checkpoints (version 0, entries split on
/// any whitespace). Entry order is kept as in the file (it is hash-map order). An entry
/// line with leading whitespace has an empty first field, as Java's split gives it: with
/// two more fields it is the entry of topic `""` (`OffsetCheckpointFile.Formatter.fromString`
/// accepts it; no partition is ever looked up under that name).
pub fn parse_offset_checkpoint(
    bytes: &[u8],
    file: TextFileKind,
) -> Result<Vec<OffsetCheckpointEntry>, CheckpointError> {
    parse_checkpoint_file(bytes, file, 0, |line| {
        let f: Vec<&str> = fields(line).collect();
        let [topic, partition, offset] = f.as_slice() else {
            return Err((
                JavaThrows::IoException,
                format!("expected 3 fields, found {}", f.len()),
            ));
        };
        let partition = java_int::<i32>(partition)
            .map_err(|_| nfe(format!("partition {partition:?} is not an int32")))?;
        let offset = java_int::<i64>(offset)
            .map_err(|_| nfe(format!("offset {offset:?} is not an int64")))?;
        Ok(OffsetCheckpointEntry {
            topic: (*topic).to_owned(),
            partition,
            offset,
        })
    })
}

/// One entry of `leader-epoch-checkpoint`: the first offset written under `epoch`
/// (`LeaderEpochCheckpointFile.Formatter`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
pub struct EpochEntry {
    /// Leader epoch.
    pub epoch: i32,
    /// First offset written under that epoch.
    pub start_offset: i64,
}

/// Parse `leader-epoch-checkpoint` (version 0, `epoch startOffset` lines). The order is
/// kept as in the file; checking that it ascends is the caller's business (a finding,
/// not a parse error).
pub fn parse_leader_epoch_checkpoint(bytes: &[u8]) -> Result<Vec<EpochEntry>, CheckpointError> {
    parse_checkpoint_file(bytes, TextFileKind::LeaderEpochCheckpoint, 0, |line| {
        let f: Vec<&str> = fields(line).collect();
        let [epoch, offset] = f.as_slice() else {
            return Err((
                JavaThrows::IoException,
                format!("expected 2 fields, found {}", f.len()),
            ));
        };
        let epoch =
            java_int::<i32>(epoch).map_err(|_| nfe(format!("epoch {epoch:?} is not an int32")))?;
        let start_offset = java_int::<i64>(offset)
            .map_err(|_| nfe(format!("start offset {offset:?} is not an int64")))?;
        Ok(EpochEntry {
            epoch,
            start_offset,
        })
    })
}

// ---------------------------------------------------------------------------------------
// UUIDs

/// URL-safe base64 as lenient as Java's `Base64.getUrlDecoder()` (which `Uuid.fromString`
/// uses): `=` padding optional, non-zero unused bits in the last symbol ignored. Real
/// data needs the latter: Confluent's sample cluster id `MkU3OEVBNTcwNTJENDM2Qk` ends in
/// such a symbol.
const URL_SAFE_ANY_PAD: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::URL_SAFE,
    GeneralPurposeConfig::new()
        .with_decode_padding_mode(DecodePaddingMode::Indifferent)
        .with_decode_allow_trailing_bits(true),
);

/// The all-zero UUID (`AAAAAAAAAAAAAAAAAAAAAA`; also `MIGRATING` as a directory id).
pub const ZERO_UUID: [u8; 16] = [0; 16];
/// UUID (0, 1): the KRaft metadata topic's id, and `UNASSIGNED` as a directory id.
pub const METADATA_TOPIC_ID: [u8; 16] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
/// UUID (0, 2): `LOST` as a directory id.
pub const LOST_DIR_ID: [u8; 16] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2];

/// Decode a Kafka `Uuid` text (22-char URL-safe base64 of 16 bytes, most significant
/// half first). Returns the problem in words.
pub fn decode_uuid(text: &str) -> Result<[u8; 16], String> {
    if text.len() > 24 {
        return Err(format!("UUID text {text:?} is longer than 24 characters"));
    }
    let bytes = URL_SAFE_ANY_PAD
        .decode(text)
        .map_err(|e| format!("UUID text {text:?} is not URL-safe base64: {e}"))?;
    <[u8; 16]>::try_from(bytes.as_slice()).map_err(|_| {
        format!(
            "UUID text {text:?} decodes to {} bytes, not 16",
            bytes.len()
        )
    })
}

/// The text form of a Kafka `Uuid` (22-char URL-safe base64, no padding).
pub fn encode_uuid(id: &[u8; 16]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(id)
}

// ---------------------------------------------------------------------------------------
// partition.metadata (`PartitionMetadataFile.read`)

/// The content of `partition.metadata`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PartitionMetadata {
    /// File version (0 today; any value ≥ 0 is accepted, as by the broker).
    pub version: i32,
    /// The topic UUID, 16 bytes (never all zero).
    pub topic_id: [u8; 16],
}

impl PartitionMetadata {
    /// The topic id as Kafka prints it.
    pub fn topic_id_string(&self) -> String {
        encode_uuid(&self.topic_id)
    }

    /// True for the KRaft metadata topic's reserved id `AAAAAAAAAAAAAAAAAAAAAQ`.
    pub fn is_metadata_topic(&self) -> bool {
        self.topic_id == METADATA_TOPIC_ID
    }
}

/// A `partition.metadata` line split as `PartitionMetadataReadBuffer.read` splits it:
/// Java's `Pattern.compile(":\\s+").split(line)` — at every `:` followed by whitespace
/// (the whitespace consumed), a leading empty part kept, trailing empty parts dropped
/// (all of them when every part is empty), the whole line when nothing matches.
fn split_colon_space(line: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while let Some(at) = line[i..].find(':').map(|k| i + k) {
        let after = &line[at + 1..];
        let ws = after.len() - after.trim_start_matches(is_java_space).len();
        if ws == 0 {
            i = at + 1;
            continue;
        }
        parts.push(&line[start..at]);
        start = at + 1 + ws;
        i = start;
    }
    if parts.is_empty() {
        return vec![line];
    }
    parts.push(&line[start..]);
    while parts.last() == Some(&"") {
        parts.pop();
    }
    parts
}

/// Parse `partition.metadata` as `PartitionMetadataReadBuffer.read` does: two lines, each
/// split on `:` + whitespace into exactly two parts, the first never looked at (the
/// broker writes `version` and `topic_id`, and reads any key), the second untrimmed: a
/// version (`Integer.parseInt`, ≥ 0), then a topic id (`Uuid.fromString`, not all zero).
/// No trailing newline is needed, and lines after the second are not read (their bytes
/// must still be UTF-8: the reader decodes the whole small file).
pub fn parse_partition_metadata(bytes: &[u8]) -> Result<PartitionMetadata, CheckpointError> {
    const F: TextFileKind = TextFileKind::PartitionMetadata;
    let text = utf8(bytes, F)?;
    let mut it = lines(text);
    let Some((n, line)) = it.next() else {
        return Err(CheckpointError::new(F, 1, "empty file (no version line)")
            .throwing(JavaThrows::NullPointerException));
    };
    let version = match split_colon_space(line).as_slice() {
        [_, v] => parse_int::<i32>(v, F, n, "version")?,
        _ => {
            return Err(CheckpointError::new(
                F,
                n,
                format!("expected \"version: <int>\", found {line:?}"),
            ));
        }
    };
    if version < 0 {
        return Err(CheckpointError::new(
            F,
            n,
            format!("invalid version {version}"),
        ));
    }
    let Some((n, line)) = it.next() else {
        return Err(CheckpointError::new(F, 2, "missing topic_id line")
            .throwing(JavaThrows::NullPointerException));
    };
    let topic_id = match split_colon_space(line).as_slice() {
        [_, v] => decode_uuid(v).map_err(|why| {
            CheckpointError::new(F, n, why).throwing(JavaThrows::IllegalArgumentException)
        })?,
        _ => {
            return Err(CheckpointError::new(
                F,
                n,
                format!("expected \"topic_id: <uuid>\", found {line:?}"),
            ));
        }
    };
    if topic_id == ZERO_UUID {
        return Err(CheckpointError::new(
            F,
            n,
            "topic id is the all-zero UUID (rejected by the broker)",
        ));
    }
    Ok(PartitionMetadata { version, topic_id })
}

// ---------------------------------------------------------------------------------------
// .kafka_cleanshutdown (`CleanShutdownFileHandler.read`)

/// The content of `.kafka_cleanshutdown`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CleanShutdown {
    /// The JSON `version`; `None` for the empty file of brokers before 3.7.
    pub version: Option<i32>,
    /// The broker epoch at shutdown (`brokerEpoch`), when the file holds JSON.
    pub broker_epoch: Option<i64>,
}

/// Parse `.kafka_cleanshutdown`: empty (or whitespace only), or JSON
/// `{"version":0,"brokerEpoch":N}`. Unknown JSON fields are ignored; a missing or
/// non-integer `brokerEpoch`, or a version other than 0, is an error.
pub fn parse_clean_shutdown(bytes: &[u8]) -> Result<CleanShutdown, CheckpointError> {
    const F: TextFileKind = TextFileKind::CleanShutdown;
    let text = utf8(bytes, F)?;
    if text.trim().is_empty() {
        return Ok(CleanShutdown {
            version: None,
            broker_epoch: None,
        });
    }
    let v: serde_json::Value = serde_json::from_str(text)
        .map_err(|e| CheckpointError::new(F, e.line(), format!("not JSON: {e}")))?;
    let obj = v
        .as_object()
        .ok_or_else(|| CheckpointError::new(F, 1, "JSON is not an object"))?;
    let version = obj
        .get("version")
        .and_then(|v| v.as_i64())
        .ok_or_else(|| CheckpointError::new(F, 1, "missing or non-integer \"version\""))?;
    if version != 0 {
        return Err(CheckpointError::new(
            F,
            1,
            format!("unknown version {version} (expected 0)"),
        ));
    }
    let broker_epoch = obj
        .get("brokerEpoch")
        .and_then(|v| v.as_i64())
        .ok_or_else(|| CheckpointError::new(F, 1, "missing or non-integer \"brokerEpoch\""))?;
    Ok(CleanShutdown {
        version: Some(0),
        broker_epoch: Some(broker_epoch),
    })
}

#[cfg(test)]
mod kafka_cases;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_like_readline() {
        let v: Vec<_> = lines("a\r\nb\n").collect();
        assert_eq!(v, vec![(1, "a"), (2, "b")]);
        assert_eq!(lines("").count(), 0);
        let v: Vec<_> = lines("a\n\n").collect();
        assert_eq!(v, vec![(1, "a"), (2, "")]);
    }

    #[test]
    fn fields_like_java_split() {
        assert_eq!(fields("a  b\tc ").collect::<Vec<_>>(), vec!["a", "b", "c"]);
        assert_eq!(fields(" a b").collect::<Vec<_>>(), vec!["", "a", "b"]);
    }

    #[test]
    fn uuid_decoding_is_as_lenient_as_java() {
        let a = decode_uuid("MkU3OEVBNTcwNTJENDM2Qk").unwrap();
        assert_eq!(decode_uuid("MkU3OEVBNTcwNTJENDM2Qg"), Ok(a));
        assert_eq!(decode_uuid("MkU3OEVBNTcwNTJENDM2Qg=="), Ok(a));
        assert!(decode_uuid("MkU3OEVBNTcwNTJENDM2").is_err());
        assert!(decode_uuid("MkU3OEVBNTcwNTJENDM2Qk+").is_err());
        assert_eq!(encode_uuid(&METADATA_TOPIC_ID), "AAAAAAAAAAAAAAAAAAAAAQ");
    }
}

//! `quorum-state` as a KRaft node's start reads it: `FileQuorumStateStore.readStateFromFile`
//! (the first line, Jackson's `ObjectMapper.readTree`, `data_version`), then the generated
//! `QuorumStateDataJsonConverter.read` (every field of the file's version mandatory, each
//! of its JSON type), then `ElectionState.fromQuorumStateData`. What any of them throws
//! stops the start (`KafkaRaftClient.initialize` → `QuorumState.initialize`; nothing
//! catches it).

use super::load::QuorumState;
use serde_json::{Map, Value};

/// Parse `quorum-state` as the start reads it ([`quorum_state_failure`] says why not):
/// `None` when it throws — nothing is taken from such a file. Unknown fields are ignored.
pub fn parse_quorum_state(text: &[u8]) -> Option<QuorumState> {
    let v = quorum_state_json(text).ok()?;
    let int = |k: &str| v.get(k).and_then(|x| x.as_i64()).map(|x| x as i32);
    Some(QuorumState {
        leader_id: int("leaderId"),
        leader_epoch: int("leaderEpoch"),
        voted_id: int("votedId"),
    })
}

/// Why the start throws on an existing `quorum-state` of contents `text`, as the exception
/// and message the node's start fails with (`None`: it reads the file;
/// `FileQuorumStateStoreTest.testCantReadVersionQuorumState`).
pub fn quorum_state_failure(text: &[u8]) -> Option<String> {
    quorum_state_json(text).err()
}

/// A field's JSON type in `QuorumStateData.json`, as the generated reader checks it.
#[derive(Clone, Copy)]
enum Ty {
    /// `MessageUtil.jsonNodeToInt`: an integer within an int (anything else's text fails
    /// `Integer.parseInt`).
    Int32,
    /// `MessageUtil.jsonNodeToLong`: an integer within a long.
    Int64,
    /// Textual, else `RuntimeException`.
    Str,
    /// Textual, then `Uuid.fromString`: base64url of 16 bytes, at most 24 characters.
    Uuid,
    /// An array of `Voter { voterId: int32 }` (nullable at version 0; a null list throws
    /// later, in `ElectionState.fromQuorumStateData`'s stream over it).
    Voters,
}

/// Every field of the schema, with the versions it is mandatory at (bit `1 << version`).
/// The reader reads a present field whatever the version.
const FIELDS: [(&str, Ty, u8); 7] = [
    ("clusterId", Ty::Str, 0b01),
    ("leaderId", Ty::Int32, 0b11),
    ("leaderEpoch", Ty::Int32, 0b11),
    ("votedId", Ty::Int32, 0b11),
    ("votedDirectoryId", Ty::Uuid, 0b10),
    ("appliedOffset", Ty::Int64, 0b01),
    ("currentVoters", Ty::Voters, 0b01),
];

const IO: &str = "UncheckedIOException: Error while reading the Quorum status from the file";

/// `quorum-state`'s first line as the start checks it, or what it throws.
fn quorum_state_json(text: &[u8]) -> Result<Map<String, Value>, String> {
    if text.is_empty() {
        return Err(format!("{IO} (EOFException: File ended prematurely.)"));
    }
    let line = text
        .split(|&b| b == b'\n' || b == b'\r')
        .next()
        .unwrap_or_default();
    // `readTree` reads the first value and ignores what follows it on the line
    // (Jackson 2: `FAIL_ON_TRAILING_TOKENS` is off by default).
    let first = serde_json::Deserializer::from_slice(line)
        .into_iter::<Value>()
        .next();
    let v = match first {
        Some(Ok(v)) => v,
        Some(Err(e)) => return Err(format!("{IO} (the first line is not JSON: {e})")),
        None => return Err(format!("{IO} (IOException: the first line is empty)")),
    };
    let Value::Object(m) = v else {
        return Err(format!(
            "{IO} (IOException: the first line is not a JSON object)"
        ));
    };
    let version = match m.get("data_version") {
        None => return Err(format!("{IO} (IOException: no data_version field)")),
        Some(v) => short_value(v, line),
    };
    if !(0..=1).contains(&version) {
        return Err(format!(
            "IllegalStateException: data_version ({version}) is not within the min (0) and max (1) supported version"
        ));
    }
    for (name, ty, mandatory) in FIELDS {
        match m.get(name) {
            None if mandatory & (1 << version) != 0 => {
                return Err(format!(
                    "RuntimeException: QuorumStateData: unable to locate field '{name}', which is mandatory in version {version}"
                ));
            }
            None => {}
            Some(v) => check_type(name, ty, v, version)?,
        }
    }
    Ok(m)
}

/// `JsonNode.shortValue` of `data_version`: a number cast to Java's short (an integer's
/// low 16 bits, a `BigIntegerNode`'s too; a double saturated to an int first), anything
/// else 0. An integer past 64 bits, which `serde_json` reads as a double, is taken from
/// the line's text.
fn short_value(v: &Value, line: &[u8]) -> i16 {
    let Value::Number(n) = v else {
        return 0;
    };
    if let Some(i) = n.as_i64() {
        return i as i16;
    }
    if let Some(u) = n.as_u64() {
        return u as i16;
    }
    if let Some(bits) = top_level_literal(line, b"data_version").and_then(integer_low_bits) {
        return bits;
    }
    n.as_f64().map_or(0, |f| f as i32 as i16)
}

/// The low 16 bits of an integer literal (`-?[0-9]+`), as `BigInteger.shortValue` keeps
/// them; `None` for any other literal (a double).
fn integer_low_bits(lit: &[u8]) -> Option<i16> {
    let (neg, digits) = match lit.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, lit),
    };
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let low = (digits.iter()).fold(0u16, |v, d| {
        v.wrapping_mul(10).wrapping_add(u16::from(d - b'0'))
    });
    Some(if neg { low.wrapping_neg() } else { low } as i16)
}

/// The raw text of the last value of `key` in the top-level object `line` (a tree keeps
/// the last of duplicate keys), outside strings and nested values.
fn top_level_literal<'a>(line: &'a [u8], key: &[u8]) -> Option<&'a [u8]> {
    let (mut depth, mut at, mut found) = (0usize, 0usize, None);
    while at < line.len() {
        match line[at] {
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth = depth.saturating_sub(1),
            b'"' => {
                let start = at + 1;
                at = start;
                while at < line.len() && line[at] != b'"' {
                    at += if line[at] == b'\\' { 2 } else { 1 };
                }
                let name = line.get(start..at)?;
                let mut k = at + 1;
                while line.get(k).is_some_and(u8::is_ascii_whitespace) {
                    k += 1;
                }
                if depth == 1 && name == key && line.get(k) == Some(&b':') {
                    k += 1;
                    while line.get(k).is_some_and(u8::is_ascii_whitespace) {
                        k += 1;
                    }
                    let end = (k..line.len())
                        .find(|&e| {
                            matches!(line[e], b',' | b'}' | b']') || line[e].is_ascii_whitespace()
                        })
                        .unwrap_or(line.len());
                    found = Some(&line[k..end]);
                }
            }
            _ => {}
        }
        at += 1;
    }
    found
}

/// What the generated reader (and `ElectionState.fromQuorumStateData`) throws on field
/// `name` of JSON value `v`.
fn check_type(name: &str, ty: Ty, v: &Value, version: i16) -> Result<(), String> {
    let number = |e: &str| {
        Err(format!(
            "NumberFormatException: QuorumStateData: {e} ({name}: {v})"
        ))
    };
    match ty {
        Ty::Int32 => match v.as_i64().map(i32::try_from) {
            Some(Ok(_)) => Ok(()),
            _ if v.is_string() => number("expected an integer or string type, but got STRING"),
            _ => number("failed to parse number"),
        },
        Ty::Int64 => match v {
            Value::Number(n) if n.as_i64().is_some() => Ok(()),
            Value::String(_) => number("expected an integer or string type, but got STRING"),
            _ => number("failed to parse number"),
        },
        Ty::Str if v.is_string() => Ok(()),
        Ty::Str => Err(format!(
            "RuntimeException: QuorumStateData expected a string type, but got {} ({name})",
            node_type(v)
        )),
        Ty::Uuid => match v.as_str() {
            None => Err(format!(
                "RuntimeException: QuorumStateData expected a JSON string type, but got {} ({name})",
                node_type(v)
            )),
            Some(s) if uuid_bytes(s) == Some(16) => Ok(()),
            Some(s) => Err(format!(
                "IllegalArgumentException: Input string `{s}` is not a base64-encoded UUID of 16 bytes ({name})"
            )),
        },
        Ty::Voters => match v {
            Value::Null => Err(
                "NullPointerException: ElectionState.fromQuorumStateData streams a null currentVoters"
                    .into(),
            ),
            Value::Array(voters) => voters.iter().try_for_each(|e| match e.get("voterId") {
                Some(id) => check_type("voterId", Ty::Int32, id, version),
                None if version == 0 => Err(
                    "RuntimeException: Voter: unable to locate field 'voterId', which is mandatory in version 0"
                        .into(),
                ),
                None => Ok(()),
            }),
            _ => Err(format!(
                "RuntimeException: QuorumStateData expected a JSON array, but got {} ({name})",
                node_type(v)
            )),
        },
    }
}

/// Jackson's node type name of `v`.
fn node_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "NULL",
        Value::Bool(_) => "BOOLEAN",
        Value::Number(_) => "NUMBER",
        Value::String(_) => "STRING",
        Value::Array(_) => "ARRAY",
        Value::Object(_) => "OBJECT",
    }
}

/// How many bytes `Uuid.fromString` decodes `s` to (`None`: it throws first: longer than
/// 24 characters, or not base64url — `Base64.getUrlDecoder`, padding optional).
fn uuid_bytes(s: &str) -> Option<usize> {
    use base64::Engine as _;
    use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
    if s.len() > 24 {
        return None;
    }
    let engine = GeneralPurpose::new(
        &base64::alphabet::URL_SAFE,
        GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
    );
    engine.decode(s).ok().map(|b| b.len())
}

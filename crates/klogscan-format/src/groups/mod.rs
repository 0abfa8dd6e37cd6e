//! Records of the coordinators' internal topics: `__consumer_offsets` (the group
//! coordinator: offsets, classic, consumer, share and streams groups) and
//! `__share_group_state` (the share coordinator), every record type and value version,
//! flexible versions and tagged fields included.
//!
//! [`decode`] gives a zero-copy value tree (for the dump and the group replay),
//! [`validate`] runs the same reader without building anything (rule 32 in `scan`).
//! Both follow Kafka's `CoordinatorRecordSerde.deserialize`: key = int16 type + key
//! body; value = int16 version + body, null for a tombstone; a key type without a
//! schema is an *unknown type* (Kafka's loader skips it), not an error.
//!
//! Kafka reads no further than the fields it knows: bytes after the last field are
//! ignored, as here.

pub mod reader;
pub mod schema;

pub use reader::{DecodeError, Part, StructVal, Val, Why, camel};
pub use schema::{CONSUMER_OFFSETS, RecordType, SHARE_GROUP_STATE, Schema, Status};

use reader::Reader;

/// The group coordinator's topic.
pub const CONSUMER_OFFSETS_TOPIC: &str = "__consumer_offsets";
/// The share coordinator's topic.
pub const SHARE_GROUP_STATE_TOPIC: &str = "__share_group_state";

/// Which coordinator topic a record belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Topic {
    ConsumerOffsets,
    ShareGroupState,
}

impl Topic {
    /// The record types of the topic.
    pub fn table(self) -> &'static [RecordType] {
        match self {
            Topic::ConsumerOffsets => CONSUMER_OFFSETS,
            Topic::ShareGroupState => SHARE_GROUP_STATE,
        }
    }
}

/// A decoded record.
#[derive(Debug, Clone)]
pub struct Decoded<'a> {
    pub rtype: &'static RecordType,
    pub key: StructVal<'a>,
    /// `(version, value)`; `None` for a tombstone.
    pub value: Option<(i16, StructVal<'a>)>,
}

impl PartialEq for Decoded<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.rtype.id == other.rtype.id && self.key == other.key && self.value == other.value
    }
}

/// What a record is.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome<'a> {
    Record(Decoded<'a>),
    /// A key type with no schema: Kafka's loader skips it with a warning. The record is
    /// kept raw.
    UnknownType {
        id: i16,
        key: &'a [u8],
        value: Option<&'a [u8]>,
    },
}

/// The key type of a record (`None` when the key is shorter than 2 bytes).
pub fn key_type(key: &[u8]) -> Option<i16> {
    (key.len() >= 2).then(|| i16::from_be_bytes([key[0], key[1]]))
}

/// The value schema of `rt` at `version`: type 0 (legacy offset commit) defines only
/// version 0 since Kafka 4.0; values 1–4 under a type-0 key, which 3.x read with the
/// offset-commit schema, are read with it here too.
fn value_schema(topic: Topic, rt: &'static RecordType, version: i16) -> &'static Schema {
    if topic == Topic::ConsumerOffsets && rt.id == 0 && version > 0 {
        return &CONSUMER_OFFSETS[1].value;
    }
    &rt.value
}

fn run<'a>(
    topic: Topic,
    key: Option<&'a [u8]>,
    value: Option<&'a [u8]>,
    build: bool,
) -> Result<Outcome<'a>, DecodeError> {
    let key = key.ok_or(DecodeError {
        part: Part::Key,
        version: 0,
        schema: "key",
        field: "key",
        position: 0,
        why: Why::MissingKey,
    })?;
    let mut k = Reader::new(key, Part::Key, build);
    let t = k.version("key")?;
    let Some(rt) = schema::lookup(topic.table(), t) else {
        return Ok(Outcome::UnknownType { id: t, key, value });
    };
    let key_val = {
        // Keys are read at version 0, whatever their type.
        let mut kv = k;
        kv.message(&rt.key, 0).map_err(|mut e| {
            e.version = t;
            e
        })?
    };
    let value = match value {
        None => None,
        Some(v) => {
            let mut r = Reader::new(v, Part::Value, build);
            let version = r.version(rt.value.name)?;
            let schema = value_schema(topic, rt, version);
            // The version is checked against the type's range before the value is read
            // (`CoordinatorRecordSerde.deserialize`, KAFKA-18672).
            if version < 0 || version > schema.max_version {
                return Err(DecodeError {
                    part: Part::Value,
                    version,
                    schema: schema.name,
                    field: "version",
                    position: 0,
                    why: Why::UnknownRecordVersion { record_type: t },
                });
            }
            Some((version, r.message(schema, version)?))
        }
    };
    Ok(Outcome::Record(Decoded {
        rtype: rt,
        key: key_val,
        value,
    }))
}

/// Decode a record of `topic` into a value tree.
pub fn decode<'a>(
    topic: Topic,
    key: Option<&'a [u8]>,
    value: Option<&'a [u8]>,
) -> Result<Outcome<'a>, DecodeError> {
    run(topic, key, value, true)
}

/// Check that a record of `topic` deserializes, building nothing: `Ok(Some(t))` for a key
/// type `t` without a schema, `Ok(None)` for a record that reads.
pub fn validate(
    topic: Topic,
    key: Option<&[u8]>,
    value: Option<&[u8]>,
) -> Result<Option<i16>, DecodeError> {
    match run(topic, key, value, false)? {
        Outcome::UnknownType { id, .. } => Ok(Some(id)),
        Outcome::Record(_) => Ok(None),
    }
}

/// Read a version-prefixed message of `schema` (the consumer protocol's embedded
/// subscription and assignment) at the version its bytes name, as the dump tool's
/// `OffsetsMessageParser` does (a version the schema lacks is an error there too).
pub fn decode_embedded<'a>(
    schema: &'static Schema,
    bytes: &'a [u8],
) -> Result<(i16, StructVal<'a>), DecodeError> {
    let mut r = Reader::new(bytes, Part::Value, true);
    let v = r.version(schema.name)?;
    Ok((v, r.message(schema, v)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kafka_error_messages() {
        // ConsumerGroupMetadataKey with the bytes of an empty ConsumerGroupMemberMetadataValue
        // (DumpLogSegmentsTest): a tag 1 of 536870911 bytes.
        let key = [0u8, 3, 0, 5, b'g', b'r', b'o', b'u', b'p'];
        let value = [0u8, 0, 1, 1, 1, 1, 1, 1, 0xff, 0xff, 0xff, 0xff, 1, 0];
        let e = decode(Topic::ConsumerOffsets, Some(&key), Some(&value)).unwrap_err();
        assert_eq!(
            e.kafka_message(),
            "Could not read record with version 0 from value's buffer due to: Error reading byte array of 536870911 byte(s): only 1 byte(s) available."
        );
        // ShareUpdateKey with an empty ShareSnapshotValue.
        let mut key = vec![0u8, 1, 0, 3, b'g', b's', b'1'];
        key.extend_from_slice(&[7; 16]);
        key.extend_from_slice(&0i32.to_be_bytes());
        let mut value = vec![0u8; 2 + 12 + 8 + 16];
        value.extend_from_slice(&[1, 0]);
        let e = decode(Topic::ShareGroupState, Some(&key), Some(&value)).unwrap_err();
        assert_eq!(
            e.kafka_message(),
            "Could not read record with version 0 from value's buffer due to: non-nullable field stateBatches was serialized as null."
        );
        assert!(e.to_string().contains("StateBatches"), "{e}");
        assert_eq!(
            validate(Topic::ConsumerOffsets, Some(&[0x7f, 0xff]), Some(&[])),
            Ok(Some(32767))
        );
        assert_eq!(
            validate(Topic::ConsumerOffsets, None, None)
                .unwrap_err()
                .why,
            Why::MissingKey
        );
    }
}

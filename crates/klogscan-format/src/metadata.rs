//! KRaft metadata records (`__cluster_metadata` values and `.checkpoint` snapshots), the few
//! that carry what an offline analysis needs: topic names and ids, partition ids, and
//! topic configs.
//!
//! A metadata record's value is a frame (`kafka-format.md` §1.7): frame version (unsigned
//! varint, 1), record type (`apiKey`, unsigned varint), record version (unsigned varint),
//! then the generated message body in its flexible encoding (compact strings: unsigned
//! varint length + 1, 0 for null; a tagged-field section closes the body). The bodies read
//! here follow Kafka's `metadata/src/main/resources/common/metadata/*.json` schemas:
//!
//! * `TopicRecord` (apiKey 2): `Name` string, `TopicId` uuid;
//! * `PartitionRecord` (apiKey 3): `PartitionId` int32, `TopicId` uuid, … (the rest is
//!   not read);
//! * `ConfigRecord` (apiKey 4): `ResourceType` int8 (2 = TOPIC, 4 = BROKER), `ResourceName`
//!   string, `Name` string, `Value` nullable string (null: the config was removed);
//! * `RemoveTopicRecord` (apiKey 9): `TopicId` uuid.
//!
//! Other record types are returned as [`MetadataRecord::Other`]. Views borrow the input;
//! nothing is allocated.

use super::error::{FormatError, Problem};

const STRUCTURE: &str = "metadata record";

/// `ConfigResource.Type.TOPIC`.
pub const RESOURCE_TOPIC: i8 = 2;

/// One decoded metadata record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetadataRecord<'a> {
    Topic {
        name: &'a str,
        topic_id: [u8; 16],
    },
    Partition {
        partition_id: i32,
        topic_id: [u8; 16],
    },
    Config {
        resource_type: i8,
        resource_name: &'a str,
        name: &'a str,
        /// `None`: the config was deleted (back to the default).
        value: Option<&'a str>,
    },
    RemoveTopic {
        topic_id: [u8; 16],
    },
    /// A record type this module does not decode.
    Other {
        api_key: u32,
        version: u32,
    },
}

/// Decode a metadata record value (`base` is its position, for error messages) with the
/// one table-driven reader of metadata records ([`super::metadata_records::decode`]), then
/// pick out the four types the analysis needs. Other types are [`MetadataRecord::Other`]
/// even when they do not read (nothing here depends on them).
pub fn parse_metadata_record(value: &[u8], base: u64) -> Result<MetadataRecord<'_>, FormatError> {
    use super::groups::Val;
    use super::metadata_records::{MetadataError, decode};
    const NEEDED: [i16; 4] = [2, 3, 4, 9];
    let bad = |field: &'static str, why: &'static str| {
        FormatError::new(STRUCTURE, field, base, Problem::Invalid(why))
    };
    let (t, version, v) = match decode(value) {
        Ok(d) => d,
        Err(MetadataError::Frame(_)) => return Err(bad("frameVersion", "unreadable frame")),
        Err(
            MetadataError::UnknownType(k)
            | MetadataError::Message(k, _)
            | MetadataError::Garbage { api_key: k, .. },
        ) if !NEEDED.contains(&k) => {
            return Ok(MetadataRecord::Other {
                api_key: k as u32,
                version: 0,
            });
        }
        Err(_) => {
            return Err(bad(
                "value",
                "does not read as its MetadataRecordType schema",
            ));
        }
    };
    let text = |name: &'static str| -> Result<Option<&str>, FormatError> {
        match v.get(name) {
            Some(Val::Str(Some(b))) => std::str::from_utf8(b)
                .map(Some)
                .map_err(|_| bad(name, "not UTF-8")),
            _ => Ok(None),
        }
    };
    let required = |name: &'static str| text(name)?.ok_or_else(|| bad(name, "null"));
    let uuid = |name: &'static str| -> Result<[u8; 16], FormatError> {
        match v.get(name) {
            Some(Val::Uuid(b)) => <[u8; 16]>::try_from(*b).map_err(|_| bad(name, "not 16 bytes")),
            _ => Err(bad(name, "missing")),
        }
    };
    Ok(match t.id {
        2 => MetadataRecord::Topic {
            name: required("Name")?,
            topic_id: uuid("TopicId")?,
        },
        3 => MetadataRecord::Partition {
            partition_id: v.int("PartitionId") as i32,
            topic_id: uuid("TopicId")?,
        },
        4 => MetadataRecord::Config {
            resource_type: v.int("ResourceType") as i8,
            resource_name: required("ResourceName")?,
            name: required("Name")?,
            value: text("Value")?,
        },
        9 => MetadataRecord::RemoveTopic {
            topic_id: uuid("TopicId")?,
        },
        k => MetadataRecord::Other {
            api_key: k as u32,
            version: version as u32,
        },
    })
}

/// Encode the records [`parse_metadata_record`] reads (tests and the testkit).
pub fn encode_metadata_record(r: &MetadataRecord<'_>) -> Vec<u8> {
    use super::bytes::put_uvarint;
    fn string(out: &mut Vec<u8>, s: Option<&str>) {
        match s {
            None => put_uvarint(out, 0),
            Some(s) => {
                put_uvarint(out, s.len() as u32 + 1);
                out.extend_from_slice(s.as_bytes());
            }
        }
    }
    let mut out = vec![1u8];
    match *r {
        MetadataRecord::Topic { name, topic_id } => {
            out.extend_from_slice(&[2, 0]);
            string(&mut out, Some(name));
            out.extend_from_slice(&topic_id);
        }
        MetadataRecord::Partition {
            partition_id,
            topic_id,
        } => {
            out.extend_from_slice(&[3, 0]);
            out.extend_from_slice(&partition_id.to_be_bytes());
            out.extend_from_slice(&topic_id);
            // Replicas, Isr, RemovingReplicas, AddingReplicas: empty compact arrays;
            // Leader -1, LeaderEpoch 0, PartitionEpoch 0.
            out.extend_from_slice(&[1, 1, 1, 1]);
            out.extend_from_slice(&(-1i32).to_be_bytes());
            out.extend_from_slice(&0i32.to_be_bytes());
            out.extend_from_slice(&0i32.to_be_bytes());
        }
        MetadataRecord::Config {
            resource_type,
            resource_name,
            name,
            value,
        } => {
            out.extend_from_slice(&[4, 0, resource_type as u8]);
            string(&mut out, Some(resource_name));
            string(&mut out, Some(name));
            string(&mut out, value);
        }
        MetadataRecord::RemoveTopic { topic_id } => {
            out.extend_from_slice(&[9, 0]);
            out.extend_from_slice(&topic_id);
        }
        MetadataRecord::Other { api_key, version } => {
            put_uvarint(&mut out, api_key);
            put_uvarint(&mut out, version);
        }
    }
    out.push(0); // no tagged fields
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_errors() {
        let recs = [
            MetadataRecord::Topic {
                name: "orders",
                topic_id: [7; 16],
            },
            MetadataRecord::Partition {
                partition_id: 3,
                topic_id: [7; 16],
            },
            MetadataRecord::Config {
                resource_type: RESOURCE_TOPIC,
                resource_name: "orders",
                name: "cleanup.policy",
                value: Some("compact,delete"),
            },
            MetadataRecord::Config {
                resource_type: RESOURCE_TOPIC,
                resource_name: "orders",
                name: "cleanup.policy",
                value: None,
            },
            MetadataRecord::RemoveTopic { topic_id: [7; 16] },
        ];
        for r in recs {
            let bytes = encode_metadata_record(&r);
            assert_eq!(parse_metadata_record(&bytes, 0).unwrap(), r);
            // Every prefix cut inside the fields read fails with an error value.
            let read = match r {
                MetadataRecord::Partition { .. } => 3 + 4 + 16,
                _ => bytes.len() - 1,
            };
            for n in 0..read {
                assert!(parse_metadata_record(&bytes[..n], 0).is_err(), "{r:?} {n}");
            }
        }
        let e = parse_metadata_record(&[2, 4, 0], 10).unwrap_err();
        assert_eq!(e.field, "frameVersion");
        assert_eq!(
            parse_metadata_record(&[1, 12, 0, 0], 0).unwrap(),
            MetadataRecord::Other {
                api_key: 12,
                version: 0
            }
        );
    }
}

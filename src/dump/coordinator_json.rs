//! The coordinator decoders of the newest `kafka-dump-log` (Kafka 3.8+, 4.x):
//! `--offsets-decoder` and `--share-group-state-decoder` print every record as
//! `key: {"type":"<type>","data":{…}} payload: {"version":"<v>","data":{…}}`, the data
//! objects as Kafka's generated JSON converters write them (`*JsonConverter.write`): field names with a lower-case first letter, fields of other versions left out,
//! tagged fields only when not at their default, bytes in base64, uuids in Kafka's
//! URL-safe base64. A tombstone prints `<DELETE>`; a key type without a schema, or one
//! Kafka removed or never released (9, 18, 24: the 4.1+ serde does not know them), prints
//! `Unknown record type T at offset O, skipping.` and no payload; a record that does not
//! deserialize prints `Error at offset O, skipping. <Kafka's message>` and no payload.
//!
//! For a classic group whose protocol type is `consumer`, the members' subscription and
//! assignment bytes print as the consumer protocol's JSON when they decode, else as
//! base64 (as `OffsetsMessageParser` does).

use crate::read::format::groups::schema::{
    CONSUMER_PROTOCOL_ASSIGNMENT, CONSUMER_PROTOCOL_SUBSCRIPTION, Field, Ty,
};
use crate::read::format::groups::{
    self, DecodeError, Outcome, Status, StructVal, Topic, Val, Why, camel,
};
use base64::Engine;
use std::fmt::Write as _;

/// Longest JSON a record renders to; beyond it the record prints as an error.
const MAX_JSON: usize = 8 << 20;

/// Key and payload text of one record of `topic` at `offset`.
pub fn record(
    topic: Topic,
    key: Option<&[u8]>,
    value: Option<&[u8]>,
    offset: i64,
) -> (Option<String>, Option<String>) {
    let err = |e: DecodeError| {
        if e.why == Why::MissingKey {
            return (
                Some(format!(
                    "Failed to decode message at offset {offset} using the specified decoder (message had a missing key)"
                )),
                None,
            );
        }
        (
            Some(format!(
                "Error at offset {offset}, skipping. {}",
                e.kafka_message()
            )),
            None,
        )
    };
    let d = match groups::decode(topic, key, value) {
        // Types Kafka removed (9, 18) or never released (24): the 4.1+ serde's
        // `CoordinatorRecordType.fromId` does not know them (as the load skips them).
        Ok(Outcome::Record(d)) if matches!(d.rtype.status, Status::Retired | Status::Poc) => {
            let t = d.rtype.id;
            return (
                Some(format!(
                    "Unknown record type {t} at offset {offset}, skipping."
                )),
                None,
            );
        }
        Ok(Outcome::Record(d)) => d,
        Ok(Outcome::UnknownType { id: t, .. }) => {
            return (
                Some(format!(
                    "Unknown record type {t} at offset {offset}, skipping."
                )),
                None,
            );
        }
        Err(e) => return err(e),
    };
    let consumer_group = d.rtype.id == 2
        && topic == Topic::ConsumerOffsets
        && d.value
            .as_ref()
            .and_then(|(_, v)| v.str("protocolType"))
            .as_deref()
            == Some("consumer");
    let mut k = format!("{{\"type\":\"{}\",\"data\":", d.rtype.id);
    write_struct(&d.key, &mut k, false);
    k.push('}');
    let v = match &d.value {
        None => "<DELETE>".to_string(),
        Some((version, v)) => {
            let mut s = format!("{{\"version\":\"{version}\",\"data\":");
            write_struct(v, &mut s, consumer_group);
            s.push('}');
            s
        }
    };
    if k.len() + v.len() > MAX_JSON {
        return (
            Some(format!(
                "Error at offset {offset}, skipping. record renders to more than {MAX_JSON} bytes of JSON"
            )),
            None,
        );
    }
    (Some(k), Some(v))
}

/// `{"name":value,…}` of a struct: fields of its version, tagged ones when not default.
pub(crate) fn write_struct(s: &StructVal<'_>, out: &mut String, consumer_protocol: bool) {
    out.push('{');
    let mut first = true;
    for (f, v) in s.fields.iter().zip(&s.vals) {
        let Some(v) = v else { continue };
        if f.tag.is_some() && v.is_default(f.default) {
            continue;
        }
        if !first {
            out.push(',');
        }
        first = false;
        let _ = write!(out, "\"{}\":", camel(f.name));
        if consumer_protocol && write_embedded(f, v, out) {
            continue;
        }
        write_val(v, &f.ty, out, consumer_protocol);
    }
    out.push('}');
}

/// A classic consumer group member's subscription or assignment as the consumer
/// protocol's JSON; false when the field is another one or the bytes do not decode.
fn write_embedded(f: &Field, v: &Val<'_>, out: &mut String) -> bool {
    let schema = match f.name {
        "subscription" => &CONSUMER_PROTOCOL_SUBSCRIPTION,
        "assignment" => &CONSUMER_PROTOCOL_ASSIGNMENT,
        _ => return false,
    };
    let Val::Bytes(Some(b)) = v else { return false };
    match groups::decode_embedded(schema, b) {
        Ok((_, s)) => {
            write_struct(&s, out, false);
            true
        }
        Err(_) => false,
    }
}

fn write_val(v: &Val<'_>, ty: &Ty, out: &mut String, consumer_protocol: bool) {
    match v {
        Val::Int(i) => {
            let _ = write!(out, "{i}");
        }
        Val::Float(x) => out.push_str(&java_double(*x)),
        Val::Bool(b) => {
            let _ = write!(out, "{b}");
        }
        Val::Uuid(u) => {
            let _ = write!(
                out,
                "\"{}\"",
                base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(u)
            );
        }
        Val::Str(Some(s)) => {
            out.push_str(&crate::dump::decoders::json_str(&String::from_utf8_lossy(
                s,
            )));
        }
        Val::Bytes(Some(b)) => {
            let _ = write!(
                out,
                "\"{}\"",
                base64::engine::general_purpose::STANDARD.encode(b)
            );
        }
        Val::Str(None) | Val::Bytes(None) | Val::Array(None) | Val::Struct(None) => {
            out.push_str("null")
        }
        Val::Array(Some(items)) => {
            let elem = match ty {
                Ty::Array(e) => *e,
                other => other,
            };
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_val(item, elem, out, consumer_protocol);
            }
            out.push(']');
        }
        Val::Struct(Some(s)) => write_struct(s, out, consumer_protocol),
        Val::Skipped => out.push_str("null"),
    }
}

/// Java's `Double.toString` (what Jackson prints for a double): plain with at least one
/// decimal between 10^-3 and 10^7, else `d.dddE±n`.
pub(crate) fn java_double(x: f64) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    let a = x.abs();
    if a == 0.0 || (1e-3..1e7).contains(&a) {
        let s = format!("{x}");
        return if s.contains('.') { s } else { format!("{s}.0") };
    }
    let s = format!("{x:e}");
    let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
    let m = if m.contains('.') {
        m.to_string()
    } else {
        format!("{m}.0")
    };
    format!("{m}E{e}")
}

/// A record of `__cluster_metadata` (or a KRaft snapshot) as `--cluster-metadata-decoder`
/// prints it: no key, and `{"type":"TOPIC_RECORD","version":0,"data":{…}}` or
/// `Error at O, skipping. <message>` as the payload.
pub fn metadata_record(value: Option<&[u8]>, offset: i64) -> (Option<String>, Option<String>) {
    use crate::read::format::metadata_records;
    let out = match metadata_records::decode(value.unwrap_or(&[])) {
        Ok((t, version, s)) => {
            let mut j = format!("{{\"type\":\"{}\",\"version\":{version},\"data\":", t.name);
            write_struct(&s, &mut j, false);
            j.push('}');
            j
        }
        Err(e) => format!("Error at {offset}, skipping. {e}"),
    };
    (None, Some(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s16(out: &mut Vec<u8>, s: &str) {
        out.extend_from_slice(&(s.len() as i16).to_be_bytes());
        out.extend_from_slice(s.as_bytes());
    }

    /// Kafka 4.3's `RegisterBrokerRecord` v4 (KIP-1066) prints its cordoned log dirs (tag 1)
    /// beside its log dirs (tag 0).
    #[test]
    fn a_kafka_4_3_registration_prints_its_cordoned_log_dirs() {
        let mut v = vec![1u8, 0, 4];
        v.extend_from_slice(&7i32.to_be_bytes());
        v.push(0);
        v.extend_from_slice(&[5; 16]);
        v.extend_from_slice(&42i64.to_be_bytes());
        v.extend_from_slice(&[1, 1, 0, 0, 0]);
        v.extend_from_slice(&[2, 0, 17, 2]);
        v.extend_from_slice(&[0xa; 16]);
        v.extend_from_slice(&[1, 17, 2]);
        v.extend_from_slice(&[0xc; 16]);
        let (_, out) = metadata_record(Some(&v), 3);
        let out = out.unwrap();
        assert!(
            out.starts_with(r#"{"type":"REGISTER_BROKER_RECORD","version":4,"#),
            "{out}"
        );
        assert!(
            out.contains(r#""logDirs":["#) && out.contains(r#""cordonedLogDirs":["#),
            "{out}"
        );
    }

    #[test]
    fn golden_lines_of_the_schemas_readme() {
        let mut key = 3i16.to_be_bytes().to_vec();
        s16(&mut key, "group");
        let value = [0u8, 0, 0, 0, 0, 10, 0];
        assert_eq!(
            record(Topic::ConsumerOffsets, Some(&key), Some(&value), 0),
            (
                Some(r#"{"type":"3","data":{"groupId":"group"}}"#.into()),
                Some(r#"{"version":"0","data":{"epoch":10}}"#.into())
            )
        );
        assert_eq!(
            record(Topic::ConsumerOffsets, Some(&key), None, 0)
                .1
                .as_deref(),
            Some("<DELETE>")
        );
        assert_eq!(
            record(Topic::ConsumerOffsets, Some(&[0x7f, 0xff]), Some(&[]), 0),
            (
                Some("Unknown record type 32767 at offset 0, skipping.".into()),
                None
            )
        );
    }

    #[test]
    fn java_doubles() {
        assert_eq!(java_double(1024.0), "1024.0");
        assert_eq!(java_double(1e7), "1.0E7");
        assert_eq!(java_double(0.5), "0.5");
        assert_eq!(java_double(1.25e-5), "1.25E-5");
        assert_eq!(java_double(0.0), "0.0");
    }

    #[test]
    fn metadata_records() {
        // TopicRecord v0: frame 1, type 2, version 0, name "foo", a uuid, no tags.
        let mut v = vec![1, 2, 0, 4, b'f', b'o', b'o'];
        v.extend_from_slice(&[0; 15]);
        v.push(1);
        v.push(0);
        assert_eq!(
            metadata_record(Some(&v), 3).1.unwrap(),
            r#"{"type":"TOPIC_RECORD","version":0,"data":{"name":"foo","topicId":"AAAAAAAAAAAAAAAAAAAAAQ"}}"#
        );
        // The bogus record of DumpLogSegmentsTest: two unsigned varints 10000.
        let bogus = [0x90, 0x4e, 0x90, 0x4e];
        let p = metadata_record(Some(&bogus), 5).1.unwrap();
        assert!(p.starts_with("Error at 5, skipping. "), "{p}");
        v.push(9);
        assert!(metadata_record(Some(&v), 3).1.unwrap().contains("garbage"));
    }
}

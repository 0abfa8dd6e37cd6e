//! Rendering of a [`VerifyReport`]: the JSON document (`"klogscan_verify": 1`,
//! `docs/verify.md`). The text report is rendered in the report layer, above this one,
//! with the scan tables' colour and width rules.

use super::{PartitionVerification, VerifyReport};
use serde::Serialize;
use serde::ser::SerializeMap;
use serde_json::{Value, json};
use std::io::{self, Write};

/// The JSON document of `klogscan verify --format json` (schema in `docs/verify.md`).
pub fn to_json(r: &VerifyReport) -> serde_json::Value {
    let mut doc = json!({
        "klogscan_verify": 1,
        "inputs": r.inputs,
        "summary": r.summary,
        "partitions": r.partitions.iter().map(partition_json).collect::<Vec<_>>(),
        "findings": r.findings().collect::<Vec<_>>(),
        "notes": r.notes,
        "errors": r.errors.iter().map(error_json).collect::<Vec<_>>(),
    });
    if !r.broker_startup.is_empty() {
        doc["broker_startup"] = json!(r.broker_startup);
    }
    doc
}

fn partition_json(p: &PartitionVerification) -> Value {
    json!({
        "topic": p.topic,
        "partition": p.partition,
        "path": p.path(),
        "log_dir": p.log_dir(),
        "source": p.source,
        "prediction": p.prediction,
    })
}

fn error_json((p, e): &(std::path::PathBuf, String)) -> Value {
    json!({"path": p.display().to_string(), "error": e})
}

/// Write the JSON document (one line-broken, pretty-printed document): the same bytes as
/// [`to_json`] pretty-printed, written as it goes. The document as one `Value` cost
/// ≈ 12 KB per partition (100 000 empty partitions: 1.2 GB); here only one partition's
/// or one finding's `Value` exists at a time. Objects keep `Value`'s key order (sorted).
pub fn write_json(r: &VerifyReport, w: &mut dyn Write) -> io::Result<()> {
    crate::escape::write_pretty_json(&mut *w, &Doc(r))?;
    writeln!(w)
}

/// [`to_json`]'s document, serialised member by member in its (sorted) key order.
struct Doc<'a>(&'a VerifyReport);

impl Serialize for Doc<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let r = self.0;
        let mut m = s.serialize_map(Some(7 + usize::from(!r.broker_startup.is_empty())))?;
        if !r.broker_startup.is_empty() {
            m.serialize_entry("broker_startup", &sorted(&r.broker_startup))?;
        }
        m.serialize_entry("errors", &Each(|| r.errors.iter().map(error_json)))?;
        m.serialize_entry("findings", &Each(|| r.findings().map(sorted)))?;
        m.serialize_entry("inputs", &r.inputs)?;
        m.serialize_entry("klogscan_verify", &1)?;
        m.serialize_entry("notes", &r.notes)?;
        m.serialize_entry(
            "partitions",
            &Each(|| r.partitions.iter().map(partition_json)),
        )?;
        m.serialize_entry("summary", &sorted(&r.summary))?;
        m.end()
    }
}

/// `v` as a `Value` (objects with sorted keys, as in [`to_json`]).
fn sorted<T: Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

/// A JSON array of what the iterator yields, one item at a time (no intermediate `Vec`).
pub(crate) struct Each<F>(pub(crate) F);

impl<F, I> Serialize for Each<F>
where
    F: Fn() -> I,
    I: Iterator,
    I::Item: Serialize,
{
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq((self.0)())
    }
}

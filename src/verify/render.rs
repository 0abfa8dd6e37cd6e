//! Rendering of a [`VerifyReport`]: the JSON document (`"klogscan_verify": 1`,
//! `docs/verify.md`). The text report is rendered in the report layer, above this one,
//! with the scan tables' colour and width rules.

use super::VerifyReport;
use serde_json::json;
use std::io::{self, Write};

/// The JSON document of `klogscan verify --format json` (schema in `docs/verify.md`).
pub fn to_json(r: &VerifyReport) -> serde_json::Value {
    json!({
        "klogscan_verify": 1,
        "inputs": r.inputs,
        "summary": r.summary,
        "partitions": r.partitions.iter().map(|p| json!({
            "topic": p.topic,
            "partition": p.partition,
            "path": p.path,
            "log_dir": p.log_dir,
            "source": p.source,
            "prediction": p.prediction,
        })).collect::<Vec<_>>(),
        "findings": r.findings,
        "notes": r.notes,
        "errors": r.errors.iter().map(|(p, e)| json!({"path": p.display().to_string(), "error": e})).collect::<Vec<_>>(),
    })
}

/// Write the JSON document (one line-broken, pretty-printed document).
pub fn write_json(r: &VerifyReport, w: &mut dyn Write) -> io::Result<()> {
    crate::escape::write_pretty_json(&mut *w, &to_json(r))?;
    writeln!(w)
}

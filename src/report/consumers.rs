//! `klogscan consumers` output: one row per group × partition, like
//! `kafka-consumer-groups.sh --describe`, with the lag against the last stable offset too;
//! or the whole view as JSON.

use crate::cluster::consumers::{ConsumerRow, ConsumerView};
use std::io::{self, Write};

fn opt(v: Option<i64>) -> String {
    v.map_or_else(|| "-".to_string(), |v| v.to_string())
}

/// The log end, shown only where it differs from the high watermark.
fn log_end(r: &ConsumerRow) -> String {
    match &r.data {
        Some(d) if d.log_end_offset != d.high_watermark => opt(d.log_end_offset),
        Some(_) => "=HW".to_string(),
        None => "-".to_string(),
    }
}

/// One line per group × partition, then what was not matched.
pub fn write_table(view: &ConsumerView, out: &mut dyn Write) -> io::Result<()> {
    let mut t = comfy_table::Table::new();
    t.load_preset(comfy_table::presets::NOTHING);
    t.set_header(vec![
        "GROUP",
        "TOPIC",
        "PARTITION",
        "COMMITTED",
        "EPOCH",
        "LOG-START",
        "LSO",
        "HW",
        "LOG-END",
        "LAG(HW)",
        "LAG(LSO)",
        "HANGING",
        "COMMIT-TIME",
    ]);
    for r in &view.rows {
        let d = r.data.as_ref();
        t.add_row(vec![
            crate::escape::text(&r.group_id).into_owned(),
            crate::escape::text(&r.topic).into_owned(),
            r.partition.to_string(),
            r.committed_offset.to_string(),
            r.committed_leader_epoch
                .map_or_else(|| "-".to_string(), |e| e.to_string()),
            opt(d.and_then(|d| d.log_start_offset)),
            opt(d.and_then(|d| d.last_stable_offset)),
            opt(d.and_then(|d| d.high_watermark)),
            log_end(r),
            opt(r.lag_high_watermark),
            opt(r.lag_last_stable),
            d.and_then(|d| d.hanging.first()).map_or_else(
                || "-".to_string(),
                |h| format!("{}@{}", h.producer_id, h.first_offset),
            ),
            r.commit_timestamp.to_string(),
        ]);
    }
    writeln!(out, "{t}")?;
    writeln!(
        out,
        "{} row(s), {} group(s); commits naming no partition of the inputs: {} absent, {} of another or unproven cluster; {} pending transactional commit(s)",
        view.rows.len(),
        view.groups.len(),
        view.unmatched.absent,
        view.unmatched.other_cluster,
        view.pending.iter().map(|p| p.offsets.len()).sum::<usize>()
    )
}

/// `{"consumers": {groups, rows, pending, unmatched}}`.
pub fn write_json(view: &ConsumerView, out: &mut dyn Write) -> io::Result<()> {
    let v = serde_json::json!({ "consumers": view });
    crate::escape::write_pretty_json(&mut *out, &v)?;
    writeln!(out)
}

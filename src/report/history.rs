//! The `history` command's output: the leadership timeline of each partition as a table,
//! or the same data as JSON.

use crate::cluster::leadership::Choice;
use crate::cluster::leadership::view::ClusterView;
use std::io::{self, Write};

fn list(v: &[i32]) -> String {
    let items: Vec<String> = v.iter().map(i32::to_string).collect();
    format!("[{}]", items.join(","))
}

fn choice(c: Option<Choice>) -> &'static str {
    match c {
        None => "",
        Some(Choice::Isr) => "clean (ISR)",
        Some(Choice::Elr) => "clean (ELR)",
        Some(Choice::Unclean) => "UNCLEAN",
    }
}

/// The views as a table: per cluster its brokers, topics and configs, then per partition
/// one line per state.
pub fn write_table(views: &[ClusterView], out: &mut dyn Write) -> io::Result<()> {
    for v in views {
        writeln!(
            out,
            "metadata log {}{}: {} records to offset {}{}{}",
            v.metadata_log,
            v.cluster_id
                .as_deref()
                .map(|c| format!(" (cluster {c})"))
                .unwrap_or_default(),
            v.records,
            v.end_offset,
            v.snapshot
                .as_ref()
                .map(|s| format!(", from snapshot {}", s.file))
                .unwrap_or_default(),
            v.recovery_stop
                .map(|o| format!(
                    ", ending at offset {o}: the node's next start truncates this copy there (LogSegment.recover), the batches after it are not replayed"
                ))
                .unwrap_or_default()
        )?;
        if !v.bootstrap_features.is_empty() {
            let f: Vec<String> = v
                .bootstrap_features
                .iter()
                .map(|(n, l)| format!("{n}={l}"))
                .collect();
            writeln!(out, "  bootstrap.checkpoint: {}", f.join(", "))?;
        }
        for b in &v.brokers {
            writeln!(
                out,
                "  {:>10} {}  broker {} {}",
                b.offset,
                super::format_ms(b.time),
                b.broker,
                b.change.describe()
            )?;
        }
        for t in &v.topics {
            writeln!(
                out,
                "  {:>10} {}  topic {} {}",
                t.offset,
                super::format_ms(t.time),
                t.topic,
                if t.created { "created" } else { "deleted" }
            )?;
        }
        for c in &v.configs {
            let whom = match (c.scope.as_str(), c.resource.as_str()) {
                ("broker", "") => "cluster default".to_string(),
                (scope, r) => format!("{scope} {r}"),
            };
            writeln!(
                out,
                "  {:>10} {}  {whom}: {}={}",
                c.offset,
                super::format_ms(c.time),
                c.name,
                c.value.as_deref().unwrap_or("(deleted)")
            )?;
        }
        for p in &v.partitions {
            writeln!(out)?;
            writeln!(
                out,
                "{}-{} (topic id {}){}",
                p.topic,
                p.partition,
                p.topic_id,
                p.removed_at
                    .map(|o| format!(", deleted at offset {o}"))
                    .unwrap_or_default()
            )?;
            writeln!(
                out,
                "  {:>10} {:<24} {:>6} {:>6} {:>6} {:<14} {:<10} {:<10} {:>3} {:<14} {:<16} ELECTION",
                "OFFSET",
                "TIME",
                "LEADER",
                "EPOCH",
                "PEPOCH",
                "ISR",
                "ELR",
                "LASTELR",
                "LRS",
                "REPLICAS",
                "SOURCE"
            )?;
            for row in &p.rows {
                let r = &row.state;
                writeln!(
                    out,
                    "  {:>10} {:<24} {:>6} {:>6} {:>6} {:<14} {:<10} {:<10} {:>3} {:<14} {:<16} {}",
                    r.offset,
                    super::format_ms(r.time),
                    r.leader,
                    r.leader_epoch,
                    r.partition_epoch,
                    list(&r.isr),
                    list(&r.elr),
                    list(&r.last_known_elr),
                    r.recovery_state,
                    list(&r.replicas),
                    serde_json::to_value(row.source)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_string))
                        .unwrap_or_default(),
                    choice(row.election)
                )?;
            }
        }
    }
    Ok(())
}

/// The views as one JSON document: `{"clusters": [...]}`.
pub fn write_json(views: &[ClusterView], out: &mut dyn Write) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, &serde_json::json!({ "clusters": views }))?;
    writeln!(out)
}

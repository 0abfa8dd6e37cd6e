//! Dumps of the broker's small text files (see `read::format::checkpoint`): the four offset
//! checkpoints, `leader-epoch-checkpoint`, `partition.metadata`, `meta.properties` and
//! `.kafka_cleanshutdown`. kafka-dump-log has no shape for them, so the text form is one
//! `key: value …` line per entry in its spirit, and `--format json` gives JSON Lines: a
//! `file` line, then one line per entry (`docs/dump-json.md`).

use super::{DumpFormat, DumpOptions};
use crate::read::format::checkpoint::{
    TextFileKind, parse_clean_shutdown, parse_leader_epoch_checkpoint, parse_meta_properties,
    parse_offset_checkpoint, parse_partition_metadata,
};
use crate::read::segment::{FileClass, load};
use serde_json::json;
use std::io::{self, Write};
use std::path::Path;

/// Dump one text file of kind `kind`. Returns `Ok(false)` when the file did not parse
/// (the parse error went to `err` in text mode, into the stream in JSON mode).
pub fn dump_text_file(
    path: &Path,
    kind: TextFileKind,
    opts: &DumpOptions,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> io::Result<bool> {
    let bytes = load(path, FileClass::Checkpoint, opts.mmap, None)?;
    let text = opts.format == DumpFormat::Text;
    let p = path.display().to_string();
    if text {
        writeln!(out, "Dumping {}", crate::escape::text(&p))?;
    } else {
        line(
            out,
            json!({"type": "file", "path": p, "kind": kind, "bytes": bytes.len()}),
        )?;
    }
    // (text line, JSON object) per entry, or the parse error
    let entries: Result<Vec<(String, serde_json::Value)>, String> = match kind {
        k if k.is_offset_checkpoint() => parse_offset_checkpoint(&bytes, k)
            .map(|v| {
                v.iter()
                    .map(|e| {
                        (
                            format!("topic: {} partition: {} offset: {}", e.topic, e.partition, e.offset),
                            json!({"type": "entry", "topic": e.topic, "partition": e.partition, "offset": e.offset}),
                        )
                    })
                    .collect()
            })
            .map_err(|e| e.to_string()),
        TextFileKind::LeaderEpochCheckpoint => parse_leader_epoch_checkpoint(&bytes)
            .map(|v| {
                v.iter()
                    .map(|e| {
                        (
                            format!("epoch: {} startOffset: {}", e.epoch, e.start_offset),
                            json!({"type": "entry", "epoch": e.epoch, "startOffset": e.start_offset}),
                        )
                    })
                    .collect()
            })
            .map_err(|e| e.to_string()),
        TextFileKind::PartitionMetadata => parse_partition_metadata(&bytes)
            .map(|m| {
                vec![(
                    format!("version: {} topic_id: {}", m.version, m.topic_id_string()),
                    json!({"type": "entry", "version": m.version, "topic_id": m.topic_id_string()}),
                )]
            })
            .map_err(|e| e.to_string()),
        TextFileKind::MetaProperties => parse_meta_properties(&bytes)
            .map(|m| {
                let mut v = vec![(
                    format!(
                        "version: {} node.id: {} cluster.id: {} directory.id: {}",
                        m.version,
                        m.node_id.map_or("-".into(), |n| n.to_string()),
                        m.cluster_id.as_deref().unwrap_or("-"),
                        m.directory_id_string().as_deref().unwrap_or("-")
                    ),
                    json!({"type": "entry", "version": m.version, "node_id": m.node_id,
                           "cluster_id": m.cluster_id, "directory_id": m.directory_id_string()}),
                )];
                v.extend(m.raw.iter().map(|(k, val)| {
                    (
                        format!("{k}: {val}"),
                        json!({"type": "property", "key": k, "value": val}),
                    )
                }));
                v
            })
            .map_err(|e| e.to_string()),
        _ => parse_clean_shutdown(&bytes)
            .map(|c| {
                let t = match (c.version, c.broker_epoch) {
                    (Some(v), Some(e)) => format!("version: {v} brokerEpoch: {e}"),
                    _ => "empty (clean shutdown marker of a broker before 3.7)".to_string(),
                };
                vec![(t, json!({"type": "entry", "version": c.version, "brokerEpoch": c.broker_epoch}))]
            })
            .map_err(|e| e.to_string()),
    };
    match entries {
        Ok(v) => {
            for (t, j) in v {
                if text {
                    writeln!(out, "{}", crate::escape::text(&t))?;
                } else {
                    line(out, j)?;
                }
            }
            Ok(true)
        }
        Err(e) => {
            if text {
                writeln!(
                    err,
                    "Cannot parse {}: {}",
                    crate::escape::text(&p),
                    crate::escape::text(&e.to_string())
                )?;
            } else {
                line(out, json!({"type": "error", "error": e}))?;
            }
            Ok(false)
        }
    }
}

fn line(w: &mut dyn Write, v: serde_json::Value) -> io::Result<()> {
    serde_json::to_writer(&mut *w, &v)?;
    writeln!(w)
}

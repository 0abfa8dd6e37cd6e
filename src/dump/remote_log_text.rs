//! `--remote-log-metadata-decoder` (Kafka 3.9+, KIP-1057): each `__remote_log_metadata`
//! record's value printed as `DumpLogSegments.RemoteMetadataLogMessageParser` prints it —
//! no key, the payload being the `toString()` of what `RemoteLogMetadataSerde.deserialize`
//! builds (`RemoteLogSegmentMetadata`, `RemoteLogSegmentMetadataUpdate`,
//! `RemotePartitionDeleteMetadata`, `RemoteLogSegmentMetadataSnapshot`), or
//! `Error at offset O, skipping. <message>` when it throws.
//!
//! The form is Kafka 4.x's: `RemoteLogSegmentMetadata` ends with `txnIdxEmpty=…`, which
//! 3.9 does not print. Topic names print as Java decodes them (invalid UTF-8 replaced).

use crate::read::format::checkpoint::encode_uuid;
use crate::read::format::remote_log::{
    self, LeaderEpochs, PartitionDeleteState, RemoteLogMetadata, SegmentId, SegmentMetadata,
    SegmentState, TopicIdPartition,
};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Key and payload text of one record at `offset` (the key is always absent).
pub fn record(value: Option<&[u8]>, offset: i64) -> (Option<String>, Option<String>) {
    // A null value makes Kafka's parser throw a NullPointerException without a message.
    let text = match value.map(remote_log::decode) {
        None => format!("Error at offset {offset}, skipping. null"),
        Some(Err(e)) => format!("Error at offset {offset}, skipping. {e}"),
        Some(Ok(r)) => to_string(&r),
    };
    (None, Some(text))
}

/// `TopicIdPartition.toString`: `<topicId>:<topic>-<partition>`.
fn topic_id_partition(p: &TopicIdPartition<'_>) -> String {
    format!(
        "{}:{}-{}",
        encode_uuid(&p.topic_id),
        String::from_utf8_lossy(p.topic),
        p.partition
    )
}

fn segment_id(s: &SegmentId<'_>) -> String {
    format!(
        "RemoteLogSegmentId{{topicIdPartition={}, id={}}}",
        topic_id_partition(&s.partition),
        encode_uuid(&s.id)
    )
}

/// A `TreeMap` built from a `HashMap` fed in order: `{e=o, e=o}`, ascending, the last
/// value of a repeated epoch.
fn epochs(e: &LeaderEpochs<'_>) -> String {
    let map: BTreeMap<i32, i64> = e.iter().collect();
    let mut s = String::from("{");
    for (i, (k, v)) in map.iter().enumerate() {
        if i > 0 {
            s.push_str(", ");
        }
        let _ = write!(s, "{k}={v}");
    }
    s.push('}');
    s
}

fn custom(c: Option<&[u8]>) -> String {
    match c {
        None => "Optional.empty".into(),
        Some(b) => format!("Optional[CustomMetadata{{{} bytes}}]", b.len()),
    }
}

/// The state's name; `decode` has already rejected unknown ids.
fn state(id: i8) -> &'static str {
    SegmentState::from_id(id).map_or("null", SegmentState::name)
}

fn segment(m: &SegmentMetadata<'_>) -> String {
    format!(
        "RemoteLogSegmentMetadata{{remoteLogSegmentId={}, startOffset={}, endOffset={}, brokerId={}, maxTimestampMs={}, eventTimestampMs={}, segmentLeaderEpochs={}, segmentSizeInBytes={}, customMetadata={}, state={}, txnIdxEmpty={}}}",
        segment_id(&m.segment),
        m.start_offset,
        m.end_offset,
        m.broker_id,
        m.max_timestamp_ms,
        m.event_timestamp_ms,
        epochs(&m.leader_epochs),
        m.segment_size_in_bytes,
        custom(m.custom_metadata),
        state(m.state),
        m.txn_index_empty
    )
}

fn snapshot(m: &SegmentMetadata<'_>) -> String {
    format!(
        "RemoteLogSegmentMetadataSnapshot{{segmentId={}, startOffset={}, endOffset={}, maxTimestampMs={}, segmentLeaderEpochs={}, segmentSizeInBytes={}, customMetadata={}, state={}}}",
        encode_uuid(&m.segment.id),
        m.start_offset,
        m.end_offset,
        m.max_timestamp_ms,
        epochs(&m.leader_epochs),
        m.segment_size_in_bytes,
        custom(m.custom_metadata),
        state(m.state)
    )
}

/// The `toString()` of the deserialized record.
pub fn to_string(r: &RemoteLogMetadata<'_>) -> String {
    match r {
        RemoteLogMetadata::Segment(m) => segment(m),
        RemoteLogMetadata::Snapshot(m) => snapshot(m),
        RemoteLogMetadata::Update(u) => format!(
            "RemoteLogSegmentMetadataUpdate{{remoteLogSegmentId={}, customMetadata={}, state={}, eventTimestampMs={}, brokerId={}}}",
            segment_id(&u.segment),
            custom(u.custom_metadata),
            state(u.state),
            u.event_timestamp_ms,
            u.broker_id
        ),
        RemoteLogMetadata::PartitionDelete(d) => format!(
            "RemotePartitionDeleteMetadata{{topicPartition={}, state={}, eventTimestampMs={}, brokerId={}}}",
            topic_id_partition(&d.partition),
            PartitionDeleteState::from_id(d.state).map_or("null", PartitionDeleteState::name),
            d.event_timestamp_ms,
            d.broker_id
        ),
    }
}

/// Dump a 3.6–3.7 `remote_log_snapshot` file (kafka-dump-log has no shape for it): in text
/// `Dumping <path>`, a header line `version: V metadataPartition: P metadataPartitionOffset: O
/// entries: N`, then each entry's `RemoteLogSegmentMetadataSnapshot{…}`; with `--format json`
/// a `file` line, a `header` line and one `entry` line per entry (`{"type":"entry","text":…}`).
/// `Ok(false)` when the file does not read as `RemoteLogMetadataSnapshotFile.read` reads it
/// (the reason on `err` in text, an `error` line in JSON).
pub fn dump_snapshot_file(
    path: &std::path::Path,
    opts: &super::DumpOptions,
    out: &mut dyn std::io::Write,
    err: &mut dyn std::io::Write,
) -> std::io::Result<bool> {
    use serde_json::json;
    let bytes = crate::read::segment::load(
        path,
        crate::read::segment::FileClass::Checkpoint,
        opts.mmap,
        None,
    )?;
    let text = opts.format == super::DumpFormat::Text;
    let p = path.display().to_string();
    let json_line = |out: &mut dyn std::io::Write, v: serde_json::Value| {
        serde_json::to_writer(&mut *out, &v)?;
        writeln!(out)
    };
    if text {
        writeln!(out, "Dumping {}", crate::escape::text(&p))?;
    } else {
        json_line(
            out,
            json!({"type": "file", "path": p, "kind": "remote_log_snapshot", "bytes": bytes.len()}),
        )?;
    }
    let mut fail = |out: &mut dyn std::io::Write, e: String| -> std::io::Result<bool> {
        if text {
            writeln!(
                err,
                "Cannot parse {}: {}",
                crate::escape::text(&p),
                crate::escape::text(&e)
            )?;
        } else {
            json_line(out, json!({"type": "error", "error": e}))?;
        }
        Ok(false)
    };
    let (header, entries) = match remote_log::parse_remote_log_snapshot(&bytes) {
        Ok(Some(h)) => h,
        Ok(None) => return Ok(true),
        Err(e) => return fail(out, e.to_string()),
    };
    if text {
        writeln!(
            out,
            "version: {} metadataPartition: {} metadataPartitionOffset: {} entries: {}",
            header.version,
            header.metadata_partition,
            header.metadata_partition_offset,
            header.entries
        )?;
    } else {
        json_line(
            out,
            json!({"type": "header", "version": header.version,
                "metadataPartition": header.metadata_partition,
                "metadataPartitionOffset": header.metadata_partition_offset,
                "entries": header.entries}),
        )?;
    }
    for e in entries {
        match e {
            Ok(m) => {
                let t = snapshot(&m);
                if text {
                    writeln!(out, "{}", crate::escape::text(&t))?;
                } else {
                    json_line(out, json!({"type": "entry", "text": t}))?;
                }
            }
            Err(e) => return fail(out, e.to_string()),
        }
    }
    Ok(true)
}

//! Reading a `__cluster_metadata` partition into the typed list the replay consumes, as a
//! KRaft node opens it (`KafkaMetadataLog.apply`, [`read_metadata_dir`]): a KRaft snapshot
//! (`<endOffset>-<epoch>.checkpoint`), then the log's records from the snapshot's end
//! offset on, as `KafkaRaftClient` hands them to the metadata loader (a snapshot holds the
//! state of every record below its end offset; the log's earlier records are already in
//! it), or the log from offset 0 when it still holds every record.
//!
//! A record that does not read as its schema is kept as an [`Undecodable`] (a finding,
//! never a stop: the replay goes on without it); a type or version the table does not know
//! is kept raw ([`MetaRecord::Unknown`]) and counted.

pub use super::quorum_state::{parse_quorum_state, quorum_state_failure};
use super::replay::MetaEntry;
use crate::discover::layout::PartitionDir;
// The node's recovery of its metadata log (`LogSegment.recover`), shared with the other
// readers of `__cluster_metadata` so that all read the log the node reads.
use crate::discover::layout::Recovered;
use crate::partition::recovery::metadata_snapshots::metadata_log_start;
use crate::read::format::metadata::{MetaRecord, decode_record};
use crate::read::format::{self, ControlType, Decompressor, kraft};
use crate::read::segment::{self, Item, ReadPolicy};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A record of the metadata log that does not decode.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Undecodable {
    pub file: String,
    /// The record's offset (the batch's base offset when the batch's records do not frame).
    pub offset: i64,
    /// Kafka's `MetadataParseException` text, or why the batch did not read.
    pub reason: String,
    /// `segment`, `snapshot` or `bootstrap` (the log dir's `bootstrap.checkpoint`).
    #[serde(default)]
    pub source: String,
    /// Whether every start of the node reads it: a segment record at or above the latest
    /// snapshot's end offset (any, without a snapshot), a record of the latest snapshot
    /// (`metadata_log_unreadable`, `metadata_snapshot_unreadable` say what the node does);
    /// unknown for `bootstrap.checkpoint`.
    #[serde(default)]
    pub read_at_start: Option<bool>,
}

/// A KRaft control record of the metadata log (`LEADER_CHANGE`, `KRAFT_VERSION`,
/// `KRAFT_VOTERS`): the quorum's own history.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct QuorumEvent {
    pub offset: i64,
    pub time: i64,
    /// The batch's KRaft epoch.
    pub raft_epoch: i32,
    /// `LEADER_CHANGE`, `KRAFT_VERSION`, `KRAFT_VOTERS`, … (Kafka's `ControlRecordType` name).
    pub control_type: String,
    /// `LeaderChangeMessage.leaderId`, for a `LEADER_CHANGE`.
    pub leader_id: Option<i32>,
    /// The voter ids of a `LEADER_CHANGE` or `KRAFT_VOTERS`.
    pub voters: Option<Vec<i32>>,
    /// `KRaftVersionRecord.kRaftVersion`, for a `KRAFT_VERSION`.
    pub kraft_version: Option<i16>,
}

/// The snapshot a replay starts from: `<endOffset>-<epoch>.checkpoint`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SnapshotId {
    pub file: String,
    pub end_offset: i64,
    pub epoch: i32,
}

/// `quorum-state` (`QuorumStateData`, JSON): the quorum's leader and epoch when written.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct QuorumState {
    pub leader_id: Option<i32>,
    pub leader_epoch: Option<i32>,
    pub voted_id: Option<i32>,
}

/// What one metadata partition directory holds, decoded: the replay's whole input.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MetadataLog {
    /// The partition directory.
    pub path: String,
    pub snapshot: Option<SnapshotId>,
    /// Records in replay order (snapshot first).
    pub entries: Vec<MetaEntry>,
    pub quorum: Vec<QuorumEvent>,
    pub undecodable: Vec<Undecodable>,
    /// `(api key, version)` of records kept raw → count. Serialized as a list of
    /// `[api key, version, count]` (a JSON object's keys are strings: the map itself made
    /// `collect` fail on a log holding such a record).
    #[serde(with = "unknown_counts")]
    pub unknown: BTreeMap<(i16, i16), u64>,
    pub quorum_state: Option<QuorumState>,
    /// The records of the log dir's `bootstrap.checkpoint` (the metadata version and
    /// features a new cluster's first controller writes; not replayed, offset -1).
    pub bootstrap: Vec<MetaEntry>,
    /// The offset after the last record read.
    pub end_offset: i64,
    /// The KRaft epoch of the last batch read (its `partitionLeaderEpoch`), or of the
    /// snapshot when no batch follows it; 0 when none was read. With `end_offset` it orders
    /// copies as KRaft orders logs (`OffsetAndEpoch`: the epoch first).
    #[serde(default)]
    pub last_epoch: i32,
    /// Offsets of the records the replay could not apply, in read order: a snapshot's
    /// batch that fails its CRC (its base offset; a segment's ends the history instead:
    /// `recovery_stop`), one that does not decompress or frame, a record that does not
    /// decode, a partition-state record of a version the table lacks (kept raw: a newer
    /// controller's). `PartitionChangeRecord` carries no epoch, so past the
    /// first of them the epochs and ISRs the replay infers may be stale.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gaps: Vec<i64>,
    /// Where the node's next start truncates this copy of the log, when batches lie at or
    /// after it: the base offset of the first segment batch that fails its CRC, or the end
    /// of the last valid batch before bytes that do not frame with later segments after
    /// them. `KafkaMetadataLog.apply` opens the log with recovery point 0 and its last
    /// shutdown taken as unclean, so `LogSegment.recover` checks every batch at every start
    /// and `LogLoader.recoverLog` truncates at the first invalid one (the later segments
    /// go): this copy's history ends here (nothing after it is replayed). The records
    /// after it may still be committed: another voter's copy that holds them ranks above
    /// this one (`load_all`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovery_stop: Option<i64>,
    /// The files of this copy that could not be read (a segment, a snapshot, the log dir's
    /// `bootstrap.checkpoint`, `quorum-state`: no permission, changed during the read),
    /// `(path, why)`: its history lacks what they hold (`history` names them, exit 2).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unread: Vec<(String, String)>,
}

/// [`MetadataLog::unknown`] in JSON: `[[api key, version, count], …]`. A bundle of an older
/// build holds `{}` (it could not write a non-empty map), read as empty.
mod unknown_counts {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};
    use std::collections::BTreeMap;

    pub fn serialize<S: Serializer>(
        m: &BTreeMap<(i16, i16), u64>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        let list: Vec<(i16, i16, u64)> = m.iter().map(|(&(k, v), &n)| (k, v, n)).collect();
        list.serialize(s)
    }

    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Counts {
        List(Vec<(i16, i16, u64)>),
        /// An older build's map: it could only ever be empty.
        Map(serde::de::IgnoredAny),
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<BTreeMap<(i16, i16), u64>, D::Error> {
        Ok(match Counts::deserialize(d)? {
            Counts::List(l) => l.into_iter().map(|(k, v, n)| ((k, v), n)).collect(),
            Counts::Map(_) => BTreeMap::new(),
        })
    }
}

/// Parse a snapshot file name `<endOffset 20 digits>-<epoch 10 digits>.checkpoint`, at
/// the fixed widths `Snapshots.parse` reads (`layout::kraft_snapshot_id`): a renamed
/// `100-1.checkpoint` is no snapshot (the node's start fails on it: `verify`'s
/// `unparseable_file_name`).
pub fn snapshot_id(path: &Path) -> Option<SnapshotId> {
    let name = path.file_name()?.to_str()?;
    let (end_offset, epoch) = crate::discover::layout::kraft_snapshot_id(name)?;
    Some(SnapshotId {
        file: name.to_string(),
        end_offset,
        epoch,
    })
}

/// The end offset of the newest complete snapshot of metadata-log copy `p` (from what the
/// bundles recorded in an inventory rebuilt from them): every offset below it was
/// committed ([`crate::discover::layout::newest_snapshot_end`]).
pub(crate) fn newest_snapshot_end(
    inv: &crate::discover::layout::Inventory,
    p: &PartitionDir,
) -> Option<i64> {
    match &inv.recorded {
        Some(r) => r.kraft_snapshot_ends.get(&p.path).copied(),
        None => crate::discover::layout::newest_snapshot_end(
            (p.kraft_snapshots.iter()).filter_map(|s| s.file_name()?.to_str()),
        ),
    }
}

/// Read a `__cluster_metadata` partition directory (`max_bytes`/`max_decompressed` bound the
/// read as for a scan), as a KRaft node opens it (`KafkaMetadataLog.apply`): the segments
/// recovered from offset 0 (recovery point 0), the snapshots below the log start forgotten
/// (`recoverSnapshots`), then `truncateToLatestSnapshot` — when the latest snapshot is past
/// the recovered log (its epoch above the log's latest, or equal with its end offset above
/// the log end offset) the log is emptied and starts at the snapshot's end, which the
/// metadata loader then loads alone.
pub fn read_metadata_dir(
    p: &PartitionDir,
    max_bytes: Option<u64>,
    max_decompressed: usize,
) -> MetadataLog {
    let snapshots = snapshots_of(p);
    let start = metadata_log_start(p);
    // `recoverSnapshots` keeps the snapshots at or above the log start (with a log start
    // above 0 and none of them, it throws and the node does not start: no truncation);
    // the latest of them is the one the node opens, chosen once for the partition stage's
    // read of it and this replay.
    let latest = crate::partition::recovery::metadata_snapshots::latest_snapshot(p)
        .and_then(|(_, path)| snapshots.iter().find(|(_, s)| **s == path));
    let mut recovered = Recovered::default();
    let mut log = read_files(
        p,
        starting_snapshot(&snapshots, start).map(|(id, path)| (id.clone(), *path)),
        Some(&mut recovered),
        max_bytes,
        max_decompressed,
    );
    if let Some((id, path)) = latest
        && recovered.truncates_fully(id.end_offset, id.epoch, start)
    {
        log = read_files(
            p,
            Some((id.clone(), path)),
            None,
            max_bytes,
            max_decompressed,
        );
    }
    let latest = crate::partition::recovery::metadata_snapshots::latest_snapshot(p);
    for u in &mut log.undecodable {
        u.read_at_start = match u.source.as_str() {
            "segment" => Some(
                latest
                    .as_ref()
                    .is_none_or(|(l, _)| u.offset >= l.end_offset),
            ),
            "snapshot" => Some(latest.as_ref().is_some_and(|(l, _)| l.file == u.file)),
            _ => None,
        };
    }
    if let Some(q) = &p.quorum_state {
        // Bounded as every small file (a checkpoint's 64 MiB), read, never mapped.
        match segment::load(
            q,
            segment::FileClass::Checkpoint,
            segment::MmapMode::Never,
            None,
        ) {
            Ok(bytes) => log.quorum_state = parse_quorum_state(&bytes),
            Err(e) => log.unread.push((q.display().to_string(), e.to_string())),
        }
    }
    log
}

/// The replay's input from `snapshot`, then — unless `recovered` is `None`, the log
/// truncated fully to the snapshot — the segments' records at and above its end.
fn read_files(
    p: &PartitionDir,
    snapshot: Option<(SnapshotId, &PathBuf)>,
    recovered: Option<&mut Recovered>,
    max_bytes: Option<u64>,
    max_decompressed: usize,
) -> MetadataLog {
    let mut log = MetadataLog {
        path: p.path.display().to_string(),
        ..Default::default()
    };
    let mut dec = Decompressor::new(max_decompressed);
    let mut from = 0;
    if let Some((id, path)) = snapshot {
        from = id.end_offset;
        read_any(
            path,
            i64::MIN,
            Some(id.end_offset),
            max_bytes,
            &mut dec,
            &mut log,
            None,
        );
        log.last_epoch = log.last_epoch.max(id.epoch);
        log.end_offset = log.end_offset.max(id.end_offset);
        // Offsets between the snapshot's end and the log start are in neither file: the
        // history misses them (the node itself does not start: `recoverSnapshots`).
        if recovered.is_some() && id.end_offset < metadata_log_start(p) {
            log.gaps.push(id.end_offset);
        }
        log.snapshot = Some(id);
    } else if recovered.is_some() && metadata_log_start(p) > 0 {
        // A log starting above 0 with no snapshot: the records below its start are in no
        // file (the node does not start either, `recoverSnapshots`), so the history from
        // offset 0 is missing.
        log.gaps.push(0);
    }
    let Some(rec) = recovered else {
        return log;
    };
    for seg in &p.segments {
        let Some(file) = &seg.log else { continue };
        if rec.stopped {
            // `LogLoader.recoverLog` deletes the segments after the one it truncated.
            log.recovery_stop = log.recovery_stop.or(rec.stop_at);
            break;
        }
        read_any(file, from, None, max_bytes, &mut dec, &mut log, Some(rec));
        if rec.stopped && rec.stop_at.is_none() {
            // Bytes after the last whole batch that do not frame: truncated at its end.
            rec.stop_at = Some(rec.end.unwrap_or(seg.base_offset));
        }
    }
    log
}

/// The KRaft snapshots of `p` (`<endOffset>-<epoch>.checkpoint`, at `Snapshots.parse`'s
/// fixed widths), by end offset.
fn snapshots_of(p: &PartitionDir) -> Vec<(SnapshotId, &PathBuf)> {
    let mut snapshots: Vec<_> = p
        .kraft_snapshots
        .iter()
        .filter_map(|s| snapshot_id(s).map(|id| (id, s)))
        .collect();
    snapshots.sort_by_key(|(id, _)| (id.end_offset, id.epoch));
    snapshots
}

/// The snapshot the replay starts from when the log is not truncated fully to the latest:
/// none when the log still holds every record from offset 0 (the history then starts at
/// the first record, not at a snapshot that sums the records up); else the oldest snapshot
/// the log's segments continue from (its end offset at or above the log start), else the
/// newest (below the log start: a gap, see [`read_files`]). The records below a snapshot
/// are committed history the metadata log keeps until its segments are deleted
/// (`KafkaMetadataLog`); `MetadataLoader` starts from the newest snapshot only to build
/// the current image, which the replay from older records reaches all the same.
fn starting_snapshot<'a>(
    snapshots: &'a [(SnapshotId, &'a PathBuf)],
    log_start: i64,
) -> Option<&'a (SnapshotId, &'a PathBuf)> {
    match log_start {
        0 => None,
        start => snapshots
            .iter()
            .find(|(id, _)| id.end_offset >= start)
            .or(snapshots.last()),
    }
}

/// Read `bootstrap.checkpoint` (snapshot format) into `log.bootstrap`.
pub fn read_bootstrap(
    file: &Path,
    max_bytes: Option<u64>,
    max_decompressed: usize,
    log: &mut MetadataLog,
) {
    let mut scratch = MetadataLog::default();
    let mut dec = Decompressor::new(max_decompressed);
    read_any(
        file,
        i64::MIN,
        Some(0),
        max_bytes,
        &mut dec,
        &mut scratch,
        None,
    );
    log.bootstrap = scratch.entries;
    log.undecodable.extend(scratch.undecodable);
    log.unread.extend(scratch.unread);
}

/// Read the records of one file at offsets `>= from`; a snapshot's records are placed at
/// `snapshot_end − 1`. Every batch of a segment counts towards `recovered`.
fn read_any(
    file: &Path,
    from: i64,
    snapshot_end: Option<i64>,
    max_bytes: Option<u64>,
    dec: &mut Decompressor,
    log: &mut MetadataLog,
    mut recovered: Option<&mut Recovered>,
) {
    let name = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let source = match (&recovered, snapshot_end) {
        (Some(_), _) => "segment",
        (None, Some(0)) if name == "bootstrap.checkpoint" => "bootstrap",
        _ => "snapshot",
    };
    let walked = segment::walk_entries_items(file, ReadPolicy::Read, max_bytes, |item| {
        // A batch too large to hold is said by the scan (`batch_not_decoded`).
        let (Item::Entry(entry), rec) = (item, recovered.as_deref_mut()) else {
            if let Some(r) = recovered.as_deref_mut() {
                r.unknown = true;
            }
            return;
        };
        let Ok(b) = entry.as_v2() else {
            if let Some(r) = rec {
                r.unknown = true;
            }
            return;
        };
        let wanted = b.last_offset() >= from;
        if rec.is_none() && !wanted {
            return;
        }
        if let Some(r) = rec {
            if r.stopped {
                // Truncated by the node's recovery: never in its log after the next start.
                log.recovery_stop = log.recovery_stop.or(r.stop_at);
                return;
            }
            let valid = b.is_valid();
            r.batch(
                valid,
                b.base_offset(),
                b.last_offset(),
                b.partition_leader_epoch(),
            );
            if !valid {
                // Said by the scan (`crc_mismatch`, its truncation); the history of this
                // copy ends here, as the node's log does (`LogSegment.recover`).
                log.recovery_stop = r.stop_at;
                return;
            }
        }
        if !wanted {
            return;
        }
        let valid = b.is_valid();
        // A snapshot's records stand at its end offset − 1 in the history.
        let gap_at = |offset: i64| snapshot_end.map_or(offset, |e| e - 1);
        if !valid {
            // A snapshot's batch (segments stop above): the history records where it
            // misses it.
            log.gaps.push(gap_at(b.base_offset()));
            return;
        }
        if snapshot_end.is_none() {
            log.last_epoch = log.last_epoch.max(b.partition_leader_epoch());
        }
        let bad = |log: &mut MetadataLog, offset: i64, reason: String| {
            log.gaps.push(gap_at(offset));
            log.undecodable.push(Undecodable {
                file: name.clone(),
                offset,
                reason,
                source: source.to_string(),
                read_at_start: None,
            })
        };
        let recs = match format::batch_records(&b, dec) {
            Ok(r) => r,
            Err(e) => return bad(log, b.base_offset(), e.to_string()),
        };
        for r in recs {
            let r = match r {
                Ok(r) => r,
                Err(e) => return bad(log, b.base_offset(), e.to_string()),
            };
            let Some(offset) = b.base_offset().checked_add(i64::from(r.offset_delta)) else {
                return bad(log, b.base_offset(), "record offset beyond a long".into());
            };
            if offset < from {
                continue;
            }
            let time = b.base_timestamp().wrapping_add(r.timestamp_delta);
            let at = snapshot_end.map_or(offset, |e| e - 1);
            log.end_offset = log
                .end_offset
                .max(snapshot_end.unwrap_or(offset.saturating_add(1)));
            if b.is_control() {
                // A snapshot's own control records are its frame (header, footer) and the
                // KRaft state at its end: its `VotersRecord` is the voter set in force there
                // (`KRaftControlRecordStateMachine.maybeLoadSnapshot` adds it at the
                // snapshot's last contained offset), kept at that offset.
                if snapshot_end.is_none() || is_voters(&r) {
                    control(log, &r, at, time, b.partition_leader_epoch());
                }
                continue;
            }
            let Some(value) = r.value else {
                bad(log, offset, "null value".into());
                continue;
            };
            match decode_record(value) {
                Ok(record) => {
                    count_unknown(log, &record, at);
                    log.entries.push(MetaEntry {
                        offset: at,
                        time,
                        raft_epoch: b.partition_leader_epoch(),
                        from_snapshot: snapshot_end.is_some(),
                        record,
                    });
                }
                Err(e) => bad(log, offset, e.to_string()),
            }
        }
    });
    if let Err(e) = &walked {
        log.unread.push((file.display().to_string(), e.to_string()));
    }
    // Bytes after the last whole batch that do not frame as one: recovery truncates there.
    // A file read only in part (`max_bytes`) leaves the recovered end unknown.
    if let Some(r) = recovered {
        match walked {
            Ok((_, read)) if std::fs::metadata(file).is_ok_and(|m| m.len() > read) => {
                r.unknown = true
            }
            Ok((format::Tail::Clean, _)) => {}
            Ok(_) => r.stopped = true,
            Err(_) => r.unknown = true,
        }
    }
}

/// Count `record` at `at` among the records kept raw when its type or version is not in
/// the table. A partition-state record of a version the table lacks (a newer controller's):
/// a node of its release applies it, an older one refuses it (`MetadataRecordSerde`), and
/// the replay cannot: what it changed is unknown, as for a record that does not decode
/// (`MetadataVersion.partitionChangeRecordVersion` moves with the metadata version;
/// `PartitionRegistration.merge` applies any): a gap.
fn count_unknown(log: &mut MetadataLog, record: &MetaRecord, at: i64) {
    if let MetaRecord::Unknown {
        api_key, version, ..
    } = record
    {
        *log.unknown.entry((*api_key, *version)).or_default() += 1;
        if PARTITION_STATE_RECORDS.contains(api_key) {
            log.gaps.push(at);
        }
    }
}

/// The api keys of the records that change a partition's state in the replay:
/// `PartitionRecord`, `PartitionChangeRecord`, `RemoveTopicRecord`, `ClearElrRecord`.
const PARTITION_STATE_RECORDS: [i16; 4] = [3, 5, 9, 28];

/// Whether `r` is a `KRAFT_VOTERS` control record.
fn is_voters(r: &format::Record<'_>) -> bool {
    r.key.filter(|k| k.len() >= 4).is_some_and(|key| {
        ControlType::from_id(i16::from_be_bytes([key[2], key[3]])) == ControlType::KraftVoters
    })
}

fn control(log: &mut MetadataLog, r: &format::Record<'_>, offset: i64, time: i64, epoch: i32) {
    let Some(key) = r.key.filter(|k| k.len() >= 4) else {
        return;
    };
    let t = ControlType::from_id(i16::from_be_bytes([key[2], key[3]]));
    let value = r.value.unwrap_or_default();
    let mut ev = QuorumEvent {
        offset,
        time,
        raft_epoch: epoch,
        control_type: t.name().to_string(),
        leader_id: None,
        voters: None,
        kraft_version: None,
    };
    let ids = |v: &[kraft::Voter]| v.iter().map(|x| x.voter_id).collect::<Vec<i32>>();
    match t {
        ControlType::LeaderChange => {
            if let Ok(lc) = kraft::leader_change(value) {
                ev.leader_id = Some(lc.leader_id);
                ev.voters = lc.voters.as_deref().map(ids);
            }
        }
        ControlType::KraftVoters => {
            if let Ok(v) = kraft::voters(value) {
                ev.voters = v.voters.map(|v| v.iter().map(|e| e.voter_id).collect());
            }
        }
        ControlType::KraftVersion => {
            ev.kraft_version = kraft::kraft_version(value).ok().map(|k| k.kraft_version);
        }
        _ => {}
    }
    log.quorum.push(ev);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The counts of records kept raw survive JSON (a bundle), and an older bundle's `{}`
    /// reads as none.
    #[test]
    fn unknown_counts_round_trip_through_json() {
        let mut log = MetadataLog::default();
        log.unknown.insert((5, 3), 2);
        let json = serde_json::to_string(&log).unwrap();
        assert!(json.contains(r#""unknown":[[5,3,2]]"#), "{json}");
        let back: MetadataLog = serde_json::from_str(&json).unwrap();
        assert_eq!(back.unknown, log.unknown);
        let old = json.replace("[[5,3,2]]", "{}");
        let back: MetadataLog = serde_json::from_str(&old).unwrap();
        assert!(back.unknown.is_empty());
    }
}

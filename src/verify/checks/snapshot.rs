//! Producer snapshots (`.snapshot`) against the producer state replayed from the log
//! (`ProducerStateManager.truncateAndReload` / `readSnapshot`): corrupt files, snapshots above the log end, differing
//! producers, and open transactions a clean shutdown without a snapshot forgets.

use super::{EVIDENCE_CAP, load_checked, mk, name_of, served};
use crate::discover::layout::PartitionDir;
use crate::finding::{Finding, Kind};
use crate::partition::recovery::{SnapshotInput, forgotten_transaction_note};
use crate::partition::scan::PartitionReport;
use crate::partition::state::{ProducerState, expired_at_load};
use crate::read::format::snapshot::{ProducerSnapshot, SnapshotEntry, kafka_message};
use crate::read::segment::FileClass;
use crate::verify::VerifyOptions;
use serde_json::json;

/// What becomes of any snapshot of a `-delete` copy: its load rebuilds the producer state
/// only to offset 0 (`truncateAndReload` keeps no snapshot), so none is read.
const DELETE_COPY_SNAPSHOT: &str = "never loaded: a -delete copy's producer state is rebuilt only to offset 0, which keeps no snapshot, and the directory is deleted once loaded";

/// The snapshot files read, for the words of a finding about one of several files of one
/// offset ([`Twins::apply`], once the prediction has said what the load does with each).
pub(super) struct Twins {
    /// Each snapshot read: its offset, name, length and CRC-32C.
    read: Vec<(i64, String, usize, u32)>,
    /// Where the partition's snapshot findings start in the findings list.
    from: usize,
}

impl Twins {
    /// Prefix the broker text of each corrupt or out-of-range snapshot's finding that has
    /// another file of its offset ([`of_one_twin`]); not for a `-delete` copy.
    pub(super) fn apply(self, r: &PartitionReport, out: &mut [Finding]) {
        if !super::delete_copy(r) {
            of_one_twin(&self.read, &mut out[self.from..]);
        }
    }

    /// Drop the producer comparisons of the snapshots the load deletes unread as above
    /// the log end it recovers (the prediction's `snapshot_beyond_log` leftovers) while the
    /// walk's log end holds them: `ProducerStateManager.truncateAndReload` removes every
    /// snapshot above the recovered end before any is read, so none of them becomes the
    /// broker's state, and what they differ in is the cut's doing (the replay went on past
    /// the batch recovery stops at, which the truncation's own finding names). Above the
    /// walk's end too, a snapshot's finding stays (it covers offsets no file holds).
    pub(super) fn drop_unread_beyond_log(
        &self,
        r: &PartitionReport,
        prediction: &crate::partition::recovery::RecoveryPrediction,
        out: &mut Vec<Finding>,
    ) {
        // A load that fails deletes nothing; a -delete copy's snapshots are all above its
        // end (0) and keep their own words (`DELETE_COPY_SNAPSHOT`).
        if prediction.load_failure.is_some() || super::delete_copy(r) {
            return;
        }
        let deleted = |name: &str| {
            (prediction.leftovers.iter()).any(|l| l.kind == "snapshot_beyond_log" && l.file == name)
        };
        let mut i = 0;
        out.retain(|f| {
            i += 1;
            i <= self.from
                || f.kind != Kind::SnapshotMismatch
                || !f.segment.as_deref().is_some_and(deleted)
                || r.log_end_offset
                    .is_none_or(|l| f.offset.is_none_or(|o| o > l))
        });
    }
}

/// Check every producer snapshot of the partition; returns what the recovery prediction
/// needs of each (offset, name, whether it parses), and the files read ([`Twins`]).
pub(super) fn check_snapshots(
    p: &PartitionDir,
    r: &PartitionReport,
    opts: &VerifyOptions,
    out: &mut Vec<Finding>,
) -> (Vec<SnapshotInput>, Twins) {
    let first_offset = r.carried.first_offset;
    let leo = r.log_end_offset;
    let mut snap_inputs = Vec::new();
    let first_finding = out.len();
    // The static expiry, never a dynamic one of the KRaft metadata log (which the scan's
    // replay of the appends takes): on its first publish `BrokerMetadataPublisher`
    // loads the logs (`initializeManagers`, `LogManager.startup`) before
    // `DynamicConfigPublisher` applies any dynamic config.
    let expiration = crate::partition::recovery::producer_expiration_ms(opts.broker_version);
    // Each snapshot read: its offset, name, length and CRC-32C (files of one offset compared).
    let mut read: Vec<(i64, String, usize, u32)> = Vec::new();
    for sf in &p.snapshots {
        let name = name_of(&sf.path);
        let Some(bytes) = load_checked(&sf.path, FileClass::ProducerSnapshot, opts, r, out) else {
            continue;
        };
        read.push((sf.offset, name.clone(), bytes.len(), crc32c::crc32c(&bytes)));
        let parsed = ProducerSnapshot::parse(&bytes);
        snap_inputs.push(SnapshotInput {
            offset: sf.offset,
            name: name.clone(),
            valid: parsed.is_ok(),
            producers: parsed.as_ref().map_or_else(
                |_| Default::default(),
                |s| kept_at_load(s, r.ref_time, expiration),
            ),
        });
        let snap = match parsed {
            Ok(s) => s,
            Err(e) => {
                out.push(
                    mk(r, Kind::SnapshotCorrupt, &name, format!("{name}: {}", kafka_message(&e)))
                        .offset(sf.offset)
                        .evidence(json!({"structure": e.structure, "field": e.field, "error_position": e.position, "problem": e.problem.to_string(), "length": bytes.len()}))
                        .broker(served(r, "CorruptSnapshotException at load: the broker deletes the snapshot and falls back to the next older one (or a full replay of the log)", DELETE_COPY_SNAPSHOT)),
                );
                continue;
            }
        };
        if leo.is_some_and(|l| sf.offset > l) {
            out.push(
                mk(r, Kind::SnapshotMismatch, &name, format!("{name}: snapshot at offset {} is above the log end offset {}: it covers data the log no longer holds", sf.offset, leo.unwrap_or(0)))
                    .offset(sf.offset)
                    .evidence(json!({"snapshot_offset": sf.offset, "log_end_offset": leo}))
                    .broker(served(r, "deleted at load (snapshots above the log end offset are removed); the state is rebuilt from an older snapshot", DELETE_COPY_SNAPSHOT)),
            );
            continue;
        }
        if first_offset.is_none_or(|f| sf.offset <= f) {
            continue; // nothing of the log lies below N: nothing to compare with
        }
        let Some((_, state)) = r
            .carried
            .snapshot_states()
            .iter()
            .find(|(n, _)| *n == sf.offset)
        else {
            continue;
        };
        let compaction = r.compaction();
        let diffs = compare_snapshot(
            &snap,
            state,
            first_offset.unwrap_or(0),
            compaction.is_some(),
        );
        if let Some(first) = diffs.first() {
            let mut evidence = json!({"snapshot_offset": sf.offset, "differences": diffs.iter().take(EVIDENCE_CAP).map(|d| d.1.clone()).collect::<Vec<_>>()});
            if let Some(c) = compaction {
                // Read as compacted: only what cleaning cannot explain is left.
                evidence["treated_as_compacted"] = json!(c);
            }
            out.push(
                mk(r, Kind::SnapshotMismatch, &name, format!("{name}: {} producer(s) differ from the state rebuilt from offsets below {}; first: {}", diffs.len(), sf.offset, first.0))
                    .offset(sf.offset)
                    .evidence(evidence)
                    .broker(served(r, "loaded as is when it is the newest valid snapshot: the broker's producer state (open transactions, sequences, epochs) is then what the snapshot says, not what the log says", DELETE_COPY_SNAPSHOT)),
            );
        }
    }
    let kept = one_per_offset(snap_inputs);
    out.extend(same_offset(r, &read, &kept));
    let twins = Twins {
        read,
        from: first_finding,
    };
    (kept, twins)
}

/// A corrupt or out-of-range snapshot file with another file of its offset: the broker
/// keeps one file per offset (`ProducerStateManager.loadSnapshots`), which one is not
/// known, so what it does to this file holds only if it keeps this one; the others it
/// never reads nor deletes. Its finding's broker text says so.
fn of_one_twin(read: &[(i64, String, usize, u32)], found: &mut [Finding]) {
    for f in found
        .iter_mut()
        .filter(|f| matches!(f.kind, Kind::SnapshotCorrupt | Kind::SnapshotMismatch))
    {
        let Some(offset) = f.offset else { continue };
        let twins = read.iter().filter(|g| g.0 == offset).count();
        let this = read
            .iter()
            .any(|g| g.0 == offset && Some(g.1.as_str()) == f.segment.as_deref());
        if twins > 1 && this {
            f.broker_behaviour = format!(
                "one of {twins} files of offset {offset} (producer_snapshot_duplicate): the broker keeps one, the last its directory listing gives, and never reads nor deletes the others; if it keeps this one: {}",
                f.broker_behaviour
            );
        }
    }
}

/// The one snapshot file of each offset the prediction reads. `ProducerStateManager
/// .loadSnapshots` keys the files by offset and keeps the last its directory listing gives
/// (an order the file system decides, not known here); the others are never read nor
/// deleted. Assumed: the first valid file by name, else the first (`same_offset` names it).
/// `inputs` are sorted by offset, then name.
fn one_per_offset(inputs: Vec<SnapshotInput>) -> Vec<SnapshotInput> {
    let mut kept: Vec<SnapshotInput> = Vec::with_capacity(inputs.len());
    for s in inputs {
        match kept.last_mut() {
            Some(last) if last.offset == s.offset => {
                if !last.valid && s.valid {
                    *last = s;
                }
            }
            _ => kept.push(s),
        }
    }
    kept
}

/// `producer_snapshot_duplicate`: several snapshot files of one offset (`5.snapshot`,
/// `+5.snapshot` beside `00000000000000000005.snapshot`: Kafka reads the offset of any
/// name ending `.snapshot` with `Long.parseLong`). `ProducerStateManager.loadSnapshots`
/// keys them by offset: the last one its directory listing gives (an order the file system
/// decides) is the snapshot of that offset, the others are never read nor deleted by the
/// broker. A warning when their bytes differ (which producer state a load from that offset
/// holds is then not known), info when they are the same bytes; nothing in a `-delete`
/// copy.
fn same_offset(
    r: &PartitionReport,
    read: &[(i64, String, usize, u32)],
    used: &[SnapshotInput],
) -> Vec<Finding> {
    let mut out = Vec::new();
    // A `-delete` copy's producer state is rebuilt only to offset 0, which keeps no
    // snapshot (`DELETE_COPY_SNAPSHOT`): which file of an offset the broker keeps changes
    // nothing there.
    if super::delete_copy(r) {
        return out;
    }
    for group in read.chunk_by(|a, b| a.0 == b.0).filter(|g| g.len() > 1) {
        let offset = group[0].0;
        let names: Vec<&str> = group.iter().map(|g| g.1.as_str()).collect();
        let differ = group.iter().any(|g| (g.2, g.3) != (group[0].2, group[0].3));
        // The file the prediction reads for this offset ([`one_per_offset`]).
        let assumed = used
            .iter()
            .find(|s| s.valid && s.offset == offset)
            .map(|s| s.name.clone());
        let msg = if differ {
            format!(
                "{} producer snapshot files of offset {offset} with different bytes ({}): the broker loads whichever its directory listing gives last, so the producer state it loads from offset {offset} is not known{}",
                names.len(),
                crate::escape::text(&names.join(", ")),
                match &assumed {
                    Some(a) => format!("; the prediction reads {}", crate::escape::text(a)),
                    None => String::new(),
                }
            )
        } else {
            format!(
                "{} producer snapshot files of offset {offset} with the same bytes ({}): the broker loads one and never reads nor deletes the others",
                names.len(),
                crate::escape::text(&names.join(", "))
            )
        };
        let f = mk(r, Kind::ProducerSnapshotDuplicate, names[0], msg)
            .severity(if differ {
                crate::finding::Severity::Warning
            } else {
                crate::finding::Severity::Info
            })
            .offset(offset)
            .evidence(json!({
                "snapshot_offset": offset,
                "files": group.iter().map(|g| json!({"name": g.1, "bytes": g.2, "crc32c": g.3})).collect::<Vec<_>>(),
                "same_bytes": !differ,
                "prediction_reads": assumed,
            }))
            .broker(served(r, "ProducerStateManager.loadSnapshots keeps one SnapshotFile per offset, the last of Files.list's order; the others stay on disk unread, and removing the snapshot of that offset (stray, out of range, older than the retained ones) deletes only the kept file", DELETE_COPY_SNAPSHOT))
            .remediation(format!(
                "with the broker stopped, keep one snapshot of offset {offset} under the broker's name ({}) and move the others out of the partition directory (keep them as evidence); if the bytes differ, the one whose producers match the log (klogscan verify: snapshot_mismatch) is the one to keep",
                crate::discover::layout::canonical_segment_name(offset, ".snapshot")
            ));
        out.push(f);
    }
    out
}

/// The producers of `snap` a load at `now_ms` keeps, and those of them with an open
/// transaction: `ProducerStateManager.loadFromSnapshot` skips an entry expired after
/// `expiration_ms` ([`expired_at_load`]).
fn kept_at_load(
    snap: &ProducerSnapshot<'_>,
    now_ms: i64,
    expiration_ms: i64,
) -> (Vec<i64>, Vec<i64>) {
    let (mut kept, mut open) = (Vec::new(), Vec::new());
    for e in snap.entries() {
        let has_txn = e.current_txn_first_offset >= 0;
        if !expired_at_load(has_txn, e.timestamp, now_ms, expiration_ms) {
            kept.push(e.producer_id);
            if has_txn {
                open.push(e.producer_id);
            }
        }
    }
    (kept, open)
}

/// A corrupt snapshot the next load never reads throws nothing: its finding's broker text
/// says what the load does with it instead, from the prediction's fate of the file (deleted
/// unread by a `truncateAndReload` cut — above the log end, at or below the log start, a
/// stray, above a recovered segment's base — or kept unread below the snapshot the load
/// reads). A load that fails before its rebuild, and a `-delete` copy, keep their words.
pub(super) fn corrupt_unread(
    r: &PartitionReport,
    prediction: &crate::partition::recovery::RecoveryPrediction,
    out: &mut [Finding],
) {
    if prediction.load_failure.is_some() || super::delete_copy(r) {
        return;
    }
    for f in out.iter_mut().filter(|f| f.kind == Kind::SnapshotCorrupt) {
        let Some(file) = f.segment.as_deref() else {
            continue;
        };
        let fate = prediction.leftovers.iter().find(|l| l.file == file);
        let unread = match fate {
            Some(l) if l.kind == "corrupt_snapshot" => continue,
            Some(l) => format!(
                "never read at the next load, so it throws nothing: {} ({})",
                l.action, l.kind
            ),
            None => match prediction.producer_state.snapshot_offset {
                Some(o) => format!(
                    "never read at the next load: it loads the newer snapshot at {o} and keeps this file unread; only a later truncation below {o} reaches it (CorruptSnapshotException then: the broker deletes it and falls back to the next older one)"
                ),
                None => continue,
            },
        };
        // One of several files of its offset gets its prefix after this (`Twins::apply`).
        f.broker_behaviour = unread;
    }
}

/// A hanging transaction begun below the log start, its start known only from the producer
/// snapshot the scan seeded from, in a copy whose next load keeps no snapshot holding it (the
/// state is rebuilt from an empty one at the log start: the snapshot at the log start is
/// deleted unread, `ProducerStateManager.truncateAndReload`): the rebuild meets the
/// transaction's first batch this log holds with no ongoing transaction and opens it there
/// (`ProducerAppendInfo`), so after that start `DescribeProducers` gives that offset, and an
/// abort naming today's start offset finds nothing. The remediation gives both commands.
pub(super) fn reopened_after_load(
    r: &PartitionReport,
    prediction: &crate::partition::recovery::RecoveryPrediction,
    out: &mut [Finding],
) {
    let ps = &prediction.producer_state;
    // Only a load that keeps the log whole and rebuilds from the log start (a skipped
    // rebuild forgets the transaction: `check_missing`).
    if !r.source.copy.is_live()
        || prediction.load_failure.is_some()
        || prediction.truncation.is_some()
        || !prediction.deleted_segments.is_empty()
        || ps.skipped
        || ps.origin.is_some()
    {
        return;
    }
    // The state is replayed from the log start (the recoveries' snapshots descend from it).
    let Some(from) = prediction.log_start_offset_after else {
        return;
    };
    let who = r.source.broker_id;
    for f in out
        .iter_mut()
        .filter(|f| f.kind == Kind::HangingTransaction)
    {
        let Some(held) = (r.carried.outcome.open.iter())
            .find(|t| Some(t.first_offset) == f.offset && Some(t.producer_id) == f.producer_id)
            .and_then(|t| t.first_held_offset)
            .filter(|&h| h >= from)
        else {
            continue;
        };
        let whose = who.map_or("The broker".to_string(), |b| format!("Broker {b}"));
        let note = format!(
            "{whose}'s next start rebuilds the producer state from offset {from} without a snapshot that holds this transaction's start, so the transaction opens again at offset {held}, its first batch this log holds (DescribeProducers then gives that offset): after that start, abort it with {}",
            crate::partition::state::abort_command(&r.topic, r.partition, held)
        );
        f.remediation = Some(match f.remediation.take() {
            Some(r) => format!("{r}. {note}"),
            None => note,
        });
    }
}

/// The partition has open transactions, no snapshot, and no segment the broker recovers
/// at load: after a clean shutdown the broker forgets the transactions.
pub(super) fn check_missing(
    p: &PartitionDir,
    r: &PartitionReport,
    prediction: &crate::partition::recovery::RecoveryPrediction,
    out: &mut Vec<Finding>,
) {
    // Only after a clean shutdown does the broker skip the rebuild when no snapshot is left
    // (`ProducerStateManager`/`LogLoader`: `isEmpty && hadCleanShutdown`, after the stray
    // snapshots are removed — every snapshot file may be one; a segment recovered at load
    // leaves one): the prediction's `skipped`. Otherwise it replays the log from its start
    // and finds the open transactions. An emptied log loses them with its data.
    if prediction.producer_state.skipped
        && prediction.deleted_segments.is_empty()
        && !r.carried.outcome.open.is_empty()
    {
        // The abort the hanging transactions' remediation gives has to run before that
        // start: after it, no open transaction is left for it to find.
        let open = &r.carried.outcome.open;
        let who = r.source.broker_id;
        let mut hanging = 0;
        for f in out.iter_mut().filter(|f| {
            f.kind == Kind::HangingTransaction
                && r.source.copy.is_live()
                && open.iter().any(|t| {
                    Some(t.first_offset) == f.offset && Some(t.producer_id) == f.producer_id
                })
        }) {
            hanging += 1;
            let note = forgotten_transaction_note(f.offset.unwrap_or(0), who);
            f.remediation = Some(match f.remediation.take() {
                Some(r) => format!("{r}. {note}"),
                None => note,
            });
        }
        let who = who.map_or("the broker".to_string(), |b| format!("broker {b}"));
        let mut f = mk(r, Kind::SnapshotMismatch, &name_of(&p.path), format!("no producer snapshot{} although {} transaction(s) are open: after a clean shutdown the broker skips the rebuild and forgets them", if p.snapshots.is_empty() { "" } else { " left once the stray ones are removed" }, open.len()))
            .offset(open[0].first_offset)
            .evidence(json!({"open": open}))
            .broker("with no snapshot and a clean shutdown, rebuildProducerState skips the log scan: every producer state, open transactions included, is lost (their data reads as committed)");
        if hanging > 0 {
            f = f.remediation(format!("abort the hanging transactions among them before {who} starts again, through the partition's current leader: their hanging_transaction findings give the commands"));
        }
        out.push(f);
    }
}

/// Compare one snapshot with the replayed state at its offset (rule 29). Returns one line
/// and one evidence object per differing producer.
///
/// On a partition treated as compacted (`cleaned`) the replay of the cleaned log can only
/// lag the snapshot: the cleaner keeps every remaining segment's `.snapshot` as written
/// (`UnifiedLog.replaceSegments` deletes only those of segments merged away,
/// `UnifiedLogTest.testCompactionDeletesProducerStateSnapshots`) and removes batches, never
/// adds them: those whose records are all superseded or aborted, except each producer's
/// last batch of the whole log (`LogCleaner.cleanInto`, `lastRecordsOfActiveProducers`;
/// kept empty if need be), and markers once their transaction has no data left. Kafka loads such a snapshot as is and its state is right.
/// So a snapshot producer the replay never met below the offset, or one ahead of it
/// ([`ahead_by_cleaning`]), is no mismatch there; one behind the replay still is.
fn compare_snapshot(
    snap: &ProducerSnapshot<'_>,
    state: &[ProducerState],
    log_first: i64,
    cleaned: bool,
) -> Vec<(String, serde_json::Value)> {
    let mut out = Vec::new();
    for e in snap.entries() {
        let Some(s) = state.iter().find(|s| s.producer_id == e.producer_id) else {
            if !cleaned && (e.last_offset >= log_first || e.current_txn_first_offset >= log_first) {
                out.push((
                    format!("producer {} is in the snapshot but wrote nothing below its offset", e.producer_id),
                    json!({"producer_id": e.producer_id, "problem": "unknown_producer", "snapshot": e}),
                ));
            }
            continue;
        };
        let txn = s.current_txn_first_offset.unwrap_or(-1);
        let fields: Vec<(&str, i64, i64)> = differing_fields(&e, s, log_first)
            .into_iter()
            .filter(|&(f, a, b)| !(cleaned && ahead_by_cleaning(f, a, b, &e, s)))
            .collect();
        if fields.is_empty() {
            continue;
        }
        let txn_differs = fields.iter().any(|f| f.0 == "current_txn_first_offset");
        let mut problem = "fields_differ";
        let line = if txn_differs && e.current_txn_first_offset >= 0 && txn < 0 {
            problem = "keeps_closed_transaction";
            format!(
                "producer {} keeps a transaction open from offset {} that the log closed",
                e.producer_id, e.current_txn_first_offset
            )
        } else if txn_differs && e.current_txn_first_offset < 0 && txn >= 0 {
            problem = "open_transaction_missing";
            format!(
                "producer {} has a transaction open since offset {txn} in the log but none in the snapshot",
                e.producer_id
            )
        } else {
            let (f, a, b) = fields[0];
            format!(
                "producer {}: {f} is {a} in the snapshot, {b} in the log",
                e.producer_id
            )
        };
        out.push((line, json!({
            "producer_id": e.producer_id,
            "problem": problem,
            "fields": fields.iter().map(|(f, a, b)| json!({"field": f, "snapshot": a, "log": b})).collect::<Vec<_>>(),
        })));
    }
    for s in state {
        if let Some(first) = s.current_txn_first_offset
            && !snap.entries().any(|e| e.producer_id == s.producer_id)
        {
            out.push((
                format!("producer {} with a transaction open since offset {first} is missing from the snapshot", s.producer_id),
                json!({"producer_id": s.producer_id, "problem": "open_transaction_missing", "current_txn_first_offset": first}),
            ));
        }
    }
    out
}

/// The fields of snapshot entry `e` that differ from the replayed state `s`, as
/// `(field, snapshot, log)`; what lies below the first offset held (`log_first`, retention)
/// is unknown, not different.
fn differing_fields(
    e: &SnapshotEntry,
    s: &ProducerState,
    log_first: i64,
) -> Vec<(&'static str, i64, i64)> {
    let mut fields: Vec<(&str, i64, i64)> = Vec::new();
    let txn = s.current_txn_first_offset.unwrap_or(-1);
    if e.current_txn_first_offset != txn
        && !(e.current_txn_first_offset >= 0 && e.current_txn_first_offset < log_first && txn >= 0)
    {
        fields.push(("current_txn_first_offset", e.current_txn_first_offset, txn));
    }
    if e.producer_epoch != s.producer_epoch {
        fields.push(("epoch", e.producer_epoch as i64, s.producer_epoch as i64));
    }
    // The producer's last data batch lies below the first offset held (retention
    // deleted it) and only a marker remains: the marker keeps the batch metadata in the
    // broker's entry, the log cannot show it. Unknown, not wrong.
    let data_before_start = e.last_offset >= 0 && e.last_offset < log_first && s.last_offset < 0;
    if e.last_offset != s.last_offset && !data_before_start {
        fields.push(("last_offset", e.last_offset, s.last_offset));
    }
    if e.last_offset >= 0 && s.last_offset >= 0 {
        if e.last_sequence != s.last_sequence {
            fields.push((
                "last_sequence",
                e.last_sequence as i64,
                s.last_sequence as i64,
            ));
        }
        if e.offset_delta != s.offset_delta {
            fields.push(("offset_delta", e.offset_delta as i64, s.offset_delta as i64));
        }
    }
    if s.coordinator_epoch >= 0 && e.coordinator_epoch != s.coordinator_epoch {
        fields.push((
            "coordinator_epoch",
            e.coordinator_epoch as i64,
            s.coordinator_epoch as i64,
        ));
    }
    if e.timestamp != s.last_timestamp {
        fields.push(("timestamp", e.timestamp, s.last_timestamp));
    }
    fields
}

/// Whether the snapshot's `field` (`snap`, against `log` in the replay) is ahead of the
/// replay of a cleaned log in a way removed batches explain:
/// - its last batch (`last_offset`) is later: the cleaner removed that batch, so the
///   batch's own fields (`last_sequence`, `offset_delta`, `timestamp`) describe another
///   batch than the replay's last;
/// - a higher producer `epoch` or `coordinator_epoch`, or (same last batch) a later
///   `timestamp`: a batch or marker that carried them was removed (a marker goes once its
///   transaction has no data left);
/// - an open transaction (`current_txn_first_offset`) the replay shows as starting later
///   (its first batches removed), or not at all when the replay met nothing of the
///   producer from the snapshot's first offset on (every batch of it removed; a marker
///   there would have closed it, and a cleaner leaves a transaction's marker while any of
///   its data remains).
///
/// A snapshot behind the replay (an earlier last batch, a lower epoch, a transaction the
/// replay shows open from earlier) is never explained by cleaning.
fn ahead_by_cleaning(
    field: &str,
    snap: i64,
    log: i64,
    e: &SnapshotEntry,
    s: &ProducerState,
) -> bool {
    let later_batch = e.last_offset > s.last_offset;
    match field {
        "last_offset" | "last_sequence" | "offset_delta" => later_batch,
        "timestamp" => later_batch || snap > log,
        "epoch" | "coordinator_epoch" => snap > log,
        "current_txn_first_offset" => {
            snap >= 0 && (log > snap || (log < 0 && s.last_activity() < snap))
        }
        _ => false,
    }
}

//! Acknowledged data a replica loses at its next start: `truncation_below_high_watermark`.
//!
//! The recovery model (`partition::recovery`: `LogLoader.load` → `recoverLog` →
//! `LogSegment.recover`) says where the next start truncates each partition. The broker
//! then loads the high watermark from `replication-offset-checkpoint` and clamps it to the
//! new log end offset (`UnifiedLog.updateHighWatermark`): offsets between the truncation
//! point and the checkpointed high watermark were replicated to every in-sync replica and
//! acknowledged to `acks=all` producers, and this copy no longer holds them. The checkpoint
//! is written periodically (`replica.high.watermark.checkpoint.interval.ms`), so the high
//! watermark the broker had in memory may have been higher: the loss is a lower bound.
//!
//! Whether the data is gone for the cluster depends on the other replicas: a follower that
//! restarts truncated re-fetches the range from the leader (`AbstractFetcherThread`
//! truncates to the leader's epoch end offset, then fetches), so the range survives when
//! another replica holds it intact. Among the inputs, another copy of the same
//! topic-partition in the same cluster (`replicas::replica_pairs`, the rule every
//! replica join uses) holds it when its log, after its own predicted recovery, covers
//! `[first lost offset, high watermark)`. The finding is an error when no input copy does,
//! and a warning naming the copy when one does, with whether that copy's log reaches the
//! latest leader epoch seen in the inputs (the batches' `partitionLeaderEpoch`: followers
//! copy it, so it shows the copy followed the newest leader, not who led).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::report::ScanReport;
use crate::discover::layout::Inventory;
use crate::finding::{Finding, Kind, Severity};
use crate::partition::recovery::reopened::ReopenedTxn;
use crate::partition::recovery::{SegmentPlan, TruncationPrediction};
use crate::partition::results::{PartitionReport, ScanOptions};

/// Another copy of the partition among the inputs, as the loss sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CopyState {
    /// The partition directory.
    pub path: String,
    pub broker_id: Option<i32>,
    /// Its log start offset and its log end offset after its own predicted recovery.
    pub log_start_offset: Option<i64>,
    pub log_end_offset_after: Option<i64>,
    /// Its log covers `[first_lost_offset, high_watermark)` after its own recovery, with the
    /// same batches and none of them damaged, and it is a live copy.
    pub holds_lost_range: bool,
    /// Why a copy whose offsets cover the range does not hold it: `not_live` (a
    /// `-future` log follows the live one and is truncated with it; it never leads),
    /// `diverges_at:<offset>` (its batches differ from this copy's there, below the high
    /// watermark: following it, this replica truncates to the fork and fetches other
    /// records), `damaged_at:<offset>` (a batch of its own there fails its CRC: a follower
    /// fetching it fails with `CorruptRecordException` at that offset).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_holding: Option<String>,
    /// The newest `partitionLeaderEpoch` among its batches.
    pub latest_leader_epoch: Option<i32>,
    /// Its newest epoch is the latest leader epoch among all the copies in the inputs.
    pub at_latest_epoch: bool,
}

/// The evidence of a `truncation_below_high_watermark` finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct LostRange {
    /// The checkpointed high watermark (`replication-offset-checkpoint`).
    pub high_watermark: i64,
    /// The first offset lost: where recovery truncates.
    pub first_lost_offset: i64,
    /// At least this many offsets from the log start up to the high watermark are lost (a
    /// lower bound: the checkpoint lags the high watermark in memory; compaction may have
    /// left gaps).
    pub offsets_lost_at_least: i64,
    /// Readable batches, and records of those whose CRC holds, that recovery removes
    /// (above the high watermark too).
    pub batches_removed: u64,
    pub records_removed: u64,
    /// The segments truncated (first) and deleted.
    pub segments: Vec<String>,
    /// Byte position the truncated segment is cut at, and why.
    pub position: u64,
    pub reason: String,
    /// The other copies of the partition in the inputs (same cluster).
    pub copies: Vec<CopyState>,
    /// The first copy holding the lost range intact (its path), preferring one at the
    /// latest leader epoch.
    pub intact_copy: Option<String>,
    /// The latest leader epoch among the batches of every copy in the inputs.
    pub latest_leader_epoch: Option<i32>,
    /// Another live copy's log start, when above this copy's own: the offsets below it are
    /// deleted in the partition already (that copy's leader deleted them; following, this
    /// replica truncates fully to it), so they are not counted lost.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition_log_start: Option<i64>,
    /// What the loss rests on beyond the bytes, when something does: with the log dir's
    /// `log-start-offset-checkpoint` unread, that the log start is at or below
    /// `first_lost_offset` (counted from the first segment's base; a log start above the
    /// lost offsets leaves nothing lost that a consumer could still read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub assumes: Option<String>,
}

impl LostRange {
    /// The evidence of a `truncation_below_high_watermark` finding, read back.
    pub fn of(f: &Finding) -> Option<LostRange> {
        if f.kind != Kind::TruncationBelowHighWatermark {
            return None;
        }
        serde_json::from_value(f.evidence.clone()).ok()
    }

    /// The log start the loss counts from: the partition's, as the copies show it.
    fn log_start(&self, p: &PartitionReport) -> i64 {
        (self.partition_log_start).unwrap_or_else(|| p.log_start_offset.unwrap_or(i64::MIN))
    }

    /// The copy named by `intact_copy`.
    pub fn intact(&self) -> Option<&CopyState> {
        let p = self.intact_copy.as_deref()?;
        self.copies.iter().find(|c| c.path == p)
    }
}

/// The offset ranges `[from, to)` the plan removes from a log whose segments start at
/// `bases` (in order) and whose log end offset is `log_end`: the truncation that ends the
/// log removes everything after it (its deleted segments too); a load-time truncation of
/// an earlier segment removes the rest of that segment only.
fn removed_ranges(plan: &SegmentPlan, bases: &[(String, i64)], log_end: i64) -> Vec<(i64, i64)> {
    let next_base = |seg: &str| {
        let i = bases.iter().position(|(n, _)| n == seg)?;
        bases.get(i + 1).map(|b| b.1)
    };
    let mut out = Vec::new();
    let mut seen: Vec<&TruncationPrediction> = Vec::new();
    for t in plan.truncation.iter().chain(&plan.load_truncations) {
        if seen.contains(&t) {
            continue;
        }
        seen.push(t);
        let ends_log = plan.truncation.as_ref() == Some(t) && !plan.deleted.is_empty();
        let to = match next_base(&t.segment) {
            Some(b) if !ends_log => b,
            _ => log_end,
        };
        if t.offset < to {
            out.push((t.offset, to));
        }
    }
    out
}

/// The log end offset a copy has after its own predicted recovery.
/// A copy's batch keys when they are in offset order (what the divergence compares).
fn sorted_keys(r: &PartitionReport) -> Option<&[crate::partition::walked::BatchKey]> {
    r.carried
        .cluster_inputs
        .batches
        .as_deref()
        .filter(|b| b.is_sorted_by_key(|x| x.base_offset))
}

/// Why copy `o`, whose offsets cover `[lost_from, hw)`, still does not hold `p`'s
/// acknowledged records there (`None`: it holds them). A follower truncates to the
/// leader's epoch boundaries and fetches the leader's bytes
/// (`AbstractFetcherThread.getOffsetTruncationState`, `testDivergingEpochs`), so a copy
/// whose batches differ from `p`'s below the high watermark holds other records; a batch of
/// `o`'s own that fails its CRC stops a follower there (`UnifiedLog.appendAsFollower`
/// validates every batch); a `-future` log never leads. Differences the cleaner alone can
/// make (whole batches missing, a batch rewritten smaller) are no divergence only on a
/// partition treated as compacted, as `replicas::check` reads them: each broker's
/// `LogCleaner` compacts its own copy, while nothing removes a batch from the middle of a
/// `delete` log.
fn why_not_holding(
    p: &PartitionReport,
    o: &PartitionReport,
    lost_from: i64,
    hw: i64,
) -> Option<String> {
    if !o.source.copy.is_live() {
        return Some("not_live".into());
    }
    // This copy's own damaged batches are left out of both sides: a flipped bit in a
    // header changes its key, not the records the other copy holds there.
    let own_damage: std::collections::BTreeSet<i64> = p
        .carried
        .damaged()
        .iter()
        .filter(|d| d.remote_segment.is_none())
        .map(|d| d.base_offset)
        .collect();
    let undamaged =
        |k: &[crate::partition::walked::BatchKey]| -> Vec<crate::partition::walked::BatchKey> {
            k.iter()
                .filter(|x| !own_damage.contains(&x.base_offset))
                .copied()
                .collect()
        };
    if let (Some(a), Some(b)) = (sorted_keys(p), sorted_keys(o)) {
        let (a, b) = (undamaged(a), undamaged(b));
        if let Some(d) = super::replicas::diverge(&a, &b)
            && d.first_offset < hw
            && !(d.compaction_explainable && (p.compaction().is_some() || o.compaction().is_some()))
            && let Some(at) = first_not_held(&a, &b, d.common, hw)
        {
            return Some(format!("diverges_at:{at}"));
        }
    }
    o.carried
        .damaged()
        .iter()
        .filter(|d| d.remote_segment.is_none() && d.last_offset >= lost_from && d.base_offset < hw)
        .map(|d| d.base_offset)
        .min()
        .map(|at| format!("damaged_at:{at}"))
}

/// The first of `p`'s batches in `common` (the offsets both copies hold) below `hw` that
/// `o` does not hold as it is (same offsets, size and CRC): what `o` lacks or holds other
/// records at. A batch `o` holds and `p` lacks is no record of `p`'s that `o` misses — in
/// the copy that loses the range it is as often damage that left no batch to key (a
/// segment overwritten with bytes that do not frame) as another history — so it alone
/// makes no divergence here; `replica_divergence` reports the difference itself.
fn first_not_held(
    p: &[crate::partition::walked::BatchKey],
    o: &[crate::partition::walked::BatchKey],
    (lo, hi): (i64, i64),
    hw: i64,
) -> Option<i64> {
    let held: std::collections::HashSet<(i64, i64, u32, u32)> = o
        .iter()
        .map(|k| (k.base_offset, k.last_offset, k.crc, k.size))
        .collect();
    p.iter()
        .filter(|k| k.base_offset >= lo && k.last_offset <= hi && k.base_offset < hw)
        .find(|k| !held.contains(&(k.base_offset, k.last_offset, k.crc, k.size)))
        .map(|k| k.base_offset)
}

fn end_after(p: &PartitionReport) -> Option<i64> {
    p.carried.recovery.log_end_after.or(p.log_end_offset)
}

/// The readable batches and records the plan removes, and the segments it touches.
fn removed_counts(p: &PartitionReport, first: &TruncationPrediction) -> (u64, u64, Vec<String>) {
    let plan = &p.carried.recovery;
    let mut segments = vec![first.segment.clone()];
    segments.extend(plan.deleted.iter().cloned());
    let (mut batches, mut records) = (0, 0);
    for w in &p.carried.segment_walks {
        let Some(walk) = &w.walk else { continue };
        if plan.deleted.iter().any(|d| w.name == *d) {
            batches += walk.batches;
            records += walk.records;
        } else if plan.truncation_of(&w.name.text()).is_some() {
            batches += walk.removed_batches;
            records += walk.removed_records;
        }
    }
    (batches, records, segments)
}

/// The loss of partition `i`, if its predicted recovery truncates below its checkpointed
/// high watermark (live copies only: the checkpoint names the live directory).
fn lost_range(report: &ScanReport, i: usize, others: &[usize]) -> Option<(LostRange, String)> {
    let p = &report.partitions[i];
    let hw = p.high_watermark?;
    if !p.source.copy.is_live() || p.carried.recovery.delete_dir || p.partially_read {
        return None;
    }
    let bases: Vec<(String, i64)> = p
        .carried
        .segment_walks
        .iter()
        .map(|w| (w.name.text().into_owned(), w.base_offset))
        .collect();
    let log_end = p.log_end_offset?;
    // A torn last batch holds offsets past the walked log end: up to the high watermark
    // when the checkpoint already covered it (this copy had them).
    let below: Vec<(i64, i64)> = removed_ranges(&p.carried.recovery, &bases, log_end.max(hw))
        .into_iter()
        .filter(|r| r.0 < hw)
        .map(|(a, b)| (a, b.min(hw)))
        .collect();
    // Offsets below the log start are gone for readers already (`DeleteRecords`, retention):
    // removing them loses nothing acknowledged that a consumer could still read. Another
    // live copy's log start bounds the partition's: a log start never passes the high
    // watermark (`UnifiedLog.maybeIncrementLogStartOffset`), so that copy's leader had
    // deleted the offsets below it, and this replica, following, fetches below the leader's
    // log start and truncates fully to it (`AbstractFetcherThread.fetchOffsetAndTruncate` →
    // `truncateFullyAndStartAt`): they go whether the load truncates or not. A copy's log
    // start read without its checkpoint is its first segment's base, a lower bound of it.
    let own_start = p.log_start_offset.unwrap_or(i64::MIN);
    let partition_log_start = (others.iter())
        .map(|&k| &report.partitions[k])
        .filter(|o| o.source.copy.is_live() && !o.partially_read)
        .filter_map(|o| o.log_start_offset)
        .max()
        .filter(|&s| s > own_start);
    let log_start = partition_log_start.unwrap_or(own_start);
    let readable_lost: i64 = below
        .iter()
        .map(|&(a, b)| b.saturating_sub(a.max(log_start)).max(0))
        .fold(0, i64::saturating_add);
    if readable_lost == 0 {
        return None;
    }
    let first_lost = below.iter().map(|r| r.0).min()?;
    // What a copy must hold: from the first lost offset readers could still fetch (every
    // replica's log start moves alike: `DeleteRecords` and retention are replicated).
    let lost_from = first_lost.max(log_start);
    let t = p
        .carried
        .recovery
        .truncation
        .iter()
        .chain(&p.carried.recovery.load_truncations)
        .find(|t| t.offset == first_lost)?
        .clone();
    let (batches_removed, records_removed, segments) = removed_counts(p, &t);
    let latest = std::iter::once(i)
        .chain(others.iter().copied())
        .filter_map(|k| {
            report.partitions[k]
                .carried
                .leader_epochs
                .last()
                .map(|e| e.0)
        })
        .max();
    let copies: Vec<CopyState> = others
        .iter()
        .map(|&k| {
            let o = &report.partitions[k];
            let own = o.carried.leader_epochs.last().map(|e| e.0);
            let covers = !o.partially_read
                && o.log_start_offset.is_some_and(|s| s <= lost_from)
                && end_after(o).is_some_and(|e| e >= hw);
            let not_holding = covers
                .then(|| why_not_holding(p, o, lost_from, hw))
                .flatten();
            CopyState {
                path: o.path.clone(),
                broker_id: o.source.broker_id,
                log_start_offset: o.log_start_offset,
                log_end_offset_after: end_after(o),
                holds_lost_range: covers && not_holding.is_none(),
                not_holding,
                latest_leader_epoch: own,
                at_latest_epoch: own.is_some() && own == latest,
            }
        })
        .collect();
    let intact_copy = copies
        .iter()
        .filter(|c| c.holds_lost_range)
        .max_by_key(|c| c.at_latest_epoch)
        .map(|c| c.path.clone());
    let e = LostRange {
        high_watermark: hw,
        first_lost_offset: first_lost,
        offsets_lost_at_least: readable_lost,
        batches_removed,
        records_removed,
        segments,
        position: t.position,
        reason: t.reason.clone(),
        copies,
        intact_copy,
        latest_leader_epoch: latest,
        partition_log_start,
        assumes: p.carried.recovery.log_start_unread.then(|| format!(
            "the log start is at or below offset {lost_from}: the log dir's log-start-offset-checkpoint could not be read (the broker reads it: LogManager.loadLogs), so the log start is known only to be at least the first segment's base offset"
        )),
    };
    Some((e, t.segment))
}

/// The finding of a loss.
fn to_finding(
    p: &PartitionReport,
    cause: Option<String>,
    e: &LostRange,
    segment: String,
) -> Finding {
    let who = |c: &CopyState| match c.broker_id {
        Some(b) => format!("broker {b}'s copy {}", crate::escape::text(&c.path)),
        None => format!("the copy {}", crate::escape::text(&c.path)),
    };
    let n = e.offsets_lost_at_least;
    let mut msg = format!(
        "recovery truncates to offset {} below the checkpointed high watermark {}: at least {n} acknowledged offset{} lost on this replica at the next start ({} readable record{} in {} batch{} removed, {} segment{})",
        e.first_lost_offset,
        e.high_watermark,
        if n == 1 { " is" } else { "s are" },
        e.records_removed,
        if e.records_removed == 1 { "" } else { "s" },
        e.batches_removed,
        if e.batches_removed == 1 { "" } else { "es" },
        e.segments.len(),
        if e.segments.len() == 1 { "" } else { "s" },
    );
    let (severity, remediation) = match e.intact() {
        Some(c) => {
            let epoch = if c.at_latest_epoch {
                format!(
                    "; its log reaches the latest leader epoch in the inputs ({})",
                    e.latest_leader_epoch.unwrap_or(-1)
                )
            } else {
                "; its log does not reach the latest leader epoch in the inputs".to_string()
            };
            msg.push_str(&format!(
                "; {} holds offsets {}..{} intact{epoch}",
                who(c),
                e.first_lost_offset.max(e.log_start(p)),
                e.high_watermark - 1
            ));
            (
                Severity::Warning,
                format!(
                    "let this broker truncate and re-fetch: make sure {} leads or is in the ISR before this broker starts (kafka-topics.sh --describe), then start it and watch the partition return to the ISR; the triage lists the commands",
                    who(c)
                ),
            )
        }
        None => {
            msg.push_str("; no other copy in the inputs holds this range");
            if let Some((c, why)) = e
                .copies
                .iter()
                .find_map(|c| c.not_holding.as_deref().map(|w| (c, w)))
            {
                let said = match why.split_once(':') {
                    Some(("diverges_at", at)) => format!(
                        "its batches differ from this copy's from offset {at} (other records: a follower truncates there and fetches them)"
                    ),
                    Some(("damaged_at", at)) => {
                        format!("its own batch at offset {at} fails its CRC")
                    }
                    _ => "it is not a live copy (it never leads)".to_string(),
                };
                msg.push_str(&format!(" ({} covers its offsets, but {said})", who(c)));
            }
            (
                Severity::Error,
                "save the damaged range before the broker starts (copy the partition directory, `klogscan dump` the segment); check whether a replica outside these inputs holds the range (kafka-topics.sh --describe) and let this broker re-fetch from it; the triage lists the commands".to_string(),
            )
        }
    };
    // Resting on the unread log start, the loss is said as what follows if it holds.
    let severity = match &e.assumes {
        Some(_) => {
            msg.push_str(&format!(
                "; this assumes the log start is at or below offset {} (the log-start-offset-checkpoint could not be read: a log start above the lost offsets leaves nothing a consumer could still read lost)",
                e.first_lost_offset.max(e.log_start(p))
            ));
            severity.min(Severity::Warning)
        }
        None => severity,
    };
    let mut f = Finding::new(Kind::TruncationBelowHighWatermark, &p.topic, p.partition, msg)
        .severity(severity)
        .offset(e.first_lost_offset)
        .position(e.position)
        .segment(segment)
        .evidence(serde_json::to_value(e).unwrap_or_default())
        .broker(
            "on the next start LogSegment.recover truncates the log and UnifiedLog.updateHighWatermark clamps the checkpointed high watermark to the new log end offset; as a follower the replica then re-fetches the range from the leader (AbstractFetcherThread); elected leader (the only in-sync replica, or an unclean election) it serves the shorter log and the other replicas truncate to it",
        )
        .remediation(remediation);
    if let Some(c) = cause {
        f = f.caused_by(c);
    }
    f
}

/// The transactions the truncation reopens whose markers were acknowledged (below the
/// high watermark): their coordinator finished them and sends no marker again, so a
/// restarted copy that leads holds them open — hanging, the last stable offset stuck at
/// the first one's first offset. Said only when no other copy in the inputs holds the lost
/// range (with one, the restarted copy re-fetches the markers from it as a follower: two
/// readings, the lost-range finding names the copy to lead). `caused_by` the lost range.
fn reopened_finding(p: &PartitionReport, e: &LostRange, lost: &Finding) -> Option<Finding> {
    // Without CRC checks recovery may stop earlier, removing the transaction whole.
    if e.intact().is_some() || p.carried.recovery.outcome_unknown.is_some() {
        return None;
    }
    let a = p.carried.recovery.after_truncation.as_deref()?;
    let acked: Vec<&ReopenedTxn> = a
        .reopened
        .iter()
        .filter(|t| t.marker_offset < e.high_watermark)
        .collect();
    let first = *acked.first()?;
    let listed_all = a.reopened.len() == a.reopened_count;
    let n = if listed_all {
        acked.len().to_string()
    } else {
        format!("at least {}", acked.len())
    };
    let what = |t: &ReopenedTxn| if t.commit { "COMMIT" } else { "ABORT" };
    let lso = a.first_open_offset.unwrap_or(first.first_offset);
    let msg = format!(
        "recovery truncates the log to end at offset {} and removes the {} marker at offset {} of producer {}'s transaction begun at offset {} ({n} acknowledged transaction(s) reopened): the restarted copy holds it open; if it leads, the last stable offset stays at {lso} (its coordinator finished it and sends no marker again)",
        a.end,
        what(first),
        first.marker_offset,
        first.producer_id,
        first.first_offset,
    );
    let listed: Vec<serde_json::Value> = acked
        .iter()
        .map(|t| serde_json::json!({"producer_id": t.producer_id, "producer_epoch": t.producer_epoch, "first_offset": t.first_offset, "marker_offset": t.marker_offset, "marker": what(t)}))
        .collect();
    Some(
        Finding::new(Kind::TransactionReopenedAtRecovery, &p.topic, p.partition, msg)
            .offset(first.first_offset)
            .producer(first.producer_id, first.producer_epoch)
            .evidence(serde_json::json!({
                "truncated_to": a.end,
                "last_stable_offset_after": lso,
                "high_watermark": e.high_watermark,
                "transactions": listed,
                "listed_all": listed_all,
            }))
            .broker("LogSegment.recover rebuilds the producer state from the batches it keeps (ProducerStateManager): the transaction's data batch is replayed, its marker is gone, so the loaded state holds it open; the transaction coordinator completed it when the marker was acknowledged and does not write it again. Elected leader (the only in-sync replica, an unclean election), the copy serves a last stable offset stuck at its first offset")
            .remediation(if acked.iter().any(|t| t.commit) {
                "save the damaged range before the broker starts (see the lost-range finding); the lost marker COMMITTED the transaction: do not let this copy lead (restart it as a follower of a copy that holds the marker, which truncates it and re-fetches the marker); aborting it here would make read_committed consumers drop records that were committed and acknowledged — only as a last resort, then re-produce them"
            } else {
                "save the damaged range before the broker starts (see the lost-range finding); after the restart, if this copy leads, confirm with kafka-transactions.sh find-hanging on the partition and abort the transaction at its first offset (kafka-transactions.sh abort --start-offset): the lost marker was an ABORT, so the abort restores what consumers saw"
            })
            .caused_by(lost.identity_key()),
    )
}

/// The integrity finding at the truncation point (the cause), by its identity key.
fn cause_of(report: &ScanReport, i: usize, segment: &str, position: u64) -> Option<String> {
    report
        .partition_findings(i)
        .iter()
        .find(|f| {
            matches!(
                f.kind,
                Kind::CrcMismatch
                    | Kind::TruncatedBatch
                    | Kind::TrailingBytes
                    | Kind::InvalidBatch
                    | Kind::OffsetRegression
                    | Kind::SegmentOffsetOutOfRange
            ) && f.segment.as_deref() == Some(segment)
                && f.position == Some(position)
        })
        .map(|f| f.identity_key())
}

/// The cluster check: a `truncation_below_high_watermark` finding for every live copy
/// whose predicted recovery truncates below its checkpointed high watermark.
pub fn check(
    report: &ScanReport,
    inv: &Inventory,
    _opts: &ScanOptions,
    _histories: &[crate::cluster::leadership::ClusterHistory],
) -> BTreeMap<usize, Vec<Finding>> {
    let mut extra: BTreeMap<usize, Vec<Finding>> = BTreeMap::new();
    let candidates: Vec<usize> = (0..report.partitions.len())
        .filter(|&i| {
            let p = &report.partitions[i];
            p.high_watermark.is_some()
                && (p.carried.recovery.truncation.is_some()
                    || !p.carried.recovery.load_truncations.is_empty())
        })
        .collect();
    if candidates.is_empty() {
        return extra;
    }
    let mut replicas: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for ((a, _), (b, _)) in super::replicas::replica_pairs(report, inv) {
        replicas.entry(a).or_default().push(b);
        replicas.entry(b).or_default().push(a);
    }
    for i in candidates {
        let others = replicas.get(&i).map_or(&[][..], |v| v.as_slice());
        if let Some((e, segment)) = lost_range(report, i, others) {
            let cause = cause_of(report, i, &segment, e.position);
            let p = &report.partitions[i];
            let f = to_finding(p, cause, &e, segment);
            let reopened = reopened_finding(p, &e, &f);
            extra
                .entry(i)
                .or_default()
                .extend(std::iter::once(f).chain(reopened));
        }
    }
    extra
}

//! `remote_segment_corrupt`: damage found by the walk of a remote object (a batch whose CRC
//! fails, one that does not frame or whose header the broker rejects, a bad tail), reported
//! as damage of the remote copy — the object named, its byte positions — once per remote
//! segment, whichever replicas replay it.
//!
//! What happens to it differs from local damage: the broker serves remote bytes as the
//! storage returns them. `RemoteLogManager.read` asks the `RemoteStorageManager` for the
//! segment from the position the remote offset index gives, frames batches with
//! `RemoteLogInputStream.nextBatch` until the one holding the fetch offset (it checks only
//! that an entry's size is not below the smallest record's, else throws
//! `CorruptRecordException` and the fetch fails), and copies the bytes from there into the
//! response without checking a CRC. Nothing on the broker repairs it: log recovery never
//! reads remote data and followers never fetch from the remote tier. A consumer checks
//! each v2 batch (`CompletedFetch.maybeEnsureValid`, `check.crcs=true` by default) and
//! throws from `poll` on the damaged batch, every time, until the application seeks past it.

use super::checks::SegmentEvidence;
use super::replay::{RemoteSegment, UserPartition};
use super::storage::WalkedLog;
use crate::cluster::report::ScanReport;
use crate::finding::{Finding, Kind};
use crate::read::format::checkpoint::encode_uuid;
use serde::Serialize;
use std::collections::HashMap;

/// Damaged places listed in a finding's evidence (the count says how many there were).
pub const LISTED: usize = 20;

/// Whether a walk finding is a limit of this analysis (a compressed batch not decompressed
/// for the budget, a batch too large to decode), not damage: it is kept as it is.
pub fn is_analysis_limit(f: &Finding) -> bool {
    matches!(
        f.kind,
        Kind::DecompressionBudgetExceeded | Kind::BatchNotDecoded
    )
}

/// One damaged place of a remote object, as the walk found it.
#[derive(Debug, Clone, Serialize)]
pub struct Damaged {
    /// What the walk of a local segment would have reported (`crc_mismatch`, …).
    pub walk_kind: Kind,
    pub position: Option<u64>,
    pub offset: Option<i64>,
    pub message: String,
    /// That finding's own evidence (stored and computed CRC, …).
    pub evidence: serde_json::Value,
}

/// The first [`LISTED`] of `damage`.
pub fn damaged(damage: &[Finding]) -> Vec<Damaged> {
    damage
        .iter()
        .take(LISTED)
        .map(|f| Damaged {
            walk_kind: f.kind,
            position: f.position,
            offset: f.offset,
            message: f.message.clone(),
            evidence: f.evidence.clone(),
        })
        .collect()
}

#[derive(Serialize)]
struct Corrupt {
    segment: SegmentEvidence,
    file: String,
    damaged: Vec<Damaged>,
    damaged_count: usize,
    walked: Option<WalkedLog>,
    /// What the object contradicts of the metadata besides its size (the damage read as
    /// offsets or epochs): consequences of the damage, not a second cause.
    metadata_differences: Vec<&'static str>,
}

/// `remote_segment_corrupt` for segment `s` of `up`, its object `file` holding `damage`
/// (not empty; the walk's findings, in file order).
pub fn finding(
    up: &UserPartition,
    s: &RemoteSegment,
    file: &str,
    walked: Option<WalkedLog>,
    metadata_differences: Vec<&'static str>,
    damage: &[Finding],
) -> Finding {
    let first = &damage[0];
    let at = first.offset.unwrap_or(s.start_offset);
    let msg = format!(
        "remote segment {} (offsets {}..={}, object {file}) is damaged at {} place(s), first at byte {} (offset {at}): {}",
        encode_uuid(&s.id),
        s.start_offset,
        s.end_offset,
        damage.len(),
        first.position.unwrap_or(0),
        first.kind,
    );
    let mut f = Finding::new(Kind::RemoteSegmentCorrupt, &up.topic, up.partition, msg)
        .offset(at)
        .segment(file)
        .broker("served as stored: RemoteLogManager.read copies the remote bytes into the fetch response without a CRC check (RemoteLogInputStream only frames batches; an entry size below the minimum fails the fetch with CorruptRecordException); log recovery never reads remote data and followers never fetch it, so no broker repairs it")
        .client_error("consumer: KafkaException — not a producer error; CompletedFetch.maybeEnsureValid (check.crcs=true, the default) rejects the batch (\"Record batch … is invalid\") on every poll: not retriable, the consumer stays at that offset until the application seeks past it")
        .remediation("re-copy the segment from a replica that still holds it locally (or restore the object from a backup of the bucket); otherwise consumers must seek past the damaged batches, whose records are lost")
        .evidence(
            serde_json::to_value(Corrupt {
                segment: SegmentEvidence::of(s),
                file: file.to_string(),
                damaged: damaged(damage),
                damaged_count: damage.len(),
                walked,
                metadata_differences,
            })
            .unwrap_or_default(),
        );
    if let Some(p) = first.position {
        f = f.position(p);
    }
    f
}

/// A partition with damaged remote batches: its findings' range, its index, and the
/// remote copies' findings of its topic-partition (offset, identity key).
type Link = (std::ops::Range<usize>, usize, Vec<(i64, String)>);

/// Link what each partition's replay derived from a damaged batch of a remote segment
/// (`--remote-storage`: the remote segments are replayed before the local log, the broker's
/// own rebuild reads the same headers) to the finding of that segment's remote copy:
/// `remote_segment_corrupt`, or `remote_segment_mismatch` when the object is not the
/// copied segment. The copy's finding is the one of the same topic-partition whose offset
/// lies in the damaged batch's remote segment; when two do, the link would be a guess and
/// none is made. The rule of the links is the local damage's
/// (`partition::causes::link_damage_to`).
pub fn link_remote_damage(report: &mut ScanReport) {
    let mut copies: HashMap<(&str, i32), Vec<(i64, String)>> = HashMap::new();
    for f in &report.findings {
        if matches!(
            f.kind,
            Kind::RemoteSegmentCorrupt | Kind::RemoteSegmentMismatch
        ) && let Some(o) = f.offset
        {
            copies
                .entry((f.topic.as_str(), f.partition))
                .or_default()
                .push((o, f.identity_key()));
        }
    }
    if copies.is_empty() {
        return;
    }
    let links: Vec<Link> = report
        .partitions
        .iter()
        .enumerate()
        .filter(|(_, p)| {
            p.carried
                .damaged()
                .iter()
                .any(|d| d.remote_segment.is_some())
        })
        .filter_map(|(i, p)| {
            let c = copies.get(&(p.topic.as_str(), p.partition))?;
            Some((p.carried.finding_range.clone(), i, c.clone()))
        })
        .collect();
    for (range, i, copies) in links {
        let damaged = report.partitions[i].carried.damaged();
        let Some(findings) = report.findings.get_mut(range) else {
            continue;
        };
        crate::partition::causes::link_damage_to(findings, damaged, |_, d| {
            let (start, end) = d.remote_segment?;
            let mut within = copies.iter().filter(|(o, _)| (start..=end).contains(o));
            match (within.next(), within.next()) {
                (Some((_, key)), None) => Some(key.clone()),
                _ => None,
            }
        });
    }
    report.recount_findings();
}

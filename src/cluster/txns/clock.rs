//! An open transaction's idleness floored by its producer's earlier markers in other
//! partitions of the same broker log dir.
//!
//! The replay measures a transaction's idleness from its last batch's timestamp, or from
//! the broker's clock a marker or `LogAppendTime` batch before it in the same partition
//! proves later (`partition::state`'s `broker_clock`). Records stamped with event times
//! (Kafka Streams forwards input timestamps, MirrorMaker 2 keeps the source's) make a
//! transaction's first batch in a partition look days old when nothing broker-stamped came
//! before it there. The producer's earlier transactions say more: a transactional producer
//! adds a partition to its next transaction only once the previous one is complete — the
//! coordinator answers `CONCURRENT_TRANSACTIONS` until every marker of the previous one is
//! written (`TransactionCoordinator.handleAddPartitionsToTransaction`; under TV2 the
//! produce request's implicit add, `handleVerifyPartitionsInTransaction`, waits the same
//! way) — so each marker of an earlier transaction was written (on its leader's clock,
//! `KafkaApis.handleWriteTxnMarkersRequest`) before any batch of this one was appended.
//!
//! Which markers those are is known from the data they closed: a transaction whose data ran
//! at an epoch below the open data's was complete before the producer got the higher epoch
//! (under TV2 the coordinator bumps the epoch as it completes a transaction,
//! `TransactionMetadata.prepareAbortOrCommit`; under every version `InitProducerId` aborts
//! or completes the ongoing one before it hands out a new epoch,
//! `TransactionCoordinator.handleInitProducerId`). Markers closing data at the open data's
//! own epoch are never taken: under TV0/1 they may close this very transaction (its marker
//! lost here), and under TV2 an admin abort (`kafka-transactions.sh abort`, at the
//! producer's current epoch) of this very transaction elsewhere. A transaction opened by a
//! zombie write or a late write after a marker keeps its verdict (its root cause says why
//! it hangs).

use std::collections::{HashMap, HashSet};

use crate::cluster::report::ScanReport;
use crate::finding::evidence::{self, OpenTxnJoint};
use crate::finding::{Finding, Kind, Severity};
use crate::partition::state::text::human_duration;

/// Per (log dir, producer id): each marker closing data, as (the data's epoch, the marker's
/// timestamp, partition path).
#[derive(Default)]
struct Markers<'r> {
    seen: Vec<(i16, i64, &'r str)>,
}

/// Rewrite the live `hanging_transaction` findings whose producer's earlier markers in
/// another partition of the same log dir make them idle no longer than `--hanging-after`
/// into `open_transaction` (info), saying so.
pub fn floor_from_earlier_markers(report: &mut ScanReport) {
    let candidates: Vec<usize> = (report.findings.iter().enumerate())
        .filter(|(_, f)| {
            f.kind == Kind::HangingTransaction
                && f.source.copy.is_live()
                && f.source.log_dir.is_some()
                && f.producer_id.is_some()
        })
        .map(|(i, _)| i)
        .collect();
    if candidates.is_empty() {
        return;
    }
    let pids: HashSet<i64> = (candidates.iter())
        .filter_map(|&i| report.findings[i].producer_id)
        .collect();
    let mut index: HashMap<(&str, i64), Markers<'_>> = HashMap::new();
    for p in report.partitions.iter().filter(|p| p.source.copy.is_live()) {
        let Some(ld) = p.source.log_dir.as_deref() else {
            continue;
        };
        for r in &p.outcome().txns {
            if r.is_open() || r.is_empty() || !pids.contains(&r.producer_id) || r.last_timestamp < 0
            {
                continue;
            }
            let m = index.entry((ld, r.producer_id)).or_default();
            m.seen
                .push((r.producer_epoch, r.last_timestamp, p.path.as_str()));
        }
    }
    let mut rewrites: Vec<(usize, i64, String)> = Vec::new();
    for i in candidates {
        let f = &report.findings[i];
        let (Some(ld), Some(pid), Some(epoch)) =
            (f.source.log_dir.as_deref(), f.producer_id, f.producer_epoch)
        else {
            continue;
        };
        let Some(m) = index.get(&(ld, pid)) else {
            continue;
        };
        let j: OpenTxnJoint = evidence::read(f);
        let (Some(last), Some(reference), Some(after)) =
            (j.last_timestamp, j.reference_time_ms, j.hanging_after_ms)
        else {
            continue;
        };
        if j.root_cause.is_some() {
            continue;
        }
        let here = f.source.path.as_deref().unwrap_or_default();
        let Some(&(_, floor, from)) = (m.seen.iter())
            .filter(|(e, _, path)| *e < epoch && *path != here)
            .max_by_key(|(_, t, _)| *t)
        else {
            continue;
        };
        if floor > last && reference.saturating_sub(floor) <= after {
            rewrites.push((i, floor, from.to_string()));
        }
    }
    if rewrites.is_empty() {
        return;
    }
    for (i, floor, from) in rewrites {
        rewrite(&mut report.findings[i], floor, &from);
    }
    report.recount_findings();
}

fn rewrite(f: &mut Finding, floor: i64, from: &str) {
    let mut j: OpenTxnJoint = evidence::read(f);
    let (last, reference) = (
        j.last_timestamp.unwrap_or(0),
        j.reference_time_ms.unwrap_or(0),
    );
    let idle = reference.saturating_sub(floor).max(0);
    let first = f.offset.unwrap_or(-1);
    f.message = format!(
        "producer {} epoch {} has a transaction open since offset {first}, idle at most {} at the reference time: its previous transaction's marker in {} was written {} after its records here are stamped, and a producer adds a partition to a transaction only once the previous one is complete",
        f.producer_id.unwrap_or(-1),
        f.producer_epoch.unwrap_or(-1),
        human_duration(idle),
        crate::escape::text(from),
        human_duration(floor.saturating_sub(last)),
    );
    f.kind = Kind::OpenTransaction;
    f.severity = Severity::Info;
    j.idle_ms = Some(idle);
    j.broker_clock_floor_ms = Some(floor);
    j.broker_clock_floor_from = Some(from.to_string());
    evidence::merge(&mut f.evidence, &j);
    f.broker_behaviour = crate::partition::state::text::BROKER_OPEN.into();
    f.remediation = None;
}

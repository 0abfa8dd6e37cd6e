//! One cause, one finding: what follows from a root cause links to it (`caused_by`), so a
//! reader sees the root cause first (`docs/findings.md`, "Causes").
//!
//! Runs over one partition's findings once its replay is finished. The links it makes:
//!
//! * **Damage → what was derived from the damaged bytes.** A batch whose CRC fails is still
//!   fed to the producer-state replay with the header fields it carries, as the broker's own
//!   rebuild does (`ProducerStateManager` reads batch headers without checking CRCs:
//!   `LogLoader.rebuildProducerState` → `ProducerAppendInfo.append`). If the damage hit the
//!   producer fields, the replay's verdicts at that batch — and the sequence or epoch rule
//!   that fires at the producer's next batch — follow from the damage, not from a producer
//!   that misbehaved: they are linked to the `crc_mismatch`. When the damaged batch's
//!   producer id is a phantom (no other batch of the partition carries it: most likely a
//!   flipped id), the producer it was written by is unknown: a sequence or epoch verdict at
//!   any producer's first batch after it is linked too (the nearest such damaged batch
//!   before it). A transaction left open is linked to the first damaged control batch after
//!   its first offset that closed nothing in the replay (its producer had no transaction
//!   open): that marker was most likely its close. A damaged batch of a remote
//!   segment (replayed before the local log with `--remote-storage`) has no
//!   `crc_mismatch`: what follows from it is linked by the cluster stage to the finding of
//!   the remote copy (`cluster::tiering::link_remote_damage`).
//! * **Epoch regression → zombie write → hanging transaction** (KAFKA-9144): a zombie write
//!   at the offset of a `producer_epoch_regression` of the same producer follows from it,
//!   and a transaction left open at that offset (`hanging_transaction`,
//!   `open_transaction`) follows from the zombie write (or, without one, the regression).

use crate::finding::{Finding, Kind, identity_key};
use crate::partition::event::BatchEvent;
use std::collections::HashMap;

mod track;
pub(crate) use track::DamageTracker;

/// A CRC-bad batch as the replay saw it (an evidence bundle carries those of remote
/// segments: the merge links what follows from them).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DamagedBatch {
    pub base_offset: i64,
    pub last_offset: i64,
    pub producer_id: i64,
    /// Base offset of the same producer's next batch, when there is one.
    pub next_of_producer: Option<i64>,
    /// `[start, end]` offsets of the remote segment holding the batch (`None`: a local
    /// segment).
    pub remote_segment: Option<(i64, i64)>,
    /// With a phantom producer id (one no other batch of the partition carries), the
    /// `(producer id, base offset)` of the producers' first batches after it that got a
    /// sequence or epoch verdict, for which it is the nearest such damaged batch before
    /// them (empty otherwise, and for a partition not read to its end).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub first_after: Vec<(i64, i64)>,
    /// A control batch whose producer had no transaction open when the replay read it: the
    /// marker it was closes nothing there (a flipped producer id).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub lone_marker: bool,
}

impl DamagedBatch {
    /// The damaged batch of `ev`.
    pub(crate) fn of(ev: &BatchEvent) -> Self {
        DamagedBatch {
            base_offset: ev.base_offset,
            last_offset: ev.last_offset,
            producer_id: ev.producer_id,
            next_of_producer: None,
            remote_segment: None,
            first_after: Vec::new(),
            lone_marker: false,
        }
    }
}

/// Kinds the producer-state replay derives from a batch's producer fields.
fn derived_from_producer_fields(k: Kind) -> bool {
    matches!(
        k,
        Kind::ProducerEpochRegression
            | Kind::ZombieWrite
            | Kind::InvalidFirstSequence
            | Kind::SequenceGap
            | Kind::DuplicateSequence
            | Kind::InvalidProducerFields
            | Kind::CoordinatorEpochRegression
            | Kind::MarkerWithoutTransaction
            | Kind::ConflictingMarkers
            | Kind::MarkerEpochNotBumped
            | Kind::CommitEpochAboveData
            | Kind::TransactionEpochChange
            | Kind::NonTransactionalWriteInTransaction
    )
}

/// Link what the replay derived from each local damaged batch to its `crc_mismatch`.
pub fn link_damage(findings: &mut [Finding], damaged: &[DamagedBatch]) {
    link_damage_to(findings, damaged, |f, d| {
        d.remote_segment.is_none().then(|| {
            identity_key(
                Kind::CrcMismatch,
                &f.topic,
                f.partition,
                Some(d.base_offset),
                None,
            )
        })
    });
}

/// Link what the replay derived from each damaged batch to the finding `cause` names for
/// it (`None`: no link): the verdicts at the batch itself, the sequence or epoch rule at
/// the same producer's next batch, or at another producer's first batch after a phantom
/// ([`DamagedBatch::first_after`]), a transaction the damaged batch itself opened (it
/// may be a phantom: a flipped producer id or transactional bit), and a transaction whose
/// close may have been the damaged marker ([`closing_marker`]).
pub fn link_damage_to(
    findings: &mut [Finding],
    damaged: &[DamagedBatch],
    cause: impl Fn(&Finding, &DamagedBatch) -> Option<String>,
) {
    if damaged.is_empty() {
        return;
    }
    // (producer id, base offset) → the phantom damaged batch before it (at most one).
    let after: HashMap<(i64, i64), usize> = damaged
        .iter()
        .enumerate()
        .flat_map(|(i, d)| d.first_after.iter().map(move |&k| (k, i)))
        .collect();
    for f in findings.iter_mut() {
        let open_txn = matches!(f.kind, Kind::HangingTransaction | Kind::OpenTransaction);
        let derived = derived_from_producer_fields(f.kind);
        if !derived && !open_txn {
            continue;
        }
        let Some(o) = f.offset else { continue };
        let first_after = (f.producer_id)
            .filter(|_| derived)
            .and_then(|p| after.get(&(p, o)).copied());
        let closing = if open_txn {
            closing_marker(damaged, o)
        } else {
            None
        };
        for (i, d) in damaged.iter().enumerate() {
            let at_batch = (d.base_offset..=d.last_offset).contains(&o);
            let next_of_same = derived
                && d.next_of_producer == Some(o)
                && (f.producer_id == Some(d.producer_id) || f.producer_id.is_none());
            let explains = at_batch || next_of_same || first_after == Some(i) || closing == Some(i);
            if explains
                && let Some(key) = cause(f, d)
                && !f.caused_by.contains(&key)
            {
                f.caused_by.push(key);
            }
        }
    }
}

/// The damaged marker that may have closed a transaction opened at `first_offset`: the
/// first damaged control batch after it that closed nothing in the replay
/// ([`DamagedBatch::lone_marker`]; a marker of a producer with an open transaction closed
/// that one, as the broker's rebuild does whatever its CRC).
fn closing_marker(damaged: &[DamagedBatch], first_offset: i64) -> Option<usize> {
    damaged
        .iter()
        .enumerate()
        .filter(|(_, d)| d.lone_marker && d.base_offset > first_offset)
        .min_by_key(|(_, d)| d.base_offset)
        .map(|(i, _)| i)
}

pub fn link_zombie_chain(findings: &mut [Finding]) {
    // (producer, offset) → key of the regression / zombie there.
    let mut regression: HashMap<(i64, i64), String> = HashMap::new();
    let mut zombie: HashMap<(i64, i64), String> = HashMap::new();
    for f in findings.iter() {
        let (Some(p), Some(o)) = (f.producer_id, f.offset) else {
            continue;
        };
        match f.kind {
            Kind::ProducerEpochRegression => {
                regression.entry((p, o)).or_insert_with(|| f.identity_key());
            }
            Kind::ZombieWrite => {
                zombie.entry((p, o)).or_insert_with(|| f.identity_key());
            }
            _ => {}
        }
    }
    if regression.is_empty() && zombie.is_empty() {
        return;
    }
    for f in findings.iter_mut() {
        let (Some(p), Some(o)) = (f.producer_id, f.offset) else {
            continue;
        };
        let cause = match f.kind {
            Kind::ZombieWrite => regression.get(&(p, o)),
            Kind::HangingTransaction | Kind::OpenTransaction => {
                zombie.get(&(p, o)).or_else(|| regression.get(&(p, o)))
            }
            _ => None,
        };
        if let Some(c) = cause {
            let c = c.clone();
            if !f.caused_by.contains(&c) {
                f.caused_by.push(c);
            }
        }
    }
}

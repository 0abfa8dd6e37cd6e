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
    let index = DamageIndex::new(damaged);
    // Each damaged marker closes at most one transaction: the latest opened before it.
    let mut closes: HashMap<usize, i64> = HashMap::new();
    for f in findings.iter() {
        if let (true, Some(o)) = (open_txn(f.kind), f.offset)
            && let Some(m) = index.closing_marker(o)
        {
            let best = closes.entry(m).or_insert(o);
            *best = (*best).max(o);
        }
    }
    for f in findings.iter_mut() {
        let open_txn = open_txn(f.kind);
        let derived = derived_from_producer_fields(f.kind);
        if !derived && !open_txn {
            continue;
        }
        let Some(o) = f.offset else { continue };
        let mut explains: Vec<usize> = index.holding(o);
        if derived {
            let same = |&i: &usize| {
                f.producer_id == Some(damaged[i].producer_id) || f.producer_id.is_none()
            };
            explains.extend(
                index
                    .next_of
                    .get(&o)
                    .into_iter()
                    .flatten()
                    .copied()
                    .filter(same),
            );
            if let Some(p) = f.producer_id
                && let Some(&i) = index.first_after.get(&(p, o))
            {
                explains.push(i);
            }
        }
        if open_txn
            && let Some(m) = index.closing_marker(o)
            && closes.get(&m) == Some(&o)
        {
            explains.push(m);
        }
        explains.sort_unstable();
        explains.dedup();
        for i in explains {
            if let Some(key) = cause(f, &damaged[i])
                && !f.caused_by.contains(&key)
            {
                f.caused_by.push(key);
            }
        }
    }
}

fn open_txn(k: Kind) -> bool {
    matches!(k, Kind::HangingTransaction | Kind::OpenTransaction)
}

/// How far back from a finding's offset [`DamageIndex::holding`] looks among the damaged
/// batches starting at or below it: batches whose (damaged) offsets overlap many others
/// would otherwise make every lookup walk them all (a segment damaged throughout). Past
/// it, a link is left out, never made wrongly.
const HOLDING_LOOKBACK: usize = 64;

/// The damaged batches of a partition, indexed for the links (each lookup logarithmic in
/// them, not a walk over them per finding).
struct DamageIndex<'a> {
    damaged: &'a [DamagedBatch],
    /// Indices into `damaged` sorted by base offset.
    by_base: Vec<usize>,
    /// Producer's next batch's offset → the damaged batches it follows.
    next_of: HashMap<i64, Vec<usize>>,
    /// (producer id, base offset) → the phantom damaged batch before it (at most one).
    first_after: HashMap<(i64, i64), usize>,
    /// Base offsets and indices of the damaged markers that closed nothing, ascending.
    lone_markers: Vec<(i64, usize)>,
}

impl<'a> DamageIndex<'a> {
    fn new(damaged: &'a [DamagedBatch]) -> Self {
        let mut by_base: Vec<usize> = (0..damaged.len()).collect();
        by_base.sort_by_key(|&i| (damaged[i].base_offset, i));
        let mut next_of: HashMap<i64, Vec<usize>> = HashMap::new();
        for (i, d) in damaged.iter().enumerate() {
            if let Some(n) = d.next_of_producer {
                next_of.entry(n).or_default().push(i);
            }
        }
        let first_after = (damaged.iter().enumerate())
            .flat_map(|(i, d)| d.first_after.iter().map(move |&k| (k, i)))
            .collect();
        let mut lone_markers: Vec<(i64, usize)> = (damaged.iter().enumerate())
            .filter(|(_, d)| d.lone_marker)
            .map(|(i, d)| (d.base_offset, i))
            .collect();
        lone_markers.sort_unstable();
        DamageIndex {
            damaged,
            by_base,
            next_of,
            first_after,
            lone_markers,
        }
    }

    /// The damaged batches whose offsets hold `o` (nearest first, within
    /// [`HOLDING_LOOKBACK`]).
    fn holding(&self, o: i64) -> Vec<usize> {
        let d = self.damaged;
        let end = self.by_base.partition_point(|&i| d[i].base_offset <= o);
        (self.by_base[..end].iter().rev().take(HOLDING_LOOKBACK))
            .copied()
            .filter(|&i| o <= d[i].last_offset)
            .collect()
    }

    /// The damaged marker that may have closed a transaction opened at `first_offset`: the
    /// first damaged control batch after it that closed nothing in the replay
    /// ([`DamagedBatch::lone_marker`]; a marker of a producer with an open transaction
    /// closed that one, as the broker's rebuild does whatever its CRC).
    fn closing_marker(&self, first_offset: i64) -> Option<usize> {
        let k = (self.lone_markers).partition_point(|&(b, _)| b <= first_offset);
        self.lone_markers.get(k).map(|&(_, i)| i)
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn batch(base: i64, last: i64, lone_marker: bool) -> DamagedBatch {
        DamagedBatch {
            base_offset: base,
            last_offset: last,
            producer_id: 7,
            next_of_producer: None,
            remote_segment: None,
            first_after: Vec::new(),
            lone_marker,
        }
    }

    /// Lookups by offset over damaged batches in any order, overlapping ones included
    /// (damaged offsets may be anything), and the first lone marker after an offset.
    #[test]
    fn the_index_finds_the_batches_holding_an_offset_and_the_next_lone_marker() {
        let d = [
            batch(20, 29, true),
            batch(0, 9, false),
            batch(5, 40, false),
            batch(10, 19, true),
        ];
        let ix = DamageIndex::new(&d);
        let at = |o| {
            let mut v = ix.holding(o);
            v.sort_unstable();
            v
        };
        assert_eq!(at(7), vec![1, 2]);
        assert_eq!(at(25), vec![0, 2]);
        assert_eq!(at(41), Vec::<usize>::new());
        assert_eq!(at(-1), Vec::<usize>::new());
        assert_eq!(ix.closing_marker(3), Some(3));
        assert_eq!(ix.closing_marker(10), Some(0));
        assert_eq!(ix.closing_marker(20), None);
    }
}

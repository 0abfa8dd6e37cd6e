//! What the replay notes of the damaged batches it reads, for the damage links of
//! [`super::link_damage_to`].

use super::{DamagedBatch, derived_from_producer_fields};
use crate::finding::Finding;
use crate::partition::event::BatchEvent;
use crate::partition::state::Replay;
use crate::partition::state::next_sequence;
use std::collections::HashMap;

/// Feeds a partition's batches to its replay and notes its damaged (CRC-bad) batches: a
/// damaged batch is reported (`crc_mismatch`, or the remote copy's finding for a batch of
/// a remote segment) and still replayed with its header fields, as the broker's
/// producer-state rebuild reads them (no CRC check there). What the replay then derives
/// from it is linked to the damage.
#[derive(Debug, Default)]
pub(crate) struct DamageTracker {
    damaged: Vec<DamagedBatch>,
    /// Producer id → its damaged batch still waiting for the producer's next batch.
    awaiting_next: HashMap<i64, usize>,
    /// Per damaged batch: its producer id was new to the replay, or carried so far by
    /// damaged batches only (a phantom unless an intact batch carries it later), and its
    /// producer epoch and sequences.
    new_id: Vec<bool>,
    sequences: Vec<Sequences>,
    /// Producer ids first carried by a damaged batch → no intact batch carried them since
    /// (a phantom id: a flip repeated by a stuck bit gives several damaged batches one).
    phantom_ids: HashMap<i64, bool>,
    /// The last damaged batch with a new producer id.
    last_new_id: Option<usize>,
    /// Producer id → how many damaged batches came before its latest batch (the producers
    /// seen since the first damaged batch).
    damaged_before: HashMap<i64, usize>,
    /// A sequence or epoch verdict at a producer's first batch after the damaged batches
    /// `lo..hi` (its previous batch came before them all).
    verdicts_after: Vec<VerdictAfter>,
}

/// A batch's producer epoch and first and last sequence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Sequences {
    epoch: i16,
    base: i32,
    last: i32,
}

/// A verdict at a producer's first intact batch after damaged batches with a new producer
/// id, and what the producer's state held before it.
#[derive(Debug)]
struct VerdictAfter {
    producer_id: i64,
    offset: i64,
    lo: usize,
    hi: usize,
    batch: Sequences,
    /// The producer's epoch and last sequence before the batch (`None`: no state).
    before: Option<(i16, i32)>,
}

impl VerdictAfter {
    /// Whether the damaged batch `d` lies in the hole between the producer's state and
    /// this batch: same epoch, its sequences after the state's last one (from 0 without
    /// state or after an epoch bump) and before this batch's first. A flipped producer id
    /// leaves the epoch and sequences as they were, so phantoms fill the real producer's
    /// hole exactly; a batch outside it is another producer's damage.
    fn filled_by(&self, d: Sequences) -> bool {
        let from = match self.before {
            Some((epoch, last)) if epoch == self.batch.epoch && last >= 0 => next_sequence(last),
            _ => 0,
        };
        // Sequences wrap at i32::MAX to 0 (`ProducerStateEntry`): distances modulo 2^31.
        let dist = |x: i32| (i64::from(x) - i64::from(from)).rem_euclid(1 << 31);
        let hole = dist(self.batch.base);
        let within = |x: i32| x >= 0 && dist(x) < hole;
        d.epoch == self.batch.epoch
            && within(d.base)
            && within(d.last)
            && dist(d.base) <= dist(d.last)
    }
}

impl DamageTracker {
    /// Apply `ev` to `replay` (its findings pushed to `findings`), noting it if damaged;
    /// `remote_segment`: the `[start, end]` offsets of the remote segment holding it.
    pub(crate) fn apply(
        &mut self,
        replay: &mut Replay,
        ev: &BatchEvent,
        remote_segment: Option<(i64, i64)>,
        findings: &mut Vec<Finding>,
    ) {
        // Almost always: no damaged batch yet, nothing to note (no hash per batch).
        if self.damaged.is_empty() && ev.crc_valid {
            replay.apply(ev, findings);
            return;
        }
        let after = self.note(replay, ev, remote_segment);
        let state = after.and_then(|_| replay.sequence_state(ev.producer_id));
        let before = findings.len();
        replay.apply(ev, findings);
        if let Some((lo, hi)) = after {
            let (pid, o) = (ev.producer_id, ev.base_offset);
            let verdict = findings[before..].iter().any(|f| {
                derived_from_producer_fields(f.kind)
                    && f.producer_id == Some(pid)
                    && f.offset == Some(o)
            });
            if verdict {
                self.verdicts_after.push(VerdictAfter {
                    producer_id: pid,
                    offset: o,
                    lo,
                    hi,
                    batch: Sequences::of(ev),
                    before: state,
                });
            }
        }
    }

    /// Note `ev` before the replay applies it; the damaged batches it is its producer's
    /// first intact batch after, when one of them has a new producer id.
    fn note(
        &mut self,
        replay: &Replay,
        ev: &BatchEvent,
        remote_segment: Option<(i64, i64)>,
    ) -> Option<(usize, usize)> {
        let (pid, n) = (ev.producer_id, self.damaged.len());
        let mut after = None;
        if ev.has_producer_id() && n > 0 {
            if let Some(i) = self.awaiting_next.remove(&pid) {
                self.damaged[i].next_of_producer = Some(ev.base_offset);
            }
            let lo = self.damaged_before.insert(pid, n).unwrap_or(0);
            if ev.crc_valid && self.last_new_id.is_some_and(|i| i >= lo) {
                after = Some((lo, n));
            }
            if ev.crc_valid
                && let Some(p) = self.phantom_ids.get_mut(&pid)
            {
                *p = false;
            }
        }
        if !ev.crc_valid {
            // An id below -1 (NO_PRODUCER_ID) can only be damage, a flipped sign bit: the
            // replay skips the batch as Kafka's rebuild does (`hasProducerId`), so the real
            // producer misses it as it would a phantom's.
            let new_id = (ev.has_producer_id()
                && (!replay.knows_producer(pid) || self.phantom_ids.get(&pid) == Some(&true)))
                || pid < -1;
            if ev.has_producer_id() {
                self.awaiting_next.insert(pid, n);
            }
            if new_id {
                self.last_new_id = Some(n);
                self.phantom_ids.entry(pid).or_insert(true);
            }
            self.new_id.push(new_id);
            self.sequences.push(Sequences::of(ev));
            // A marker of a producer without an open transaction closes nothing (nor does
            // one without a producer id, which the replay skips).
            let lone_marker = ev.is_control && !(ev.has_producer_id() && replay.has_open_txn(pid));
            self.damaged.push(DamagedBatch {
                remote_segment,
                lone_marker,
                ..DamagedBatch::of(ev)
            });
        }
        after
    }

    /// The damaged batches, once every batch is replayed; `complete`: the partition was
    /// read to its end (else a producer id may reappear past the read limit, and no id is
    /// taken as a phantom).
    pub(crate) fn finish(self, complete: bool) -> Vec<DamagedBatch> {
        let mut damaged = self.damaged;
        if !complete {
            return damaged;
        }
        // A phantom: a producer id new at the damaged batch that no intact batch carries
        // (damaged ones may: a repeated flip).
        let phantom: Vec<bool> = (self.new_id.iter().zip(&damaged))
            .map(|(&new, d)| new && self.phantom_ids.get(&d.producer_id) == Some(&true))
            .collect();
        for v in self.verdicts_after {
            let fills = |i: usize| phantom[i] && v.filled_by(self.sequences[i]);
            if let Some(i) = (v.lo..v.hi).rev().find(|&i| fills(i)) {
                damaged[i].first_after.push((v.producer_id, v.offset));
            }
        }
        damaged
    }
}

impl Sequences {
    fn of(ev: &BatchEvent) -> Sequences {
        Sequences {
            epoch: ev.producer_epoch,
            base: ev.base_sequence,
            last: ev.last_sequence,
        }
    }
}

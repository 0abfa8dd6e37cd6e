//! What the replay notes of the damaged batches it reads, for the damage links of
//! [`super::link_damage_to`].

use super::{DamagedBatch, derived_from_producer_fields};
use crate::finding::Finding;
use crate::partition::event::BatchEvent;
use crate::partition::state::Replay;
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
    /// Per damaged batch: its producer id was new to the replay (a phantom unless a later
    /// batch carries it too).
    new_id: Vec<bool>,
    /// The last damaged batch with a new producer id.
    last_new_id: Option<usize>,
    /// Producer id → how many damaged batches came before its latest batch (the producers
    /// seen since the first damaged batch).
    damaged_before: HashMap<i64, usize>,
    /// A sequence or epoch verdict at a producer's first batch after the damaged batches
    /// `lo..hi` (its previous batch came before them all): `(producer id, base offset, lo,
    /// hi)`.
    verdicts_after: Vec<(i64, i64, usize, usize)>,
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
                self.verdicts_after.push((pid, o, lo, hi));
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
        }
        if !ev.crc_valid {
            let new_id = ev.has_producer_id() && !replay.knows_producer(pid);
            if ev.has_producer_id() {
                self.awaiting_next.insert(pid, n);
            }
            if new_id {
                self.last_new_id = Some(n);
            }
            self.new_id.push(new_id);
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
        // A phantom: a new producer id at the damaged batch that no later batch carries.
        let phantom: Vec<bool> = (self.new_id.iter().zip(&damaged))
            .map(|(&new, d)| new && d.next_of_producer.is_none())
            .collect();
        for (pid, o, lo, hi) in self.verdicts_after {
            if let Some(i) = (lo..hi).rev().find(|&i| phantom[i]) {
                damaged[i].first_after.push((pid, o));
            }
        }
        damaged
    }
}

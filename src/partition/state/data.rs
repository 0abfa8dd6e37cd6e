//! Data batches in the replay: the leader's checks of a producer's epoch, sequence and
//! transaction state (rules 12–16, 25–26) before the recovery view applies the batch.

use super::entry::{
    BatchRef, DataRef, Entry, OpenTxnState, RefKind, SeqBatch, next_sequence, ranges_overlap,
};
use super::opentxns::OpenTxns;
use super::{LastEvent, Replay, text, txnrec};
use crate::finding::evidence::{self, ZombieJoint};
use crate::finding::{Finding, Kind, Severity};
use crate::partition::event::BatchEvent;
use serde_json::json;

impl Replay {
    // ----- data batches ----------------------------------------------------------------

    pub(super) fn apply_data(&mut self, ev: &BatchEvent, findings: &mut Vec<Finding>) {
        let pid = ev.producer_id;
        let cur = BatchRef::of(ev);
        let ts = ev.max_timestamp;
        let seq_rules = self.sequence_rules_apply();
        let compacted = self.treated_as_compacted();
        if ev.is_transactional && self.producers.get(pid).is_none_or(|e| !e.has_txn()) {
            self.transaction_starts(ev);
        }
        let Some(e) = self.producers.get(pid) else {
            // First sight: the history starts here, epoch and sequence unknown — accept
            // (a TV2 leader would not: the cluster stage knows the version).
            self.first_txn_batch(ev, &cur, false);
            let mut e = Entry::new(ev);
            record_data(
                &mut e,
                &mut self.open_txns,
                ev,
                cur,
                false,
                false,
                self.broker_clock,
            );
            self.producers.insert(e);
            return;
        };
        // The rules read the entry in place; it is updated in place at the end (a clone per
        // batch plus `insert` replacing the old value were ≈ 3 % of a 1-thread scan, in
        // `memmove`).
        let gap_ms = if e.last_timestamp(&self.markers) >= 0 && ts >= 0 {
            Some(ts.saturating_sub(e.last_timestamp(&self.markers)))
        } else {
            None
        };
        let expired = self.producer_expired(e.has_txn(), gap_ms);
        let epoch = ev.producer_epoch;
        let mut zombie = false;

        // Rules 12 and 13: epoch regression, zombie write.
        if epoch < e.epoch {
            findings.push(self.epoch_regression(ev, &cur, e, gap_ms, expired));
            if let Some(m) = e.last_marker(&self.markers)
                && m.epoch > epoch
            {
                zombie = true;
                findings.push(self.zombie_finding(ev, &cur, e, &m, gap_ms, expired));
            }
        } else if !expired && seq_rules && (e.seq_known || epoch != e.epoch) {
            // Rules 14–16 (leader CLIENT checks), only while the leader knew the producer.
            // A producer first seen through a marker has a known epoch but no sequence yet:
            // data at another epoch must still start at 0 (rule 14); at the same epoch its
            // sequence cannot be judged.
            self.sequence_rules(ev, &cur, e, gap_ms, compacted, findings);
        }

        // Rules 25 and 26: transactions.
        if let Some(slot) = e.txn() {
            let t = self.open_txns.get(slot);
            if !ev.is_transactional && t.non_txn_reported {
                // Kafka throws at the first one: one cause, one finding.
            } else if !ev.is_transactional {
                findings.push(
                    self.at(
                        Kind::NonTransactionalWriteInTransaction,
                        &cur,
                        format!(
                            "producer {pid} wrote non-transactional data at offset {} while its transaction opened at offset {} is open; a broker rebuilding its producer state over this batch fails there (later such batches of the producer in this transaction are not reported again)",
                            ev.base_offset, t.first_batch.base_offset
                        ),
                    )
                    .evidence(json!({
                        "transaction_first_batch": self.batch_json(&t.first()),
                        "batch": self.batch_json(&cur),
                    }))
                    .broker(text::BROKER_NON_TXN)
                    .client_error(text::CLIENT_NON_TXN)
                    .remediation(
                        "the broker cannot rebuild producer state past this batch: restore this replica from a healthy one, or delete the partition's data on this broker and let it re-replicate",
                    ),
                );
                self.open_txns.get_mut(slot).non_txn_reported = true;
            } else if epoch > t.epoch {
                findings.push(
                    self.at(
                        Kind::TransactionEpochChange,
                        &cur,
                        format!(
                            "producer {pid}'s transaction opened at offset {} at epoch {} continues at epoch {epoch} without a marker",
                            t.first_batch.base_offset, t.epoch
                        ),
                    )
                    .evidence(json!({
                        "transaction_first_batch": self.batch_json(&t.first()),
                        "batch": self.batch_json(&cur),
                        "transaction_epoch": t.epoch,
                        "epoch": epoch,
                    }))
                    .broker(text::BROKER_TXN_EPOCH)
                    .remediation(
                        "the coordinator would have aborted the old transaction with a marker at the bumped epoch; check __transaction_state for this producer id",
                    ),
                );
            }
        }

        // Recovery view update.
        // TV2 evidence: data exactly at the epoch of a marker that bumped the epoch above
        // the transaction it closed, starting a fresh sequence.
        let late_after_marker = matches!(e.last_event(&self.markers), Some(LastEvent::Marker { epoch: me, .. }) if me == epoch)
            && !e.marker_bumped
            && ev.is_transactional
            && e.last_sequence() >= 0
            && ev.base_sequence == next_sequence(e.last_sequence());
        let tv2 = matches!(e.last_event(&self.markers), Some(LastEvent::Marker { epoch: me, .. }) if me == epoch)
            && e.marker_bumped
            && ev.base_sequence == 0;
        if expired && epoch >= e.epoch {
            // Unjudged above; the coordinator's transaction version may still decide.
            self.first_txn_batch(ev, &cur, true);
        }
        let Some(e) = self.producers.get_mut(pid) else {
            return; // present above; nothing removed it since
        };
        if tv2 {
            e.tv2 = Some(true);
        }
        let clock = self.broker_clock;
        record_data(
            e,
            &mut self.open_txns,
            ev,
            cur,
            zombie,
            late_after_marker,
            clock,
        );
    }

    /// A producer's first batch, with no entry before it: kept when it is transactional,
    /// starts above sequence 0, and the replay holds the partition's whole history (the
    /// log starts at offset 0 by its first batch and its checkpoint, no snapshot seeded
    /// it, not treated as compacted): the leader then held no state for the producer
    /// (`ProducerAppendInfo.checkSequence`'s empty `currentEntry`), which a TV2 leader
    /// refuses ([`txnrec::FirstTxnBatch`]).
    ///
    /// `expired`: the producer has state in the replay, but the leader may have expired it
    /// (`ProducerStateManager.removeExpiredProducers`) and then held none; had it kept it,
    /// the replay's own sequence rules would have judged the batch.
    fn first_txn_batch(&mut self, ev: &BatchEvent, cur: &BatchRef, expired: bool) {
        let complete = self.first_offset == Some(0)
            && self.ctx.log_start_offset.is_none_or(|s| s <= 0)
            && self.seed.is_none()
            && !self.history_broken
            && !self.treated_as_compacted();
        if ev.is_transactional
            && ev.base_sequence > 0
            && complete
            && self.first_txn_batches.len() < txnrec::MAX_FIRST_TXN_BATCHES
        {
            self.first_txn_batches.push(txnrec::FirstTxnBatch {
                producer_id: ev.producer_id,
                producer_epoch: ev.producer_epoch,
                base_sequence: ev.base_sequence,
                batch: self.batch_evidence(cur),
                expired,
            });
        }
    }

    pub(super) fn epoch_regression(
        &self,
        ev: &BatchEvent,
        cur: &BatchRef,
        e: &Entry,
        gap_ms: Option<i64>,
        expired: bool,
    ) -> Finding {
        let pid = ev.producer_id;
        let prev = e.last_ref(&self.markers);
        let why = if expired {
            format!(
                "more than producer.id.expiration.ms ({}) after the producer's last activity: the leader had expired its state and accepted it",
                // The default in the words the message always gave it (`human_duration`
                // says "24 hours").
                match self.opts.producer_id_expiration_ms {
                    super::PRODUCER_ID_EXPIRATION_MS => "1 day".to_string(),
                    ms => text::human_duration(ms),
                }
            )
        } else {
            "within producer.id.expiration.ms of the producer's last activity: the leader must have lost the producer's state (KAFKA-9144 on <= 2.4.0, lost snapshots) or this is divergent history".to_string()
        };
        let marker = ev.is_control;
        let f = self
            .at(
                Kind::ProducerEpochRegression,
                cur,
                format!(
                    "producer {pid} {} at offset {} has epoch {} below epoch {} seen at offset {}; {why}",
                    if marker { "marker" } else { "data" },
                    ev.base_offset,
                    ev.producer_epoch,
                    e.epoch,
                    prev.base_offset
                ),
            )
            .evidence(self.with_expiration_source(json!({
                "previous_epoch": e.epoch,
                "epoch": ev.producer_epoch,
                "previous": self.batch_json(&prev),
                "batch": self.batch_json(cur),
                "gap_ms": gap_ms,
                "exceeds_producer_id_expiration": expired,
                "producer_id_expiration_ms": self.opts.producer_id_expiration_ms,
            })))
            .broker(if marker {
                text::BROKER_EPOCH_MARKER
            } else {
                text::BROKER_EPOCH_DATA
            });
        // A marker is written by the transaction coordinator (WriteTxnMarkers), never by
        // the producer: no producer sees the epoch check fail on it.
        f.client_error(if marker {
            "none: markers come from the transaction coordinator; a leader holding the producer's state refuses the WriteTxnMarkers request, not a produce"
        } else {
            text::CLIENT_EPOCH
        })
    }

    /// The `zombie_write` finding of data `ev` (`cur`) at an epoch below its producer's
    /// last marker `m` (rule 13, KAFKA-9144).
    fn zombie_finding(
        &self,
        ev: &BatchEvent,
        cur: &BatchRef,
        e: &Entry,
        m: &BatchRef,
        gap_ms: Option<i64>,
        expired: bool,
    ) -> Finding {
        let (pid, epoch) = (ev.producer_id, ev.producer_epoch);
        let opens = ev.is_transactional && !e.has_txn();
        let timeout_abort_possible = timeout_abort_possible(
            e.tv2,
            m.kind == RefKind::Abort,
            i32::from(m.epoch),
            i32::from(epoch),
        );
        self.at(
                Kind::ZombieWrite,
                cur,
                format!(
                    "producer {pid} wrote {} at epoch {epoch} after its {} marker at epoch {} (offset {}){}",
                    if ev.is_transactional { "transactional data" } else { "data" },
                    m.kind.name().to_uppercase(),
                    m.epoch,
                    m.base_offset,
                    if opens { "; it opens a transaction the coordinator will never close" } else { "" }
                ),
            )
            .evidence({
                let mut ev = self.with_expiration_source(json!({
                    "batch": self.batch_json(cur),
                    "opens_transaction": opens,
                    "gap_ms": gap_ms,
                    "exceeds_producer_id_expiration": expired,
                    "producer_id_expiration_ms": self.opts.producer_id_expiration_ms,
                }));
                let marker = Some(self.batch_evidence(m));
                evidence::merge(&mut ev, &ZombieJoint { marker, timeout_abort_possible });
                ev
            })
            .broker(text::BROKER_ZOMBIE)
            .client_error(if timeout_abort_possible {
                text::CLIENT_ZOMBIE_TV2
            } else {
                text::CLIENT_ZOMBIE
            })
            .remediation(zombie_remediation(opens))
    }

    /// The `duplicate_sequence` finding of batch `ev` (`cur`), whose sequences repeat or
    /// overlap those of the cached batch `b` of its producer at the same epoch (rule 16,
    /// `ProducerStateEntry.findDuplicateBatch`).
    fn duplicate_finding(
        &self,
        ev: &BatchEvent,
        cur: &BatchRef,
        b: &SeqBatch,
        gap_ms: Option<i64>,
    ) -> Finding {
        let (pid, epoch) = (ev.producer_id, ev.producer_epoch);
        let (base, last) = (ev.base_sequence, ev.last_sequence);
        let exact = b.base_sequence == base && b.last_sequence == last;
        let orig = json!({
            "offset": b.base_offset,
            "last_offset": b.last_offset,
            "position": b.position,
            "segment": self.segment_name(b.segment),
            "base_sequence": b.base_sequence,
            "last_sequence": b.last_sequence,
        });
        self.at(
                Kind::DuplicateSequence,
                cur,
                format!(
                    "producer {pid} epoch {epoch}: sequences {base}..{last} at offset {} {} the batch at offset {} ({}..{})",
                    ev.base_offset,
                    if exact { "duplicate" } else { "overlap" },
                    b.base_offset,
                    b.base_sequence,
                    b.last_sequence
                ),
            )
            .evidence(json!({
                "exact": exact,
                "original": orig,
                "batch": self.batch_json(cur),
                "gap_ms": gap_ms,
            }))
            .broker(text::BROKER_DUPLICATE)
            .client_error(if exact {
                text::CLIENT_DUPLICATE_EXACT
            } else {
                text::CLIENT_OUT_OF_ORDER
            })
            .remediation(
                "consumers read these records twice; the leader had lost or expired the producer's state when the second copy was appended",
            )
    }

    pub(super) fn sequence_rules(
        &self,
        ev: &BatchEvent,
        cur: &BatchRef,
        e: &Entry,
        gap_ms: Option<i64>,
        compacted: bool,
        findings: &mut Vec<Finding>,
    ) {
        let pid = ev.producer_id;
        let epoch = ev.producer_epoch;
        let base = ev.base_sequence;
        let last = ev.last_sequence;
        if base < 0 {
            return; // rule 19, reported by field_rules
        }
        let last_seq = e.last_sequence();
        // An entry at NO_PRODUCER_EPOCH (-1) accepts any sequence, at its epoch or a new one
        // (ProducerAppendInfo.checkSequence); only an exact duplicate at its epoch is still
        // found (ProducerStateEntry.findDuplicateBatch, which compares epochs only).
        let no_epoch = e.epoch == -1;
        // Built only when a finding needs it: a JSON map per batch dominated the replay.
        let prev_json = || self.batch_json(&e.last_ref(&self.markers));
        if no_epoch && epoch != e.epoch {
            return;
        }
        if epoch != e.epoch || last_seq < 0 {
            // Rule 14: a new epoch (or the first data after an epoch-changing marker) must
            // start at 0.
            if base != 0 && !compacted {
                let why = if epoch != e.epoch {
                    format!("new epoch {epoch} (previous {})", e.epoch)
                } else if !e.has_data() {
                    format!(
                        "first data after the marker that created its state at epoch {epoch} (the log holds it from offset 0)"
                    )
                } else {
                    format!("first data after the epoch-changing marker at epoch {epoch}")
                };
                findings.push(
                    self.at(
                        Kind::InvalidFirstSequence,
                        cur,
                        format!(
                            "producer {pid}: {why} starts at sequence {base} instead of 0 (offset {})",
                            ev.base_offset
                        ),
                    )
                    .evidence(json!({
                        "expected": 0,
                        "found": base,
                        "previous_epoch": e.epoch,
                        "epoch": epoch,
                        "previous": prev_json(),
                        "batch": self.batch_json(cur),
                        "gap_ms": gap_ms,
                    }))
                    .broker(text::BROKER_FIRST_SEQ)
                    .client_error(text::CLIENT_OUT_OF_ORDER),
                );
            }
            return;
        }
        // Same epoch, sequence known: rule 16 first (duplicates), then rule 15.
        // The healthy producer's next batch skips the search (it could find nothing).
        let dup = if e.cache_ends_below(base, last) {
            None
        } else {
            e.cached_newest_first().find(|b| {
                (b.base_sequence == base && b.last_sequence == last)
                    || (!no_epoch
                        && ranges_overlap((b.base_sequence, b.last_sequence), (base, last)))
            })
        };
        if let Some(b) = dup {
            findings.push(self.duplicate_finding(ev, cur, &b, gap_ms));
            return;
        }
        if no_epoch {
            return;
        }
        let expected = next_sequence(last_seq);
        if base != expected {
            let gap = base as i64 - expected as i64;
            let mut f = self
                .at(
                    Kind::SequenceGap,
                    cur,
                    format!(
                        "producer {pid} epoch {epoch}: sequence {base} at offset {} where {expected} was expected ({})",
                        ev.base_offset,
                        if gap > 0 {
                            format!("{gap} sequence(s) missing")
                        } else {
                            format!("{} back", -gap)
                        }
                    ),
                )
                .evidence(json!({
                    "expected": expected,
                    "found": base,
                    "gap": gap,
                    "previous": prev_json(),
                    "batch": self.batch_json(cur),
                    "gap_ms": gap_ms,
                    "compacted": self.ctx.compacted,
                }))
                .broker(text::BROKER_SEQ_GAP)
                .client_error(text::CLIENT_OUT_OF_ORDER);
            if self.ctx.compacted.is_none() {
                // Compaction removes whole batches; undeclared topics are not proven. A
                // topic named as a Streams changelog (created compacted by Streams) most
                // likely lost the batches to the cleaner: said, and at info.
                let changelog = crate::discover::layout::is_streams_changelog_name(&self.ctx.topic);
                f = f.severity(if changelog {
                    Severity::Info
                } else {
                    Severity::Warning
                });
                if changelog && let Some(e) = f.evidence.as_object_mut() {
                    e.insert("streams_changelog_name".into(), true.into());
                }
            }
            findings.push(f);
        }
    }
}

/// Recovery-view update for a data batch (`appendDataBatch`, REPLICATION origin) of
/// `e`'s producer; a transactional batch with no transaction open opens one (in `txns`).
impl Replay {
    /// A transaction of `ev`'s producer starts at `ev`: the `lastStableOffset` a follower
    /// may have indexed for the aborts before it in its segment that no other producer's
    /// transaction was open at ([`AbortedTxn::follower_last_stable_offset`]).
    fn transaction_starts(&mut self, ev: &BatchEvent) {
        if self.follower_waiting.is_empty() || self.follower_waiting_pid == Some(ev.producer_id) {
            return;
        }
        let aborted = &mut self.aborted;
        // A fetched chunk lies in one segment: an abort of another segment waits no more.
        self.follower_waiting.retain(|&i| {
            let a = &mut aborted[i];
            if a.segment != ev.segment {
                return false;
            }
            if a.producer_id == ev.producer_id {
                return true; // its own producer's next transaction says nothing
            }
            a.follower_last_stable_offset = Some(ev.base_offset);
            false
        });
        // Those left are all of this producer.
        self.follower_waiting_pid = (!self.follower_waiting.is_empty()).then_some(ev.producer_id);
    }
}

fn record_data(
    e: &mut Entry,
    txns: &mut OpenTxns,
    ev: &BatchEvent,
    cur: BatchRef,
    zombie: bool,
    late_after_marker: bool,
    clock: i64,
) {
    if ev.producer_epoch != e.epoch {
        e.clear_cache();
        e.epoch = ev.producer_epoch;
    }
    e.seq_known = true;
    e.record_data(cur);
    let opens = ev.is_transactional && !e.has_txn();
    if let Some(i) = e.txn().filter(|_| ev.is_transactional) {
        let t = txns.get_mut(i);
        t.rec.add(ev);
        t.appended_after(clock);
    }
    if opens {
        let first_ts = if ev.timestamp_type == crate::read::format::TimestampType::LogAppendTime {
            ev.max_timestamp
        } else {
            ev.base_timestamp
        };
        let slot = txns.insert(OpenTxnState {
            pid: ev.producer_id,
            first_batch: DataRef::of(&cur),
            first_timestamp: first_ts,
            rec: txnrec::OpenRecord::opened_by(ev),
            epoch: ev.producer_epoch,
            zombie,
            late_after_marker,
            non_txn_reported: false,
            clock_floor: clock,
        });
        // More open transactions than slots (u32::MAX, more than the producer table
        // holds): not recorded as open.
        if let Some(i) = slot {
            e.set_txn(i);
        }
    }
    e.marker_bumped = false;
}

/// Whether a zombie write has two readings: under TV2 an ABORT at the data's epoch + 1 is
/// a timeout abort or a fencing; any other case is the fencing alone.
fn timeout_abort_possible(tv2: Option<bool>, abort: bool, marker_epoch: i32, epoch: i32) -> bool {
    tv2 == Some(true) && abort && marker_epoch == epoch + 1
}

/// The remediation of a zombie write (`opens`: its batch opens a transaction).
fn zombie_remediation(opens: bool) -> &'static str {
    if opens {
        "if the transaction is still open at the end of the log it is hanging: abort it with kafka-transactions.sh abort (see the hanging_transaction finding); upgrade brokers to 2.4.1 / 2.5.0 or later (KAFKA-9144) and make sure the zombie producer instance is stopped"
    } else {
        "make sure the zombie producer instance is stopped; upgrade brokers to 2.4.1 / 2.5.0 or later (KAFKA-9144)"
    }
}

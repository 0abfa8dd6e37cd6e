//! COMMIT/ABORT markers in the replay (rules 12, 21–23, 27) and the findings of the
//! transactions still open at the end of the log.

use super::entry::{BatchRef, Entry, OpenTxnState, RefKind};
use super::{
    AbortedTxn, LATE_TRANSACTION_BUFFER_MS, LastEvent, Replay, TRANSACTION_MAX_TIMEOUT_MS, text,
};
use crate::finding::evidence::{self, OpenTxnJoint};
use crate::finding::{Finding, Kind, LSO_CLAUSE, Severity};
use crate::partition::event::BatchEvent;
use serde_json::{Value, json};

impl Replay {
    // ----- markers -----------------------------------------------------------------------

    pub(super) fn apply_marker(
        &mut self,
        ev: &BatchEvent,
        commit: bool,
        coordinator_epoch: i32,
        findings: &mut Vec<Finding>,
    ) {
        let pid = ev.producer_id;
        let cur = BatchRef::of(ev);
        let compacted = self.treated_as_compacted();
        // Taken out of the table for the update (a placeholder holds its place), not
        // cloned: a clone copied the entry's boxes on every marker.
        let known = self.producers.take(pid);
        // History starts at offset 0 (nothing deleted before it): a first-sight marker
        // really closes nothing.
        let history_complete = self.first_offset == Some(0);
        let mut e = match known {
            Some(e) => e,
            None => {
                let mut e = Entry::new(ev);
                if history_complete && !compacted {
                    findings.push(self.marker_without_txn(ev, &cur, None));
                    // The marker creates the producer's state (`ProducerStateManager`: its
                    // epoch, no sequence): with the whole history here, the next data at
                    // that epoch must start at sequence 0 (rule 14).
                    e.seq_known = true;
                }
                e
            }
        };
        let first_sight = e.last_event(&self.markers).is_none();
        if !first_sight {
            self.marker_audit(ev, &cur, &e, commit, coordinator_epoch, compacted, findings);
        } else {
            // Rule 22 against the state loaded from the seeding snapshot.
            self.seeded_coordinator_audit(ev, &cur, &e, commit, coordinator_epoch, findings);
        }
        let bumped = self.close_transaction(ev, &cur, &mut e, commit, coordinator_epoch, findings);
        if ev.producer_epoch != e.epoch {
            e.clear_cache();
            e.epoch = ev.producer_epoch;
            e.seq_known = true;
        }
        e.record_marker(cur, &mut self.markers);
        e.marker_bumped = bumped;
        self.producers.insert(e);
        if self.open_txns.wants_compaction() {
            let producers = &mut self.producers;
            self.open_txns.compact(|pid, slot| {
                if let Some(e) = producers.get_mut(pid) {
                    e.set_txn(slot);
                }
            });
        }
    }

    /// Rule 22 for a producer none of whose markers the log holds, against the coordinator
    /// epoch the seeding snapshot loaded for it ([`super::seed`]): `ProducerAppendInfo`'s
    /// `appendEndTxnMarker` checks a marker's coordinator epoch against the producer
    /// entry's, which `ProducerStateManager.loadFromSnapshot` set from the snapshot — the
    /// epoch of a marker retention deleted. When the producer's first held batch (the one
    /// that opened the transaction `e` has open, else this marker) comes more than
    /// `producer.id.expiration.ms` (the default) after the snapshot's last timestamp of it,
    /// with no transaction open in the snapshot, the entry was gone by then on every path
    /// and nothing is said.
    pub(super) fn seeded_coordinator_audit(
        &self,
        ev: &BatchEvent,
        cur: &BatchRef,
        e: &super::entry::Entry,
        commit: bool,
        coordinator_epoch: i32,
        findings: &mut Vec<Finding>,
    ) {
        let Some(seed) = self.seed.as_deref() else {
            return;
        };
        let Some((prev, ts)) = seed.coordinator_state(ev.producer_id) else {
            return;
        };
        if coordinator_epoch >= prev {
            return;
        }
        let (pid, type_name) = (ev.producer_id, if commit { "COMMIT" } else { "ABORT" });
        let gap_ms =
            (ts >= 0 && ev.marker_timestamp >= 0).then(|| ev.marker_timestamp.saturating_sub(ts));
        // Idle past `producer.id.expiration.ms` between the snapshot's last timestamp and
        // the producer's first held batch (a transaction open in the snapshot is its own,
        // seeded at the snapshot's time: never idle): the leader had dropped the entry
        // (`removeExpiredProducers`) and started a new one, and a load now drops it from
        // the snapshot (`loadFromSnapshot` skips an expired entry): no check holds the
        // marker against that epoch.
        let first_held = e.txn().map_or(ev.marker_timestamp, |i| {
            self.open_txns.get(i).first_timestamp
        });
        let idle = (ts >= 0 && first_held >= 0).then(|| first_held.saturating_sub(ts));
        if self.producer_expired(false, idle) {
            return;
        }
        findings.push(
            self.at(
                Kind::CoordinatorEpochRegression,
                cur,
                format!(
                    "producer {pid} {type_name} marker at offset {} has coordinator epoch {coordinator_epoch} below {prev} of the producer's state in snapshot {} (its last marker is below the log start {}); a broker <= 2.4.0 whose load replays it from that snapshot (a recovery from a log start checkpoint below it) fails to load this log",
                    ev.base_offset, seed.name, seed.floor
                ),
            )
            .evidence(json!({
                "previous_coordinator_epoch": prev,
                "coordinator_epoch": coordinator_epoch,
                "from_snapshot": seed.name,
                "snapshot_offset": seed.floor,
                "snapshot_timestamp": ts,
                "marker": self.batch_json(cur),
                "gap_ms": gap_ms,
                "exceeds_producer_id_expiration": false,
            }))
            .broker(text::BROKER_COORD_EPOCH)
            .remediation(
                "run brokers >= 2.4.1 / 2.5.0 (KAFKA-9144 fix) before restarting this replica; check for a zombie transaction coordinator",
            ),
        );
    }

    /// The leader's checks of a marker of a known producer (rules 12, 22, 23).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn marker_audit(
        &self,
        ev: &BatchEvent,
        cur: &BatchRef,
        e: &Entry,
        commit: bool,
        coordinator_epoch: i32,
        compacted: bool,
        findings: &mut Vec<Finding>,
    ) {
        let (pid, ts, cur) = (ev.producer_id, ev.marker_timestamp, *cur);
        let type_name = if commit { "COMMIT" } else { "ABORT" };
        let gap_ms = if e.last_timestamp(&self.markers) >= 0 && ts >= 0 {
            Some(ts.saturating_sub(e.last_timestamp(&self.markers)))
        } else {
            None
        };
        let expired = self.producer_expired(e.has_txn(), gap_ms);
        // Rule 12 / 21 (markers).
        if ev.producer_epoch < e.epoch {
            findings.push(self.epoch_regression(ev, &cur, e, gap_ms, expired));
        }
        // Rule 22 (against the last held marker, else the seeding snapshot's state).
        let prev_coordinator_epoch = e.coordinator_epoch(&self.markers);
        if prev_coordinator_epoch < 0 {
            self.seeded_coordinator_audit(ev, &cur, e, commit, coordinator_epoch, findings);
        } else if coordinator_epoch < prev_coordinator_epoch {
            let prev = e
                .last_marker(&self.markers)
                .unwrap_or(e.last_ref(&self.markers));
            findings.push(
                self.at(
                    Kind::CoordinatorEpochRegression,
                    &cur,
                    format!(
                        "producer {pid} {type_name} marker at offset {} has coordinator epoch {coordinator_epoch} below {} of the marker at offset {}; a broker <= 2.4.0 whose load replays both (recovery, a producer-state rebuild) fails to load this log",
                        ev.base_offset, prev_coordinator_epoch, prev.base_offset
                    ),
                )
                .evidence(json!({
                    "previous_coordinator_epoch": prev_coordinator_epoch,
                    "coordinator_epoch": coordinator_epoch,
                    "previous": self.batch_json(&prev),
                    "marker": self.batch_json(&cur),
                    "gap_ms": gap_ms,
                    "exceeds_producer_id_expiration": expired,
                }))
                .broker(text::BROKER_COORD_EPOCH)
                .remediation(
                    "run brokers >= 2.4.1 / 2.5.0 (KAFKA-9144 fix) before restarting this replica; check for a zombie transaction coordinator",
                ),
            );
        }
        // Rule 23 and its escalation (b).
        if !e.has_txn() && !compacted {
            let conflict = match (e.last_event(&self.markers), e.last_marker(&self.markers)) {
                (
                    Some(LastEvent::Marker {
                        epoch, commit: c, ..
                    }),
                    Some(m),
                ) if epoch == ev.producer_epoch && c != commit => Some(m),
                _ => None,
            };
            // Under TV0/1 a later empty transaction at the same epoch looks the same:
            // only TV2 (or unknown TV) producers are escalated.
            let tv01 = e.tv2 == Some(false);
            if let Some(m) = conflict.filter(|_| !tv01) {
                let mut f = self
                    .at(
                        Kind::ConflictingMarkers,
                        &cur,
                        format!(
                            "producer {pid} epoch {}: {type_name} at offset {} after {} at offset {} with no data in between{}",
                            ev.producer_epoch,
                            ev.base_offset,
                            m.kind.name().to_uppercase(),
                            m.base_offset,
                            if e.tv2.is_none() { " (transaction version not inferred)" } else { "" }
                        ),
                    )
                    .evidence(json!({
                        "previous_marker": self.batch_json(&m),
                        "marker": self.batch_json(&cur),
                        "transaction_version_2": e.tv2,
                    }))
                    .broker(text::BROKER_CONFLICT)
                    .remediation(
                        "check __transaction_state for this producer id: the transaction's outcome there tells which marker is right; consumers of this partition saw the first one",
                    );
                if e.tv2.is_none() {
                    f = f.severity(Severity::Warning);
                }
                findings.push(f);
            } else {
                let mut f = self.marker_without_txn(ev, &cur, Some(e));
                if let (Some(m), Value::Object(o)) = (conflict, &mut f.evidence) {
                    o.insert(
                        "previous_marker_of_other_type_at_same_epoch".into(),
                        self.batch_json(&m),
                    );
                    o.insert(
                        "note".into(),
                        json!("TV0/1 producer: a later empty transaction at the same epoch, not a conflict"),
                    );
                }
                findings.push(f);
            }
        }
    }

    /// Recovery view: the marker closes the producer's open transaction (rules 21, 27
    /// under TV2/TV0-1, statistics, the aborted-transaction list). Whether it bumped the
    /// epoch above the transaction's.
    pub(super) fn close_transaction(
        &mut self,
        ev: &BatchEvent,
        cur: &BatchRef,
        e: &mut Entry,
        commit: bool,
        coordinator_epoch: i32,
        findings: &mut Vec<Finding>,
    ) -> bool {
        let (pid, cur) = (ev.producer_id, *cur);
        // Recovery view: any accepted marker closes the open transaction.
        let mut bumped = false;
        let closed = e.take_txn().map(|i| self.open_txns.remove(i));
        self.txnrec.close(
            closed.as_ref().map(|t| {
                t.rec
                    .record(pid, t.epoch, t.first_batch.base_offset, t.first_timestamp)
            }),
            ev,
            commit,
            coordinator_epoch,
        );
        if let Some(t) = closed {
            let first = t.first_batch.base_offset;
            // Rules 21/27 under TV2: both markers must be above the epoch of the data they
            // close. Below the producer's epoch it is already a `producer_epoch_regression`.
            let data_epoch = t.epoch.max(e.epoch);
            let not_bumped = e.tv2 == Some(true)
                && ev.producer_epoch <= data_epoch
                && ev.producer_epoch >= e.epoch;
            // An ABORT at the data's epoch closing a transaction idle past the longest
            // transaction timeout is what an admin abort writes (kafka-transactions.sh abort:
            // WriteTxnMarkers at the producer's current epoch, AbortTransactionHandler); the
            // coordinator would have timed it out itself with a bumped marker. The tool's
            // `find-hanging` lists a transaction once idle past `--max-transaction-timeout`
            // (default 15 minutes, `FindHangingTransactionsCommand`): an operator may abort
            // it from then on.
            let idle_before = ev.max_timestamp.saturating_sub(t.rec.last_timestamp);
            let admin_abort =
                !commit && t.rec.last_timestamp > 0 && idle_before > TRANSACTION_MAX_TIMEOUT_MS;
            // A transaction at epoch 32767 (already `invalid_producer_fields`, the KAFKA-20090
            // class) can only be closed at 32767: the coordinator cannot bump an exhausted
            // epoch, and the leader's TV2 check lets that marker through
            // (`ProducerAppendInfo.checkProducerEpoch`, KAFKA-19999). Not a replayed marker,
            // not a downgrade.
            let exhausted = ev.producer_epoch == i16::MAX;
            if not_bumped {
                // One such marker keeps the TV2 verdict (a lone anomaly); a second in a row
                // is a downgrade to TV0/1 mid-stream. An admin abort counts for neither.
                let why = Unbumped {
                    data_epoch,
                    idle_before,
                    admin_abort,
                    exhausted,
                    downgraded: e.tv2_not_bumped && !admin_abort && !exhausted,
                };
                findings.push(self.not_bumped(ev, &cur, e, &t, commit, why));
                if why.downgraded {
                    e.tv2 = Some(false);
                }
            }
            e.tv2_not_bumped = not_bumped && !admin_abort && !exhausted;
            // Rule 27 under TV0/1: a COMMIT is written at the transaction's epoch; one above
            // it from a producer seen committing at its data's epoch is a switch to TV2
            // (4.0+ feature upgrade) or a COMMIT a TV0/1 coordinator would not write.
            if commit && e.tv2 == Some(false) && ev.producer_epoch > data_epoch {
                // The TV2 pattern is exactly one epoch up: then the producer is TV2 from here.
                let switched = ev.producer_epoch == t.epoch.saturating_add(1);
                findings.push(
                    self.at(
                        Kind::CommitEpochAboveData,
                        &cur,
                        format!(
                            "producer {pid} COMMIT marker at offset {} has epoch {}, above epoch {data_epoch} of the transaction it closes (opened at offset {}); the producer was inferred to use transaction version 0/1 (an earlier marker at its data's epoch): {}",
                            ev.base_offset,
                            ev.producer_epoch,
                            t.first_batch.base_offset,
                            if switched {
                                "a switch to transaction version 2 mid-stream (Kafka 4.0+, normal from here on) or a COMMIT a TV0/1 coordinator does not write"
                            } else {
                                "not the TV2 pattern either (one epoch up): a COMMIT a TV0/1 coordinator does not write"
                            }
                        ),
                    )
                    .evidence(json!({
                        "marker": self.batch_json(&cur),
                        "transaction_first_batch": self.batch_json(&t.first()),
                        "data_epoch": data_epoch,
                        "marker_epoch": ev.producer_epoch,
                        "previous_marker": e.last_marker(&self.markers).map(|m| self.batch_json(&m)),
                        "transaction_version_2_before": false,
                        "transaction_version_2_after": switched,
                    }))
                    .broker(text::BROKER_COMMIT_ABOVE_DATA)
                    .remediation(
                        "check the cluster's transaction.version feature history and __transaction_state for this producer's transactional id (ClientTransactionVersion): an upgrade explains it; otherwise find which EndTxn produced this COMMIT",
                    ),
                );
            }
            // TV inference (rule 27).
            if commit && ev.producer_epoch == t.epoch.saturating_add(1) {
                e.tv2 = Some(true);
            } else if ev.producer_epoch == t.epoch && !not_bumped {
                e.tv2 = Some(false);
            }
            bumped = ev.producer_epoch > t.epoch;
            if commit {
                self.stats.committed += 1;
            } else {
                self.record_abort(pid, first, ev);
            }
        } else if commit {
            self.stats.empty_commits += 1;
        } else {
            self.stats.empty_aborts += 1;
        }
        bumped
    }

    /// The `marker_epoch_not_bumped` finding of `ev`, a TV2 producer's marker not above the
    /// epoch of the transaction `t` it closes (rules 21/27).
    fn not_bumped(
        &self,
        ev: &BatchEvent,
        cur: &BatchRef,
        e: &Entry,
        t: &OpenTxnState,
        commit: bool,
        why: Unbumped,
    ) -> Finding {
        let (pid, cur) = (ev.producer_id, *cur);
        let type_name = if commit { "COMMIT" } else { "ABORT" };
        let Unbumped {
            data_epoch,
            idle_before,
            admin_abort,
            exhausted,
            downgraded,
        } = why;
        let mut f = self
            .at(
                Kind::MarkerEpochNotBumped,
                &cur,
                format!(
                    "producer {pid} {type_name} marker at offset {} has epoch {}, not above epoch {data_epoch} of the transaction it closes (opened at offset {}); the producer was inferred to use transaction version 2{}",
                    ev.base_offset,
                    ev.producer_epoch,
                    t.first_batch.base_offset,
                    if exhausted {
                        "; at epoch 32767, which the coordinator cannot bump (the epoch is exhausted), so this is the transaction's own marker".to_string()
                    } else if admin_abort {
                        format!(
                            "; the transaction was idle {} before it, longer than transaction.max.timeout.ms: most likely an admin abort (kafka-transactions.sh abort writes the ABORT at the producer's current epoch)",
                            text::human_duration(idle_before)
                        )
                    } else if downgraded {
                        "; second such marker in a row: now inferred TV0/1 (transaction version downgraded mid-stream?)".to_string()
                    } else {
                        String::new()
                    }
                ),
            )
            .evidence(json!({
                "marker": self.batch_json(&cur),
                "transaction_first_batch": self.batch_json(&t.first()),
                "transaction_epoch": t.epoch,
                "data_epoch": data_epoch,
                "marker_epoch": ev.producer_epoch,
                "previous_marker": e.last_marker(&self.markers).map(|m| self.batch_json(&m)),
                "transaction_version_2_before": true,
                "transaction_version_2_after": !downgraded,
                "idle_before_ms": idle_before,
                "likely_admin_abort": admin_abort,
                "epoch_exhausted": exhausted,
            }))
            .broker(text::BROKER_MARKER_NOT_BUMPED)
            .remediation(
                "check __transaction_state for this producer's transactional id (ClientTransactionVersion, epoch of the Complete record) and whether the transaction.version feature was downgraded; a delayed or replayed marker may have closed this transaction",
            );
        if exhausted {
            f = f
                .severity(Severity::Info)
                .broker(text::BROKER_MARKER_AT_MAX_EPOCH)
                .remediation(
                    "none for this marker; the producer's next transaction needs a new producer id (InitProducerId rotates an exhausted epoch's id)",
                );
        } else if admin_abort {
            f = f.severity(Severity::Info).remediation(
                "none if an operator aborted this hanging transaction (kafka-transactions.sh abort); otherwise check __transaction_state for this producer's transactional id",
            );
        }
        f
    }

    /// The ABORT `ev` closed producer `pid`'s transaction from `first`: counted, and kept
    /// as the `.txnindex` entry the broker appends (its last stable offset: the first
    /// offset of another open transaction, else the offset after the marker).
    fn record_abort(&mut self, pid: i64, first: i64, ev: &BatchEvent) {
        self.stats.aborted += 1;
        let lso = self
            .open_txns
            .first_offset()
            .unwrap_or(ev.base_offset.saturating_add(1));
        self.aborted.push(AbortedTxn {
            producer_id: pid,
            first_offset: first,
            last_offset: ev.base_offset,
            last_stable_offset: lso,
            segment: ev.segment,
            follower_last_stable_offset: None,
        });
        // No other producer's transaction open at the marker: a follower may have indexed
        // the first transaction of another producer after it instead.
        if lso == ev.base_offset.saturating_add(1) {
            self.follower_waiting.push(self.aborted.len() - 1);
            self.follower_waiting_pid = match self.follower_waiting.len() {
                1 => Some(pid),
                _ => self.follower_waiting_pid.filter(|&p| p == pid),
            };
        }
    }

    pub(super) fn marker_without_txn(
        &self,
        ev: &BatchEvent,
        cur: &BatchRef,
        e: Option<&Entry>,
    ) -> Finding {
        let type_name = if cur.kind == RefKind::Commit {
            "COMMIT"
        } else {
            "ABORT"
        };
        let previous = e.map(|e| self.batch_json(&e.last_ref(&self.markers)));
        self.at(
            Kind::MarkerWithoutTransaction,
            cur,
            format!(
                "producer {} {type_name} marker at offset {} (epoch {}) closes no open transaction",
                ev.producer_id, ev.base_offset, ev.producer_epoch
            ),
        )
        .evidence(json!({
            "marker": self.batch_json(cur),
            "previous": previous,
            "first_sight_of_producer": e.is_none(),
        }))
        .broker(text::BROKER_MARKER_NO_TXN)
    }

    pub(super) fn open_txn_finding(
        &self,
        pid: i64,
        e: &Entry,
        t: &OpenTxnState,
        ref_time_ms: i64,
        lso: Option<i64>,
    ) -> Finding {
        // Idle since its last write: the last batch's timestamp, or the broker's clock a
        // marker or LogAppendTime batch before it proves later (records stamped with event
        // times the application chose; the coordinator times a transaction from its own
        // clock, `TransactionStateManager.timedOutTransactions`, never from them).
        let last = e.last_timestamp(&self.markers);
        // A last write stamped past the reference time itself (its producer's clock ahead
        // of a reference on the broker's clock, or of `--now`) cannot be measured against
        // it: the broker's clock before it (`clock_floor`) is the one time that can.
        let floor = t.clock_floor().filter(|&f| f > last || last > ref_time_ms);
        let idle = ref_time_ms.saturating_sub(floor.unwrap_or(last));
        let hanging = idle > self.opts.hanging_after_ms;
        let first = t.first_batch.base_offset;
        // PartitionsWithLateTransactionsCount looks at the oldest open transaction only
        // (ProducerStateManager.hasLateTransaction, oldestTxnLastTimestamp).
        // It reads the records' timestamps as they are (its `lastTimestamp`).
        let late = last > 0
            && ref_time_ms.saturating_sub(last)
                > TRANSACTION_MAX_TIMEOUT_MS + LATE_TRANSACTION_BUFFER_MS
            && self.open_txns.first_offset() == Some(first);
        let cause = if t.zombie {
            Some(
                "opened by a zombie write after a higher-epoch marker (KAFKA-9144 pattern): the coordinator will never close it",
            )
        } else if t.late_after_marker && e.tv2 != Some(false) {
            // Under TV0/1 the next transaction reuses the epoch and continues the sequence:
            // the pattern says nothing there.
            Some(
                "opened by data at the epoch of the previous marker continuing the old sequence: possibly a late produce request after EndTxn (KAFKA-12671 pattern), or a TV0/1 producer that stopped mid-transaction",
            )
        } else {
            None
        };
        let kind = if hanging {
            Kind::HangingTransaction
        } else {
            Kind::OpenTransaction
        };
        let mut f = self
            .at(
                kind,
                &t.first(),
                format!(
                    "producer {pid} epoch {} has a transaction open since offset {first}, idle {} at the reference time{}{}",
                    e.epoch,
                    text::human_duration(idle),
                    match floor {
                        Some(f) if f >= last => format!(
                            " (since the broker's clock at its last write: its records are stamped {} earlier)",
                            text::human_duration(f - last)
                        ),
                        Some(_) => format!(
                            " (since the broker's clock before its last write: its records are stamped {} past the reference time, a producer's clock ahead)",
                            text::human_duration(last.saturating_sub(ref_time_ms))
                        ),
                        None => String::new(),
                    },
                    match (hanging, lso) {
                        (false, _) => String::new(),
                        // The LSO is the first offset of the earliest open transaction,
                        // clamped to the log start: only that one holds it.
                        (true, Some(l)) if l == first => format!("{LSO_CLAUSE}is stuck there"),
                        (true, Some(l)) => format!("{LSO_CLAUSE}is at {l}"),
                        (true, None) => String::new(),
                    }
                ),
            )
            .producer(pid, e.epoch)
            .evidence({
                let mut ev = json!({
                    "last_batch": self.batch_json(&e.last_ref(&self.markers)),
                    "producer_epoch": e.epoch,
                    "transaction_epoch": t.epoch,
                    "late_by_broker_metric": late,
                });
                // A transaction known only from the snapshot the replay was seeded from:
                // the verdict rests on that file.
                if let Some(name) = self.seeded_from(t.first_batch.segment) {
                    ev["from_snapshot"] = json!(name);
                }
                // What the coordinator confirmation and the triage read back.
                evidence::merge(
                    &mut ev,
                    &OpenTxnJoint {
                        first_batch: Some(self.batch_evidence(&t.first())),
                        last_marker: e
                            .last_marker(&self.markers)
                            .map(|m| self.batch_evidence(&m)),
                        reference_time_ms: Some(ref_time_ms),
                        last_stable_offset: lso,
                        coordinator_epoch: Some(self.coordinator_epoch_of(e)),
                        last_timestamp: Some(e.last_timestamp(&self.markers)),
                        idle_ms: Some(idle),
                        hanging_after_ms: Some(self.opts.hanging_after_ms),
                        root_cause: cause.map(str::to_string),
                        broker_clock_floor_ms: floor,
                        broker_clock_floor_from: None,
                    },
                );
                ev
            })
            .broker(if hanging {
                text::BROKER_HANGING
            } else {
                text::BROKER_OPEN
            });
        if hanging {
            f = f.remediation(format!(
                "confirm with `{}` (or __transaction_state), then abort it: {} (brokers before 3.0 cannot look a transaction up by its start offset: {})",
                text::find_hanging_command(&self.ctx.topic, self.ctx.partition),
                text::abort_command(&self.ctx.topic, self.ctx.partition, first),
                text::abort_command_before_3_0(
                    &self.ctx.topic,
                    self.ctx.partition,
                    pid,
                    e.epoch,
                    self.coordinator_epoch_of(e)
                )
            ));
        }
        f
    }
}

/// Why a TV2 marker was not bumped (`Replay::not_bumped`'s inputs).
#[derive(Debug, Clone, Copy)]
struct Unbumped {
    /// The highest epoch of the data it closes.
    data_epoch: i16,
    /// How long the transaction was idle before the marker (ms).
    idle_before: i64,
    /// Most likely an admin abort (idle past `transaction.max.timeout.ms`).
    admin_abort: bool,
    /// At epoch 32767, which the coordinator cannot bump.
    exhausted: bool,
    /// The second such marker in a row: the producer now inferred TV0/1.
    downgraded: bool,
}

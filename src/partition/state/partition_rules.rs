//! The partition rules of the replay: offsets and leader epochs (rules 5, 6, 8) and the
//! producer fields of each batch (rules 18–19).

use super::entry::BatchRef;
use super::{Replay, text};
use crate::finding::{Finding, Kind, Severity};
use crate::partition::event::BatchEvent;
use crate::read::format::Compression;
use serde_json::json;

impl Replay {
    // ----- partition rules (5, 6, 8) -------------------------------------------------

    pub(super) fn partition_rules(&mut self, ev: &BatchEvent, findings: &mut Vec<Finding>) {
        let cur = BatchRef::of(ev);
        if self.first_offset.is_none() {
            self.first_offset = Some(ev.base_offset);
        }
        // A legacy compressed wrapper carries its last offset only.
        let legacy_wrapper = ev.magic < 2 && ev.compression != Compression::None;
        if let Some(prev) = self.prev {
            let regress = if legacy_wrapper {
                ev.last_offset <= prev.last_offset
            } else {
                ev.base_offset <= prev.last_offset
            };
            if regress {
                let across = prev.segment != cur.segment;
                findings.push(
                    self.at(
                        Kind::OffsetRegression,
                        &cur,
                        format!(
                            "batch at offset {} does not start after the previous batch's last offset {}{}",
                            ev.base_offset,
                            prev.last_offset,
                            if across { " (across segments)" } else { "" }
                        ),
                    )
                    .evidence(json!({
                        "previous": self.batch_json(&prev),
                        "batch": self.batch_json(&cur),
                        "across_segments": across,
                        "overlap": prev.last_offset.saturating_sub(ev.base_offset).saturating_add(1),
                    }))
                    .broker(text::BROKER_OFFSET_REGRESSION)
                    .remediation(
                        "compare with the other replicas' copies of this partition; the overlapping batches are divergent history that truncation should have removed",
                    ),
                );
            } else if !legacy_wrapper
                && ev.base_offset > prev.last_offset.saturating_add(1)
                && !self.treated_as_compacted()
            {
                let missing = ev.base_offset - prev.last_offset - 1;
                self.history_broken = true;
                let sev = if self.ctx.compacted == Some(false) {
                    Severity::Warning
                } else {
                    Severity::Info
                };
                findings.push(
                    self.at(
                        Kind::OffsetGap,
                        &cur,
                        format!(
                            "{missing} offset(s) missing between {} and {}",
                            prev.last_offset, ev.base_offset
                        ),
                    )
                    .severity(sev)
                    .evidence(json!({
                        "previous": self.batch_json(&prev),
                        "batch": self.batch_json(&cur),
                        "missing_offsets": missing,
                        "across_segments": prev.segment != cur.segment,
                        "compacted": self.ctx.compacted,
                    }))
                    .broker(text::BROKER_OFFSET_GAP),
                );
            }
        }
        if self.prev.is_none_or(|p| ev.last_offset > p.last_offset) {
            self.prev = Some(cur);
            self.log_end = Some(ev.last_offset.saturating_add(1));
        }
        if ev.partition_leader_epoch >= 0 {
            if let Some(p) = self.prev_leader_epoch
                && ev.partition_leader_epoch < p.leader_epoch
            {
                findings.push(
                    self.at(
                        Kind::LeaderEpochRegression,
                        &cur,
                        format!(
                            "partitionLeaderEpoch went down from {} to {} at offset {}",
                            p.leader_epoch, ev.partition_leader_epoch, ev.base_offset
                        ),
                    )
                    .evidence(json!({
                        "previous": self.batch_json(&p),
                        "batch": self.batch_json(&cur),
                        "previous_leader_epoch": p.leader_epoch,
                        "leader_epoch": ev.partition_leader_epoch,
                    }))
                    .broker(text::BROKER_LEADER_EPOCH)
                    .remediation(
                        "compare with leader-epoch-checkpoint and the other replicas: batches written under the older leader epoch after a newer one are divergent history",
                    ),
                );
            }
            self.prev_leader_epoch = Some(cur);
        }
    }

    // ----- producer fields (rules 18–19) ---------------------------------------------

    pub(super) fn field_rules(&mut self, ev: &BatchEvent, findings: &mut Vec<Finding>) {
        if ev.magic < 2 {
            return;
        }
        let mut problems: Vec<&'static str> = Vec::new();
        let mut client = None;
        if ev.producer_id < 0 {
            if ev.producer_id != -1 {
                problems.push("producerId below -1");
            }
            // The group coordinator writes __consumer_offsets batches with producer id -1
            // and baseSequence 0 (seen in real broker data): internal topics are exempt.
            if ev.base_sequence != -1 && !self.ctx.internal {
                problems.push("baseSequence set without a producer id");
            }
            if ev.producer_epoch != -1 {
                problems.push("producerEpoch set without a producer id");
            }
            if ev.is_transactional {
                problems.push("transactional bit set without a producer id");
            }
            // Only the transaction coordinator writes COMMIT/ABORT markers, always for a
            // producer (`MemoryRecords.withEndTransactionMarker`); the leader refuses control
            // batches from clients. (KRaft's own control records have no producer id.)
            if matches!(
                ev.control,
                Some(crate::partition::event::ControlInfo::Marker { .. })
            ) {
                problems.push(
                    "COMMIT/ABORT marker with producer id -1 (recovery and consumers skip it)",
                );
            }
        } else {
            if ev.producer_epoch == -1 {
                problems.push("producerEpoch -1 with a producer id");
            } else if ev.producer_epoch < -1 {
                problems.push("producerEpoch below -1 (epoch overflow, KAFKA-19367 class)");
            }
            if !ev.is_control && ev.base_sequence < 0 && !self.ctx.internal {
                problems.push("baseSequence < 0 on a data batch with a producer id");
                client = Some(text::CLIENT_INVALID_RECORD);
            }
            if !ev.is_control && ev.is_transactional && ev.producer_epoch == i16::MAX {
                problems.push(
                    "transactional data at epoch 32767 (epoch exhaustion, KAFKA-20090 class)",
                );
            }
        }
        if problems.is_empty() {
            return;
        }
        // Producer id -1 with epoch/sequence 0 is what some non-idempotent clients send
        // (kafkajs, seen in real broker data); brokers ignore it. Reported once per
        // partition, as information.
        let benign = ev.producer_id == -1
            && !ev.is_transactional
            && problems
                .iter()
                .all(|p| p.ends_with("without a producer id"));
        if benign {
            if self.benign_fields_reported {
                return;
            }
            self.benign_fields_reported = true;
        }
        let r = BatchRef::of(ev);
        let mut f = self
            .at(
                Kind::InvalidProducerFields,
                &r,
                format!(
                    "batch at offset {}: {}",
                    ev.base_offset,
                    problems.join("; ")
                ),
            )
            .evidence(json!({
                "batch": self.batch_json(&r),
                "problems": problems,
                "transactional": ev.is_transactional,
                "control": ev.is_control,
            }))
            .broker(text::BROKER_FIELDS);
        if benign {
            f = f.severity(Severity::Info);
            f.message.push_str(
                " (a non-idempotent client filling the producer fields; later such batches of this partition are not reported)",
            );
        }
        if ev.producer_id < 0 {
            f.producer_epoch = None;
        }
        // Only a missing base sequence is refused on append (`LogValidator.validateBatch`);
        // the other field values are accepted: no client sees an error for them.
        f = f.client_error(client.unwrap_or(
            "none: the leader accepts these field values (LogValidator.validateBatch refuses only a data batch with a producer id and baseSequence < 0)",
        ));
        findings.push(f);
    }
}

impl Replay {
    /// An entry that is part of the log but carries nothing to replay (a legacy entry whose
    /// CRC holds but whose body does not parse: `LogSegment.recover` keeps it, so the
    /// broker's log end offset is past it): it moves the log end
    /// offset, and so the last stable offset when nothing is open, and nothing else.
    pub(crate) fn extend_log_end(&mut self, last_offset: i64) {
        let end = last_offset.saturating_add(1);
        if self.log_end.is_none_or(|e| end > e) {
            self.log_end = Some(end);
        }
    }
}

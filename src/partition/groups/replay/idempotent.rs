//! Offset commits in a non-transactional batch that carries a producer id (an idempotent
//! producer's batch, e.g. a client allowed to write `__consumer_offsets` directly).
//!
//! The two coordinators read such a batch differently. Kafka 4.x's load
//! (`CoordinatorLoaderImpl` → `GroupCoordinatorShard.replay` →
//! `OffsetMetadataManager.replay`) looks only at the batch's producer id: any id other
//! than -1 makes the commit a pending transactional one, held until a COMMIT/ABORT marker
//! of that producer id that never comes; `OffsetFetch` with `require_stable` (what the
//! Java consumer sends) is answered `UNSTABLE_OFFSET_COMMIT` for that partition for as
//! long as it is pending. A tombstone of the key clears it (`replay` drops the key's
//! pending offsets). Kafka 3.x's `GroupMetadataManager.loadGroupsAndOffsets` tests
//! `batch.isTransactional` and applies the commit. The replay keeps the 3.x reading (the
//! commit applied, as the record states) and says what 4.x does: with the broker's
//! release unknown, both readings stand.

use super::{Anomaly, AnomalyKind, Committed, Input, Replay};
use serde_json::json;

/// One stuck commit with the topic-partition it commits.
type Commit = (String, i32, Stuck);

/// How many of one producer's commits to a group a finding lists.
const LISTED: usize = 20;

/// One commit a 4.x load would hold pending: its producer id, where its record is, and
/// what it commits.
#[derive(Debug, Clone)]
pub(super) struct Stuck {
    producer_id: i64,
    record_offset: i64,
    position: u64,
    segment: String,
    offset: i64,
}

impl Replay {
    /// An offset commit of `group` in an idempotent batch of `pid` (`c`, read at `at`).
    pub(super) fn idempotent_commit(
        &mut self,
        at: &Input<'_>,
        group: &str,
        pid: i64,
        c: &Committed,
    ) {
        let stuck = Stuck {
            producer_id: pid,
            record_offset: at.offset,
            position: at.position,
            segment: at.segment.to_string(),
            offset: c.offset,
        };
        let key = (group.to_string(), c.topic.clone(), c.partition);
        self.idempotent.insert(key, stuck);
    }

    /// A tombstone of `group`'s offset of `topic`-`partition`: what a 4.x load held
    /// pending for it is dropped.
    pub(super) fn idempotent_tombstone(&mut self, group: &str, topic: &str, partition: i32) {
        self.idempotent
            .remove(&(group.to_string(), topic.to_string(), partition));
    }

    /// A COMMIT/ABORT marker of `pid`: a 4.x load resolves its pending commits.
    pub(super) fn idempotent_marker(&mut self, pid: i64) {
        self.idempotent.retain(|_, s| s.producer_id != pid);
    }

    /// At the end of the log: one anomaly per group and producer id whose commits a 4.x
    /// load still holds pending, at its first such record.
    pub(super) fn idempotent_anomalies(&mut self) {
        let mut by: std::collections::BTreeMap<(String, i64), Vec<Commit>> = Default::default();
        for ((g, t, p), s) in std::mem::take(&mut self.idempotent) {
            by.entry((g, s.producer_id)).or_default().push((t, p, s));
        }
        let mut found: Vec<Anomaly> = Vec::new();
        for ((group, pid), mut commits) in by {
            commits.sort_by_key(|(_, _, s)| s.record_offset);
            let first = &commits[0].2;
            let listed: Vec<_> = (commits.iter().take(LISTED))
                .map(|(t, p, s)| {
                    json!({"topic": t, "partition": p, "offset": s.offset, "record_offset": s.record_offset})
                })
                .collect();
            let n = commits.len();
            let message = format!(
                "group {group:?}: {n} offset commit(s) (first {}-{} at record offset {}) in non-transactional batches of producer id {pid} (an idempotent producer's): Kafka 4.x's load holds them pending as transactional commits whose marker never comes, and answers the group's stable offset fetches for those partitions UNSTABLE_OFFSET_COMMIT; Kafka 3.x's applies them",
                commits[0].0, commits[0].1, first.record_offset
            );
            found.push(Anomaly {
                kind: AnomalyKind::IdempotentOffsetCommit,
                group: Some(group.clone()),
                offset: first.record_offset,
                position: first.position,
                segment: first.segment.clone(),
                message,
                evidence: json!({
                    "group": group,
                    "producer_id": pid,
                    "pending_offsets": listed,
                    "pending_count": n,
                }),
                load_fails: false,
                severity: None,
                key_version: None,
            });
        }
        found.sort_by_key(|a| a.offset);
        self.anomalies.extend(found);
    }
}

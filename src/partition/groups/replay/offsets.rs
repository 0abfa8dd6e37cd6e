//! Offset commits in the group replay (`OffsetMetadataManager.replay` and
//! `replayEndTransactionMarker`): committed at once without a producer id, pending under a
//! transactional batch's producer id until its marker.

use super::super::model::{Committed, Group, GroupType};
use super::{Input, Replay};
use crate::read::format::checkpoint::encode_uuid;
use crate::read::format::groups::{StructVal, Val};

impl Replay {
    /// A COMMIT/ABORT marker of `producer_id`: its pending offset commits are applied (each
    /// only over an older record) or dropped (`OffsetMetadataManager.replayEndTransactionMarker`).
    pub fn marker(&mut self, producer_id: i64, commit: bool) {
        self.idempotent_marker(producer_id);
        // An aborted value never becomes live (the cleaner drops it; the load ignores it).
        for (g, k, t, o) in self.pending_keys.remove(&producer_id).unwrap_or_default() {
            if commit {
                self.live_keys.entry(g).or_default().insert(k, (t, o));
            }
        }
        let Some(pending) = self.pending.remove(&producer_id) else {
            return;
        };
        if commit {
            // A pending offset applies only when its record is newer than the offset the
            // group holds: a regular commit written after it wins, whatever order the
            // marker comes in.
            for (g, c) in pending {
                let offsets = self.offsets.entry(g).or_default();
                let key = (c.topic.clone(), c.partition);
                if offsets
                    .get(&key)
                    .is_none_or(|held| c.record_offset > held.record_offset)
                {
                    offsets.insert(key, c);
                }
            }
        }
    }

    pub(super) fn offset_commit(
        &mut self,
        at: &Input<'_>,
        group: &str,
        k: &StructVal<'_>,
        v: Option<&StructVal<'_>>,
    ) {
        let topic = k.str("topic").unwrap_or_default();
        let partition = k.int("partition") as i32;
        let Some(v) = v else {
            if let Some(m) = self.offsets.get_mut(group) {
                m.remove(&(topic.clone(), partition));
            }
            for p in self.pending.values_mut() {
                p.retain(|(g, c)| !(g == group && c.topic == topic && c.partition == partition));
            }
            self.idempotent_tombstone(group, &topic, partition);
            return;
        };
        if !self.groups.contains_key(group) {
            // OffsetMetadataManager.replay: a "simple" classic group holds the offsets.
            let mut g = Group::new(group, GroupType::Classic, at.offset);
            g.simple = true;
            self.groups.insert(group.to_string(), g);
        }
        let c = Committed {
            topic,
            partition,
            offset: v.int("offset"),
            leader_epoch: v.int("leaderEpoch") as i32,
            metadata: v.str("metadata").unwrap_or_default(),
            commit_timestamp: v.int("commitTimestamp"),
            record_offset: at.offset,
            // `Uuid.ZERO_UUID` is none (`OffsetMetadataManager.isMismatchedTopicId`).
            topic_id: match v.get("topicId") {
                Some(Val::Uuid(u)) if u.iter().any(|b| *b != 0) => {
                    <&[u8; 16]>::try_from(*u).ok().map(encode_uuid)
                }
                _ => None,
            },
            expire_timestamp: v
                .get("expireTimestamp")
                .map(|t| t.int())
                .filter(|&t| t != -1),
        };
        if let (None, Some(pid)) = (at.producer_id, at.idempotent_producer_id) {
            self.idempotent_commit(at, group, pid, &c);
        }
        match at.producer_id {
            Some(pid) => {
                // One pending value per key and producer (`pendingTransactionalOffsets`
                // maps group → topic-partition → offset): a later commit of the key in the
                // same transaction replaces the earlier one.
                let p = self.pending.entry(pid).or_default();
                p.retain(|(g, o)| {
                    !(g == group && o.topic == c.topic && o.partition == c.partition)
                });
                p.push((group.to_string(), c));
            }
            None => {
                self.offsets
                    .entry(group.to_string())
                    .or_default()
                    .insert((c.topic.clone(), c.partition), c);
            }
        }
    }

    /// Transactional offset commits whose transaction has no COMMIT/ABORT marker (yet), as
    /// `(producer id, group, commit)`: the coordinator holds them pending.
    pub fn pending_commits(&self) -> impl Iterator<Item = (i64, &str, &Committed)> {
        self.pending
            .iter()
            .flat_map(|(pid, v)| v.iter().map(move |(g, c)| (*pid, g.as_str(), c)))
    }
}

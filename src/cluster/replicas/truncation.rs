//! Where the replica behind in leader epochs truncates when it follows the other
//! (`AbstractFetcherThread.getOffsetTruncationState` over the lineages each broker answers
//! from), and what a divergence that truncation removes costs.

use super::{Divergence, ScannedCopy};
use crate::cluster::report::ScanReport;
use crate::discover::layout::Inventory;
use crate::finding::Finding;
use serde_json::json;

/// A divergence the replica behind in epochs truncates away when it follows: what that
/// costs depends on its checkpointed high watermark. Below it, acknowledged records the
/// other copy holds others in place of (error: data lost, as an unclean election loses
/// it); at or above it, or without a checkpoint, a tail whose acknowledgement the periodic
/// checkpoint cannot tell (a warning that says the truncation removes it).
pub(super) fn with_truncation(f: Finding, d: &Divergence, t: &Truncation<'_>) -> Finding {
    if t.raft {
        return with_raft_truncation(f, d, t);
    }
    with_acknowledged(f, d, t)
}

/// [`with_truncation`] of data partitions' copies, by the behind copy's high watermark.
fn with_acknowledged(mut f: Finding, d: &Divergence, t: &Truncation<'_>) -> Finding {
    // The checkpoint is a lower bound of the high watermark (written periodically): below
    // it the records were acknowledged; at or above it, it cannot say.
    let acknowledged = t
        .high_watermark
        .and_then(|h| (h > d.first_offset).then_some(true));
    let x = d.first_offset;
    f.message.push_str(&format!(
        "; {} is behind in leader epochs: following the other it truncates to offset {} (AbstractFetcherThread.getOffsetTruncationState) and fetches the other's records{}",
        t.path,
        t.to_offset,
        match (acknowledged, t.high_watermark) {
            (Some(true), Some(h)) => format!(": the records it acknowledged at [{x}, {h}) (below its checkpointed high watermark) are replaced — acknowledged data lost"),
            (_, Some(h)) => format!(", a tail from at or above its checkpointed high watermark {h}: the checkpoint is written periodically (a lower bound), so whether those records were acknowledged is not known"),
            _ => ", whether they were acknowledged is unknown (no high watermark checkpoint)".to_string(),
        }
    ));
    truncation_evidence(&mut f, t, json!(acknowledged));
    f.broker_behaviour = format!(
        "the replica behind in leader epochs truncates to offset {} when it follows (AbstractFetcherThread.getOffsetTruncationState) and the divergence disappears",
        t.to_offset
    );
    match acknowledged {
        None => {
            f.remediation = Some(
                "nothing to do if the election before the newer epoch was clean (its records were then never acknowledged); klogscan history shows the elections when the KRaft metadata log is among the inputs"
                    .into(),
            );
        }
        Some(_) => {
            f.severity = crate::finding::Severity::Error;
            f.remediation = Some(format!(
                "copy {}'s directory before it follows (it holds the only copy of offsets {x}..{}); look for the unclean election in the leadership history (klogscan history)",
                t.path,
                t.high_watermark
                    .unwrap_or(x.saturating_add(1))
                    .saturating_sub(1)
            ));
        }
    }
    f
}

/// [`with_truncation`] for copies of the KRaft metadata log: a voter grants its vote only to
/// a candidate whose log is at least as up to date as its own (`KafkaRaftClient.
/// handleVoteRequest`, `QuorumState.canGrantVote`), and a record is committed once a
/// majority holds it, so every committed record is in every later leader's log: what the
/// copy behind in epochs holds from the divergence on, and the newer leader's log does not,
/// was never committed. On its next fetch the leader answers with the diverging epoch and
/// the copy truncates to that epoch's end (`KafkaRaftClient.handleFetchResponse` →
/// `truncateToEndOffset`; `KafkaRaftClientTest.testFollowerLogReconciliation`). There is no
/// unclean election in the quorum. Info: the normal remains of a failover.
///
/// Unless the copy behind holds a snapshot past the divergence: a snapshot is never taken
/// past the high watermark (`KafkaMetadataLog.createNewSnapshot`), so the records it holds
/// from the divergence to the snapshot's end were committed, and a newer leader without
/// them means committed metadata was lost (a voter that lost its log or its `quorum-state`
/// and voted again); running, the copy would refuse that truncation
/// (`KafkaRaftClient.handleFetchResponse`, `KafkaMetadataLogTest.testTruncateBelowHighWatermark`).
fn with_raft_truncation(mut f: Finding, d: &Divergence, t: &Truncation<'_>) -> Finding {
    if let Some(end) = t.snapshot_end.filter(|&e| e > d.first_offset) {
        f.message.push_str(&format!(
            "; {} is behind in leader epochs, but its snapshot ends at offset {end}, past the divergence at {}: a KRaft snapshot is never taken past the high watermark (KafkaMetadataLog.createNewSnapshot), so its records at [{}, {end}) were committed and the newer leader's log lacks them — committed metadata lost (a voter that lost its log or quorum-state and voted again); running, this copy refuses to truncate below its high watermark (KafkaRaftClient.handleFetchResponse)",
            t.path, d.first_offset, d.first_offset
        ));
        truncation_evidence(&mut f, t, json!(true));
        if let Some(m) = f
            .evidence
            .get_mut("truncation")
            .and_then(|v| v.as_object_mut())
        {
            m.insert("snapshot_end_offset".into(), json!(end));
        }
        f.severity = crate::finding::Severity::Error;
        f.broker_behaviour = format!(
            "the node behind in leader epochs refuses to truncate below its high watermark when it fetches from the quorum's leader (KafkaRaftClient.handleFetchResponse throws): the two histories of the metadata below offset {end} disagree"
        );
        f.remediation = Some(format!(
            "copy {}'s directory before the node is restarted (it holds the committed records at [{}, {end}) the newer leader lacks); find in the leadership history (klogscan history) which voter lost its log or quorum-state",
            t.path, d.first_offset
        ));
        return f;
    }
    f.message.push_str(&format!(
        "; {} is behind in leader epochs: its records from offset {} were never committed (a KRaft voter votes only for a candidate whose log is at least as up to date as its own, KafkaRaftClient.handleVoteRequest, so every committed record is in the newer leader's log), and on its next fetch it truncates to offset {} (KafkaRaftClient.handleFetchResponse → truncateToEndOffset)",
        t.path, d.first_offset, t.to_offset
    ));
    truncation_evidence(&mut f, t, json!(false));
    f.severity = crate::finding::Severity::Info;
    f.broker_behaviour = format!(
        "the node behind in leader epochs truncates its metadata log to offset {} on its next fetch from the quorum's leader (KafkaRaftClient.handleFetchResponse) and the divergence disappears",
        t.to_offset
    );
    f.remediation = None;
    f
}

/// `evidence.truncation` of `f`: the replica behind, where it truncates, its checkpointed
/// high watermark and whether the records it loses were `acknowledged`.
fn truncation_evidence(f: &mut Finding, t: &Truncation<'_>, acknowledged: serde_json::Value) {
    if let serde_json::Value::Object(m) = &mut f.evidence {
        m.insert(
            "truncation".into(),
            json!({"replica": t.path, "to_offset": t.to_offset, "high_watermark": t.high_watermark, "acknowledged": acknowledged}),
        );
    }
}

/// `LeaderEpochFileCache.endOffsetFor` on a lineage `(epoch, start)` in epoch order with log
/// end `leo` ([`crate::cluster::consumers::end_offset_in`]), as
/// `UnifiedLog.endOffsetForEpoch` gives it: `None` when the offset is undefined (an
/// empty lineage, an epoch above every entry).
fn end_offset_for(l: &[(i32, i64)], e: i32, leo: i64) -> Option<(i32, i64)> {
    let a = crate::cluster::consumers::end_offset_in(l.iter().copied(), e, leo);
    (a.end_offset != crate::cluster::consumers::UNDEFINED_EPOCH_OFFSET)
        .then_some((a.epoch, a.end_offset))
}

/// Where a replica with lineage `behind` (log end `behind_end`) truncates when it follows
/// a leader with lineage `ahead` (log end `ahead_end`), as
/// `AbstractFetcherThread.getOffsetTruncationState` gets there: the leader answers the
/// follower's latest epoch with its floor epoch and that epoch's end; a follower that does
/// not know that epoch truncates to its own end for the epoch below it and asks again,
/// until the two agree on an epoch (then the smaller of the two ends); a follower with no
/// epoch at or below the answer takes the leader's end.
pub(crate) fn truncation_point(
    behind: &[(i32, i64)],
    behind_end: i64,
    ahead: &[(i32, i64)],
    ahead_end: i64,
) -> Option<i64> {
    let mut lineage: Vec<(i32, i64)> = behind.to_vec();
    let mut end = behind_end;
    // Each round drops at least one entry of the follower's lineage: bounded.
    for _ in 0..=behind.len() {
        let &(latest, _) = lineage.last()?;
        let (epoch, leader_end) = end_offset_for(ahead, latest, ahead_end)?;
        match end_offset_for(&lineage, epoch, end) {
            Some((own_epoch, own_end)) if own_epoch == epoch => {
                return Some(own_end.min(leader_end).min(end));
            }
            Some((_, own_end)) => {
                end = own_end.min(end);
                lineage.retain(|e| e.1 < end);
                if lineage.is_empty() {
                    return Some(end);
                }
            }
            None => return Some(leader_end.min(end)),
        }
    }
    Some(end)
}

/// A divergence the replica behind in leader epochs removes when it follows: `(its
/// index, where it truncates)`, when the divergence starts at or above that point.
/// Each copy's lineage is the one its broker answers from
/// ([`crate::cluster::epoch_file::answering_lineage`]: an epoch assigned at election, before
/// any batch of it, counts).
pub(super) fn pending_truncation(
    report: &ScanReport,
    [la, lb]: &[Lineage; 2],
    d: &Divergence,
) -> Option<(usize, i64)> {
    let latest = |l: &[(i32, i64)]| l.last().map(|e| e.0);
    let (behind, ahead) = match latest(&la.1)?.cmp(&latest(&lb.1)?) {
        std::cmp::Ordering::Less => (la, lb),
        std::cmp::Ordering::Greater => (lb, la),
        std::cmp::Ordering::Equal => return None,
    };
    let t = truncation_point(
        &behind.1,
        report.partitions[behind.0].log_end_offset?,
        &ahead.1,
        report.partitions[ahead.0].log_end_offset?,
    )?;
    (t <= d.first_offset).then_some((behind.0, t))
}

/// A copy's partition index and the lineage its broker answers from.
pub(super) type Lineage = (usize, Vec<(i32, i64)>);

/// The lineages of the two copies of a pair, each read once for both
/// [`pending_truncation`] and [`without_epochs`].
pub(super) fn lineages(
    report: &ScanReport,
    inv: &Inventory,
    (a, b): (ScannedCopy<'_>, ScannedCopy<'_>),
) -> [Lineage; 2] {
    let lineage = |(k, dir): ScannedCopy<'_>| {
        let r = &report.partitions[k];
        let l = crate::cluster::epoch_file::answering_lineage(inv, Some(dir), r);
        (k, from_log_start(l, r.log_start_offset))
    };
    [lineage(a), lineage(b)]
}

/// Lineage `l` as the broker's cache holds it above log start `start`: the entries starting
/// at or below it are dropped and the last of them kept, moved to `start`
/// (`LeaderEpochFileCache.truncateFromStartAsyncFlush`, run when the log start moves —
/// `UnifiedLog.maybeIncrementLogStartOffset`, retention and `DeleteRecords` — and again at
/// load from the `log-start-offset-checkpoint`, `LogLoader.load`). A leader whose log start
/// moved past an epoch answers that epoch as below its oldest entry
/// (`PartitionTest.testLastFetchedOffsetValidation`: epoch 2 ends at 5 once the log starts
/// at 5, not where the batches left at 0..4 say).
fn from_log_start(l: Vec<(i32, i64)>, start: Option<i64>) -> Vec<(i32, i64)> {
    let Some(s) = start else { return l };
    let k = l.iter().take_while(|e| e.1 <= s).count();
    if k == 0 {
        return l;
    }
    let mut out = Vec::with_capacity(l.len() - k + 1);
    out.push((l[k - 1].0, s));
    out.extend_from_slice(&l[k..]);
    out
}

/// What the replica behind in epochs does with the divergence ([`pending_truncation`]).
pub(super) struct Truncation<'a> {
    pub(super) path: &'a str,
    pub(super) to_offset: i64,
    pub(super) high_watermark: Option<i64>,
    /// The copies are the KRaft metadata log's (the quorum's own replication).
    pub(super) raft: bool,
    /// The metadata log's: the end offset of the newest snapshot the copy behind holds.
    pub(super) snapshot_end: Option<i64>,
}

/// Copies with no leader epoch in either lineage (message format before v2: appending
/// such a batch clears the cache, `UnifiedLog.append`): a follower then truncates to its
/// high watermark when it starts following (`AbstractFetcherThread.truncateToHighWatermark`;
/// `AbstractFetcherThreadTest.testTruncateToHighWatermarkIfLeaderEpochInfoNotAvailable`), not
/// to an epoch boundary. Their checkpointed high watermarks, when neither copy has an epoch.
pub(super) fn without_epochs(
    report: &ScanReport,
    [la, lb]: &[Lineage; 2],
) -> Option<(Option<i64>, Option<i64>)> {
    (la.1.is_empty() && lb.1.is_empty()).then(|| {
        let hw = |k: usize| report.partitions[k].high_watermark;
        (hw(la.0), hw(lb.0))
    })
}

/// Whether exactly one of the two copies has leader epochs (the other's batches are all
/// before message format v2: its cache is empty, `UnifiedLog.append` clears it on such a
/// batch).
pub(super) fn epochs_in_one_copy(la: &Lineage, lb: &Lineage) -> bool {
    la.1.is_empty() != lb.1.is_empty()
}

/// What a follower does with divergence `d` when only one copy has leader epochs: the two
/// readings the files cannot tell apart. The copy without epochs, following, truncates to
/// its high watermark (`AbstractFetcherThread.truncateToHighWatermark`). The copy with
/// epochs, following a leader whose cache is empty (`UnifiedLog.endOffsetForEpoch` answers
/// nothing), truncates to its initial fetch offset, its high watermark, before truncation on
/// fetch (inter-broker protocol below 2.7: `getOffsetTruncationState` on an undefined answer,
/// `ReplicaFetcherThreadTest.shouldTruncateToInitialFetchOffsetIfLeaderReturnsUndefinedOffset`);
/// with it, the leader fails its last fetched epoch as out of range (`Partition.readRecords`)
/// and it truncates only to the leader's log end, and only when its own is past it
/// (`fetchOffsetAndTruncate`). So nothing is said of whether the divergence survives.
pub(super) fn with_epochs_in_one_copy(mut f: Finding) -> Finding {
    f.broker_behaviour = "only one copy has leader epochs (the other's batches are before message format v2): a follower without epochs truncates to its high watermark (AbstractFetcherThread.truncateToHighWatermark); a follower with epochs, following a leader without an epoch cache, truncates to its high watermark before truncation on fetch (inter-broker protocol below 2.7) and otherwise only to the leader's log end when its own is past it (Partition.readRecords answers out of range, fetchOffsetAndTruncate): whether the divergence survives depends on which copy follows and on the protocol, which the files do not tell".into();
    f
}

/// What the high-watermark truncation of copies without epochs ([`without_epochs`]) does
/// with divergence `d`: with both checkpoints above its first offset it survives whichever
/// copy follows (the checkpoint is a lower bound: the true high watermark is no lower — the
/// KIP-101 failure); with both at or below it, the copy that follows drops its records from
/// there, unless its true high watermark had moved past them since the checkpoint (after an
/// unclean election it can have); otherwise it depends on which copy follows.
pub(super) fn with_high_watermarks(
    mut f: Finding,
    d: &Divergence,
    (ha, hb): (Option<i64>, Option<i64>),
) -> Finding {
    let x = d.first_offset;
    let (case, text) = match (ha, hb) {
        (Some(a), Some(b)) if x < a.min(b) => (
            "survives",
            format!(
                "both copies' checkpointed high watermarks ({a}, {b}; the true ones are no lower) lie above offset {x}: truncating to it keeps the divergence whichever copy follows — it survives (the failure leader epochs, KIP-101, were made for)"
            ),
        ),
        (Some(a), Some(b)) if x >= a.max(b) => (
            "removed_unless_past",
            format!(
                "both copies' checkpointed high watermarks ({a}, {b}) are at or below offset {x}: the copy that follows drops its records from there and fetches the other's — unless its true high watermark had moved past {x} since the checkpoint (a lower bound, written periodically; after an unclean election it can have), when the divergence survives"
            ),
        ),
        _ => (
            "depends_on_follower",
            format!(
                "whether the divergence survives depends on which copy follows (checkpointed high watermarks {}, {}): a follower whose high watermark lies above offset {x} keeps it",
                show(ha),
                show(hb)
            ),
        ),
    };
    f.broker_behaviour = format!(
        "neither copy has leader epochs (message format before v2): a follower truncates to its high watermark when it starts following (AbstractFetcherThread.truncateToHighWatermark) and fetches from there; {text}"
    );
    if let serde_json::Value::Object(m) = &mut f.evidence {
        m.insert(
            "high_watermark_truncation".into(),
            json!({"high_watermarks": [ha, hb], "case": case}),
        );
    }
    f
}

fn show(h: Option<i64>) -> String {
    h.map_or_else(|| "unknown".into(), |h| h.to_string())
}

#[cfg(test)]
mod truncation_tests {
    use super::{from_log_start, truncation_point};

    /// `LeaderEpochFileCacheTest.shouldUpdateOffsetBetweenEpochBoundariesOnClearEarliest` and
    /// `shouldRetainLatestEpochOnClearAllEarliestAndUpdateItsOffset`, as the lineage a copy
    /// answers from: the last entry at or below the log start moves to it.
    #[test]
    fn the_log_start_moves_the_oldest_entry_up() {
        let l = vec![(2, 6), (3, 8), (4, 11)];
        assert_eq!(from_log_start(l.clone(), Some(9)), [(3, 9), (4, 11)]);
        assert_eq!(from_log_start(l.clone(), Some(8)), [(3, 8), (4, 11)]);
        assert_eq!(from_log_start(l.clone(), Some(5)), l);
        assert_eq!(from_log_start(l.clone(), Some(15)), [(4, 15)]);
        assert_eq!(from_log_start(l.clone(), None), l);
    }

    /// `getOffsetTruncationState` until the epochs agree: the follower [1@0, 3@30, 5@60]
    /// against the leader [1@0, 2@20, 4@50, 6@75] (log end 80) truncates to 60 (epoch 4
    /// unknown to it), then to 30 (epoch 2 unknown), then to 20 (epoch 1 agreed, ending at
    /// 20 on the leader) — not to 60 after one round.
    #[test]
    fn the_follower_asks_again_until_the_epochs_agree() {
        let follower = [(1, 0), (3, 30), (5, 60)];
        let leader = [(1, 0), (2, 20), (4, 50), (6, 75)];
        assert_eq!(truncation_point(&follower, 70, &leader, 80), Some(20));
        // One round when the leader knows the follower's latest epoch.
        assert_eq!(
            truncation_point(
                &[(1, 0), (4, 20), (5, 60)],
                70,
                &[(1, 0), (4, 20), (6, 40)],
                90
            ),
            Some(40)
        );
        // A follower behind (a prefix of the leader's lineage) keeps its log.
        assert_eq!(
            truncation_point(&[(1, 0)], 15, &[(1, 0), (2, 20)], 30),
            Some(15)
        );
    }

    /// A leader whose cache ends below the follower's latest epoch answers undefined
    /// (`endOffsetFor`: no higher entry; Kafka's comment: never hit, the leader's latest
    /// epoch is the largest), and the follower would fall back to its fetch offset, which
    /// the files do not hold: no truncation point is drawn.
    #[test]
    fn a_leader_below_the_followers_latest_epoch_gives_no_answer() {
        assert_eq!(
            truncation_point(&[(1, 0), (5, 60)], 70, &[(1, 0), (4, 50)], 80),
            None
        );
    }

    /// `LeaderEpochFileCacheTest.shouldReturnFirstEpochIfRequestedEpochLessThanFirstEpoch`:
    /// below a cache's oldest entry `endOffsetFor` answers the requested epoch and the oldest
    /// entry's start, so the epochs agree at once and the follower truncates to the smaller
    /// end. A follower whose retention removed its early epochs ([3@100, 5@130], log end
    /// 150) asked by a leader elected at epoch 6 from 120 over epoch 2 ([2@0, 6@120]):
    /// the leader answers epoch 2 ending at 120; below the follower's oldest, the follower
    /// answers (2, 100): truncation to 100, not to the leader's 120.
    #[test]
    fn below_the_oldest_epoch_the_first_start_is_the_answer() {
        assert_eq!(
            truncation_point(&[(3, 100), (5, 130)], 150, &[(2, 0), (6, 120)], 200),
            Some(100)
        );
        // The leader's side: the follower's latest epoch (1) is below the leader's oldest
        // (4@50): the leader answers (1, 50), the follower's own epoch 1 ends at its log
        // end (40), the smaller of the two.
        assert_eq!(
            truncation_point(&[(1, 0)], 40, &[(4, 50), (6, 90)], 120),
            Some(40)
        );
        // ... and at 50 when the follower's log runs past the leader's first start.
        assert_eq!(
            truncation_point(&[(1, 0)], 70, &[(4, 50), (6, 90)], 120),
            Some(50)
        );
        // Not below the oldest: a follower knowing the leader's floor epoch keeps the old
        // answer (its own end for that epoch, then the smaller).
        assert_eq!(
            truncation_point(&[(3, 100), (5, 130)], 150, &[(3, 100), (6, 120)], 200),
            Some(120)
        );
    }
}

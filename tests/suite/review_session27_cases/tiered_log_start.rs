//! `remote_copy_unfinished` made info when the orphan lies wholly below the log start and
//! the leader's next expiration run deletes it by the log-start rule
//! (`tiering::checks::below_log_start`, fed by `analyse` with the replica of the highest
//! checkpointed log start).
//!
//! Kafka (`RemoteLogManager.RLMExpirationTask.cleanupExpiredRemoteLogSegments`, trunk
//! 2024-10): the run belongs to the partition's leader and uses *its* `log.logStartOffset()`
//! and *its* epoch cache (`buildFilteredLeaderEpochMap`); it walks the cache's epochs from the
//! first, each epoch's segments sorted by start offset (`RemoteLogLeaderEpochState.
//! listAllRemoteLogSegments`, unfinished copies included), deletes those
//! `isSegmentBreachByLogStartOffset` flags (every segment epoch ≤ the cache's first epoch and
//! end offset < log start) and stops at the first valid segment no rule breaches.
//!
//! History (`kafka_quiet_tiered_cases::history`): local segments [0,19] [20,39] epoch 0,
//! [40,59] epoch 1, [60,79] epoch 1 then 2 from 70, [80,99] epoch 2.

use crate::kafka_quiet_tiered_cases::{check, history, lines};
use klogscan::finding::{Finding, Kind, Severity};
use klogscan::results::ScanReport;
use klogscan::testkit::remote_log::TieredLog;

/// The plain scan's `remote_copy_unfinished` findings.
fn orphans(r: &ScanReport) -> Vec<&Finding> {
    let v: Vec<&Finding> = (r.findings.iter())
        .filter(|f| f.kind == Kind::RemoteCopyUnfinished)
        .collect();
    assert!(!v.is_empty(), "{:#?}", lines(&r.findings));
    v
}

/// Broker 0 copied [0,19] and [20,39], started [40,59] and crashed; broker 1 led, copied
/// [40,59] again and [60,79], then its expiration deleted [0,19], [20,39] and its redo of
/// [40,59] (log start 60). `tail` may change the log's last steps before it is written.
fn orphan_below_60(tail: impl FnOnce(&mut TieredLog)) -> TieredLog {
    let mut t = history();
    let a = t.copy(0);
    let b = t.copy(1);
    t.copy_started(2);
    t.broker(1);
    let redo = t.copy(2);
    t.copy(3);
    t.delete(a);
    t.delete(b);
    t.delete(redo);
    t.local_from(4);
    t.log_start(60);
    tail(&mut t);
    t
}

/// The replicas disagree on the log start: broker 1, which ran the expiration, checkpointed
/// 60; broker 2 checkpointed 40 — it had not fetched the new log start when broker 1 went
/// down and it took the lead (a follower takes the leader's log start only from fetch
/// responses, `ReplicaFetcherThread.processPartitionData` → `maybeIncrementLogStartOffset`,
/// and a leader never takes one from a former leader: the log start only rises). Broker 2's
/// run uses 40: the orphan [40,59] does not breach it (59 ≥ 40), it is valid in broker 2's
/// lineage, and only time or size retention can delete it — no log-start deletion is due.
///
/// klogscan holds the orphan against the highest log start of the replicas (60), on the
/// reasoning that "a follower takes its log start from the leader's, so the leader's is at
/// least that" — false once the leader changed — and reports info: "the leader's next
/// expiration run deletes it by the log-start rule". Without knowing the leader, replicas
/// that disagree leave the claim unproven: the warning (with its remediation) is the answer
/// that holds whichever broker leads.
#[test]
fn replicas_disagreeing_on_the_log_start_leave_the_orphan_a_warning() {
    let one = orphan_below_60(|_| {});
    let two = orphan_below_60(|t| {
        t.broker(2);
        t.log_start(40);
    });
    let c = check(vec![one, two], |_| {});
    for f in orphans(&c.scan) {
        assert_eq!(f.severity, Severity::Warning, "{}", f.message);
        assert!(
            f.evidence.get("below_log_start").is_none(),
            "{}",
            f.evidence
        );
    }
}

/// Control: both replicas checkpointed 60 — the leader's run, whichever broker leads,
/// deletes the orphan by the log-start rule: info, `below_log_start` 60.
#[test]
fn replicas_agreeing_on_the_log_start_make_the_orphan_info() {
    let one = orphan_below_60(|_| {});
    let two = orphan_below_60(|t| {
        t.broker(2);
    });
    let c = check(vec![one, two], |_| {});
    for f in orphans(&c.scan) {
        assert_eq!(f.severity, Severity::Info, "{}", f.message);
        assert_eq!(f.evidence["below_log_start"], 60, "{}", f.evidence);
    }
}

/// An orphan whose epochs straddle: broker 0's copy of its own segment [40,79] (epoch 1 from
/// 40, 2 from 70), then broker 1's finished copies of [40,59] and [60,79], all three finished
/// ones deleted by its expiration with [0,19] and [20,39]: log start 80, the cache truncated
/// there starts with epoch 2. Every epoch of the orphan (1, 2) is ≤ 2, it ends at 79 < 80 and
/// it is listed under epoch 2 (a COPY_SEGMENT_STARTED segment is listed under each of its
/// epochs): `isSegmentBreachByLogStartOffset` deletes it on the run walking epoch 2 — info.
#[test]
fn an_orphan_straddling_two_epochs_below_the_log_start_is_info() {
    let mut t = history();
    let a = t.copy(0);
    let b = t.copy(1);
    let mut seg = t.remote_segment(2);
    seg.end_offset = 79;
    seg.leader_epochs = vec![(1, 40), (2, 70)];
    t.copy_started_as(seg, 2);
    t.broker(1);
    let r2 = t.copy(2);
    let r3 = t.copy(3);
    for r in [a, b, r2, r3] {
        t.delete(r);
    }
    t.local_from(4);
    t.log_start(80);
    let c = check(vec![t], |_| {});
    for f in orphans(&c.scan) {
        assert_eq!(f.severity, Severity::Info, "{}", f.message);
        assert_eq!(f.evidence["below_log_start"], 80, "{}", f.evidence);
    }
}

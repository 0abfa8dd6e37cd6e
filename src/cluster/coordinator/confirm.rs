//! Confirms (or refutes) the scan's open/hanging transactions against the coordinator's
//! view, the way `kafka-transactions.sh find-hanging` does
//! (`TransactionsCommand.FindHangingTransactionsCommand`; rule 20).
//!
//! [`CoordinatorView::load_clusters_from`] replays every `__transaction_state-N` partition
//! of the inventory (whatever `--topic`/`--partition` selected: the coordinator's log is
//! evidence for every data partition): per transactional id, the latest value in offset
//! order; a null value (tombstone) marks the id removed. It indexes the latest values by
//! producer id, previous producer id and next producer id. The records come from the scan's
//! one walk of each partition ([`crate::partition::walked`]); a partition outside the
//! scan's selection, or whose records the walk did not keep, is read again once, streaming,
//! into the model both coordinator checks and the transaction join read
//! ([`super::decode::replay_logs`]).
//!
//! [`annotate`] then adds `evidence.coordinator` to every `hanging_transaction` and
//! `open_transaction` finding and appends the coordinator's verdict to its message.
//!
//! Severity policy:
//! * a `hanging_transaction` whose coordinator view is **Ongoing, same producer id, listing
//!   this partition, last updated within its transaction timeout + 5 min of the reference
//!   time** is downgraded to `open_transaction` (info): the coordinator still owns it and
//!   will commit or abort it (find-hanging's rule: "not hanging" when the coordinator's
//!   current transaction lists the partition); a KIP-939 two-phase-commit transaction
//!   ([`is_two_phase_commit`]) never times out, so it is downgraded whatever its age, and
//!   the finding says it waits for its external transaction manager or an admin's
//!   `Admin.forceTerminateTransaction`;
//! * every other finding keeps its kind and severity; the confirmation goes into the
//!   message, `evidence.coordinator` and the remediation (which names the transactional
//!   id to `describe` before aborting).
//!
//! [`annotate`] also reports rule 31, the anomalies of the coordinator's own log
//! ([`history`], worded by [`anomaly_text`]), as `transaction_state_anomaly` findings on the `__transaction_state`
//! partitions the scan selected.
//!
//! Without `__transaction_state` in the inputs nothing is changed.
//!
//! # Joins within one cluster
//!
//! [`annotate`] groups the `__transaction_state` partitions by cluster
//! ([`crate::discover::identity::ClusterKey`]: the `cluster.id` of their log dir's `meta.properties`,
//! or, without one, the log dir itself) and confirms a finding only against the view of its
//! own cluster; `-future`/`-delete`/`-stray` copies are neither joined nor annotated (a
//! copy of `__transaction_state` still gets its own rule-31 check). A
//! finding whose cluster has no `__transaction_state` in the inputs keeps its verdict and
//! gets `evidence.coordinator.verdict = "unavailable"`.
//!
//! "Confirmed" needs the partition that owns the transactional id: Kafka places an id in
//! `__transaction_state-P`, `P = Utils.abs(id.hashCode) % partitionCount`
//! (`TransactionStateManager.partitionFor`), with the partition count from the cluster's
//! KRaft metadata log when the inputs hold it, else `transaction.state.log.num.partitions`'
//! default 50 (or more, when a higher partition number was read). A lookup by producer id
//! alone ("no transactional id maps to producer N") is confirmed only when every partition
//! of the cluster's `__transaction_state` was read; otherwise the message says
//! `unconfirmed`, why, and `evidence.coordinator.confirmed` is false.

use super::*;
use crate::cluster::report::ScanReport;
use crate::discover::layout::Inventory;
use crate::finding::evidence::{self, BatchEvidence, CoordinatorJoint, OpenTxnJoint};
use crate::finding::{Finding, Kind};
use crate::partition::results::ScanOptions;
use crate::read::format::txnlog::TxnState;
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// What the coordinator says about one open transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    /// No transactional id maps to the producer id.
    NoTransactionalId,
    /// The id was removed (tombstone).
    Tombstoned,
    /// The id now belongs to another producer id.
    MovedOn,
    /// Ongoing (same pid) listing this partition.
    Alive,
    /// Prepare* (same pid) listing this partition: markers being written.
    MarkersPending,
    /// In progress but this partition is not in it.
    NotListed,
    /// Complete* after a transaction that listed this partition: the marker never arrived.
    MarkersLost,
    /// Empty/Complete*/Dead with no record of this partition being in the transaction.
    NoTransaction,
}

impl Verdict {
    fn id(self) -> &'static str {
        match self {
            Verdict::NoTransactionalId => "no_transactional_id",
            Verdict::Tombstoned => "tombstoned",
            Verdict::MovedOn => "moved_to_other_producer",
            Verdict::Alive => "alive",
            Verdict::MarkersPending => "markers_pending",
            Verdict::NotListed => "partition_not_in_transaction",
            Verdict::MarkersLost => "markers_lost",
            Verdict::NoTransaction => "no_transaction_in_progress",
        }
    }
    /// find-hanging's conclusion: hanging unless the coordinator's current transaction
    /// lists the partition.
    fn hanging(self) -> bool {
        !matches!(self, Verdict::Alive | Verdict::MarkersPending)
    }
}

fn tp_strings(v: &[(String, i32)]) -> Vec<String> {
    v.iter().map(|(t, p)| format!("{t}-{p}")).collect()
}

/// Annotate the `hanging_transaction` and `open_transaction` findings of `report` with
/// the coordinator's view rebuilt from the `__transaction_state` partitions of `inv`
/// (see the module docs for the severity policy). Does nothing when `inv` holds no
/// `__transaction_state` partition. Recomputes `report.summary.findings`.
#[cfg(feature = "testkit")]
pub fn annotate(report: &mut ScanReport, inv: &Inventory, opts: &ScanOptions) {
    let origin = |path: &str| crate::cluster::txns::Origin {
        path: path.to_string(),
        ..Default::default()
    };
    let loads = super::leader::LeaderCopies::of_release(inv, opts);
    let models = super::decode::replay_logs(report, inv, opts, origin, &loads);
    annotate_models(report, &models, inv, opts);
}

/// [`annotate`] with the coordinator's models already replayed
/// ([`super::decode::replay_logs`]).
pub fn annotate_models(
    report: &mut ScanReport,
    models: &[super::model::CoordModel],
    inv: &Inventory,
    opts: &ScanOptions,
) {
    let views = CoordinatorView::load_clusters_of(models, inv, opts);
    annotate_clusters(report, &views);
}

/// [`annotate`] with views already loaded by [`CoordinatorView::load_clusters`]: each
/// finding is confirmed against the view of its own cluster only.
pub fn annotate_clusters(report: &mut ScanReport, views: &[CoordinatorView]) {
    use crate::discover::identity::ClusterKey;
    if views.is_empty() {
        return;
    }
    let mut changed = false;
    for view in views {
        changed |= add_history_findings(report, view);
    }
    for f in &mut report.findings {
        if !matches!(f.kind, Kind::HangingTransaction | Kind::OpenTransaction)
            || !f.source.copy.is_live()
        {
            continue;
        }
        let key = ClusterKey::of(&f.source);
        match views.iter().find(|v| v.cluster.as_ref() == Some(&key)) {
            Some(view) => annotate_finding(f, view),
            None => {
                let mut ev = json!({
                    "confirmed": false,
                    "cluster": key.describe(),
                    "reason": "the inputs hold no __transaction_state partition of this cluster (those of other clusters are never joined)",
                });
                let verdict = CoordinatorJoint {
                    verdict: "unavailable".into(),
                    transactional_id: None,
                    hanging: None,
                };
                evidence::merge(&mut ev, &verdict);
                CoordinatorJoint::annotate(&mut f.evidence, ev);
            }
        }
        changed = true;
    }
    if changed {
        report.recount_findings();
    }
}

/// Rule 31: append the `transaction_state_anomaly` findings of every
/// `__transaction_state` partition copy the scan holds (its `ref_time` is the reference
/// time of the time-based anomalies) to that partition's findings, keeping them sorted by
/// offset and `finding_range` right. True when a finding was added.
fn add_history_findings(report: &mut ScanReport, view: &CoordinatorView) -> bool {
    let index: BTreeMap<&str, usize> = report
        .partitions
        .iter()
        .enumerate()
        .filter(|(_, p)| p.topic == TRANSACTION_STATE_TOPIC)
        .map(|(i, p)| (p.path.as_str(), i))
        .collect();
    let mut extra: BTreeMap<usize, Vec<Finding>> = BTreeMap::new();
    let time = view
        .history
        .time_anomalies(|path| index.get(path).map(|&i| report.partitions[i].ref_time));
    for a in view.history.anomalies.iter().chain(&time) {
        if let Some(&i) = index.get(a.current.source.path.as_str()) {
            extra
                .entry(i)
                .or_default()
                .push(anomaly_text::to_finding(a));
        }
    }
    if extra.is_empty() {
        return false;
    }
    report.add_partition_findings(extra);
    // The abort markers that closed nothing after a proven PrepareCommit's COMMIT follow
    // from its `invalid_transition` (`sent::link_aborts`).
    let anomalies = &view.history.anomalies;
    if anomalies.iter().any(|a| a.sent.is_some()) {
        let ranges: BTreeMap<&str, std::ops::Range<usize>> = (report.partitions.iter())
            .map(|p| (p.path.as_str(), p.carried.finding_range.clone()))
            .collect();
        let place = |path: &str| ranges.get(path).cloned();
        if sent::link_aborts(anomalies, &mut report.findings, place) {
            report.recount_findings();
        }
    }
    true
}

/// What the confirmation reads of an open transaction's finding.
struct OpenTxn {
    pid: i64,
    epoch: i16,
    ref_time: Option<i64>,
    /// The timestamp of the transaction's first batch.
    first_ts: Option<i64>,
    /// The producer's last marker in this partition (it precedes the open transaction's
    /// data, else it would have closed it).
    last_marker: Option<BatchEvidence>,
    /// This partition, as the coordinator lists it.
    here: (String, i32),
}

impl OpenTxn {
    fn of(f: &Finding) -> Option<OpenTxn> {
        let open: OpenTxnJoint = evidence::read(f);
        Some(OpenTxn {
            pid: f.producer_id?,
            epoch: f.producer_epoch.unwrap_or(-1),
            ref_time: open.reference_time_ms,
            first_ts: open.first_batch.as_ref().map(|b| b.timestamp),
            last_marker: open.last_marker,
            here: (f.topic.clone(), f.partition),
        })
    }

    /// The open transaction began after the coordinator's last update of the id.
    fn began_after(&self, last_update: i64) -> bool {
        self.first_ts.is_some_and(|ts| ts > last_update)
    }

    /// The producer's last marker in this partition when it is at `epoch`: `(offset, type)`.
    fn marker_here(&self, epoch: i16) -> Option<(i64, String)> {
        let m = self.last_marker.as_ref()?;
        (m.producer_id == self.pid && m.producer_epoch == epoch).then(|| (m.offset, m.kind.clone()))
    }
}

/// The coordinator's verdict on one open transaction, before the recency and
/// completeness qualifications.
struct Judged<'v> {
    verdict: Verdict,
    sentence: String,
    /// The id's latest record, when one maps to the producer.
    txn: Option<&'v CoordinatorTxn>,
    /// Why the verdict cannot be confirmed, when it cannot.
    unconfirmed: Option<String>,
}

fn annotate_finding(f: &mut Finding, view: &CoordinatorView) {
    let Some(open) = OpenTxn::of(f) else { return };
    let (count, count_from) = view.assumed_partition_count();
    let cluster = view.cluster.as_ref().map(|k| k.describe());
    let mut ev = json!({
        "partitions_read": view.partitions_read.iter().collect::<Vec<_>>(),
        "cluster": cluster,
        "partition_count": count,
        "partition_count_from": count_from,
    });
    if let Some((path, why)) = view.unread.first()
        && let Value::Object(m) = &mut ev
    {
        m.insert(
            "records_not_read".into(),
            json!({
                "batches": view.unread.len(),
                "first": {"path": path, "reason": why},
            }),
        );
    }
    let judged = match view.find(open.pid) {
        None => judge_unmapped(view, &open, count, cluster.as_deref()),
        Some((t, by)) => {
            let owner =
                crate::discover::identity::transaction_partition_for(&t.transactional_id, count);
            let unconfirmed = (owner != t.source.partition).then(|| format!(
                "transactional id {} was read from {TRANSACTION_STATE_TOPIC}-{} but with {count} partitions ({count_from}) it belongs to {TRANSACTION_STATE_TOPIC}-{owner}{}",
                t.transactional_id, t.source.partition,
                // The coordinator writes an id only to its own partition
                // (`TransactionStateManager.partitionFor`): without the metadata log the
                // place read may as well prove the count wrong.
                if view.partition_count.is_none() {
                    format!(": either {TRANSACTION_STATE_TOPIC} has another partition count, or this record is not where the coordinator reads the id")
                } else {
                    String::new()
                }
            ));
            let (verdict, sentence) = judge_txn(&open, t, by);
            txn_evidence(&mut ev, t, by, owner, t.partitions.contains(&open.here));
            Judged {
                verdict,
                sentence,
                txn: Some(t),
                unconfirmed,
            }
        }
    };
    conclude(f, view, &open, ev, judged);
}

/// The verdict when no transactional id maps to the producer: confirmed only when every
/// partition of the cluster's `__transaction_state` was read.
fn judge_unmapped<'v>(
    view: &'v CoordinatorView,
    open: &OpenTxn,
    count: i32,
    cluster: Option<&str>,
) -> Judged<'v> {
    let pid = open.pid;
    let read = view.read_list();
    let missing = view.missing_partitions(count);
    // A load that stops at a record leaves the ids as they were before it, but the records
    // after it may map the producer for a coordinator that loaded earlier (or wrote the
    // record itself): two readings, so the absence is not confirmed.
    let stopped = view.load_stops.first().map(|(path, at)| {
        format!(
            "the coordinator's load of {path} stops at offset {at}, and a coordinator that loaded before that record may hold this producer's id in the records after it"
        )
    });
    let unconfirmed = (missing > 0)
        .then(|| {
            format!(
                "only {read} read, {missing} of the {count} partitions of {} not in the inputs",
                cluster.unwrap_or("the cluster")
            )
        })
        .or(stopped.clone());
    let sentence = if let Some(why) = stopped.filter(|_| missing == 0) {
        format!(
            "unconfirmed: no transactional id maps to producer {pid} in the ids a load leaves ({why})"
        )
    } else if missing > 0 {
        format!(
            "unconfirmed: no transactional id maps to producer {pid} in {read}, but the id may be stored in one of the {missing} partition(s) not read"
        )
    } else {
        format!(
            "confirmed hanging: no transactional id maps to producer {pid} in any of the {count} partitions of {}",
            cluster.unwrap_or("the cluster")
        )
    };
    Judged {
        verdict: Verdict::NoTransactionalId,
        sentence,
        txn: None,
        unconfirmed,
    }
}

/// The verdict from the latest record `t` of the transactional id found `by` the
/// producer id.
fn judge_txn(open: &OpenTxn, t: &CoordinatorTxn, by: MatchedBy) -> (Verdict, String) {
    let pid = open.pid;
    let id = &t.transactional_id;
    let lists = t.partitions.contains(&open.here);
    if let Some(ts) = &t.tombstoned {
        (
            Verdict::Tombstoned,
            format!(
                "confirmed hanging: transactional id {id} (producer {}) was removed from the coordinator (tombstone at {TRANSACTION_STATE_TOPIC}-{} offset {}); nothing will ever end this transaction",
                t.producer_id, ts.partition, ts.offset
            ),
        )
    } else if t.producer_id != pid {
        (
            Verdict::MovedOn,
            format!(
                "confirmed hanging: transactional id {id} has moved on to producer {} epoch {} (state {}, its {} is {pid}); the coordinator no longer tracks producer {pid}",
                t.producer_id,
                t.producer_epoch,
                t.state,
                by.name()
            ),
        )
    } else if t.state.is_in_progress() && lists {
        if t.state == TxnState::Ongoing {
            (
                Verdict::Alive,
                format!(
                    "the coordinator has transactional id {id} in state Ongoing at epoch {} listing this partition since {} (last update {}): the transaction is alive (not hanging)",
                    t.producer_epoch, t.start_ms, t.last_update_ms
                ),
            )
        } else {
            (
                Verdict::MarkersPending,
                format!(
                    "the coordinator has transactional id {id} in state {} at epoch {} listing this partition (last update {}): it is writing the markers; if that update is old, marker delivery is stuck (KAFKA-19999 class)",
                    t.state, t.producer_epoch, t.last_update_ms
                ),
            )
        }
    } else if t.state.is_in_progress() {
        (
            Verdict::NotListed,
            format!(
                "confirmed hanging: the coordinator's current transaction for {id} (state {}, epoch {}) does not list this partition",
                t.state, t.producer_epoch
            ),
        )
    } else if matches!(t.state, TxnState::CompleteCommit | TxnState::CompleteAbort)
        && t.last_txn_partitions.contains(&open.here)
        && !open.began_after(t.last_update_ms)
        && open.marker_here(t.producer_epoch).is_none()
    {
        let m = if t.state == TxnState::CompleteCommit {
            "COMMIT"
        } else {
            "ABORT"
        };
        (
            Verdict::MarkersLost,
            format!(
                "transactional id {id} in {} at epoch {}: the coordinator finished this transaction (last update {}) but no {m} marker reached this partition — markers lost",
                t.state, t.producer_epoch, t.last_update_ms
            ),
        )
    } else {
        let after = match (open.first_ts, open.marker_here(t.producer_epoch)) {
            (Some(ts), _) if ts > t.last_update_ms => format!(
                "; this partition's transaction began after the coordinator's last update ({} > {}): the coordinator never knew about it (late write after EndTxn, KAFKA-12671 pattern)",
                ts, t.last_update_ms
            ),
            (_, Some((off, kind))) => format!(
                "; the {} marker of producer {pid} epoch {} is in this partition at offset {off}, before this transaction: the coordinator's transaction was completed here and this data came after it (late write after EndTxn, KAFKA-12671 pattern)",
                kind.to_uppercase(),
                t.producer_epoch
            ),
            _ => String::new(),
        };
        (
            Verdict::NoTransaction,
            format!(
                "confirmed hanging: the coordinator has transactional id {id} in state {} at epoch {} with no transaction in progress for this partition{after}",
                t.state, t.producer_epoch
            ),
        )
    }
}

/// The id's latest record in the confirmation's evidence.
fn txn_evidence(ev: &mut Value, t: &CoordinatorTxn, by: MatchedBy, owner: i32, lists: bool) {
    let Value::Object(m) = ev else { return };
    m.insert("owner_partition".into(), json!(owner));
    m.insert("matched_by".into(), json!(by.name()));
    m.insert("state".into(), json!(t.state.name()));
    m.insert("producer_id".into(), json!(t.producer_id));
    m.insert("producer_epoch".into(), json!(t.producer_epoch));
    m.insert("previous_producer_id".into(), json!(t.previous_producer_id));
    m.insert("next_producer_id".into(), json!(t.next_producer_id));
    m.insert("timeout_ms".into(), json!(t.timeout_ms));
    m.insert("partitions".into(), json!(tp_strings(&t.partitions)));
    m.insert(
        "last_transaction_partitions".into(),
        json!(tp_strings(&t.last_txn_partitions)),
    );
    m.insert("lists_partition".into(), json!(lists));
    m.insert("last_update_ms".into(), json!(t.last_update_ms));
    m.insert("start_ms".into(), json!(t.start_ms));
    m.insert(
        "client_transaction_version".into(),
        json!(t.client_transaction_version),
    );
    m.insert(
        "tombstoned".into(),
        json!(t.tombstoned.as_ref().map(|s| json!({
            "partition": s.partition, "offset": s.offset,
        }))),
    );
    m.insert(
        "record".into(),
        json!({
            "partition": t.source.partition,
            "offset": t.source.offset,
            "path": t.source.path,
        }),
    );
}

/// Qualify the verdict (recency of an Ongoing record, unread batches) and write it to the
/// finding: `evidence.coordinator`, the message, the kind (a live transaction is
/// downgraded to `open_transaction`) and the remediation.
fn conclude(f: &mut Finding, view: &CoordinatorView, open: &OpenTxn, mut ev: Value, j: Judged<'_>) {
    let Judged {
        verdict,
        mut sentence,
        txn,
        mut unconfirmed,
    } = j;
    // Recency of an Ongoing view: the coordinator aborts a transaction once its start is
    // older than its timeout (`TransactionStateManager.timedOutTransactions`:
    // txnStartTimestamp + txnTimeoutMs < now, whatever later AddPartitions moved the last
    // update to), so one started more than timeout + 5 min before the reference time means
    // it is not doing so. A value without a start time is measured from its last update. A
    // two-phase-commit transaction never times out: it is always recent.
    let two_pc = txn.is_some_and(|t| is_two_phase_commit(t.timeout_ms));
    let recent = match (txn, open.ref_time) {
        (Some(t), Some(now)) => {
            let since = if t.start_ms >= 0 {
                t.start_ms
            } else {
                t.last_update_ms
            };
            ongoing_limit_ms(t.timeout_ms).is_none_or(|limit| now.saturating_sub(since) <= limit)
        }
        _ => false,
    };
    let downgrade = f.kind == Kind::HangingTransaction && verdict == Verdict::Alive && recent;
    if verdict == Verdict::Alive && two_pc {
        sentence.push_str(
            "; a two-phase-commit transaction (KIP-939, timeout Integer.MAX_VALUE): the coordinator never aborts it on timeout, it waits for its external transaction manager's commit or abort (EndTxn) or an admin's Admin.forceTerminateTransaction (an abort)",
        );
    } else if verdict == Verdict::Alive && !recent {
        sentence.push_str(
            "; but that transaction started more than the transaction timeout + 5 min before the reference time: the coordinator is not aborting it (coordinator down or stuck?)",
        );
    }
    if unconfirmed.is_none()
        && let Some((path, why)) = view.unread.first()
    {
        unconfirmed = Some(format!(
            "{} batch(es) of {TRANSACTION_STATE_TOPIC} not read (first: {path}: {why}); the coordinator's records for this producer may be among them",
            view.unread.len()
        ));
    }
    if let Some(why) = &unconfirmed
        && !sentence.starts_with("unconfirmed: ")
    {
        sentence = sentence.replacen("confirmed hanging: ", "unconfirmed: ", 1);
        sentence.push_str(&format!(" (unconfirmed: {why})"));
    }
    if let Value::Object(m) = &mut ev {
        m.insert("confirmed".into(), json!(unconfirmed.is_none()));
        m.insert("unconfirmed_reason".into(), json!(unconfirmed));
        m.insert("hanging".into(), json!(verdict.hanging()));
        m.insert("recent".into(), json!(recent));
        m.insert("downgraded".into(), json!(downgrade));
        if two_pc {
            m.insert("two_phase_commit".into(), json!(true));
        }
        m.insert(
            "transaction_epoch_matches".into(),
            json!(txn.map(|t| t.producer_epoch == open.epoch)),
        );
    }
    let joint = CoordinatorJoint {
        verdict: verdict.id().into(),
        transactional_id: txn.map(|t| t.transactional_id.clone()),
        hanging: Some(verdict.hanging()),
    };
    evidence::merge(&mut ev, &joint);
    CoordinatorJoint::annotate(&mut f.evidence, ev);
    f.message = format!("{}; coordinator: {sentence}", f.message);
    if downgrade {
        f.kind = Kind::OpenTransaction;
        f.severity = Kind::OpenTransaction.default_severity();
        f.broker_behaviour = if two_pc {
            BROKER_ALIVE_2PC
        } else {
            BROKER_ALIVE
        }
        .to_string();
    }
    if let Some(t) = txn {
        let describe = crate::partition::state::text::describe_command(&t.transactional_id);
        f.remediation = Some(match (&f.remediation, downgrade || !verdict.hanging()) {
            (_, true) if two_pc => format!(
                "the coordinator still owns this two-phase-commit transaction: do not abort it by hand (`kafka-transactions.sh abort` would break its atomicity with the external transaction manager); have its external transaction manager commit or abort it, or, if that manager is gone for good, end it with Admin.forceTerminateTransaction(\"{}\") (KIP-939; it aborts the transaction); watch it with {describe}",
                t.transactional_id
            ),
            (_, true) => format!(
                "the coordinator still owns this transaction: do not abort it by hand; watch it with {describe}"
            ),
            (Some(r), false) => format!("check the coordinator first with {describe}; {r}"),
            (None, false) => format!("check the coordinator with {describe}"),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every partition read and no id maps the producer: confirmed — unless a copy's load
    /// stops at a record with records after it, which a coordinator that loaded before may
    /// hold (two readings: unconfirmed, naming the stop).
    #[test]
    fn a_load_stop_leaves_the_absence_unconfirmed() {
        let open = OpenTxn {
            pid: 5,
            epoch: 0,
            ref_time: None,
            first_ts: None,
            last_marker: None,
            here: ("orders".into(), 0),
        };
        let mut view = CoordinatorView {
            partitions_read: [0].into_iter().collect(),
            ..Default::default()
        };
        let j = judge_unmapped(&view, &open, 1, Some("c1"));
        assert!(
            j.sentence.starts_with("confirmed hanging"),
            "{}",
            j.sentence
        );
        assert!(j.unconfirmed.is_none());
        view.load_stops.push(("__transaction_state-0".into(), 3));
        let j = judge_unmapped(&view, &open, 1, Some("c1"));
        assert!(j.sentence.starts_with("unconfirmed: "), "{}", j.sentence);
        assert!(
            j.unconfirmed
                .as_deref()
                .is_some_and(|u| u.contains("stops at offset 3")),
            "{:?}",
            j.unconfirmed
        );
    }
}

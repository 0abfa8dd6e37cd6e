//! A `failed_prepare_aborted` pair of the coordinator's history ([`super::history`]: a
//! PrepareAbort right after a PrepareCommit whose append failed, so that no marker of it
//! was sent) held against the COMMIT markers the data partitions hold, which the
//! coordinator's log alone cannot see.
//!
//! Kafka sends a Prepare*'s markers from two places only. `TransactionCoordinator.
//! endTransaction` hands them to `TransactionMarkerChannelManager.addTxnMarkersToSend` in
//! `sendTxnMarkersCallback`, when the append returned no error and the coordinator epoch
//! is unchanged (a failed append sends nothing and leaves the transaction Ongoing); and a
//! coordinator that loads the partition sends the markers of each Prepare* it read
//! (`TransactionStateManager.loadTransactionsForTxnTopicPartition`), with its own epoch,
//! which is the partition's new leader epoch (`TransactionCoordinator.onElection`). Each
//! marker carries the sender's coordinator epoch; each `__transaction_state` batch the
//! appender's partition leader epoch, the same number. So a COMMIT of the producer at the
//! PrepareCommit's epoch, from the coordinator epoch that appended the PrepareCommit, on a
//! partition the transaction lists, proves that append succeeded. That coordinator then held
//! the transaction in PrepareCommit, which it never aborts: the timeout check takes only
//! Ongoing transactions (`TransactionStateManager.timedOutTransactions`, which
//! `abortTimedOutTransactions` reads), InitProducerId gets CONCURRENT_TRANSACTIONS
//! (`prepareInitProducerIdTransit`), EndTxn(ABORT) gets INVALID_TXN_STATE
//! (`endTransaction`); only CompleteCommit follows, once the markers are written, and a
//! coordinator loading the log later holds the PrepareCommit too and completes it. The
//! PrepareAbort after it is then no transition Kafka writes: the anomaly becomes
//! `invalid_transition`, saying what the marker proves.
//!
//! Two readings keep it from that verdict, or join it:
//! * Under transaction version 0/1 every transaction of an epoch ends with markers at that
//!   epoch, so a COMMIT at it may be a delayed marker of an earlier transaction of the
//!   epoch (what KIP-890's per-transaction bump and KIP-1228's strict check stop). It is
//!   this EndTxn's only when its value says TV2 (`TransactionMetadata.prepareAbortOrCommit`
//!   bumped the epoch for it alone) or the transaction is the epoch's first
//!   ([`CoordTxn::opens_epoch`](super::model::CoordTxn::opens_epoch)). Otherwise the
//!   anomaly stays `failed_prepare_aborted`, and says both readings.
//! * A coordinator whose load stopped before the PrepareCommit (`TransactionStateManager.
//!   loadTransactionMetadata` keeps the ids read before the first record it cannot read)
//!   held the transaction Ongoing and may have timed it out: when the copy's load stops
//!   between the transaction's first record and the PrepareCommit and the PrepareAbort was
//!   appended at a later coordinator epoch than the PrepareCommit, `invalid_transition`
//!   says that reading too.
//!
//! The coordinator's model keeps reading the pair as one transaction ending in the abort
//! (`super::model`: its last Prepare and the Complete are the abort's, whose markers the
//! join matches); the COMMIT's parts, at another epoch, are grouped apart from it.
//! Settled after the replay of every copy and before any reader reads the history
//! (`super::cluster::replay_logs`, `crate::cluster::txns::analyse`); the abort markers that
//! closed nothing after a proven COMMIT are linked to the finding (`link_aborts`, once the
//! findings are placed).

use super::history::{Anomaly, AnomalyKind, Content, TxnSnapshot};
use super::model::CoordModel;
use crate::cluster::txns::Domain;
use crate::finding::{Finding, Kind};
use crate::partition::state::txnrec::{TxnEnd, TxnRecord};
use crate::read::format::txnlog::TxnState;
use serde_json::{Value, json};
use std::collections::HashMap;

/// A marker of the producer on a data partition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MarkerAt {
    /// `topic-partition`.
    pub partition: String,
    /// The partition directory.
    pub path: String,
    pub offset: i64,
    pub coordinator_epoch: i32,
    /// It closed transaction data (not a marker alone).
    pub closed_data: bool,
}

impl MarkerAt {
    fn json(&self) -> Value {
        json!({
            "partition": self.partition,
            "path": self.path,
            "offset": self.offset,
            "coordinator_epoch": self.coordinator_epoch,
            "closed_data": self.closed_data,
        })
    }
}

/// The COMMIT markers of a `failed_prepare_aborted` pair's PrepareCommit on the data
/// partitions it lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sent {
    pub commits: Vec<MarkerAt>,
    /// The abort's markers (at its epoch) on those partitions after the COMMIT, each alone:
    /// they closed nothing.
    pub aborts: Vec<MarkerAt>,
    /// The COMMITs are this EndTxn's (see the module docs): the anomaly is
    /// `invalid_transition`.
    pub proven: bool,
    /// The copy's load stops at this offset, between the transaction's first record and the
    /// PrepareCommit, and the PrepareAbort came from a later coordinator epoch.
    pub load_stop: Option<i64>,
}

/// One live data partition copy, as [`settle`] reads it.
pub struct DataPart<'a> {
    pub domain: Domain,
    pub topic: &'a str,
    pub partition: i32,
    pub path: &'a str,
    pub txns: &'a [TxnRecord],
}

/// A `failed_prepare_aborted` anomaly of a PrepareCommit: its index, the PrepareCommit and
/// the PrepareAbort, the coordinator epoch that appended the PrepareCommit, and what the
/// model holds of the transaction (its listed partitions, first record, whether it opens
/// its epoch).
struct Candidate {
    anomaly: usize,
    prepare: TxnSnapshot,
    abort: TxnSnapshot,
    prepare_offset: i64,
    coordinator_epoch: i32,
    abort_coordinator_epoch: i32,
    listed: std::collections::BTreeSet<(String, i32)>,
    first_record_offset: i64,
    opens_epoch: bool,
}

fn value(c: &Content) -> Option<TxnSnapshot> {
    match c {
        Content::Value(v) => Some(*v),
        _ => None,
    }
}

/// The `failed_prepare_aborted` anomalies of `m` after a PrepareCommit appended at a known
/// coordinator epoch, with the transaction the model merged them into.
fn candidates(m: &CoordModel) -> Vec<Candidate> {
    let mut out = Vec::new();
    for (i, a) in m.history.anomalies.iter().enumerate() {
        let (AnomalyKind::FailedPrepareAborted, Some(prev), Some(id)) =
            (a.kind, a.previous.as_ref(), a.transactional_id.as_deref())
        else {
            continue;
        };
        let (Some(prepare), Some(abort)) = (value(&prev.content), value(&a.current.content)) else {
            continue;
        };
        if prepare.state != TxnState::PrepareCommit || prev.coordinator_epoch < 0 {
            continue;
        }
        // The transaction the model made of the pair: its Prepare record is the abort's.
        let at = a.current.source.offset;
        let Some(t) = m.txns.iter().find(|t| {
            &*t.transactional_id == id
                && t.producer_id == prepare.producer_id
                && t.prepare_offset == Some(at)
        }) else {
            continue;
        };
        let Some(listed) = &t.partitions else {
            continue;
        };
        out.push(Candidate {
            anomaly: i,
            prepare,
            abort,
            prepare_offset: prev.source.offset,
            coordinator_epoch: prev.coordinator_epoch,
            abort_coordinator_epoch: a.current.coordinator_epoch,
            listed: (**listed).clone(),
            first_record_offset: t.first_record_offset,
            opens_epoch: t.opens_epoch,
        });
    }
    out
}

/// Settle every `failed_prepare_aborted` anomaly of a PrepareCommit in `models` against
/// the markers of the live data partition copies `parts` makes (a model reads those of its
/// own domain): see the module docs. Few anomalies are candidates: `parts` is called only
/// when one is, and each model with one reads its domain's transactions once.
pub fn settle<'a>(models: &mut [CoordModel], parts: impl FnOnce() -> Vec<DataPart<'a>>) {
    let all: Vec<Vec<Candidate>> = models.iter().map(candidates).collect();
    if all.iter().all(Vec::is_empty) {
        return;
    }
    let parts = parts();
    for (m, cands) in models.iter_mut().zip(all) {
        if cands.is_empty() {
            continue;
        }
        let domain = m.origin.domain();
        // (producer id, epoch, coordinator epoch) of each candidate's COMMIT; (producer id,
        // epoch) of its abort's markers.
        let mut commit_of: HashMap<(i64, i16, i32), Vec<usize>> = HashMap::new();
        let mut abort_of: HashMap<(i64, i16), Vec<usize>> = HashMap::new();
        for (k, c) in cands.iter().enumerate() {
            let (pid, e) = (c.prepare.producer_id, c.prepare.producer_epoch);
            commit_of
                .entry((pid, e, c.coordinator_epoch))
                .or_default()
                .push(k);
            abort_of
                .entry((pid, c.abort.producer_epoch))
                .or_default()
                .push(k);
        }
        let mut commits: Vec<Vec<MarkerAt>> = vec![Vec::new(); cands.len()];
        let mut aborts: Vec<Vec<MarkerAt>> = vec![Vec::new(); cands.len()];
        for p in parts.iter().filter(|p| p.domain == domain) {
            let tp = (p.topic.to_string(), p.partition);
            let at = |r: &TxnRecord| MarkerAt {
                partition: format!("{}-{}", p.topic, p.partition),
                path: p.path.to_string(),
                offset: r.marker_offset,
                coordinator_epoch: r.coordinator_epoch,
                closed_data: !r.is_empty(),
            };
            for r in p.txns.iter().filter(|r| !r.is_open()) {
                let ks = match r.end {
                    TxnEnd::Commit => commit_of
                        .get(&(r.producer_id, r.marker_epoch, r.coordinator_epoch))
                        .map(|ks| (ks, &mut commits)),
                    _ if r.is_empty() => abort_of
                        .get(&(r.producer_id, r.marker_epoch))
                        .map(|ks| (ks, &mut aborts)),
                    _ => None,
                };
                if let Some((ks, into)) = ks {
                    for &k in ks.iter().filter(|&&k| cands[k].listed.contains(&tp)) {
                        into[k].push(at(r));
                    }
                }
            }
        }
        for (k, c) in cands.iter().enumerate() {
            let mine = std::mem::take(&mut commits[k]);
            if mine.is_empty() {
                continue;
            }
            // The abort's markers that came after a COMMIT on the same partition.
            let after = std::mem::take(&mut aborts[k])
                .into_iter()
                .filter(|a| mine.iter().any(|m| m.path == a.path && m.offset < a.offset))
                .collect();
            let tv2 = c.prepare.version >= 1 && c.prepare.client_transaction_version >= 2;
            let load_stop = m.load_stop.filter(|&o| {
                o > c.first_record_offset
                    && o < c.prepare_offset
                    && c.abort_coordinator_epoch > c.coordinator_epoch
            });
            let sent = Sent {
                commits: mine,
                aborts: after,
                proven: tv2 || c.opens_epoch,
                load_stop,
            };
            let a = &mut m.history.anomalies[c.anomaly];
            if sent.proven {
                a.kind = AnomalyKind::InvalidTransition;
            }
            a.sent = Some(Box::new(sent));
        }
    }
}

/// `topic-partition offset N` of each marker, joined.
fn places(ms: &[MarkerAt]) -> String {
    ms.iter()
        .map(|m| format!("{} offset {}", m.partition, m.offset))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The evidence of `s`.
pub fn evidence(s: &Sent) -> Value {
    json!({
        "commit_markers": s.commits.iter().map(MarkerAt::json).collect::<Vec<_>>(),
        "abort_markers_after": s.aborts.iter().map(MarkerAt::json).collect::<Vec<_>>(),
        "commit_proven_this_transactions": s.proven,
        "load_stops_before_prepare_commit": s.load_stop,
    })
}

/// The message, broker behaviour and remediation of an `invalid_transition` the COMMIT
/// markers of `s` prove (`prev`, `cur`: the two records described).
pub fn invalid_texts(
    a: &Anomaly,
    s: &Sent,
    (prev, cur): (&str, &str),
) -> super::anomaly_text::Texts {
    let id = a.transactional_id.as_deref().unwrap_or("?");
    let ce = s.commits.first().map_or(-1, |m| m.coordinator_epoch);
    let committed = committed_data(s);
    let mut message = format!(
        "transactional id {id}: {cur} after {prev} is not a valid transition: the PrepareCommit's COMMIT marker, from coordinator epoch {ce} (the epoch that appended the PrepareCommit), is on {}, so that append succeeded and the coordinator held the transaction in PrepareCommit, which only CompleteCommit follows",
        places(&s.commits)
    );
    if let Some(parts) = &committed {
        message.push_str(&format!(
            "; the transaction's data on {parts} was committed by it (read_committed consumers delivered it) while this log ends the transaction aborted"
        ));
    }
    if !s.aborts.is_empty() {
        message.push_str(&format!(
            "; the abort's markers after it ({}) closed nothing",
            places(&s.aborts)
        ));
    }
    if let Some(o) = s.load_stop {
        message.push_str(&format!(
            "; or a coordinator whose load of this partition stopped at offset {o}, before the PrepareCommit, held the transaction Ongoing and timed it out (TransactionStateManager.loadTransactionMetadata keeps the ids read before a record it cannot read)"
        ));
    }
    let remediation = format!(
        "check the id with {}; the records the transaction wrote on {} were delivered as committed: if the producer treated the transaction as failed it may have written them again (check downstream for duplicates); find what wrote the PrepareAbort (a second coordinator, a restored or edited {}-{})",
        crate::partition::state::text::describe_command(id),
        committed.unwrap_or_else(|| "the partitions with the COMMIT".to_string()),
        super::TRANSACTION_STATE_TOPIC,
        a.current.source.partition
    );
    (message, BROKER_SENT, Some(remediation))
}

/// What `failed_prepare_aborted`'s message adds when a COMMIT at the PrepareCommit's epoch
/// is on a listed partition but may be an earlier transaction's (`s.proven` false).
pub fn both_readings(s: &Sent) -> String {
    format!(
        "; a COMMIT marker at the PrepareCommit's epoch and coordinator epoch is on {}: a delayed COMMIT of an earlier transaction of the producer at that epoch (transaction version 0/1 markers do not tell one epoch's transactions apart, and this log does not show the epoch's start), or this PrepareCommit's own — then its append succeeded and no coordinator writes this PrepareAbort (invalid_transition){}",
        places(&s.commits),
        committed_data(s)
            .map(|p| format!("; either way it closed the transaction's data on {p} as committed"))
            .unwrap_or_default()
    )
}

/// The partitions whose transaction data a COMMIT of `s` closed, joined (`None`: none).
pub fn committed_data(s: &Sent) -> Option<String> {
    let parts: Vec<&str> = (s.commits.iter())
        .filter(|m| m.closed_data)
        .map(|m| m.partition.as_str())
        .collect();
    (!parts.is_empty()).then(|| parts.join(", "))
}

const BROKER_SENT: &str = "a Prepare*'s markers go out only after its append succeeded (TransactionCoordinator.endTransaction's sendTxnMarkersCallback) or from a coordinator that loaded it (TransactionStateManager.loadTransactionsForTxnTopicPartition, at its later epoch); a coordinator holding PrepareCommit never aborts it — the timeout check takes only Ongoing transactions (TransactionStateManager.timedOutTransactions), InitProducerId gets CONCURRENT_TRANSACTIONS, EndTxn(ABORT) INVALID_TXN_STATE — and one that loads it completes it: this PrepareAbort was written by something else, or after records were lost";

/// Link each proven pair's abort markers that closed nothing (`marker_without_transaction`,
/// `conflicting_markers` of the producer at their offsets) to the `invalid_transition`
/// finding they follow from (`caused_by`). `findings` of the report, `place(path)` the
/// finding range of a partition directory. True when a link was added.
pub fn link_aborts(
    anomalies: &[Anomaly],
    findings: &mut [Finding],
    place: impl Fn(&str) -> Option<std::ops::Range<usize>>,
) -> bool {
    let mut linked = false;
    for a in anomalies {
        let (AnomalyKind::InvalidTransition, Some(s)) = (a.kind, a.sent.as_deref()) else {
            continue;
        };
        let pid = value(&a.current.content).map(|v| v.producer_id);
        let Some(range) = place(&a.current.source.path) else {
            continue;
        };
        let Some(cause) = findings.get(range).and_then(|fs| {
            fs.iter().find(|f| {
                f.offset == Some(a.current.source.offset)
                    && super::anomaly_text::is_anomaly(f, AnomalyKind::InvalidTransition)
            })
        }) else {
            continue;
        };
        let cause = cause.id.clone();
        for m in &s.aborts {
            let Some(range) = place(&m.path) else {
                continue;
            };
            for f in findings.get_mut(range).into_iter().flatten() {
                if matches!(
                    f.kind,
                    Kind::MarkerWithoutTransaction | Kind::ConflictingMarkers
                ) && f.offset == Some(m.offset)
                    && f.producer_id == pid
                    && !f.caused_by.contains(&cause)
                {
                    f.caused_by.push(cause.clone());
                    linked = true;
                }
            }
        }
    }
    linked
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::txns::{CoordRecord, CoordValue, CoordinatorLog, Origin, RecordProblem};

    fn value(epoch: i16, state: TxnState, listed: bool) -> CoordValue {
        CoordValue {
            version: 0,
            producer_id: 7,
            previous_producer_id: -1,
            next_producer_id: -1,
            producer_epoch: epoch,
            next_producer_epoch: -1,
            timeout_ms: 10_000,
            state,
            partitions: if listed {
                vec![("x".into(), 0)]
            } else {
                vec![]
            },
            last_update_ms: 0,
            start_ms: 0,
            client_transaction_version: 0,
        }
    }

    /// Empty@1, Ongoing@1 [x-0], (`bad`) a record the load fails on, PrepareCommit@1 at
    /// coordinator epoch 0, PrepareAbort@2 at coordinator epoch `abort_ce`: the model.
    fn model(bad: bool, abort_ce: i32) -> CoordModel {
        let mut records = Vec::new();
        let mut push = |v: Option<CoordValue>, ce: i32, problem: bool| {
            let mut r = CoordRecord::new(records.len() as i64, "a".into(), v);
            r.coordinator_epoch = ce;
            if problem {
                r.problem = Some(Box::new(RecordProblem::Value("truncated".into())));
            }
            records.push(r);
        };
        push(Some(value(1, TxnState::Empty, false)), 0, false);
        push(Some(value(1, TxnState::Ongoing, true)), 0, false);
        if bad {
            push(None, 0, true);
        }
        push(Some(value(1, TxnState::PrepareCommit, true)), 0, false);
        push(
            Some(value(2, TxnState::PrepareAbort, true)),
            abort_ce,
            false,
        );
        let origin = Origin {
            cluster_id: Some("c".into()),
            path: "/d/__transaction_state-3".into(),
            live: true,
            ..Origin::default()
        };
        let log = CoordinatorLog::of_records(3, origin, records);
        CoordModel::of(&log, None)
    }

    /// `x-0`: producer 7's data closed by a COMMIT at epoch 1 from coordinator epoch
    /// `commit_ce` (offset 2), then the abort's ABORT at 2 alone (offset 3).
    fn data(commit_ce: i32) -> Vec<TxnRecord> {
        let rec = |end, first, marker_epoch, ce, batches| TxnRecord {
            producer_id: 7,
            producer_epoch: 1,
            marker_epoch,
            coordinator_epoch: ce,
            end,
            first_offset: first,
            last_data_offset: if batches > 0 { 1 } else { -1 },
            marker_offset: first + if batches > 0 { 2 } else { 0 },
            first_timestamp: 0,
            last_timestamp: 0,
            records: batches,
            batches,
            bytes: 0,
        };
        vec![
            rec(TxnEnd::Commit, 0, 1, commit_ce, 1),
            rec(TxnEnd::Abort, 3, 2, commit_ce, 0),
        ]
    }

    fn settled(mut m: CoordModel, txns: &[TxnRecord]) -> Anomaly {
        let domain = m.origin.domain();
        settle(std::slice::from_mut(&mut m), || {
            vec![DataPart {
                domain,
                topic: "x",
                partition: 0,
                path: "/d/x-0",
                txns,
            }]
        });
        let mut fs = m.history.anomalies.into_iter().filter(|a| {
            matches!(
                a.kind,
                AnomalyKind::InvalidTransition | AnomalyKind::FailedPrepareAborted
            )
        });
        let a = fs.next().expect("the pair's anomaly");
        assert!(fs.next().is_none());
        a
    }

    /// The epoch's first transaction, its COMMIT from the PrepareCommit's coordinator
    /// epoch: invalid, the abort's lone ABORT after it named; from another coordinator
    /// epoch: unchanged, nothing named.
    #[test]
    fn a_commit_from_the_appending_coordinator_refutes_the_failed_prepare() {
        let a = settled(model(false, 0), &data(0));
        assert_eq!(a.kind, AnomalyKind::InvalidTransition);
        let s = a.sent.expect("settled");
        assert!(s.proven && s.load_stop.is_none());
        assert_eq!((s.commits.len(), s.aborts.len()), (1, 1));
        assert_eq!((s.commits[0].offset, s.aborts[0].offset), (2, 3));
        let a = settled(model(false, 0), &data(1));
        assert_eq!(a.kind, AnomalyKind::FailedPrepareAborted);
        assert!(a.sent.is_none());
    }

    /// A copy whose load stops between the Ongoing and the PrepareCommit: the PrepareAbort
    /// from a later coordinator epoch may be the one that loaded without the PrepareCommit
    /// (said too); from the same epoch, no load came between.
    #[test]
    fn a_load_stop_before_the_prepare_commit_is_the_other_reading() {
        let a = settled(model(true, 1), &data(0));
        assert_eq!(a.kind, AnomalyKind::InvalidTransition);
        assert_eq!(a.sent.expect("settled").load_stop, Some(2));
        let a = settled(model(true, 0), &data(0));
        assert_eq!(a.sent.expect("settled").load_stop, None);
    }
}

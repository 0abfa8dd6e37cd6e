//! The rules over cluster transactions (`docs/findings.md`, "Findings across a transaction's
//! partitions"). Kafka's coordinator writes the same marker type, for the same producer id
//! and epoch, to every partition of a transaction (`TransactionMarkerChannelManager`, one
//! `WriteTxnMarkers` entry per partition of `TransactionMetadata.topicPartitions`), and
//! records `Complete*` only once every one was written
//! (`TransactionCoordinator.sendTxnMarkersCallback` → `completeTransitionTo`).

use super::Joined;
use super::group::Grouping;
use super::input::Domain;
use super::{ClusterTxn, ClusterTxnPart, Outcome, Placed, Target, TxnOptions, unread};
use crate::cluster::coordinator::model::{CoordModel, CoordTxn};
use crate::cluster::coordinator::{is_two_phase_commit, prepare_limit_ms};
use crate::finding::{Finding, Kind, Severity};
use crate::partition::state::txnrec::TxnEnd;
use crate::read::format::txnlog::TxnState;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};

const BROKER_MISMATCH: &str = "never written by a coordinator: it sends one marker type to every partition of the transaction and records the outcome first (Prepare*); brokers append whatever marker they receive and never compare partitions, so read_committed consumers deliver the committed partitions' records and skip the aborted ones";
const BROKER_MISSING: &str = "the partition's last stable offset stays at the transaction's first offset until a marker arrives; the coordinator believes the transaction finished and will not send it again (it re-sends markers only for Prepare* transactions on load), so read_committed consumers of this partition are stuck";
const BROKER_ABSORBED: &str = "the partition kept the earlier transaction open (ProducerStateManager ends a producer's transaction only at a marker) until the later transaction's marker closed it: its last stable offset stayed at the earlier data until then, and read_committed consumers then got the earlier records with the later transaction's outcome; the coordinator will not send the lost marker again (it re-sends markers only for Prepare* transactions on load)";
const BROKER_UNLISTED: &str = "the coordinator writes markers only to the partitions its transaction lists: data of the transaction on another partition is never closed by it (before KIP-890 a produce could race AddPartitionsToTxn; TV2 brokers verify the partition with the coordinator before appending)";
const BROKER_PREPARE: &str = "the coordinator keeps re-sending the markers (and re-sends them on every coordinator load) until every partition has acknowledged them; the producer cannot start its next transaction (CONCURRENT_TRANSACTIONS) and the partitions without a marker keep their last stable offset at the transaction's data";

/// `ev` with `two_phase_commit: true` for a two-phase-commit transaction's timeout.
fn two_phase_commit(timeout_ms: i32, mut ev: Value) -> Value {
    if let (true, Value::Object(m)) = (is_two_phase_commit(timeout_ms), &mut ev) {
        m.insert("two_phase_commit".into(), json!(true));
    }
    ev
}

fn txn_json(t: &ClusterTxn) -> Value {
    serde_json::to_value(t).unwrap_or(Value::Null)
}

fn tp(p: &ClusterTxnPart) -> String {
    format!("{}-{}", p.topic, p.partition)
}

/// Lower a finding grouped by marker order: the grouping is an assumption made without
/// the coordinator's record of the transaction, which batches of the domain's coordinator
/// logs (`logs`) that were not read may hold ([`unread::qualify`]).
fn lower_if_guessed(inputs: &Joined<'_>, logs: &[usize], f: Finding, g: Grouping) -> Finding {
    if g == Grouping::MarkerOrder {
        let mut f = f.severity(Severity::Warning);
        f.message.push_str(
            " (grouped by marker order and time without the coordinator's record: an assumption)",
        );
        unread::qualify(
            &mut f,
            &unread::of_logs(inputs, logs),
            "the coordinator's record of this transaction",
        );
        f
    } else {
        f
    }
}

/// A hanging transaction the finding explains: `(topic, partition, producer id, first offset)`.
pub type HangingRef = (std::sync::Arc<str>, i32, i64, i64);

/// The rules over one cluster transaction: `transaction_outcome_mismatch`,
/// `transaction_marker_missing`, `transaction_partition_unlisted`. `logs`: the domain's
/// coordinator logs (indices into `inputs.coordinator`).
pub fn per_txn(
    inputs: &Joined<'_>,
    logs: &[usize],
    t: &ClusterTxn,
    opts: &TxnOptions,
) -> Vec<Placed> {
    let mut out = Vec::new();
    if t.outcome == Outcome::Mixed {
        out.extend(mismatch(inputs, logs, t));
    }
    open_parts(inputs, logs, t, opts, &mut out);
    out
}

/// Qualify the [`per_txn`] findings of a domain without a cluster id: the join rests on
/// the log dir holding every partition.
pub fn qualify_for_domain(domain: &Domain, found: &mut [Placed]) {
    if let Domain::LogDir(dir) = domain {
        for p in found {
            let f = &mut p.finding;
            if f.severity == Severity::Error {
                f.severity = Severity::Warning;
            }
            f.message.push_str(&format!(
                " (cluster unknown: no cluster.id in meta.properties; joined within the log dir {dir})"
            ));
        }
    }
}

/// The coordinator transactions `transaction_stuck_in_prepare` reports, in report order:
/// the latest transaction of each id (per coordinator log) when it is Prepare* and older
/// than its timeout + 5 min at its log's reference time (`prepare_limit_ms`: a
/// two-phase-commit transaction, which has no timeout, gets 15 + 5 min).
pub fn stuck_candidates(inputs: &Joined<'_>, coord: &[CoordTxn]) -> Vec<usize> {
    let mut latest: BTreeMap<(usize, &str), usize> = BTreeMap::new();
    for (i, c) in coord.iter().enumerate() {
        let e = latest.entry((c.log, &*c.transactional_id)).or_insert(i);
        if coord[*e].last_record_offset < c.last_record_offset {
            *e = i;
        }
    }
    latest
        .into_values()
        .filter(|&ci| {
            let c = &coord[ci];
            // A tombstone ended the id's history: the coordinator's load drops it and
            // re-sends nothing.
            if c.removed || !matches!(c.state, TxnState::PrepareCommit | TxnState::PrepareAbort) {
                return false;
            }
            let log = &inputs.coordinator[c.log];
            let age = log.ref_time_ms.saturating_sub(c.last_update_ms);
            age > prepare_limit_ms(c.timeout_ms)
        })
        .collect()
}

fn mismatch(inputs: &Joined<'_>, logs: &[usize], t: &ClusterTxn) -> Option<Placed> {
    let coordinator_commit = t.coordinator.as_ref().and_then(|c| match c.state {
        TxnState::PrepareCommit | TxnState::CompleteCommit => Some(true),
        TxnState::PrepareAbort | TxnState::CompleteAbort => Some(false),
        _ => None,
    });
    let wrong = |p: &&ClusterTxnPart| match coordinator_commit {
        Some(true) => p.end == TxnEnd::Abort,
        Some(false) => p.end == TxnEnd::Commit,
        None => p.end == TxnEnd::Abort,
    };
    let at = t.partitions.iter().find(wrong).or(t.partitions.first())?;
    let of =
        |e: TxnEnd| -> Vec<String> { t.partitions.iter().filter(|p| p.end == e).map(tp).collect() };
    let (commits, aborts) = (of(TxnEnd::Commit), of(TxnEnd::Abort));
    let f = Finding::new(
        Kind::TransactionOutcomeMismatch,
        &at.topic,
        at.partition,
        format!(
            "transaction of producer {} epoch {}{} committed on {} and aborted on {}: read_committed consumers see only part of it",
            t.producer_id,
            t.producer_epoch,
            t.transactional_id
                .as_ref()
                .map(|i| format!(" (transactional id {i})"))
                .unwrap_or_default(),
            commits.join(", "),
            aborts.join(", ")
        ),
    )
    .offset(at.first_offset)
    .producer(t.producer_id, at.producer_epoch)
    .evidence(json!({
        "grouping": t.grouping.name(),
        "commit_partitions": commits,
        "abort_partitions": aborts,
        "coordinator_outcome": coordinator_commit.map(|c| if c { "commit" } else { "abort" }),
        "transaction": txn_json(t),
    }))
    .broker(BROKER_MISMATCH)
    .remediation(
        "the transaction's atomicity is broken on disk: find which outcome the application intended (the coordinator's record, the producer's logs), then reprocess the affected records downstream; look for a second coordinator (split brain, zombie coordinator with a stale coordinator epoch) or a tool that wrote markers by hand",
    );
    Some(Placed {
        target: Target::Partition(at.input),
        finding: lower_if_guessed(inputs, logs, f, t.grouping),
        causes_hanging: Vec::new(),
    })
}

/// `transaction_marker_missing` and `transaction_partition_unlisted` for the open parts of
/// a transaction the coordinator (or its other partitions' markers) shows finished.
fn open_parts(
    inputs: &Joined<'_>,
    logs: &[usize],
    t: &ClusterTxn,
    opts: &TxnOptions,
    out: &mut Vec<Placed>,
) {
    // Almost every transaction is closed everywhere: nothing below to build for it.
    if t.partitions.iter().all(|p| p.end != TxnEnd::Open) {
        return;
    }
    let listed: Option<BTreeSet<&str>> = t
        .coordinator
        .as_ref()
        .and_then(|c| c.partitions.as_ref())
        .map(|v| v.iter().map(String::as_str).collect());
    let completed = t
        .coordinator
        .as_ref()
        .is_some_and(|c| c.complete_ms.is_some());
    let last_marker = t
        .partitions
        .iter()
        .filter(|p| p.end != TxnEnd::Open)
        .map(|p| p.last_timestamp)
        .max();
    let with_marker: Vec<Value> = t
        .partitions
        .iter()
        .filter(|p| p.end != TxnEnd::Open)
        .map(|p| json!({"partition": tp(p), "marker": p.end.name(), "marker_offset": p.marker_offset}))
        .collect();
    for p in t.partitions.iter().filter(|p| p.end == TxnEnd::Open) {
        let input = &inputs.partitions[p.input];
        let name = tp(p);
        let hanging = vec![(p.topic.clone(), p.partition, t.producer_id, p.first_offset)];
        if let (Some(l), Some(c)) = (&listed, &t.coordinator)
            && !l.contains(name.as_str())
        {
            let mut f = Finding::new(
                Kind::TransactionPartitionUnlisted,
                &p.topic,
                p.partition,
                format!(
                    "producer {} epoch {} has transactional data from offset {} on {name}, which the coordinator's transaction {} (state {}, in __transaction_state-{}) never listed: no marker will ever close it",
                    t.producer_id,
                    p.producer_epoch,
                    p.first_offset,
                    t.transactional_id.as_deref().unwrap_or("?"),
                    c.state,
                    c.log_partition
                ),
            )
            .offset(p.first_offset)
            .producer(t.producer_id, p.producer_epoch)
            .evidence(json!({
                "grouping": t.grouping.name(),
                "listed_partitions": c.partitions,
                "part": serde_json::to_value(p).unwrap_or(Value::Null),
                "transaction": txn_json(t),
            }))
            .broker(BROKER_UNLISTED)
            .remediation(format!(
                "abort the dangling data: `{}`; upgrade clients and brokers to transaction version 2 (KIP-890), which verifies partitions before appending",
                crate::partition::state::text::abort_command(&p.topic, p.partition, p.first_offset)
            ));
            // "Never listed": a later Ongoing/Prepare record of this transaction would
            // list it (each lists every partition added so far).
            if let Some(log) = inputs.coordinator.get(c.log) {
                let unread = unread::of_log(log, |u| u.may_follow(c.first_record_offset));
                unread::settle(
                    &mut f,
                    &unread,
                    "a later record of this transaction listing the partition",
                );
            }
            out.push(Placed {
                target: Target::Partition(p.input),
                finding: f,
                causes_hanging: hanging,
            });
            continue;
        }
        let aged =
            last_marker.is_some_and(|m| input.ref_time_ms.saturating_sub(m) > opts.marker_grace_ms);
        if !(completed || aged) {
            continue;
        }
        let why = if completed {
            let c = t.coordinator.as_ref().map(|c| c.state.name()).unwrap_or("");
            format!("the coordinator recorded {c}")
        } else {
            format!(
                "its markers reached {} more than {} min before the reference time",
                with_marker.len(),
                opts.marker_grace_ms / 60_000
            )
        };
        let f = Finding::new(
            Kind::TransactionMarkerMissing,
            &p.topic,
            p.partition,
            format!(
                "transaction of producer {} epoch {}{} finished ({why}) but no marker reached {name}, where its data starts at offset {}: the last stable offset is stuck there",
                t.producer_id,
                p.producer_epoch,
                t.transactional_id
                    .as_ref()
                    .map(|i| format!(" (transactional id {i})"))
                    .unwrap_or_default(),
                p.first_offset
            ),
        )
        .offset(p.first_offset)
        .producer(t.producer_id, p.producer_epoch)
        .evidence(json!({
            "grouping": t.grouping.name(),
            "coordinator_completed": completed,
            "partitions_with_marker": with_marker,
            "last_marker_timestamp": last_marker,
            "reference_time_ms": input.ref_time_ms,
            "part": serde_json::to_value(p).unwrap_or(Value::Null),
            "transaction": txn_json(t),
        }))
        .broker(BROKER_MISSING)
        .remediation(format!(
            "write the missing marker: `{}` (an ABORT: a COMMIT cannot be written by hand); if the transaction committed elsewhere, its records on this partition are lost to read_committed consumers — reprocess them",
            crate::partition::state::text::abort_command(&p.topic, p.partition, p.first_offset)
        ));
        out.push(Placed {
            target: Target::Partition(p.input),
            finding: lower_if_guessed(inputs, logs, f, t.grouping),
            causes_hanging: hanging,
        });
    }
}

/// The partitions of a Prepare* transaction's data, by marker.
struct Marked {
    with_marker: Vec<serde_json::Value>,
    without_marker: Vec<serde_json::Value>,
    /// `(topic, partition, producer, first offset)` of the parts left open.
    hanging: Vec<(std::sync::Arc<str>, i32, i64, i64)>,
    /// How many parts hold the other marker than the one the coordinator sends.
    opposite: usize,
}

/// Sort `mine`'s parts by marker. The coordinator sends a Prepare* state's own result
/// (`TransactionMarkerChannelManager.addTxnMarkersToSend`); the other marker on a partition
/// came from elsewhere (an administrator's `kafka-transactions.sh abort`, another fault).
fn marked(c: &CoordTxn, mine: &[ClusterTxn]) -> Marked {
    let sent = if c.state == TxnState::PrepareCommit {
        TxnEnd::Commit
    } else {
        TxnEnd::Abort
    };
    let mut m = Marked {
        with_marker: Vec::new(),
        without_marker: Vec::new(),
        hanging: Vec::new(),
        opposite: 0,
    };
    for t in mine {
        for p in &t.partitions {
            if p.end == TxnEnd::Open {
                m.without_marker
                    .push(json!({"partition": tp(p), "first_offset": p.first_offset}));
                m.hanging
                    .push((p.topic.clone(), p.partition, t.producer_id, p.first_offset));
            } else {
                if p.end != sent {
                    m.opposite += 1;
                }
                m.with_marker.push(json!({"partition": tp(p), "marker": p.end.name(), "marker_offset": p.marker_offset}));
            }
        }
    }
    m
}

/// `transaction_stuck_in_prepare`: the latest transaction of an id is Prepare* and older
/// than its timeout + 5 min at the coordinator log's reference time. `candidates` are
/// [`stuck_candidates`]; `matched` holds, per candidate, the cluster transactions grouped
/// with it, in grouping order.
pub fn stuck_in_prepare(
    inputs: &Joined<'_>,
    domain: &Domain,
    chosen: &[usize],
    candidates: &[usize],
    matched: &BTreeMap<usize, Vec<ClusterTxn>>,
    coord: &[CoordTxn],
    out: &mut Vec<Placed>,
) {
    let present: BTreeSet<(String, i32)> = chosen
        .iter()
        .map(|&i| {
            (
                inputs.partitions[i].topic.clone(),
                inputs.partitions[i].partition,
            )
        })
        .collect();
    for &ci in candidates {
        let c = &coord[ci];
        let log = &inputs.coordinator[c.log];
        let age = log.ref_time_ms.saturating_sub(c.last_update_ms);
        let mine: &[ClusterTxn] = matched.get(&ci).map_or(&[], Vec::as_slice);
        let Marked {
            with_marker,
            without_marker,
            hanging,
            opposite,
        } = marked(c, mine);
        let seen: BTreeSet<String> = mine
            .iter()
            .flat_map(|t| t.partitions.iter().map(tp))
            .collect();
        let (mut no_data, mut absent) = (Vec::new(), Vec::new());
        for (t, p) in c.partitions.iter().flat_map(|s| s.iter()) {
            let name = format!("{t}-{p}");
            if seen.contains(&name) {
                continue;
            }
            if present.contains(&(t.clone(), *p)) {
                no_data.push(name);
            } else {
                absent.push(name);
            }
        }
        let what = if c.state == TxnState::PrepareCommit {
            "PrepareCommit"
        } else {
            "PrepareAbort"
        };
        // Every listed partition read, each with the marker: the markers were written and
        // the completion lost (KAFKA-16352: `TransactionMarkerChannelManager.
        // removeMarkersForTxn` dropped a reloaded transaction's pending completion, so
        // `maybeWriteTxnCompletion` never ran), not the markers.
        let all_marked = !with_marker.is_empty()
            && opposite == 0
            && without_marker.is_empty()
            && no_data.is_empty()
            && absent.is_empty();
        let cause = if opposite > 0 {
            "a listed partition holds the opposite marker, which this coordinator never sends for its Prepare state (an administrator's abort, or another fault): its own markers were not delivered there"
        } else if all_marked {
            "every listed partition holds the marker: the markers were written and the coordinator never wrote the Complete record (KAFKA-16352 class: the completion was lost, not the markers)"
        } else if without_marker.is_empty() {
            "markers not confirmed"
        } else {
            "markers not delivered"
        };
        let mut f = Finding::new(
            Kind::TransactionStuckInPrepare,
            super::TRANSACTION_STATE_TOPIC,
            log.partition,
            format!(
                "transactional id {} (producer {} epoch {}) has been in {what} since {} ms ({} min before the reference time, {}) with no Complete record: {cause}; {} listed partition(s) in the inputs have the marker, {} do not",
                c.transactional_id,
                c.producer_id,
                c.end_epoch.unwrap_or(c.data_epoch),
                c.last_update_ms,
                age / 60_000,
                if is_two_phase_commit(c.timeout_ms) {
                    "a two-phase-commit transaction, which has no timeout".to_string()
                } else {
                    format!("timeout {} s", c.timeout_ms / 1000)
                },
                with_marker.len(),
                without_marker.len() + no_data.len()
            ),
        )
        .offset(c.prepare_offset.unwrap_or(c.last_record_offset))
        .producer(c.producer_id, c.end_epoch.unwrap_or(c.data_epoch))
        .evidence(two_phase_commit(c.timeout_ms, json!({
            "domain": domain,
            "transactional_id": c.transactional_id,
            "state": c.state.name(),
            "last_update_ms": c.last_update_ms,
            "reference_time_ms": log.ref_time_ms,
            "age_ms": age,
            "timeout_ms": c.timeout_ms,
            "listed_partitions": c.partitions.as_ref().map(|s| s.iter().map(|(t, p)| format!("{t}-{p}")).collect::<Vec<_>>()),
            "partitions_with_marker": with_marker,
            "partitions_without_marker": without_marker,
            "partitions_without_transaction_data": no_data,
            "partitions_not_in_inputs": absent,
            "client_transaction_version": c.client_transaction_version,
        })))
        .broker(BROKER_PREPARE)
        .remediation(if all_marked {
            format!(
                "the markers are on every partition: a coordinator that loads {}-{} again re-sends them and then writes the Complete record (TransactionStateManager's load hands a Prepare* transaction to TransactionMarkerChannelManager) — move that partition's leadership or restart its leader, on brokers with the KAFKA-16352 fix (3.8.0) so the completion is not dropped again; {}",
                super::TRANSACTION_STATE_TOPIC,
                log.partition,
                crate::partition::state::text::describe_command(&c.transactional_id)
            )
        } else {
            format!(
                "find why the markers are not acknowledged (a partition offline or without leader, a broker rejecting them — KAFKA-19999 class livelock under TV2): check the coordinator broker's log for WriteTxnMarkers errors; {}",
                crate::partition::state::text::describe_command(&c.transactional_id)
            )
        });
        // "No Complete record": a batch not read past the Prepare record may hold it.
        unread::settle(
            &mut f,
            &unread::of_log(log, |u| u.may_follow(c.last_record_offset)),
            "its Complete record",
        );
        out.push(Placed {
            target: Target::Coordinator(c.log),
            finding: f,
            causes_hanging: hanging,
        });
    }
}

/// `transaction_marker_missing` / `transaction_partition_unlisted` for the parts of `g`
/// whose data began in an earlier coordinator transaction that wrote no marker to their
/// partition ([`super::group::Absorbed`]): the partition kept that transaction open
/// (`ProducerStateManager` closes a producer's transaction only at a marker) until the
/// marker of `g`'s transaction closed it with `g`'s outcome. `logs`: the coordinator's
/// models (what [`CoordTxn::log`] indexes).
pub fn absorbed(
    parts: &[super::input::PartitionTxns],
    logs: &[CoordModel],
    g: &super::group::Group,
    coord: &[CoordTxn],
) -> Vec<Placed> {
    let later = g.coord.and_then(|i| coord.get(i));
    g.absorbed
        .iter()
        .filter_map(|a| {
            let p = parts.get(a.member.input)?;
            let r = p.txns.get(a.member.rec)?;
            let earlier = coord.get(a.coord)?;
            let name = format!("{}-{}", p.topic, p.partition);
            let id = &earlier.transactional_id;
            let closed_by = format!(
                "the {} marker at offset {} (epoch {}) of the id's later transaction{}",
                r.end.name(),
                r.marker_offset,
                r.marker_epoch,
                later
                    .map(|c| format!(" started at {} ms", c.start_ms))
                    .unwrap_or_default()
            );
            let earlier_json = json!({
                "transactional_id": &**id,
                "producer_id": earlier.producer_id,
                "data_epoch": earlier.data_epoch,
                "end_epoch": earlier.end_epoch,
                "state": earlier.state.name(),
                "log_partition": earlier.log_partition,
                "first_record_offset": earlier.first_record_offset,
                "start_ms": earlier.start_ms,
                "prepare_ms": earlier.prepare_ms,
                "complete_ms": earlier.complete_ms,
                "listed_partitions": earlier.partitions,
            });
            let evidence = json!({
                "grouping": Grouping::CoordinatorRecord.name(),
                "coordinator_completed": true,
                "proven_by_epoch": a.by_epoch,
                "compacted": p.compacted,
                "earlier_transaction": earlier_json,
                "part": serde_json::to_value(r).unwrap_or(Value::Null),
            });
            let f = if a.listed {
                let data = if a.by_epoch {
                    format!("its data from offset {} (epoch {}) stayed open until", r.first_offset, r.producer_epoch)
                } else {
                    format!("the partition's transaction from offset {} (if the lost marker closed data) stayed open until", r.first_offset)
                };
                Finding::new(
                    Kind::TransactionMarkerMissing,
                    &p.topic,
                    p.partition,
                    format!(
                        "transaction of producer {} epoch {} (transactional id {id}) finished (the coordinator recorded {}) but no marker reached {name}: {data} {closed_by}, which gave it that transaction's outcome{}",
                        earlier.producer_id,
                        earlier.data_epoch,
                        earlier.state.name(),
                        if !a.by_epoch && p.compacted.is_none() {
                            "; the topic's cleanup policy is unknown: if it is compacted, the log cleaner may have removed an empty transaction's marker (then nothing is wrong)"
                        } else {
                            ""
                        }
                    ),
                )
                .severity(match (a.by_epoch, p.compacted) {
                    (true, _) => Severity::Error,
                    // Compaction may have removed an empty transaction's marker: unproven.
                    (false, None) => Severity::Info,
                    (false, Some(_)) => Severity::Warning,
                })
                .broker(BROKER_ABSORBED)
                .remediation("the records of the earlier transaction on this partition got the later transaction's outcome: check them against the coordinator's outcome and reprocess downstream if they differ; find why the coordinator's marker was not written (a partition leader refusing WriteTxnMarkers, a truncated replica)")
            } else {
                Finding::new(
                    Kind::TransactionPartitionUnlisted,
                    &p.topic,
                    p.partition,
                    format!(
                        "producer {} has transactional data from offset {} (epoch {}) on {name}, which the coordinator's transaction at that epoch (transactional id {id}, state {}) never listed: no marker of its own closed it; {closed_by} did",
                        r.producer_id,
                        r.first_offset,
                        r.producer_epoch,
                        earlier.state.name()
                    ),
                )
                .broker(BROKER_UNLISTED)
                .remediation("the records on this partition got a later transaction's outcome: check them against the coordinator's outcome of the transaction that wrote them; upgrade clients and brokers to transaction version 2 (KIP-890), which verifies partitions before appending")
            };
            let mut f = f
                .offset(r.first_offset)
                .producer(r.producer_id, r.producer_epoch)
                .evidence(evidence);
            // "Never listed": a later Ongoing/Prepare record of the earlier transaction
            // would list it (each lists every partition added so far).
            if let (false, Some(log)) = (a.listed, logs.get(earlier.log)) {
                let unread = unread::of_log(log, |u| u.may_follow(earlier.first_record_offset));
                let what = "a later record of the earlier transaction listing the partition";
                unread::settle(&mut f, &unread, what);
            }
            Some(Placed {
                target: Target::Partition(a.member.input),
                finding: f,
                causes_hanging: Vec::new(),
            })
        })
        .collect()
}

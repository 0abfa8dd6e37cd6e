//! The consumer findings: each committed offset held against its data partition, and each
//! transactional offset commit left pending in `__consumer_offsets`.

use super::lineage::{EpochCase, EpochEnd};
use super::view::{ConsumerRow, ConsumerView, Hanging, PartitionState, PendingCommit};
use crate::cluster::report::ScanReport;
use crate::finding::evidence::{PendingJoint, PendingOffset};
use crate::finding::{Finding, Kind, Severity};
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// The partition findings that may explain a log end below a committed offset (the log
/// lost records the group had read): recovery truncations, a high watermark above the
/// log end, replicas that diverge, leader epochs that go back.
pub(super) const TRUNCATION_CAUSES: &[Kind] = &[
    Kind::TruncatedBatch,
    Kind::CrcMismatch,
    Kind::InvalidBatch,
    Kind::CheckpointInconsistent,
    Kind::ReplicaDivergence,
    Kind::LeaderEpochRegression,
    Kind::LeaderEpochCheckpointMismatch,
];

const STALL: &str = "consumer: none — not a producer error; read_committed consumers stall silently at the last stable offset (no exception; lag grows)";

/// Every consumer finding of `view`, keyed by the index (in `report`) of the partition it
/// names; `release`: the one `verify --broker-version` states, which decides where the
/// coordinator's load of an offsets partition stops ([`load_failure_of`]).
pub fn findings(
    view: &ConsumerView,
    report: &ScanReport,
    release: Option<crate::partition::recovery::BrokerVersion>,
) -> BTreeMap<usize, Vec<Finding>> {
    let mut out: BTreeMap<usize, Vec<Finding>> = BTreeMap::new();
    for r in &view.rows {
        let Some(d) = &r.data else { continue };
        if d.partially_read || r.committed_offset < 0 {
            continue;
        }
        let mut found = Vec::new();
        if let Some(f) = other_incarnation(r, d) {
            // The commit is not this log's: judging it against this log's offsets and
            // epochs says nothing.
            found.push(f);
        } else if let Some(f) = beyond_log_end(r, d, report) {
            found.push(f);
        } else if let Some(f) = below_log_start(r, d) {
            found.push(f);
        } else {
            found.extend(blocked(r, d));
            found.extend(epoch_unknown(r, d, report));
            found.extend(past_epoch_end(r, d, report));
        }
        if !found.is_empty() {
            if let Some(f) = load_failure_of(report, r, d, release) {
                for x in &mut found {
                    qualify_unserved(x, f, r);
                }
            }
            out.entry(d.index).or_default().extend(found);
        }
    }
    let mut hanging: std::collections::HashMap<usize, Vec<Hanging>> = Default::default();
    for p in &view.pending {
        let h = hanging
            .entry(p.index)
            .or_insert_with(|| super::view::hanging_of(report, p.index));
        if let Some(f) = pending(p, h) {
            out.entry(p.index).or_default().push(f);
        }
    }
    out
}

/// What every consumer finding's evidence holds: the group, its commit, where the group
/// lives, and the partition as scanned.
fn base_evidence(r: &ConsumerRow, d: &PartitionState) -> serde_json::Map<String, Value> {
    let v = json!({
        "group": r.group_id,
        "group_type": r.group_type,
        "committed": {
            "offset": r.committed_offset,
            "leader_epoch": r.committed_leader_epoch,
            "commit_timestamp": r.commit_timestamp,
            "metadata": r.metadata,
            "offsets_partition": r.offsets_partition,
            "record_offset": r.commit_record_offset,
        },
        "coordinator": r.coordinator,
        "partition": {
            "path": d.path,
            "copies": d.copies,
            "log_start_offset": d.log_start_offset,
            "log_end_offset": d.log_end_offset,
            "last_stable_offset": d.last_stable_offset,
            "high_watermark": d.high_watermark,
        },
    });
    match v {
        Value::Object(m) => m,
        _ => serde_json::Map::new(),
    }
}

fn consumer_finding(
    kind: Kind,
    r: &ConsumerRow,
    d: &PartitionState,
    message: String,
    extra: Value,
) -> Finding {
    let mut ev = base_evidence(r, d);
    if let Value::Object(m) = extra {
        ev.extend(m);
    }
    Finding::new(kind, &r.topic, r.partition, message)
        .offset(r.committed_offset)
        .evidence(Value::Object(ev))
        .group(r.group_id.clone())
}

/// What the consumer does with a committed position the log no longer covers, by the
/// commit's leader epoch: `SubscriptionState.maybeCompleteValidation` after an
/// OffsetsForLeaderEpoch answer, or the fetch's OFFSET_OUT_OF_RANGE.
fn validation(r: &ConsumerRow, d: &PartitionState, log_end: i64) -> (Value, String, &'static str) {
    let c = r.committed_offset;
    let Some(epoch) = r.committed_leader_epoch else {
        return (
            json!({
                "path": "out_of_range",
                "kafka": "FetchCollector (OFFSET_OUT_OF_RANGE) → SubscriptionState.requestOffsetReset",
                "with_reset_policy": "auto.offset.reset decides: latest resumes at the log end then (records written before the reset are skipped), earliest re-reads from the log start",
                "without_reset_policy": "OffsetOutOfRangeException",
                "once_log_end_passes_commit": format!("the fetch at {c} succeeds: the records in [{log_end}, {c}) are skipped silently"),
            }),
            format!(
                "the commit carries no leader epoch: the fetch at {c} is out of range and auto.offset.reset decides (none: OffsetOutOfRangeException); once the log end passes {c}, the records in [{log_end}, {c}) are skipped silently"
            ),
            CLIENT_OUT_OF_RANGE,
        );
    };
    let answer: Option<EpochEnd> = d
        .lineage
        .as_ref()
        .filter(|l| !l.entries.is_empty())
        .and_then(|l| l.answer(epoch, log_end));
    match answer {
        Some(a) if a.is_undefined() => (
            json!({
                "path": "leader_epoch",
                "kafka": "SubscriptionState.maybeCompleteValidation (OffsetsForLeaderEpoch)",
                "committed_leader_epoch": epoch,
                "epoch_end": a,
                "with_reset_policy": "reset by auto.offset.reset (the epoch end is undefined)",
                "without_reset_policy": "LogTruncationException without a divergent offset",
            }),
            format!(
                "its validation (OffsetsForLeaderEpoch, epoch {epoch}) gets an undefined end offset: the position is reset by auto.offset.reset, or LogTruncationException without a policy"
            ),
            CLIENT_UNDEFINED_END,
        ),
        Some(a) => (
            json!({
                "path": "leader_epoch",
                "kafka": "SubscriptionState.maybeCompleteValidation (OffsetsForLeaderEpoch)",
                "committed_leader_epoch": epoch,
                "epoch_end": a,
                "with_reset_policy": format!("seek to {} (epoch {}'s end on this copy)", a.end_offset, a.epoch),
                "without_reset_policy": format!("LogTruncationException with divergent offset {} (epoch {})", a.end_offset, a.epoch),
            }),
            format!(
                "its validation (OffsetsForLeaderEpoch, epoch {epoch}) finds the epoch ends at {}: with a reset policy the consumer moves back there, without one it raises LogTruncationException",
                a.end_offset
            ),
            CLIENT_EPOCH_END,
        ),
        None => (
            json!({
                "path": "leader_epoch",
                "kafka": "SubscriptionState.maybeCompleteValidation (OffsetsForLeaderEpoch)",
                "committed_leader_epoch": epoch,
                "epoch_end": Value::Null,
                "with_reset_policy": "seek to the end of the epoch on the current leader (no leader-epoch lineage of this copy in the inputs)",
                "without_reset_policy": "LogTruncationException",
            }),
            format!(
                "its validation (OffsetsForLeaderEpoch, epoch {epoch}) moves it back to the end of that epoch on the leader, or raises LogTruncationException without a reset policy"
            ),
            CLIENT_EPOCH_END,
        ),
    }
}

/// The consumer's side of each validation answer (`SubscriptionState.maybeCompleteValidation`,
/// `OffsetFetcherTest`'s undefined-epoch cases; the fetch's OFFSET_OUT_OF_RANGE).
const CLIENT_OUT_OF_RANGE: &str = "consumer: OffsetOutOfRangeException (auto.offset.reset=none) — not a producer error; with a policy the position is reset (latest: records skipped; earliest: re-read); once the log end passes the commit, records are skipped silently";
const CLIENT_EPOCH_END: &str = "consumer: LogTruncationException (without a reset policy) — not a producer error; with auto.offset.reset set the position moves back to the epoch's end and the records after it are read again";
const CLIENT_UNDEFINED_END: &str = "consumer: LogTruncationException without a divergent offset (without a reset policy) — not a producer error; with auto.offset.reset set the position is reset by it (latest skips to the log end, earliest re-reads from the log start)";

fn beyond_log_end(r: &ConsumerRow, d: &PartitionState, report: &ScanReport) -> Option<Finding> {
    let leo = d.log_end_offset?;
    let c = r.committed_offset;
    if c <= leo {
        return None;
    }
    let (path, said, client) = validation(r, d, leo);
    let mut f = consumer_finding(
        Kind::CommittedOffsetBeyondLogEnd,
        r,
        d,
        format!(
            "group {:?} committed offset {c} on {}-{}, {} above the log end {leo}: the log lost records the group had read; {said}",
            r.group_id,
            r.topic,
            r.partition,
            c - leo
        ),
        json!({ "beyond_by": c - leo, "validation": path }),
    )
    .broker("the leader answers a fetch above its log end with OFFSET_OUT_OF_RANGE (UnifiedLog.read) and OffsetsForLeaderEpoch from its leader-epoch cache (LeaderEpochFileCache.endOffsetFor)")
    .client_error(client)
    .remediation(reset_remediation(r, leo));
    for cause in report.partition_findings(d.index) {
        if TRUNCATION_CAUSES.contains(&cause.kind) && cause.offset.is_none_or(|o| o <= c) {
            f = f.caused_by(cause.identity_key());
        }
    }
    // A consumer reads only below the leader's high watermark, and a replica that was the
    // leader or in sync checkpoints a high watermark at or above what the group read
    // (`replication-offset-checkpoint`); a recovery that cut its log leaves that checkpoint
    // above the log end (`checkpoint_inconsistent`, a cause above). One whose checkpoint is
    // below the commit too, with nothing that cut its log, is a follower behind the leader
    // the group read from (`ReplicaFetcherThread`: a follower out of the ISR lags by any
    // amount; `UnifiedLog.maybeUpdateHighWatermark` bounds its high watermark by its own log
    // end; offset commits check no log end) — or a replica that truncated to follow a new
    // leader (`UnifiedLog.truncateTo` lowers the high watermark with the log). Two
    // readings: info, both said. A log dir without `.kafka_cleanshutdown` (its broker
    // running, or not shut down cleanly: `LogManager.loadLogs` deletes the file at start)
    // adds a third: a leader, or a partition's only replica, whose host crashed and lost
    // its unflushed tail after its last checkpoint — a warning saying all three.
    if let Some(hw) = d
        .high_watermark
        .filter(|&hw| hw < c && f.caused_by.is_empty())
    {
        f.message = format!(
            "group {:?} committed offset {c} on {}-{}, {} above this copy's log end {leo}; its checkpointed high watermark {hw} is below the commit too and nothing on it shows a cut: a follower behind the leader the group read from (it never held those offsets as committed), or a replica that gave them up when it followed a new leader (judge by the partition's other replicas or the metadata log)",
            r.group_id,
            r.topic,
            r.partition,
            c - leo
        );
        f.severity = Severity::Info;
        if d.unclean_shutdown {
            f.message.push_str(", or — its log dir holds no .kafka_cleanshutdown, so its broker was running or did not shut down cleanly — a leader or only replica whose host crashed and lost its unflushed tail after its last checkpoint");
            f.severity = Severity::Warning;
        }
        if let Value::Object(m) = &mut f.evidence {
            m.insert(
                "replica_behind".into(),
                json!({"high_watermark": hw, "no_clean_shutdown_file": d.unclean_shutdown}),
            );
        }
        f.client_error = Some(
            "consumer: none from this copy — the group fetches from the partition's leader; not a producer error".into(),
        );
        f.remediation = None;
    }
    Some(f)
}

fn below_log_start(r: &ConsumerRow, d: &PartitionState) -> Option<Finding> {
    let start = d.log_start_offset?;
    let c = r.committed_offset;
    if c >= start {
        return None;
    }
    let gone = format!(
        "group {:?} committed offset {c} on {}-{}, below the log start {start}: the {} records in [{c}, {start}) were deleted (retention or DeleteRecords) before the group read them",
        r.group_id,
        r.topic,
        r.partition,
        start - c
    );
    let mut evidence = json!({
        "lost": start - c,
        "fetch": {
            "kafka": "FetchCollector (OFFSET_OUT_OF_RANGE) → SubscriptionState.requestOffsetReset",
            "with_reset_policy": "auto.offset.reset: earliest resumes at the log start, latest at the log end",
            "without_reset_policy": "OffsetOutOfRangeException",
        },
    });
    let expired = expired(r);
    let message = match &expired {
        None => gone,
        Some((at, _)) => {
            evidence["expiry"] = expiry_evidence(r, *at);
            format!(
                "{gone}; but the commit is expired at the reference time ({} past its expiry{}, with offsets.retention.minutes at its default of 7 days): a coordinator holding this load tombstones it at its first cleanup, and the group's consumer, finding no committed offset, starts where auto.offset.reset says",
                crate::partition::state::text::human_duration(r.reference_time - *at),
                match r.expiry {
                    Some(crate::partition::walked::Expiry::ExpireTimestamp(_)) =>
                        " set by the commit's expireTimestamp",
                    Some(crate::partition::walked::Expiry::EmptySince(_)) =>
                        ", counted from when the group became empty",
                    _ => ", counted from the commit time",
                }
            )
        }
    };
    let f = consumer_finding(Kind::CommittedOffsetBelowLogStart, r, d, message, evidence)
        .broker("the leader answers a fetch below its log start offset with OFFSET_OUT_OF_RANGE (UnifiedLog.read)")
        .remediation({
            let mut a = crate::escape::ShellArgs::default();
            let group = a.option("group", &r.group_id, "group", "the group id");
            format!(
                "the records are gone from this copy; restore them from another copy or a backup if the group needs them, and keep retention above the group's lag (kafka-consumer-groups.sh --bootstrap-server <broker> --describe {group}){}",
                a.suffix()
            )
        });
    Some(match expired {
        None => f.client_error(below_start_client_error(r, d)),
        Some((_, why)) => f.severity(Severity::Info).client_error(why),
    })
}

/// When the commit of `r` is expired at its copy's reference time, with
/// `offsets.retention.minutes` at its default: since when, and what the group's consumer
/// meets then (`OffsetMetadataManager.cleanupExpiredOffsets`: the coordinator tombstones the
/// offset at its first cleanup after the load).
fn expired(r: &ConsumerRow) -> Option<(i64, &'static str)> {
    let at = r
        .expiry?
        .expires_at(crate::partition::walked::DEFAULT_OFFSETS_RETENTION_MS);
    (r.reference_time >= at).then_some((
        at,
        "consumer: NoOffsetForPartitionException (auto.offset.reset=none) once the coordinator's cleanup has expired the commit — not a producer error; with a policy: earliest resumes at the log start, latest at the log end",
    ))
}

/// The evidence of an expired commit: the rule, when, against which reference time, and
/// the retention assumed.
fn expiry_evidence(r: &ConsumerRow, at: i64) -> Value {
    json!({
        "by": r.expiry,
        "expired_at": at,
        "reference_time": r.reference_time,
        "retention_ms": crate::partition::walked::DEFAULT_OFFSETS_RETENTION_MS,
        "assumes": "offsets.retention.minutes at its default (10080: 7 days); a longer retention keeps the offset, and the lost records are then what the group meets",
    })
}

/// Where a group whose commit lies above the log end resumes, set by the operator: the
/// group id, topic and partition quoted for a POSIX shell (or placeholders and a note,
/// `escape::ShellArgs`). `--reset-offsets --execute` changes nothing while the group has
/// members (`ConsumerGroupCommand` resets only an Empty or Dead group), so its consumers
/// are stopped first.
fn reset_remediation(r: &ConsumerRow, leo: i64) -> String {
    let mut a = crate::escape::ShellArgs::default();
    let group = a.option("group", &r.group_id, "group", "the group id");
    let tp = format!("{}:{}", a.topic(&r.topic), a.partition(r.partition));
    let tp = crate::escape::flag("topic", &tp);
    format!(
        "decide where the group resumes, stop the group's consumers (offsets are reset only in an Empty group), then check and set it: kafka-consumer-groups.sh --bootstrap-server <broker> {group} {tp} --reset-offsets --to-offset {leo} --dry-run, then the same with --execute instead of --dry-run (or an earlier offset to re-read){}",
        a.suffix()
    )
}

/// A commit below the log start: the fetch is out of range — unless the commit carries a
/// leader epoch above every epoch of the lineage, whose validation runs first (no fetch is
/// sent while the position awaits validation) and gets an undefined end.
fn below_start_client_error(r: &ConsumerRow, d: &PartitionState) -> &'static str {
    let undefined = r.committed_leader_epoch.is_some_and(|e| {
        d.lineage
            .as_ref()
            .filter(|l| !l.entries.is_empty())
            .and_then(|l| l.answer(e, d.log_end_offset.unwrap_or(0)))
            .is_some_and(|a| a.is_undefined())
    });
    if undefined {
        CLIENT_UNDEFINED_END
    } else {
        "consumer: OffsetOutOfRangeException (auto.offset.reset=none) — not a producer error; with a policy the position is reset: earliest resumes at the log start, latest at the end; the deleted records are lost for the group"
    }
}

fn blocked(r: &ConsumerRow, d: &PartitionState) -> Option<Finding> {
    let h: &Hanging = d.hanging.first()?;
    // The last stable offset never goes below the log start
    // (`UnifiedLog.maybeIncrementFirstUnstableOffset`): a transaction that begins below it
    // holds read_committed fetches at the log start.
    let stuck = h
        .first_offset
        .max(d.log_start_offset.unwrap_or(h.first_offset));
    let c = r.committed_offset;
    let lso = d.last_stable_offset?;
    let at = c == stuck && lso == stuck;
    if !(at || (c < stuck && c <= lso)) {
        return None;
    }
    let fix = crate::partition::state::abort_command(&r.topic, r.partition, h.first_offset);
    let behind = |o: Option<i64>| o.map(|o| o - stuck);
    let message = if at {
        format!(
            "read_committed group {:?} is stalled at {}-{} offset {c}: producer {}'s hanging transaction holds the last stable offset there ({} offsets behind it up to the log end)",
            r.group_id,
            r.topic,
            r.partition,
            h.producer_id,
            behind(d.log_end_offset).unwrap_or(0)
        )
    } else {
        format!(
            "group {:?} at {}-{} offset {c} will stall at offset {stuck} when read_committed: producer {}'s hanging transaction holds the last stable offset there",
            r.group_id, r.topic, r.partition, h.producer_id
        )
    };
    let mut f = consumer_finding(
        Kind::GroupBlockedByHangingTransaction,
        r,
        d,
        message,
        json!({
            "transaction": {"producer_id": h.producer_id, "producer_epoch": h.producer_epoch, "first_offset": h.first_offset},
            "stall_offset": stuck,
            "stalled_now": at,
            "lag_behind": {
                "high_watermark": behind(d.high_watermark),
                "log_end": behind(d.log_end_offset),
            },
            "fix_command": fix,
        }),
    )
    .broker("the leader's last stable offset stays at the first offset of the earliest open transaction (ProducerStateManager.firstUnstableOffset); a read_committed fetch returns nothing past it")
    .client_error(STALL)
    .remediation(format!(
        "confirm with kafka-transactions.sh find-hanging, then abort the transaction: {fix}"
    ))
    .caused_by(h.key.clone());
    if !at {
        f = f.severity(Severity::Info);
    }
    Some(f)
}

/// The finding where the load of the live `__consumer_offsets` partition the group's
/// commit was read from stops (in the data copy's cluster): its coordinator cannot load it,
/// so no consumer of the group is served that commit. The stop is read from that
/// partition's typed group anomalies (the first whose record fails the load: a
/// `group_load_failure` or a `group_tombstones_incomplete`), as the stated release's load
/// meets them (`partition::groups::release::for_release`, what the groups' cluster check
/// decided the findings by); a partition whose results came without them has only its
/// `group_load_failure` to show it.
fn load_failure_of<'a>(
    report: &'a ScanReport,
    r: &ConsumerRow,
    d: &PartitionState,
    release: Option<crate::partition::recovery::BrokerVersion>,
) -> Option<&'a Finding> {
    let data = &report.partitions[d.index].source;
    let k = report.partitions.iter().position(|p| {
        p.topic == crate::read::format::groups::CONSUMER_OFFSETS_TOPIC
            && p.partition == r.offsets_partition
            && p.source.copy.is_live()
            && crate::discover::identity::same_cluster(&p.source, data).is_same()
    })?;
    let findings = report.partition_findings(k);
    match &report.partitions[k].carried.cluster_inputs.group_anomalies {
        Some(anomalies) => {
            let anomalies = crate::partition::groups::release::for_release(anomalies, release);
            let stop = anomalies.iter().find(|a| a.load_fails)?.offset;
            findings.iter().find(|f| {
                matches!(
                    f.kind,
                    Kind::GroupLoadFailure | Kind::GroupTombstonesIncomplete
                ) && f.offset == Some(stop)
            })
        }
        None => findings.iter().find(|f| f.kind == Kind::GroupLoadFailure),
    }
}

/// A consumer verdict resting on a commit the coordinator cannot serve (its load of the
/// offsets partition fails: Kafka 4.x answers NOT_COORDINATOR, ≤ 3.x serves the partition
/// without its groups): what the consumer would do with the commit is not what happens
/// now — said, the finding at most a warning.
fn qualify_unserved(f: &mut Finding, load: &Finding, r: &ConsumerRow) {
    f.message.push_str(&format!(
        " — but the coordinator's load of __consumer_offsets-{} fails ({}), so the group is not served this commit while that record is in the log",
        r.offsets_partition, load.id
    ));
    if let Value::Object(m) = &mut f.evidence {
        m.insert("coordinator_load_fails".into(), json!(load.id));
    }
    if f.severity == Severity::Error {
        f.severity = Severity::Warning;
    }
    f.client_error = Some(
        "consumer: not this commit's outcome while the offsets partition does not load — Kafka 4.x answers the group's requests NOT_COORDINATOR; a ≤ 3.x coordinator serves no committed offset and the consumer resets by auto.offset.reset".into(),
    );
    f.remediation = Some(format!(
        "repair __consumer_offsets-{} first (see {}); then judge this commit again",
        r.offsets_partition, load.id
    ));
}

fn epoch_unknown(r: &ConsumerRow, d: &PartitionState, report: &ScanReport) -> Option<Finding> {
    let epoch = r.committed_leader_epoch?;
    let leo = d.log_end_offset?;
    let lineage = d.lineage.as_ref().filter(|l| !l.entries.is_empty())?;
    let a = lineage.answer(epoch, leo)?;
    if !a.case.is_unknown() {
        return None;
    }
    // The batches themselves carry the epoch: the checkpoint misses an entry
    // (`leader_epoch_checkpoint_mismatch`), so which answer a leader gives is open.
    let p = &report.partitions[d.index];
    if p.carried.leader_epochs.iter().any(|&(e, _)| e == epoch) {
        return None;
    }
    let c = r.committed_offset;
    let (severity, outcome, client) = match a.case {
        // Without the metadata log's word: the epoch was some leader's when the group
        // committed it, and a partition's epochs only grow, so the leader answering now
        // holds it — unless this copy is that leader, or the partition's history was
        // replaced (a recreated topic, a lost log). Two readings: info.
        EpochCase::AboveLatest if lineage.metadata_latest_epoch.is_none() => (
            Severity::Info,
            format!(
                "epoch {epoch} is above every epoch of this copy's lineage: either the copy is behind the partition's leader, whose cache holds the epoch (a leader's epochs only grow: the validation passes), or the partition's history was replaced (a topic recreated under the same name, a lost log) and the end offset is undefined, so the consumer resets by auto.offset.reset (LogTruncationException without a policy)"
            ),
            "consumer: none if the partition's leader holds the epoch (the validation passes); LogTruncationException (without a reset policy) if its history was replaced — not a producer error",
        ),
        EpochCase::AboveLatest => (
            Severity::Warning,
            format!(
                "epoch {epoch} is above every epoch of the lineage{}: the end offset is undefined and the consumer resets by auto.offset.reset (LogTruncationException without a policy)",
                lineage
                    .metadata_latest_epoch
                    .map(|m| format!(
                        " and above epoch {m}, the newest the metadata log gave the partition"
                    ))
                    .unwrap_or_default()
            ),
            "consumer: LogTruncationException (without a reset policy) — not a producer error; with auto.offset.reset set the position is reset by it",
        ),
        _ if c > a.end_offset => (
            Severity::Warning,
            format!(
                "epoch {epoch} maps to epoch {} ending at {}, below the committed offset: truncation is detected and the consumer moves back to {} (re-reading {} records), or raises LogTruncationException without a reset policy",
                a.epoch,
                a.end_offset,
                a.end_offset,
                c - a.end_offset
            ),
            "consumer: LogTruncationException (without a reset policy) — not a producer error; with auto.offset.reset set the position moves back to the mapped epoch's end and records are read again",
        ),
        _ => (
            Severity::Info,
            format!(
                "epoch {epoch} maps to epoch {} ending at {}, at or above the committed offset: validation passes",
                a.epoch, a.end_offset
            ),
            "consumer: none — not a producer error; the validation passes",
        ),
    };
    let case = match a.case {
        EpochCase::AboveLatest => "above the newest epoch",
        EpochCase::BelowOldest => "below the oldest epoch",
        _ => "in a gap of the lineage",
    };
    Some(
        consumer_finding(
            Kind::CommittedLeaderEpochUnknown,
            r,
            d,
            format!(
                "group {:?} committed offset {c} on {}-{} with leader epoch {epoch}, {case} ({}): {outcome}",
                r.group_id, r.topic, r.partition, lineage.from
            ),
            json!({
                "case": a.case,
                "epoch_end": a,
                "lineage": lineage,
                "kafka": "LeaderEpochFileCache.endOffsetFor; SubscriptionState.maybeCompleteValidation",
            }),
        )
        .severity(severity)
        .broker("the leader answers OffsetsForLeaderEpoch from its leader-epoch cache (LeaderEpochFileCache.endOffsetFor)")
        .client_error(client),
    )
}

/// KIP-320's truncation: the committed leader epoch is the epoch of the last record the
/// group consumed, and on this copy that epoch ends (the next one starts) below the
/// committed offset — the records of that epoch the group read at `[end, offset)` are no
/// longer in the log (a leader change truncated them; other records are there now). The
/// consumer's validation (`SubscriptionState.maybeCompleteValidation`, answered by
/// `LeaderEpochFileCache.endOffsetFor`) detects it: with a reset policy it seeks back to the
/// end and reads the records there again, without one it raises `LogTruncationException`
/// (`SubscriptionStateTest.testTruncationDetectionWithResetPolicy` / `…WithoutResetPolicy`).
/// An epoch the batches carry but the cache misses (in a gap of it, or below its oldest
/// entry) ends at the same offset whether the leader's cache holds it or not — the start of
/// the next entry above it (`LeaderEpochFileCacheTest.
/// shouldReturnNextAvailableEpochIfThereIsNoExactEpochForTheOneRequested`) — so it is
/// judged here too (`epoch_unknown` leaves it: which epoch the answer names is open).
fn past_epoch_end(r: &ConsumerRow, d: &PartitionState, report: &ScanReport) -> Option<Finding> {
    let epoch = r.committed_leader_epoch?;
    let leo = d.log_end_offset?;
    let lineage = d.lineage.as_ref().filter(|l| !l.entries.is_empty())?;
    let a = lineage.answer(epoch, leo)?;
    let c = r.committed_offset;
    let carried = || {
        let p = &report.partitions[d.index];
        p.carried.leader_epochs.iter().any(|&(e, _)| e == epoch)
    };
    let judged = match a.case {
        EpochCase::Known => true,
        EpochCase::InGap | EpochCase::BelowOldest => carried(),
        EpochCase::Latest | EpochCase::AboveLatest => false,
    };
    if !judged || a.end_offset >= c {
        return None;
    }
    let end = a.end_offset;
    Some(
        consumer_finding(
            Kind::CommittedOffsetPastEpochEnd,
            r,
            d,
            format!(
                "group {:?} committed offset {c} on {}-{} with leader epoch {epoch}, which ends at {end} on this copy ({}): the {} record(s) of epoch {epoch} the group read at [{end}, {c}) were truncated; its validation moves the consumer back to {end} and it reads other records there, or raises LogTruncationException without a reset policy",
                r.group_id,
                r.topic,
                r.partition,
                lineage.from,
                c.saturating_sub(end)
            ),
            json!({
                "epoch_end": a,
                "truncated_read": c.saturating_sub(end),
                "lineage": lineage,
                "kafka": "LeaderEpochFileCache.endOffsetFor; SubscriptionState.maybeCompleteValidation",
                "with_reset_policy": format!("seek to {end} (epoch {epoch}'s end on this copy)"),
                "without_reset_policy": format!("LogTruncationException with divergent offset {end} (epoch {epoch})"),
            }),
        )
        .broker("the leader answers OffsetsForLeaderEpoch from its leader-epoch cache (LeaderEpochFileCache.endOffsetFor): the requested epoch ends where the next one starts")
        .client_error(CLIENT_EPOCH_END)
        .remediation(format!(
            "the group read records that are gone from the log: check what it did with offsets {end}..{} and whether the replacing records need processing; the consumer resumes at {end} by itself when auto.offset.reset is set",
            c.saturating_sub(1)
        )),
    )
}

/// The commit names a topic id (`OffsetCommitValue.topicId`) that is not the data
/// partition's (`partition.metadata`): it was made for another incarnation of the topic —
/// one deleted and created again under its name, whose offsets the coordinator did not
/// delete (`OffsetMetadataManager.onPartitionsDeleted` writes their tombstones when it
/// learns of the deletion). Kafka serves it by how the offsets are fetched
/// (`OffsetMetadataManager.fetchOffsets` → `isMismatchedTopicId`,
/// `OffsetMetadataManagerTest.testFetchOffsetsWithRecreatedTopic`): a fetch naming the topic
/// id (OffsetFetch v10+) gets no offset (-1), one by name only gets this one.
fn other_incarnation(r: &ConsumerRow, d: &PartitionState) -> Option<Finding> {
    let (commit, data) = (r.commit_topic_id.as_deref()?, d.topic_id.as_deref()?);
    if commit == data {
        return None;
    }
    let c = r.committed_offset;
    Some(
        consumer_finding(
            Kind::CommittedOffsetTopicIdMismatch,
            r,
            d,
            format!(
                "group {:?} committed offset {c} on {}-{} for topic id {commit}, but the partition's topic id is {data} ({}): the commit belongs to another incarnation of the topic (deleted and created again under its name), whose offsets were not deleted with it; a consumer fetching its offsets by topic id gets none and starts per auto.offset.reset, one fetching by name resumes at {c} in a log that is not the one it read",
                r.group_id, r.topic, r.partition, d.path
            ),
            json!({
                "commit_topic_id": commit,
                "partition_topic_id": data,
                "kafka": "OffsetMetadataManager.fetchOffsets (isMismatchedTopicId)",
                "fetch_by_topic_id": "no offset (-1): auto.offset.reset decides",
                "fetch_by_name": format!("offset {c}, the other incarnation's"),
            }),
        )
        .broker("the coordinator keeps the commit with its topic id: an OffsetFetch naming the partition's topic id (v10+) is answered with no offset (-1), one by topic name with this offset (OffsetMetadataManager.fetchOffsets); deleting the topic makes the coordinator tombstone its offsets (onPartitionsDeleted), which did not happen for this one")
        .remediation({
            let mut a = crate::escape::ShellArgs::default();
            let group = a.option("group", &r.group_id, "group", "the group id");
            let tp = format!("{}:{}", a.topic(&r.topic), a.partition(r.partition));
            format!(
                "set where the group reads in the current topic: kafka-consumer-groups.sh --bootstrap-server <broker> {group} {} --reset-offsets --to-earliest --execute (or --to-offset <n>), or remove the stale commit (--delete-offsets){}",
                crate::escape::flag("topic", &tp),
                a.suffix()
            )
        }),
    )
}

/// `hanging`: the `hanging_transaction` findings of the pending commit's partition.
fn pending(p: &PendingCommit, hanging: &[Hanging]) -> Option<Finding> {
    let h = hanging.iter().find(|h| h.producer_id == p.producer_id)?;
    let fix = crate::partition::state::abort_command(
        crate::read::format::groups::CONSUMER_OFFSETS_TOPIC,
        p.offsets_partition,
        h.first_offset,
    );
    let mut f = Finding::new(
        Kind::GroupOffsetsPendingInHangingTransaction,
        crate::read::format::groups::CONSUMER_OFFSETS_TOPIC,
        p.offsets_partition,
        format!(
            "group {:?}: {} transactional offset commit(s) from offset {} belong to producer {}'s hanging transaction: the coordinator keeps them pending and answers the group's OffsetFetch with UNSTABLE_OFFSET_COMMIT",
            p.group_id,
            p.offsets.len(),
            p.first_offset,
            p.producer_id
        ),
    )
    .offset(p.first_offset)
    .evidence(json!({
        "group": p.group_id,
        "transaction": {"producer_id": h.producer_id, "producer_epoch": h.producer_epoch, "first_offset": h.first_offset},
        "fix_command": fix,
        "kafka": "OffsetMetadataManager.fetchOffsets (require_stable) → UNSTABLE_OFFSET_COMMIT; applied or dropped by replayEndTransactionMarker",
    }))
    .broker("the group coordinator holds transactional offsets pending until the transaction's marker (OffsetMetadataManager.replayEndTransactionMarker) and answers a stable OffsetFetch with UNSTABLE_OFFSET_COMMIT while any is pending")
    .client_error("consumer: UnstableOffsetCommitException (UNSTABLE_OFFSET_COMMIT) — retriable, not a producer error; the consumer retries fetching its committed offsets and never starts on these partitions")
    .remediation(format!("confirm with kafka-transactions.sh find-hanging, then abort the transaction: {fix}"))
    .caused_by(h.key.clone());
    let pending = PendingJoint {
        pending_offsets: p
            .offsets
            .iter()
            .map(|(topic, partition, offset)| PendingOffset {
                topic: topic.clone(),
                partition: *partition,
                offset: *offset,
            })
            .collect(),
    };
    crate::finding::evidence::merge(&mut f.evidence, &pending);
    f.producer_id = Some(p.producer_id);
    f.producer_epoch = h.producer_epoch;
    Some(f.group(p.group_id.clone()))
}

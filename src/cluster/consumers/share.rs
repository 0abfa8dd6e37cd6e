//! Share groups (KIP-932) against the data partitions they read: a share partition's start
//! offset, as its share coordinator's load serves it (`partition::share_state`, carried in
//! the `__share_group_state` partition's cluster inputs), past the data partition's log end:
//! `share_start_beyond_log_end`.
//!
//! `SharePartition.maybeInitialize` takes a persisted start offset as it is
//! (`startOffsetDuringInitialization`) and moves it past the acknowledged or archived
//! batches it caches from the state (`maybeUpdateCachedStateAndOffsets`). A share fetch from
//! a start past the leader's log end gets OFFSET_OUT_OF_RANGE, and
//! `ShareFetchUtils.processFetchResponse` → `SharePartition.updateCacheAndOffsets` moves the
//! start only to a log start above it: the share group receives nothing from the partition
//! until the log passes that start, and never the records written below it meanwhile. A
//! start only moves over records the group was delivered, so it never passes the log end
//! unless the log lost them (`SharePartitionTest.testMaybeInitialize`,
//! `testMaybeInitializeWhenReadStateRpcReturnsZeroAvailableRecords`).

use super::rules::TRUNCATION_CAUSES;
use crate::cluster::replicas::topic_id_in;
use crate::cluster::report::ScanReport;
use crate::discover::identity::same_cluster;
use crate::discover::layout::{Inventory, PartitionDir};
use crate::finding::{Finding, Kind, Severity};
use crate::partition::walked::ShareStart;
use serde_json::json;
use std::collections::{BTreeMap, HashMap, HashSet};

/// The findings, keyed by the index of the data partition each names.
pub(super) fn findings(report: &ScanReport, inv: &Inventory) -> BTreeMap<usize, Vec<Finding>> {
    let mut out: BTreeMap<usize, Vec<Finding>> = BTreeMap::new();
    // Per `__share_group_state` partition of a cluster, its live copy read whole with the
    // longest log: the coordinator serves its leader's log alone, and a follower's copy
    // may lag it (a share partition its leader deleted still holds a start there).
    let mut copies: Vec<usize> = (0..report.partitions.len())
        .filter(|&i| {
            let p = &report.partitions[i];
            p.topic == crate::read::format::groups::SHARE_GROUP_STATE_TOPIC
                && p.source.copy.is_live()
                && !p.partially_read
        })
        .collect();
    copies.sort_by_key(|&i| (std::cmp::Reverse(report.partitions[i].log_end_offset), i));
    let mut states: Vec<usize> = Vec::new();
    for i in copies {
        let p = &report.partitions[i];
        let seen = states.iter().any(|&k| {
            let q = &report.partitions[k];
            q.partition == p.partition && same_cluster(&q.source, &p.source).is_same()
        });
        if !seen {
            states.push(i);
        }
    }
    states.retain(|&i| {
        report.partitions[i]
            .carried
            .cluster_inputs
            .share_starts
            .is_some()
    });
    if states.is_empty() {
        return out;
    }
    // By path as the reports give it (`display`, as the consumers' view keys them).
    let dirs: HashMap<String, &PartitionDir> = (inv.partitions.iter())
        .map(|p| (p.path.display().to_string(), p))
        .collect();
    // Live data copies by (topic id, partition).
    let mut data: HashMap<(String, i32), Vec<usize>> = HashMap::new();
    for (j, r) in report.partitions.iter().enumerate() {
        if !r.source.copy.is_live() {
            continue;
        }
        let Some(id) = dirs.get(r.path.as_str()).and_then(|d| topic_id_in(inv, d)) else {
            continue;
        };
        let id = crate::read::format::checkpoint::encode_uuid(&id);
        data.entry((id, r.partition)).or_default().push(j);
    }
    let mut said: HashSet<(usize, &str)> = HashSet::new();
    for i in states {
        let co = &report.partitions[i];
        for s in co.carried.cluster_inputs.share_starts.iter().flatten() {
            let Some(j) = data_copy(report, &data, co, s) else {
                continue;
            };
            if !said.insert((j, s.group.as_str())) {
                continue;
            }
            if let Some(f) = beyond_log_end(report, inv, &dirs, (i, j), s) {
                out.entry(j).or_default().push(f);
            }
        }
    }
    out
}

/// The live copy of the share partition's data partition in the state copy's cluster with
/// the highest log end (read whole).
fn data_copy(
    report: &ScanReport,
    data: &HashMap<(String, i32), Vec<usize>>,
    co: &crate::partition::results::PartitionReport,
    s: &ShareStart,
) -> Option<usize> {
    data.get(&(s.topic_id.clone(), s.partition))?
        .iter()
        .copied()
        .filter(|&j| {
            let d = &report.partitions[j];
            same_cluster(&co.source, &d.source).is_same() && !d.partially_read
        })
        .filter(|&j| log_end(&report.partitions[j]).is_some())
        .max_by_key(|&j| (log_end(&report.partitions[j]), std::cmp::Reverse(j)))
}

/// The partition's log end as its broker keeps it (`LocalLog.logEndOffset`: the active
/// segment's next offset, `LogSegment.readNextOffset` — its base offset when it holds no
/// batch): the last batch's next offset, or the last segment's base when above it.
fn log_end(d: &crate::partition::results::PartitionReport) -> Option<i64> {
    let names = &d.carried.segment_names;
    let base = (names.len().checked_sub(1))
        .and_then(|last| names.get(last as u32))
        .and_then(|n| crate::discover::layout::parse_segment_file_name(&n).map(|(b, _)| b));
    d.log_end_offset.max(base)
}

/// `share_start_beyond_log_end` for share start `s` (from state copy `i`) on data copy `j`.
fn beyond_log_end(
    report: &ScanReport,
    inv: &Inventory,
    dirs: &HashMap<String, &PartitionDir>,
    (i, j): (usize, usize),
    s: &ShareStart,
) -> Option<Finding> {
    let d = &report.partitions[j];
    let leo = log_end(d)?;
    let start = s.effective_start;
    if start <= leo {
        return None;
    }
    let state = &report.partitions[i];
    let past = if start > s.start_offset {
        format!(
            "its start offset {} and, past the acknowledged and archived records its state holds from there, {start}",
            s.start_offset
        )
    } else {
        format!("its start offset {start}")
    };
    let mut f = Finding::new(
        Kind::ShareStartBeyondLogEnd,
        &d.topic,
        d.partition,
        format!(
            "share group {:?} resumes {}-{} at {past} ({}-{} at offset {}), {} past the log end {leo}: the log lost records the group had been delivered; its share consumers get nothing from this partition until the log passes {start}, and the records written below it meanwhile are never delivered to the group",
            s.group,
            d.topic,
            d.partition,
            state.topic,
            state.partition,
            s.state_offset,
            start - leo
        ),
    )
    .offset(start)
    .group(s.group.clone())
    .evidence(json!({
        "group": s.group,
        "topic_id": s.topic_id,
        "share_state_partition": format!("{}-{}", state.topic, state.partition),
        "state_offset": s.state_offset,
        "start_offset": s.start_offset,
        "effective_start": start,
        "log_end_offset": leo,
        "beyond_by": start - leo,
    }))
    .broker("SharePartition.maybeInitialize takes the persisted start offset as is (startOffsetDuringInitialization) and moves it past the terminal batches it caches (maybeUpdateCachedStateAndOffsets); a share fetch from past the log end gets OFFSET_OUT_OF_RANGE and SharePartition.updateCacheAndOffsets moves the start only to a log start above it")
    .client_error("share consumers: no exception and nothing from this partition until its log end passes the start; then the records below the start are skipped silently")
    .remediation(reset_remediation(&s.group, &d.topic, d.partition, leo));
    for cause in report.partition_findings(j) {
        if TRUNCATION_CAUSES.contains(&cause.kind) && cause.offset.is_none_or(|o| o <= start) {
            f = f.caused_by(cause.identity_key());
        }
    }
    // As `committed_offset_beyond_log_end`: this copy's checkpointed high watermark below
    // the start too, and nothing on it shows a cut — a follower behind the leader the group
    // read from, or one that truncated to follow a new leader; and without a clean-shutdown
    // file, a host that lost its unflushed tail as well.
    if let Some(hw) = d
        .high_watermark
        .filter(|&hw| hw < start && f.caused_by.is_empty())
    {
        let unclean = (dirs.get(d.path.as_str()))
            .and_then(|p| p.log_dir.as_deref())
            .is_some_and(|ld| inv.unclean_shutdown(ld));
        f.message.push_str(&format!(
            " — unless this copy is behind: its checkpointed high watermark {hw} is below the start too and nothing on it shows a cut (a follower behind the leader the group read from, or one that gave the records up to follow a new leader: judge by the other replicas or the metadata log)"
        ));
        f.severity = Severity::Info;
        if unclean {
            f.message.push_str(", or — its log dir holds no .kafka_cleanshutdown — a leader or only replica whose host crashed and lost its unflushed tail after its last checkpoint");
            f.severity = Severity::Warning;
        }
        if let serde_json::Value::Object(m) = &mut f.evidence {
            m.insert(
                "replica_behind".into(),
                json!({"high_watermark": hw, "no_clean_shutdown_file": unclean}),
            );
        }
        f.client_error = Some(
            "share consumers: none from this copy — the group fetches from the partition's leader"
                .into(),
        );
        f.remediation = None;
    }
    Some(f)
}

/// Reset the share group's start on the partition to the log end (`kafka-share-groups.sh`
/// resets to the earliest, the latest or a time: `ShareGroupCommandOptions`).
fn reset_remediation(group: &str, topic: &str, partition: i32, leo: i64) -> String {
    let mut a = crate::escape::ShellArgs::default();
    let group = a.option("group", group, "group", "the group id");
    let tp = format!("{}:{}", a.topic(topic), a.partition(partition));
    let tp = crate::escape::flag("topic", &tp);
    format!(
        "stop the share group's consumers (a share group's offsets are reset only while it is empty), then check and set where it resumes: kafka-share-groups.sh --bootstrap-server <broker> {group} {tp} --reset-offsets --to-latest --dry-run (the log end, {leo} in these files), then the same with --execute instead of --dry-run (--to-earliest to read again what the log holds){}",
        a.suffix()
    )
}

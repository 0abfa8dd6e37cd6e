//! Reading `__consumer_offsets` partitions for the group replay (the only I/O of
//! `groups`), the `groups` listing, and the pipeline's cluster check ([`cluster_check`]).

use super::check;
use super::model::{Group, GroupType};
use super::replay::{Input, Replay};
use crate::finding::Finding;
use crate::format::groups::CONSUMER_OFFSETS_TOPIC;
use crate::format::{self, Compression, Control, Decompressor, Records};
use crate::layout::{Inventory, PartitionDir};
use crate::results::{ScanOptions, ScanReport};
use crate::segment::{self, ReadPolicy};
use rayon::prelude::*;
use std::collections::BTreeMap;

/// Options of `klogscan groups`.
#[derive(Debug, Clone, Default)]
pub struct GroupsOptions {
    /// Only this group id.
    pub group: Option<String>,
    /// Only groups of this type.
    pub group_type: Option<GroupType>,
    /// Also list deleted groups.
    pub include_deleted: bool,
    pub max_bytes: Option<u64>,
    /// Decompression cap per batch (0: the scan's default).
    pub max_decompressed: usize,
}

/// Replay one `__consumer_offsets` partition directory: every batch in offset order,
/// transactional offset commits held until their marker. Unreadable segments and
/// batches that do not frame end the replay of that segment (the scan reports them).
pub fn replay_partition_dir(p: &PartitionDir, max_bytes: Option<u64>, max_dec: usize) -> Replay {
    let partition = p.tp.as_ref().map_or(-1, |tp| tp.partition);
    let mut r = Replay::new(partition, &p.path.display().to_string());
    let mut dec = Decompressor::new(if max_dec == 0 { 64 << 20 } else { max_dec });
    for seg in &p.segments {
        let Some(log) = &seg.log else { continue };
        let name = log
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let _ = segment::walk_entries(log, ReadPolicy::Read, max_bytes, |entry| {
            let Ok(b) = entry.as_v2() else { return };
            if b.is_control() {
                if let Ok(Some(Control::EndTxn { commit, .. })) = format::batch_control(&b) {
                    r.marker(b.producer_id(), commit);
                }
                return;
            }
            let recs = if b.compression() == Compression::None {
                Ok(Records::new(b.records_bytes(), b.records_count(), 0))
            } else {
                format::batch_records(&b, &mut dec)
            };
            let Ok(recs) = recs else { return };
            let pid = b.is_transactional().then(|| b.producer_id());
            for rec in recs.map_while(Result::ok) {
                r.record(Input {
                    offset: b.base_offset().saturating_add(rec.offset_delta as i64),
                    producer_id: pid,
                    key: rec.key,
                    value: rec.value,
                    position: b.position(),
                    segment: &name,
                });
            }
        });
    }
    r.finish();
    r
}

fn is_offsets_dir(p: &PartitionDir) -> bool {
    p.tp.as_ref()
        .is_some_and(|tp| tp.topic == CONSUMER_OFFSETS_TOPIC)
}

/// The groups of every `__consumer_offsets` partition of `inv`, filtered, sorted by
/// group id then partition directory.
pub fn list_groups(inv: &Inventory, opts: &GroupsOptions) -> Vec<Group> {
    let mut out = Vec::new();
    let replays: Vec<Replay> = inv
        .partitions
        .par_iter()
        .filter(|p| is_offsets_dir(p))
        .map(|p| replay_partition_dir(p, opts.max_bytes, opts.max_decompressed))
        .collect();
    for r in replays {
        let live = r.groups;
        let deleted: Vec<Group> = r
            .deleted
            .into_values()
            .filter(|g| opts.include_deleted && !live.contains_key(&g.group_id))
            .collect();
        out.extend(live.into_values().chain(deleted).filter(|g| {
            opts.group.as_ref().is_none_or(|id| *id == g.group_id)
                && opts.group_type.is_none_or(|t| t == g.group_type)
        }));
    }
    out.sort_by(|a, b| (&a.group_id, &a.path).cmp(&(&b.group_id, &b.path)));
    out
}

/// The pipeline's cluster check: the group findings of every `__consumer_offsets`
/// partition the scan read, keyed by the partition's index in the report.
pub fn cluster_check(
    report: &ScanReport,
    inv: &Inventory,
    opts: &ScanOptions,
) -> BTreeMap<usize, Vec<Finding>> {
    let index: BTreeMap<String, usize> = report
        .partitions
        .iter()
        .enumerate()
        .filter(|(_, p)| p.topic == CONSUMER_OFFSETS_TOPIC)
        .map(|(i, p)| (p.path.clone(), i))
        .collect();
    let mut extra: BTreeMap<usize, Vec<Finding>> = BTreeMap::new();
    if index.is_empty() {
        return extra;
    }
    let found: Vec<(usize, Vec<Finding>)> = inv
        .partitions
        .par_iter()
        .filter(|p| is_offsets_dir(p))
        .filter_map(|p| {
            let i = *index.get(&p.path.display().to_string())?;
            let r = replay_partition_dir(p, opts.max_bytes, opts.max_decompressed);
            Some((i, check::findings(CONSUMER_OFFSETS_TOPIC, r.partition, &r)))
        })
        .collect();
    for (i, f) in found {
        if !f.is_empty() {
            extra.entry(i).or_default().extend(f);
        }
    }
    extra
}

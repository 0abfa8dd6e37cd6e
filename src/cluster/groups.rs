//! The groups' cluster check: the group findings of every `__consumer_offsets` partition of
//! the report, from the anomalies each partition's replay kept (`partition::groups`), or a
//! replay of the directory when its results came without them.

use crate::cluster::report::ScanReport;
use crate::discover::layout::Inventory;
use crate::finding::Finding;
use crate::partition::groups::check;
use crate::partition::groups::load::{is_offsets_dir, replay_partition_dir};
use crate::partition::results::ScanOptions;
use crate::read::format::groups::CONSUMER_OFFSETS_TOPIC;
use rayon::prelude::*;
use std::collections::BTreeMap;

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
    // The partitions the scan walked carry their replay's anomalies; a directory without
    // them (results made without the walk's hook) is replayed here.
    let found: Vec<(usize, Vec<Finding>)> = inv
        .partitions
        .par_iter()
        .filter(|p| is_offsets_dir(p))
        .filter_map(|p| {
            let i = *index.get(&p.path.display().to_string())?;
            let r = &report.partitions[i];
            let f = match &r.carried.cluster_inputs.group_anomalies {
                Some(a) => check::findings_of(CONSUMER_OFFSETS_TOPIC, r.partition, a),
                None => {
                    let r = replay_partition_dir(p, opts.max_bytes, opts.max_decompressed);
                    check::findings(CONSUMER_OFFSETS_TOPIC, r.partition, &r)
                }
            };
            Some((i, f))
        })
        .collect();
    for (i, f) in found {
        if !f.is_empty() {
            extra.entry(i).or_default().extend(f);
        }
    }
    extra
}

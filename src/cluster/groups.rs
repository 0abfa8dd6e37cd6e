//! The groups' cluster check: the group findings of every `__consumer_offsets` partition of
//! the report, from the anomalies each partition's replay kept (`partition::groups`), or a
//! replay of the directory when its results came without them.

use crate::cluster::leadership::ClusterHistory;
use crate::cluster::report::ScanReport;
use crate::discover::layout::Inventory;
use crate::finding::Finding;
use crate::partition::groups::check;
use crate::partition::groups::load::{is_offsets_dir, replay_partition_dir};
use crate::partition::results::ScanOptions;
use crate::partition::walked::GroupAnomaly as Anomaly;
use crate::read::format::groups::CONSUMER_OFFSETS_TOPIC;
use rayon::prelude::*;
use std::collections::BTreeMap;

/// The first `metadata.version` level only Kafka 4.1.0 and later support (`MetadataVersion.
/// IBP_4_1_IV0`).
const METADATA_VERSION_4_1: i16 = 26;

/// The pipeline's cluster check: the group findings of every `__consumer_offsets`
/// partition the scan read, keyed by the partition's index in the report.
///
/// A copy whose cluster's KRaft metadata log (`histories`) finalizes a `metadata.version` of
/// 4.1 or later is loaded by no 4.0 broker (`ClusterControlManager.registerBroker` refuses a
/// broker that does not support the finalized level), so the failures only Kafka 4.0's load
/// meets (KAFKA-19453) are dropped for it; without such a log they stay, scoped to 4.0.
/// The release `verify --broker-version` gives decides every failure scoped before a fix
/// (`check::findings_for`).
pub fn cluster_check(
    report: &ScanReport,
    inv: &Inventory,
    opts: &ScanOptions,
    histories: &[ClusterHistory],
) -> BTreeMap<usize, Vec<Finding>> {
    let index: BTreeMap<String, usize> = report
        .partitions
        .iter()
        .enumerate()
        .filter(|(_, p)| p.topic == CONSUMER_OFFSETS_TOPIC)
        .map(|(i, p)| (p.path.clone(), i))
        .collect();
    // `verify --broker-version`: the failures scoped before a fix are decided for it.
    let release = opts.broker_version;
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
            let past_4_0 = ClusterHistory::of_cluster(histories, &r.source)
                .and_then(ClusterHistory::metadata_version)
                .is_some_and(|l| l >= METADATA_VERSION_4_1);
            let of = |a: &[Anomaly]| match past_4_0 {
                true => {
                    let a: Vec<Anomaly> = (a.iter())
                        .filter(|a| !a.fails_only_in_kafka_4_0())
                        .cloned()
                        .collect();
                    check::findings_for(CONSUMER_OFFSETS_TOPIC, r.partition, &a, release)
                }
                false => check::findings_for(CONSUMER_OFFSETS_TOPIC, r.partition, a, release),
            };
            let f = match &r.carried.cluster_inputs.group_anomalies {
                Some(a) => of(a),
                None => {
                    of(&replay_partition_dir(p, opts.max_bytes, opts.max_decompressed).anomalies)
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

//! What consumers saw: every committed offset of the groups in the inputs'
//! `__consumer_offsets` held against the data partition it names (same cluster only) — log
//! start, log end, last stable offset, checkpointed high watermark, hanging transactions and
//! leader-epoch lineage (`view`) — and the findings of that comparison (`rules`): commits
//! beyond the log end or below the log start, groups stalled by a hanging transaction,
//! transactional offset commits held pending by one, committed leader epochs the lineage does
//! not know; and share groups' start offsets past the log end (`share`). The lineage is an
//! input of its own ([`Lineage`], [`LineageSource`]).

mod lineage;
mod rules;
mod share;
mod view;

/// Where a lineage read from the KRaft metadata log says it comes from.
pub fn lineage_from_metadata() -> &'static str {
    lineage::METADATA_LINEAGE_FROM
}

pub use lineage::{
    CheckpointLineage, ClusterLineage, EpochCase, EpochEnd, Lineage, LineageSource, MetadataEpochs,
};
pub(crate) use lineage::{UNDEFINED_EPOCH_OFFSET, end_offset_in};
pub(crate) use view::build_over;
pub use view::{
    ConsumerRow, ConsumerView, ConsumersOptions, GroupSummary, Hanging, PartitionState,
    PendingCommit, Placement, Unmatched, build, committed_positions,
};

use crate::cluster::report::ScanReport;
use crate::discover::layout::Inventory;
use crate::finding::Finding;
use crate::partition::results::ScanOptions;
use std::collections::BTreeMap;

/// The pipeline's cluster check: the consumer findings, keyed by the index of the partition
/// each names (the data partition, or the `__consumer_offsets` partition of a pending
/// commit). It runs after the coordinator's confirmation, so it reads the final
/// `hanging_transaction` verdicts; the leader-epoch lineage of the KRaft metadata log comes
/// from the pipeline's one replay of it (`histories`).
pub fn cluster_check(
    report: &ScanReport,
    inv: &Inventory,
    opts: &ScanOptions,
    histories: &[crate::cluster::leadership::ClusterHistory],
) -> BTreeMap<usize, Vec<Finding>> {
    let view = view::build_over(report, inv, opts, &ConsumersOptions::default(), histories);
    let mut out = rules::findings(&view, report, opts.broker_version);
    for (i, found) in share::findings(report, inv) {
        out.entry(i).or_default().extend(found);
    }
    for u in &view.unread_checkpoints {
        let dir = u.path.parent().map(|d| d.display().to_string());
        let Some(i) = report
            .partitions
            .iter()
            .position(|r| Some(&r.path) == dir.as_ref())
        else {
            continue;
        };
        if crate::cluster::epoch_file::to_name(u, report.findings.iter()) {
            let r = &report.partitions[i];
            out.entry(i).or_default().push(crate::cluster::epoch_file::finding(
                r,
                u,
                "not applicable: a committed offset's validation on this partition had no leader-epoch lineage",
            ));
        }
    }
    out
}

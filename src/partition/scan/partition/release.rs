//! What a finished partition's report gives back before it waits for the end of the
//! scan with every other partition's: the recovery plan a plain scan no longer reads, and
//! the spare capacity of its vectors.

use super::{PartitionReport, ScanOptions};
use crate::discover::layout;

/// A scan keeps a partition's recovery plan and segment walks only where a later
/// stage reads them (`verify`, which makes its own prediction from the segment walks,
/// keeps every walk but no more plans than a plain scan): where
/// the broker's recovery truncates the log or moves its end (`cluster::lost` compares
/// the copies' ends and counts what is removed), and for Kafka's internal topics and the
/// KRaft metadata log (the coordinator's reads compare each segment's walked length). Elsewhere the plan has
/// said all it says at this point — the report's `truncation` and the words of the
/// integrity findings — and a bundle keeps no more of it either. For an empty partition
/// after an unclean shutdown that is ≈ 550 bytes (the plan, its recovered segment and
/// reason, the segment's walk).
pub(super) fn drop_inert_recovery(report: &mut PartitionReport, opts: &ScanOptions) {
    let plan = &report.carried.recovery;
    let changes_log = plan.truncation.is_some()
        || !plan.load_truncations.is_empty()
        || plan.log_end_after.is_some();
    let internal =
        layout::is_internal_topic(&report.topic) || layout::is_kraft_metadata(&report.topic);
    if changes_log || internal {
        return;
    }
    report.carried.recovery = Default::default();
    if !opts.collect_index_verdicts {
        report.carried.segment_walks = Default::default();
    }
}

/// Give back the spare capacity of what a finished partition keeps until the end of the
/// scan: vectors grown by doubling hold up to twice their length, and a scan of many small
/// partitions keeps one report each (100 000 empty partitions held ≈ 1 KB each of spare
/// capacity in their segment walks and recovery plans alone).
pub(super) fn release_spare_capacity(report: &mut PartitionReport) {
    report.carried.segment_walks.shrink_to_fit();
    report.carried.drop_clean_verdicts();
    if let Some(rare) = report.carried.rare.as_deref_mut() {
        rare.index_verdicts.shrink_to_fit();
        rare.snapshot_states.shrink_to_fit();
        rare.damaged.shrink_to_fit();
    }
    report.carried.leader_epochs.shrink_to_fit();
    report.carried.append_epochs.entries.shrink_to_fit();
    if let Some(plan) = report.carried.recovery.get_mut() {
        plan.recovered.shrink_to_fit();
        plan.deleted.shrink_to_fit();
        plan.unrecovered.shrink_to_fit();
        plan.load_truncations.shrink_to_fit();
    }
    report.carried.segment_names.shrink_to_fit();
    // Parts that the walk's writes left empty are not kept.
    report.carried.outcome.shrink();
    report.carried.recovery.shrink();
    report.carried.cluster_inputs.shrink();
}

#[cfg(all(test, feature = "testkit"))]
mod tests {
    use crate::discover::layout;
    use crate::partition::results::{PartitionReport, ScanOptions};
    use crate::testkit::{Batch, FaultKind, LogDirBuilder, PartitionBuilder, Producer, Target};

    /// After an unclean shutdown: `quiet-0` recovers without effect, `torn-0` has a torn
    /// tail that its recovery truncates, `__consumer_offsets-0` is internal.
    fn scanned(opts: &ScanOptions) -> Vec<PartitionReport> {
        let dir = tempfile::tempdir().unwrap();
        let mut quiet = PartitionBuilder::new("quiet", 0);
        quiet.append(Batch::new(Producer::idempotent(7, 0)).records(2));
        let mut torn = PartitionBuilder::new("torn", 0);
        torn.append(Batch::new(Producer::idempotent(8, 0)).records(2));
        torn.fault(
            Target::LastLog,
            FaultKind::AppendGarbage(vec![0xde, 0xad, 1, 2, 3]),
        );
        let mut internal = PartitionBuilder::new("__consumer_offsets", 0);
        internal.append(Batch::new(Producer::idempotent(9, 0)).records(1));
        LogDirBuilder::new(1)
            .clean_shutdown(false)
            .partition(quiet)
            .partition(torn)
            .partition(internal)
            .write(dir.path())
            .unwrap();
        let inv = layout::discover(&[dir.path().to_path_buf()]);
        let mut parts = crate::partition::scan::scan_inventory(&inv, opts).partitions;
        parts.sort_by(|a, b| a.topic.cmp(&b.topic));
        parts
    }

    #[test]
    fn a_plain_scan_keeps_the_recovery_plan_only_where_recovery_changes_the_log() {
        let parts = scanned(&ScanOptions::default());
        let [internal, quiet, torn] = &parts[..] else {
            panic!("three partitions: {parts:#?}")
        };
        // Recovery runs on the quiet partition to no effect: nothing later reads its plan.
        assert!(quiet.carried.recovery.recovered.is_empty());
        assert!(quiet.carried.segment_walks.is_empty());
        assert!(quiet.truncation.is_none());
        // The torn tail is truncated: the plan and the walks stay for `cluster::lost`.
        assert!(torn.truncation.is_some());
        assert!(torn.carried.recovery.truncation.is_some());
        assert_eq!(torn.carried.segment_walks.len(), 1);
        // An internal topic keeps them (the coordinator's reads compare walked lengths).
        assert_eq!(internal.carried.recovery.recovered.len(), 1);
        assert_eq!(internal.carried.segment_walks.len(), 1);
    }

    /// `verify` reads every segment walk (its own prediction starts from them) but no
    /// recovery plan: it keeps the plans a plain scan keeps, and every walk.
    #[test]
    fn a_scan_for_verify_keeps_every_walk_and_the_plans_a_plain_scan_keeps() {
        let opts = ScanOptions::default().with_collect_index_verdicts(true);
        let parts = scanned(&opts);
        let [internal, quiet, torn] = &parts[..] else {
            panic!("three partitions: {parts:#?}")
        };
        assert!(quiet.carried.recovery.recovered.is_empty());
        assert_eq!(quiet.carried.segment_walks.len(), 1);
        // Its indexes agree with the log: no verdict list is kept, and the verdict reads
        // as clean.
        assert!(quiet.carried.rare.is_none());
        let v = quiet.carried.index_verdict(0).expect("the walk finished");
        assert_eq!(v.offset.as_ref().map_or(0, |p| p.count), 0);
        assert!(v.abort_markers.is_empty());
        assert!(quiet.carried.index_verdict(1).is_none());
        assert!(torn.carried.recovery.truncation.is_some());
        assert_eq!(torn.carried.segment_walks.len(), 1);
        assert_eq!(internal.carried.recovery.recovered.len(), 1);
        assert_eq!(internal.carried.segment_walks.len(), 1);
    }
}

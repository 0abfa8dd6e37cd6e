//! A partition's report before its walk, from what its directory and its log dir's files
//! say.

use super::*;

/// What the log dir's files say of one partition (`None` each for a file named alone: the
/// directory was not listed, so the model assumes an unclean shutdown, indexes present).
pub(super) struct DirState {
    pub(super) clean_shutdown: Option<bool>,
    pub(super) recovery_point: recovery::CheckpointEntry,
    pub(super) checkpointed_log_start: recovery::CheckpointEntry,
    pub(super) high_watermark: Option<i64>,
}

impl DirState {
    pub(super) fn of(
        p: &PartitionDir,
        log_dir: Option<&recovery::LogDirFiles>,
        ctx: &PartitionContext,
    ) -> Self {
        let (clean_shutdown, recovery_point, checkpointed_log_start, high_watermark) =
            recovery::LogDirFiles::partition_state(log_dir, &ctx.topic, ctx.partition);
        if p.partial {
            DirState {
                clean_shutdown: None,
                recovery_point: recovery::CheckpointEntry::Read(None),
                checkpointed_log_start,
                high_watermark: None,
            }
        } else {
            DirState {
                clean_shutdown,
                recovery_point,
                checkpointed_log_start,
                high_watermark,
            }
        }
    }
}

/// The partition's report before its walk: what the directory and the log dir's files say.
pub(super) fn initial_report(
    p: &PartitionDir,
    ctx: &PartitionContext,
    opts: &ScanOptions,
    logs: &[(i64, &Path)],
    (dir, log_dir): (&DirState, Option<&recovery::LogDirFiles>),
) -> PartitionReport {
    // The log dir's path, shared with its other partitions' reports when it is the one
    // whose files were read.
    let shared = log_dir.and_then(|l| l.path.as_ref());
    let log_dir_path = p.log_dir.as_deref().map(|d| match shared {
        Some(s) if **s == *d => s.clone(),
        _ => std::sync::Arc::from(d),
    });
    PartitionReport {
        topic: ctx.topic.clone(),
        partition: ctx.partition,
        path: p.path.display().to_string(),
        segments: logs.len(),
        batches: 0,
        records: 0,
        control_batches: 0,
        bytes: 0,
        // The broker's log start: max(checkpoint, first segment's base offset).
        log_start_offset: match (
            dir.checkpointed_log_start.known(),
            logs.first().map(|l| l.0),
        ) {
            (Some(c), Some(b)) => Some(c.max(b)),
            (c, b) => c.or(b),
        },
        log_end_offset: None,
        last_stable_offset: None,
        ref_time: 0,
        transactions: TxnCounts::default(),
        producers: 0,
        truncation: None,
        truncation_unknown: None,
        load_failure: None,
        high_watermark: dir.high_watermark,
        source: crate::finding::Source::default(),
        compacted: ctx.compacted,
        compacted_from: None,
        partially_read: false,
        carried: Carried {
            log_dir: log_dir_path,
            cluster_inputs: crate::partition::walked::ClusterInputs::new(
                &ctx.topic,
                opts.collect_batch_keys(ctx) && crate::partition::walked::comparable(p),
            )
            .into(),
            ..Carried::default()
        },
        tiered: None,
    }
}

/// With `capture_snapshots`: the offsets of the partition's `.snapshot` files, the
/// smallest last (popped first).
pub(super) fn snapshot_offsets(p: &PartitionDir, opts: &ScanOptions) -> Vec<i64> {
    if !opts.capture_snapshots {
        return Vec::new();
    }
    let mut v: Vec<i64> = p.snapshots.iter().map(|s| s.offset).collect();
    v.sort_unstable();
    v.dedup();
    v.reverse();
    v
}

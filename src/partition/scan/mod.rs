//! The scan engine: per partition, walk every segment (in parallel), turn batches into
//! events, replay them through the producer-state machine, and collect findings.
//!
//! Segments of one partition are processed as units (`scan::partition`): a unit is a whole
//! segment, or a piece of about 4 MiB of a large one (`scan::pieces`). Units are walked in
//! parallel (framing, CRC, header checks, optional record decoding) ahead of the replay,
//! which takes their events in offset order as soon as each unit and those before it are
//! walked. Memory is bounded by two windows of units walked ahead, not by the partition or
//! by a segment; the output does not depend on the thread count.

use crate::partition::results::summarise;
mod glob;
mod indexes;
mod integrity;
mod keyless;
mod partition;
mod pieces;
mod reference;
mod remote;
mod seed;
mod walk;
pub(crate) use glob::glob_match;
use partition::{EventPool, SegmentScan, scan_partition};
pub use remote::walk_object;

pub use crate::partition::results::{
    PartitionReport, PartitionStage, Progress, ProgressUpdate, ScanOptions, SeverityCounts,
    Summary, Truncation, TxnCounts,
};

use crate::discover::layout::{self, Inventory, PartitionDir};
use crate::finding::{Finding, Kind};
use crate::partition::recovery;
use crate::partition::state::{PartitionContext, SealedReplay};
use rayon::prelude::*;
use std::collections::HashMap;
use std::path::Path;

mod threads;
pub use threads::{MAX_THREADS, start_global_pool, with_threads};

/// Default of [`ScanOptions::max_decompressed_per_file`]: 4 GiB (16 batches at the
/// per-batch cap; real segments of 1 GiB decompress to a few GiB at most).
pub const DEFAULT_MAX_DECOMPRESSED_PER_FILE: u64 =
    crate::partition::results::DEFAULT_MAX_DECOMPRESSED_PER_FILE;

/// What a partition's scan leaves besides its report until the reference time is known:
/// the sealed replay when a transaction is open (boxed: most partitions have none), and the
/// findings.
type Pending = (Option<Box<SealedReplay>>, Vec<Finding>);

/// Scan an already discovered inventory.
pub fn scan_inventory(inv: &Inventory, opts: &ScanOptions) -> PartitionStage {
    scan_inventory_with(
        inv,
        opts,
        &crate::partition::remote::RemoteHistory::default(),
    )
}

/// [`scan_inventory`] with the remote segments of tiered partitions, replayed before
/// their local segments ([`crate::partition::remote`]).
pub fn scan_inventory_with(
    inv: &Inventory,
    opts: &ScanOptions,
    remote: &crate::partition::remote::RemoteHistory,
) -> PartitionStage {
    let selected: Vec<&PartitionDir> = inv
        .partitions
        .iter()
        .filter(|p| selected(p, opts))
        .collect();
    // Which partitions' walks keep batch keys for the replica comparison.
    let opts = &ScanOptions {
        copied_partitions: if opts.copied_partitions.is_all() {
            opts.copied_partitions.clone()
        } else {
            crate::partition::walked::CopiedPartitions::of(selected.iter().copied())
        },
        ..opts.clone()
    };
    emit_start(&selected, opts);
    let known = Known::load(inv, opts);
    let (mut reports, rest) = scan_selected(&selected, &known, opts, remote);
    // Reference time: the newest batch timestamp of each log dir (or of the partition
    // alone), over every partition of the log dir whether selected or not, so that
    // `--topic`/`--partition` never move it (unselected ones: their newest segment's
    // headers).
    let mut references = reference::reference_times(inv, &selected, &reports, opts);
    let mut report = PartitionStage {
        errors: inv.errors.clone(),
        ..Default::default()
    };
    for (r, (replay, mut findings)) in reports.iter_mut().zip(rest) {
        let reference = references.of(inv, r, opts.now_ms);
        conclude(r, replay, &mut findings, reference);
        let start = report.findings.len();
        report.findings.extend(findings);
        r.carried.finding_range = start..report.findings.len();
    }
    report.partitions = reports;
    for (path, why) in inv.errors.iter().filter(|e| !inv.is_input_error(e)) {
        report.findings.push(
            Finding::new(
                Kind::UnreadableFile,
                "",
                -1,
                format!("cannot read {}: {why}", path.display()),
            )
            .segment(path.display().to_string())
            .broker("not applicable: the analysis of this path is incomplete"),
        );
    }
    report
        .findings
        .extend(metadata_not_decoded(inv, &selected, &known.compaction));
    crate::finding::assign_ids(&mut report.findings);
    report.summary = summarise(&report.partitions, &report.findings);
    report
}

/// Tell the progress display the totals. The total is for a progress display only: one
/// `stat` per segment, skipped without one (10 000 segments stat'ed in a row were ≈ 10 ms
/// before any walk could start).
fn emit_start(selected: &[&PartitionDir], opts: &ScanOptions) {
    if !opts.progress.is_on() {
        return;
    }
    let logs: Vec<&Path> = selected
        .iter()
        .flat_map(|p| p.segments.iter().filter_map(|s| s.log.as_deref()))
        .collect();
    let total_bytes: u64 = logs
        .par_iter()
        .filter_map(|l| std::fs::metadata(l).ok().map(|m| m.len()))
        .sum();
    opts.progress.emit(ProgressUpdate::Start {
        partitions: selected.len() as u64,
        bytes: total_bytes,
    });
}

/// What the inputs say besides the partitions' own segments, read once for all of them.
struct Known<'a> {
    /// The log dirs' checkpoints and shutdown marker.
    log_dirs: HashMap<&'a Path, recovery::LogDirFiles>,
    /// Identity of each log dir.
    identities: crate::discover::identity::Identities,
    /// What the inputs say about cleanup policies.
    compaction: crate::discover::compaction::Knowledge,
}

impl<'a> Known<'a> {
    fn load(inv: &'a Inventory, opts: &ScanOptions) -> Self {
        let identities = crate::discover::identity::Identities::load(inv);
        let compaction = crate::discover::compaction::Knowledge::load(
            inv,
            &identities,
            &opts.compacted_topics,
            opts.max_bytes,
            opts.max_decompressed,
        );
        Known {
            log_dirs: inv
                .log_dirs
                .iter()
                .map(|ld| (ld.path.as_path(), recovery::LogDirFiles::read(ld)))
                .collect(),
            identities,
            compaction,
        }
    }
}

/// Walk and replay every selected partition, in parallel; each keeps only what the
/// conclusion needs. The reports and the rest of each partition's result come in two
/// vectors: the reports become the stage's `partitions` in place (no second vector of
/// them), and the rest is a pointer and the findings. A replay with no transaction open
/// concludes at once (its outcome does not depend on the reference time) and its state is
/// dropped here; only replays with open transactions wait for the reference time.
fn scan_selected(
    selected: &[&PartitionDir],
    known: &Known<'_>,
    opts: &ScanOptions,
    remote: &crate::partition::remote::RemoteHistory,
) -> (Vec<PartitionReport>, Vec<Pending>) {
    let window = opts
        .threads
        .unwrap_or_else(rayon::current_num_threads)
        .clamp(1, MAX_THREADS);
    // Two windows are in flight per partition (one replayed, one walked).
    let pool = EventPool::new(window);
    with_threads(opts.threads, || {
        selected
            .par_iter()
            .map(|p| {
                let files = p.log_dir.as_deref().and_then(|d| known.log_dirs.get(d));
                let source = known.identities.source(p);
                let (reason, policy) = known.compaction.judge(p, &source);
                // A dynamic `producer.id.expiration.ms` below the default shortens the idle
                // time after which the leader may have expired a producer's state.
                let expiration = (known.compaction.producer_id_expiration(&source))
                    .filter(|&ms| ms < opts.replay.producer_id_expiration_ms);
                let compacted = reason.map(crate::discover::compaction::Reason::compacted);
                // A -future/-delete/-stray copy is judged as no live log: its records are
                // not the ones a cleaner will drop.
                let policy = source.copy.is_live() && policy;
                let mut r = scan_partition(
                    p,
                    opts,
                    window,
                    pieces::PIECE,
                    files,
                    (compacted, policy, replay_options(opts, expiration)),
                    &pool,
                    remote.of(&p.path),
                );
                opts.copied_partitions.hand_over(&mut r.0);
                r.0.source = source;
                if (p.tp.as_ref()).is_some_and(|tp| layout::is_compacted_internal_topic(&tp.topic))
                {
                    r.0.compacted_from = Some("internal topic".into());
                } else if let Some(why) = reason {
                    r.0.compacted_from = Some(why.describe());
                }
                opts.progress.emit(ProgressUpdate::PartitionDone);
                // Only what the conclusion needs outlives the partition's scan.
                let (mut report, replay, mut findings) = r;
                // `verify` predicts the rebuild's producers from each one's last offset (16 bytes
                // a producer) when their final states are not kept.
                let last = opts.capture_snapshots && !opts.keep_producers;
                let sealed = replay.seal(opts.keep_producers, last);
                let sealed = if sealed.settled() {
                    report.carried.outcome.set(sealed.finish(0, &mut findings));
                    None
                } else {
                    Some(Box::new(sealed))
                };
                (report, (sealed, findings))
            })
            .unzip()
    })
}

/// A partition's conclusion at its reference time: the replay finished (hanging and open
/// transactions), causes linked, the offsets and counts of the report.
fn conclude(
    r: &mut PartitionReport,
    replay: Option<Box<SealedReplay>>,
    findings: &mut Vec<Finding>,
    (ref_time, ref_source): (i64, reference::RefSource),
) {
    let outcome = match replay {
        Some(replay) => replay.finish(ref_time, findings),
        None => r.carried.outcome.take(),
    };
    crate::partition::causes::link_damage(findings, r.carried.damaged());
    crate::partition::causes::link_zombie_chain(findings);
    for f in findings
        .iter_mut()
        .filter(|f| matches!(f.kind, Kind::HangingTransaction | Kind::OpenTransaction))
    {
        if let Some(e) = f.evidence.as_object_mut() {
            e.insert("reference_time".into(), ref_source.evidence(ref_time));
        }
    }
    if r.partially_read {
        // The end of the log was not read: a transaction open at the read limit may
        // well be closed after it. No live-partition verdict rests on unread bytes.
        findings.retain(|f| !matches!(f.kind, Kind::HangingTransaction | Kind::OpenTransaction));
    }
    crate::discover::identity::apply_source(&r.source, findings);
    r.ref_time = ref_time;
    r.log_start_offset = outcome.log_start_offset.or(r.log_start_offset);
    // A log that holds no batch ends where its walk found it ends (`r.log_end_offset`: its
    // last segment's base); with nothing unstable in it, its last stable offset is that end
    // too (`UnifiedLog.lastStableOffset`). The outcome keeps none: an outcome with nothing
    // else in it costs no allocation (`Lean`), and most empty partitions have nothing else.
    r.log_end_offset = outcome.log_end_offset.or(r.log_end_offset);
    r.last_stable_offset = if r.partially_read {
        None
    } else if outcome.open.is_empty() {
        outcome.last_stable_offset.or(r.log_end_offset)
    } else {
        outcome.last_stable_offset
    };
    r.transactions = TxnCounts {
        committed: outcome.txn_stats.committed,
        aborted: outcome.txn_stats.aborted,
        open: outcome.open.len() as u64,
    };
    r.producers = outcome.producer_count;
    // What the recovery's truncation leaves open, while the replay's records are here.
    if let Some(plan) = r.carried.recovery.get_mut()
        && let Some(end) = plan.log_end_after.filter(|_| plan.truncation.is_some())
    {
        let after = crate::partition::recovery::reopened::AfterTruncation::of(&outcome, end);
        plan.after_truncation = Some(Box::new(after));
    }
    r.carried.outcome.set(outcome);
    findings.sort_by_key(|f| (f.offset.unwrap_or(i64::MAX), f.position.unwrap_or(u64::MAX)));
}

/// The `batch_not_decoded` findings of the metadata batches the compaction knowledge could
/// not read (too large to hold), except those of a segment the scan walked (its walk says
/// so itself): KRaft snapshots, and the segments of unselected metadata partitions.
fn metadata_not_decoded(
    inv: &Inventory,
    selected: &[&PartitionDir],
    compaction: &crate::discover::compaction::Knowledge,
) -> Vec<Finding> {
    let walked = |f: &Path| {
        selected
            .iter()
            .any(|p| p.segments.iter().any(|s| s.log.as_deref() == Some(f)))
    };
    let mut out = Vec::new();
    for md in &compaction.metadata {
        let partition = inv
            .partitions
            .iter()
            .find(|p| md.source.path.as_deref() == Some(p.path.display().to_string().as_str()))
            .and_then(|p| p.tp.as_ref())
            .map_or(0, |tp| tp.partition);
        for n in md.not_decoded.iter().filter(|n| !walked(&n.file)) {
            let mut f = crate::discover::compaction::not_decoded_finding(partition, n);
            f.source = md.source.clone();
            out.push(f);
        }
    }
    out
}

fn selected(p: &PartitionDir, opts: &ScanOptions) -> bool {
    let (topic, part) = match &p.tp {
        Some(tp) => (tp.topic.as_str(), tp.partition),
        None => ("", -1),
    };
    opts.topic.as_deref().is_none_or(|g| glob_match(g, topic))
        && opts.partition.is_none_or(|n| n == part)
}

/// The context the replay needs, derived from the partition directory.
pub(crate) fn partition_context(p: &PartitionDir) -> PartitionContext {
    let (topic, partition) = match &p.tp {
        Some(tp) => (tp.topic.clone(), tp.partition),
        None => (String::new(), -1),
    };
    let internal = layout::is_internal_topic(&topic);
    PartitionContext {
        kraft_metadata: layout::is_kraft_metadata(&topic),
        compacted: layout::is_compacted_internal_topic(&topic).then_some(true),
        compact_policy: false,
        internal,
        segment_names: p.log_names(),
        log_start_offset: None,
        topic,
        partition,
    }
}

fn segment_finding(
    ctx: &PartitionContext,
    kind: Kind,
    segment: &str,
    position: u64,
    message: String,
) -> Finding {
    Finding::new(kind, &ctx.topic, ctx.partition, message)
        .segment(segment)
        .position(position)
}

/// The replay's options for one partition: `opts`' own, with `expiration` (the smallest
/// dynamic `producer.id.expiration.ms` of the partition's broker, below the options' own)
/// in place of theirs.
fn replay_options(
    opts: &ScanOptions,
    expiration: Option<i64>,
) -> crate::partition::state::ReplayOptions {
    let mut r = opts.replay;
    if let Some(ms) = expiration {
        r.producer_id_expiration_ms = ms;
        r.producer_id_expiration_from = Some(
            "the smallest dynamic producer.id.expiration.ms the cluster's KRaft metadata log set for this broker or cluster-wide",
        );
    }
    r
}

//! The remote segments of a tiered partition replayed before its local ones
//! ([`crate::partition::remote`]): each walked by the local segments' [`Walker`], its
//! events fed to the same producer-state replay, so producer state, transactions and the
//! LSO reasoning start from the remote log start.
//!
//! Only the replay is shared here: the walk's integrity findings of a remote object are
//! made once per remote segment, not once per replica replaying it, by `cluster::tiering`
//! through [`walk_object`] (as findings about remote data), and the recovery model never
//! sees a remote segment (the broker's log loader does not recover remote data).

use super::EventPool;
use super::walk::Walker;
use crate::partition::event::BatchEvent;
use crate::partition::remote::{
    ObjectWalk, RemoteReplayed, RemoteSegmentInput, RemoteSource, WalkedLog,
};
use crate::partition::results::ScanOptions;
use crate::partition::state::PartitionContext;
use crate::read::format::Tail;
use crate::read::segment::{self, ReadPolicy};

/// Replay `segs` (in offset order) through `apply` (each batch with its segment's
/// `[start, end]` offsets); their events name the segments by `first_idx + k` (the
/// context's segment names past the local ones). Batches at or above `local_start` are
/// left to the local log. Returns what was replayed, and whether `--max-bytes` cut a
/// segment (the history is then not continuous past it).
pub(super) fn replay_remote(
    ctx: &PartitionContext,
    opts: &ScanOptions,
    pool: &EventPool,
    segs: &[RemoteSegmentInput],
    first_idx: usize,
    local_start: Option<i64>,
    apply: &mut dyn FnMut(&BatchEvent, (i64, i64)),
) -> (RemoteReplayed, bool) {
    let mut out = RemoteReplayed::default();
    for (k, s) in segs.iter().enumerate() {
        if local_start.is_some_and(|l| s.replay_from >= l) {
            break;
        }
        let rebuilt;
        let path = match &s.source {
            RemoteSource::File(p) => p.as_path(),
            RemoteSource::Rebuilt(make) => match make() {
                Ok(t) => {
                    rebuilt = t;
                    rebuilt.path()
                }
                Err(e) => {
                    out.unread.push((s.name.clone(), e.to_string()));
                    continue;
                }
            },
            RemoteSource::Unreadable(why) => {
                out.unread.push((s.name.clone(), why.clone()));
                continue;
            }
        };
        let idx = u32::try_from(first_idx + k).unwrap_or(u32::MAX);
        let mut w = Walker::new(ctx, &s.name, idx, s.start_offset, opts, pool.take(), 0);
        w.out.collected = collect_nothing(opts);
        let file_len = std::fs::metadata(path).map_or(0, |m| m.len());
        let walked = segment::walk_entries_items(path, ReadPolicy::Read, opts.max_bytes, |item| {
            w.item(item)
        });
        let (tail, len) = match walked {
            Ok(t) => t,
            Err(e) => {
                out.unread.push((s.name.clone(), e.to_string()));
                pool.give(std::mem::take(&mut w.events));
                continue;
            }
        };
        let cut = opts.max_bytes.is_some_and(|m| file_len > m);
        let scan = w.finish(if cut { Tail::Clean } else { tail });
        out.segments += 1;
        out.bytes += len;
        for ev in &scan.events {
            if ev.is_recovery_only()
                || ev.last_offset < s.replay_from
                || local_start.is_some_and(|l| ev.base_offset >= l)
            {
                continue;
            }
            out.batches += 1;
            out.records += ev.records_count.max(0) as u64;
            out.first_offset.get_or_insert(ev.base_offset);
            out.last_offset = Some(ev.last_offset);
            apply(ev, (s.start_offset, s.end_offset));
        }
        pool.give(scan.events);
        if cut {
            return (out, true);
        }
    }
    (out, false)
}

/// Walk one remote object at `path` (named `name`, of the remote segment starting at
/// `base`) with the local segments' walker: the same framing, CRC and header checks
/// (`DefaultRecordBatch.ensureValid`, the consumer's `CompletedFetch.maybeEnsureValid`
/// runs the same), with the events summarised as they come (memory does not grow with the
/// object). `--max-bytes` bounds the bytes read.
pub fn walk_object(
    topic: &str,
    partition: i32,
    name: &str,
    base: i64,
    path: &std::path::Path,
    opts: &ScanOptions,
) -> std::io::Result<ObjectWalk> {
    let ctx = PartitionContext {
        topic: topic.to_string(),
        partition,
        segment_names: vec![name.to_string()],
        ..PartitionContext::default()
    };
    let mut w = Walker::new(&ctx, name, 0, base, opts, Vec::new(), 0);
    w.out.collected = collect_nothing(opts);
    let mut walked = WalkedLog::default();
    let (tail, len) =
        segment::walk_entries_items(path, ReadPolicy::Read, opts.max_bytes, |item| {
            w.item(item);
            for ev in w.events.drain(..) {
                summarise(&mut walked, &ev);
            }
        })?;
    let file_len = std::fs::metadata(path)?.len();
    let cut = opts.max_bytes.is_some_and(|m| file_len > m);
    let scan = w.finish(if cut { Tail::Clean } else { tail });
    for ev in &scan.events {
        summarise(&mut walked, ev);
    }
    walked.bytes = file_len;
    walked.invalid_bytes = match tail.truncation_position() {
        Some(at) if !cut => len.saturating_sub(at),
        _ => 0,
    };
    Ok(ObjectWalk {
        walked,
        findings: scan.findings,
    })
}

/// Add one batch to what the object holds (every entry that frames counts, its CRC good
/// or not: its offsets are the ones a fetch would see).
fn summarise(w: &mut WalkedLog, ev: &crate::partition::event::BatchEvent) {
    if ev.magic >= 2
        && ev.partition_leader_epoch >= 0
        && w.leader_epochs
            .last()
            .is_none_or(|l| l.0 != ev.partition_leader_epoch)
    {
        w.leader_epochs
            .push((ev.partition_leader_epoch, ev.base_offset));
    }
    w.first_offset.get_or_insert(ev.base_offset);
    w.last_offset = Some(ev.last_offset);
}

/// The cluster checks' inputs are the local log's: nothing of a remote object is kept for
/// them (a partition with several copies would otherwise keep a key per remote batch).
fn collect_nothing(opts: &ScanOptions) -> crate::partition::walked::Collector {
    crate::partition::walked::Collector::new("", false, opts.max_decompressed)
}

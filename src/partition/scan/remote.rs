//! The remote segments of a tiered partition replayed before its local ones
//! ([`crate::partition::remote`]): each walked by the local segments' [`Walker`], its
//! events fed to the same producer-state replay, so producer state, transactions and the
//! LSO reasoning start from the remote log start.
//!
//! Only the replay is shared: the walk's integrity findings stay with the local segments
//! (a remote object's bytes are judged against its metadata by `cluster::tiering`'s
//! `remote_segment_mismatch`), and the recovery model never sees a remote segment (the
//! broker's log loader does not recover remote data).

use super::EventPool;
use super::walk::Walker;
use crate::finding::Finding;
use crate::partition::remote::{RemoteReplayed, RemoteSegmentInput, RemoteSource};
use crate::partition::results::ScanOptions;
use crate::partition::state::{PartitionContext, Replay};
use crate::read::format::Tail;
use crate::read::segment::{self, ReadPolicy};

/// Replay `segs` (in offset order) into `replay`; their events name the segments by
/// `first_idx + k` (the context's segment names past the local ones). Batches at or
/// above `local_start` are left to the local log. Returns what was replayed, and whether
/// `--max-bytes` cut a segment (the history is then not continuous past it).
#[allow(clippy::too_many_arguments)]
pub(super) fn replay_remote(
    ctx: &PartitionContext,
    opts: &ScanOptions,
    pool: &EventPool,
    segs: &[RemoteSegmentInput],
    first_idx: usize,
    local_start: Option<i64>,
    replay: &mut Replay,
    findings: &mut Vec<Finding>,
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
        let mut w = Walker::new(ctx, &s.name, idx, s.start_offset, opts, pool.take());
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
            replay.apply(ev, findings);
        }
        pool.give(scan.events);
        if cut {
            return (out, true);
        }
    }
    (out, false)
}

//! The one loop that reads a partition directory's segments outside the scan's walk, each
//! through a [`Collector`] of its own as the walk keeps them: the records of a
//! `__transaction_state` partition whose walk kept none (more than
//! `ScanOptions::keep_coordinator_bytes`) or that the scan did not select, handed on one
//! batch at a time; the records of an unselected `__remote_log_metadata` partition; and
//! [`super::collect_dir`]'s whole collection of a directory.

use super::{Collector, LogItem};
use crate::discover::layout::PartitionDir;
use crate::read::segment;
use std::collections::BTreeSet;

/// What [`stream_records`] does with a segment it cannot read whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ReadErrors {
    /// As the scan's walk keeps records: what was read before the error stays, nothing is
    /// added (the scan reports the segment), and a segment that changed during the read
    /// gives none of its records (the scan drops them): [`stream_records`] returns its
    /// number, and the caller starts again without it. How far the walk read each
    /// segment, by segment number ([`super::ClusterInputs::walked_to`]; `None`: it changed
    /// under the walk, which kept none of it): a segment read again to another place —
    /// further, shorter, or now unreadable or readable — changed since the walk; it gives
    /// none of its records either, and is named as not read ([`LogItem::Undecodable`]):
    /// the scan saw other bytes there.
    AsWalked(Vec<Option<u64>>),
    /// As [`super::collect_dir`]: what was read stays, followed by a [`LogItem::Undecodable`]
    /// naming the file and the error.
    Report,
}

/// How [`stream_records`] reads a directory.
pub(crate) struct SegmentRead<'a> {
    /// `--max-bytes`: at most this many bytes of each segment.
    pub(crate) max_bytes: Option<u64>,
    /// The decompression cap per batch (0: the scan's default).
    pub(crate) max_decompressed: usize,
    /// Keep a [`super::BatchKey`] per entry in each segment's collector.
    pub(crate) batch_keys: bool,
    pub(crate) errors: &'a ReadErrors,
    /// Segments (by number) not read.
    pub(crate) skip: &'a BTreeSet<u32>,
}

impl<'a> SegmentRead<'a> {
    /// Every segment, errors reported ([`ReadErrors::Report`]), no batch keys.
    pub(crate) fn report(max_bytes: Option<u64>, max_decompressed: usize) -> SegmentRead<'a> {
        static NONE: BTreeSet<u32> = BTreeSet::new();
        SegmentRead {
            max_bytes,
            max_decompressed,
            batch_keys: false,
            errors: &ReadErrors::Report,
            skip: &NONE,
        }
    }
}

/// Read the segments of a partition directory in order, each through a [`Collector`] of
/// its own (numbered among the segments with a `.log`, as a walk numbers them). With
/// `drain`, each item is handed to it as soon as it is collected (memory holds one batch);
/// `end` then takes each segment's name and collector (its batch keys, and the items not
/// drained). Segments numbered in `how.skip` are not read, nor, with
/// [`ReadErrors::AsWalked`], those known changed before they are read. `Err(n)`: segment
/// `n` changed during the read, or since the walk read it in a way only its read shows
/// (it grew; `AsWalked`; never with [`ReadErrors::Report`]).
pub(crate) fn stream_records(
    p: &PartitionDir,
    how: &SegmentRead<'_>,
    mut drain: Option<&mut dyn FnMut(LogItem)>,
    end: &mut dyn FnMut(&str, Collector),
) -> Result<(), u32> {
    let topic = p.tp.as_ref().map_or("", |tp| tp.topic.as_str());
    let names = p.log_names();
    let logs = p.segments.iter().filter_map(|s| s.log.as_ref());
    for ((n, log), name) in (0u32..).zip(logs).zip(&names) {
        // How far the walk read this segment (`Some(None)`: it kept none of it).
        let walked = match how.errors {
            ReadErrors::AsWalked(to) => Some(to.get(n as usize).copied().flatten()),
            ReadErrors::Report => None,
        };
        let mut c = Collector::new(topic, how.batch_keys, how.max_decompressed);
        let mut flush = |c: &mut Collector| {
            if let Some(each) = drain.as_mut() {
                c.items.drain(..).for_each(&mut **each);
            }
        };
        // Known changed before it is read (the walk kept none of it, or it is now shorter
        // than where the walk's entries ended): skipped at once, no pass starts again.
        let changed = match walked {
            Some(None) => true,
            Some(Some(to)) => std::fs::metadata(log).map_or(0, |m| m.len()) < to,
            None => false,
        };
        if changed || how.skip.contains(&n) {
            if let Some(Some(to)) = walked {
                c.items.push(LogItem::Undecodable {
                    segment: n,
                    message: format!(
                        "{}: changed since the scan read it (its entries ended at byte {to} then)",
                        log.display()
                    ),
                    offsets: None,
                });
            }
        } else {
            // Entries too large to hold are checked streaming, never buffered.
            let res = segment::walk_entries_items(
                log,
                segment::ReadPolicy::Read,
                how.max_bytes,
                |item| {
                    match item {
                        segment::Item::Entry(e) => c.entry(e, n),
                        segment::Item::Big(b) => c.big(&b, n),
                    }
                    flush(&mut c);
                },
            );
            match (res, walked) {
                (Ok(_), None) => {}
                (Err(e), None) => c.items.push(LogItem::Undecodable {
                    segment: n,
                    message: format!("{}: {e}", log.display()),
                    offsets: None,
                }),
                (Err(e), Some(_)) if segment::changed_during_read(&e) => return Err(n),
                // Read as far as the walk read it (failing where it failed): the records
                // the walk kept, nothing more.
                (_, Some(to)) if to == c.read_to() => {}
                (_, Some(_)) => return Err(n),
            }
        }
        flush(&mut c);
        end(name, c);
    }
    Ok(())
}

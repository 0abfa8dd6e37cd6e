//! A `__transaction_state` partition's records read again from its segments, one batch
//! at a time, as the walk's [`Collector`] keeps them: for a partition whose walk kept none
//! (more than `ScanOptions::keep_coordinator_bytes`) or that the scan did not select.

use super::{Collector, LogItem};

/// The file names of a partition directory's segments with a `.log`, in order: what a
/// walk's segment numbers index ([`ClusterInputs::segments`]).
pub(crate) fn segment_names(p: &crate::discover::layout::PartitionDir) -> Vec<String> {
    p.segments
        .iter()
        .filter_map(|s| s.log.as_ref())
        .map(|log| {
            log.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        })
        .collect()
}

/// What [`stream_records`] does with a segment it cannot read whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReadErrors {
    /// As the scan's walk keeps records: what was read before the error stays, nothing is
    /// added (the scan reports the segment), and a segment that changed during the read
    /// gives none of its records (the scan drops them): [`stream_records`] returns its
    /// number, and the caller starts again without it.
    AsWalked,
    /// As [`super::collect_dir`]: what was read stays, followed by a [`LogItem::Undecodable`]
    /// naming the file and the error.
    Report,
}

/// The records of a `__transaction_state` (or `__remote_log_metadata`) partition
/// directory, read again, handed to `each` one at a time with their segment number, in
/// offset order, as a walk's [`Collector`] keeps them; none is kept here, so memory holds
/// one batch. Segments numbered in `skip` are not read. `Err(n)`: segment `n` changed
/// during the read ([`ReadErrors::AsWalked`]).
pub(crate) fn stream_records(
    p: &crate::discover::layout::PartitionDir,
    max_bytes: Option<u64>,
    max_decompressed: usize,
    errors: ReadErrors,
    skip: &std::collections::BTreeSet<u32>,
    each: &mut dyn FnMut(LogItem),
) -> Result<(), u32> {
    let topic = p.tp.as_ref().map_or("", |tp| tp.topic.as_str());
    let logs = p.segments.iter().filter_map(|s| s.log.as_ref());
    for (n, log) in (0u32..).zip(logs) {
        if skip.contains(&n) {
            continue;
        }
        let mut c = Collector::new(topic, false, max_decompressed);
        let mut drain = |c: &mut Collector| c.items.drain(..).for_each(&mut *each);
        let res = crate::read::segment::walk_entries_items(
            log,
            crate::read::segment::ReadPolicy::Read,
            max_bytes,
            |item| {
                match item {
                    crate::read::segment::Item::Entry(e) => c.entry(e, n),
                    crate::read::segment::Item::Big(b) => c.big(&b, n),
                }
                drain(&mut c);
            },
        );
        match res {
            Ok(_) => {}
            Err(e) if errors == ReadErrors::Report => each(LogItem::Undecodable {
                segment: n,
                message: format!("{}: {e}", log.display()),
                offsets: None,
            }),
            Err(e) if crate::read::segment::error_reason(&e) == Some("changed_during_read") => {
                return Err(n);
            }
            Err(_) => {}
        }
    }
    Ok(())
}

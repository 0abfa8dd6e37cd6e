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
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ReadErrors {
    /// As the scan's walk keeps records: what was read before the error stays, nothing is
    /// added (the scan reports the segment), and a segment that changed during the read
    /// gives none of its records (the scan drops them): [`stream_records`] returns its
    /// number, and the caller starts again without it. Each segment's length as the walk
    /// read it, by segment number (`None`: the walk could not read it): a segment the
    /// walk read that now cannot be read, or reads to another length, changed since the
    /// walk; it gives none of its records either, and is named as not read
    /// ([`LogItem::Undecodable`]): the scan saw other bytes there.
    AsWalked(Vec<Option<u64>>),
    /// As [`super::collect_dir`]: what was read stays, followed by a [`LogItem::Undecodable`]
    /// naming the file and the error.
    Report,
}

/// The records of a `__transaction_state` (or `__remote_log_metadata`) partition
/// directory, read again, handed to `each` one at a time with their segment number, in
/// offset order, as a walk's [`Collector`] keeps them; none is kept here, so memory holds
/// one batch. Segments numbered in `skip` are not read. `Err(n)`: segment `n` changed
/// during the read, or since the walk read it ([`ReadErrors::AsWalked`]).
pub(crate) fn stream_records(
    p: &crate::discover::layout::PartitionDir,
    max_bytes: Option<u64>,
    max_decompressed: usize,
    errors: &ReadErrors,
    skip: &std::collections::BTreeSet<u32>,
    each: &mut dyn FnMut(LogItem),
) -> Result<(), u32> {
    let topic = p.tp.as_ref().map_or("", |tp| tp.topic.as_str());
    let logs = p.segments.iter().filter_map(|s| s.log.as_ref());
    for (n, log) in (0u32..).zip(logs) {
        // The length the walk read of this segment, when it read it.
        let walked = match errors {
            ReadErrors::AsWalked(lens) => lens.get(n as usize).copied().flatten(),
            ReadErrors::Report => None,
        };
        if skip.contains(&n) {
            if let Some(len) = walked {
                each(LogItem::Undecodable {
                    segment: n,
                    message: format!(
                        "{}: changed since the scan read it ({len} bytes then)",
                        log.display()
                    ),
                    offsets: None,
                });
            }
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
            Ok((_, len)) if walked.is_some_and(|w| w != len) => return Err(n),
            Ok(_) => {}
            Err(e) if *errors == ReadErrors::Report => each(LogItem::Undecodable {
                segment: n,
                message: format!("{}: {e}", log.display()),
                offsets: None,
            }),
            Err(e)
                if walked.is_some()
                    || crate::read::segment::error_reason(&e) == Some("changed_during_read") =>
            {
                return Err(n);
            }
            Err(_) => {}
        }
    }
    Ok(())
}

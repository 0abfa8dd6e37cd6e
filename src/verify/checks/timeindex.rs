//! The time index (`.timeindex`) against the log: its length, and every entry against
//! the max timestamp of the batch ending at its offset (`LogSegment.append`'s
//! `timeIndex().maybeAppend`).

use super::{EVIDENCE_CAP, SegmentCtx, load_checked, mk, name_of, report_if_changed, served};
use crate::finding::{Finding, Kind};
use crate::read::format::index::{IndexSanityError, TimeCheck, TimeIndex};
use crate::read::segment::FileClass;
use serde_json::json;

/// Check one segment's time index; for a broker before 2.3, whose load runs
/// `TimeIndex.sanityCheck` on every segment, a failed check (the last slot's timestamp
/// below the first's, its offset below the base, a length that is not a multiple of 12)
/// sets `corrupt_index`: the broker recovers the segment.
pub(super) fn check(
    c: &SegmentCtx<'_>,
    corrupt_index: &mut Option<String>,
    out: &mut Vec<Finding>,
) {
    let (r, opts, s, verdicts) = (c.r, c.opts, c.files, c.verdicts);
    let pre_2_3 = c.pre_2_3;
    if let (Some(tpath), Some(v)) = (s.timeindex.as_deref(), verdicts)
        && let Some(bytes) = load_checked(tpath, FileClass::Index, opts, r, out)
    {
        report_if_changed(&bytes, tpath, r, out);
        let tname = name_of(tpath);
        let tidx = TimeIndex::new(&bytes, s.base_offset);
        let layout = tidx.layout();
        if layout.trailing_bytes != 0 {
            out.push(
                mk(r, Kind::IndexCorrupt, &tname, format!("{tname}: {} bytes is not a multiple of 12", tidx.len_bytes()))
                    .evidence(json!({"length": tidx.len_bytes(), "trailing_bytes": layout.trailing_bytes}))
                    .broker(served(r, "CorruptIndexException from the time index sanityCheck (run at load before 2.3); timestamp lookups misbehave", "CorruptIndexException from the time index sanityCheck (run at load before 2.3); no timestamp lookup goes through a -delete copy (deleted once loaded)")),
            );
        }
        // Kafka's order: the last slot's timestamp, its offset, then the length. Since 2.3
        // the load does not run the check (nor is it said here: a crashed broker leaves
        // the active segment's time index untrimmed, whose zero slots fail it, and the
        // entry checks below report slots that disagree with the log).
        match tidx.sanity_check() {
            Err(IndexSanityError::BadLength { .. }) if pre_2_3 && corrupt_index.is_none() => {
                *corrupt_index = Some("corrupt time index: length not a multiple of 12".into());
            }
            Err(
                e @ (IndexSanityError::TimestampBelowFirst { .. }
                | IndexSanityError::TimeOffsetBelowBase { .. }),
            ) if pre_2_3 => {
                let msg = e.kafka_message(&tpath.display().to_string());
                out.push(
                    mk(r, Kind::IndexCorrupt, &tname, format!("{tname}: {msg}"))
                        .evidence(json!({"sanity": e, "length": tidx.len_bytes()}))
                        .broker("CorruptIndexException from the time index sanityCheck, which brokers before 2.3 run at load: the segment is recovered (indexes rebuilt)"),
                );
                if corrupt_index.is_none() {
                    *corrupt_index = Some(format!("corrupt time index: {msg}"));
                }
            }
            _ => {}
        }
        // The entries were checked against the scan's walk (`None`: the scan could not
        // read this index; nothing to say about its entries then).
        let (count, bad) = v
            .time
            .as_ref()
            .map_or((0, &[][..]), |p| (p.count, &p.first[..]));
        if let Some(first) = bad.first() {
            let ev: Vec<_> = bad.iter().take(EVIDENCE_CAP).map(|c| json!({"slot": c.entry.slot, "timestamp": c.entry.timestamp, "offset": c.entry.offset, "check": c.check, "out_of_order_after": c.out_of_order_after})).collect();
            let what = match (first.out_of_order_after, first.check) {
                (Some(prev), _) => format!(
                    "timestamp {} not above the previous entry's {prev}",
                    first.entry.timestamp
                ),
                (_, TimeCheck::TimestampMismatch { log_timestamp }) => format!(
                    "indexed timestamp {} but the batch ending at offset {} has max timestamp {log_timestamp}",
                    first.entry.timestamp, first.entry.offset
                ),
                (_, TimeCheck::NotFound { found_log_offset }) => format!(
                    "no batch ends at offset {} (next batch ends at {found_log_offset})",
                    first.entry.offset
                ),
                _ => String::new(),
            };
            out.push(
                mk(r, Kind::TimeindexMismatch, &tname, format!("{tname}: {} of {} entries disagree with the log; first: slot {}: {what}", count, layout.used, first.entry.slot))
                    .offset(first.entry.offset)
                    .evidence(json!({"mismatches": count, "entries": ev}))
                    .broker(served(r, "not checked at load: ListOffsets by timestamp and time-based retention use these entries until recovery rebuilds the index", "not checked at load; a -delete copy answers no ListOffsets and is not retained (deleted once loaded)")),
            );
        }
    }
}

//! The offset index (`.index`) against the log: the broker's sanity check, the format
//! check, and every entry against the batch it points at (`DumpLogSegments.dumpIndex`).

use super::{
    EVIDENCE_CAP, SegmentCtx, format_error, load_checked, mk, name_of, report_if_changed, served,
};
use crate::finding::{Finding, Kind, Severity};
use crate::read::format::index::{OffsetCheck, OffsetIndex};
use crate::read::segment::FileClass;
use serde_json::json;

/// Check one segment's offset index. A missing index is an `index_corrupt` of severity
/// info (the broker recovers the segment); a failed sanity check sets `corrupt_index`
/// when the broker (before 2.3) recovers the segment for it.
pub(super) fn check(
    c: &SegmentCtx<'_>,
    corrupt_index: &mut Option<String>,
    out: &mut Vec<Finding>,
) {
    let (r, opts, s, verdicts, log_name) = (c.r, c.opts, c.files, c.verdicts, c.log_name.as_str());
    let (pre_2_3, missing_index) = (c.pre_2_3, c.missing_index);
    if missing_index {
        out.push(
            mk(r, Kind::IndexCorrupt, log_name, format!("{log_name}: no offset index: the broker recovers this segment at load (rebuilds its indexes)"))
                .severity(Severity::Info)
                .evidence(json!({"missing": format!("{:020}.index", s.base_offset)}))
                .broker("NoSuchFileException at load: LogLoader runs LogSegment.recover on the segment (CRC check, index rebuild, truncation at the first invalid batch), even after a clean shutdown"),
        );
    }
    if let (Some(ipath), Some(v)) = (s.index.as_deref(), verdicts)
        && let Some(bytes) = load_checked(ipath, FileClass::Index, opts, r, out)
    {
        report_if_changed(&bytes, ipath, r, out);
        let iname = name_of(ipath);
        let idx = OffsetIndex::new(&bytes, s.base_offset);
        let abs = ipath.display().to_string();
        if let Err(e) = idx.sanity_check() {
            if pre_2_3 {
                *corrupt_index = Some(format!("corrupt offset index: {}", e.kafka_message(&abs)));
            }
            out.push(
                mk(r, Kind::IndexCorrupt, &iname, format!("{iname}: {}", e.kafka_message(&abs)))
                    .evidence(json!({"sanity": e, "length": idx.len_bytes()}))
                    .broker(served(r, "CorruptIndexException from sanityCheck: brokers before 2.3 recover the segment at load; later brokers do not check at load and misread lookups until the segment is recovered", "CorruptIndexException from sanityCheck: brokers before 2.3 recover the segment at load; later brokers do not check at load, and no lookup goes through a -delete copy (deleted once loaded)")),
            );
        } else if let Err(e) = idx.check() {
            out.push(
                format_error(r, Kind::IndexCorrupt, &iname, &e)
                    .broker(served(r, "not checked at load (since 2.3); offset lookups through this index land on wrong positions until the segment is recovered (InvalidOffsetException on append past it)", "not checked at load (since 2.3); no lookup or append goes through a -delete copy (deleted once loaded)")),
            );
        }
        // The entries were checked against the scan's walk (`None`: the scan could not
        // read this index; nothing to say about its entries then).
        let (count, bad) = v
            .offset
            .as_ref()
            .map_or((0, &[][..]), |p| (p.count, &p.first[..]));
        if let Some(first) = bad.first() {
            let ev: Vec<_> = bad.iter().take(EVIDENCE_CAP).map(|c| json!({"slot": c.entry.slot, "offset": c.entry.offset, "position": c.entry.position, "check": c.check, "log_offset": c.log_offset()})).collect();
            out.push(
                mk(r, Kind::IndexMismatch, &iname, format!(
                    "{iname}: {} of {} entries do not point at a batch ending at their offset; first: slot {} offset {} position {} ({})",
                    count, idx.layout().used, first.entry.slot, first.entry.offset, first.entry.position, describe_offset_check(&first.check)))
                    .offset(first.entry.offset)
                    .position(first.entry.position.max(0) as u64)
                    .evidence(json!({"mismatches": count, "entries": ev}))
                    .broker(served(r, "not checked at load: fetches and offset lookups start from the wrong byte position (consumers may get OffsetOutOfRange or skip/repeat batches) until recovery rebuilds the index", "not checked at load; nothing is fetched from a -delete copy (deleted once loaded)")),
            );
        }
    }
}

fn describe_offset_check(c: &OffsetCheck) -> String {
    match *c {
        OffsetCheck::Exact => "exact".into(),
        OffsetCheck::FollowerChunk { batch_last_offset } => {
            format!("follower chunk ending at {batch_last_offset}")
        }
        OffsetCheck::Mismatch { batch_last_offset } => {
            format!("the batch there ends at offset {batch_last_offset}")
        }
        OffsetCheck::NotABatchStart => "no batch starts there".into(),
        OffsetCheck::BeyondLog => "beyond the end of the log".into(),
    }
}

//! The group coordinator's transaction markers in `__consumer_offsets`, as its load reads
//! them.

use super::{Collector, LogItem, decompressor};
use crate::read::format;

impl Collector {
    /// The COMMIT/ABORT markers of a `__consumer_offsets` control batch as the group
    /// coordinator's load reads them (`CoordinatorLoaderImpl`): every record of the batch,
    /// by its key alone (`ControlRecordType.parse`; the marker's value — version and
    /// coordinator epoch — is never read, so a value that does not parse still commits or
    /// aborts). A key that does not parse is skipped here (the load throws on it: the
    /// scan's `invalid_batch` says so).
    pub(super) fn coordinator_markers(&mut self, b: &format::BatchView<'_>) {
        let dec = decompressor(&mut self.dec, self.max_decompressed);
        let Ok(recs) = format::batch_records(b, dec) else {
            return;
        };
        for r in recs.map_while(Result::ok) {
            let commit = match format::control::parse_control_key(r.key).map(|k| k.kind) {
                Ok(format::control::ControlType::Commit) => true,
                Ok(format::control::ControlType::Abort) => false,
                _ => continue,
            };
            self.items.push(LogItem::Marker {
                producer_id: b.producer_id(),
                commit,
            });
        }
    }
}

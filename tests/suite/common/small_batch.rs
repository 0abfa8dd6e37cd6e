//! The smallest realistic batch: one record, value `{"v":1}`, base offset 0, base
//! timestamp 1 700 000 000 000. Tests that write millions of batches copy it and patch
//! the offsets (outside the CRC) and, where they need them, the timestamps.

use klogscan::testkit::BatchSpec;
use klogscan::testkit::encode::RecordSpec;

/// The encoded batch (v2, CRC valid).
pub fn one_record_batch() -> Vec<u8> {
    BatchSpec {
        base_offset: 0,
        partition_leader_epoch: 0,
        base_timestamp: 1_700_000_000_000,
        records: vec![RecordSpec {
            value: Some(b"{\"v\":1}".to_vec()),
            ..RecordSpec::default()
        }],
        ..BatchSpec::default()
    }
    .encode()
}

//! `klogscan dump`: what `kafka-dump-log.sh --files` prints (`kafka-semantics.md` §7.2),
//! as text in Kafka's exact shape or as JSON Lines.
//!
//! OWNER: dump helper (`log.rs` = `.log`/`.checkpoint` files) and index helper
//! (`files.rs` = `.index`, `.timeindex`, `.txnindex`, `.snapshot`, checkpoints).

pub mod files;
pub mod log;

/// Output format of `dump`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DumpFormat {
    #[default]
    Text,
    /// JSON Lines: one object per batch (records nested with deep iteration).
    Json,
}

/// Options of `dump`, mirroring kafka-dump-log's.
#[derive(Debug, Clone, Default)]
pub struct DumpOptions {
    pub deep_iteration: bool,
    pub print_data_log: bool,
    pub skip_record_metadata: bool,
    pub max_bytes: Option<u64>,
    pub format: DumpFormat,
    /// Decompression cap per batch.
    pub max_decompressed: Option<usize>,
}

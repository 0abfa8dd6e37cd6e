//! Stage 2, **read**: bytes to views. [`format`](mod@format) is the zero-copy, I/O-free format layer (its
//! own crate, `klogscan-format`: batches, records, control records, codecs, indexes,
//! snapshots, checkpoints, coordinator and metadata records); [`segment`] reads files
//! read-only under a read policy (mapped or read, bounded pieces) and walks their entries.
//!
//! Imports: `klogscan-format` and the shared leaves only; never a later stage.

pub use klogscan_format as format;
pub mod segment;

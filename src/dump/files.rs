//! Dump of index, time index, transaction index, producer snapshot and checkpoint files.
//!
//! OWNER: index helper.

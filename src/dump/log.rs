//! Dump of `.log` segments and KRaft `.checkpoint` snapshots.
//!
//! OWNER: dump helper.

//! Reading files, read-only, under one read policy.
//!
//! * Only regular files are read: every open goes through [`open_regular`], which opens
//!   with `O_NONBLOCK` (a FIFO swapped in by a race cannot block the open or a read) and
//!   checks the type of what was opened (`fstat`). Anything else fails with
//!   [`NotRegularFile`] inside the `io::Error`.
//! * A file opens as a [`Handle`]: a regular file, or a member of an uncompressed tar read in
//!   place (`inplace`: the path is a placeholder the archive reader registered, the bytes a
//!   range of the archive). Every read here — maps, `pread`s, whole-file loads, the hole
//!   search — counts offsets from the member's start and stops at its end.
//! * One function, [`policy`], decides whether a file is mapped or read, from the user's
//!   [`MmapMode`] (`--mmap auto|never`): under `auto` every segment is mapped (guarded).
//! * A map is made only under the SIGBUS guard (`mapguard`): a file truncated under the
//!   map, or a page the disk cannot return (EIO), makes the map read zeros from there on
//!   and marks it changed ([`FileData::changed`]); the walks here then fail with
//!   [`ChangedDuringRead`] instead of the process dying of SIGBUS. When the guard cannot be
//!   installed the file is read instead of mapped, so no safe function here can raise
//!   SIGBUS.
//! * Whole-file loads ([`load`]) are bounded: a file larger than its kind can be
//!   ([`FileClass::max_len`]) is refused with [`TooLarge`]; under `--mmap never` a file
//!   larger than [`READ_BUDGET`] is refused too rather than allocated.

mod holes;
mod inplace;
pub use inplace::InPlace;
mod mapguard;
pub use mapguard::enable_guarded_maps;
mod open;
crate::internal_mod! {
    mod bigentry;
    mod prefetch;
    mod walk;
}

crate::internal_use!(bigentry::{BIG_ENTRY, BigEntry, Item, mapped_item});
crate::internal_use!(prefetch::Ahead);
crate::internal_use!(walk::*);
pub(crate) use holes::data_end;
pub use open::*;

//! Files read in place inside an uncompressed archive.
//!
//! A member of an uncompressed tar is a contiguous byte range of the archive file: it can
//! be read there, mapped or with `pread`, instead of being copied out first. The archive
//! reader (`discover::archive`) lays out the member's path as a placeholder: an empty
//! sparse file of the member's length (no data block), so that directory walks and
//! `metadata` see the tree as the archive holds it, and registers here which range of
//! which opened archive the placeholder stands for. [`super::open_regular`] looks every
//! file it opens up by identity (device and inode, whatever the path's spelling) and
//! returns a [`super::Handle`] over the archive's range for a placeholder, so every read
//! of the read layer (maps, chunked walks, whole-file loads, hole search) reads the
//! member's bytes in the archive. A placeholder read by any other means reads zeros:
//! only files every reader of which goes through this layer are placed so.
//!
//! The archive is held open from the moment its members are registered: replacing the
//! archive's path afterwards does not change what is read.

use std::collections::HashMap;
use std::fs::File;
use std::io;
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

/// Where a placeholder's bytes are.
#[derive(Debug, Clone)]
pub(super) struct Member {
    pub(super) archive: Arc<File>,
    pub(super) offset: u64,
    pub(super) len: u64,
}

/// Device and inode of a placeholder.
type Key = (u64, u64);

fn table() -> &'static Mutex<HashMap<Key, Member>> {
    static TABLE: OnceLock<Mutex<HashMap<Key, Member>>> = OnceLock::new();
    TABLE.get_or_init(Mutex::default)
}

#[cfg(unix)]
fn key(meta: &std::fs::Metadata) -> Option<Key> {
    use std::os::unix::fs::MetadataExt;
    Some((meta.dev(), meta.ino()))
}

#[cfg(not(unix))]
fn key(_: &std::fs::Metadata) -> Option<Key> {
    None
}

/// The member a file of this metadata stands for, if it is a registered placeholder.
pub(super) fn lookup(meta: &std::fs::Metadata) -> Option<Member> {
    let k = key(meta)?;
    let t = table().lock().unwrap_or_else(PoisonError::into_inner);
    t.get(&k).cloned()
}

/// Members registered by one archive reader; unregistered when dropped (the
/// placeholders themselves go with the temporary directory that holds them).
#[derive(Debug, Default)]
pub struct InPlace {
    keys: Vec<Key>,
}

impl InPlace {
    /// Whether placeholders can be resolved on this platform (identity by device and
    /// inode); where not, members are extracted.
    pub fn supported() -> bool {
        cfg!(unix)
    }

    /// Make `placeholder` (a new path, or one an earlier copy of the same member made)
    /// stand for `len` bytes of `archive` from `offset`: a sparse file of that length,
    /// registered. The caller has checked that the range lies inside the archive.
    pub fn place(
        &mut self,
        placeholder: &Path,
        archive: &Arc<File>,
        offset: u64,
        len: u64,
    ) -> io::Result<()> {
        let f = File::create(placeholder)?;
        f.set_len(len)?;
        let k = key(&f.metadata()?)
            .ok_or_else(|| io::Error::other("files cannot be read in place here"))?;
        let member = Member {
            archive: Arc::clone(archive),
            offset,
            len,
        };
        table()
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(k, member);
        if !self.keys.contains(&k) {
            self.keys.push(k);
        }
        Ok(())
    }

    /// Members placed.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// No member placed.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }
}

impl Drop for InPlace {
    fn drop(&mut self) {
        let mut t = table().lock().unwrap_or_else(PoisonError::into_inner);
        for k in &self.keys {
            t.remove(k);
        }
    }
}

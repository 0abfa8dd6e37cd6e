//! The private temporary directory archives are extracted into, and what keeps it from
//! outliving the process and from filling its file system.
//!
//! A process ended by a signal (SIGINT, SIGTERM, SIGHUP: no destructor runs) or aborted
//! (an allocation failure aborts a Rust process) cannot remove its own files. So the
//! directory has a reaper: a small `/bin/sh` child in its own process group, ignoring the
//! terminal's signals, started before the directory is made, that waits for the end of a
//! pipe only this process holds and then removes the directories named after this process
//! (`klogscan-<pid>-*` in the temporary directory). The kernel closes that pipe however the process ends (even on
//! SIGKILL), so the directory goes with it. Without a shell the directory is still removed
//! on every ordinary exit (the destructor).

use std::io;
use std::path::Path;

/// The temporary directory, removed on drop and by its reaper when the process dies.
#[derive(Debug)]
pub(super) struct TempRoot {
    /// Dropped first: closing its pipe lets it remove the directory, and waiting for it
    /// means the directory is gone when the drop returns.
    reaper: Option<Reaper>,
    dir: tempfile::TempDir,
}

impl TempRoot {
    /// A new private directory (mode 0700) under the system's temporary directory
    /// ([`base`]), with its reaper; refused when that directory is inside one of the
    /// `inputs` (the evidence is never written to, not even by a temporary directory).
    pub(super) fn new(inputs: &[std::path::PathBuf]) -> io::Result<TempRoot> {
        let base = base();
        if let Some((input, _)) = super::inside_input(&base, inputs) {
            return Err(io::Error::other(format!(
                "TMPDIR {} is inside the input {}: klogscan never writes into the evidence it reads; set TMPDIR to a directory outside the inputs",
                crate::escape::path(&base),
                crate::escape::path(&input)
            )));
        }
        // The reaper is told the name's prefix (this process's id) before the directory
        // exists: a signal between the two leaves nothing behind.
        let prefix = format!("klogscan-{}-", std::process::id());
        let reaper = Reaper::spawn(&base, &prefix).ok();
        let dir = tempfile::Builder::new().prefix(&prefix).tempdir_in(&base)?;
        Ok(TempRoot { reaper, dir })
    }

    pub(super) fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for TempRoot {
    fn drop(&mut self) {
        // The reaper removes the directory as its pipe closes; `dir`'s own drop then finds
        // nothing left (and removes it when there was no reaper).
        self.reaper.take();
    }
}

/// The system's temporary directory: `TMPDIR`, or `/tmp` when it is unset or empty (as
/// `mktemp` reads it: `std::env::temp_dir` gives an empty `TMPDIR` as is, and an empty
/// base is the working directory).
pub(crate) fn base() -> std::path::PathBuf {
    let b = std::env::temp_dir();
    match b.as_os_str().is_empty() {
        true => std::path::PathBuf::from("/tmp"),
        false => b,
    }
}

#[derive(Debug)]
struct Reaper(std::process::Child);

impl Reaper {
    #[cfg(unix)]
    fn spawn(base: &Path, prefix: &str) -> io::Result<Reaper> {
        use std::os::unix::process::CommandExt;
        use std::process::{Command, Stdio};
        let child = Command::new("/bin/sh")
            .arg("-c")
            .arg(
                "trap '' HUP INT TERM QUIT PIPE; while read -r _; do :; done; rm -rf -- \"$0/$1\"*",
            )
            .arg(base)
            .arg(prefix)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            // Not in the terminal's foreground group: ^C reaches klogscan, not its reaper.
            .process_group(0)
            .spawn()?;
        Ok(Reaper(child))
    }

    #[cfg(not(unix))]
    fn spawn(_: &Path, _: &str) -> io::Result<Reaper> {
        Err(io::Error::other("no reaper on this platform"))
    }
}

impl Drop for Reaper {
    fn drop(&mut self) {
        drop(self.0.stdin.take());
        let _ = self.0.wait();
    }
}

/// Bytes extraction may still write to the file system holding `dir`: what it has free for
/// an unprivileged user, less a margin (5 % of its size, between 64 MiB and 1 GiB) so that
/// the host keeps room for everything else. `None` when the file system cannot tell.
#[cfg(unix)]
pub(crate) fn room_on(dir: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    // SAFETY: statvfs writes the struct it is given and reads the NUL-terminated path.
    let mut s: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(c.as_ptr(), &mut s) } != 0 {
        return None;
    }
    let unit = s.f_frsize as u64;
    let free = (s.f_bavail as u64).saturating_mul(unit);
    let size = (s.f_blocks as u64).saturating_mul(unit);
    Some(free.saturating_sub(margin(size)))
}

#[cfg(not(unix))]
pub(crate) fn room_on(_: &Path) -> Option<u64> {
    None
}

/// What extraction leaves free on a file system of `size` bytes.
pub(super) fn margin(size: u64) -> u64 {
    (size / 20).clamp(64 << 20, 1 << 30)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_directory_goes_with_its_owner() {
        let t = TempRoot::new(&[]).unwrap();
        let p = t.path().to_path_buf();
        std::fs::write(p.join("x"), b"x").unwrap();
        assert!(t.reaper.is_some(), "a reaper on unix");
        drop(t);
        assert!(!p.exists());
    }

    #[test]
    fn margins() {
        assert_eq!(margin(0), 64 << 20);
        assert_eq!(margin(10 << 30), 512 << 20);
        assert_eq!(margin(1 << 40), 1 << 30);
        let room = room_on(&base());
        assert!(room.is_some());
    }
}

//! Surviving a mapped file that shrinks or fails under us.
//!
//! A read through a file mapping beyond the file's current end (the file was truncated
//! after it was mapped: a follower's `truncateTo`, a retention delete and re-create, an
//! operator) or over a page the disk cannot return (EIO) raises SIGBUS, whose default
//! action kills the process. Every map this crate makes is registered here; a SIGBUS
//! handler (installed once, process-wide, on the first registration) checks whether the
//! faulting address lies in a registered map and, if so, replaces the rest of that map
//! from the faulting page on with anonymous zero pages and marks the map as changed. The
//! faulting read then restarts and sees zeros; the owner of the map checks
//! [`Guard::changed`] when it is done and reports the file as changed during the read
//! instead of trusting anything it saw.
//!
//! A SIGBUS at any other address is not ours: the handler puts the previous disposition
//! back and returns, so the access faults again under it (the default: the process dies
//! as it would have without us). A program embedding the library that installs its own
//! SIGBUS handler after ours replaces ours; maps made then are no longer protected.
//!
//! Installing a process-wide signal handler is the program's choice, not a library's: the
//! handler is installed only after [`enable_guarded_maps`] (the CLI calls it first thing;
//! an embedder opts in the same way, as ripgrep's `MmapChoice::auto` is `unsafe` and
//! opt-in). Without it no map is made and every file is read (`read()` into bounded
//! buffers): the same findings, at the read path's speed (docs/performance.md).
//!
//! The handler only does atomic loads and stores and calls `mmap` and `sigaction`
//! (system calls; `mmap` is not on POSIX's async-signal-safe list but is a plain system
//! call on Linux and the BSDs, which is how database engines use the same technique).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// How many maps can be protected at the same time; a map made while all slots are taken
/// is not made (the caller reads the file instead).
const SLOTS: usize = 512;

struct Slot {
    busy: AtomicBool,
    start: AtomicUsize,
    len: AtomicUsize,
    changed: AtomicBool,
}

#[allow(clippy::declare_interior_mutable_const)]
const EMPTY: Slot = Slot {
    busy: AtomicBool::new(false),
    start: AtomicUsize::new(0),
    len: AtomicUsize::new(0),
    changed: AtomicBool::new(false),
};

static TABLE: [Slot; SLOTS] = [EMPTY; SLOTS];
/// 0: not installed; 1: installed; 2: installation failed (maps are then not made).
static STATE: AtomicUsize = AtomicUsize::new(0);
static INSTALL: std::sync::Once = std::sync::Once::new();
static PAGE: AtomicUsize = AtomicUsize::new(4096);
#[cfg(unix)]
/// Whether the program allowed the SIGBUS handler ([`enable_guarded_maps`]). klogscan's own
/// unit tests run with maps, as the CLI does.
static ALLOWED: AtomicBool = AtomicBool::new(cfg!(test));

/// Allow klogscan to install its process-wide SIGBUS handler, so that segments may be mapped
/// (`--mmap auto`). Without this call the library never maps a file: it reads them.
///
/// # Safety
///
/// The handler replaces the process's SIGBUS disposition (the previous one is kept and put
/// back for faults outside klogscan's maps). The caller promises that nothing else in the
/// process installs a SIGBUS handler afterwards or relies on its own being the only one:
/// a handler installed later replaces klogscan's, and a file that shrinks under one of its
/// maps then kills the process.
pub unsafe fn enable_guarded_maps() {
    ALLOWED.store(true, Ordering::Release);
}

static PREVIOUS: std::sync::atomic::AtomicPtr<libc::sigaction> =
    std::sync::atomic::AtomicPtr::new(std::ptr::null_mut());

/// A registered map; unregistered on drop (drop it before unmapping).
#[derive(Debug)]
pub(crate) struct Guard {
    slot: usize,
}

impl Guard {
    /// Register the map `[start, start + len)`. `None` when the handler could not be
    /// installed or every slot is taken: the caller must not rely on a map then.
    pub(crate) fn register(start: *const u8, len: usize) -> Option<Guard> {
        if !ALLOWED.load(Ordering::Acquire) || !install() || len == 0 {
            return None;
        }
        for (i, s) in TABLE.iter().enumerate() {
            if s.busy
                .compare_exchange(false, true, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
            {
                s.changed.store(false, Ordering::Release);
                s.start.store(start as usize, Ordering::Release);
                s.len.store(len, Ordering::Release);
                return Some(Guard { slot: i });
            }
        }
        None
    }

    /// True once a read of the map faulted (the file shrank or could not be read): what
    /// was read from the faulting page on is zeros, not the file.
    pub(crate) fn changed(&self) -> bool {
        TABLE[self.slot].changed.load(Ordering::Acquire)
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        let s = &TABLE[self.slot];
        s.len.store(0, Ordering::Release);
        s.start.store(0, Ordering::Release);
        s.busy.store(false, Ordering::Release);
    }
}

#[cfg(unix)]
fn install() -> bool {
    INSTALL.call_once(|| {
        // SAFETY: plain libc calls with valid, zero-initialised arguments; the handler
        // only touches atomics and makes system calls.
        unsafe {
            let page = libc::sysconf(libc::_SC_PAGESIZE);
            if page > 0 {
                PAGE.store(page as usize, Ordering::Release);
            }
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_sigbus as *const () as usize;
            action.sa_flags = libc::SA_SIGINFO;
            libc::sigemptyset(&mut action.sa_mask);
            let previous: *mut libc::sigaction = Box::into_raw(Box::new(std::mem::zeroed()));
            if libc::sigaction(libc::SIGBUS, &action, previous) == 0 {
                PREVIOUS.store(previous, Ordering::Release);
                STATE.store(1, Ordering::Release);
            } else {
                drop(Box::from_raw(previous));
                STATE.store(2, Ordering::Release);
            }
        }
    });
    STATE.load(Ordering::Acquire) == 1
}

#[cfg(not(unix))]
fn install() -> bool {
    false
}

#[cfg(unix)]
extern "C" fn on_sigbus(_sig: libc::c_int, info: *mut libc::siginfo_t, _ctx: *mut libc::c_void) {
    // SAFETY: `info` is the kernel's siginfo for this signal (SA_SIGINFO).
    let addr = unsafe { (*info).si_addr() } as usize;
    let errno = errno_location();
    // SAFETY: reading errno of this thread, restored below.
    let saved = unsafe { errno.map(|e| *e) };
    let page = PAGE.load(Ordering::Acquire);
    for s in TABLE.iter() {
        let len = s.len.load(Ordering::Acquire);
        let start = s.start.load(Ordering::Acquire);
        if len == 0 || addr < start || addr - start >= len {
            continue;
        }
        let from = addr & !(page - 1);
        let end = (start + len).div_ceil(page) * page;
        // SAFETY: `[from, end)` lies inside a live read-only map this crate owns (it is
        // registered, and unregistered before being unmapped); replacing its pages with
        // anonymous zero pages keeps the range mapped for the rest of the walk, and the
        // owner's munmap removes them with the rest.
        let p = unsafe {
            libc::mmap(
                from as *mut libc::c_void,
                end - from,
                libc::PROT_READ,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                -1,
                0,
            )
        };
        if p != libc::MAP_FAILED {
            s.changed.store(true, Ordering::Release);
            if let (Some(e), Some(v)) = (errno, saved) {
                // SAFETY: this thread's errno.
                unsafe { *e = v };
            }
            return;
        }
        break;
    }
    // Not ours (or the remap failed): put the previous disposition back; the access
    // faults again under it.
    let previous = PREVIOUS.load(Ordering::Acquire);
    // SAFETY: `previous` is the disposition saved at installation (or null: default).
    unsafe {
        if previous.is_null() {
            libc::signal(libc::SIGBUS, libc::SIG_DFL);
        } else {
            libc::sigaction(libc::SIGBUS, previous, std::ptr::null_mut());
        }
    }
}

#[cfg(all(unix, any(target_os = "linux", target_os = "android")))]
fn errno_location() -> Option<*mut libc::c_int> {
    // SAFETY: returns this thread's errno address.
    Some(unsafe { libc::__errno_location() })
}

#[cfg(all(unix, not(any(target_os = "linux", target_os = "android"))))]
fn errno_location() -> Option<*mut libc::c_int> {
    None
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn a_truncated_map_reads_zeros_and_is_marked_changed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.log");
        std::fs::write(&path, vec![7u8; 64 << 10]).unwrap();
        let file = std::fs::File::open(&path).unwrap();
        // SAFETY: the test truncates the file under the map on purpose; the guard is
        // what is tested.
        let map = unsafe { memmap2::Mmap::map(&file).unwrap() };
        let guard = Guard::register(map.as_ptr(), map.len()).unwrap();
        assert_eq!(map[40 << 10], 7);
        assert!(!guard.changed());
        std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(8 << 10)
            .unwrap();
        // Beyond the new end: would be SIGBUS.
        let sum: u64 = map[16 << 10..].iter().map(|&b| b as u64).sum();
        assert_eq!(sum, 0);
        assert!(guard.changed());
        assert_eq!(map[100], 7, "pages before the fault are the file's");
        drop(guard);
        drop(map);
        // The slot is free again and a new map starts unchanged.
        let map = unsafe { memmap2::Mmap::map(&file).unwrap() };
        let guard = Guard::register(map.as_ptr(), map.len()).unwrap();
        assert!(!guard.changed());
    }
}

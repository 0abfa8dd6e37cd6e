//! The worker threads: rayon's global pool, started once with as many workers as the
//! address-space limit leaves room for ([`start_global_pool`]), and the pool a scan of
//! `--threads` runs on ([`with_threads`]).

use std::sync::atomic::{AtomicUsize, Ordering};

/// The most worker threads a scan uses (`--threads` above it is capped: 10 000 threads
/// cost minutes of thread creation and window bookkeeping, and gain nothing).
pub const MAX_THREADS: usize = 256;

/// Each worker's stack: the standard library's default, asked for explicitly so that
/// `RUST_MIN_STACK` (which sets the default for every new thread) cannot shrink it below
/// what the replay needs (`RUST_MIN_STACK=1` gave the smallest stack the platform allows,
/// and the scan died of SIGSEGV).
const WORKER_STACK: usize = 2 << 20;

/// A pool builder of `n` workers with [`WORKER_STACK`] each.
fn builder(n: usize) -> rayon::ThreadPoolBuilder {
    rayon::ThreadPoolBuilder::new()
        .num_threads(n)
        .stack_size(WORKER_STACK)
}

/// Start rayon's global pool, once, before anything uses it: `threads` workers (rayon's
/// default when `None`: `RAYON_NUM_THREADS`, or one per CPU), as many of them as the
/// address-space limit leaves room for (4 MiB a worker against half the room `RLIMIT_AS`
/// leaves). Where workers cannot be started at all, the pool is the calling thread alone. The returned note says when
/// fewer threads run than asked. Why here: rayon starts its global pool once, and a
/// failed start leaves every later parallel call to panic
/// (`rayon_core::registry::global_registry`'s "not been initialized") — with
/// `RUST_BACKTRACE` set and the memory exhausted, to hang in the panic's backtrace — and
/// the workers a start did spawn before one failed can abort the process when they run
/// out of memory themselves (glibc: "failed to register TLS destructor"). Call it from
/// the thread that runs the command (a binary's main thread). `Err` when not even the
/// one-thread pool starts, or when another caller started the global pool first.
pub fn start_global_pool(threads: Option<usize>) -> Result<Option<String>, String> {
    let asked = threads
        .map(|n| n.clamp(1, MAX_THREADS))
        .unwrap_or_else(default_threads);
    let fit = threads_that_fit(asked);
    let mut why = None;
    if fit > 1 {
        let build = || builder(fit);
        // A pool of our own first: its failure leaves the global pool unstarted.
        let before = live_threads();
        match build().build() {
            Ok(pool) => {
                drop(pool);
                settle_threads(before);
                match build().build_global() {
                    Ok(()) => {
                        GLOBAL_POOL_THREADS.store(fit, Ordering::Relaxed);
                        return Ok((fit < asked).then(|| fewer_note(asked, fit, None)));
                    }
                    Err(e) => why = Some(e.to_string()),
                }
            }
            Err(e) => {
                settle_threads(before);
                why = Some(e.to_string());
            }
        }
    }
    builder(1)
        .use_current_thread()
        .build_global()
        .map(|()| {
            GLOBAL_POOL_THREADS.store(1, Ordering::Relaxed);
            (asked > 1).then(|| fewer_note(asked, 1, why.as_deref()))
        })
        .map_err(|e| {
            format!(
                "cannot start a thread pool: {}",
                why.map_or(e.to_string(), |w| format!("{w}; {e}"))
            )
        })
}

fn fewer_note(asked: usize, fit: usize, why: Option<&str>) -> String {
    let threads = if fit == 1 {
        "one thread".to_string()
    } else {
        format!("{fit} threads")
    };
    let why = why.unwrap_or("the address-space limit (ulimit -v) leaves room for no more stacks");
    format!("cannot start the {asked} worker threads ({why}): running on {threads}")
}

/// rayon's default pool size: `RAYON_NUM_THREADS` when set to a positive number, else one
/// thread per CPU.
fn default_threads() -> usize {
    std::env::var("RAYON_NUM_THREADS")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .filter(|n| *n > 0)
        .or_else(|| std::thread::available_parallelism().ok().map(|n| n.get()))
        .unwrap_or(1)
        .clamp(1, MAX_THREADS)
}

/// Address space a worker thread is counted for: its 2 MiB stack (rayon's workers take the
/// standard library's default) and as much again for what it allocates (under
/// `MALLOC_ARENA_MAX` unset glibc may reserve far more per thread: this is a floor, which
/// keeps a start from spawning workers that cannot possibly fit).
const THREAD_ADDRESS_SPACE: u64 = 4 << 20;

/// How many of `asked` workers fit under the process's address-space limit
/// (`RLIMIT_AS`), counting [`THREAD_ADDRESS_SPACE`] each against half of the room the
/// limit leaves above what is mapped now (the other half is the work's): `asked` when
/// there is no limit or the platform does not say; at least one.
pub(crate) fn threads_that_fit(asked: usize) -> usize {
    fit_in(asked, address_space_room())
}

/// [`threads_that_fit`] with `room` bytes of address space left (`None`: no limit).
fn fit_in(asked: usize, room: Option<u64>) -> usize {
    let Some(room) = room else {
        return asked;
    };
    let fit = (room / 2 / THREAD_ADDRESS_SPACE) as usize;
    asked.min(fit).max(1)
}

/// The address space left under `RLIMIT_AS` (`None`: no limit, or not known here).
fn address_space_room() -> Option<u64> {
    #[cfg(target_os = "linux")]
    {
        let mut r = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: `getrlimit` writes the struct it is given, nothing else.
        if unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut r) } != 0
            || r.rlim_cur == libc::RLIM_INFINITY
        {
            return None;
        }
        let status = std::fs::read_to_string("/proc/self/status").ok()?;
        let kib: u64 = status
            .lines()
            .find_map(|l| l.strip_prefix("VmSize:"))?
            .trim()
            .trim_end_matches("kB")
            .trim()
            .parse()
            .ok()?;
        Some(r.rlim_cur.saturating_sub(kib * 1024))
    }
    #[cfg(not(target_os = "linux"))]
    {
        None
    }
}

/// The threads of this process (`None` where the platform does not say).
fn live_threads() -> Option<usize> {
    Some(std::fs::read_dir("/proc/self/task").ok()?.count())
}

/// Wait (2 s at most) until the workers of a pool that failed to start, or was dropped,
/// are gone — rayon tells them to stop but does not wait for them, and their stacks,
/// still mapped, are memory the work that follows may need — i.e. until the process has
/// no more threads than `before`.
fn settle_threads(before: Option<usize>) {
    let Some(before) = before else { return };
    // Polled finely: workers told to stop are gone within a fraction of a millisecond,
    // and every run pays this wait (5 ms steps cost a run of a small directory 10 ms).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
    while live_threads().is_some_and(|n| n > before) && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_micros(50));
    }
}

/// The global pool's size once [`start_global_pool`] started it (0: not started here):
/// [`with_threads`] of that many runs on it rather than start a second pool.
static GLOBAL_POOL_THREADS: AtomicUsize = AtomicUsize::new(0);

/// Run `f` on a rayon pool with `threads` workers (at most [`MAX_THREADS`]; the global
/// pool when `None`, or when a pool of `threads` cannot be started).
pub fn with_threads<R: Send>(threads: Option<usize>, f: impl FnOnce() -> R + Send) -> R {
    let global = GLOBAL_POOL_THREADS.load(Ordering::Relaxed);
    match threads.map(|n| threads_that_fit(n.clamp(1, MAX_THREADS))) {
        Some(n) if n == global => f(),
        Some(n) => {
            let before = live_threads();
            match builder(n).build() {
                Ok(pool) => pool.install(f),
                Err(_) => {
                    settle_threads(before);
                    f()
                }
            }
        }
        None => f(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workers_fit_in_half_the_room_left() {
        const MIB: u64 = 1 << 20;
        // No limit: every worker asked for.
        assert_eq!(fit_in(64, None), 64);
        // 4 MiB a worker against half the room.
        assert_eq!(fit_in(64, Some(64 * MIB)), 8);
        assert_eq!(fit_in(4, Some(64 * MIB)), 4);
        assert_eq!(fit_in(2, Some(16 * MIB)), 2);
        assert_eq!(fit_in(3, Some(16 * MIB)), 2);
        // No room: the calling thread alone, never none.
        assert_eq!(fit_in(8, Some(7 * MIB)), 1);
        assert_eq!(fit_in(8, Some(0)), 1);
    }

    #[test]
    fn the_default_is_rayons() {
        assert!((1..=MAX_THREADS).contains(&default_threads()));
    }
}

//! Running the `klogscan` binary the hostile way: with a deadline (a hang is a failure,
//! not a stuck test run) and optionally under an address-space limit (`RLIMIT_AS`, set
//! in the child before `exec`): memory bounds are asserted through the platform's
//! resource limits, never through timings.
#![allow(dead_code)] // each test file uses some of these

use std::ffi::OsStr;
use std::io::Read;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// What a run left behind.
#[derive(Debug)]
pub struct Run {
    pub status: ExitStatus,
    pub out: String,
    pub err: String,
}

impl Run {
    /// The exit code; panics (with the output) when the process died of a signal.
    pub fn code(&self) -> i32 {
        match self.status.code() {
            Some(c) => c,
            None => panic!(
                "killed by signal {:?}\nstdout: {}\nstderr: {}",
                self.status.signal(),
                tail(&self.out),
                tail(&self.err)
            ),
        }
    }
}

fn tail(s: &str) -> &str {
    let from = s.len().saturating_sub(4000);
    let from = (from..=s.len())
        .find(|&i| s.is_char_boundary(i))
        .unwrap_or(s.len());
    &s[from..]
}

/// Run `klogscan args…`, killed (and the test failed) after `secs` seconds; under
/// `RLIMIT_AS = limit_bytes` when given.
pub fn klogscan<S: AsRef<OsStr>>(args: &[S], limit_bytes: Option<u64>, secs: u64) -> Run {
    klogscan_as(args, None, limit_bytes, secs)
}

/// [`klogscan`] run as user and group `ids` when given (privileges dropped in the child
/// before `exec`; the standard library also clears the supplementary groups).
pub fn klogscan_as<S: AsRef<OsStr>>(
    args: &[S],
    ids: Option<(u32, u32)>,
    limit_bytes: Option<u64>,
    secs: u64,
) -> Run {
    klogscan_env(args, &[], ids, limit_bytes, secs)
}

/// [`klogscan_as`] with the environment variables `env` set in the child.
pub fn klogscan_env<S: AsRef<OsStr>>(
    args: &[S],
    env: &[(&str, &str)],
    ids: Option<(u32, u32)>,
    limit_bytes: Option<u64>,
    secs: u64,
) -> Run {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_klogscan"));
    cmd.args(args)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some((uid, gid)) = ids {
        cmd.uid(uid).gid(gid);
    }
    if let Some(limit) = limit_bytes {
        // SAFETY: only async-signal-safe calls (setrlimit) between fork and exec.
        unsafe {
            cmd.pre_exec(move || {
                let r = libc::rlimit {
                    rlim_cur: limit,
                    rlim_max: limit,
                };
                if libc::setrlimit(libc::RLIMIT_AS, &r) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
    wait(cmd, args, secs)
}

/// Where [`klogscan_stdout`] sends standard output.
pub enum Stdout {
    /// A pipe whose reading end is closed before `klogscan` starts: every write fails
    /// with `EPIPE` (what `| head -c 10` does once `head` has exited).
    ClosedPipe,
    /// A regular file written under `RLIMIT_FSIZE` = 0 with `SIGXFSZ` ignored: every
    /// write fails with `EFBIG`, a write error that is not a broken pipe (what a full
    /// disk does) without pointing anything at a device node.
    Unwritable(std::path::PathBuf),
}

/// Run `klogscan args…` with `env` set and standard output `stdout` ([`Stdout`]); `out`
/// of the returned run is empty. Killed (and the test failed) after `secs` seconds.
pub fn klogscan_stdout<S: AsRef<OsStr>>(
    args: &[S],
    env: &[(&str, &str)],
    stdout: Stdout,
    secs: u64,
) -> Run {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_klogscan"));
    cmd.args(args)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stderr(Stdio::piped());
    match stdout {
        Stdout::ClosedPipe => {
            let (reader, writer) = std::io::pipe().expect("pipe");
            drop(reader);
            cmd.stdout(writer);
        }
        Stdout::Unwritable(path) => {
            cmd.stdout(std::fs::File::create(path).expect("create the stdout file"));
            // SAFETY: only async-signal-safe calls (signal, setrlimit) between fork and exec.
            unsafe {
                cmd.pre_exec(|| {
                    libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
                    let r = libc::rlimit {
                        rlim_cur: 0,
                        rlim_max: libc::RLIM_INFINITY,
                    };
                    if libc::setrlimit(libc::RLIMIT_FSIZE, &r) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    Ok(())
                });
            }
        }
    }
    wait(cmd, args, secs)
}

/// Run `klogscan args…` under `ulimit -v` = `limit_mib` MiB (through `sh`, so that a limit
/// too small for the binary to start is a failed run, not a failed spawn), with glibc's
/// `MALLOC_ARENA_MAX=2` (one arena per thread would reserve 64 MiB of address space each),
/// killed (and the test failed) after `secs` seconds. Linux (glibc) only.
pub fn run_limited<S: AsRef<OsStr>>(limit_mib: u64, args: &[S], secs: u64) -> Run {
    run_limited_arenas(limit_mib, 2, args, secs)
}

/// [`run_limited`] with `MALLOC_ARENA_MAX=arenas`. With one arena the address space is the
/// binary plus the heap, the same in every run; with two, whether the second arena (64 MiB
/// reserved whether used or not) is created and how the heap splits between the arenas
/// depends on how the threads interleave: 20 000 empty partitions needed between 160 and
/// 191 MiB from run to run on a loaded machine with two, 109 MiB in every run with one.
pub fn run_limited_arenas<S: AsRef<OsStr>>(
    limit_mib: u64,
    arenas: u32,
    args: &[S],
    secs: u64,
) -> Run {
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(format!(
            "ulimit -v {} && exec \"$0\" \"$@\"",
            limit_mib * 1024
        ))
        .arg(env!("CARGO_BIN_EXE_klogscan"))
        .args(args)
        .env("MALLOC_ARENA_MAX", arenas.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    wait(cmd, args, secs)
}

/// [`run_limited`], failing the test unless `klogscan` exits 0.
pub fn run_limited_ok<S: AsRef<OsStr>>(limit_mib: u64, args: &[S], secs: u64) -> Run {
    let r = run_limited(limit_mib, args, secs);
    assert_eq!(
        r.status.code(),
        Some(0),
        "klogscan {:?} under {limit_mib} MiB of address space failed: {}",
        args.iter().map(|a| a.as_ref()).collect::<Vec<_>>(),
        r.err
    );
    r
}

/// The limit binds: under `limit_mib` MiB (far below what the binary and its inputs
/// need) `klogscan args…` must not succeed, or the limit was not applied.
pub fn assert_limit_binds<S: AsRef<OsStr>>(limit_mib: u64, args: &[S], secs: u64) {
    let r = run_limited(limit_mib, args, secs);
    assert_ne!(
        r.status.code(),
        Some(0),
        "a {limit_mib} MiB address space should not be enough"
    );
}

/// Spawn `cmd` (stdout and stderr piped), collect its output, kill it and fail the test
/// when it runs longer than `secs` seconds (a hang).
fn wait<S: AsRef<OsStr>>(mut cmd: Command, args: &[S], secs: u64) -> Run {
    let mut child = cmd.spawn().expect("spawn klogscan");
    // Not piped when the caller gave stdout somewhere else ([`klogscan_stdout`]).
    let so = child.stdout.take();
    let mut se = child.stderr.take().unwrap();
    let ro = std::thread::spawn(move || {
        let mut s = Vec::new();
        if let Some(mut so) = so {
            let _ = so.read_to_end(&mut s);
        }
        s
    });
    let re = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = se.read_to_end(&mut s);
        s
    });
    let deadline = Instant::now() + Duration::from_secs(secs);
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "klogscan {:?} still running after {secs} s (a hang)",
                args.iter()
                    .map(|a| a.as_ref().to_owned())
                    .collect::<Vec<_>>()
            );
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let out = String::from_utf8_lossy(&ro.join().unwrap()).into_owned();
    let err = String::from_utf8_lossy(&re.join().unwrap()).into_owned();
    Run { status, out, err }
}

/// How to run `klogscan` so that permission bits apply to it: `Ok(None)` as we are (not
/// root), `Ok(Some((uid, gid)))` with privileges dropped to `nobody` (65534) when we are
/// root, `Err(why)` when even that is impossible (root that cannot change its ids, e.g.
/// in a user namespace without that id mapped): the permission tests then print why they
/// skip.
#[allow(dead_code)] // not every test file has permission tests
pub fn permission_bits_apply() -> Result<Option<(u32, u32)>, String> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Ok(None);
    }
    let ids = (65534, 65534);
    // The binary must be reachable and runnable as that user.
    let probe = Command::new(env!("CARGO_BIN_EXE_klogscan"))
        .arg("--version")
        .uid(ids.0)
        .gid(ids.1)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    match probe {
        Ok(s) if s.success() => Ok(Some(ids)),
        other => Err(format!(
            "running as root, and klogscan cannot run as uid/gid 65534 to let permission bits apply: {other:?}"
        )),
    }
}

/// Let other users list and traverse `dir` (a temporary directory is created 0700; what
/// the testkit creates in it is 0755 already).
#[allow(dead_code)]
pub fn make_traversable(dir: &std::path::Path) {
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(dir).unwrap().permissions().mode() | 0o005;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(mode)).unwrap();
}

//! The peak resident set of a child's own address space, for memory bounds asserted on a
//! child `klogscan`.
//!
//! `wait4`'s `ru_maxrss` is not that measure. When a process calls `execve`, the kernel
//! keeps the high-water mark of the address space it leaves in the process's accounting
//! (`exec_mmap` → `setmax_mm_hiwater_rss`), and a forked child's address space is a copy of
//! its parent's, whose resident size it starts with. So a child of a test process that
//! holds 300 MiB reports a peak of at least 300 MiB whatever it does afterwards
//! (`a_childs_own_peak_ignores_what_its_parent_holds`): the bound on a 1 GiB batch failed
//! whenever another test of the same binary held memory when the child was started.
//!
//! What is measured instead: the child's own high-water mark (`VmHWM` of its new address
//! space), read at its exit, before the address space is torn down. The child is traced
//! (`PTRACE_TRACEME` before `exec`, `PTRACE_O_TRACEEXIT`), so it stops at its exit and the
//! figure is read then: exact, and independent of timing and of anything else running.
#![cfg(target_os = "linux")]

use std::ffi::OsStr;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};

/// How a traced child ended.
#[derive(Debug)]
pub struct Peak {
    /// Its exit code.
    pub code: i32,
    /// The peak resident set of its own address space (KiB), read at its exit.
    pub own_kib: u64,
    /// `wait4`'s `ru_maxrss` (KiB): includes the address space it was forked with.
    pub ru_maxrss_kib: u64,
    /// Its standard output.
    pub out: String,
}

fn ptrace(req: libc::c_uint, pid: libc::pid_t, data: usize) -> libc::c_long {
    // SAFETY: requests on our own stopped tracee; no memory is passed (`data` is a flag
    // set or a signal number).
    unsafe {
        libc::ptrace(
            req,
            pid,
            std::ptr::null_mut::<libc::c_void>(),
            data as *mut libc::c_void,
        )
    }
}

/// `VmHWM` of `/proc/PID/status`, in KiB.
fn vm_hwm(pid: libc::pid_t) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    s.lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
}

/// Run `program args` to its end (killed after `secs`) and measure its own peak.
pub fn run_peak(program: &Path, args: &[&OsStr], secs: u64) -> Peak {
    let mut cmd = Command::new(program);
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    // SAFETY: setpgid and ptrace are async-signal-safe system calls. The child gets its
    // own process group (the watchdog kills only it) and asks to be traced: it stops
    // after `exec`, before running any of the program.
    unsafe {
        cmd.pre_exec(|| {
            libc::setpgid(0, 0);
            if ptrace(libc::PTRACE_TRACEME, 0, 0) == -1 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = cmd.spawn().unwrap();
    let pid = child.id() as libc::pid_t;
    let mut so = child.stdout.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut so, &mut s);
        s
    });
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    let watchdog = std::thread::spawn(move || {
        if rx
            .recv_timeout(std::time::Duration::from_secs(secs))
            .is_err()
        {
            // SAFETY: kill of the child's own process group.
            unsafe { libc::kill(-pid, libc::SIGKILL) };
            return true;
        }
        false
    });
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value to be overwritten.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    let mut own = None;
    let mut first = true;
    loop {
        // SAFETY: waiting for our own child, with valid out-pointers.
        let got = unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
        assert_eq!(got, pid, "wait4: {}", std::io::Error::last_os_error());
        if libc::WIFEXITED(status) || libc::WIFSIGNALED(status) {
            break;
        }
        let sig = libc::WSTOPSIG(status);
        if first {
            // The stop after `exec`: from here on, stop at the exit too.
            first = false;
            assert_eq!(sig, libc::SIGTRAP, "status {status:#x}");
            let opts = (libc::PTRACE_O_TRACEEXIT | libc::PTRACE_O_EXITKILL) as usize;
            assert_eq!(ptrace(libc::PTRACE_SETOPTIONS, pid, opts), 0);
            ptrace(libc::PTRACE_CONT, pid, 0);
        } else if sig == libc::SIGTRAP && status >> 16 == libc::PTRACE_EVENT_EXIT {
            // Exiting, its address space still whole.
            own = vm_hwm(pid);
            ptrace(libc::PTRACE_CONT, pid, 0);
        } else {
            // A signal for the child (its own SIGBUS guard, a pipe): delivered as sent.
            ptrace(libc::PTRACE_CONT, pid, sig as usize);
        }
    }
    let _ = tx.send(());
    assert!(
        !watchdog.join().unwrap(),
        "{} {args:?}: still running after {secs} s",
        program.display()
    );
    std::mem::forget(child); // reaped above
    assert!(
        libc::WIFEXITED(status),
        "{} {args:?}: status {status}",
        program.display()
    );
    Peak {
        code: libc::WEXITSTATUS(status),
        own_kib: own.expect("the exit stop was seen"),
        ru_maxrss_kib: ru.ru_maxrss as u64,
        out: out.join().unwrap(),
    }
}

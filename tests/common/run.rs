//! Running the `klogscan` binary the hostile way: with a deadline (a hang is a failure,
//! not a stuck test run) and optionally under an address-space limit (`RLIMIT_AS`, set
//! in the child before `exec`): memory bounds are asserted through the platform's
//! resource limits, never through timings.

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
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_klogscan"));
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
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
    let mut child = cmd.spawn().expect("spawn klogscan");
    let mut so = child.stdout.take().unwrap();
    let mut se = child.stderr.take().unwrap();
    let ro = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = so.read_to_end(&mut s);
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

/// True when this process may read files whatever their permission bits (root): the
/// permission tests then print why they skip.
#[allow(dead_code)] // not every test file has permission tests
pub fn can_bypass_permissions() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

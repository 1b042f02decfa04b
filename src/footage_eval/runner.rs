//! Running the recorder on one clip as a child process, timed, with its peak memory.
//!
//! The peak is the kernel's high-water mark of the child's resident memory (`VmHWM` in
//! `/proc/PID/status`), read every few milliseconds while the child runs: the mark only
//! grows, so the last reading before the child exits misses at most what it allocated in
//! its last few milliseconds. (`wait4`'s `ru_maxrss` would be exact, but needs `libc`,
//! which Kradan does not depend on; the polling needs nothing.)

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const POLL: Duration = Duration::from_millis(10);

#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunStats {
    pub wall_seconds: f64,
    /// Peak resident memory in kB; `None` where `/proc` is not there to ask.
    pub peak_kb: Option<u64>,
    /// The exit status; `None` when a signal ended it (or the timeout did).
    pub status: Option<i32>,
    pub timed_out: bool,
}

/// Runs `program args…` with its output (both streams) in `log`, killing it after
/// `timeout`.
pub fn run_measured(
    program: &Path,
    args: &[&std::ffi::OsStr],
    log: &Path,
    timeout: Duration,
) -> std::io::Result<RunStats> {
    let log_file = std::fs::File::create(log)?;
    let started = Instant::now();
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(log_file.try_clone()?)
        .stderr(log_file)
        .spawn()?;
    let status_path = format!("/proc/{}/status", child.id());
    let mut peak_kb: Option<u64> = None;
    let mut timed_out = false;
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if let Some(kb) = std::fs::read_to_string(&status_path)
            .ok()
            .as_deref()
            .and_then(high_water_kb)
        {
            peak_kb = Some(peak_kb.map_or(kb, |p| p.max(kb)));
        }
        if started.elapsed() > timeout {
            timed_out = true;
            // Our own child, by its handle: nothing else is touched.
            let _ = child.kill();
            break child.wait()?;
        }
        std::thread::sleep(POLL);
    };
    Ok(RunStats {
        wall_seconds: started.elapsed().as_secs_f64(),
        peak_kb,
        status: if timed_out { None } else { status.code() },
        timed_out,
    })
}

/// `VmHWM:    123456 kB` from a `/proc/PID/status` text.
pub fn high_water_kb(status: &str) -> Option<u64> {
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| rest.trim().strip_suffix("kB"))
        .and_then(|kb| kb.trim().parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_high_water_mark_is_read_from_proc_status() {
        let text = "Name:\tkradan\nVmPeak:\t  900000 kB\nVmHWM:\t  204800 kB\nVmRSS:\t  1000 kB\n";
        assert_eq!(high_water_kb(text), Some(204_800));
        assert_eq!(high_water_kb("Name:\tzombie\n"), None);
    }

    #[test]
    fn a_child_is_timed_measured_and_its_status_kept() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("log");
        let sh = Path::new("/bin/sh");
        let args = ["-c", "echo said; sleep 0.2; exit 3"].map(std::ffi::OsStr::new);
        let stats = run_measured(sh, &args, &log, Duration::from_secs(30)).unwrap();
        assert_eq!(stats.status, Some(3));
        assert!(!stats.timed_out);
        assert!(stats.wall_seconds >= 0.2, "{stats:?}");
        if Path::new("/proc/self/status").exists() {
            assert!(stats.peak_kb.is_some_and(|kb| kb > 0), "{stats:?}");
        }
        assert_eq!(std::fs::read_to_string(&log).unwrap(), "said\n");
    }

    #[test]
    fn a_child_that_runs_too_long_is_stopped() {
        let dir = tempfile::tempdir().unwrap();
        let args = ["-c", "exec sleep 30"].map(std::ffi::OsStr::new);
        let stats = run_measured(
            Path::new("/bin/sh"),
            &args,
            &dir.path().join("log"),
            Duration::from_millis(200),
        )
        .unwrap();
        assert!(stats.timed_out);
        assert_eq!(stats.status, None);
        assert!(stats.wall_seconds < 10.0);
    }

    #[test]
    fn a_missing_program_is_an_error_not_a_panic() {
        let dir = tempfile::tempdir().unwrap();
        let result = run_measured(
            &dir.path().join("no-such-recorder"),
            &[],
            &dir.path().join("log"),
            Duration::from_secs(1),
        );
        assert!(result.is_err());
    }
}

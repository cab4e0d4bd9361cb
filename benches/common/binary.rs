//! The `coplan` binary run as a user runs it: a cold process, from the checkout's root.

use std::ffi::OsStr;
use std::process::{Command, Output};
use std::time::Instant;

/// One run of the binary with `args`, from the checkout's root, to its end.
pub fn coplan<I, S>(args: I) -> Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    Command::new(env!("CARGO_BIN_EXE_coplan"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("the coplan binary runs")
}

/// Seconds of one cold run of the binary, and what it printed; when it fails, its stderr is
/// printed and the bench exits, since its times would measure the failure.
pub fn timed_output<I, S>(args: I) -> (f64, Output)
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let t = Instant::now();
    let out = coplan(args);
    let elapsed = t.elapsed().as_secs_f64();
    if !out.status.success() {
        eprintln!("{}", String::from_utf8_lossy(&out.stderr));
        std::process::exit(1);
    }
    (elapsed, out)
}

/// Seconds of one cold run of the binary (what it printed is dropped); exits as
/// [`timed_output`] does.
pub fn timed_run<I, S>(args: I) -> f64
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    timed_output(args).0
}

//! Ctrl-C and SIGTERM: a command that checks for a stop request ends at its next check and
//! writes nothing; any other command ends at once.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::plan::cancel::Cancel;

/// Raised by the stop handler; the library's long loops read it through a `Cancel`.
static STOP_REQUESTED: AtomicBool = AtomicBool::new(false);
/// Whether the running command reads [`STOP_REQUESTED`]; one that does not is ended at once.
static STOPS_ITSELF: AtomicBool = AtomicBool::new(false);

/// The exit code of an interrupted run, as a shell reports a process that SIGINT ended.
pub const EXIT_INTERRUPTED: u8 = 130;

/// How long a command that stops itself has to do so after Ctrl-C.
const STOP_GRACE: std::time::Duration = std::time::Duration::from_millis(900);

/// On Ctrl-C or SIGTERM: a command that reads the flag stops at its next check and reports
/// what finished; any other command (and a second Ctrl-C) ends the process now. A command
/// whose next check does not come within [`STOP_GRACE`] (a solve in progress cannot be
/// interrupted) is ended then. None leaves a partial `--out`: outputs are written whole,
/// after the run.
pub fn install_stop_handler() {
    let _ = ctrlc::set_handler(|| {
        if !STOPS_ITSELF.load(Ordering::Relaxed) || STOP_REQUESTED.swap(true, Ordering::Relaxed) {
            interrupted_now();
        }
        std::thread::spawn(|| {
            std::thread::sleep(STOP_GRACE);
            interrupted_now();
        });
    });
}

/// Ends the process as interrupted.
fn interrupted_now() -> ! {
    let _ = std::io::stderr().write_all(b"interrupted\n");
    std::process::exit(i32::from(EXIT_INTERRUPTED));
}

/// The stop request of a command that checks for it.
pub fn cooperative_stop() -> Cancel {
    STOPS_ITSELF.store(true, Ordering::Relaxed);
    Cancel::watching(&STOP_REQUESTED)
}

/// Whether a stop was requested.
pub fn stop_requested() -> bool {
    STOP_REQUESTED.load(Ordering::Relaxed)
}

//! A request to stop, raised from outside the library (the binary raises it on Ctrl-C) and
//! read at cheap points of every long loop: per seed, cycle, scenario and capacity probe, and
//! every few thousand nodes of an exact search. The library installs no signal handler: it
//! only reads the flag it is given.

use std::sync::atomic::{AtomicBool, Ordering};

use super::error::PlanningError;

/// How many search nodes may pass between two reads of the flag: a read is cheap, but not
/// free in the innermost loop.
pub const NODES_BETWEEN_CHECKS: u64 = 1024;

/// Watches a flag that something else may raise; `Cancel::never()` watches none. Copy, so
/// that it rides along in the small structs the searches already carry.
#[derive(Debug, Clone, Copy, Default)]
pub struct Cancel(Option<&'static AtomicBool>);

impl Cancel {
    /// A run that nothing stops.
    pub fn never() -> Self {
        Cancel(None)
    }

    /// A run that stops once `flag` is raised.
    pub fn watching(flag: &'static AtomicBool) -> Self {
        Cancel(Some(flag))
    }

    /// Whether a stop has been requested (the watched flag is raised); always `false` for
    /// [`Cancel::never`].
    pub fn requested(&self) -> bool {
        self.0.is_some_and(|f| f.load(Ordering::Relaxed))
    }

    /// The flag itself, for a solver deadline to watch.
    pub fn flag(&self) -> Option<&'static AtomicBool> {
        self.0
    }

    /// `Err(Interrupted)` once a stop was requested.
    pub fn check(&self) -> Result<(), PlanningError> {
        if self.requested() {
            Err(PlanningError::Interrupted)
        } else {
            Ok(())
        }
    }
}

//! A request to stop, raised from outside the library (the binary raises it on Ctrl-C) and
//! read at cheap points of every long loop: per seed, cycle, scenario and capacity probe, and
//! every few thousand nodes of an exact search. The library installs no signal handler: it
//! only reads the flag it is given. The same value carries the run's time budget
//! (`--time-limit`): the end every solver deadline of the run is capped by.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::error::PlanningError;

/// How many search nodes may pass between two reads of the flag: a read is cheap, but not
/// free in the innermost loop.
pub const NODES_BETWEEN_CHECKS: u64 = 1024;

/// How far a run got, as it goes: which planner runs, how many of its steps (events, offers)
/// are done, and for an exact planner its best objective and proven bound so far.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Progress<'a> {
    /// The planner running.
    pub planner: &'a str,
    /// Steps done (events decided, offers placed).
    pub done: u64,
    /// Steps in all.
    pub total: u64,
    /// An exact planner's best objective so far.
    pub best: Option<f64>,
    /// An exact planner's proven lower bound so far.
    pub bound: Option<f64>,
}

/// A receiver of [`Progress`] reports.
pub type ProgressSink = dyn Fn(&Progress<'_>) + Sync;

/// The share of the run's budget its searches and solves may take: they end there, and the
/// rest is kept for what follows every plan (the decision gaps' per-event optima on the
/// states the planners faced, the verifier's replay, the output), so that the whole run ends
/// within its budget.
pub const SEARCH_SHARE: f64 = 0.7;

/// Watches a flag that something else may raise, and the run's time budget: one deadline
/// every solve, bound and search of the run shares (`--time-limit`). `Cancel::never()`
/// watches none and has no budget. Copy, so that it rides along in the small structs the
/// searches already carry.
#[derive(Clone, Copy, Default)]
pub struct Cancel {
    flag: Option<&'static AtomicBool>,
    /// Where the run reports how far it got (the binary's progress bar), if anywhere.
    progress: Option<&'static ProgressSink>,
    /// The budget in seconds, kept so that a new scenario can start it afresh.
    budget_s: Option<f64>,
    /// When the budget ends.
    ends_at: Option<Instant>,
}

impl std::fmt::Debug for Cancel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cancel")
            .field("flag", &self.flag)
            .field("progress", &self.progress.is_some())
            .field("budget_s", &self.budget_s)
            .field("ends_at", &self.ends_at)
            .finish()
    }
}

impl Cancel {
    /// A run that nothing stops.
    pub fn never() -> Self {
        Cancel::default()
    }

    /// A run that stops once `flag` is raised.
    pub fn watching(flag: &'static AtomicBool) -> Self {
        Cancel {
            flag: Some(flag),
            ..Cancel::default()
        }
    }

    /// The same run, reporting its progress to `sink`.
    pub fn reporting_to(self, sink: &'static ProgressSink) -> Self {
        Cancel {
            progress: Some(sink),
            ..self
        }
    }

    /// Reports how far the run got (nothing without a sink).
    pub fn report(&self, progress: &Progress<'_>) {
        if let Some(sink) = self.progress {
            sink(progress);
        }
    }

    /// The same run with a time budget of `seconds` from now.
    pub fn with_budget(self, seconds: f64) -> Self {
        Cancel {
            budget_s: Some(seconds),
            ..self
        }
        .restarted()
    }

    /// The same budget started afresh now (a new scenario of a simulation or sweep, a new
    /// probe of a capacity search); unchanged without a budget.
    pub fn restarted(self) -> Self {
        Cancel {
            ends_at: self.budget_s.and_then(|s| {
                Instant::now().checked_add(Duration::from_secs_f64(s * SEARCH_SHARE))
            }),
            ..self
        }
    }

    /// The run's budget in seconds, if it has one.
    pub fn budget_s(&self) -> Option<f64> {
        self.budget_s
    }

    /// When the run's searches and solves must end ([`SEARCH_SHARE`] of its budget), if it
    /// has a budget.
    pub fn ends_at(&self) -> Option<Instant> {
        self.ends_at
    }

    /// Whether the run's searches and solves are out of time (never without a budget).
    pub fn out_of_time(&self) -> bool {
        self.ends_at.is_some_and(|end| Instant::now() >= end)
    }

    /// Whether a stop has been requested (the watched flag is raised); always `false` for
    /// [`Cancel::never`].
    pub fn requested(&self) -> bool {
        self.flag.is_some_and(|f| f.load(Ordering::Relaxed))
    }

    /// The flag itself, for a solver deadline to watch.
    pub fn flag(&self) -> Option<&'static AtomicBool> {
        self.flag
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

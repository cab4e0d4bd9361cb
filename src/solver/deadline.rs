//! The time budget of a planner's solves and the backend settings they share.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use crate::spec::kind::SolverBackend;

/// When the solves behind one planner must stop, and how they solve: a time budget shared by
/// every solve of the planner (per-server subproblems and per-event MILPs draw from the same
/// budget) and the backend settings.
#[derive(Debug, Clone, Copy)]
pub struct Deadline {
    started: Instant,
    limit_s: f64,
    settings: SolverSettings,
    /// A flag that, once raised, spends the budget at once (the run was asked to stop).
    stop: Option<&'static AtomicBool>,
    /// The end of the run's budget (`--time-limit`), which caps this one.
    ends_at: Option<Instant>,
}

impl Deadline {
    /// The deadline of an exact planner's solves, the one place a run builds it: `limit_s`
    /// from now at most (`ilp_time_limit_s`, the cap of one decision's solves or search),
    /// ending with the run's budget (`ends_at`, from `--time-limit`) and at a stop request
    /// (`stop`), solved with `settings`. Preemption (`preempt::exact::ilp::deadline`, per
    /// decision) and co-location (`colocate::setup::Setup::deadline`, per solve, bound and
    /// search) pass their run's values here and hand the result down.
    pub fn for_run(
        limit_s: f64,
        settings: SolverSettings,
        stop: Option<&'static AtomicBool>,
        ends_at: Option<Instant>,
    ) -> Self {
        Deadline::after(limit_s)
            .solving_with(settings)
            .stopped_by(stop)
            .ending_by(ends_at)
    }

    /// A budget of `limit_s` seconds from now, solved by microlp to proven optimality.
    pub fn after(limit_s: f64) -> Self {
        Deadline {
            started: Instant::now(),
            limit_s,
            settings: SolverSettings::default(),
            stop: None,
            ends_at: None,
        }
    }

    /// The same budget, spent the moment `stop` is raised: searches that check the deadline
    /// stop at their next check, and a solve started afterwards gets no time. A solve already
    /// running is not interrupted (the solvers offer no way to), so its own limit still holds.
    pub fn stopped_by(self, stop: Option<&'static AtomicBool>) -> Self {
        Deadline { stop, ..self }
    }

    /// The same budget, ending no later than `ends_at` (the run's budget; none: no cap).
    pub fn ending_by(self, ends_at: Option<Instant>) -> Self {
        Deadline { ends_at, ..self }
    }

    /// The same budget, solved with `settings`.
    pub fn solving_with(self, settings: SolverSettings) -> Self {
        Deadline { settings, ..self }
    }

    /// The first `fraction` of what is left of this budget, from now: a stage that must leave
    /// the rest to what follows it (the same stop flag, run end and settings).
    pub fn first_part(&self, fraction: f64) -> Self {
        Deadline {
            started: Instant::now(),
            limit_s: self.remaining_s().max(0.0) * fraction,
            ..*self
        }
    }

    /// The backend and MIP gap every solve under this deadline uses.
    pub fn settings(&self) -> &SolverSettings {
        &self.settings
    }

    /// Seconds left; negative once the budget is spent.
    pub fn remaining_s(&self) -> f64 {
        if self.stop.is_some_and(|s| s.load(Ordering::Relaxed)) {
            return -1.0;
        }
        let own = self.limit_s - self.started.elapsed().as_secs_f64();
        match self.ends_at {
            Some(end) => {
                let now = Instant::now();
                let run = match end.checked_duration_since(now) {
                    Some(left) => left.as_secs_f64(),
                    None => -now.duration_since(end).as_secs_f64() - f64::MIN_POSITIVE,
                };
                own.min(run)
            }
            None => own,
        }
    }

    /// Whether the budget is spent (or a stop was requested).
    pub fn expired(&self) -> bool {
        self.remaining_s() < 0.0
    }
}

/// Which backend solves, and when a MIP may stop short of a proof.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SolverSettings {
    /// The MILP/LP backend.
    pub backend: SolverBackend,
    /// Relative MIP gap at which a solve may stop (0: prove optimality).
    pub mip_gap: f64,
}

impl Default for SolverSettings {
    fn default() -> Self {
        SolverSettings {
            backend: SolverBackend::Microlp,
            mip_gap: 0.0,
        }
    }
}

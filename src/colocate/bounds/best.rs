//! The reported bound: every bound family computed, timed, and the largest kept.

use std::time::Instant;

use super::interval_lp::{LpBound, interval_lp};
use super::memory_floors::memory_floors;
use super::memory_lp::memory_lp;
use super::memory_stage_relaxation::memory_stage_relaxation;
use super::request_floors::request_floors;
use super::stage_relaxation::stage_relaxation;
use crate::colocate::setup::Setup;
use crate::solver::SolverSettings;

/// One bound's value and how long it took.
#[derive(Debug, Clone, PartialEq)]
pub struct BoundPart {
    /// Which bound this is (`request floors`, `stage relaxation`, `interval lp`, `memory floors`,
    /// `memory stage relaxation` or `memory lp`).
    pub name: &'static str,
    /// `None`: not computed on this instance, with why.
    pub value: Result<f64, String>,
    /// Wall time spent computing it, in milliseconds (not part of snapshot output).
    pub runtime_ms: f64,
}

/// Every bound, and the best.
#[derive(Debug, Clone, PartialEq)]
pub struct Bounds {
    /// The largest computed bound on the canonical objective (0 when none applies); a later part
    /// replaces an earlier one only when higher beyond rounding.
    pub best: f64,
    /// The `name` of the part that gave `best`.
    pub source: &'static str,
    /// Every bound in computation order, including those not computed on this instance.
    pub parts: Vec<BoundPart>,
}

/// Computes (a) to (f) and keeps the largest. `horizon_s` bounds the LPs' intervals
/// (completions past it share the last, open-ended interval).
pub fn best_bound(setup: &Setup, horizon_s: f64, settings: SolverSettings) -> Bounds {
    let timed = |name: &'static str, f: &dyn Fn() -> Result<f64, String>| {
        let t0 = Instant::now();
        let value = f();
        BoundPart {
            name,
            value,
            runtime_ms: t0.elapsed().as_secs_f64() * 1000.0,
        }
    };
    let parts = vec![
        timed("request floors", &|| Ok(request_floors(setup))),
        timed("stage relaxation", &|| {
            stage_relaxation(setup)
                .ok_or_else(|| "tasks can be dropped (on_memory_timeout = \"drop\")".into())
        }),
        timed("interval lp", &|| {
            lp_part(setup, interval_lp(setup, horizon_s, settings))
        }),
        timed("memory floors", &|| Ok(memory_floors(setup))),
        timed("memory stage relaxation", &|| {
            memory_stage_relaxation(setup)
                .ok_or_else(|| "tasks can be dropped (on_memory_timeout = \"drop\")".into())
        }),
        timed("memory lp", &|| {
            lp_part(setup, memory_lp(setup, horizon_s, settings))
        }),
    ];
    let (best, source) = parts
        .iter()
        .filter_map(|p| p.value.as_ref().ok().map(|v| (*v, p.name)))
        // A later bound replaces an earlier one only when it is higher beyond rounding.
        .fold((0.0_f64, "request floors"), |acc, (v, n)| {
            if v > acc.0 + 1e-9 * acc.0.abs().max(1.0) {
                (v, n)
            } else {
                acc
            }
        });
    Bounds {
        best,
        source,
        parts,
    }
}

/// An LP bound's value, or why there is none (the `reason` of its part).
fn lp_part(setup: &Setup, bound: LpBound) -> Result<f64, String> {
    match bound {
        LpBound::Value(v) => Ok(v),
        LpBound::TooLarge(n) => Err(format!(
            "{n} variables (bound_lp_max_variables = {})",
            setup.spec.planners.bound_lp_max_variables
        )),
        LpBound::Unsolved(why) => Err(why),
    }
}

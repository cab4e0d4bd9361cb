//! Limits on the sizes a spec or a command line may ask for, checked before anything is
//! allocated or handed to a solver, so that a typo (a count of 1e18, a time limit of 1e19 s)
//! is a located input error rather than an allocation failure or a panic. `docs/spec.md`
//! ("Limits") lists them.

/// Servers in one cluster, over all pools.
pub const MAX_SERVERS: i64 = 100_000;

/// `ilp_time_limit_s` of either workload kind: one week.
pub const MAX_TIME_LIMIT_S: f64 = 7.0 * 86_400.0;

/// Every weight of the canonical objective (both kinds): far above any meaningful ratio, far
/// below where a solver's arithmetic (or a sum over a plan) loses every other term.
pub const MAX_OBJECTIVE_WEIGHT: f64 = 1e9;

/// `[fill] churn_rounds`: every round evicts and refills the fill pods of the whole cluster,
/// and the fill runs before every plan and every simulated seed.
pub const MAX_CHURN_ROUNDS: i64 = 1_000;

/// `--seeds N` of `simulate`, `sweep` and `capacity`.
pub const MAX_SEEDS: u64 = 10_000;

/// `--cycles N` of `simulate`, `sweep` and `capacity`.
pub const MAX_CYCLES: u64 = 1_000_000;

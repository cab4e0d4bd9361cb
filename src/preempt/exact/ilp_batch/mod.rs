//! `ilp-batch`: the exact optimum of the whole `[[preempt]]` list decided at once — which
//! preemptors land where and which pods are evicted (each at most once) — minimising the summed
//! canonical cost. Its optimum bounds every sequential plan from below (DESIGN §5.4).
//!
//! Model. Identical preemptors (one workload class) are aggregated: an integer variable counts
//! the instances of a class placed in a domain of a server, a binary variable evicts a pod
//! (`model`; the classes in `classes`, what each server offers them in `domains`).
//! Capacities are laminar (NUMA ⊂ socket ⊂ server), so counting demand per domain is exact: ids
//! are then assigned bottom-up (NUMA-level placements first), which succeeds whenever the counts
//! fit.
//!
//! Solution. Servers interact only through the class counts, so when the count space is small
//! the problem is solved exactly by decomposition (`decomposed`): a MILP per server and count
//! vector, then a dynamic programme over servers; the MILPs are solved lazily, only where the
//! programme's best combination needs them, with lower bounds (`bounds`) standing in for the
//! rest. Otherwise (`large`) a Lagrangian decomposition gives a bound and a plan, and one
//! monolithic MILP is solved (`monolithic`), warm-started from the best plan known
//! (`warm_start`). Both are exact; one deadline applies to both. What a solution proves, and
//! which of two is kept, is `incumbent`; the planner itself, which chooses the route, is
//! `planner`.
//!
//! Replay (`assemble`). Victims are attributed to the preemptor whose ids they free (else the first
//! eligible preemptor on their server), so the plan replays event by event like any other. A
//! plan that breaks a rule the model relaxes (hard budgets, device claims) gives way to the
//! best sequential plan (`enact`).

pub mod assemble;
pub mod bounds;
pub mod classes;
pub mod decomposed;
pub mod domains;
pub mod enact;
pub mod incumbent;
pub mod lagrangian;
pub mod large;
pub mod list;
pub mod model;
pub mod monolithic;
pub mod needed;
pub mod placement_floor;
pub mod planner;
pub mod state_classes;
pub mod warm_start;

pub use self::list::{ListStructure, list_bounds};
pub use self::planner::IlpBatch;

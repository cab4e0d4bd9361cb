//! Lower bounds on the canonical co-location objective that hold for every schedule the engine
//! can run, with any planner (DESIGN §10.3). The reported bound is the largest of:
//! (a) per-task floors, (b) single-machine relaxations of each pipeline stage, (c) an
//! interval-indexed LP relaxation, and the same three seeing GPU memory (DESIGN §11.2):
//! (d) floors of the tasks that never fit, (e) stage relaxations with training and forced
//! transfers, (f) an LP with memory capacity and offloads. The validity argument of each is in
//! `docs/colocation.md`; the short form sits beside each function.

mod best;
mod interference;
mod interval_lp;
mod memory_cost;
mod memory_floors;
mod memory_lp;
mod memory_stage_relaxation;
mod partial_floor;
mod request_floors;
mod stage_relaxation;
mod task_floor;

pub use self::best::{BoundPart, Bounds, best_bound};
pub use self::interval_lp::{LpBound, interval_lp};
pub use self::memory_cost::{MemoryCost, memory_costs, memory_task_floors};
pub use self::memory_floors::memory_floors;
pub use self::memory_lp::memory_lp;
pub use self::memory_stage_relaxation::memory_stage_relaxation;
pub use self::partial_floor::partial_floor;
pub use self::request_floors::request_floors;
pub use self::stage_relaxation::stage_relaxation;
pub use self::task_floor::{TaskFloor, task_floors};

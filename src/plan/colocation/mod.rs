//! Plan data of a co-location workload: the task set, the timeline a run produced (ops and
//! per-task outcomes), and each planner's measured plan (DESIGN §6.4, §7).

pub mod op_log;
pub mod report;
pub mod run;
pub mod slo;
pub mod task;
pub mod task_list;

pub use self::op_log::{LoggedTasks, Op, OpIter, OpKind, OpLog, OpRecord};
pub use self::report::{
    BoundReport, ColocationMetrics, ColocationPlan, ColocationPlannerReport, TaskEvent,
};
pub use self::run::{ColocationRun, RunBounds, TaskOutcome};
pub use self::slo::{slo_key, slo_met};
pub use self::task::{Task, TaskId, TaskKind};
pub use self::task_list::TaskList;

//! Preemption workload spec (DESIGN §5.1).

mod settings;
mod workload;

pub use settings::{
    Admission, EventSolver, FlextopoSettings, ImpScope, LevelScores, PREEMPTION_PLANNERS,
    PreemptionObjective, PreemptionPlanners, PriorityNorm, ResetMode, SINGLE_POD_PLANNERS,
    ScoreBasis, Seeds, SimulationSettings, TopologyScore, TopologyScoreName,
};
pub use workload::{
    DeviceAlignment, DisruptionBudget, FillAllocator, FillSpec, IdsOrCount, IntOrPercent,
    PreemptEntry, PreemptionSpec, RunningPod, TopologyQos, WorkloadClass,
};

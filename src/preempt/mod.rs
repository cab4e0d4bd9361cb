//! Topology-aware preemption (DESIGN §5): the planners behind one trait, the shared candidate
//! rules, and the planning loop that applies decisions, measures and verifies them.

pub mod apply;
pub mod event_exact;
pub mod exhaustive_classes;
pub mod explain;
pub mod fill_index;
pub mod flextopo;
pub mod flextopo_sourcing;
pub mod ilp;
pub mod ilp_batch;
pub mod imp_pruned;
pub mod k8s_default;
pub mod k8s_nrt;
pub mod metrics;
pub mod objective;
pub mod optima;
pub mod per_event;
pub mod planner;
pub mod planning;
pub mod problem;
pub mod registry;
pub mod scenario;
pub mod terms;

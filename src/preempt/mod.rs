//! Topology-aware preemption (DESIGN §5): the planners behind one trait, grouped by family
//! (`flextopo`, `exact`, `k8s`), the victim filter and subsets they share (`victims`), and
//! the planning loop that applies decisions, measures and verifies them.

pub mod apply;
pub mod event_facts;
pub mod exact;
pub mod explain;
pub mod fill_index;
pub mod flextopo;
pub mod gang;
pub mod k8s;
pub mod metrics;
pub mod objective;
pub mod planner;
pub mod planning;
pub mod problem;
pub mod registry;
pub mod reports;
pub mod scenario;
pub mod terms;
pub mod victims;

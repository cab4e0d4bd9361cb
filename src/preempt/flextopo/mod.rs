//! FlexTopo (DESIGN §5.2): the planner (`planner`), its Eq. 1 score and the candidate chain
//! that breaks its ties (`score`), the reference enumeration every search must agree with
//! (`reference`), and the two fast searches: Incremental Minimal Preemption (`imp_pruned`) and
//! the exhaustive search over classes of identical victims (`exhaustive_classes`).

pub mod exhaustive_classes;
pub mod imp_pruned;
pub mod planner;
pub mod reference;
pub mod score;

pub use self::planner::{Flextopo, Sourcing, decide_reference};

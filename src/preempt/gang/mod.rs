//! Gangs (DESIGN §12.3): preemptors of several pods that must land whole inside one domain
//! of a level above the server (rack, block, NVLink domain), or not at all.

pub mod apply;
pub mod batch;
pub mod batch_model;
pub mod decision;
pub mod exact;
pub mod explain;
pub mod fit;
pub mod kueue_tas;
pub mod levels;
pub mod menu;
pub mod metrics;
pub mod planning;
pub mod pod_by_pod;
pub mod request;
pub mod table;

pub use self::decision::{GangDecision, GangPoint, PodPlacement};
pub use self::request::{Gang, gangs};

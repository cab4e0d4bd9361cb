//! The independent checker of a co-location run: it reads only the op timeline and the task
//! set, and checks that no stage runs two ops at once, that every task's ops respect pipeline
//! order on one node, that memory never exceeds a GPU's capacity (offloaded forwards excepted),
//! and that the counted outcomes match the timeline.
//!
//! The full replay (`reference`) is the checker of record; the linear pass (`certify`, with its
//! memory replay in `memory`) exists only to spare long runs the replay's sorts and may only
//! say yes where the replay does, so the two sit in separate files to be read side by side.
//! Re-deriving the reported metrics (`metrics`) judges the numbers, not the timeline, and
//! shares no code with either.

mod certify;
mod memory;
mod metrics;
mod reference;
mod verdict;

pub use self::certify::{certify, certify_scanning_halves_from};
pub use self::metrics::{MetricBasis, verify_metrics};
pub use self::reference::verify_run_reference;
pub use self::verdict::verify_run;

//! `coplan capacity` for preemption workloads.

//! Importers: the clusters and pod lists users run (Kubernetes exports, the Alibaba GPU
//! trace) turned into cluster and preemption workload specs. Pure: text in, specs and a
//! summary out; reading files and writing the specs is the session's and `report/`'s.

pub mod alibaba;
pub mod build;
mod document;
pub mod dra_objects;
pub mod error;
pub mod fabric_objects;
pub mod fields;
pub mod imported;
pub mod json;
pub mod k8s;
pub mod k8s_objects;
pub mod labels;
pub mod limits;
pub mod quantity;
mod scan;
pub mod summary;
pub mod tree;
pub mod yaml;

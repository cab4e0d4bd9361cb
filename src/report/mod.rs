//! Renderers: one printer per output format. Nothing here decides anything.

pub mod colocation;
pub mod diagnostic;
pub mod plan;
pub mod sim;
pub mod summary;
pub mod topology;

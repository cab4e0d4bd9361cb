//! SVG charts and maps, drawn with plotters: one file per picture, each a pure function from
//! results to the SVG text.

pub mod capacity;
pub mod error;
pub mod headline;
pub mod rack_map;
pub mod simulation;
pub mod style;
pub mod sweep;
pub mod timeline;
pub mod topology;

//! Printers: one per output format. Nothing here decides anything; nothing else prints.

pub mod chrome_trace;
pub mod csv;
pub mod diagnostic;
pub mod dot;
pub mod fabric;
pub mod json;
pub mod render;
pub mod svg;
pub mod table;
pub mod terminal;
pub mod toml;

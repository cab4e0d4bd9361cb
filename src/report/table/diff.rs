//! `coplan diff`.

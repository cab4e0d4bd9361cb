//! `coplan diff`: reads two simulate outputs.

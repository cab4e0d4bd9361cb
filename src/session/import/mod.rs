//! `coplan import`: turn what users run into specs. One file per source, and the checks every
//! importer shares (located errors, limits, generated specs validated before they are written).

pub mod alibaba;
pub mod azure;
pub mod checks;
pub mod command;
pub mod k8s;
pub mod vidur;

pub use checks::{
    AlibabaArgs, ImportSummary, Imported, alibaba_options, check_generated, distinct_outputs,
    import_alibaba, import_azure, import_error, import_k8s,
};
pub use command::ImportCommand;

//! The repository root and the `coplan` binary run from it.

use std::path::PathBuf;

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Runs the `coplan` binary from the repository root without colour: (exit code, stdout,
/// stderr).
pub fn run_coplan<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> (i32, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_coplan"))
        .args(args)
        .current_dir(root())
        .env("NO_COLOR", "1")
        .output()
        .expect("the coplan binary runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `coplan sweep` of two scenarios (`flextopo.alpha` 0 and 1), one seed of one cycle each, of
/// the `planners` given, with `extra` arguments.
pub fn small_sweep(
    cluster: &str,
    workload: &str,
    planners: &str,
    extra: &[&str],
) -> (i32, String, String) {
    let mut args = vec![
        "sweep",
        cluster,
        workload,
        "--set",
        "flextopo.alpha=0,1",
        "--seeds",
        "1",
        "--cycles",
        "1",
        "--planners",
        planners,
    ];
    args.extend_from_slice(extra);
    run_coplan(&args)
}

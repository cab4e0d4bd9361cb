//! A bench's options, read from the command line after `--` (`cargo bench --bench x -- --runs 5`).

use std::str::FromStr;

/// The value after `name` on the command line, if it is there.
pub fn arg(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .cloned()
}

/// The value after `name`, else `default`.
pub fn arg_or(name: &str, default: &str) -> String {
    arg(name).unwrap_or_else(|| default.to_string())
}

/// The number after `name`, else `default` (also when it is not a number).
pub fn number_arg<T: FromStr>(name: &str, default: T) -> T {
    arg(name).and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// A count after `name` (runs, seeds, repeats), else `default`; never below one.
pub fn count_arg<T: FromStr + Ord + From<u8>>(name: &str, default: T) -> T {
    number_arg(name, default).max(T::from(1))
}

/// Whether the word `name` stands on the command line (`--simulate`, `verbose`).
pub fn flag(name: &str) -> bool {
    std::env::args().any(|a| a == name)
}

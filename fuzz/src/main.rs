//! `coplan-fuzz`: a deterministic, mutation-based fuzz driver for the coplan library that runs
//! on a stable toolchain. `docs/reliability.md` (Fuzzing) lists the targets and the commands.
//!
//! ```text
//! coplan-fuzz list
//! coplan-fuzz run TARGET --runs N [--seed S] [--timeout-ms T] [--corpus DIR] [--max-len B]
//! coplan-fuzz replay TARGET FILE...
//! coplan-fuzz show plan-preemption|plan-colocation FILE
//! ```

mod diagnostic_targets;
mod driver;
mod generate;
mod import_targets;
mod mutate;
mod rng;
mod targets;
mod verdict;

use std::path::PathBuf;
use std::process::ExitCode;

use driver::RunOptions;

const USAGE: &str = "usage:
  coplan-fuzz list
  coplan-fuzz run TARGET --runs N [--seed S] [--timeout-ms T] [--corpus DIR] [--max-len B]
  coplan-fuzz replay TARGET FILE...
  coplan-fuzz show plan-preemption|plan-colocation FILE";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(code) => code,
        Err(message) => {
            eprintln!("coplan-fuzz: {message}\n{USAGE}");
            ExitCode::from(2)
        }
    }
}

fn run(args: &[String]) -> Result<ExitCode, String> {
    let Some((command, rest)) = args.split_first() else {
        return Err("no command".into());
    };
    match command.as_str() {
        "list" => {
            for t in targets::TARGETS {
                println!("{:<18} {}", t.name, t.about);
            }
            Ok(ExitCode::SUCCESS)
        }
        "run" => {
            let (name, flags) = rest.split_first().ok_or("run needs a target")?;
            let target = targets::find(name).ok_or_else(|| format!("unknown target `{name}`"))?;
            let mut options = RunOptions {
                runs: 0,
                seed: 1,
                timeout_ms: 2000,
                corpus: driver::corpus_dir(target.name),
                max_len: 1 << 16,
            };
            let mut i = 0;
            let mut runs = None;
            while i < flags.len() {
                let value = flags
                    .get(i + 1)
                    .ok_or_else(|| format!("`{}` needs a value", flags[i]))?;
                let number = || {
                    value
                        .replace('_', "")
                        .parse::<u64>()
                        .map_err(|_| format!("`{}` takes a number, got `{value}`", flags[i]))
                };
                match flags[i].as_str() {
                    "--runs" => runs = Some(number()?),
                    "--seed" => options.seed = number()?,
                    "--timeout-ms" => options.timeout_ms = number()?,
                    "--max-len" => options.max_len = number()? as usize,
                    "--corpus" => options.corpus = PathBuf::from(value),
                    other => return Err(format!("unknown option `{other}`")),
                }
                i += 2;
            }
            options.runs = runs.ok_or("run needs --runs N")?;
            let findings = driver::run(target, &options)?;
            Ok(if findings == 0 {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            })
        }
        "replay" => {
            let (name, files) = rest.split_first().ok_or("replay needs a target")?;
            let target = targets::find(name).ok_or_else(|| format!("unknown target `{name}`"))?;
            if files.is_empty() {
                return Err("replay needs at least one file".into());
            }
            let findings = driver::replay(target, files)?;
            Ok(if findings == 0 {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            })
        }
        "show" => {
            let [name, file] = rest else {
                return Err("show needs a target and a file".into());
            };
            let input = std::fs::read(file).map_err(|e| format!("cannot read {file}: {e}"))?;
            let (cluster, workload) = match name.as_str() {
                "plan-preemption" => generate::preemption_files(&input),
                "plan-colocation" => generate::colocation_files(&input),
                _ => {
                    return Err(format!(
                        "`{name}` reads its input as it is; show is for the plan targets"
                    ));
                }
            };
            println!("# cluster\n{cluster}\n# workload\n{workload}");
            Ok(ExitCode::SUCCESS)
        }
        other => Err(format!("unknown command `{other}`")),
    }
}

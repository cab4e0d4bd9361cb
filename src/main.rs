//! The `coplan` binary: parse arguments, run the command's session, render its outcome with
//! `report::render`, write it, and map failures to exit codes.

/// The planners and the fill allocate many small objects (pods, names, candidate lists); the
/// system allocator spent a fifth of a 20,000-server `plan` in malloc and free.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use clap::Parser;

use coplan::report::diagnostic::{self, PlainDiagnostic, Style};
use coplan::report::render::render;
use coplan::session::emit::write_outputs;
use coplan::session::error::SessionError;
use coplan::session::interrupt::{EXIT_INTERRUPTED, install_stop_handler};
use coplan::session::{self, Command};

#[derive(Debug, Parser)]
#[command(
    name = "coplan",
    version,
    about = "Offline planner for GPU clusters running co-located LLM workloads",
    long_about = "coplan reads TOML specs of a cluster and a workload, builds the hardware topology \
                  graph, and plans topology-aware preemption and training/inference co-location \
                  with greedy heuristics and an exact ILP.\n\nExit codes: 0 success, 1 internal \
                  error, 2 invalid input, 3 infeasible plan under an enforced requirement."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    install_stop_handler();
    let style = if std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none() {
        Style::Color
    } else {
        Style::Plain
    };
    match run(&cli.command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            let (text, code) = failure_text(failure, style);
            let _ = std::io::stderr().write_all(text.as_bytes());
            ExitCode::from(code)
        }
    }
}

/// Runs the command, writes what it produced, and says how it ended.
fn run(command: &Command) -> Result<(), SessionError> {
    let outcome = session::run(command)?;
    write_outputs(&render(&outcome)?)?;
    outcome.verdict()
}

/// A failure as stderr shows it, and the exit code it maps to: invalid input 2, a bug 1, an
/// enforced requirement that does not hold 3, an interruption 130.
fn failure_text(failure: SessionError, style: Style) -> (String, u8) {
    match failure {
        SessionError::Invalid(list) => (
            list.iter()
                .map(|i| diagnostic::render_invalid(i, style))
                .collect::<Vec<_>>()
                .join("\n"),
            2,
        ),
        SessionError::Input { message, help } => {
            let d = PlainDiagnostic {
                message,
                help,
                code: "coplan::input",
            };
            (diagnostic::render(&d, style), 2)
        }
        SessionError::Internal(m) => (format!("internal error: {m}\n"), 1),
        SessionError::Infeasible(m) => (format!("infeasible: {m}\n"), 3),
        SessionError::Interrupted(m) => (format!("{m}\n"), EXIT_INTERRUPTED),
    }
}

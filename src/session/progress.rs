//! The progress bars on stderr: the cycle bar of `simulate`, `sweep` and `capacity`,
//! and the bar of one `plan` / `explain`, fed by the library's progress reports.

use std::io::IsTerminal;

use crate::plan::cancel::{Progress, ProgressSink};

/// A progress bar on stderr when it is a terminal; nothing otherwise.
pub fn progress_bar(total: u64) -> indicatif::ProgressBar {
    if !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(total);
    if let Ok(style) = indicatif::ProgressStyle::with_template(
        "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} cycles {msg}",
    ) {
        bar.set_style(style);
    }
    bar
}

/// How long a `plan` or `explain` runs before its progress bar appears.
const PROGRESS_AFTER: std::time::Duration = std::time::Duration::from_secs(2);

/// The bar of the one `plan` / `explain` a process runs.
static RUN_BAR: std::sync::OnceLock<indicatif::ProgressBar> = std::sync::OnceLock::new();

/// The progress receiver of a `plan` / `explain`: a bar on stderr, drawn only on a terminal and
/// only once the run has passed [`PROGRESS_AFTER`]: which planner runs, its steps done, and an
/// exact planner's best objective and bound so far.
pub fn run_progress() -> &'static ProgressSink {
    let started = std::time::Instant::now();
    let on_terminal = std::io::stderr().is_terminal();
    let bar = RUN_BAR.get_or_init(|| {
        let bar = indicatif::ProgressBar::hidden();
        if let Ok(style) =
            indicatif::ProgressStyle::with_template("{spinner} [{elapsed_precise}] {msg}")
        {
            bar.set_style(style);
        }
        bar
    });
    Box::leak(Box::new(move |p: &Progress<'_>| {
        if !on_terminal || started.elapsed() < PROGRESS_AFTER {
            return;
        }
        if bar.is_hidden() {
            bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
            // A solve in progress reports nothing: the clock still moves.
            bar.enable_steady_tick(std::time::Duration::from_millis(200));
        }
        bar.set_message(progress_line(p));
        bar.tick();
    }))
}

/// One progress report as the bar shows it.
fn progress_line(p: &Progress<'_>) -> String {
    let mut line = p.planner.to_string();
    if p.total > 0 {
        line.push_str(&format!(" {}/{}", p.done, p.total));
    } else {
        line.push_str(&format!(" {} nodes", p.done));
    }
    if let Some(best) = p.best {
        line.push_str(&format!(", best {best:.3}"));
    }
    if let Some(bound) = p.bound {
        line.push_str(&format!(", bound {bound:.3}"));
    }
    line
}

/// Removes the run's bar before the output is printed.
pub fn clear_run_progress() {
    if let Some(bar) = RUN_BAR.get() {
        bar.finish_and_clear();
    }
}

//! Why a picture could not be drawn.

use plotters::drawing::DrawingAreaErrorKind;

/// A failure of an SVG printer: a drawing failure (the backend writes to a string, so this
/// is a bug rather than an input problem) or a request the input cannot answer.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SvgError {
    /// The backend failed while drawing: a bug, not an input problem.
    #[error("drawing the SVG failed: {0}")]
    Draw(String),
    /// `--server NAME` names no server of the cluster; `suggestions` are the closest names.
    #[error(
        "no server `{name}` in cluster `{cluster}`; it has {total} server{}: {}",
        if *.total == 1 { "" } else { "s" },
        listing(.suggestions, *.total)
    )]
    UnknownServer {
        /// The server name asked for.
        name: String,
        /// Name of the cluster searched.
        cluster: String,
        /// The closest server names, for the message.
        suggestions: Vec<String>,
        /// Servers in the cluster (the listing ends with `…` when it shows fewer).
        total: usize,
    },
}

fn listing(names: &[String], total: usize) -> String {
    let shown = names.join(", ");
    if names.len() < total {
        format!("{shown}, …")
    } else {
        shown
    }
}

impl<E: std::error::Error + Send + Sync> From<DrawingAreaErrorKind<E>> for SvgError {
    fn from(e: DrawingAreaErrorKind<E>) -> Self {
        SvgError::Draw(e.to_string())
    }
}

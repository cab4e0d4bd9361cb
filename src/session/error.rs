//! Why a command failed, typed by what the user can do about it.

use crate::spec::InvalidSpec;

/// A session failure. The binary maps it to an exit code: `Invalid` and `Input` are the
/// user's input (2), `Internal` is a bug (1), `Infeasible` an enforced requirement that does not hold (3),
/// `Interrupted` a stop request (130).
#[derive(Debug, Clone, thiserror::Error)]
pub enum SessionError {
    /// Spec or data files with located issues (file, line, column).
    #[error("{} invalid file(s)", .0.len())]
    Invalid(Vec<InvalidSpec>),
    /// Other invalid input: an unreadable file, a bad argument or name.
    #[error("{message}")]
    Input {
        /// What is wrong.
        message: String,
        /// How to fix it, when there is advice to give.
        help: Option<String>,
    },
    /// A stop was requested (Ctrl-C) and the run ended early, writing nothing; the message
    /// says what had finished, where that is worth knowing.
    #[error("{0}")]
    Interrupted(String),
    /// The output was written, but a requirement the user enforced does not hold
    /// (`--require-all-placed`, `--fail-on-regression`).
    #[error("infeasible: {0}")]
    Infeasible(String),
    /// A failure of the library itself.
    #[error("internal error: {0}")]
    Internal(String),
}

impl SessionError {
    /// An input error with a message and optional help.
    pub fn input(message: impl Into<String>, help: Option<String>) -> Self {
        SessionError::Input {
            message: message.into(),
            help,
        }
    }
}

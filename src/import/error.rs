//! Why an import failed: a place in one of its input files, or a bad option.

/// An import failure.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ImportError {
    /// Malformed input at a line (and column) of the `file`-th input file.
    #[error("{message}")]
    At {
        /// Index of the input file, in the order the files were given.
        file: usize,
        /// 1-based line.
        line: usize,
        /// 1-based; absent = the whole line.
        column: Option<usize>,
        /// What is wrong.
        message: String,
        /// Text under the underlined span (`here` by default).
        label: String,
        /// How to fix it; empty for none.
        help: String,
    },
    /// A bad option or an input that is wrong as a whole.
    #[error("{message}")]
    Input {
        /// What is wrong.
        message: String,
        /// How to fix it.
        help: Option<String>,
    },
}

impl ImportError {
    /// Malformed input at a line (and column) of the `file`-th input file, labelled `here`.
    pub fn at(file: usize, line: usize, column: Option<usize>, message: String) -> Self {
        ImportError::At {
            file,
            line,
            column,
            message,
            label: "here".into(),
            help: String::new(),
        }
    }

    /// A bad option or an input wrong as a whole.
    pub fn input(message: impl Into<String>, help: Option<String>) -> Self {
        ImportError::Input {
            message: message.into(),
            help,
        }
    }

    /// The same error with a label and help line (located errors only).
    pub fn with(mut self, new_label: &str, new_help: impl Into<String>) -> Self {
        if let ImportError::At { label, help, .. } = &mut self {
            *label = new_label.to_string();
            *help = new_help.into();
        }
        self
    }
}

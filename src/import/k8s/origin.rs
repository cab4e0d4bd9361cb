//! Where an object of a snapshot came from, and the located errors that point into it: at
//! a value written in the object, or at the object as a whole.

use serde_saphyr::Spanned;

use crate::import::error::ImportError;

/// Where an object came from: file, document, item, and the line it starts on.
#[derive(Debug, Clone, Copy)]
pub(super) struct Origin {
    /// Index of the file in the order the files were given.
    pub(super) file: usize,
    /// 1-based document of the file.
    pub(super) document: usize,
    /// 1-based item of a List.
    pub(super) item: Option<usize>,
    /// The line the object starts on.
    pub(super) line: usize,
}

impl Origin {
    /// The file and the place in it.
    pub(super) fn describe(&self, files: &[(String, String)]) -> String {
        format!("{}, {}", files[self.file].0, self.place())
    }

    /// `document D` or `document D, item I`: where in its file the object is.
    pub(super) fn place(&self) -> String {
        let item = self.item.map(|i| format!(", item {i}")).unwrap_or_default();
        format!("document {}{item}", self.document)
    }
}

/// The located error of a value written at `at` (a line within the document), its message
/// naming the document (and the item of a List).
pub(super) fn at_span<T>(
    origin: &Origin,
    doc_line: usize,
    s: &Spanned<T>,
    message: String,
) -> ImportError {
    ImportError::at(
        origin.file,
        doc_line + s.referenced.line() as usize - 1,
        Some(s.referenced.column() as usize),
        format!("{}: {message}", origin.place()),
    )
}

/// The located error of an object as a whole (its first line), naming the document.
pub(super) fn at_object(origin: &Origin, message: String) -> ImportError {
    ImportError::at(
        origin.file,
        origin.line,
        None,
        format!("{}: {message}", origin.place()),
    )
}

//! Writing a command's outputs: specs it generated are checked first, then each output goes
//! where it is meant to, a file replaced atomically.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::error::SessionError;
use super::import::check_generated;
use super::interrupt::stop_requested;

/// Where one output goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Destination {
    /// `--out FILE` when given, else stdout.
    Out(Option<PathBuf>),
    /// Standard error: warnings, notes, summaries beside the output.
    Stderr,
}

/// One rendered output of a command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Output {
    /// Where it goes.
    pub to: Destination,
    /// The text.
    pub text: String,
    /// A spec the command generated, under this name: loaded back and validated before
    /// anything is written, so an import never writes a spec `plan` would refuse.
    pub generated_spec: Option<String>,
}

impl Output {
    /// Text for `--out` (or stdout).
    pub fn out(text: String, out: Option<&Path>) -> Self {
        Output {
            to: Destination::Out(out.map(Path::to_path_buf)),
            text,
            generated_spec: None,
        }
    }

    /// Text for standard error.
    pub fn stderr(text: String) -> Self {
        Output {
            to: Destination::Stderr,
            text,
            generated_spec: None,
        }
    }

    /// A generated spec for `--out` (or stdout), checked under `name` before anything is
    /// written.
    pub fn spec(text: String, out: Option<&Path>, name: String) -> Self {
        Output {
            generated_spec: Some(name),
            ..Output::out(text, out)
        }
    }
}

/// Checks every generated spec, then writes the outputs in order. A stop requested after the
/// run finished still wins: nothing more is written to stdout or a file.
pub fn write_outputs(outputs: &[Output]) -> Result<(), SessionError> {
    let specs: Vec<(&str, &str)> = outputs
        .iter()
        .filter_map(|o| {
            o.generated_spec
                .as_deref()
                .map(|name| (name, o.text.as_str()))
        })
        .collect();
    if !specs.is_empty() {
        check_generated(&specs)?;
    }
    for output in outputs {
        match &output.to {
            Destination::Stderr => {
                let _ = std::io::stderr().write_all(output.text.as_bytes());
            }
            Destination::Out(out) => {
                if stop_requested() {
                    return Err(SessionError::Interrupted(
                        "interrupted: stopped before the output was written; nothing was written"
                            .into(),
                    ));
                }
                match out {
                    Some(path) => write_file(&output.text, path)?,
                    None => print(&output.text)?,
                }
            }
        }
    }
    Ok(())
}

/// Writes to stdout; a closed pipe (`| head`) is not an error worth reporting.
fn print(text: &str) -> Result<(), SessionError> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(SessionError::input(
            format!("cannot write output: {e}"),
            None,
        )),
    }
}

/// Writes `text` to `path`. A regular file is replaced atomically (a temporary file beside
/// it, renamed over it), keeping the replaced file's permissions, so a failed run never
/// leaves half a file; a symlink is written through (the file it points to is replaced, the
/// link kept); a FIFO or a device (`/dev/stdout`, `/dev/null`) is written directly, since
/// renaming over it would replace it with a regular file.
pub fn write_file(text: &str, path: &Path) -> Result<(), SessionError> {
    let cannot = |e: std::io::Error| {
        SessionError::input(format!("cannot write `{}`: {e}", path.display()), None)
    };
    let is_link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    let target = if is_link {
        std::fs::canonicalize(path).map_err(cannot)?
    } else {
        path.to_path_buf()
    };
    let existing = std::fs::metadata(&target).ok();
    if let Some(m) = &existing {
        if m.is_dir() {
            return Err(SessionError::input(
                format!("cannot write `{}`: it is a directory", path.display()),
                None,
            ));
        }
        if !m.is_file() {
            return std::fs::OpenOptions::new()
                .write(true)
                .open(&target)
                .and_then(|mut f| f.write_all(text.as_bytes()))
                .map_err(cannot);
        }
    }
    let dir = target
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let file_name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{file_name}.{}.tmp", std::process::id()));
    let result = std::fs::write(&tmp, text)
        .and_then(|()| match &existing {
            Some(m) => std::fs::set_permissions(&tmp, m.permissions()),
            None => Ok(()),
        })
        .and_then(|()| std::fs::rename(&tmp, &target));
    result.map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        cannot(e)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh folder under the system's temporary one.
    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("coplan-emit-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temporary folder");
        dir
    }

    #[test]
    fn a_file_is_replaced_whole_and_keeps_its_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let dir = scratch("replace");
        let path = dir.join("out.txt");
        std::fs::write(&path, "old").expect("write");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).expect("chmod");
        write_file("new", &path).expect("replaced");
        assert_eq!(std::fs::read_to_string(&path).expect("read"), "new");
        let mode = std::fs::metadata(&path).expect("meta").permissions().mode();
        assert_eq!(mode & 0o777, 0o640);
        let left: Vec<_> = std::fs::read_dir(&dir).expect("list").collect();
        assert_eq!(left.len(), 1, "no temporary file is left behind");
    }

    #[test]
    fn a_symlink_is_written_through_and_kept() {
        let dir = scratch("link");
        let target = dir.join("target.txt");
        std::fs::write(&target, "old").expect("write");
        let link = dir.join("link.txt");
        std::os::unix::fs::symlink(&target, &link).expect("link");
        write_file("new", &link).expect("written");
        assert!(
            std::fs::symlink_metadata(&link)
                .expect("meta")
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read_to_string(&target).expect("read"), "new");
    }

    #[test]
    fn a_directory_or_a_missing_folder_is_refused() {
        let dir = scratch("refused");
        let e = write_file("x", &dir).expect_err("a directory");
        assert!(e.to_string().contains("it is a directory"), "{e}");
        let e = write_file("x", &dir.join("missing/out.txt")).expect_err("no folder");
        assert!(e.to_string().starts_with("cannot write"), "{e}");
    }

    #[test]
    fn a_device_is_written_directly() {
        write_file("x", Path::new("/dev/null")).expect("written");
        assert!(!std::fs::metadata("/dev/null").expect("meta").is_file());
    }

    #[test]
    fn an_invalid_generated_spec_writes_nothing() {
        let dir = scratch("generated");
        let path = dir.join("c.toml");
        let outputs = [
            Output::out("first\n".into(), Some(&dir.join("first.txt"))),
            Output::spec("not = [valid".into(), Some(&path), "c.toml".into()),
        ];
        assert!(write_outputs(&outputs).is_err());
        assert!(!path.exists() && !dir.join("first.txt").exists());
    }
}
